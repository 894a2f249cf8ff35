#!/usr/bin/env python3
"""Reads the mount of `modelfs demo --keep` with the real clients.

    check_demo.py MOUNT

* gguf-py opens demo-llama/model.gguf (a GGUF llama with F16, F32, Q8_0, Q4_0 and Q4_K tensors) and
  demo-st:int4/model.gguf (synthesized from an MLX int4 safetensors llama: Q4_1 projections, BF16
  embeddings, F32 norms, the vocabulary of its tokenizer.json) and dequantizes every tensor;
* safetensors opens demo-llama's Hugging Face folder weights (model.safetensors, fp32/model.safetensors;
  the GGUF-named ones under gguf/) and demo-st:int4's model.safetensors (packed int4 with companions)
  and fp32/model.safetensors; the Hugging Face tensors (and demo-st's stored int4 tensors dequantized here
  with numpy) equal gguf-py's dequantization of the model's GGUF, renamed and with llama's q/k rows
  un-permuted here with numpy (docs/FORMATS.md 7.2), bit for bit;
* transformers: AutoConfig and AutoTokenizer load demo-llama's folder and demo-st:int4's (config and
  tokenizer as Ollama stored them); both tokenizers split a sample sentence into the demo vocabulary's
  merged tokens; the chat template renders; AutoModelForCausalLM loads demo-llama's folder and gives
  the logits of transformers' own GGUF loader on model.gguf.
Prints one line per failed check and "N passed, M failed"; exit status 1 on failure.
"""
from __future__ import annotations

import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_lib as L  # noqa: E402

LLAMA, ST = "demo-llama", "demo-st:int4"
HF_FILES = ["config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
            "special_tokens_map.json", "model.safetensors", "fp32/model.safetensors", "fp16/model.safetensors",
            "bf16/model.safetensors", "fp32/config.json", "bf16/tokenizer.json", "gguf/model.safetensors"]
# GGUF → HF names of a llama (gguf-py's own map would do too; spelled out so a reader sees the pairs)
NAMES = {"token_embd": "model.embed_tokens", "output_norm": "model.norm", "output": "lm_head",
         "attn_norm": "input_layernorm", "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj",
         "attn_v": "self_attn.v_proj", "attn_output": "self_attn.o_proj", "ffn_norm": "post_attention_layernorm",
         "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj", "ffn_down": "mlp.down_proj"}
SAMPLE = "Hello world, the modelfs demo"
SAMPLE_TOKENS = ["Hello", "Ġworld", ",", "Ġthe", "Ġmodelfs", "Ġdemo"]


def hf_name(g: str) -> str:
    parts = g.split(".")
    if parts[0] == "blk":
        return f"model.layers.{parts[1]}.{NAMES[parts[2]]}.{parts[3]}"
    return f"{NAMES[parts[0]]}.{parts[1]}"


