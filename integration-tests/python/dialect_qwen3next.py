"""Qwen3-Next (GGUF architecture qwen3next) for make_dialect_fixture.py (docs/FORMATS.md §12).

The source model is transformers' own Qwen3NextForCausalLM: hidden 64, 2 layers (a gated-delta-net layer, then a
full-attention one: full_attention_interval 2), 4 experts (2 used) with a shared expert, 2 key heads and 4 value
heads in the linear attention (so that the fused in_proj_qkvz's per-head split moves rows), hf_models' byte-level
BPE tokenizer. config.json gets the top-level rope_theta, partial_rotary_factor and full_attention_interval the
published Qwen/Qwen3-Next config.json files carry (transformers 5 saves rope_parameters and layer_types only),
which Ollama's converter reads.

The dialect is written as Ollama's converter wrote the published qwen3-next files: convert/convert_qwen3next.go at
commit 77eb2ca61 of Ollama's repository ("model: add qwen3-next architecture"): the per-layer
attention.head_count_kv array (0 on the recurrent layers), ssm_dt without ".bias", everything else in llama.cpp's
layout. Ollama's compatibility layer (handle_qwen3next in llama/compat/llama-ollama-compat.cpp) collapses the
array to its maximum and renames ssm_dt. Each step names the Go function it follows.
Nothing here uses modelfs code.
"""
from __future__ import annotations

import json
import os

import numpy as np

import hf_models as H

REF_PRE = "qwen2"   # the fixture tokenizer's pre-tokenizer; qwen3NextModel.KV writes "qwen2" as well
ROPE_THETA, PARTIAL_ROTARY, INTERVAL = 10000000.0, 0.25, 2


