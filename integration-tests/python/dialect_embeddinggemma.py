"""EmbeddingGemma (Ollama's `embeddinggemma`) for make_dialect_fixture.py (docs/FORMATS.md §12.6).

The source model is transformers' own Gemma3TextModel (the encoder of google/embeddinggemma-300m: bidirectional
attention, hidden 64, 6 layers: five sliding ones then a global one, tied embeddings). Six because llama.cpp's
gemma-embedding takes Gemma 3's pattern of 6 when the file has no pattern key (handle_embeddinggemma removes it), and
with fewer layers none is global: llama.cpp's graph then leaves the global mask unallocated and aborts in set_input saved as a sentence-transformers
folder: modules.json, 1_Pooling (mean), 2_Dense (64 -> 128) and 3_Dense (128 -> 64), both without bias, as
embeddinggemma-300m ships them (768 -> 3072 -> 768), and hf_models' byte-level BPE tokenizer.
The reference is llama.cpp's converter with --sentence-transformers-dense-modules (class EmbeddingGemma,
architecture gemma-embedding, dense_2 / dense_3).

The dialect is the layout of the published embeddinggemma files: Ollama's repository has no converter that wrote them
(convert_embeddinggemma.go came with commit 9db4bdbad and writes llama.cpp's gemma-embedding form), so the file follows
that converter step by step with the published layout its compatibility layer (handle_embeddinggemma in
llama/compat/llama-ollama-compat.cpp) and its engine before 9db4bdbad (model/models/gemma3/embed.go, registered as
"gemma3_embed") read: general.architecture "gemma3", the keys under gemma3.* as model/models/gemma3/model_text.go
reads them (rope.local.freq_base, attention.sliding_window_pattern), gemma3.pooling_type, gemma3.attention.causal
false, and the projection as dense.0 / dense.1 (embed.go's `Dense [2]*nn.Linear gguf:"dense"`) without
dense_*_feat_* keys. Each step names the Go function it follows. Nothing here uses modelfs code.
"""
from __future__ import annotations

import json
import os

import numpy as np

import hf_models as H

REF_PRE = "qwen2"   # the fixture tokenizer's pre-tokenizer (Qwen 2's regex), as both converters name it
DENSE = 128         # the projection's inner width (3072 in embeddinggemma-300m)


def make_embeddinggemma(out_dir: str) -> None:
    """The tiny Gemma3TextModel (F32) and its sentence-transformers modules."""
    import torch
    import transformers as T
    from safetensors.torch import save_file
    tok = H.train_tokenizer("gemma3_4b")
    cfg = T.Gemma3TextConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=6, num_attention_heads=4,
                             num_key_value_heads=2, head_dim=32, query_pre_attn_scalar=32, sliding_window=8, max_position_embeddings=512,
                             rms_norm_eps=1e-6, tie_word_embeddings=True, use_bidirectional_attention=True,
                             layer_types=["sliding_attention"] * 5 + ["full_attention"],
                             eos_token_id=tok.eos_token_id, bos_token_id=tok.bos_token_id, pad_token_id=tok.pad_token_id)
    torch.manual_seed(5)
    model = T.Gemma3TextModel(cfg)
    with torch.no_grad():
        for _, p in model.named_parameters():
            if p.dim() == 1:   # Gemma norms scale by 1 + w: w a multiple of 2^-7 (exact after both converters' +1)
                p.copy_(torch.round(12.8 * torch.randn_like(p)) / 128)
            else:
                p.normal_(0.0, 0.08)
    os.makedirs(out_dir, exist_ok=True)
    model.save_pretrained(out_dir, safe_serialization=True)
    tok.save_pretrained(out_dir)
    modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
               {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"},
               {"idx": 3, "name": "3", "path": "3_Dense", "type": "sentence_transformers.models.Dense"},
               {"idx": 4, "name": "4", "path": "4_Normalize", "type": "sentence_transformers.models.Normalize"}]
    with open(os.path.join(out_dir, "modules.json"), "w") as f:
        json.dump(modules, f, indent=1)
    os.makedirs(os.path.join(out_dir, "1_Pooling"), exist_ok=True)
    with open(os.path.join(out_dir, "1_Pooling", "config.json"), "w") as f:
        json.dump({"word_embedding_dimension": 64, "pooling_mode_cls_token": False, "pooling_mode_mean_tokens": True,
                   "pooling_mode_max_tokens": False, "pooling_mode_lasttoken": False}, f)
    os.makedirs(os.path.join(out_dir, "4_Normalize"), exist_ok=True)
    g = torch.Generator().manual_seed(6)
    for path, fin, fout in (("2_Dense", 64, DENSE), ("3_Dense", DENSE, 64)):
        os.makedirs(os.path.join(out_dir, path), exist_ok=True)
        with open(os.path.join(out_dir, path, "config.json"), "w") as f:
            json.dump({"in_features": fin, "out_features": fout, "bias": False,
                       "activation_function": "torch.nn.modules.linear.Identity"}, f)
        save_file({"linear.weight": (0.1 * torch.randn(fout, fin, generator=g)).contiguous()},
                  os.path.join(out_dir, path, "model.safetensors"))