def unpermute(w: np.ndarray, heads: int) -> np.ndarray:
    """GGUF row h*D + 2t + half holds HF row h*D + half*D/2 + t (docs/FORMATS.md 7.2)."""
    d = w.shape[0] // heads
    return w.reshape(heads, d // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def gguf_as_hf(r: L.Report, path: str, want_types: dict[str, str]) -> dict[str, np.ndarray]:
    """{HF name: f32 array} of a llama GGUF dequantized by gguf-py; checks architecture and tensor types."""
    import gguf
    rd = gguf.GGUFReader(path)
    field = rd.fields["general.architecture"]
    r.ok(bytes(field.parts[field.data[0]]).decode() == "llama", f"{path}: general.architecture is not llama")
    kv = lambda k: int(rd.fields[k].parts[rd.fields[k].data[0]][0])  # noqa: E731
    heads, heads_kv = kv("llama.attention.head_count"), kv("llama.attention.head_count_kv")
    types = {t.name: t.tensor_type.name for t in rd.tensors}
    r.ok(types == want_types, f"{path}: tensor types {types}, expected {want_types}")
    out = {}
    for t in rd.tensors:
        w = gguf.dequantize(t.data, t.tensor_type).astype(np.float32).reshape([int(x) for x in reversed(t.shape)])
        r.ok(bool(np.isfinite(w).all()), f"{path}: {t.name} has non-finite values")
        if t.name.startswith("blk.0.attn_q."):
            w = unpermute(w, heads)
        elif t.name.startswith("blk.0.attn_k."):
            w = unpermute(w, heads_kv)
        out[hf_name(t.name)] = w
    return out


def read_safetensors(path: str) -> dict[str, np.ndarray]:
    from safetensors import safe_open
    out = {}
    with safe_open(path, "pt") as f:   # torch: numpy has no bfloat16
        for k in f.keys():
            t = f.get_tensor(k)
            out[k] = t.float().numpy() if t.is_floating_point() else t.numpy()
    return out


def same_tensors(r: L.Report, what: str, got: dict, want: dict):
    r.ok(sorted(got) == sorted(want), f"{what}: tensors {sorted(got)}, expected {sorted(want)}")
    for k in sorted(set(got) & set(want)):
        a, b = got[k], want[k]
        r.ok(a.shape == b.shape and a.dtype == np.float32 and np.array_equal(a, b),
             f"{what}: {k} {a.dtype}{list(a.shape)} differs from gguf-py's {list(b.shape)}")


def check_gguf_and_safetensors(r: L.Report, mp: str):
    llama, st = os.path.join(mp, LLAMA), os.path.join(mp, ST)
    for f in HF_FILES:
        r.ok(os.path.isfile(os.path.join(llama, f)), f"{LLAMA}/{f} missing")
    q8 = {f"blk.0.attn_{p}.weight": "Q8_0" for p in ("q", "k", "v", "output")}
    want = {"token_embd.weight": "F16", "blk.0.attn_norm.weight": "F32", **q8, "blk.0.ffn_norm.weight": "F32",
            "blk.0.ffn_gate.weight": "Q4_0", "blk.0.ffn_up.weight": "Q4_0", "blk.0.ffn_down.weight": "Q4_K",
            "output_norm.weight": "F32"}
    llama_hf = gguf_as_hf(r, os.path.join(llama, "model.gguf"), want)
    r.ok("lm_head.weight" not in llama_hf, "demo-llama has tied embeddings (no output.weight)")
    for f in ("model.safetensors", "fp32/model.safetensors"):
        same_tensors(r, f"{LLAMA}/{f}", {k: v.astype(np.float32) for k, v in read_safetensors(os.path.join(llama, f)).items()}, llama_hf)
    gguf_named = read_safetensors(os.path.join(llama, "gguf", "model.safetensors"))
    r.ok(sorted(gguf_named) == sorted(want), f"{LLAMA}/gguf/model.safetensors has GGUF names: {sorted(gguf_named)}")

    synth = {k: ("F32" if "norm" in k else "BF16" if k == "token_embd.weight" else "Q4_1") for k in want}
    st_hf = gguf_as_hf(r, os.path.join(st, "model.gguf"), synth)
    same_tensors(r, f"{ST}/fp32/model.safetensors", read_safetensors(os.path.join(st, "fp32", "model.safetensors")), st_hf)
    packed = read_safetensors(os.path.join(st, "model.safetensors"))
    proj = [k for k in st_hf if k.endswith("_proj.weight")]
    r.ok(len(proj) == 7 and all(packed[k].dtype == np.uint32 and f"{k}.scale" in packed and f"{k}.bias" in packed for k in proj),
         f"{ST}/model.safetensors: int4 projections with .scale/.bias companions: {sorted(packed)}")
    # the stored tensors themselves, dequantized here with numpy, against gguf-py's reading of model.gguf
    stored = {k: v for k, v in packed.items() if not k.endswith((".scale", ".bias"))}
    for k in proj:
        if k in stored:
            stored[k] = L.dequant_affine(stored[k], packed[k + ".scale"], packed[k + ".bias"], 4, 64)
    same_tensors(r, f"{ST}/model.safetensors dequantized with numpy", stored, st_hf)


def check_transformers(r: L.Report, mp: str):
    import gguf
    from transformers import AutoConfig, AutoTokenizer
    llama, st = os.path.join(mp, LLAMA), os.path.join(mp, ST)
    cfg = AutoConfig.from_pretrained(llama)
    got = (cfg.model_type, cfg.num_hidden_layers, cfg.num_attention_heads, cfg.num_key_value_heads, cfg.hidden_size,
           cfg.intermediate_size, cfg.vocab_size, cfg.tie_word_embeddings)
    r.ok(got == ("llama", 1, 4, 2, 64, 256, 287, True), f"{LLAMA}/config.json read by transformers: {got}")
    st_cfg = AutoConfig.from_pretrained(st)
    r.ok((st_cfg.model_type, st_cfg.num_hidden_layers, st_cfg.vocab_size) == ("llama", 1, 287),
         f"{ST}/config.json read by transformers: {st_cfg.model_type} {st_cfg.num_hidden_layers} {st_cfg.vocab_size}")

    rd = gguf.GGUFReader(os.path.join(llama, "model.gguf"))
    f = rd.fields["tokenizer.ggml.tokens"]
    gguf_tokens = [bytes(f.parts[i]).decode() for i in f.data]
    for d in (llama, st):
        tok = AutoTokenizer.from_pretrained(d)
        r.ok([tok.convert_ids_to_tokens(i) for i in range(len(tok))] == gguf_tokens,
             f"{d}: tokenizer vocabulary differs from demo-llama's tokenizer.ggml.tokens")
        ids = tok.encode(SAMPLE)
        r.ok(tok.convert_ids_to_tokens(ids) == ["<|begin|>"] + SAMPLE_TOKENS, f"{d}: {SAMPLE!r} -> {tok.convert_ids_to_tokens(ids)}")
        r.ok(tok.decode(ids, skip_special_tokens=True) == SAMPLE, f"{d}: decode gives {tok.decode(ids)!r}")
        chat = tok.apply_chat_template([{"role": "user", "content": "Hi"}], add_generation_prompt=True, tokenize=False)
        r.ok(chat == "<|begin|><|user|>Hi<|end|><|assistant|>", f"{d}: chat template renders {chat!r}")
        r.ok((tok.bos_token, tok.eos_token) == ("<|begin|>", "<|end|>"), f"{d}: special tokens {tok.bos_token} {tok.eos_token}")

    import torch
    from transformers import AutoModelForCausalLM
    ids = torch.tensor([AutoTokenizer.from_pretrained(llama).encode(SAMPLE)])
    with torch.no_grad():
        folder = AutoModelForCausalLM.from_pretrained(llama, dtype=torch.float32)(ids).logits.numpy()
        own = AutoModelForCausalLM.from_pretrained(llama, gguf_file="model.gguf", dtype=torch.float32)(ids).logits.numpy()
    r.ok(folder.shape == (1, ids.shape[1], 287) and bool(np.isfinite(folder).all()), f"{LLAMA}: logits {folder.shape}")
    diff = float(np.max(np.abs(folder - own)))
    r.ok(diff <= 1e-5, f"{LLAMA}: logits of the folder differ from transformers' GGUF loader by {diff}")


def main() -> int:
    mp = sys.argv[1]
    r = L.Report("demo")
    check_gguf_and_safetensors(r, mp)
    check_transformers(r, mp)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
