#!/usr/bin/env python3
"""Nemotron-H MoE (GGUF architecture nemotron_h_moe) for make_dialect_fixture.py (docs/FORMATS.md §12.16).

    dialect_nemotron.py OUT [LLAMA_CPP_SRC]     # this case alone, laid out as make_dialect_fixture.py lays it out

The source model is transformers' own NemotronHForCausalLM: hidden 64, 3 layers (a Mamba-2 layer of 4 heads of 32 in
2 groups, an attention layer of 4 query and 2 key/value heads, a MoE layer of 4 routed experts, 2 used, a shared
expert and the score-correction bias), with the latent MoE projections of Nemotron 3 Super (moe_latent_size 32: the
experts work in 32 dimensions between fc1_latent_proj and fc2_latent_proj) and its multi-token-prediction head
(num_nextn_predict_layers 1: transformers has no module for it and leaves mtp.* out of save_pretrained, so the
fixture adds the mtp.layers.0 / mtp.layers.1 tensors Nemotron 3 Super's checkpoint carries, random, to the
safetensors file); hf_models' byte-level BPE tokenizer (400 tokens: no padding by either converter). config.json gets
the fields the published nvidia/NVIDIA-Nemotron-3 config.json files carry beside transformers' own
(hybrid_override_pattern "M*E", num_hidden_layers), which Ollama's converter reads. The weights are F16-representable;
the A_log values are drawn so that -exp(A_log) rounds to the same float32 computed in float64 (Ollama's repacker,
Go's math.Exp) and in float32 (llama.cpp's converter, torch.exp).

Reference: llama.cpp's convert_hf_to_gguf.py (NemotronHModel, architecture nemotron_h_moe) with --no-mtp: llama.cpp's
own text-only conversion of the same checkpoint (without --no-mtp it folds the MTP head into a fourth block, which
Ollama's handler, like every text loader that does not draft, leaves out). Dialect: written as Ollama's converter
writes Nemotron-H, convert/convert_nemotron_h.go (nemotronHModel) at HEAD of Ollama's repository, with convert.go,
reader.go, tensor.go and tokenizer.go of the same commit: the latent projections named ffn_latent_in /
ffn_latent_out, no moe_latent_size key, and the MTP tensors kept (per expert, under mtp.*), which upstream llama.cpp
refuses and Ollama's handle_nemotron_h_moe translates. Each step names the Go function it follows. Nothing here uses
modelfs code.
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_models as H  # noqa: E402

REF_PRE = "qwen2"   # the fixture tokenizer's pre-tokenizer (Qwen 2's regex), as both converters name it
PATTERN = "M*E"     # hybrid_override_pattern: Mamba-2, attention, MoE
LATENT, EXPERTS, USED, MOE_FF, SHARED_FF = 32, 4, 2, 32, 48
HIDDEN, HEADS, KV_HEADS, HEAD_DIM = 64, 4, 2, 16


def make_nemotron(out_dir: str) -> None:
    """The tiny source model (save_pretrained, F32), its MTP tensors, the published config.json fields, the tokenizer."""
    import torch
    import transformers as T
    from safetensors.numpy import load_file, save_file
    import make_dialect_fixture as M
    tok = H.train_tokenizer("qwen3")
    assert len(tok) % 8 == 0   # llama.cpp's NemotronH vocabulary is padded to a multiple of 8, Ollama's to vocab_size
    types = {"M": "mamba", "*": "attention", "E": "moe"}
    cfg = T.NemotronHConfig(vocab_size=len(tok), hidden_size=HIDDEN, layers_block_type=[types[c] for c in PATTERN],
                            num_attention_heads=HEADS, num_key_value_heads=KV_HEADS, head_dim=HEAD_DIM, max_position_embeddings=512,
                            intermediate_size=96, mamba_num_heads=4, mamba_head_dim=32, n_groups=2, ssm_state_size=16,
                            conv_kernel=4, chunk_size=16, n_routed_experts=EXPERTS, n_shared_experts=1, num_experts_per_tok=USED,
                            moe_intermediate_size=MOE_FF, moe_shared_expert_intermediate_size=SHARED_FF, moe_latent_size=LATENT,
                            routed_scaling_factor=2.5, n_group=1, topk_group=1, norm_topk_prob=True, num_nextn_predict_layers=1,
                            use_mamba_kernels=False, tie_word_embeddings=False,
                            eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, bos_token_id=None)
    torch.manual_seed(9)
    model = T.NemotronHForCausalLM(cfg)
    M.randomize(model, f16=True, std=0.2)   # norms near 1, weights N(0, 0.2), every value F16-representable
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("mixer.A_log"):
                p.copy_(torch.tensor(a_log_values(p.numel(), np.random.default_rng(9))))
    os.makedirs(out_dir, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    tok.save_pretrained(out_dir)
    for extra in ("special_tokens_map.json", "chat_template.jinja"):
        if os.path.exists(os.path.join(out_dir, extra)):
            os.remove(os.path.join(out_dir, extra))
    st = os.path.join(out_dir, "model.safetensors")
    sd = load_file(st)
    sd.update(mtp_tensors(np.random.default_rng(10)))
    save_file(sd, st, metadata={"format": "pt"})
    p = os.path.join(out_dir, "config.json")
    c = json.load(open(p))
    c["hybrid_override_pattern"] = PATTERN
    c["num_hidden_layers"] = len(PATTERN)
    with open(p, "w") as f:
        json.dump(c, f, indent=1)


def a_log_values(n: int, rng) -> np.ndarray:
    """n A_log values in [0, 1.5), F16-representable, each one whose -exp rounds alike through float64 and float32."""
    import torch
    out = []
    while len(out) < n:
        v = np.float16(rng.uniform(0.0, 1.5)).astype(np.float32)
        if np.float32(-np.exp(np.float64(v))) == -torch.exp(torch.tensor(v)).item():
            out.append(v)
    return np.array(out, np.float32)


def mtp_tensors(rng) -> dict:
    """The MTP head of Nemotron 3 Super's checkpoint, tiny: mtp.layers.0 (the NextN fusion of the embedding and the hidden
    state, then attention) and mtp.layers.1 (a latent MoE, then the head's final norm); random, F16-representable."""
    def w(*shape):
        return rng.normal(0.0, 0.2, shape).astype(np.float16).astype(np.float32)

    def norm():
        return (1.0 + 0.1 * rng.normal(size=HIDDEN)).astype(np.float16).astype(np.float32)
    t = {"mtp.layers.0.enorm.weight": norm(), "mtp.layers.0.hnorm.weight": norm(), "mtp.layers.0.eh_proj.weight": w(HIDDEN, 2 * HIDDEN),
         "mtp.layers.0.norm.weight": norm(), "mtp.layers.0.mixer.q_proj.weight": w(HEADS * HEAD_DIM, HIDDEN),
         "mtp.layers.0.mixer.k_proj.weight": w(KV_HEADS * HEAD_DIM, HIDDEN), "mtp.layers.0.mixer.v_proj.weight": w(KV_HEADS * HEAD_DIM, HIDDEN),
         "mtp.layers.0.mixer.o_proj.weight": w(HIDDEN, HEADS * HEAD_DIM), "mtp.layers.1.norm.weight": norm(),
         "mtp.layers.1.mixer.gate.weight": w(EXPERTS, HIDDEN), "mtp.layers.1.mixer.gate.e_score_correction_bias": norm()[:EXPERTS],
         "mtp.layers.1.mixer.fc1_latent_proj.weight": w(LATENT, HIDDEN), "mtp.layers.1.mixer.fc2_latent_proj.weight": w(HIDDEN, LATENT),
         "mtp.layers.1.mixer.shared_experts.up_proj.weight": w(SHARED_FF, HIDDEN),
         "mtp.layers.1.mixer.shared_experts.down_proj.weight": w(HIDDEN, SHARED_FF), "mtp.layers.1.final_layernorm.weight": norm()}
    for e in range(EXPERTS):
        t[f"mtp.layers.1.mixer.experts.{e}.up_proj.weight"] = w(MOE_FF, LATENT)
        t[f"mtp.layers.1.mixer.experts.{e}.down_proj.weight"] = w(LATENT, MOE_FF)
    return t


# --- (b) Ollama's dialect: convert/convert_nemotron_h.go ----------------------------------------------------

REPLACEMENTS = [   # nemotronHModel.Replacements(), in Go's order
    "lm_head", "output",
    "backbone.embeddings", "token_embd",
    "backbone.norm_f", "output_norm",
    "backbone.layers", "blk",
    "mixer.in_proj", "ssm_in",
    "mixer.out_proj", "ssm_out",
    "mixer.dt_bias", "ssm_dt.bias",
    "mixer.A_log", "ssm_a",
    "mixer.D", "ssm_d",
    "mixer.conv1d", "ssm_conv1d",
    "mixer.norm.weight", "ssm_norm.weight",
    "mixer.q_proj", "attn_q",
    "mixer.k_proj", "attn_k",
    "mixer.v_proj", "attn_v",
    "mixer.o_proj", "attn_output",
    "mixer.gate.e_score_correction_bias", "exp_probs_b.bias",
    "mixer.gate", "ffn_gate_inp",
    "mixer.fc1_latent_proj", "ffn_latent_in",
    "mixer.fc2_latent_proj", "ffn_latent_out",
    "mixer.shared_experts.up_proj", "ffn_up_shexp",
    "mixer.shared_experts.down_proj", "ffn_down_shexp",
    "mixer.up_proj", "ffn_up",
    "mixer.down_proj", "ffn_down",
    ".norm.weight", ".attn_norm.weight",
]


def nemotron_dialect(hf_dir: str, ref_text: str, out_path: str) -> dict:
    import gguf
    import dialect_gptoss as G
    import make_dialect_fixture as M
    c = json.load(open(os.path.join(hf_dir, "config.json")))
    tok, _ = M.ref_tokenizer_kvs(ref_text, "nemotron_h_moe")
    tok["tokenizer.ggml.pre"] = G.ollama_pre(hf_dir)           # ModelParameters.KV: parseTokenizer's Pre
    w = gguf.GGUFWriter(out_path, "nemotron_h_moe")             # nemotronHModel.KV: isMoE() -> "nemotron_h_moe"
    M.model_parameters_kv(w, tok, tok["tokenizer.ggml.tokens"], tok["tokenizer.ggml.token_type"])
    text_kvs(w, c, "nemotron_h_moe.")                           # nemotronHModel.KV
    # parseTensors with Replacements(), then nemotronHModel.Tensors
    named = {M.go_replace(k, REPLACEMENTS): v.astype(np.float32) for k, v in M.checkpoint_tensors(hf_dir).items()}
    written = text_tensors(w, named, c)
    M.finish(w)
    return {"tensors": written}


def text_kvs(w, c: dict, a: str) -> None:
    """nemotronHModel.KV after ModelParameters.KV, in its order (no partial_rotary_factor: no rope.dimension_count), each
    key under the prefix a (nemotron_h_moe., or nemotron_h_omni. for nemotronHNanoVLModel, which renames the architecture)."""
    n = c["num_hidden_layers"]
    eps = c.get("norm_eps") or c.get("layer_norm_epsilon") or 1e-5          # nemotronHModel.epsilon
    head_dim = c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]
    w.add_uint32(a + "block_count", n)
    w.add_uint32(a + "context_length", c["max_position_embeddings"])
    w.add_uint32(a + "embedding_length", c["hidden_size"])
    w.add_uint32(a + "attention.head_count", c["num_attention_heads"])
    w.add_uint32(a + "attention.key_length", head_dim)
    w.add_uint32(a + "attention.value_length", head_dim)
    w.add_float32(a + "attention.layer_norm_epsilon", eps)
    w.add_float32(a + "attention.layer_norm_rms_epsilon", eps)
    w.add_float32(a + "rope.freq_base", c.get("rope_theta") or 10000.0)
    # nemotronHModel.layerArrays: per layer of hybrid_override_pattern, KV heads for '*', the MoE width for 'E'
    kv_heads = c.get("num_key_value_heads") or c["num_attention_heads"]
    pattern = c["hybrid_override_pattern"]
    w.add_array(a + "attention.head_count_kv", [kv_heads if t in "*A" else 0 for t in pattern])
    w.add_array(a + "feed_forward_length", [c["moe_intermediate_size"] if t == "E" else c["intermediate_size"] if t == "-" else 0
                                            for t in pattern])
    w.add_uint32(a + "ssm.conv_kernel", c["conv_kernel"])
    w.add_uint32(a + "ssm.inner_size", c["mamba_head_dim"] * c["mamba_num_heads"])   # ssmInnerSize
    w.add_uint32(a + "ssm.state_size", c["ssm_state_size"])
    w.add_uint32(a + "ssm.group_count", c.get("n_groups") or 1)
    w.add_uint32(a + "ssm.time_step_rank", c["mamba_num_heads"])                      # ssmHeadCount
    w.add_uint32(a + "expert_count", c.get("n_routed_experts") or c["num_experts"])     # routedExpertCount
    w.add_uint32(a + "expert_used_count", c["num_experts_per_tok"])
    w.add_uint32(a + "expert_feed_forward_length", c["moe_intermediate_size"])
    if c.get("n_shared_experts"):
        w.add_uint32(a + "expert_shared_count", c["n_shared_experts"])
    if c.get("moe_shared_expert_intermediate_size"):
        w.add_uint32(a + "expert_shared_feed_forward_length", c["moe_shared_expert_intermediate_size"])
    w.add_bool(a + "expert_weights_norm", bool(c["norm_topk_prob"]))
    w.add_float32(a + "expert_weights_scale", c["routed_scaling_factor"])
    if c.get("n_group"):
        w.add_uint32(a + "expert_group_count", c["n_group"])
    if c.get("topk_group"):
        w.add_uint32(a + "expert_group_used_count", c["topk_group"])


