"""Laguna (GGUF architecture laguna) for make_dialect_fixture.py (docs/FORMATS.md §12.6).

The source model is transformers' own LagunaForCausalLM: hidden 64, 2 layers (a dense full-attention layer, then a
sliding-window MoE layer: 4 experts, 2 used, a shared expert, the score-correction bias), per-head attention gates
(g_proj), q/k norms, YaRN on the full-attention layers (partial rotary 0.5) and plain RoPE on the sliding ones,
hf_models' byte-level BPE tokenizer.

The dialect is written as Ollama's converter wrote the published laguna files: convert/convert_laguna.go at commit
87288ced4 of Ollama's repository ("New models"): lagunaModel.KV's keys (the sliding-window rope keys nested as
laguna.rope.swa.*), Replacements' names (the attention gate as attn_g), Tensors' expert stacking. Ollama's
compatibility layer (handle_laguna in llama/compat/llama-ollama-compat.cpp) copies the two nested keys to llama.cpp's
names and renames attn_g. Each step names the Go function it follows. Nothing here uses modelfs code.
"""
from __future__ import annotations

import json
import os

import numpy as np

import hf_models as H

REF_PRE = "laguna"   # lagunaModel.KV writes "laguna"; the reference is given the same pre-tokenizer


def make_laguna(out_dir: str) -> None:
    import torch
    import transformers as T
    import make_dialect_fixture as M
    tok = H.train_tokenizer("qwen3")
    cfg = T.LagunaConfig(
        vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, head_dim=16, sliding_window=8, layer_types=["full_attention", "sliding_attention"],
        mlp_layer_types=["dense", "sparse"], moe_intermediate_size=32, shared_expert_intermediate_size=32, num_experts=4,
        num_experts_per_tok=2, gating=True, max_position_embeddings=512, rms_norm_eps=1e-6, tie_word_embeddings=False,
        rope_parameters={"full_attention": {"rope_type": "yarn", "rope_theta": 500000.0, "factor": 4.0,
                                            "original_max_position_embeddings": 128, "partial_rotary_factor": 0.5,
                                            "beta_fast": 32.0, "beta_slow": 1.0},
                         "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 1.0}},
        eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    torch.manual_seed(7)
    model = T.LagunaForCausalLM(cfg)
    M.randomize(model, std=0.1)
    os.makedirs(out_dir, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    tok.save_pretrained(out_dir)


LAGUNA_REPLACEMENTS = [   # lagunaModel.Replacements(), in Go's order
    "lm_head", "output",
    "model.embed_tokens", "token_embd",
    "model.norm", "output_norm",
    "model.layers", "blk",
    "input_layernorm", "attn_norm",
    "post_attention_layernorm", "ffn_norm",
    "self_attn.q_proj", "attn_q",
    "self_attn.k_proj", "attn_k",
    "self_attn.v_proj", "attn_v",
    "self_attn.o_proj", "attn_output",
    "self_attn.g_proj", "attn_g",
    "self_attn.q_norm", "attn_q_norm",
    "self_attn.k_norm", "attn_k_norm",
    "mlp.gate_proj", "ffn_gate",
    "mlp.up_proj", "ffn_up",
    "mlp.down_proj", "ffn_down",
    "mlp.gate.weight", "ffn_gate_inp.weight",
    "mlp.experts.e_score_correction_bias", "exp_probs_b.bias",
    "mlp.shared_expert.gate_proj", "ffn_gate_shexp",
    "mlp.shared_expert.up_proj", "ffn_up_shexp",
    "mlp.shared_expert.down_proj", "ffn_down_shexp",
    "mlp.experts.*.gate_proj", "ffn_gate_exps",
    "mlp.experts.*.up_proj", "ffn_up_exps",
    "mlp.experts.*.down_proj", "ffn_down_exps",
]


def rope_dim(head_dim: int, factor: float) -> int:
    """lagunaRopeDim."""
    d = int(np.float32(head_dim) * np.float32(factor))
    if d == 0 or d > head_dim:
        d = head_dim
    if d % 2:
        d -= 1
    return d or head_dim


def laguna_dialect(hf_dir: str, ref_text: str, out_path: str) -> dict:
    import gguf
    import make_dialect_fixture as M
    c = json.load(open(os.path.join(hf_dir, "config.json")))
    full = dict(c["rope_parameters"]["full_attention"])
    swa = dict(c["rope_parameters"]["sliding_attention"])     # UnmarshalJSON: the nested sliding parameters
    full.setdefault("partial_rotary_factor", c.get("partial_rotary_factor") or 1.0)
    swa.setdefault("partial_rotary_factor", full["partial_rotary_factor"])
    partial = c.get("partial_rotary_factor") or full["partial_rotary_factor"]
    dense = [i for i, t in enumerate(c["mlp_layer_types"]) if t == "dense"]   # lagunaDenseLayers
    tok, _ = M.ref_tokenizer_kvs(ref_text, "laguna")
    tok["tokenizer.ggml.pre"] = "laguna"                  # KV(): tokenizer.ggml.pre = "laguna"
    tok["tokenizer.ggml.add_bos_token"] = False           # KV(): add_bos_token false
    w = gguf.GGUFWriter(out_path, "laguna")
    M.model_parameters_kv(w, tok, tok["tokenizer.ggml.tokens"], tok["tokenizer.ggml.token_type"])   # no chat template
    a = "laguna."
    n = c["num_hidden_layers"]
    w.add_uint32(a + "block_count", n)
    w.add_uint32(a + "context_length", c["max_position_embeddings"])
    w.add_uint32(a + "embedding_length", c["hidden_size"])
    w.add_uint32(a + "feed_forward_length", c["intermediate_size"])
    heads = c.get("num_attention_heads_per_layer") or []
    if len(heads) == n:
        w.add_key_value(a + "attention.head_count", heads, gguf.GGUFValueType.ARRAY, gguf.GGUFValueType.UINT32)
    else:
        w.add_uint32(a + "attention.head_count", c["num_attention_heads"])
    w.add_uint32(a + "attention.head_count_kv", c["num_key_value_heads"])
    w.add_uint32(a + "attention.key_length", c["head_dim"])
    w.add_uint32(a + "attention.value_length", c["head_dim"])
    w.add_float32(a + "attention.layer_norm_rms_epsilon", c["rms_norm_eps"])
    w.add_uint32(a + "attention.sliding_window", c["sliding_window"])
    w.add_bool(a + "attention.sink_enabled", bool(c.get("swa_attention_sink_enabled", False)))
    sliding = [t == "sliding_attention" for t in c["layer_types"]]
    w.add_key_value(a + "attention.layer_types", [1 if s else 0 for s in sliding], gguf.GGUFValueType.ARRAY, gguf.GGUFValueType.UINT32)
    w.add_array(a + "attention.sliding_window_pattern", sliding)
    w.add_uint32(a + "attention.gating_type", 1)          # gating true: per-head
    w.add_bool(a + "attention.qk_norm", True)             # qk_norm_type "rmsnorm" (the default)
    w.add_uint32(a + "expert_count", c["num_experts"])
    w.add_uint32(a + "expert_used_count", c["num_experts_per_tok"])
    w.add_uint32(a + "expert_feed_forward_length", c["moe_intermediate_size"])
    w.add_uint32(a + "expert_shared_feed_forward_length", c["shared_expert_intermediate_size"])
    w.add_uint32(a + "expert_shared_count", 1)
    w.add_bool(a + "expert_weights_norm", bool(c.get("norm_topk_prob", True)))
    w.add_float32(a + "expert_weights_scale", c["moe_routed_scaling_factor"])
    w.add_uint32(a + "expert_gating_func", 2)            # lagunaMoeGatingFunc(sigmoid)
    w.add_uint32(a + "decoder_sparse_step", c.get("decoder_sparse_step") or 1)
    lead = 0
    while lead < len(dense) and dense[lead] == lead:     # lagunaLeadingDensePrefix
        lead += 1
    if lead == len(dense):
        w.add_uint32(a + "leading_dense_block_count", lead)
    if dense:
        w.add_key_value(a + "dense_layers", dense, gguf.GGUFValueType.ARRAY, gguf.GGUFValueType.UINT32)
    rtype = full.get("rope_type") or full.get("type") or ""
    factor = full.get("factor") or 1.0
    w.add_float32(a + "rope.freq_base", full.get("rope_theta") or 10000.0)
    w.add_string(a + "rope.scaling.type", rtype)
    w.add_float32(a + "rope.scaling.factor", factor)
    w.add_uint32(a + "rope.scaling.original_context_length", full.get("original_max_position_embeddings") or 0)
    w.add_float32(a + "rope.scaling.beta_fast", full.get("beta_fast") or 0.0)
    w.add_float32(a + "rope.scaling.beta_slow", full.get("beta_slow") or 0.0)
    attn = full.get("attention_factor") or (float(np.float32(0.1 * np.log(np.float64(np.float32(factor))) + 1))
                                            if rtype.lower() == "yarn" and factor > 1 else 1.0)   # lagunaAttentionFactor
    w.add_float32(a + "rope.scaling.attn_factor", attn)
    w.add_float32(a + "rope.partial_rotary_factor", partial)
    w.add_float32(a + "rope.swa.freq_base", swa.get("rope_theta") or 10000.0)
    w.add_string(a + "rope.swa.scaling.type", swa.get("rope_type") or swa.get("type") or "linear")
    w.add_float32(a + "rope.swa.scaling.factor", swa.get("factor") or 1.0)
    w.add_float32(a + "rope.swa.partial_rotary_factor", swa["partial_rotary_factor"])
    w.add_uint32(a + "rope.dimension_count", rope_dim(c["head_dim"], partial))
    w.add_uint32(a + "rope.swa.dimension_count", rope_dim(c["head_dim"], swa["partial_rotary_factor"]))
    sd = M.checkpoint_tensors(hf_dir)
    named = {M.go_replace(k, LAGUNA_REPLACEMENTS): v.astype(np.float32) for k, v in sd.items()}
    out = []
    for i in range(n):                                   # Tensors(): mergeTensors, stacked by expert index
        for src, dst in (("gate_proj", "ffn_gate_exps"), ("up_proj", "ffn_up_exps"), ("down_proj", "ffn_down_exps")):
            parts = sorted((int(k.split(".")[4]), k) for k in named
                           if k.startswith(f"blk.{i}.mlp.experts.") and k.endswith(f".{src}.weight"))
            if parts:
                out.append((f"blk.{i}.{dst}.weight", np.stack([named.pop(k) for _, k in parts])))
    out += sorted(named.items())
    written = []
    for name, data in out:
        M.add_as_kind(w, name, data)                     # tensorBase.Kind()
        written.append(name)
    M.finish(w)
    return {"tensors": written}


def build(src: str, out: str, work: str, store: str, expected: dict) -> None:
    """Case laguna: the source model, llama.cpp's conversion (OUT/ref/laguna.gguf) and the dialect blob."""
    import make_dialect_fixture as M
    hf, ref, dialect = os.path.join(work, "laguna"), os.path.join(out, "ref", "laguna.gguf"), os.path.join(out, "ref", "laguna-dialect.gguf")
    make_laguna(hf)
    M.convert_reference(src, [(REF_PRE, hf, ref, False)])
    laguna_dialect(hf, ref, dialect)
    with open(dialect, "rb") as f:
        expected["models"]["dialect-laguna"] = {
            "handler": "laguna", "ref_gguf": ref, "dialect_file": dialect, "texts": H.SAMPLE_TEXTS, "mmproj": False,
            "blob": M.put_model(store, "dialect-laguna", f.read(), "laguna"),
            # KVs handle_laguna leaves as Ollama's converter wrote them, which llama.cpp reads alike: the YaRN betas under
            # Ollama's names (llama.cpp's defaults, 32 and 1, are the config's), the vocabulary size (llama.cpp counts
            # the tokens)
            "ref_differences": ["laguna.rope.scaling.yarn_beta_fast", "laguna.rope.scaling.yarn_beta_slow", "laguna.vocab_size"]}


if __name__ == "__main__":
    import sys
    import make_dialect_fixture as M
    sys.exit(M.run_alone(sys.argv, build, "modelfs-laguna-"))
