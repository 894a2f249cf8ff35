"""snowflake-arctic-embed2 (GGUF architecture bert with a T5/UGM tokenizer) for make_dialect_fixture.py
(docs/FORMATS.md §12.6).

The source model is transformers' own XLMRobertaModel (the encoder of Snowflake/snowflake-arctic-embed-l-v2.0, a
BGE-M3-style XLM-RoBERTa: hidden 32, 2 layers, CLS pooling as a sentence-transformers folder) with an XLM-R-style
tokenizer: a SentencePiece unigram model trained here with NFKC normalization (so it has a precompiled charsmap),
saved as sentencepiece.bpe.model, ids shifted by fairseq's offset (vocab_size = pieces + 1). The reference is llama.cpp's
converter (class XLMRobertaModel: architecture bert, tokenizer model t5, the charsmap as a UINT8 array).

The dialect is the layout of Ollama's published snowflake-arctic-embed2 file: no converter in Ollama's repository wrote
it (Ollama's convert/ has no XLM-RoBERTa and never writes a charsmap); its compatibility layer
(handle_snowflake_arctic_embed2 in llama/compat/llama-ollama-compat.cpp) describes the published file as llama.cpp's
layout whose tokenizer.ggml.precompiled_charsmap is "an array of single-character base64 strings". So the fixture is the
reference GGUF with that one KV re-encoded so (gguf-py), every other KV and tensor as they are. Upstream llama.cpp
refuses it ("invalid gguf type for tokenizer.ggml.precompiled_charsmap"); the translation decodes it back.
Nothing here uses modelfs code.
"""
from __future__ import annotations

import base64
import io
import json
import os

import numpy as np

import hf_models as H

DIM = 32


def make_snowflake(out_dir: str) -> None:
    """The tiny XLMRobertaModel (F32), sentencepiece.bpe.model, and the sentence-transformers CLS pooling."""
    import sentencepiece as spm
    import torch
    import transformers as T
    import make_dialect_fixture as M
    os.makedirs(out_dir, exist_ok=True)
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(H._corpus()), model_writer=buf, model_type="unigram",
                                   vocab_size=300, hard_vocab_limit=False, normalization_rule_name="nmt_nfkc",
                                   unk_id=0, bos_id=1, eos_id=2, pad_id=-1, num_threads=1, minloglevel=2)
    with open(os.path.join(out_dir, "sentencepiece.bpe.model"), "wb") as f:
        f.write(buf.getvalue())
    n = spm.SentencePieceProcessor(model_proto=buf.getvalue()).get_piece_size()
    cfg = T.XLMRobertaConfig(vocab_size=n + 1, hidden_size=DIM, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                             max_position_embeddings=130, type_vocab_size=1, pad_token_id=1, bos_token_id=0, eos_token_id=2,
                             layer_norm_eps=1e-5)
    torch.manual_seed(2)
    model = T.XLMRobertaModel(cfg, add_pooling_layer=False)
    M.randomize(model, std=0.1)
    model.save_pretrained(out_dir, safe_serialization=True)
    with open(os.path.join(out_dir, "tokenizer_config.json"), "w") as f:
        json.dump({"tokenizer_class": "XLMRobertaTokenizer", "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>",
                   "pad_token": "<pad>", "cls_token": "<s>", "sep_token": "</s>", "mask_token": "<mask>"}, f)
    with open(os.path.join(out_dir, "modules.json"), "w") as f:
        json.dump([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                   {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}], f)
    os.makedirs(os.path.join(out_dir, "1_Pooling"), exist_ok=True)
    with open(os.path.join(out_dir, "1_Pooling", "config.json"), "w") as f:
        json.dump({"word_embedding_dimension": DIM, "pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False}, f)


def snowflake_dialect(ref: str, out_path: str) -> None:
    """The reference GGUF with tokenizer.ggml.precompiled_charsmap as an array of one-character base64 strings."""
    import gguf
    import make_dialect_fixture as M
    rd = gguf.GGUFReader(ref)
    w = gguf.GGUFWriter(out_path, rd.fields["general.architecture"].contents())
    for k, f in rd.fields.items():
        if k.startswith("GGUF.") or k == "general.architecture":
            continue
        if k == "tokenizer.ggml.precompiled_charsmap":
            raw = bytes(np.asarray(f.contents(), dtype=np.uint8))
            w.add_array(k, list(base64.b64encode(raw).decode("ascii")))
        elif f.types[0] == gguf.GGUFValueType.ARRAY:
            w.add_key_value(k, f.contents(), f.types[0], f.types[-1])
        else:
            w.add_key_value(k, f.contents(), f.types[0])
    for t in rd.tensors:
        w.add_tensor(t.name, np.asarray(t.data).reshape([int(x) for x in reversed(t.shape)]), raw_dtype=t.tensor_type)
    M.finish(w)


def build(src: str, out: str, work: str, store: str, expected: dict) -> None:
    """Case snowflake: the source model, llama.cpp's conversion (OUT/ref/snowflake.gguf) and the dialect blob."""
    import make_dialect_fixture as M
    hf, ref, dialect = os.path.join(work, "snowflake"), os.path.join(out, "ref", "snowflake.gguf"), os.path.join(out, "ref", "snowflake-dialect.gguf")
    make_snowflake(hf)
    M.convert_reference(src, [("default", hf, ref, False)])
    snowflake_dialect(ref, dialect)
    with open(dialect, "rb") as f:
        expected["models"]["dialect-snowflake"] = {
            "handler": "snowflake", "ref_gguf": ref, "dialect_file": dialect, "texts": H.SAMPLE_TEXTS, "mmproj": False,
            "blob": M.put_model(store, "dialect-snowflake", f.read(), "bert"), "embedding": DIM}


if __name__ == "__main__":
    import sys
    import make_dialect_fixture as M
    sys.exit(M.run_alone(sys.argv, build, "modelfs-snowflake-"))
