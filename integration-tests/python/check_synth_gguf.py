#!/usr/bin/env python3
"""Checks the synthesized GGUF files of a modelfs mount against OUT/gguf_expected.json.

    check_synth_gguf.py MOUNT OUT                      # gguf-py: names, types, values, metadata
    check_synth_gguf.py MOUNT OUT --llama NODE_DIR     # llama.cpp (node-llama-cpp): load, tokenize, generate

OUT is written by make_gguf_fixture.py. gguf-py mode, for every model of gguf_expected.json "models":
  * model.gguf and model.{fp32,fp16,bf16}.gguf exist and gguf-py's GGUFReader reads them;
  * model.gguf has exactly the expected tensor names (gguf-py's tensor map), types (FORMATS.md §7.5
    rules) and shapes, and every tensor dequantized by gguf-py equals the numpy oracle bit for bit
    (the oracle of a tensor dequantized to BF16 is the exact value rounded once to bf16; for MXFP4 and
    NVFP4 a -0 may read as +0: ggml's E2M1 table has no negative zero);
  * in each variant every tensor is F32 if it is a norm/router/1-D tensor, else the variant's type,
    holding the exact value rounded once to that type;
  * the general.architecture, vocabulary size and chat template; the user.modelfs.source xattr;
  * for the BF16 imports: llama.cpp's own convert_hf_to_gguf.py output (OUT/ref/<kind>.gguf) has the
    same tensors (names, ne, types, bytes) and every KV of it is present with the same type and value,
    except the keys listed in REF_DIFFERENCES (documented in FORMATS.md §7.5), and it has no tokenizer.* KV
    the reference lacks;
and for every "hostile" model: its directory is there, with config.json and model.safetensors, but
no GGUF. A model key may be a draft folder (`<model>/draft`, FORMATS.md §4.3 H): it is checked like a
model; one with "hf_source" (a BF16 draft) must also load with transformers' from_pretrained(folder)
and give exactly the source model's logits and tokens. Every "draft_refused" model has its model.gguf
and a draft/ folder with config.json and model.safetensors but no draft/model.gguf.
llama mode: llama.cpp loads every file, tokenizes the sample texts exactly as the HF tokenizer does,
and, where there is a reference GGUF that tokenizes like HF ("ref_tokenization"), the sample texts and strings with special tokens (parsed as llama.cpp
parses a prompt, BOS added as the file says) exactly as through the reference; reports the chat template, and for the BF16 imports continues a prompt greedily with the same tokens
as the reference GGUF; the variants of quantized imports load and generate valid tokens.
Prints one line per failed check and ends with "N passed, M failed".
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_lib as L  # noqa: E402

VARIANTS = {"fp32": "F32", "fp16": "F16", "bf16": "BF16"}
# KVs of convert_hf_to_gguf.py's output modelfs writes differently, on purpose (FORMATS.md §7.5)
REF_DIFFERENCES = {
    "general.name",               # modelfs: the Ollama model name
    "general.size_label",         # not written
    "general.file_type",          # the dominant type of the synthesized file
    "tokenizer.ggml.scores",      # llama: merge-rank scores instead of -1000 / tokenizer.model's (tokenizes like HF)
}
GEN_PROMPT = [300, 120, 250, 80, 33]   # the reference GGUFs continue it for 6 tokens without an end token
GEN_N = 6


def rounded(a, t):
    import ml_dtypes
    a = np.asarray(a, dtype=np.float32)
    if t == "F16":
        return a.astype(np.float16).astype(np.float32)
    if t == "BF16":
        return a.astype(ml_dtypes.bfloat16).astype(np.float32)
    return a


def dequant(t):
    from gguf import quants
    return np.asarray(quants.dequantize(t.data, t.tensor_type), dtype=np.float32).reshape(-1)


def kv_value(f):
    import gguf
    if f.types and f.types[0] == gguf.GGUFValueType.ARRAY:
        return [f.contents(i) for i in range(len(f.data))]
    return f.contents()


def norm_like(name, shape):
    """The tensors llama.cpp's converter keeps F32 whatever the file type (1-D, norms, routers, a gated delta-net's conv kernel)."""
    return len(shape) == 1 or name.endswith("_norm.weight") or name.endswith("ffn_gate_inp.weight") \
        or name.endswith("ffn_gate_inp_shexp.weight") or name.endswith("ssm_conv1d.weight")


def same_bits(a, b):
    a = np.asarray(a, dtype=np.float32).reshape(-1)
    b = np.asarray(b, dtype=np.float32).reshape(-1)
    return a.shape == b.shape and np.array_equal(a.view(np.uint32), b.view(np.uint32))


def check_model(r, mount, out, d, e):
    import gguf
    base = os.path.join(mount, d)
    path = os.path.join(base, "model.gguf")
    if not r.ok(os.path.isfile(path), f"{d}: model.gguf missing"):
        return
    try:
        g = gguf.GGUFReader(path)
    except Exception as ex:  # noqa: BLE001
        r.fail(f"{d}: gguf-py cannot read model.gguf: {type(ex).__name__}: {ex}")
        return
    tensors = {t.name: t for t in g.tensors}
    want = e["tensors"]
    r.ok(set(tensors) == set(want), f"{d}: tensors {sorted(set(tensors) ^ set(want))} differ from the expected set")
    for name, w in want.items():
        t = tensors.get(name)
        if t is None:
            continue
        if not r.ok(t.tensor_type.name == w["type"], f"{d}: {name} is {t.tensor_type.name}, expected {w['type']}"):
            continue
        r.ok([int(x) for x in t.shape] == list(reversed(w["shape"])), f"{d}: {name} ne {list(t.shape)}, shape {w['shape']}")
        got = dequant(t)
        oracle = np.load(os.path.join(out, w["oracle"]))
        if w["type"] in ("MXFP4", "NVFP4"):   # ggml's doubled E2M1 table decodes code 8 (-0) as +0 (FORMATS §6.4)
            got, oracle = got + np.float32(0), oracle + np.float32(0)
        r.ok(same_bits(got, oracle), f"{d}: {name} ({w['type']} from {w['stored']}) differs from the oracle "
                                     f"(max |diff| {float(np.abs(got - oracle.reshape(-1)).max()):.3g})")
    fields = {f.name: f for f in g.fields.values()}
    r.ok(fields.get("general.architecture") and fields["general.architecture"].contents() == e["arch"],
         f"{d}: general.architecture is not {e['arch']}")
    r.ok("tokenizer.ggml.tokens" in fields and len(fields["tokenizer.ggml.tokens"].data) == e["n_vocab"],
         f"{d}: tokenizer.ggml.tokens does not have {e['n_vocab']} entries")
    r.ok("tokenizer.chat_template" in fields and fields["tokenizer.chat_template"].contents() == e["chat_template"],
         f"{d}: tokenizer.chat_template missing or different")
    src = xattr(path, "user.modelfs.source")
    r.ok(src is not None and src.startswith("synthesized GGUF"), f"{d}: user.modelfs.source of model.gguf: {src!r}")
    for v, typ in VARIANTS.items():
        check_variant(r, out, d, os.path.join(base, f"model.{v}.gguf"), typ, want, g)
    if e.get("ref_gguf"):
        check_reference(r, d, g, e["ref_gguf"])


def check_variant(r, out, d, path, typ, want, g0):
    import gguf
    try:
        g = gguf.GGUFReader(path)
    except Exception as ex:  # noqa: BLE001
        r.fail(f"{d}: gguf-py cannot read {os.path.basename(path)}: {type(ex).__name__}: {ex}")
        return
    f = os.path.basename(path)
    r.ok([t.name for t in g.tensors] == [t.name for t in g0.tensors], f"{d}/{f}: tensor order differs from model.gguf")
    kv0 = {k: kv_value(x) for k, x in g0.fields.items() if not k.startswith("GGUF.") and k != "general.file_type"}
    kv = {k: kv_value(x) for k, x in g.fields.items() if not k.startswith("GGUF.") and k != "general.file_type"}
    r.ok(kv == kv0, f"{d}/{f}: metadata differs from model.gguf")
    for t in g.tensors:
        w = want.get(t.name)
        if w is None:
            continue
        et = "F32" if norm_like(t.name, w["shape"]) else typ
        if not r.ok(t.tensor_type.name == et, f"{d}/{f}: {t.name} is {t.tensor_type.name}, expected {et}"):
            continue
        exact = np.load(os.path.join(out, w.get("values", w["oracle"])))
        r.ok(same_bits(dequant(t), rounded(exact, et)), f"{d}/{f}: {t.name} is not the exact value rounded once to {et}")


def check_reference(r, d, g, ref_path):
    import gguf
    ref = gguf.GGUFReader(ref_path)
    mine = {t.name: t for t in g.tensors}
    for t in ref.tensors:
        m = mine.get(t.name)
        if not r.ok(m is not None, f"{d}: reference tensor {t.name} missing"):
            continue
        r.ok(m.tensor_type == t.tensor_type and list(m.shape) == list(t.shape),
             f"{d}: {t.name} is {m.tensor_type.name}{list(m.shape)}, reference {t.tensor_type.name}{list(t.shape)}")
        r.ok(bytes(m.data.tobytes()) == bytes(t.data.tobytes()), f"{d}: {t.name} bytes differ from convert_hf_to_gguf.py's")
    r.ok(len(mine) == len(ref.tensors), f"{d}: {len(mine)} tensors, reference {len(ref.tensors)}")
    fields = {f.name: f for f in g.fields.values()}
    for f in ref.fields.values():
        if f.name.startswith("GGUF.") or f.name in REF_DIFFERENCES:
            continue
        m = fields.get(f.name)
        if not r.ok(m is not None, f"{d}: reference KV {f.name} missing"):
            continue
        r.ok(m.types == f.types and kv_value(m) == kv_value(f),
             f"{d}: KV {f.name} = {str(kv_value(m))[:80]} ({m.types}), reference {str(kv_value(f))[:80]} ({f.types})")
    extra = sorted(k for k in fields if k.startswith("tokenizer.") and k not in ref.fields)
    r.ok(not extra, f"{d}: tokenizer KVs {extra} are not in convert_hf_to_gguf.py's output")


def check_hostile(r, mount, d, e):
    base = os.path.join(mount, d)
    if not r.ok(os.path.isdir(base), f"{d}: hostile model's directory missing (only the GGUF may be left out)"):
        return
    for f in ("config.json", "model.safetensors", "bf16/model.safetensors", "bf16/config.json"):
        r.ok(os.path.isfile(os.path.join(base, f)), f"{d}: {f} missing ({e['why']})")
    for f in ["model.gguf"] + [f"model.{v}.gguf" for v in VARIANTS]:
        r.ok(not os.path.exists(os.path.join(base, f)), f"{d}: {f} exists although {e['why']}")


def check_from_pretrained(r, mount, d, e):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    base = os.path.join(mount, d)
    try:
        mine = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32)
        tok = AutoTokenizer.from_pretrained(base)
    except Exception as ex:  # noqa: BLE001
        r.fail(f"{d}: from_pretrained fails: {type(ex).__name__}: {ex}")
        return
    src = AutoModelForCausalLM.from_pretrained(e["hf_source"], dtype=torch.float32)
    ids = torch.tensor([GEN_PROMPT])
    with torch.no_grad():
        a, b = src(ids).logits, mine(ids).logits
    r.ok(a.shape == b.shape and torch.equal(a, b), f"{d}: from_pretrained logits differ from the source model's "
                                                  f"(max |diff| {float((a - b).abs().max()) if a.shape == b.shape else 'shape'})")
    got = [tok.encode(t, add_special_tokens=False) for t in e["texts"]]
    r.ok(got == e["hf_tokens"], f"{d}: AutoTokenizer of the folder tokenizes differently from the source")


def check_draft_refused(r, mount, d, e):
    base = os.path.join(mount, d)
    r.ok(os.path.isfile(os.path.join(base, "model.gguf")), f"{d}: the target's model.gguf is missing ({e['why']})")
    for f in ("draft/config.json", "draft/model.safetensors", "bf16/draft/model.safetensors", "bf16/draft/config.json"):
        r.ok(os.path.isfile(os.path.join(base, f)), f"{d}: {f} missing ({e['why']})")
    for f in ["model.gguf"] + [f"model.{v}.gguf" for v in VARIANTS]:
        r.ok(not os.path.exists(os.path.join(base, "draft", f)), f"{d}: draft/{f} exists although {e['why']}")


def xattr(path, name):
    try:
        return os.getxattr(path, name).decode()
    except OSError:
        return None


def run_llama(r, mount, out, exp, node_dir):
    jobs = []
    for d, e in exp["models"].items():
        for f in ["model.gguf"] + [f"model.{v}.gguf" for v in VARIANTS]:
            jobs.append({"file": os.path.join(mount, d, f), "texts": e["texts"], "specialTexts": e["special_texts"],
                         "prompt": GEN_PROMPT, "n": GEN_N})
        if e.get("ref_gguf") and all(j["file"] != e["ref_gguf"] for j in jobs):   # a reference may serve several models
            jobs.append({"file": e["ref_gguf"], "texts": e["texts"], "specialTexts": e["special_texts"],
                         "prompt": GEN_PROMPT, "n": GEN_N})
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(jobs, fh)
    p = subprocess.run(["node", os.path.join(node_dir, "llama_synth.mjs"), fh.name], capture_output=True, text=True,
                       timeout=900)
    os.unlink(fh.name)
    results = {}
    for line in p.stdout.splitlines():
        if line.startswith("{\"file\""):
            o = json.loads(line)
            results[o["file"]] = o
    if not r.ok(p.returncode == 0 and len(results) == len(jobs),
                f"node llama_synth.mjs: exit {p.returncode}, {len(results)} of {len(jobs)} results\n{p.stderr[-3000:]}"):
        if not results:
            return
    for d, e in exp["models"].items():
        ref = results.get(e.get("ref_gguf"))
        for f in ["model.gguf"] + [f"model.{v}.gguf" for v in VARIANTS]:
            o = results.get(os.path.join(mount, d, f))
            if not r.ok(o is not None and "error" not in o, f"{d}/{f}: llama.cpp failed: {o and o.get('error')}"):
                continue
            for text, want, got in zip(e["texts"], e["hf_tokens"], o["tokenized"]):
                r.ok(got == want, f"{d}/{f}: llama.cpp tokenizes {text!r} as {got}, HF as {want}")
            r.ok(o["chatTemplate"] == e["chat_template"], f"{d}/{f}: chat template {str(o['chatTemplate'])[:60]!r}")
            r.ok(len(o["tokens"]) <= GEN_N and all(0 <= t < e["n_vocab"] for t in o["tokens"]),
                 f"{d}/{f}: generated {o['tokens']}")
            if ref is not None and "error" not in ref and e["ref_tokenization"]:   # as through the converter's GGUF
                for text, want, got in zip(e["texts"] + e["special_texts"], ref["tokenized"] + ref["tokenizedSpecial"],
                                           o["tokenized"] + o["tokenizedSpecial"]):
                    r.ok(got == want, f"{d}/{f}: llama.cpp tokenizes {text!r} as {got}, through the reference GGUF as {want}")
            if ref is not None and f in ("model.gguf", "model.bf16.gguf"):
                r.ok("error" not in ref and len(ref["tokens"]) == GEN_N and o["tokens"] == ref["tokens"],
                     f"{d}/{f}: greedy tokens {o['tokens']}, reference GGUF {ref.get('tokens')}")
        print(f"{d}: model.gguf continues {GEN_PROMPT} with {(results.get(os.path.join(mount, d, 'model.gguf')) or {}).get('tokens')}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mount")
    ap.add_argument("out")
    ap.add_argument("--llama", metavar="NODE_DIR")
    a = ap.parse_args()
    r = L.Report("check_synth_gguf")
    with open(os.path.join(a.out, "gguf_expected.json"), encoding="utf-8") as f:
        exp = json.load(f)
    # a fixture of any size is checked (one model made alone, a subset while working on one architecture); one that
    # lists no model at all would check nothing and pass
    if not r.ok(len(exp.get("models", {})) > 0, "gguf_expected.json lists no model"):
        return r.finish()
    exp.setdefault("hostile", {})
    for e in exp["models"].values():   # paths are relative to OUT
        for k in ("ref_gguf", "hf_source"):
            if e.get(k):
                e[k] = os.path.join(os.path.abspath(a.out), e[k])
    if a.llama:
        run_llama(r, os.path.abspath(a.mount), a.out, exp, a.llama)
        return r.finish()
    for d, e in exp["models"].items():
        check_model(r, os.path.abspath(a.mount), a.out, d, e)
        if e.get("hf_source"):
            check_from_pretrained(r, os.path.abspath(a.mount), d, e)
    for d, e in exp.get("draft_refused", {}).items():
        check_draft_refused(r, os.path.abspath(a.mount), d, e)
    for d, e in exp["hostile"].items():
        check_hostile(r, os.path.abspath(a.mount), d, e)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
