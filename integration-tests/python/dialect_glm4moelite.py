#!/usr/bin/env python3
"""GLM-4.7-Flash (GGUF architecture glm4moelite) for make_dialect_fixture.py (docs/FORMATS.md §12.14).

    dialect_glm4moelite.py OUT [LLAMA_CPP_SRC]     # this case alone, laid out as make_dialect_fixture.py lays it out

The source model is transformers' own Glm4MoeLiteForCausalLM: hidden 64, 2 layers (a dense one, then a MoE one of 4
routed experts, 2 used, a shared expert and the score-correction bias: first_k_dense_replace 1), MLA attention
(q_lora_rank 64, kv_lora_rank 64, qk_nope 32 + qk_rope 16, v_head 48: the value head equal to the key head, as in
GLM-4.7-Flash's 192 + 64 = 256); a byte-level BPE tokenizer trained here with GLM-4's pre-tokenizer expression
(llama.cpp's "glm4") and GLM's special tokens; config.json gets the top-level rope_theta and first_k_dense_replace the
published zai-org/GLM-4.7-Flash config.json carries (transformers 5 saves rope_parameters and mlp_layer_types), and a
generation_config.json with GLM's three end-of-generation ids. Every weight is F16-representable.

Checked by gguf-py only (the translation against the reference, tensors and KVs): the llama.cpp that node-llama-cpp
ships aborts on the reference GGUF itself (GGML_ASSERT(*cur_backend_id != -1) while reserving the deepseek2 graph), so
the expected entry says "no_llama_run" and check_dialect.py's llama mode leaves the model out, printing why.

Reference: llama.cpp's convert_hf_to_gguf.py (Glm4MoeLiteModel, architecture deepseek2). Dialect: written as Ollama's
converter wrote the published glm4moelite files, convert/convert_glm4moelite.go at commit 64737330a of Ollama's
repository ("model: add MLA absorption for glm4moelite", re-applied), with convert.go, reader.go and tokenizer.go of the
same commit. Each step names the Go function it follows. Nothing here uses modelfs code.
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_models as H  # noqa: E402

REF_PRE = "glm4"
# llama.cpp's LLAMA_VOCAB_PRE_TYPE_CHATGLM4 expression
GLM4_REGEX = (r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
              r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIALS = ["<|endoftext|>", "[MASK]", "[gMASK]", "[sMASK]", "<sop>", "<eop>", "<|system|>", "<|user|>", "<|assistant|>",
            "<|observation|>"]
EOS = ["<|endoftext|>", "<|user|>", "<|observation|>"]   # generation_config.json's eos_token_id, as GLM-4.7-Flash's
LAYERS = 2


def train_tokenizer(vocab_size: int = 400):
    return H.train_byte_level_bpe(GLM4_REGEX, SPECIALS, vocab_size, eos_token="<|endoftext|>", pad_token="<|endoftext|>", bos_token=None,
                                   unk_token=None, add_bos_token=False, add_eos_token=False, model_max_length=4096)


def make_glm4moelite(out_dir: str) -> None:
    import make_dialect_fixture as M
    import torch
    import transformers as T
    tok = train_tokenizer()
    eos = [tok.convert_tokens_to_ids(t) for t in EOS]
    cfg = T.Glm4MoeLiteConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=96, moe_intermediate_size=32,
                              num_hidden_layers=LAYERS, num_attention_heads=4, num_key_value_heads=4, n_shared_experts=1,
                              n_routed_experts=4, num_experts_per_tok=2, kv_lora_rank=64, q_lora_rank=64, qk_rope_head_dim=16,
                              v_head_dim=48, qk_nope_head_dim=32, max_position_embeddings=2048, rms_norm_eps=1e-5,
                              mlp_layer_types=["dense", "sparse"], routed_scaling_factor=1.8, norm_topk_prob=True,
                              rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
                              bos_token_id=None, eos_token_id=eos, pad_token_id=tok.pad_token_id)
    torch.manual_seed(5)
    model = T.Glm4MoeLiteForCausalLM(cfg)
    M.randomize(model, f16=True)   # norms near 1, weights N(0, 0.25): greedy decoding does not settle on one token
    os.makedirs(out_dir, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    tok.save_pretrained(out_dir)
    for extra in ("special_tokens_map.json", "chat_template.jinja"):
        if os.path.exists(os.path.join(out_dir, extra)):
            os.remove(os.path.join(out_dir, extra))
    p = os.path.join(out_dir, "config.json")
    c = json.load(open(p))
    c["rope_theta"] = 1000000.0
    c["first_k_dense_replace"] = 1
    with open(p, "w") as f:
        json.dump(c, f, indent=1)
    with open(os.path.join(out_dir, "generation_config.json"), "w") as f:
        json.dump({"eos_token_id": eos, "pad_token_id": tok.pad_token_id}, f, indent=1)


REPLACEMENTS = [   # glm4MoeLiteModel.Replacements(), in Go's order
    "lm_head", "output",
    "model.embed_tokens", "token_embd",
    "model.norm", "output_norm",
    "model.layers", "blk",
    "input_layernorm", "attn_norm",
    "self_attn.kv_a_proj_with_mqa", "attn_kv_a_mqa",
    "self_attn.kv_a_layernorm", "attn_kv_a_norm",
    "self_attn.kv_b_proj", "attn_kv_b",
    "self_attn.q_a_proj", "attn_q_a",
    "self_attn.q_a_layernorm", "attn_q_a_norm",
    "self_attn.q_b_proj", "attn_q_b",
    "self_attn.o_proj", "attn_output",
    "post_attention_layernorm", "ffn_norm",
    "mlp.shared_experts.down_proj", "ffn_down_shexp",
    "mlp.shared_experts.gate_proj", "ffn_gate_shexp",
    "mlp.shared_experts.up_proj", "ffn_up_shexp",
    "mlp.gate_proj", "ffn_gate",
    "mlp.down_proj", "ffn_down",
    "mlp.up_proj", "ffn_up",
    "mlp.gate.e_score_correction_bias", "exp_probs_b.bias",
    "mlp.gate", "ffn_gate_inp",
]


def kind(name: str, shape) -> str:
    """tensorBase.Kind() at 64737330a: ffn_gate_inp and every .bias F32, else 1-D F32 and the rest F16."""
    return "F32" if name.endswith((".ffn_gate_inp.weight", ".bias")) or len(shape) == 1 else "F16"


def glm4moelite_dialect(hf_dir: str, ref_text: str, out_path: str) -> dict:
    import gguf
    from safetensors.numpy import load_file
    import make_dialect_fixture as M
    c = json.load(open(os.path.join(hf_dir, "config.json")))
    tcfg = json.load(open(os.path.join(hf_dir, "tokenizer_config.json")))
    gen = json.load(open(os.path.join(hf_dir, "generation_config.json")))
    tok, _ = M.ref_tokenizer_kvs(ref_text, "deepseek2")
    tokens = list(tok["tokenizer.ggml.tokens"])
    w = gguf.GGUFWriter(out_path, "glm4moelite")   # glm4MoeLiteModel.KV: general.architecture = "glm4moelite"
    # ModelParameters.KV: file type, the vocabulary; parseTokenizer's special vocabulary: the tokenizer_config.json
    # tokens that are added tokens (eos and pad here; GLM has no bos or unk there), with generation_config.json's
    # eos_token_id list as eos_token_ids
    w.add_uint32("general.file_type", 1)
    w.add_uint32("general.quantization_version", 2)
    w.add_string("tokenizer.ggml.model", tok["tokenizer.ggml.model"])
    w.add_array("tokenizer.ggml.tokens", tokens)
    w.add_array("tokenizer.ggml.scores", [0.0] * len(tokens))
    w.add_array("tokenizer.ggml.token_type", list(tok["tokenizer.ggml.token_type"]))
    w.add_array("tokenizer.ggml.merges", list(tok["tokenizer.ggml.merges"]))
    w.add_bool("tokenizer.ggml.add_eos_token", bool(tcfg.get("add_eos_token", False)))
    w.add_uint32("tokenizer.ggml.eos_token_id", tokens.index(tcfg["eos_token"]))
    w.add_array("tokenizer.ggml.eos_token_ids", [int(i) for i in gen["eos_token_id"]])   # []int32
    w.add_bool("tokenizer.ggml.add_padding_token", bool(tcfg.get("add_pad_token", False)))
    w.add_uint32("tokenizer.ggml.padding_token_id", tokens.index(tcfg["pad_token"]))
    # glm4MoeLiteModel.KV: per-head key/value lengths, the absorbed ones under *_mla, pre-tokenizer glm4
    A = "glm4moelite."
    w.add_string("general.type", "model")
    w.add_uint32(A + "block_count", c["num_hidden_layers"])
    w.add_uint32(A + "attention.head_count", c["num_attention_heads"])
    w.add_uint32(A + "attention.head_count_kv", c["num_key_value_heads"])
    w.add_uint32(A + "attention.key_length", c["qk_nope_head_dim"] + c["qk_rope_head_dim"])
    w.add_uint32(A + "attention.kv_lora_rank", c["kv_lora_rank"])
    w.add_float32(A + "attention.layer_norm_rms_epsilon", c["rms_norm_eps"])
    w.add_uint32(A + "attention.q_lora_rank", c["q_lora_rank"])
    w.add_uint32(A + "attention.value_length", c["v_head_dim"])
    w.add_uint32(A + "context_length", c["max_position_embeddings"])
    w.add_uint32(A + "embedding_length", c["hidden_size"])
    w.add_uint32(A + "expert_count", c["n_routed_experts"])
    w.add_uint32(A + "expert_feed_forward_length", c["moe_intermediate_size"])
    w.add_uint32(A + "expert_shared_count", c["n_shared_experts"])
    w.add_uint32(A + "expert_gating_func", 2)
    w.add_uint32(A + "expert_used_count", c["num_experts_per_tok"])
    w.add_bool(A + "expert_weights_norm", c["norm_topk_prob"])
    w.add_float32(A + "expert_weights_scale", c["routed_scaling_factor"])
    w.add_uint32(A + "feed_forward_length", c["intermediate_size"])
    w.add_uint32(A + "leading_dense_block_count", c["first_k_dense_replace"])
    w.add_uint32(A + "rope.dimension_count", c["qk_rope_head_dim"])
    w.add_float32(A + "rope.freq_base", c.get("rope_theta") or 1000000.0)
    w.add_uint32(A + "attention.key_length_mla", c["kv_lora_rank"] + c["qk_rope_head_dim"])
    w.add_uint32(A + "attention.value_length_mla", c["kv_lora_rank"])
    w.add_string("tokenizer.ggml.pre", "glm4")
    sd = {}
    for f in sorted(os.listdir(hf_dir)):
        if f.endswith(".safetensors"):
            sd.update(load_file(os.path.join(hf_dir, f)))
    named = {M.go_replace(k, REPLACEMENTS): v.astype(np.float32) for k, v in sd.items()}
    written = []

    def put(name, data):
        w.add_tensor(name, np.ascontiguousarray(data.astype(np.float16 if kind(name, data.shape) == "F16" else np.float32)))
        written.append(name)
    # glm4MoeLiteModel.Tensors: mergeTensors stacks blk.N.mlp.experts.*.{gate,up,down}_proj.weight into
    # blk.N.ffn_{gate,up,down}_exps.weight ([experts, out, in]) first
    for i in range(c["num_hidden_layers"]):
        for proj, dst in (("gate_proj", "ffn_gate_exps"), ("up_proj", "ffn_up_exps"), ("down_proj", "ffn_down_exps")):
            parts = sorted((n for n in named if n.startswith(f"blk.{i}.mlp.experts.") and n.endswith(f".{proj}.weight")))
            if parts:
                put(f"blk.{i}.{dst}.weight", np.stack([named.pop(n) for n in parts]))
    nope, vdim, rank, heads = c["qk_nope_head_dim"], c["v_head_dim"], c["kv_lora_rank"], c["num_attention_heads"]
    for name in sorted(named):
        data = named[name]
        if name.endswith(".attn_kv_b.weight"):
            # split into attn_k_b / attn_v_b (repackKVB): [heads*(nope+v), rank] (not kv-first) viewed as
            # [heads, nope+v, rank]; K = [:, :nope, :] transposed to [heads, rank, nope]; V = [:, nope:, :]
            kv = data.reshape(heads, nope + vdim, rank)
            put(name.replace("attn_kv_b", "attn_k_b", 1), kv[:, :nope, :].transpose(0, 2, 1))
            put(name.replace("attn_kv_b", "attn_v_b", 1), kv[:, nope:, :])
            continue
        put(name, data)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return {"tensors": written}


def jobs(work: str, out: str):
    return [(REF_PRE, os.path.join(work, "glm4moelite"), os.path.join(out, "ref", "glm4moelite.gguf"), False)]


def build(src: str, out: str, work: str, store: str, expected: dict) -> None:
    """The glm4moelite case: source model, reference (make_dialect_fixture's converter child), dialect blob, expectations."""
    import make_dialect_fixture as M
    from transformers import AutoTokenizer
    hf = os.path.join(work, "glm4moelite")
    make_glm4moelite(hf)
    M.convert_reference(src, jobs(work, out))
    ref = jobs(work, out)[0][2]
    dialect_file = os.path.join(out, "ref", "glm4moelite-dialect.gguf")
    glm4moelite_dialect(hf, ref, dialect_file)
    with open(dialect_file, "rb") as f:
        blob = f.read()
    tok = AutoTokenizer.from_pretrained(hf)
    expected["models"]["dialect-glm4moelite"] = {
        "handler": "glm4moelite", "ref_gguf": ref, "dialect_file": dialect_file,
        "blob": M.put_model(store, "dialect-glm4moelite", blob, "glm4moelite"), "texts": H.SAMPLE_TEXTS,
        "hf_tokens": [tok(t, add_special_tokens=False)["input_ids"] for t in H.SAMPLE_TEXTS], "mmproj": False,
        # Ollama's converter writes no vocab_size for glm4moelite (llama.cpp counts the tokens) and only the special
        # tokens tokenizer_config.json names (GLM's names no bos or unk); llama.cpp's converter sets bos = [gMASK] and
        # unk = <|endoftext|> itself (_set_vocab_glm). GLM's chat template writes [gMASK] and the BPE vocabulary never
        # yields unk, so both files tokenize and generate alike (the llama check)
        "ref_differences": ["deepseek2.vocab_size", "tokenizer.ggml.bos_token_id", "tokenizer.ggml.unknown_token_id"],
        # the llama check cannot run: the llama.cpp node-llama-cpp ships aborts the process on llama.cpp's own conversion
        # of this model (ggml_backend_sched: GGML_ASSERT(*cur_backend_id != -1) while reserving the deepseek2 graph)
        "no_llama_run": "node-llama-cpp's llama.cpp aborts on the reference deepseek2 GGUF itself (GGML_ASSERT cur_backend_id != -1)"}


def main(argv) -> int:
    import make_dialect_fixture as M
    return M.run_alone(argv, build, "modelfs-dialect-glm4moelite-")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
