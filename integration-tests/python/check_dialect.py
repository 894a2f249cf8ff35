#!/usr/bin/env python3
"""Checks the models of make_dialect_fixture.py through a modelfs mount (docs/SEMANTICS.md "Ollama's GGUF dialect").

    check_dialect.py MOUNT OUT                      # gguf-py: the translated files against llama.cpp's converter
    check_dialect.py MOUNT OUT --llama NODE_DIR     # llama.cpp (node-llama-cpp): refuses the dialect, runs the translation
    check_dialect.py MOUNT OUT --mtmd LLAMA_MTMD_CLI  # llama.cpp's llama-mtmd-cli: the image check

For every model of OUT/dialect_expected.json:
  * ollama/model.gguf is the stored blob byte for byte (SHA-256 = the layer digest) with its user.modelfs.digest;
  * model.gguf (gguf-py) has exactly the reference GGUF's tensors (names, types, shapes, bytes) and every KV
    of the reference with the same value, except the keys REF_DIFFERENCES names (general.* naming and the
    chat template, which Ollama's handler injects as Gemma 3's own) and the model's own "ref_differences" (KVs
    Ollama's handler leaves as Ollama's converter wrote them); its user.modelfs.source names the handler;
  * a model whose translation keeps separate expert gate and up tensors ("experts_split": gemma4moe-split) has them
    as the halves of the reference's fused ones, every expert's rows;
  * a model whose translation cuts the vocabulary ("vocab_cut": gemma3n) has the reference's first rows of the
    listed tensors and the first entries of the listed tokenizer arrays;
  * mmproj.gguf has the reference mmproj's tensor names and shapes, its values (a tensor the reference stores
    as F32 where the dialect stored F16 is compared with the reference rounded to F16; a tensor the translation holds
    split, "mmproj_split", as its parts one after another; a table both resample, "resampled", within 1e-5) and its
    clip.* keys (a key the translation holds under another name, "clip_renamed", by that name);
  * the variants and the Hugging Face folder are read through the translation: model.fp32.gguf has the
    reference's tensor names and the translated KVs (the stored ones where "views_read_stored"), config.json
    (where the architecture has a folder) names the text architecture; a model without an embedded vision tower has no mmproj.gguf;
and for every "refused" model (a dialect header that contradicts itself): model.gguf is the stored blob and
there is no ollama/model.gguf; for every "no_upstream" model (mllama, which upstream llama.cpp cannot run) the same, and
its text model's Hugging Face folder: the source text model's tensors, its logits without and with cross-attention states.
llama mode: llama.cpp refuses the raw dialect file (ollama/model.gguf; a metadata-only dialect, "raw_loads", it loads
but tokenizes some sample text otherwise than the reference), and model.gguf tokenizes the sample
texts and continues a prompt greedily exactly as the reference GGUF does (an embedding model, "embedding": its
dimension: gives every sample text the same embedding as the reference GGUF instead; a model with "greedy_fp32", whose
F16 logits llama.cpp computes as NaN, generates from model.gguf widened to F32 (gguf-py, numpy) as from llama.cpp's
F32 conversion instead).
mtmd mode: for every model with an mmproj, llama-mtmd-cli (built from the bundled llama.cpp source, MtmdCli.java)
describes a test image made here (numpy + PIL, a fixed seed) greedily in MTMD_N tokens from model.gguf +
mmproj.gguf of the mount exactly as from llama.cpp's own conversion (the reference GGUF + reference mmproj), and
both runs encoded the image; a model whose mmproj has an audio encoder ("mtmd_audio") describes a test audio clip
(a WAV made here) alike (a model whose fixture tower is smaller than its KVs announce, "mtmd_unloadable", has no image
check: the check asserts that its reference mmproj still lacks blocks). The chat template is named on the command line
(the model's built-in one in
llama.cpp), the same for both runs: the reference has none, the translation Ollama's.
Prints one line per failed check and ends with "N passed, M failed".
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

# mmproj tensors the dialect stores as F16 and the translation widens to F32 (the patch embedding, or its temporal
# slices, and the position table); each one the reference has must be F32 in mmproj.gguf
# KVs of llama.cpp's conversion a translated file may lack or hold otherwise (FORMATS.md §12.2)
REF_DIFFERENCES = {"general.name", "general.size_label", "general.type", "tokenizer.chat_template"}
GEN_PROMPT = [300, 120, 250, 80, 33]
GEN_N = 6
MTMD_PROMPT = "Describe the image."
MTMD_AUDIO_PROMPT = "Describe the audio."
MTMD_N = 8


class R:
    def __init__(self):
        self.passed = self.failed = 0

    def ok(self, cond, msg):
        if cond:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL", msg)
        return cond


def kvs(reader):
    out = {}
    for k, f in reader.fields.items():
        if not k.startswith("GGUF."):
            out[k] = f.contents()
    return out


def tensors(reader):
    return {t.name: t for t in reader.tensors}


def ne(t):
    """A tensor's shape as ggml's ne without trailing 1s ([n, 1] and [n] are one shape to llama.cpp)."""
    s = [int(x) for x in t.shape]
    while len(s) > 1 and s[-1] == 1:
        s.pop()
    return s


def values(t):
    import gguf
    return np.asarray(gguf.dequantize(t.data, t.tensor_type), dtype=np.float32).reshape(-1)


def llama_permute(rows, heads):
    """llama.cpp's LlamaModel.permute of a [rows, cols] weight over `heads` heads: each head's two rotary halves
    interleaved (convert_hf_to_gguf's q/k row order for ggml's rope)."""
    return rows.reshape(heads, 2, rows.shape[0] // heads // 2, *rows.shape[1:]).swapaxes(1, 2).reshape(rows.shape)


def check_model(r, mount, d, e):
    import gguf
    base = os.path.join(mount, d)
    raw = os.path.join(base, "ollama", "model.gguf")
    h = hashlib.sha256()
    with open(raw, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    r.ok("sha256:" + h.hexdigest() == e["blob"], f"{d}/ollama/model.gguf is not the stored blob")
    r.ok(os.getxattr(raw, "user.modelfs.digest").decode() == e["blob"], f"{d}/ollama/model.gguf digest xattr")
    model = os.path.join(base, "model.gguf")
    r.ok(e["handler"] in os.getxattr(model, "user.modelfs.source").decode(), f"{d}/model.gguf source xattr")
    got, ref = gguf.GGUFReader(model), gguf.GGUFReader(e["ref_gguf"])
    gt, rt = tensors(got), tensors(ref)
    if e.get("experts_split"):   # the reference's fused expert gate/up held as its halves: checked, then compared as themselves
        rt = split_gate_up(r, d, gt, rt)
    r.ok(sorted(gt) == sorted(rt), f"{d}/model.gguf tensors {sorted(set(gt) ^ set(rt))} differ from the reference")
    f16 = set(e.get("f16_where_ref_f32", []))
    permuted = e.get("qk_permuted_in_ref", {})   # name -> heads: rows llama.cpp's converter permuted (LlamaModel.permute)
    cut = e.get("vocab_cut") or {"rows": 0, "tensors": [], "kvs": []}
    for name in cut["tensors"]:   # the translation's vocabulary rows are the reference's first rows, byte for byte
        a, b = gt.get(name), rt.get(name)
        r.ok(a is not None and b is not None and a.tensor_type == b.tensor_type and ne(a) == ne(b)[:-1] + [cut["rows"]]
             and bytes(a.data) == bytes(b.data)[:len(bytes(a.data))], f"{d}/model.gguf {name}: not the reference's first {cut['rows']} rows")
    for name in sorted(set(gt) & set(rt) - set(cut["tensors"])):
        a, b = gt[name], rt[name]
        if name in permuted:   # the translation keeps the checkpoint's row order (no rope reads it): permuted, the reference
            r.ok(a.tensor_type == b.tensor_type and list(a.shape) == list(b.shape)
                 and np.array_equal(llama_permute(np.asarray(a.data), permuted[name]), np.asarray(b.data)),
                 f"{d}/model.gguf {name}: not the reference's rows in the checkpoint's order")
            continue
        if name in f16:   # stored F16 by Ollama's converter, F32 by llama.cpp's: the reference rounded to F16
            # (the shapes compared as ggml's ne without trailing 1s: Ollama's qwen3next converter squeezed the
            # shared-expert gate [n_embd, 1] to [n_embd], the same tensor to llama.cpp)
            r.ok(a.tensor_type.name == "F16" and b.tensor_type.name == "F32" and ne(a) == ne(b)
                 and np.array_equal(values(a), values(b).astype(np.float16).astype(np.float32)),
                 f"{d}/model.gguf {name}: not the reference's values in F16")
            continue
        r.ok(a.tensor_type == b.tensor_type and list(a.shape) == list(b.shape) and bytes(a.data) == bytes(b.data),
             f"{d}/model.gguf {name}: {a.tensor_type.name} {list(a.shape)} vs reference {b.tensor_type.name} {list(b.shape)}")
    r.ok(not f16 or f16 <= set(gt), f"{d}/model.gguf lacks {sorted(f16 - set(gt))}")
    stored_names = {t.name for t in gguf.GGUFReader(e["dialect_file"]).tensors}
    r.ok(all(n in stored_names and n not in gt for n in e.get("dropped", [])), f"{d}/model.gguf keeps a tensor the handler leaves out")
    gk, rk = kvs(got), kvs(ref)
    for k in cut["kvs"]:
        r.ok(k in gk and list(gk[k]) == list(rk[k])[:cut["rows"]], f"{d}/model.gguf KV {k}: not the reference's first {cut['rows']} entries")
    for k, v in rk.items():
        if k not in REF_DIFFERENCES and k not in e.get("ref_differences", []) and k not in cut["kvs"]:
            r.ok(k in gk and gk[k] == v, f"{d}/model.gguf KV {k}: {str(gk.get(k))[:60]} vs reference {str(v)[:60]}")
    fp32 = gguf.GGUFReader(os.path.join(base, "model.fp32.gguf"))
    # a model with an MTP head: the views read the text model alone (its blocks, without the nextn keys)
    mtp = e.get("views_without_mtp_block")
    want = sorted(n for n in rt if mtp is None or not n.startswith(f"blk.{mtp}."))
    # a translation with tensors fused from several slices (views_read_stored): the views read the stored header (§12.1)
    stored_view = e.get("views_read_stored")
    want = sorted(stored_names) if stored_view else want
    r.ok(sorted(t.name for t in fp32.tensors) == want, f"{d}/model.fp32.gguf tensors differ from the reference's {'text ' if mtp else ''}tensors")
    skip = {"general.file_type"} | ({k for k in gk if k.endswith((".block_count", ".nextn_predict_layers"))} if mtp is not None else set())
    r.ok(all(kvs(fp32).get(k) == v for k, v in (kvs(gguf.GGUFReader(e["dialect_file"])) if stored_view else gk).items() if k not in skip),
         f"{d}/model.fp32.gguf lacks the {'stored' if stored_view else 'translated'} KVs")
    if mtp is not None:
        arch = gk["general.architecture"]
        r.ok(kvs(fp32).get(arch + ".block_count") == mtp and arch + ".nextn_predict_layers" not in kvs(fp32),
             f"{d}/model.fp32.gguf: block_count {kvs(fp32).get(arch + '.block_count')}, not the {mtp} text blocks")
    if e.get("hf_architecture"):
        cfg_path = os.path.join(base, "config.json")
        if r.ok(os.path.isfile(cfg_path), f"{d}: no Hugging Face folder (config.json)"):
            with open(cfg_path) as f:
                r.ok(json.load(f).get("architectures") == [e["hf_architecture"]], f"{d}/config.json architectures")
        if e.get("hf_logits"):
            check_folder(r, base, d, e)
    if not e.get("mmproj"):
        r.ok(not os.path.exists(os.path.join(base, "mmproj.gguf")), f"{d}/mmproj.gguf exists")
        return
    mm, rmm = gguf.GGUFReader(os.path.join(base, "mmproj.gguf")), gguf.GGUFReader(e["ref_mmproj"])
    mt, rmt = tensors(mm), tensors(rmm)
    split = e.get("mmproj_split", {})   # a reference tensor the translation holds as parts along its outermost dimension
    want_names = sorted([n for n in rmt if n not in split] + [p for n in split if n in rmt for p in split[n]])
    r.ok(sorted(mt) == want_names, f"{d}/mmproj.gguf tensors {sorted(set(mt) ^ set(want_names))} differ from the reference mmproj")
    for name, parts in split.items():
        b, got = rmt.get(name), [mt.get(p) for p in parts]
        if not r.ok(b is not None and None not in got, f"{d}/mmproj.gguf: no {name} in the reference or no {parts}"):
            continue
        r.ok(all(ne(a)[:-1] == ne(b)[:-1] for a in got) and sum(ne(a)[-1] for a in got) == ne(b)[-1]
             and np.array_equal(np.concatenate([values(a) for a in got]), values(b)),
             f"{d}/mmproj.gguf {parts}: not the reference's {name} {ne(b)} split along its rows")
    stored = tensors(gguf.GGUFReader(e["dialect_file"]))
    promoted = e.get("promoted", ())   # F16 in the blob, F32 in mmproj.gguf
    for name in sorted(set(mt) & set(rmt)):
        a, b = mt[name], rmt[name]
        # shapes as ggml's ne without trailing 1s ([n, m, 1] and [n, m] are one shape to clip.cpp)
        if not r.ok(ne(a) == ne(b), f"{d}/mmproj.gguf {name}: shape {list(a.shape)} vs {list(b.shape)}"):
            continue
        want = values(b)
        if name in e.get("resampled", ()):   # resampled by Ollama's arithmetic, the reference by torch's: last bits apart
            got = values(a)
            r.ok(a.tensor_type.name == "F32" and np.allclose(got, want, rtol=1e-5, atol=1e-5) and not np.array_equal(got, np.zeros_like(got)),
                 f"{d}/mmproj.gguf {name}: max |difference| {np.abs(got - want).max()} from the reference mmproj's resampled table")
            continue
        if b.tensor_type.name == "F32" and a.tensor_type.name == "F32" and name in promoted:
            want = want.astype(np.float16).astype(np.float32)   # promoted from the F16 the dialect stores
        elif a.tensor_type.name == "F16" and b.tensor_type.name == "F32":
            want = want.astype(np.float16).astype(np.float32)
        if name.endswith(tuple(e.get("ulp_close", ()))) and a.tensor_type.name == b.tensor_type.name == "F32":
            # values Ollama's converter computes in float64 and llama.cpp's in float32: at most one unit in the last place
            ulps = np.abs(values(a).astype(np.float32).view(np.int32).astype(np.int64) - want.astype(np.float32).view(np.int32))
            r.ok(int(ulps.max(initial=0)) <= 1, f"{d}/mmproj.gguf {name}: values differ from the reference mmproj by {int(ulps.max())} ulps (1 allowed)")
            continue
        r.ok(np.array_equal(values(a), want), f"{d}/mmproj.gguf {name}: values differ from the reference mmproj")
    for name in promoted:
        r.ok(name in mt and mt[name].tensor_type.name == "F32", f"{d}/mmproj.gguf {name} not promoted to F32")
    r.ok(any(n.startswith(("v.", "mm.")) for n in stored), f"{d}: the dialect blob holds no vision tensors")
    ck, rck = kvs(mm), kvs(rmm)
    renamed = e.get("clip_renamed", {})   # a reference key the translation holds under another name (clip.cpp reads either)
    for k, v in rck.items():
        if k.startswith("clip."):
            k = renamed.get(k, k)
            r.ok(k in ck and ck[k] == v, f"{d}/mmproj.gguf KV {k}: {ck.get(k)} vs reference {v}")
    want_keys = sorted(renamed.get(k, k) for k in rck if k.startswith("clip."))
    got_keys = sorted(k for k in ck if k.startswith("clip.") and (k not in e.get("clip_extra", []) or k in want_keys))
    r.ok(got_keys == want_keys, f"{d}/mmproj.gguf clip.* keys differ: {sorted(set(got_keys) ^ set(want_keys))}")
    r.ok(ck.get("general.architecture") == "clip", f"{d}/mmproj.gguf architecture {ck.get('general.architecture')}")


def split_gate_up(r, d, gt, rt):
    """A translation that keeps a file's separate expert gate and up tensors ("experts_split": Gemma 4 written from a moe.*
    checkpoint): each reference blk.N.ffn_gate_up_exps.weight [E, 2·ff, n] must be blk.N.ffn_gate_exps.weight and
    blk.N.ffn_up_exps.weight of model.gguf, its first and last ff rows of every expert, in its type; returns the reference's
    tensors with those halves in place of the fused one."""
    out = dict(rt)
    fused = [n for n in rt if n.endswith(".ffn_gate_up_exps.weight")]
    r.ok(bool(fused), f"{d}: the reference has no ffn_gate_up_exps to compare the split experts with")
    for name in fused:
        b = out.pop(name)
        gate, up = gt.get(name.replace("gate_up_exps", "gate_exps")), gt.get(name.replace("gate_up_exps", "up_exps"))
        want = np.asarray(b.data)
        ff = want.shape[1] // 2
        r.ok(gate is not None and up is not None and gate.tensor_type == up.tensor_type == b.tensor_type
             and np.array_equal(np.asarray(gate.data), want[:, :ff]) and np.array_equal(np.asarray(up.data), want[:, ff:]),
             f"{d}/model.gguf: the gate and up experts of layer {name.split('.')[1]} are not the reference's {name} halves")
        for part in (gate, up):
            if part is not None:
                out[part.name] = part
    return out


def check_folder(r, base, d, e):
    """The text model's Hugging Face folder read through the translation (dialect_hf_folder.py): transformers'
    AutoModelForCausalLM gives the source model's text-only logits within 1e-4 and AutoTokenizer the source's ids."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    try:
        model, info = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32, attn_implementation="eager",
                                                           output_loading_info=True)
        model.eval()
        with torch.no_grad():
            got = model(torch.tensor([e["hf_ids"]])).logits[0].float().numpy()
    except Exception as ex:  # noqa: BLE001
        r.ok(False, f"{d}: from_pretrained(folder) + forward failed: {type(ex).__name__}: {ex}")
        return
    want = np.load(e["hf_logits"])
    diff = float(np.abs(got - want).max()) if got.shape == want.shape else float("inf")
    r.ok(type(model).__name__ == e["hf_architecture"], f"{d}: AutoModelForCausalLM made a {type(model).__name__}")
    r.ok(diff <= 1e-4, f"{d}: max |folder logits - source logits| = {diff:.3g} > 1e-4 ({len(e['hf_ids'])} tokens)")
    print(f"{d}: {e['hf_architecture']} folder: max |logits - source model's| = {diff:.3g} on {len(e['hf_ids'])} tokens; "
          f"missing keys {sorted(info['missing_keys'])[:8]}")
    if "hf_missing_keys" in e:   # what transformers initializes itself (gemma4moe-split: not its router.per_expert_scale)
        missing = sorted(info["missing_keys"])
        r.ok(missing == e["hf_missing_keys"], f"{d}: from_pretrained reports missing keys {missing[:8]}, not {e['hf_missing_keys']}")
    if e.get("hf_cross_logits"):   # cross-attention states given: the cross-attention layers run (and change the logits)
        with torch.no_grad():
            cross = model(torch.tensor([e["hf_ids"]]), cross_attention_states=torch.from_numpy(np.load(e["hf_cross_states"]))).logits[0].numpy()
        want_cross = np.load(e["hf_cross_logits"])
        diff = float(np.abs(cross - want_cross).max()) if cross.shape == want_cross.shape else float("inf")
        moved = float(np.abs(want_cross - want).max())
        r.ok(diff <= 1e-4 and moved > 1e-2, f"{d}: with cross-attention states max |folder logits - source logits| = {diff:.3g} "
             f"(> 1e-4), the cross-attention layers moving the source's by {moved:.3g}")
        print(f"{d}: with cross-attention states: max |logits - source model's| = {diff:.3g} (the cross layers move them by {moved:.3g})")
    if "hf_stop_ids" in e:   # gpt-oss: every stop of the harmony format, as the source tokenizer numbers them
        with open(os.path.join(base, "generation_config.json")) as f:
            stops = json.load(f).get("eos_token_id")
        r.ok(stops == e["hf_stop_ids"], f"{d}/generation_config.json: eos_token_id {stops}, not {e['hf_stop_ids']} "
             "(<|return|>, <|endoftext|>, <|call|> by text)")
        with open(os.path.join(base, "config.json")) as f:   # the published gpt-oss config.json: <|return|>, not the GGUF's eos
            eos = json.load(f).get("eos_token_id")
        r.ok(eos == e["hf_stop_ids"][0], f"{d}/config.json: eos_token_id {eos}, not <|return|> {e['hf_stop_ids'][0]}")
    tok = AutoTokenizer.from_pretrained(base)
    for text, ids in zip(e["hf_folder_texts"], e["hf_folder_tokens"]):
        for special, want_ids in zip((False, True), ids):
            got_ids = tok(text, add_special_tokens=special)["input_ids"]
            r.ok(got_ids == want_ids, f"{d}: folder tokenizer encodes {text!r} (special={special}) as {got_ids}, the source as {want_ids}")