def text_tensors(w, named: dict, c: dict) -> list:
    """nemotronHModel.Tensors over the renamed checkpoint tensors (named, F32; emptied): the experts merged, the SSM
    tensors reshaped; each added to w in the type tensorBase.Kind() gives it. Returns the names written."""
    import make_dialect_fixture as M
    n = c["num_hidden_layers"]
    written = []

    def put(name, data, kind_name=None, kind_shape=None):
        # tensorBase.Kind() reads the name and the checkpoint shape (before Tensors() reshapes)
        kind = M.ollama_kind(kind_name or name, data.shape if kind_shape is None else kind_shape)
        w.add_tensor(name, np.ascontiguousarray(data.astype(np.float16 if kind == "F16" else np.float32)))
        written.append(name)
    # mergeTensors: blk.N.mixer.experts.*.{up,down}_proj.weight stacked (experts in numeric order) into
    # blk.N.ffn_{up,down}_exps.weight, Kind of the first part; the MTP head's experts (mtp.*) match no pattern
    for i in range(n):
        for proj, dst in (("up_proj", "ffn_up_exps"), ("down_proj", "ffn_down_exps")):
            parts = sorted((k for k in named if k.startswith(f"blk.{i}.mixer.experts.") and k.endswith(f".{proj}.weight")),
                           key=lambda k: int(k.split(".")[4]))
            if parts:
                first, first_shape = parts[0], named[parts[0]].shape
                put(f"blk.{i}.{dst}.weight", np.stack([named.pop(k) for k in parts]), first, first_shape)
    groups = c.get("n_groups") or 1
    for name in sorted(named):
        data, shape = named[name], named[name].shape
        if name.endswith(".ssm_a"):          # -exp(A_log) in float64, to float32; shape to a column
            data = (-np.exp(data.astype(np.float64))).astype(np.float32).reshape(-1, 1)
        elif name.endswith(".ssm_d"):        # normalizeVectorShapeToColumn
            data = data.reshape(-1, 1)
        elif name.endswith(".ssm_norm.weight") and data.ndim == 1 and data.shape[0] % groups == 0:
            data = data.reshape(groups, -1)
        elif name.endswith(".ssm_conv1d.weight") and data.ndim == 3 and data.shape[1] == 1:
            data = data.reshape(data.shape[0], data.shape[2])
        put(name, data, name, shape)
    return written


