"""Qwen 3.5 / 3.6 (GGUF architectures qwen35 and qwen35moe) for make_dialect_fixture.py (docs/FORMATS.md §12).

The source models are transformers' own classes: Qwen3_5ForConditionalGeneration (the dense text model with a
tiny vision tower, as every published qwen3.5 is multimodal) and Qwen3_5MoeForCausalLM (text only), 4 layers so
that the gated-delta-net (linear attention) layers 0-2 and the full-attention layer 3 both exist, 2 key heads and
4 value heads in the linear attention so that the V-head reordering moves rows.

The dialect is written as Ollama's converter wrote the published files: convert/convert_qwen3next.go at commit
da70c3222 of Ollama's repository ("model: support for qwen3.5 architecture"), which Ollama's compatibility layer
(handle_qwen35 / handle_qwen35moe in llama/compat/llama-ollama-compat.cpp) translates at load time: the per-layer
attention.head_count_kv array, the 3-element rope.dimension_sections, ssm_dt without ".bias", the vision tower
embedded, the MTP head (mtp.*, added to the source checkpoint as the published ones carry it) under its own
names, its layer norms shifted by addOne like every other *_norm.weight. Each step names the Go function (or branch
of qwen3NextModel.Tensors) it follows. The reference is llama.cpp's conversion with the MTP head (blk.4.*, nextn).
The vision tower is embedded as the published files carry it (v.*: attn_qkv split into attn_q/k/v, the Conv3D
patch embedding flattened to [out*in, t, h, w], the merger under v.merger.*), with the vision keys parseMore and KV
write; its reference is llama.cpp's --mmproj conversion of the same model (handle_qwen35_clip's side). The vision
config uses the published tower's patch size (16), position grid (48 x 48) and MLP width (4304), the values
handle_qwen35_clip injects since Ollama's converter writes no image_size or feed_forward_length.
Nothing here uses modelfs code.
"""
from __future__ import annotations

import json
import os

import numpy as np

import hf_models as H

# the source class, the class of the text model's Hugging Face folder, and the parameters of two or more dimensions
# the dialect stores as F32 (tensorBase.Kind(): ssm_conv1d, the router ffn_gate_inp), for dialect_hf_folder.oracle
SOURCE_CLASS = {"qwen35": "Qwen3_5ForConditionalGeneration", "qwen35moe": "Qwen3_5MoeForCausalLM"}
FOLDER_CLASS = {"qwen35": "Qwen3_5ForCausalLM", "qwen35moe": "Qwen3_5MoeForCausalLM"}
KEEP_F32 = ("linear_attn.conv1d.weight", "mlp.gate.weight")
MROPE_SECTION = [2, 1, 1]   # sums to the rotary half-width: head_dim 32 x partial_rotary_factor 0.25 / 2
FULL_ATTENTION_INTERVAL = 4
QWEN35_VISION_FFN = 4304    # the published vision tower's intermediate_size


def _text_config(vocab: int, tok, moe: bool) -> dict:
    cfg = dict(vocab_size=vocab, hidden_size=64, num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2,
               head_dim=32, linear_conv_kernel_dim=4, linear_key_head_dim=16, linear_value_head_dim=16,
               linear_num_key_heads=2, linear_num_value_heads=4, max_position_embeddings=512, rms_norm_eps=1e-6,
               tie_word_embeddings=False, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
               rope_parameters={"rope_type": "default", "rope_theta": 10000000.0, "partial_rotary_factor": 0.25,
                                "mrope_section": MROPE_SECTION, "mrope_interleaved": True})
    if moe:
        cfg.update(num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32, shared_expert_intermediate_size=48)
    else:
        cfg.update(intermediate_size=128)
    return cfg


def _exp_agrees(v: np.float32) -> bool:
    """Whether torch's float32 exp (llama.cpp's converter: -torch.exp(A_log)) and Go's float32(math.Exp(float64))
    round alike for v."""
    import torch
    return bool(torch.exp(torch.tensor([v], dtype=torch.float32)).numpy()[0] == np.float32(np.exp(np.float64(v))))