def check_no_upstream(r, mount, d, e):
    """An architecture upstream llama.cpp cannot run (mllama): model.gguf is the stored blob, there is no ollama/model.gguf,
    and, where the fixture gives an oracle, the text model's Hugging Face folder (check_folder) holds exactly the source text
    model's tensors (the vision tower left out) and gives its logits with cross-attention states too."""
    base = served_as_stored(r, mount, d, e)
    if not e.get("hf_architecture"):
        return
    cfg_path = os.path.join(base, "config.json")
    if not r.ok(os.path.isfile(cfg_path), f"{d}: no Hugging Face folder (config.json)"):
        return
    with open(cfg_path) as f:
        r.ok(json.load(f).get("architectures") == [e["hf_architecture"]], f"{d}/config.json architectures")
    from safetensors import safe_open
    with safe_open(os.path.join(base, "model.safetensors"), "np") as st:
        names = sorted(st.keys())
    r.ok(names == e["hf_tensor_names"], f"{d}/model.safetensors tensors {sorted(set(names) ^ set(e['hf_tensor_names']))[:8]} "
         "differ from the source text model's")
    check_folder(r, base, d, e)


def check_refused(r, mount, d, e):
    """A dialect header that contradicts itself: model.gguf is the stored blob, nothing under ollama/model.gguf, and
    no mmproj.gguf half-translated from the same header."""
    base = served_as_stored(r, mount, d, e)
    r.ok(not os.path.exists(os.path.join(base, "mmproj.gguf")), f"{d}/mmproj.gguf exists though its text header was refused")