# --- (b) the published layout, by convert/convert_embeddinggemma.go ---------------------------------------------

REPLACEMENTS = [   # embeddingGemmaModel.Replacements(), in Go's order
    "embed_tokens.", "token_embd.",
    "layers.", "blk.",
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
    "pre_feedforward_layernorm", "ffn_norm",
    "post_feedforward_layernorm", "post_ffw_norm",
]


def embeddinggemma_dialect(hf_dir: str, ref_text: str, out_path: str) -> dict:
    import gguf
    from safetensors.numpy import load_file
    import make_dialect_fixture as M
    c = json.load(open(os.path.join(hf_dir, "config.json")))
    tok, _ = M.ref_tokenizer_kvs(ref_text, "gemma-embedding")
    w = gguf.GGUFWriter(out_path, "gemma3")        # the published files: "gemma3" (KV's "gemma-embedding" came later)
    M.model_parameters_kv(w, tok, tok["tokenizer.ggml.tokens"], tok["tokenizer.ggml.token_type"])
    a = "gemma3."
    # embeddingGemmaModel.KV, under the names model_text.go reads
    w.add_uint32(a + "context_length", c.get("max_position_embeddings") or 2048)
    w.add_uint32(a + "embedding_length", c["hidden_size"])
    w.add_uint32(a + "block_count", c["num_hidden_layers"])
    w.add_uint32(a + "feed_forward_length", c["intermediate_size"])
    w.add_uint32(a + "attention.head_count", c["num_attention_heads"])
    w.add_uint32(a + "attention.head_count_kv", c["num_key_value_heads"])
    w.add_float32(a + "attention.layer_norm_rms_epsilon", c.get("rms_norm_eps") or 1e-6)
    w.add_uint32(a + "attention.key_length", c["head_dim"])
    w.add_uint32(a + "attention.value_length", c["head_dim"])
    w.add_uint32(a + "attention.sliding_window", c["sliding_window"])
    rope = c.get("rope_parameters") or {}
    w.add_float32(a + "rope.freq_base", rope.get("full_attention", {}).get("rope_theta") or 1000000.0)
    w.add_float32(a + "rope.local.freq_base", rope.get("sliding_attention", {}).get("rope_theta") or 10000.0)
    # gemma3Model.KV (Gemma3ForCausalLM branch): the pattern from layer_types; the embedding model: bidirectional
    w.add_array(a + "attention.sliding_window_pattern", [t == "sliding_attention" for t in c["layer_types"]])
    w.add_bool(a + "attention.causal", False)
    # parseMore: the Pooling module's mode (1 = mean)
    pooling = json.load(open(os.path.join(hf_dir, "1_Pooling", "config.json")))
    w.add_uint32(a + "pooling_type", 1 if pooling.get("pooling_mode_mean_tokens") else 2 if pooling.get("pooling_mode_cls_token") else 1)
    sd = M.checkpoint_tensors(hf_dir)
    written = []
    for key in sorted(sd):                        # Tensors: names by Replacements, norm.weight -> output_norm, +1 on norms
        name = M.go_replace(key, REPLACEMENTS)
        if name == "norm.weight":
            name = "output_norm.weight"
        data = sd[key].astype(np.float32)
        if name.endswith("_norm.weight"):
            data = data + 1.0                     # gemmaModel.addOne
        M.add_as_kind(w, name, data)   # tensorBase.Kind()
        written.append(name)
    for i, path in enumerate(("2_Dense", "3_Dense")):   # extraTensors: linear.weight of each Dense module, as dense.<i>
        data = load_file(os.path.join(hf_dir, path, "model.safetensors"))["linear.weight"].astype(np.float32)
        w.add_tensor(f"dense.{i}.weight", np.ascontiguousarray(data.astype(np.float16)))
        written.append(f"dense.{i}.weight")
    M.finish(w)
    return {"tensors": written}