def make_qwen35(out_dir: str, moe: bool) -> None:
    """The tiny source model, saved with save_pretrained, with hf_models' byte-level BPE tokenizer. Norm weights
    near 0 (Qwen 3.5 scales by 1 + w), A_log values where both converters' float32 exp round alike (so that the
    reference and the dialect hold the same ssm_a bytes), and full_attention_interval in the text config as the
    published config.json files carry it (transformers folds it into layer_types and does not save it)."""
    import torch
    import transformers as T
    tok = H.train_tokenizer("qwen3")
    text = _text_config(len(tok), tok, moe)
    torch.manual_seed(35 + moe)
    if moe:
        model = T.Qwen3_5MoeForCausalLM(T.Qwen3_5MoeTextConfig(**text))
    else:
        # the published vision tower's patch size, position grid (48 x 48: image_size 768) and MLP width, the
        # values handle_qwen35_clip injects when the file lacks them (Ollama's converter writes none of them)
        vision = dict(depth=1, hidden_size=32, intermediate_size=QWEN35_VISION_FFN, num_heads=2, in_channels=3, patch_size=16,
                      spatial_merge_size=2, temporal_patch_size=2, out_hidden_size=64, num_position_embeddings=48 * 48)
        model = T.Qwen3_5ForConditionalGeneration(T.Qwen3_5Config(text_config=text, vision_config=vision,
                                                                  image_token_id=len(tok) - 1))
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("A_log"):
                vals = []
                for v in (0.5 * torch.randn(p.shape)).tolist():
                    v = np.float32(v)
                    while not _exp_agrees(v):
                        v = np.nextafter(v, np.float32(1.0))
                    vals.append(v)
                p.copy_(torch.tensor(np.array(vals, np.float32)))
            elif p.dim() == 1 and "visual" not in name and name.endswith("norm.weight") and "linear_attn" not in name:
                p.copy_(0.1 * torch.randn_like(p))
            elif p.dim() == 1:
                p.copy_(1.0 + 0.1 * torch.randn_like(p))
            else:
                p.normal_(0.0, 0.08)
    os.makedirs(out_dir, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    tok.save_pretrained(out_dir)
    if not moe:   # the published preprocessor_config.json's normalisation (llama.cpp's --mmproj reads it)
        with open(os.path.join(out_dir, "preprocessor_config.json"), "w") as f:
            json.dump({"image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5], "patch_size": 16,
                       "size": {"longest_edge": 16777216, "shortest_edge": 65536},
                       "temporal_patch_size": 2, "merge_size": 2, "image_processor_type": "Qwen2VLImageProcessorFast"}, f)
    add_mtp(out_dir, text, moe)
    p = os.path.join(out_dir, "config.json")
    cfg = json.load(open(p))
    (cfg.get("text_config") or cfg)["full_attention_interval"] = FULL_ATTENTION_INTERVAL
    (cfg.get("text_config") or cfg)["mtp_num_hidden_layers"] = 1
    with open(p, "w") as f:
        json.dump(cfg, f, indent=1)


def add_mtp(out_dir: str, text: dict, moe: bool) -> None:
    """The multi-token-prediction head the published Qwen 3.5 checkpoints carry beside the model (mtp.*: one
    full-attention layer, the fc that joins the embedding and the hidden state, their norms), random like the
    rest; transformers has no module for it (Qwen3_5ForCausalLM ignores mtp.* on load), so it is added to the
    saved safetensors. Norms are stored as w (Qwen 3.5 scales by 1 + w)."""
    from safetensors.numpy import load_file, save_file
    t = mtp_tensors(text, moe)
    p = os.path.join(out_dir, "model.safetensors")
    sd = load_file(p)
    sd.update(t)
    save_file(sd, p, metadata={"format": "pt"})


def mtp_tensors(text: dict, moe: bool) -> dict:
    """add_mtp's tensors (float32 numpy arrays by name)."""
    rng = np.random.default_rng(350 + moe)
    h, heads, kv, hd = text["hidden_size"], text["num_attention_heads"], text["num_key_value_heads"], text["head_dim"]

    def mat(*shape):
        return (0.08 * rng.standard_normal(shape)).astype(np.float32)

    def norm(n):
        return (0.1 * rng.standard_normal(n)).astype(np.float32)
    t = {"mtp.fc.weight": mat(h, 2 * h), "mtp.pre_fc_norm_embedding.weight": norm(h), "mtp.pre_fc_norm_hidden.weight": norm(h),
         "mtp.norm.weight": norm(h)}
    layer = {"input_layernorm.weight": norm(h), "post_attention_layernorm.weight": norm(h),
             "self_attn.q_proj.weight": mat(2 * heads * hd, h), "self_attn.k_proj.weight": mat(kv * hd, h),
             "self_attn.v_proj.weight": mat(kv * hd, h), "self_attn.o_proj.weight": mat(h, heads * hd),
             "self_attn.q_norm.weight": norm(hd), "self_attn.k_norm.weight": norm(hd)}
    if moe:
        inter = text["moe_intermediate_size"]
        for e in range(text["num_experts"]):
            layer.update({f"mlp.experts.{e}.gate_proj.weight": mat(inter, h), f"mlp.experts.{e}.up_proj.weight": mat(inter, h),
                          f"mlp.experts.{e}.down_proj.weight": mat(h, inter)})
        sh = text["shared_expert_intermediate_size"]
        layer.update({"mlp.gate.weight": mat(text["num_experts"], h), "mlp.shared_expert.gate_proj.weight": mat(sh, h),
                      "mlp.shared_expert.up_proj.weight": mat(sh, h), "mlp.shared_expert.down_proj.weight": mat(h, sh),
                      "mlp.shared_expert_gate.weight": mat(1, h)})
    else:
        inter = text["intermediate_size"]
        layer.update({"mlp.gate_proj.weight": mat(inter, h), "mlp.up_proj.weight": mat(inter, h), "mlp.down_proj.weight": mat(h, inter)})
    t.update({"mtp.layers.0." + k: v for k, v in layer.items()})
    return t


# --- (b) Ollama's dialect: convert/convert_qwen3next.go at da70c3222 -----------------------------------------

QWEN35_REPLACEMENTS = [   # qwen3NextModel.Replacements(), in Go's order
    "lm_head", "output",
    "model.language_model.embed_tokens", "token_embd",
    "model.language_model.norm", "output_norm",
    "model.language_model.layers", "blk",
    "model.embed_tokens", "token_embd",
    "model.norm", "output_norm",
    "model.layers", "blk",
    "model.visual", "v",
    "patch_embed.proj", "patch_embed",
    "blocks", "blk",
    "attn.qkv", "attn_qkv",
    "attn.proj", "attn_out",
    "deepstack_merger_list", "deepstack_merger",
    "input_layernorm", "attn_norm",
    "post_attention_layernorm", "post_attention_norm",
    "self_attn.q_proj", "attn_q",
    "self_attn.q_norm", "attn_q_norm",
    "self_attn.k_proj", "attn_k",
    "self_attn.k_norm", "attn_k_norm",
    "self_attn.v_proj", "attn_v",
    "self_attn.o_proj", "attn_output",
    "linear_attn.in_proj_qkvz", "ssm_in",
    "linear_attn.in_proj_ba", "ssm_ba",
    "linear_attn.in_proj_qkv", "attn_qkv",
    "linear_attn.in_proj_z", "attn_gate",
    "linear_attn.in_proj_a", "ssm_alpha",
    "linear_attn.in_proj_b", "ssm_beta",
    "linear_attn.conv1d", "ssm_conv1d",
    "linear_attn.dt_bias", "ssm_dt",
    "linear_attn.dt_proj", "ssm_dt",
    "linear_attn.A_log", "ssm_a",
    "linear_attn.norm", "ssm_norm",
    "linear_attn.out_proj", "ssm_out",
    "mlp.gate.weight", "ffn_gate_inp.weight",
    "mlp.shared_expert.down_proj", "ffn_down_shexp",
    "mlp.shared_expert.gate_proj", "ffn_gate_shexp",
    "mlp.shared_expert.up_proj", "ffn_up_shexp",
    "mlp.shared_expert_gate", "ffn_gate_inp_shexp",
    "mlp.down_proj", "ffn_down",
    "mlp.gate_proj", "ffn_gate",
    "mlp.up_proj", "ffn_up",
]


def reorder_head_layout(data: np.ndarray, dim: int, num_k: int, num_v_per_k: int, head_dim: int) -> np.ndarray:
    """reorderHeadLayout: dimension `dim` viewed as (num_k, num_v_per_k, head_dim), the first two swapped."""
    shape = list(data.shape)
    if shape[dim] != num_k * num_v_per_k * head_dim:
        return data
    t = data.reshape(shape[:dim] + [num_k, num_v_per_k, head_dim] + shape[dim + 1:])
    return np.ascontiguousarray(np.swapaxes(t, dim, dim + 1)).reshape(shape)


def qwen35_dialect(hf_dir: str, ref_text: str, out_path: str, arch: str) -> dict:
    import gguf
    from safetensors.numpy import load_file
    import make_dialect_fixture as M
    top = json.load(open(os.path.join(hf_dir, "config.json")))
    c = top.get("text_config") or top                     # qwen3NextModel.parseMore: TextConfig wins when present
    vis = top.get("vision_config") or {}
    rope = c.get("rope_parameters") or {}
    tok, _ = M.ref_tokenizer_kvs(ref_text, arch)
    tok["tokenizer.ggml.pre"] = "qwen35"                  # KV(): tokenizer.ggml.pre = "qwen35"
    w = gguf.GGUFWriter(out_path, arch)                   # KV(): qwen35, or qwen35moe when NumExperts > 0
    M.model_parameters_kv(w, tok, tok["tokenizer.ggml.tokens"], tok["tokenizer.ggml.token_type"])
    n = c["num_hidden_layers"]
    head_dim = c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]
    partial = c.get("partial_rotary_factor") or rope["partial_rotary_factor"]   # parseMore: RopeParameters fallback
    # qwen3NextModel.KV at da70c3222, in its order
    w.add_uint32(f"{arch}.block_count", n)                # NumHiddenLayers (no MTP layers counted at this commit)
    w.add_uint32(f"{arch}.context_length", c["max_position_embeddings"])
    w.add_uint32(f"{arch}.embedding_length", c["hidden_size"])
    w.add_uint32(f"{arch}.feed_forward_length", c.get("intermediate_size") or 0)   # written even when 0 (MoE)
    w.add_uint32(f"{arch}.attention.head_count", c["num_attention_heads"])
    w.add_uint32(f"{arch}.attention.key_length", head_dim)
    w.add_uint32(f"{arch}.attention.value_length", head_dim)
    w.add_float32(f"{arch}.attention.layer_norm_rms_epsilon", c["rms_norm_eps"])
    w.add_float32(f"{arch}.rope.freq_base", c.get("rope_theta") or rope["rope_theta"])
    w.add_uint32(f"{arch}.rope.dimension_count", int(np.float32(head_dim) * np.float32(partial)))
    sections = rope.get("mrope_section") or (c.get("rope_scaling") or {}).get("mrope_section")   # ropeSections()
    if sections:
        for k in ("mrope_sections", "rope.mrope_section", "rope.dimension_sections"):   # 3 elements, as in the config
            w.add_key_value(f"{arch}.{k}", [int(s) for s in sections], gguf.GGUFValueType.ARRAY, gguf.GGUFValueType.INT32)
    if rope.get("mrope_interleaved"):
        w.add_bool(f"{arch}.rope.mrope_interleaved", True)
    if c.get("num_experts"):
        w.add_uint32(f"{arch}.expert_count", c["num_experts"])
        w.add_uint32(f"{arch}.expert_used_count", c["num_experts_per_tok"])
        if c.get("norm_topk_prob") is not None:
            w.add_bool(f"{arch}.norm_top_k_prob", bool(c["norm_topk_prob"]))
        if c.get("moe_intermediate_size"):
            w.add_uint32(f"{arch}.expert_feed_forward_length", c["moe_intermediate_size"])
        if c.get("shared_expert_intermediate_size"):
            w.add_uint32(f"{arch}.expert_shared_feed_forward_length", c["shared_expert_intermediate_size"])
    nk, nv = c["linear_num_key_heads"], c["linear_num_value_heads"]
    hk, hv = c["linear_key_head_dim"], c["linear_value_head_dim"]
    w.add_uint32(f"{arch}.ssm.inner_size", hv * nv)
    w.add_uint32(f"{arch}.ssm.state_size", hk)
    w.add_uint32(f"{arch}.ssm.group_count", nk)
    w.add_uint32(f"{arch}.ssm.time_step_rank", nv)
    w.add_uint32(f"{arch}.ssm.conv_kernel", c["linear_conv_kernel_dim"])
    w.add_bool(f"{arch}.ssm.v_head_reordered", True)      # shouldReorderVHeads(): model_type qwen3_5*, not qwen3_next
    if c.get("full_attention_interval"):
        w.add_uint32(f"{arch}.full_attention_interval", c["full_attention_interval"])
    # kvHeadCounts(): from layer_types, num_key_value_heads on full-attention layers, 0 on the others
    w.add_key_value(f"{arch}.attention.head_count_kv",
                    [c["num_key_value_heads"] if t == "full_attention" else 0 for t in c["layer_types"]],
                    gguf.GGUFValueType.ARRAY, gguf.GGUFValueType.UINT32)
    if vis.get("depth"):
        w.add_uint32(f"{arch}.vision.block_count", vis["depth"])
        w.add_uint32(f"{arch}.vision.embedding_length", vis["hidden_size"])
        w.add_uint32(f"{arch}.vision.attention.head_count", vis["num_heads"])
        w.add_uint32(f"{arch}.vision.num_channels", vis["in_channels"])
        w.add_uint32(f"{arch}.vision.patch_size", vis["patch_size"])
        w.add_uint32(f"{arch}.vision.spatial_merge_size", vis["spatial_merge_size"])
        w.add_uint32(f"{arch}.vision.temporal_patch_size", vis["temporal_patch_size"])
        # vision.deepstack_visual_indexes: Qwen 3.5's vision config has none; Go writes the nil slice as an empty
        # array, which gguf-py refuses to write, so the fixture leaves the (vision-only) key out.
        # parseMore: size and image_mean/std from preprocessor_config.json (the vision config has none of them;
        # it has no layer_norm_epsilon and no top-level rope_theta either, so those keys are not written)
        pre = {}
        if os.path.exists(os.path.join(hf_dir, "preprocessor_config.json")):
            pre = json.load(open(os.path.join(hf_dir, "preprocessor_config.json")))
        size = vis.get("size") or pre.get("size") or {}
        for k in ("shortest_edge", "longest_edge"):
            if size.get(k):
                w.add_uint32(f"{arch}.vision.{k}", size[k])
        for k in ("image_mean", "image_std"):
            if vis.get(k) or pre.get(k):
                w.add_key_value(f"{arch}.vision.{k}", [float(x) for x in vis.get(k) or pre[k]], gguf.GGUFValueType.ARRAY,
                                gguf.GGUFValueType.FLOAT32)
    for k in ("image_token_id", "vision_start_token_id", "vision_end_token_id"):
        if top.get(k):
            w.add_uint32(f"{arch}.{k}", top[k])

    sd = M.checkpoint_tensors(hf_dir)
    named = {M.go_replace(k, QWEN35_REPLACEMENTS): v.astype(np.float32) for k, v in sd.items()}   # parseTensors
    out = []
    # qwen3NextModel.Tensors: mergeTensors over blk.N.mlp.experts.*.{gate,up,down}_proj.weight, stacked by expert
    for i in range(n):
        for src, dst in (("gate_proj", "ffn_gate_exps"), ("up_proj", "ffn_up_exps"), ("down_proj", "ffn_down_exps")):
            parts = sorted((int(k.split(".")[4]), k) for k in named
                           if k.startswith(f"blk.{i}.mlp.experts.") and k.endswith(f".{src}.weight"))
            if parts:
                out.append((f"blk.{i}.{dst}.weight", np.stack([named.pop(k) for _, k in parts])))
    per_k = nv // nk
    for name in sorted(named):                             # the remaining tensors, the switch of Tensors()
        t = named[name]
        if name.startswith("v.blk.") and ".attn_qkv" in name:            # splitDim(t, 0): q, k, v
            for part, piece in zip(("attn_q", "attn_k", "attn_v"), np.split(t, 3, axis=0)):
                out.append((name.replace("attn_qkv", part), piece))
        elif "patch_embed" in name and name.endswith("weight"):          # [out, in, t, h, w] -> [out*in, t, h, w]
            out.append((name, t.reshape((t.shape[0] * t.shape[1],) + t.shape[2:])))
        elif name.endswith("_norm.weight") and not name.endswith(".ssm_norm.weight"):
            out.append((name, t + np.float32(1.0)))                      # addOne
        elif name.endswith(".ssm_a"):                                    # repackSSMA: -exp in float64, then reordered
            a = -(np.exp(t.astype(np.float64)).astype(np.float32))
            out.append((name, reorder_head_layout(a, 0, nk, per_k, 1)))
        elif name.endswith(".attn_qkv.weight"):                          # repackAttnQKV: the V rows reordered
            qk = 2 * hk * nk
            out.append((name, np.concatenate([t[:qk], reorder_head_layout(t[qk:qk + hv * nv], 0, nk, per_k, hv), t[qk + hv * nv:]])))
        elif name.endswith(".attn_gate.weight"):                         # repackReorderDim(0, LinearValueHeadDim)
            out.append((name, reorder_head_layout(t, 0, nk, per_k, hv)))
        elif name.endswith((".ssm_beta.weight", ".ssm_alpha.weight", ".ssm_dt")):   # repackReorderDim(0, 1)
            out.append((name, reorder_head_layout(t, 0, nk, per_k, 1)))
        elif name.endswith(".ssm_out.weight"):                           # repackReorderDim(1, LinearValueHeadDim)
            out.append((name, reorder_head_layout(t, 1, nk, per_k, hv)))
        elif name.endswith(".ssm_conv1d.weight"):                        # [C, 1, K] -> [C, K]; repackConv1D: V channels
            t = t.reshape(t.shape[0], t.shape[2]) if t.ndim == 3 and t.shape[1] == 1 else t
            qk = 2 * hk * nk
            out.append((name, np.concatenate([t[:qk], reorder_head_layout(t[qk:], 0, nk, per_k, hv)])))
        else:
            out.append((name, t))
    written = []
    for name, data in out:
        M.add_as_kind(w, name, data)   # tensorBase.Kind()
        written.append(name)
    M.finish(w)
    return {"tensors": written}


def qwen35moe_expert_gap(out_path: str) -> str:
    """A qwen35moe dialect header that contradicts itself: MTP experts 0 and 2 of layer 0, no expert 1 (Ollama's
    register_qwen35moe_mtp_expert_merge finds them non-contiguous). Returns the reason modelfs gives."""
    import gguf
    import make_dialect_fixture as M
    w = gguf.GGUFWriter(out_path, "qwen35moe")
    w.add_uint32("qwen35moe.block_count", 1)
    w.add_bool("qwen35moe.ssm.v_head_reordered", True)
    w.add_tensor("blk.0.attn_norm.weight", np.ones(8, np.float32))
    for k in ("gate_proj", "up_proj", "down_proj"):
        for e in (0, 2):
            w.add_tensor(f"mtp.layers.0.mlp.experts.{e}.{k}.weight", np.zeros((4, 8), np.float16))
    M.finish(w)
    return "non-contiguous qwen35moe MTP experts for layer 0"