def served_as_stored(r, mount, d, e):
    """model.gguf of model d is its stored blob (SHA-256) and there is no ollama/model.gguf; returns the model's folder."""
    base = os.path.join(mount, d)
    h = hashlib.sha256()
    with open(os.path.join(base, "model.gguf"), "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    r.ok("sha256:" + h.hexdigest() == e["blob"], f"{d}/model.gguf is not the stored blob")
    r.ok(not os.path.exists(os.path.join(base, "ollama", "model.gguf")), f"{d}/ollama/model.gguf exists")
    return base


def widen_f16(src, dst):
    """A copy of the GGUF src (read through the mount) with every F16 tensor widened to F32 by numpy, the KVs as they
    are (gguf-py), for an architecture whose F16 logits llama.cpp computes as NaN."""
    import gguf
    rd = gguf.GGUFReader(src)
    w = gguf.GGUFWriter(dst, rd.fields["general.architecture"].contents())
    for k, f in rd.fields.items():
        if k.startswith("GGUF.") or k == "general.architecture":
            continue
        if f.types[0] == gguf.GGUFValueType.ARRAY:
            w.add_key_value(k, f.contents(), f.types[0], f.types[-1])
        else:
            w.add_key_value(k, f.contents(), f.types[0])
    for t in rd.tensors:
        a = np.asarray(t.data).reshape([int(x) for x in reversed(t.shape)])
        w.add_tensor(t.name, a.astype(np.float32) if t.tensor_type.name == "F16" else a)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def run_llama(r, mount, exp, node_dir):
    jobs = []
    for d, e in exp["models"].items():
        if e.get("no_llama_run"):   # a model upstream llama.cpp cannot run even as its own conversion: the reason, no check
            print(f"{d}: not run in llama.cpp: {e['no_llama_run']}")
            continue
        files = [os.path.join(mount, d, "model.gguf"), os.path.join(mount, d, "ollama", "model.gguf"), e["ref_gguf"]]
        if e.get("greedy_fp32"):   # the greedy check on the translation widened to F32 against llama.cpp's F32 conversion
            wide = os.path.join(tempfile.mkdtemp(prefix="modelfs-wide-"), d + ".f32.gguf")
            widen_f16(os.path.join(mount, d, "model.gguf"), wide)
            e["_wide"] = wide
            files += [wide, e["greedy_fp32"]]
        for f in files:
            jobs.append({"file": f, "texts": e["texts"], "prompt": GEN_PROMPT, "n": GEN_N, "embed": bool(e.get("embedding"))})
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(jobs, fh)
    p = subprocess.run(["node", os.path.join(node_dir, "llama_synth.mjs"), fh.name], capture_output=True, text=True, timeout=600)
    os.unlink(fh.name)
    results = {}
    for line in p.stdout.splitlines():
        if line.startswith("{\"file\""):
            o = json.loads(line)
            results[o["file"]] = o
    r.ok(p.returncode == 0 and len(results) == len(jobs), f"node llama_synth.mjs: exit {p.returncode}, {len(results)} of {len(jobs)}\n{p.stderr[-2000:]}")
    for d, e in exp["models"].items():
        if e.get("no_llama_run"):
            continue
        raw = results.get(os.path.join(mount, d, "ollama", "model.gguf"))
        got, ref = results.get(os.path.join(mount, d, "model.gguf")), results.get(e["ref_gguf"])
        if e.get("raw_loads"):   # a metadata-only dialect that upstream llama.cpp loads: it must mis-tokenize a sample text
            r.ok(raw is not None and "error" not in raw and ref is not None and "error" not in ref
                 and raw["tokenized"] != ref["tokenized"],
                 f"{d}/ollama/model.gguf: upstream llama.cpp tokenizes the raw dialect file as the reference: {str(raw)[:200]}")
            raw = {"error": "tokenizes otherwise: " + str(next((a for a, b in zip(raw.get("tokenized", []), ref.get("tokenized", [])) if a != b), None))}
        r.ok(raw is not None and "error" in raw, f"{d}/ollama/model.gguf: upstream llama.cpp loaded the raw dialect file: {raw}")
        if not r.ok(got is not None and "error" not in got, f"{d}/model.gguf: llama.cpp failed: {got and got.get('error')}"):
            continue
        if not r.ok(ref is not None and "error" not in ref, f"{d}: the reference GGUF failed: {ref}"):
            continue
        for i, (text, a, b) in enumerate(zip(e["texts"], got["tokenized"], ref["tokenized"])):
            r.ok(a == b, f"{d}/model.gguf tokenizes {text!r} as {a}, the reference as {b}")
            if e.get("hf_tokens"):
                r.ok(b == e["hf_tokens"][i], f"{d}: the reference tokenizes {text!r} as {b}, HF as {e['hf_tokens'][i]}")
        if e.get("embedding"):   # an embedding model: the same vector for every text, and not a trivial one
            for text, a, b in zip(e["texts"], got["embeddings"], ref["embeddings"]):
                r.ok(a == b and len(b) == e["embedding"] and np.linalg.norm(b) > 0.5,
                     f"{d}/model.gguf embeds {text!r} as {a[:4]}... ({len(a)}), the reference as {b[:4]}... ({len(b)})")
            print(f"{d}: model.gguf embeds {e['texts'][0]!r} as {got['embeddings'][0][:3]}...; ollama/model.gguf: {str(raw.get('error'))[:120]}")
            continue
        if e.get("greedy_fp32"):   # F16 logits are NaN in llama.cpp for this architecture: the F32 files generate
            got = results.get(e["_wide"]) or {"error": "no result", "tokens": []}
            os.unlink(e["_wide"])
            ref = results.get(e["greedy_fp32"]) or {"error": "no result", "tokens": []}
            r.ok("error" not in got and "error" not in ref and len(set(ref["tokens"])) > 1,
                 f"{d}: the F32 files: {got.get('error')} / {ref.get('error')}, reference tokens {ref['tokens']}")
        r.ok(len(ref["tokens"]) == GEN_N and got["tokens"] == ref["tokens"],
             f"{d}/model.gguf greedy tokens {got['tokens']}, reference {ref['tokens']}")
        print(f"{d}: model.gguf continues {GEN_PROMPT} with {got['tokens']}; ollama/model.gguf: {str(raw.get('error'))[:120]}")


def test_image(path):
    """A 64x64 RGB PNG: a gradient, a bright square and seeded noise, so every patch differs."""
    from PIL import Image
    y, x = np.mgrid[0:64, 0:64]
    img = np.stack([x * 4, y * 4, (x + y) * 2], axis=-1).astype(np.float32)
    img[16:40, 20:44] = [250, 240, 30]
    img += np.random.default_rng(7).normal(0, 12, img.shape)
    Image.fromarray(np.clip(img, 0, 255).astype(np.uint8), "RGB").save(path)


def test_audio(path):
    """One second of 16 kHz mono 16-bit PCM WAV: two tones (the second from half a second on) and seeded noise."""
    import wave
    sr = 16000
    t = np.arange(sr) / sr
    x = 0.4 * np.sin(2 * np.pi * 440 * t) + 0.2 * np.sin(2 * np.pi * 1250 * t) * (t > 0.5) + np.random.default_rng(7).normal(0, 0.05, sr)
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(sr)
        w.writeframes((np.clip(x, -1, 1) * 32767).astype("<i2").tobytes())


def mtmd_describe(cli, model, mmproj, media, template, flag="--image", prompt=MTMD_PROMPT):
    """llama-mtmd-cli's greedy description of the image (or, flag --audio, the audio clip): (exit code, stdout bytes,
    encoded?, stderr tail)."""
    cmd = [cli, "-m", model, "--mmproj", mmproj, flag, media, "-p", prompt, "-n", str(MTMD_N), "--temp", "0",
           "--chat-template", template, "-c", "1024", "-t", "2", "--no-warmup", "--seed", "1"]
    p = subprocess.run(cmd, capture_output=True, timeout=300)   # bytes: pieces of random tokens need not be UTF-8
    err = p.stderr.decode("utf-8", "replace")
    encoded = "mtmd batch encoding done" in err   # mtmd-helper's line once the media's embeddings are computed
    return p.returncode, p.stdout.strip(), encoded, err[-1500:]


def mtmd_pair(r, d, what, mount_run, ref_run):
    """Runs llama-mtmd-cli through the mount and on the reference and checks both encoded the media and printed the
    same non-empty description. llama-mtmd-cli prints it through llama.cpp's asynchronous log, which now and then
    loses all or the end of it at exit on a loaded machine (a stdout empty or cut short, exit 0, the media encoded): a
    pair where one side printed nothing, or a strict prefix of the other's, runs again, up to three times (a real
    difference stays and fails)."""
    for attempt in (1, 2, 3):
        got, ref = mount_run(), ref_run()
        cut = b"" in (got[1], ref[1]) or (got[1] != ref[1] and (got[1].startswith(ref[1]) or ref[1].startswith(got[1])))
        if not cut or attempt == 3:
            break
        print(f"{d}: llama-mtmd-cli's output for the {what} looks cut short (mount {got[1]!r}, reference {ref[1]!r}); "
              "running the pair again")
    if not r.ok(ref[0] == 0 and ref[2], f"{d}: llama-mtmd-cli on the reference ({what}): exit {ref[0]}, encoded {ref[2]}\n{ref[3]}"):
        return
    if not r.ok(got[0] == 0 and got[2], f"{d}: llama-mtmd-cli on the mount ({what}): exit {got[0]}, encoded {got[2]}\n{got[3]}"):
        return
    r.ok(got[1] == ref[1] and ref[1] != b"", f"{d}: llama-mtmd-cli describes the {what} as {got[1]!r} from the mount, {ref[1]!r} from the reference")
    print(f"{d}: llama-mtmd-cli describes the test {what} as {got[1]!r}")


def run_mtmd(r, mount, exp, cli):
    with tempfile.TemporaryDirectory(prefix="modelfs-mtmd-") as tmp:
        image, audio = os.path.join(tmp, "test.png"), os.path.join(tmp, "test.wav")
        test_image(image)
        test_audio(audio)
        for d, e in exp["models"].items():
            if not e.get("mmproj"):
                continue
            if e.get("mtmd_unloadable"):   # a fixture tower smaller than its KVs announce (the converters fix them): the
                # reason must still hold, in the reference mmproj itself; else the model needs its image check
                import gguf
                u, rd = e["mtmd_unloadable"], gguf.GGUFReader(e["ref_mmproj"])
                blocks = {int(t.name.split(".")[2]) for t in rd.tensors if t.name.startswith("v.blk.")}
                announced = int(rd.fields["clip.vision.block_count"].contents())
                r.ok(len(blocks) == u["blocks"] < announced == u["announced"],
                     f"{d}: the reference mmproj has {len(blocks)} of its {announced} blocks: give it an mtmd_template and an image check")
                print(f"{d}: no image check: the reference mmproj has {len(blocks)} of the {announced} blocks its KVs announce")
                continue
            if not r.ok("mtmd_template" in e, f"{d}: has an mmproj.gguf but no mtmd_template in the fixture (every mmproj is image-checked)"):
                continue
            base = os.path.join(mount, d)
            model, mmproj, tpl = os.path.join(base, "model.gguf"), os.path.join(base, "mmproj.gguf"), e["mtmd_template"]
            mtmd_pair(r, d, "image", lambda: mtmd_describe(cli, model, mmproj, image, tpl),
                      lambda: mtmd_describe(cli, e["ref_gguf"], e["ref_mmproj"], image, tpl))
            if e.get("mtmd_audio"):   # an mmproj.gguf with an audio encoder: the audio clip too
                mtmd_pair(r, d, "audio", lambda: mtmd_describe(cli, model, mmproj, audio, tpl, "--audio", MTMD_AUDIO_PROMPT),
                          lambda: mtmd_describe(cli, e["ref_gguf"], e["ref_mmproj"], audio, tpl, "--audio", MTMD_AUDIO_PROMPT))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mount")
    ap.add_argument("out")
    ap.add_argument("--llama")
    ap.add_argument("--mtmd")
    a = ap.parse_args()
    with open(os.path.join(a.out, "dialect_expected.json")) as f:
        exp = json.load(f)
    r = R()
    if a.llama:
        run_llama(r, a.mount, exp, a.llama)
    elif a.mtmd:
        run_mtmd(r, a.mount, exp, a.mtmd)
    else:
        for d, e in exp["models"].items():
            check_model(r, a.mount, d, e)
        for d, e in exp.get("refused", {}).items():
            check_refused(r, a.mount, d, e)
        for d, e in exp.get("no_upstream", {}).items():
            check_no_upstream(r, a.mount, d, e)
    print(f"{r.passed} passed, {r.failed} failed")
    return 0 if r.failed == 0 and r.passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
