"""OLMo 3 (GGUF architecture olmo3) for make_dialect_fixture.py (docs/FORMATS.md §12).

The source model is transformers' own Olmo3ForCausalLM: hidden 64, 4 layers (three sliding-window layers of window 8,
then a full-attention one, OLMo 3's pattern), q/k norms, post-attention and post-feed-forward norms, hf_models'
byte-level BPE tokenizer. config.json gets the top-level rope_theta the published allenai/Olmo-3 config.json files
carry (transformers 5 saves rope_parameters only), which Ollama's converter reads.

The dialect is written as Ollama's converter wrote the published olmo3 files: convert/convert_olmo.go before commit
9db4bdbad of Ollama's repository (its parent, 9db4bdbad^), whose olmoModel.KV named the architecture "olmo3" (llama.cpp
has no such architecture; its olmo2 loader reads OLMo 3); Ollama's compatibility layer (handle_olmo3 in
llama/compat/llama-ollama-compat.cpp) renames it. Each step names the Go function it follows.
Nothing here uses modelfs code.
"""
from __future__ import annotations

import json
import os

import numpy as np

import hf_models as H

ROPE_THETA, WINDOW, LAYERS = 500000.0, 8, 4
REF_PRE = "qwen2"   # the fixture tokenizer's pre-tokenizer (Qwen 2's regex), as both converters name it


def make_olmo3(out_dir: str) -> None:
    """The tiny source model, saved with save_pretrained (F32), and its tokenizer."""
    import torch
    import make_dialect_fixture as M
    import transformers as T
    tok = H.train_tokenizer("qwen3")
    layer_types = ["full_attention" if (i + 1) % 4 == 0 else "sliding_attention" for i in range(LAYERS)]
    cfg = T.Olmo3Config(vocab_size=len(tok), hidden_size=64, intermediate_size=96, num_hidden_layers=LAYERS,
                        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512, rms_norm_eps=1e-6,
                        sliding_window=WINDOW, layer_types=layer_types, tie_word_embeddings=False,
                        eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, bos_token_id=None)   # rope_theta: the default, 500000
    torch.manual_seed(3)
    model = T.Olmo3ForCausalLM(cfg)
    M.randomize(model, std=0.08)
    os.makedirs(out_dir, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    tok.save_pretrained(out_dir)
    p = os.path.join(out_dir, "config.json")
    c = json.load(open(p))
    c["rope_theta"] = ROPE_THETA
    with open(p, "w") as f:
        json.dump(c, f, indent=1)


# --- (b) Ollama's dialect: convert/convert_olmo.go at 9db4bdbad^ ---------------------------------------------

OLMO_REPLACEMENTS = [   # olmoModel.Replacements(), in Go's order
    "lm_head", "output",
    "model.embed_tokens", "token_embd",
    "model.layers", "blk",
    "model.norm", "output_norm",
    "self_attn.q_proj", "attn_q",
    "self_attn.k_proj", "attn_k",
    "self_attn.v_proj", "attn_v",
    "self_attn.o_proj", "attn_output",
    "self_attn.q_norm", "attn_q_norm",
    "self_attn.k_norm", "attn_k_norm",
    "post_attention_layernorm", "post_attention_norm",
    "post_feedforward_layernorm", "post_ffw_norm",
    "mlp.gate_proj", "ffn_gate",
    "mlp.down_proj", "ffn_down",
    "mlp.up_proj", "ffn_up",
]


def olmo3_dialect(hf_dir: str, ref_text: str, out_path: str) -> dict:
    import gguf
    import dialect_gptoss as G
    import make_dialect_fixture as M
    c = json.load(open(os.path.join(hf_dir, "config.json")))
    tok, _ = M.ref_tokenizer_kvs(ref_text, "olmo2")
    tok["tokenizer.ggml.pre"] = G.ollama_pre(hf_dir)     # ModelParameters.KV: parseTokenizer's Pre
    w = gguf.GGUFWriter(out_path, "olmo3")               # olmoModel.KV: general.architecture = "olmo3"
    M.model_parameters_kv(w, tok, tok["tokenizer.ggml.tokens"], tok["tokenizer.ggml.token_type"])
    a = "olmo3."
    # olmoModel.KV at 9db4bdbad^, in its order (rope_scaling is null: no scaling keys)
    w.add_uint32(a + "block_count", c["num_hidden_layers"])
    w.add_uint32(a + "context_length", c["max_position_embeddings"])
    w.add_uint32(a + "embedding_length", c["hidden_size"])
    w.add_uint32(a + "feed_forward_length", c["intermediate_size"])
    w.add_uint32(a + "attention.head_count", c["num_attention_heads"])
    w.add_uint32(a + "attention.head_count_kv", c.get("num_key_value_heads") or c["num_attention_heads"])
    if c.get("rope_theta"):
        w.add_float32(a + "rope.freq_base", c["rope_theta"])
    if c.get("rms_norm_eps"):
        w.add_float32(a + "attention.layer_norm_rms_epsilon", c["rms_norm_eps"])
    if c.get("sliding_window"):
        w.add_uint32(a + "attention.sliding_window", c["sliding_window"])
    if c.get("layer_types"):
        w.add_array(a + "attention.sliding_window_pattern", [t == "sliding_attention" for t in c["layer_types"]])
    sd = M.checkpoint_tensors(hf_dir)
    written = []
    for key in sorted(sd):                               # olmoModel.Tensors: every tensor as it is, renamed
        name = M.go_replace(key, OLMO_REPLACEMENTS)
        data = sd[key].astype(np.float32)
        M.add_as_kind(w, name, data)   # tensorBase.Kind()
        written.append(name)
    M.finish(w)
    return {"tensors": written}