def jobs(work: str, out: str):
    return [(REF_PRE, os.path.join(work, "nemotron_h_moe"), os.path.join(out, "ref", "nemotron_h_moe.gguf"), "no-mtp")]


def build(src: str, out: str, work: str, store: str, expected: dict) -> None:
    """The nemotron_h_moe case: source model, reference (make_dialect_fixture's converter child), dialect blob, expectations."""
    import make_dialect_fixture as M
    from transformers import AutoTokenizer
    hf = os.path.join(work, "nemotron_h_moe")
    make_nemotron(hf)
    M.convert_reference(src, jobs(work, out))
    ref = jobs(work, out)[0][2]
    dialect_file = os.path.join(out, "ref", "nemotron_h_moe-dialect.gguf")
    info = nemotron_dialect(hf, ref, dialect_file)
    with open(dialect_file, "rb") as f:
        blob = f.read()
    tok = AutoTokenizer.from_pretrained(hf)
    expected["models"]["dialect-nemotron_h_moe"] = {
        "handler": "nemotron_h_moe", "ref_gguf": ref, "dialect_file": dialect_file,
        "blob": M.put_model(store, "dialect-nemotron_h_moe", blob, "nemotron_h_moe"), "texts": H.SAMPLE_TEXTS,
        "hf_tokens": [tok(t, add_special_tokens=False)["input_ids"] for t in H.SAMPLE_TEXTS], "mmproj": False,
        "dropped": [n for n in info["tensors"] if n.startswith("mtp.")],
        # llama.cpp's converter permutes q/k rows for rope (LlamaModel.permute, through GraniteHybridModel); Nemotron-H's
        # attention has no rope and Ollama's converter keeps the checkpoint's order: per head the same reordering of q's
        # and k's rows, so the same scores (the llama check)
        "qk_permuted_in_ref": {"blk.1.attn_q.weight": HEADS, "blk.1.attn_k.weight": KV_HEADS},
        # KVs handle_nemotron_h_moe leaves as Ollama's converter wrote them, which llama.cpp reads alike: the checkpoint's
        # context length (llama.cpp's Mamba-2 converter writes 2^20; the checks use a context of 64), no vocab_size (llama.cpp
        # counts the tokens), no rope.dimension_count (llama.cpp defaults to the head size, 16) or rope.scaling.finetuned
        "ref_differences": ["nemotron_h_moe.context_length", "nemotron_h_moe.vocab_size", "nemotron_h_moe.rope.dimension_count",
                            "nemotron_h_moe.rope.scaling.finetuned"]}


def main(argv) -> int:
    import make_dialect_fixture as M
    return M.run_alone(argv, build, "modelfs-dialect-nemotron-")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
