"""Case gemma4 of make_dialect_fixture.py: a tiny Gemma4ForConditionalGeneration (text model with sliding and
global layers, proportional rope, final-logit softcap, per-layer output scalars; a Gemma 4 vision tower with
its projector; a one-block audio conformer with clipped linears and its embedder), written by llama.cpp's
converter (model + --mmproj, one projector file with vision and audio: the reference) and in Ollama's
dialect by `gemma4_dialect`, which follows Ollama's convert/convert_gemma4.go step by step (each step names
the Go function it follows). Nothing here uses modelfs code; nothing is copied from Ollama's repository.
"""
from __future__ import annotations

import json
import os

import numpy as np

import hf_models as H

# Published Gemma 4 configs carry the global layers' head geometry at the top of text_config (Ollama's
# converter reads these fields); transformers 5.17 writes per_layer_config instead and reads both.
GLOBAL_HEAD_DIM = 64


# Gemma 4's model-specific special tokens (as its tokenizer_config.json names them), a few of them: the fixture's tokenizer
# gets them as special added tokens, so both converters type them (llama.cpp's: control, or user-defined for the ones
# its converter always renders; Ollama's: control)
NAMED_SPECIALS = {"boi_token": "<|image>", "eoi_token": "<image|>", "sot_token": "<|turn>", "eot_token": "<turn|>",
                  "soc_token": "<|channel>", "eoc_token": "<channel|>", "escape_token": '<|"|>'}


def make_gemma4(out_dir: str, audio: bool = False, named_specials: bool = False) -> None:
    """The source model: Gemma 4 E2B's text config shrunk (hidden 64, 4 layers: sliding, full, sliding, full with a
    window of 8, head_dim 32 and global_head_dim 64; per-layer inputs of 16; the last two layers sharing layers 0 and
    1's keys and values, their MLPs double-wide, as google/gemma-4-E2B), a one-layer vision tower, a one-block
    audio encoder (F16-exact weights, finite clamp bounds), weights random with norms and layer scalars away from 1; Gemma's SentencePiece-style BPE tokenizer (gemma_tokenizer.py)
    as tokenizer.json only, with the chat template in tokenizer_config.json; a preprocessor_config.json with
    Gemma 4's image normalization (mean 0, std 1). Without `audio` (make_gguf_fixture's gemma4_vlm) no audio encoder,
    the model as before it had one; with `named_specials`, NAMED_SPECIALS added to the tokenizer and named in
    tokenizer_config.json (model_specific_special_tokens, as transformers saves Gemma 4's)."""
    import make_dialect_fixture as M
    import torch
    import transformers as T
    tok = H.train_tokenizer("gemma3")
    if named_specials:
        from tokenizers import AddedToken
        tok.add_tokens([AddedToken(t, special=True, normalized=False) for t in NAMED_SPECIALS.values()], special_tokens=True)
    text = T.Gemma4TextConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=4,
                              num_attention_heads=2, num_key_value_heads=1, head_dim=32, global_head_dim=GLOBAL_HEAD_DIM,
                              sliding_window=8, layer_types=["sliding_attention", "full_attention"] * 2,
                              hidden_size_per_layer_input=16, vocab_size_per_layer_input=len(tok),
                              num_kv_shared_layers=2, use_double_wide_mlp=True,
                              max_position_embeddings=4096, final_logit_softcapping=30.0, rms_norm_eps=1e-6)
    vision = T.Gemma4VisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                                  num_key_value_heads=2, head_dim=16, patch_size=4, position_embedding_size=64,
                                  pooling_kernel_size=2)
    # the audio conformer shrunk: one block, hidden 32; the first subsampling conv keeps 128 channels (the width of
    # the input projection is (channels[0] // 4) * channels[1], which the 128 mel bins llama.cpp feeds must match);
    # chunking as the published models (llama.cpp's gemma4a graph fixes chunk 12, left context 13)
    audio_cfg = T.Gemma4AudioConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, subsampling_conv_channels=[128, 4],
                                    conv_kernel_size=5, output_proj_dims=32)
    cfg = T.Gemma4Config(text_config=text.to_dict(), vision_config=vision.to_dict(), audio_config=audio_cfg.to_dict() if audio else None,
                         boi_token_id=4, eoi_token_id=5, image_token_id=6, video_token_id=7, boa_token_id=8,
                         eoa_token_index=9, audio_token_id=11)   # not among dialect_hf_folder.oracle's ids (3 + 7i)
    torch.manual_seed(4)
    model = T.Gemma4ForConditionalGeneration(cfg)
    M.randomize(model, std=0.08)
    with torch.no_grad():
        for name, p in model.named_parameters():   # the audio tower F16-exact: Ollama's converter stores its input
            if "audio" in name:                    # projection as F16 where llama.cpp's keeps F32 (same values then)
                p.copy_(p.half().float())
        for i, (name, b) in enumerate(model.named_buffers()):
            if name.endswith("layer_scalar"):
                b.fill_(0.75)
            elif name.endswith(("input_min", "output_min")):   # the audio ClippableLinears' bounds: finite, apart
                b.fill_(-3.0 - 0.25 * (i % 8))
            elif name.endswith(("input_max", "output_max")):
                b.fill_(3.0 + 0.25 * (i % 8))
    save_gemma4(model, tok, out_dir, named_specials)
    with open(os.path.join(out_dir, "preprocessor_config.json"), "w") as f:
        json.dump({"image_mean": [0.0, 0.0, 0.0], "image_std": [1.0, 1.0, 1.0], "patch_size": 4,
                   "pooling_kernel_size": 2, "max_soft_tokens": 16}, f, indent=1)


