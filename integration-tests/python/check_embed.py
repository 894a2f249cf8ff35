#!/usr/bin/env python3
"""The Hugging Face + sentence-transformers folder of embedding GGUFs on a modelfs mount (docs/SEMANTICS.md), against
the source models (make_embed_fixture.py).

    check_embed.py MOUNT OUT

For every model of expected.json "embed" (a GGUF that llama.cpp's converter made from a tiny source model saved as a
SentenceTransformer, kept at OUT/<source>):
* the folder and each of fp32/ fp16/ bf16/ hold config.json, the tokenizer files, modules.json,
  sentence_bert_config.json, 1_Pooling/config.json, config_sentence_transformers.json and model.safetensors (the
  JSON files byte-equal to the top folder's, but config.json's torch_dtype, which says the folder's dtype); 1_Pooling says the source's pooling, modules.json ends in Normalize;
* AutoModel.from_pretrained(MOUNT/<dir>) gives the hidden states of the source (AutoModel of the source folder,
  with the GGUF's weights: the source's own for F32, gguf-py's F16 or Q8_0 round trip of every 2-D tensor
  otherwise) within 1e-4 on sample texts;
* AutoTokenizer.from_pretrained(MOUNT/<dir>) encodes hf_models.SAMPLE_TEXTS, special-token strings, digits,
  accents and emoji (single texts with and without special tokens, and a pair) like the source's tokenizer;
* SentenceTransformer(MOUNT/<dir>) and (F32 and F16 GGUFs, no dtype argument) SentenceTransformer(MOUNT/<dir>/fp32) embed the texts like the source
  SentenceTransformer (with the same weights): cosine > 0.99999 and every value within 1e-4 (F16 GGUFs loaded in
  float32 from the top folder: its config.json says float16, and sentence-transformers would compute in it).
Prints one line per failed check and "N passed, M failed"; exit status 1 on failure.
"""
from __future__ import annotations

import json
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_lib as L  # noqa: E402
import hf_models as H  # noqa: E402

VARIANT_DTYPE = {"fp32/": "float32", "fp16/": "float16", "bf16/": "bfloat16"}
JSON_FILES = ["config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "modules.json",
              "sentence_bert_config.json", "1_Pooling/config.json", "config_sentence_transformers.json"]
POOLING_KEY = {"mean": "pooling_mode_mean_tokens", "cls": "pooling_mode_cls_token", "lasttoken": "pooling_mode_lasttoken"}
TEXTS = list(H.SAMPLE_TEXTS) + ["Hello", "numbers 42 and 3.14159 in a café", "ünïcödé 🦙 emoji ☃ 日本語 straße"]


def oracle_state(src_model, ggml_type):
    """The source weights as the GGUF holds them: exact for F32, else every tensor of 2 or more dimensions through
    gguf-py's own quantize/dequantize (F16: a cast), as hf_gguf_fixtures.requantize wrote them."""
    import gguf
    import torch
    sd = {k: v.detach().float().clone() for k, v in src_model.state_dict().items()}
    if ggml_type == "F32":
        return sd
    q = gguf.GGMLQuantizationType[ggml_type]
    for k, v in sd.items():
        if v.dim() < 2 or not v.is_floating_point():
            continue
        a = v.numpy().astype(np.float32)
        if ggml_type == "F16":
            b = a.astype(np.float16).astype(np.float32)
        else:
            b = gguf.quants.dequantize(gguf.quants.quantize(a, q), q).reshape(a.shape)
        sd[k] = torch.from_numpy(np.ascontiguousarray(b, dtype=np.float32))
    return sd


def hidden(model, tok, text):
    import torch
    enc = tok(text, return_tensors="pt")
    with torch.no_grad():
        return model(**enc).last_hidden_state[0].float().numpy()


def check_files(r, d, mdir, e):
    for v in ("", "fp32/", "fp16/", "bf16/"):
        for f in JSON_FILES + ["model.safetensors"]:
            r.ok(os.path.isfile(os.path.join(mdir, v + f)), f"{d}/{v}{f}: missing")
        for f in JSON_FILES:
            a, b = os.path.join(mdir, f), os.path.join(mdir, v + f)
            if v and os.path.isfile(a) and os.path.isfile(b):
                with open(a, "rb") as fa, open(b, "rb") as fb:
                    top, var = fa.read(), fb.read()
                problem = L.variant_copy_problem(top, var, f, v.rstrip("/"))
                r.ok(problem is None, f"{d}/{v}{f}: {problem} ({d}/{f})")
                if f == "config.json":   # an F16 GGUF's folder says float16: its fp32/ must say float32
                    r.ok(json.loads(var).get("torch_dtype") == VARIANT_DTYPE[v],
                         f"{d}/{v}{f}: torch_dtype {json.loads(var).get('torch_dtype')}, not {VARIANT_DTYPE[v]}")
    try:
        with open(os.path.join(mdir, "1_Pooling/config.json")) as f:
            pool = json.load(f)
        modes = [k for k, val in pool.items() if k.startswith("pooling_mode") and val is True]
        r.ok(modes == [POOLING_KEY[e["pooling"]]], f"{d}/1_Pooling/config.json: modes {modes}, source pools {e['pooling']}")
        with open(os.path.join(mdir, "modules.json")) as f:
            mods = json.load(f)
        r.ok(mods[-1]["type"].endswith("Normalize"), f"{d}/modules.json: last module {mods[-1]['type']}, not Normalize")
    except (OSError, ValueError, KeyError, IndexError) as ex:
        r.fail(f"{d}: sentence-transformers files unreadable: {ex}")


