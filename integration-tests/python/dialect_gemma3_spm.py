#!/usr/bin/env python3
"""Gemma 3 (text only) with Gemma's SentencePiece tokenizer, for make_dialect_fixture.py (docs/FORMATS.md §12.2).

    dialect_gemma3_spm.py OUT [LLAMA_CPP_SRC]     # this case alone, laid out as make_dialect_fixture.py lays it out

The gemma3 case of make_dialect_fixture.py has a byte-level BPE vocabulary; Gemma 3's checkpoints ship tokenizer.model,
which both converters read as a SentencePiece vocabulary (tokenizer.ggml.model "llama"). llama.cpp's converter
(Gemma3Model.set_vocab) writes tokenizer.ggml.add_space_prefix = false for it; Ollama's converter writes no such key,
and llama.cpp's SentencePiece vocabulary then prepends a space to every text. The source model is hf_models' "gemma3"
(Gemma3ForCausalLM: hidden 64, 6 layers, sliding window 8; gemma_tokenizer's SentencePiece BPE, 560 pieces, tokenizer.model
kept), its weights made F32 and F16-exact. Reference: llama.cpp's convert_hf_to_gguf.py. Dialect: written as Ollama's
converter writes a Gemma3ForCausalLM (the 1B layout, convert/convert_gemma3.go, gemma3Model.KV's Gemma3ForCausalLM
branch and Tensors), with the SentencePiece vocabulary as parseSentencePiece reads it (dialect_gemma3n.spm_vocabulary,
ollama_tokenizer.write). Nothing here uses modelfs code.
"""
from __future__ import annotations

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_models as H  # noqa: E402

CASE = "gemma3-spm"


def make_gemma3_spm(out_dir: str) -> None:
    """hf_models' gemma3 model and tokenizer (tokenizer.model kept), the weights rewritten as F32 holding F16 values."""
    import torch
    from safetensors.torch import load_file, save_file
    H.save_model("gemma3", out_dir, seed=5)
    p = os.path.join(out_dir, "model.safetensors")
    save_file({k: t.to(torch.float32).to(torch.float16).to(torch.float32).contiguous() for k, t in load_file(p).items()}, p,
              metadata={"format": "pt"})
    c = json.load(open(os.path.join(out_dir, "config.json")))
    c["torch_dtype"] = c["dtype"] = "float32"
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(c, f, indent=1)


def gemma3_spm_dialect(hf_dir: str, out_path: str) -> dict:
    import gguf
    import dialect_gemma3n as G3N
    import make_dialect_fixture as M
    import ollama_tokenizer
    c = json.load(open(os.path.join(hf_dir, "config.json")))
    tokens, scores, types = G3N.spm_vocabulary(hf_dir)
    w = gguf.GGUFWriter(out_path, "gemma3")                     # gemma3Model.KV: general.architecture
    w.add_uint32("general.file_type", 1)                        # ModelParameters.KV
    w.add_uint32("general.quantization_version", 2)
    ollama_tokenizer.write(w, hf_dir, "llama", tokens, scores, types)   # parseTokenizer: Vocabulary{Model: "llama"}
    a = "gemma3."
    n = c["num_hidden_layers"]
    w.add_uint32(a + "block_count", n)
    w.add_uint32(a + "attention.head_count", c["num_attention_heads"])   # not 34/48/62 blocks: the config's
    w.add_uint32(a + "attention.head_count_kv", c["num_key_value_heads"])
    # the Gemma3ForCausalLM branch
    w.add_uint32(a + "context_length", c["max_position_embeddings"])
    w.add_float32(a + "attention.layer_norm_rms_epsilon", c["rms_norm_eps"])
    w.add_uint32(a + "attention.key_length", c["head_dim"])
    w.add_uint32(a + "attention.value_length", c["head_dim"])
    w.add_uint32(a + "attention.sliding_window", c["sliding_window"])
    w.add_array(a + "attention.sliding_window_pattern", [t == "sliding_attention" for t in c["layer_types"]][:n])
    if c.get("final_logit_softcapping"):
        w.add_float32(a + "final_logit_softcapping", c["final_logit_softcapping"])
    # rope_local_base_freq / rope_theta are not top-level fields of a transformers 5 config: cmp.Or's defaults, which are
    # the config's rope_parameters (10000 sliding, 1000000 full)
    w.add_float32(a + "rope.local.freq_base", c.get("rope_local_base_freq") or 10000.0)
    w.add_float32(a + "rope.freq_base", c.get("rope_theta") or 1000000.0)
    w.add_uint32(a + "embedding_length", c["hidden_size"])
    w.add_uint32(a + "feed_forward_length", c["intermediate_size"])
    written = []
    sd = M.checkpoint_tensors(hf_dir)
    for key in sorted(sd):   # gemma3Model.Tensors: Replacements, +1 on the norms (gemmaModel.addOne), Kind()
        name = M.go_replace(key, M.GEMMA3_REPLACEMENTS)   # the 1B layout: model.embed_tokens, model.layers, model.norm
        if name == "output.weight" and c.get("tie_word_embeddings", True):
            continue
        data = sd[key].astype(np.float32)
        if name.endswith("_norm.weight"):
            data = data + 1.0
        M.add_as_kind(w, name, data)
        written.append(name)
    M.finish(w)
    return {"tensors": written}