def save_gemma4(model, tok, out_dir: str, named_specials: bool = False, top_level: dict | None = None) -> None:
    """Saves a Gemma 4 source folder as the published ones are laid out: the model (save_pretrained), tokenizer.json with
    the chat template in tokenizer_config.json (add_bos_token), and the global layers' head geometry at the top of
    text_config (global_head_dim, and the `top_level` fields, as published configs carry them beside per_layer_config)."""
    os.makedirs(out_dir, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    tok.save_pretrained(out_dir)
    for extra in ("special_tokens_map.json", "chat_template.jinja", "tokenizer.model"):
        if os.path.exists(os.path.join(out_dir, extra)):
            os.remove(os.path.join(out_dir, extra))
    import gemma_tokenizer as GT
    tc_path = os.path.join(out_dir, "tokenizer_config.json")
    tc = json.load(open(tc_path, encoding="utf-8"))
    tc.update(add_bos_token=True, add_eos_token=False, chat_template=GT.CHAT_TEMPLATE)
    if named_specials:
        tc.update(NAMED_SPECIALS, model_specific_special_tokens=NAMED_SPECIALS)
    with open(tc_path, "w", encoding="utf-8") as f:
        json.dump(tc, f, indent=2, ensure_ascii=False, sort_keys=True)
    cfg_path = os.path.join(out_dir, "config.json")
    c = json.load(open(cfg_path))
    c["text_config"]["global_head_dim"] = GLOBAL_HEAD_DIM
    c["text_config"].update(top_level or {})
    with open(cfg_path, "w") as f:
        json.dump(c, f, indent=2, sort_keys=True)


# --- Ollama's dialect: convert/convert_gemma4.go -----------------------------------------------------------

GEMMA4_REPLACEMENTS = [   # gemma4Model.Replacements(), the pairs a text+vision+audio checkpoint can meet, in Go's order
    ".linear.weight", ".weight",
    ".linear.bias", ".bias",
    # the audio tower (transformers 5's names: subsample_conv_projection.layerN, layers, self_attn, feed_forwardN, lconv1d)
    "model.audio_tower.subsample_conv_projection.layer0.conv", "a.conv1d.0",
    "model.audio_tower.subsample_conv_projection.layer0.norm", "a.conv1d.0.norm",
    "model.audio_tower.subsample_conv_projection.layer1.conv", "a.conv1d.1",
    "model.audio_tower.subsample_conv_projection.layer1.norm", "a.conv1d.1.norm",
    "model.audio_tower.subsample_conv_projection.input_proj_linear", "a.pre_encode.out",
    "model.audio_tower.layers", "a.blk",
    "self_attn.relative_k_proj", "linear_pos",
    "self_attn.per_dim_scale", "per_dim_scale",
    "self_attn.post", "attn_out",
    "norm_pre_attn", "ln1",
    "norm_post_attn", "ln2",
    "feed_forward1.pre_layer_norm", "ffn_norm",
    "feed_forward1.post_layer_norm", "ffn_post_norm",
    "feed_forward1.ffw_layer_1", "ffn_up",
    "feed_forward1.ffw_layer_2", "ffn_down",
    "feed_forward2.pre_layer_norm", "ffn_norm_1",
    "feed_forward2.post_layer_norm", "ffn_post_norm_1",
    "feed_forward2.ffw_layer_1", "ffn_up_1",
    "feed_forward2.ffw_layer_2", "ffn_down_1",
    "lconv1d.depthwise_conv1d", "conv_dw",
    "lconv1d.pre_layer_norm", "conv_norm",
    "lconv1d.conv_norm", "norm_conv",
    "lconv1d.linear_start", "conv_pw1",
    "lconv1d.linear_end", "conv_pw2",
    "norm_out", "layer_pre_norm",
    "model.embed_audio.embedding_projection", "mm.a.input_projection",
    "model.audio_tower.output_proj", "mm.a.fc",
    "model.vision_tower.encoder.layers", "v.blk",
    "model.vision_tower.patch_embedder.input_proj", "v.patch_embd",
    "model.vision_tower.patch_embedder.position_embedding_table", "v.position_embd.weight",
    "model.vision_tower.std_bias", "v.std_bias",
    "model.vision_tower.std_scale", "v.std_scale",
    "model.embed_vision.embedding_projection", "mm.input_projection",
    "model.language_model.embed_tokens_per_layer", "per_layer_token_embd",
    "model.language_model.embed_tokens", "token_embd",
    "model.language_model.per_layer_model_projection", "per_layer_model_proj",
    "model.language_model.per_layer_projection_norm", "per_layer_proj_norm",
    "model.language_model.norm", "output_norm",
    "model.language_model.layers", "blk",
    "input_layernorm", "attn_norm",
    "self_attn.q_proj", "attn_q",
    "self_attn.q_norm", "attn_q_norm",
    "self_attn.k_proj", "attn_k",
    "self_attn.k_norm", "attn_k_norm",
    "self_attn.v_proj", "attn_v",
    "self_attn.o_proj", "attn_output",
    "mlp.gate_proj", "ffn_gate",
    "mlp.down_proj", "ffn_down",
    "mlp.up_proj", "ffn_up",
    "post_attention_layernorm", "post_attention_norm",
    "pre_feedforward_layernorm_2", "pre_ffw_norm_2",
    "pre_feedforward_layernorm", "ffn_norm",
    "post_feedforward_layernorm_1", "post_ffw_norm_1",
    "post_feedforward_layernorm_2", "post_ffw_norm_2",
    "post_feedforward_layernorm", "post_ffw_norm",
    # MoE (26B-A4B): the router, its scales and the stacked, fused experts
    "router.proj", "ffn_gate_inp",
    "router.scale", "ffn_gate_inp.scale",
    "router.per_expert_scale.weight", "ffn_down_exps.scale",
    "router.per_expert_scale", "ffn_down_exps.scale",
    "experts.gate_up_proj.weight", "ffn_gate_up_exps.weight",
    "experts.gate_up_proj", "ffn_gate_up_exps.weight",
    "experts.down_proj.weight", "ffn_down_exps.weight",
    "experts.down_proj", "ffn_down_exps.weight",
    # the separate expert tensors of a checkpoint laid out as moe.* (dialect_gemma4moe.py's split variant)
    "moe.gate_proj", "ffn_gate_exps.weight",
    "moe.up_proj", "ffn_up_exps.weight",
    "moe.gate_up_proj.weight", "ffn_gate_up_exps.weight",
    "moe.gate_up_proj", "ffn_gate_up_exps.weight",
    "moe.down_proj", "ffn_down_exps.weight",
    "moe.per_expert_scale.weight", "ffn_down_exps.scale",
    "moe.per_expert_scale", "ffn_down_exps.scale",
    "per_layer_input_gate", "inp_gate",
    "per_layer_projection", "proj",
    "post_per_layer_input_norm", "post_norm",
    "layer_scalar", "layer_output_scale.weight",
]

VISION_BLOCK_RENAMES = [   # gemma4Model.Tensors: v.blk.* names as published mmproj files have them (strings.Replace, once)
    (".attn_norm.", ".ln1."), (".ffn_norm.", ".ln2."), (".attn_output.", ".attn_out."),
    (".post_attention_norm.", ".attn_post_norm."), (".post_ffw_norm.", ".ffn_post_norm."),
    (".layer_output_scale.", ".out_scale."),
]

TOKEN_NORMAL, TOKEN_CONTROL, TOKEN_USER_DEFINED = 1, 3, 4


def parse_tokenizer(hf_dir: str) -> dict:
    """parseTokenizer (convert/tokenizer.go) of a folder with tokenizer.json and no tokenizer.model:
    parseVocabularyFromTokenizer (tokens by id, the added tokens over the model's vocabulary; score = the id;
    type control for special added tokens, user-defined for other added tokens, normal otherwise), the merges
    ([][]string joined by a space), Pre "default" (the tokenizer has no Split regex to hash), then for each of
    specialTokenTypes (bos eos unk sep pad cls mask) tokenizer_config.json's add_<t>_token and the id of
    <t>_token when it is an added token; generation_config.json lists (none here)."""
    tj = json.load(open(os.path.join(hf_dir, "tokenizer.json"), encoding="utf-8"))
    tokens = {i: (c, TOKEN_NORMAL) for c, i in tj["model"]["vocab"].items()}
    added = {}
    for a in tj["added_tokens"]:
        tokens[a["id"]] = (a["content"], TOKEN_CONTROL if a["special"] else TOKEN_USER_DEFINED)
        added[a["content"]] = a["id"]
    ids = sorted(tokens)
    merges = [m if isinstance(m, str) else " ".join(m) for m in tj["model"]["merges"]]
    tc = json.load(open(os.path.join(hf_dir, "tokenizer_config.json"), encoding="utf-8"))
    specials = []
    for st in ("bos", "eos", "unk", "sep", "pad", "cls", "mask"):
        content = tc.get(f"{st}_token")
        if isinstance(content, dict):
            content = content.get("content")
        if content in added:
            specials.append((st, added[content], tc.get(f"add_{st}_token")))
    return {"tokens": [tokens[i][0] for i in ids], "scores": [float(i) for i in ids],
            "types": [tokens[i][1] for i in ids], "merges": merges, "template": tc.get("chat_template", ""),
            "specials": specials}


SPECIAL_KEY = {"bos": "bos", "eos": "eos", "cls": "cls", "mask": "mask", "unk": "unknown", "sep": "seperator",
               "pad": "padding"}   # SpecialVocabulary.Key(), Ollama's spelling of "seperator" included


def gemma4_kv(cfg: dict, t: dict) -> dict:
    """gemma4Model.KV over ModelParameters.KV (convert/convert.go): {key: (gguf type name, value)}."""
    kv = {"general.file_type": ("uint32", 1), "general.quantization_version": ("uint32", 2),
          "tokenizer.ggml.pre": ("string", "default"), "tokenizer.ggml.model": ("string", "gpt2"),
          "tokenizer.ggml.tokens": ("strings", t["tokens"]), "tokenizer.ggml.scores": ("float32s", t["scores"]),
          "tokenizer.ggml.token_type": ("int32s", t["types"])}
    if t["merges"]:
        kv["tokenizer.ggml.merges"] = ("strings", t["merges"])
    if t["template"]:
        kv["tokenizer.chat_template"] = ("string", t["template"])
    for st, i, add in t["specials"]:
        if add is not None:
            kv[f"tokenizer.ggml.add_{SPECIAL_KEY[st]}_token"] = ("bool", bool(add))
        kv[f"tokenizer.ggml.{SPECIAL_KEY[st]}_token_id"] = ("uint32", i)
    # gemma4Model.KV
    kv["general.architecture"] = ("string", "gemma4")
    kv["tokenizer.ggml.model"] = ("string", "llama")
    kv["tokenizer.ggml.pre"] = ("string", "gemma4")
    tc, vc = cfg["text_config"], cfg["vision_config"]
    u = lambda v: ("uint32", int(v))   # noqa: E731
    kv["gemma4.block_count"] = u(tc["num_hidden_layers"])
    kv["gemma4.embedding_length"] = u(tc["hidden_size"])
    n_shared = tc.get("num_kv_shared_layers") or 0
    if tc.get("use_double_wide_mlp") and n_shared > 0:   # the KV-sharing layers twice as wide, an int32 array
        first = tc["num_hidden_layers"] - n_shared
        kv["gemma4.feed_forward_length"] = ("int32s", [tc["intermediate_size"] * (2 if i >= first else 1)
                                                       for i in range(tc["num_hidden_layers"])])
    else:
        kv["gemma4.feed_forward_length"] = u(tc["intermediate_size"])
    kv["gemma4.context_length"] = u(tc["max_position_embeddings"])
    kv["gemma4.attention.head_count"] = u(tc["num_attention_heads"])
    g_kv = tc.get("num_global_key_value_heads")   # per layer when the full layers' count differs (26B-A4B, 31B)
    if g_kv is not None and g_kv != tc["num_key_value_heads"] and tc.get("layer_types"):
        kv["gemma4.attention.head_count_kv"] = ("int32s", [tc["num_key_value_heads"] if lt == "sliding_attention" else g_kv
                                                         for lt in tc["layer_types"]])
    else:
        kv["gemma4.attention.head_count_kv"] = u(tc["num_key_value_heads"])
    kv["gemma4.attention.key_length"] = u(tc["global_head_dim"])
    kv["gemma4.attention.value_length"] = u(tc["global_head_dim"])
    kv["gemma4.attention.key_length_swa"] = u(tc["head_dim"])
    kv["gemma4.attention.value_length_swa"] = u(tc["head_dim"])
    kv["gemma4.attention.layer_norm_rms_epsilon"] = ("float32", tc["rms_norm_eps"])
    kv["gemma4.attention.sliding_window"] = u(tc["sliding_window"])
    kv["gemma4.attention.sliding_window_pattern"] = ("bools", [lt == "sliding_attention" for lt in tc["layer_types"]])
    kv["gemma4.attention.shared_kv_layers"] = u(tc.get("num_kv_shared_layers") or 0)
    rp = tc["rope_parameters"]
    if rp.get("full_attention"):
        kv["gemma4.rope.freq_base"] = ("float32", rp["full_attention"]["rope_theta"])
        kv["gemma4.rope.dimension_count"] = u(tc["global_head_dim"])
    if rp.get("sliding_attention"):
        kv["gemma4.rope.freq_base_swa"] = ("float32", rp["sliding_attention"]["rope_theta"])
        kv["gemma4.rope.dimension_count_swa"] = u(tc["head_dim"])
    if (tc.get("final_logit_softcapping") or 0) > 0:
        kv["gemma4.final_logit_softcapping"] = ("float32", tc["final_logit_softcapping"])
    kv["gemma4.embedding_length_per_layer_input"] = u(tc.get("hidden_size_per_layer_input") or 0)   # always written
    if tc.get("enable_moe_block") and tc.get("num_experts") is not None:   # MoE
        kv["gemma4.expert_count"] = u(tc["num_experts"])
        if tc.get("top_k_experts") is not None:
            kv["gemma4.expert_used_count"] = u(tc["top_k_experts"])
        if tc.get("moe_intermediate_size") is not None:
            kv["gemma4.expert_feed_forward_length"] = u(tc["moe_intermediate_size"])
    if vc and vc.get("num_hidden_layers", 0) > 0:
        kv["gemma4.vision.block_count"] = u(vc["num_hidden_layers"])
        kv["gemma4.vision.embedding_length"] = u(vc["hidden_size"])
        kv["gemma4.vision.attention.head_count"] = u(vc["num_attention_heads"])
        kv["gemma4.vision.feed_forward_length"] = u(vc["intermediate_size"])
        kv["gemma4.vision.patch_size"] = u(vc["patch_size"])
        kv["gemma4.vision.num_channels"] = u(vc.get("num_channels") or 3)
        kv["gemma4.vision.projector.scale_factor"] = u(vc.get("pooling_kernel_size") or 3)
        kv["gemma4.vision.attention.layer_norm_epsilon"] = ("float32", vc.get("layer_norm_eps") or 1e-6)
    ac = cfg.get("audio_config")
    if ac and ac.get("num_hidden_layers", 0) > 0:   # the audio model's KVs
        kv["gemma4.audio.block_count"] = u(ac["num_hidden_layers"])
        kv["gemma4.audio.embedding_length"] = u(ac["hidden_size"])
        kv["gemma4.audio.feed_forward_length"] = u(ac["hidden_size"] * 4)
        kv["gemma4.audio.attention.head_count"] = u(ac["num_attention_heads"])
        kv["gemma4.audio.attention.layer_norm_epsilon"] = ("float32", ac.get("rms_norm_eps") or 1e-6)
        if ac.get("conv_kernel_size"):
            kv["gemma4.audio.conv_kernel_size"] = u(ac["conv_kernel_size"])
    return kv


def gemma4_kind(name: str, shape) -> str:
    """tensorBase.Kind() (convert/reader.go) with the audio rules make_dialect_fixture.ollama_kind leaves out: the
    audio SSCP convolutions (a.conv1d.*) and depthwise convolutions (.conv_dw.) stay F32."""
    if name.startswith("a.conv1d.") or ".conv_dw." in name:
        return "F32"
    import make_dialect_fixture as M
    return M.ollama_kind(name, shape)


def softplus_go(data: np.ndarray) -> np.ndarray:
    """softplusRepacker: float32(math.Log(1 + math.Exp(float64(x)))) per element."""
    return np.log(1.0 + np.exp(data.astype(np.float64))).astype(np.float32)


def reshape_patch_embed(data: np.ndarray) -> np.ndarray:
    """gemma4Model.reshapePatchEmbed: [n_embd, p*p*c] (row-major h, w, c) to [n_embd, c, p, p]."""
    n_embd, ksq_c = data.shape
    p = int(np.sqrt(ksq_c // 3))
    return data.reshape(n_embd, p, p, 3).transpose(0, 3, 1, 2).copy()


def gemma4_dialect(hf_dir: str, out_path: str, merges: bool = True) -> dict:
    """The dialect file; merges=False leaves tokenizer.ggml.merges out (a header handle_gemma4 would turn into a
    BPE vocabulary without merges, which llama.cpp refuses: served as stored)."""
    import gguf
    import make_dialect_fixture as M
    cfg = json.load(open(os.path.join(hf_dir, "config.json")))
    kv = gemma4_kv(cfg, parse_tokenizer(hf_dir))
    if not merges:
        del kv["tokenizer.ggml.merges"]
    sd = M.checkpoint_tensors(hf_dir)
    # gemma4Model.Tensors; the names come from Replacements (parseTensors' strings.Replacer)
    out = []
    for key in sd:
        name = M.go_replace(key, GEMMA4_REPLACEMENTS)
        if "embedding_post_projection_norm" in name:   # used as a weightless norm: not written
            continue
        if name.startswith("v.blk."):
            for a, b in VISION_BLOCK_RENAMES:
                name = name.replace(a, b, 1)
        data = sd[key].astype(np.float32)
        if name.startswith("a.blk.") and name.endswith("per_dim_scale"):   # softplusRepacker, the name gets .weight
            name, data = name + ".weight", softplus_go(data)
        if name.startswith("a.blk.") and "conv_dw" in name and name.endswith(".weight"):   # squeezeMiddleDim: [C, 1, K] -> [C, K]
            data = data.reshape(data.shape[0], data.shape[2])
        if data.ndim == 0:   # scalars become 1-D
            data = data.reshape(1)
        kind = gemma4_kind(name, data.shape)   # tensorBase.Kind() on the replaced name
        if "v.patch_embd.weight" in name and data.ndim == 2:   # reshapePatchEmbed, stored F16 (im2col)
            data, kind = reshape_patch_embed(data), "F16"
        out.append((name, data.astype(np.float16 if kind == "F16" else np.float32)))
    # rope_freqs.weight: one global tensor for the proportional rope of the full-attention layers
    tc = cfg["text_config"]
    if tc.get("global_head_dim"):
        factor = (tc["rope_parameters"].get("full_attention") or {}).get("partial_rotary_factor") or 0.25
        n_rot = int(np.float32(tc["global_head_dim"]) * np.float32(factor) / 2)
        out.append(("rope_freqs.weight", np.array([1.0 if j < n_rot else 1e30 for j in range(tc["global_head_dim"] // 2)],
                                                  np.float32)))
    # no use_clipped_linears: no clamp scalars, so no v.clamp_data
    # WriteGGUF (fs/ggml/gguf.go): keys sorted (gguf-py writes general.architecture first), tensors by block then name
    w = gguf.GGUFWriter(out_path, "gemma4")
    adders = {"uint32": w.add_uint32, "float32": w.add_float32, "bool": w.add_bool, "string": w.add_string}
    for k in sorted(kv):
        typ, v = kv[k]
        if k == "general.architecture":
            continue
        if typ in adders:
            adders[typ](k, v)
        elif typ == "strings":
            w.add_array(k, list(v))
        elif typ == "bools":
            w.add_key_value(k, list(v), gguf.GGUFValueType.ARRAY, sub_type=gguf.GGUFValueType.BOOL)
        elif typ == "float32s":
            w.add_key_value(k, list(v), gguf.GGUFValueType.ARRAY, sub_type=gguf.GGUFValueType.FLOAT32)
        elif typ == "int32s":
            w.add_key_value(k, list(v), gguf.GGUFValueType.ARRAY, sub_type=gguf.GGUFValueType.INT32)

    def block(n):
        return int(n.split(".")[1]) if n.startswith("blk.") else 1 << 62
    out.sort(key=lambda t: (block(t[0]), t[0]))
    for name, data in out:
        w.add_tensor(name, data)
    M.finish(w)
    return {"tensors": [n for n, _ in out]}