def check_tokenizer(r, d, mdir, src, e):
    from transformers import AutoTokenizer
    tm, ts = AutoTokenizer.from_pretrained(mdir), AutoTokenizer.from_pretrained(src)
    for text in TEXTS + e["special_texts"] + ["", " ", "x"]:
        for special in (True, False):
            a, b = tm(text, add_special_tokens=special).input_ids, ts(text, add_special_tokens=special).input_ids
            r.ok(a == b, f"{d}: encode({text!r}, add_special_tokens={special}) = {a}, source {b}")
    if e["kind"] != "qwen3":
        a, b = tm(TEXTS[0], TEXTS[1]), ts(TEXTS[0], TEXTS[1])
        r.ok(a.input_ids == b.input_ids and a.get("token_type_ids") == b.get("token_type_ids"),
             f"{d}: pair encoding {a.input_ids} / {a.get('token_type_ids')}, source {b.input_ids} / {b.get('token_type_ids')}")


def check_model(r, d, mdir, src, e):
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import AutoModel, AutoTokenizer
    check_files(r, d, mdir, e)
    check_tokenizer(r, d, mdir, src, e)
    tok = AutoTokenizer.from_pretrained(src)
    ref = AutoModel.from_pretrained(src, dtype=torch.float32).eval()
    ref.load_state_dict(oracle_state(ref, e["ggml_type"]))
    try:
        got = AutoModel.from_pretrained(mdir, dtype=torch.float32).eval()
        r.ok(type(got).__name__ == type(ref).__name__, f"{d}: AutoModel gives {type(got).__name__}, source {type(ref).__name__}")
        worst = 0.0
        for text in TEXTS:
            a, b = hidden(got, tok, text), hidden(ref, tok, text)
            diff = float(np.abs(a - b).max()) if a.shape == b.shape else float("inf")
            worst = max(worst, diff)
        r.ok(worst <= 1e-4, f"{d}: max |hidden states - source| = {worst:.3g} > 1e-4")
        print(f"{d}: max |hidden states - source| = {worst:.3g}")
    except Exception as ex:  # noqa: BLE001
        r.fail(f"{d}: AutoModel.from_pretrained(mount dir) + forward failed: {type(ex).__name__}: {ex}")
    st_ref = SentenceTransformer(src, device="cpu")
    st_ref[0].auto_model.load_state_dict(oracle_state(st_ref[0].auto_model, e["ggml_type"]))
    want = st_ref.encode(TEXTS, convert_to_numpy=True)
    # an F16 GGUF's folder says torch_dtype float16: the top folder is compared in float32 here; its fp32/ says
    # float32 and loads with no argument. fp32/ is loaded for F32 and F16 GGUFs (its JSON files are checked above)
    for sub in ("", "fp32") if e["ggml_type"] in ("F32", "F16") else ("",):
        kw = {"model_kwargs": {"dtype": torch.float32}} if e["ggml_type"] == "F16" and not sub else {}
        try:
            st = SentenceTransformer(os.path.join(mdir, sub) if sub else mdir, device="cpu", **kw)
            have = st.encode(TEXTS, convert_to_numpy=True)
            diff = float(np.abs(have - want).max()) if have.shape == want.shape else float("inf")
            cos = float(min(np.sum(have * want, axis=1) / np.linalg.norm(have, axis=1) / np.linalg.norm(want, axis=1))) \
                if have.shape == want.shape else -1.0
            r.ok(diff <= 1e-4 and cos > 0.99999, f"{d}/{sub}: sentence embeddings: max diff {diff:.3g}, min cosine {cos:.8f}")
            print(f"{d}/{sub}: SentenceTransformer max |embedding - source| = {diff:.3g}, min cosine {cos:.8f}")
        except Exception as ex:  # noqa: BLE001
            r.fail(f"{d}/{sub}: SentenceTransformer(mount dir) failed: {type(ex).__name__}: {ex}")


def main():
    return L.check_listed_models(__doc__, "check_embed", "embed", 5, lambda r, d, mdir, src, e, out: check_model(r, d, mdir, src, e))


if __name__ == "__main__":
    sys.exit(main())