def build(src: str, out: str, work: str, store: str, expected: dict) -> None:
    """The gemma3-spm case: source model, reference, dialect blob, expectations."""
    import make_dialect_fixture as M
    from transformers import AutoTokenizer
    hf, ref = os.path.join(work, CASE), os.path.join(out, "ref", CASE + ".gguf")
    make_gemma3_spm(hf)
    M.convert_reference(src, [("default", hf, ref, False)])
    dialect_file = os.path.join(out, "ref", CASE + "-dialect.gguf")
    gemma3_spm_dialect(hf, dialect_file)
    with open(dialect_file, "rb") as f:
        blob = f.read()
    tok = AutoTokenizer.from_pretrained(hf)
    expected["models"]["dialect-" + CASE] = {
        "handler": "gemma3", "ref_gguf": ref, "dialect_file": dialect_file, "texts": H.SAMPLE_TEXTS, "mmproj": False,
        "blob": M.put_model(store, "dialect-" + CASE, blob, "gemma3"),
        "hf_tokens": [tok(t, add_special_tokens=False)["input_ids"] for t in H.SAMPLE_TEXTS],
        # the Hugging Face folder read through the translation (its layer types from the per-layer BOOL array Ollama's
        # converter writes) against the source's logits
        **__import__("dialect_hf_folder").oracle("Gemma3ForCausalLM", hf, os.path.join(out, "ref", CASE), "Gemma3ForCausalLM", n=40),
        # every key llama.cpp needs is in Ollama's Gemma3ForCausalLM file: upstream llama.cpp loads the raw blob, and
        # tokenizes otherwise (a space before every text: no add_space_prefix)
        "raw_loads": True,
        # KVs handle_gemma3 leaves as Ollama's converter wrote them: parseSentencePiece's scores (the pieces' own: 0 for
        # the user-defined ones, where llama.cpp's converter writes -1000 for the added tokens tokenizer_config.json
        # lists; its SentencePiece tokenizer splits those off before it reads a score) and types (llama.cpp's converter
        # types those control, parseSentencePiece normal, <unk> unknown), the SentencePiece add_sep_token flag (unread)
        "ref_differences": ["tokenizer.ggml.scores", "tokenizer.ggml.token_type", "tokenizer.ggml.add_sep_token"]}


def main(argv) -> int:
    import make_dialect_fixture as M
    return M.run_alone(argv, build, "modelfs-dialect-gemma3-spm-")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