def make_qwen3next(out_dir: str) -> None:
    """The tiny source model, saved with save_pretrained (F32), and its tokenizer. A_log values where both
    converters' float32 exp round alike (dialect_qwen35._exp_agrees), norms near 0 (Qwen3-Next scales by 1 + w)."""
    import torch
    import transformers as T
    import dialect_qwen35 as Q35
    import make_dialect_fixture as M
    tok = H.train_tokenizer("qwen3")
    cfg = T.Qwen3NextConfig(
        vocab_size=len(tok), hidden_size=64, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=16, linear_conv_kernel_dim=4, linear_key_head_dim=16, linear_value_head_dim=16,
        linear_num_key_heads=2, linear_num_value_heads=4, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32,
        shared_expert_intermediate_size=32, max_position_embeddings=512, rms_norm_eps=1e-6, tie_word_embeddings=False,
        layer_types=["linear_attention", "full_attention"], eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
        rope_parameters={"rope_type": "default", "rope_theta": ROPE_THETA, "partial_rotary_factor": PARTIAL_ROTARY})
    torch.manual_seed(80)
    model = T.Qwen3NextForCausalLM(cfg)
    M.randomize(model, std=0.1)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("A_log"):
                vals = []
                for v in (0.5 * torch.randn(p.shape)).tolist():
                    v = np.float32(v)
                    while not Q35._exp_agrees(v):
                        v = np.nextafter(v, np.float32(1.0))
                    vals.append(v)
                p.copy_(torch.tensor(np.array(vals, np.float32)))
            elif name.endswith("norm.weight") and "linear_attn" not in name:
                p.copy_(0.1 * torch.randn_like(p))
    os.makedirs(out_dir, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    tok.save_pretrained(out_dir)
    p = os.path.join(out_dir, "config.json")
    c = json.load(open(p))
    c.update(rope_theta=ROPE_THETA, partial_rotary_factor=PARTIAL_ROTARY, full_attention_interval=INTERVAL)
    with open(p, "w") as f:
        json.dump(c, f, indent=1)


# --- (b) Ollama's dialect: convert/convert_qwen3next.go at 77eb2ca61 ---------------------------------------

QWEN3NEXT_REPLACEMENTS = [   # qwen3NextModel.Replacements(), in Go's order
    "lm_head", "output",
    "model.embed_tokens", "token_embd",
    "model.norm", "output_norm",
    "model.layers", "blk",
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


def split_qkvz(t: np.ndarray, c: dict):
    """splitQKVZTensor / repackQKVZ: [out, hidden] viewed as hidden x (num_k_heads, [q k v z]), the per-head q, k, v
    rows gathered into attn_qkv and the z rows into attn_gate."""
    nk, nv, hk, hv = c["linear_num_key_heads"], c["linear_num_value_heads"], c["linear_key_head_dim"], c["linear_value_head_dim"]
    vph = hv * (nv // nk)
    hidden = t.shape[1]
    x = t.T.reshape(hidden, nk, 2 * hk + 2 * vph)
    q, k, v, z = np.split(x, [hk, 2 * hk, 2 * hk + vph], axis=2)
    qkv = np.concatenate([q.reshape(hidden, -1), k.reshape(hidden, -1), v.reshape(hidden, -1)], axis=1).T
    return np.ascontiguousarray(qkv), np.ascontiguousarray(z.reshape(hidden, -1).T)


def qwen3next_dialect(hf_dir: str, ref_text: str, out_path: str) -> dict:
    import gguf
    import make_dialect_fixture as M
    c = json.load(open(os.path.join(hf_dir, "config.json")))
    tok, _ = M.ref_tokenizer_kvs(ref_text, "qwen3next")
    tok["tokenizer.ggml.pre"] = "qwen2"                   # KV(): tokenizer.ggml.pre = "qwen2"
    w = gguf.GGUFWriter(out_path, "qwen3next")           # KV(): general.architecture = "qwen3next"
    M.model_parameters_kv(w, tok, tok["tokenizer.ggml.tokens"], tok["tokenizer.ggml.token_type"])
    a, n = "qwen3next.", c["num_hidden_layers"]
    head_dim = c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]
    # qwen3NextModel.KV at 77eb2ca61, in its order
    w.add_uint32(a + "block_count", n)
    w.add_uint32(a + "context_length", c["max_position_embeddings"])
    w.add_uint32(a + "embedding_length", c["hidden_size"])
    w.add_uint32(a + "feed_forward_length", c["intermediate_size"])
    w.add_uint32(a + "attention.head_count", c["num_attention_heads"])
    w.add_uint32(a + "attention.key_length", head_dim)
    w.add_uint32(a + "attention.value_length", head_dim)
    w.add_float32(a + "attention.layer_norm_rms_epsilon", c["rms_norm_eps"])
    w.add_float32(a + "rope.freq_base", c["rope_theta"])
    w.add_uint32(a + "rope.dimension_count", int(np.float32(head_dim) * np.float32(c["partial_rotary_factor"])))
    w.add_uint32(a + "expert_count", c["num_experts"])
    w.add_uint32(a + "expert_used_count", c["num_experts_per_tok"])
    w.add_bool(a + "norm_top_k_prob", bool(c["norm_topk_prob"]))
    w.add_uint32(a + "expert_feed_forward_length", c["moe_intermediate_size"])
    w.add_uint32(a + "expert_shared_feed_forward_length", c["shared_expert_intermediate_size"])
    w.add_uint32(a + "ssm.inner_size", c["linear_value_head_dim"] * c["linear_num_value_heads"])
    w.add_uint32(a + "ssm.state_size", c["linear_key_head_dim"])
    w.add_uint32(a + "ssm.group_count", c["linear_num_key_heads"])
    w.add_uint32(a + "ssm.time_step_rank", c["linear_num_value_heads"])
    w.add_uint32(a + "ssm.conv_kernel", c["linear_conv_kernel_dim"])
    interval = c["full_attention_interval"]
    w.add_uint32(a + "full_attention_interval", interval)
    # the per-layer head_count_kv array: num_key_value_heads every interval-th layer, 0 (recurrent) elsewhere
    w.add_key_value(a + "attention.head_count_kv", [c["num_key_value_heads"] if (i + 1) % interval == 0 else 0 for i in range(n)],
                    gguf.GGUFValueType.ARRAY, gguf.GGUFValueType.UINT32)
    sd = M.checkpoint_tensors(hf_dir)
    named = {M.go_replace(k, QWEN3NEXT_REPLACEMENTS): v.astype(np.float32) for k, v in sd.items()}   # parseTensors
    out = []
    # Tensors(): mergeTensors over blk.N.mlp.experts.*.{gate,up,down}_proj.weight, stacked by expert index
    for i in range(n):
        for src, dst in (("gate_proj", "ffn_gate_exps"), ("up_proj", "ffn_up_exps"), ("down_proj", "ffn_down_exps")):
            parts = sorted((int(k.split(".")[4]), k) for k in named
                           if k.startswith(f"blk.{i}.mlp.experts.") and k.endswith(f".{src}.weight"))
            if parts:
                out.append((f"blk.{i}.{dst}.weight", np.stack([named.pop(k) for _, k in parts]), 3))
    for name in sorted(named):                             # the remaining tensors, Tensors()'s switch
        t = named[name]
        ndim = t.ndim                                      # Kind() follows the source tensor's shape
        if name.endswith(".ssm_in.weight"):                # splitQKVZTensor: attn_qkv + attn_gate
            qkv, z = split_qkvz(t, c)
            out += [(name.replace("ssm_in", "attn_qkv", 1), qkv, 2), (name.replace("ssm_in", "attn_gate", 1), z, 2)]
        elif name.endswith("_norm.weight") and not name.endswith(".ssm_norm.weight"):
            out.append((name, t + np.float32(1.0), ndim))                # addOne
        elif name.endswith(".ssm_a"):                                    # -float32(math.Exp(float64(v)))
            out.append((name, -(np.exp(t.astype(np.float64)).astype(np.float32)), ndim))
        elif name.endswith(".ssm_conv1d.weight"):                        # [D, 1, K] -> [D, K]
            out.append((name, t.reshape(t.shape[0], t.shape[2]) if t.ndim == 3 and t.shape[1] == 1 else t, ndim))
        elif name.endswith(".ffn_gate_inp_shexp.weight"):                # [1, D] -> [D], Kind() of the 2-D source
            out.append((name, t.reshape(-1), ndim))
        else:
            out.append((name, t, ndim))
    written = []
    for name, data, ndim in out:
        f16 = M.ollama_kind(name, (1,) * ndim) == "F16"                  # tensorBase.Kind()
        w.add_tensor(name, np.ascontiguousarray(data.astype(np.float16 if f16 else np.float32)))
        written.append(name)
    M.finish(w)
    return {"tensors": written}


def build(src: str, out: str, work: str, store: str, expected: dict) -> None:
    """Case qwen3next: the source model, llama.cpp's conversion (OUT/ref/qwen3next.gguf) and the dialect blob."""
    import make_dialect_fixture as M
    hf, ref, dialect = os.path.join(work, "qwen3next"), os.path.join(out, "ref", "qwen3next.gguf"), os.path.join(out, "ref", "qwen3next-dialect.gguf")
    make_qwen3next(hf)
    M.convert_reference(src, [(REF_PRE, hf, ref, "no-mtp")])   # transformers' class has no MTP head
    info = qwen3next_dialect(hf, ref, dialect)
    with open(dialect, "rb") as f:
        blob = f.read()
    from transformers import AutoTokenizer
    tok = AutoTokenizer.from_pretrained(hf)
    expected["models"]["dialect-qwen3next"] = {
        "handler": "qwen3next", "ref_gguf": ref, "dialect_file": dialect, "texts": H.SAMPLE_TEXTS, "mmproj": False,
        "blob": M.put_model(store, "dialect-qwen3next", blob, "qwen3next"), "tensors": len(info["tensors"]),
        "hf_tokens": [tok(t, add_special_tokens=False)["input_ids"] for t in H.SAMPLE_TEXTS],
        # llama.cpp's converter writes recurrent_layers, which handle_qwen3next does not add (llama.cpp derives the
        # layer kinds from full_attention_interval when it is absent)
        "ref_differences": ["qwen3next.attention.recurrent_layers"],
        # Kind() of the [1, n_embd] source: F16, squeezed to [n_embd]; llama.cpp's converter keeps F32 [n_embd, 1]
        "f16_where_ref_f32": [n for n in info["tensors"] if n.endswith(".ffn_gate_inp_shexp.weight")]}


if __name__ == "__main__":
    import sys
    import make_dialect_fixture as M
    sys.exit(M.run_alone(sys.argv, build, "modelfs-qwen3next-"))
