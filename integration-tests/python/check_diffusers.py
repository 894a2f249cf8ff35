#!/usr/bin/env python3
"""diffusers end-to-end check of a modelfs mount of make_diffusers_fixture.py's store.

    check_diffusers.py MOUNT OUT

For every model dir of OUT/diffusers.json (two tiny pipelines, each imported as Ollama v0.14 bf16 and
fp8 and v0.16 bf16, int4 and int8 wrote it):
* DiffusionPipeline.from_pretrained(MOUNT/<dir>/<load>) loads with no flags (<load> is the top folder
  for unquantized tags, bf16/ for quantized ones, whose top folder holds the packed codes);
* AutoTokenizer on its tokenizer/ gives the source tokenizer's ids and chat template, and the vocab.json +
  merges.txt modelfs rebuilds there (Ollama never stored merges.txt) give the same ids in a BPE the
  tokenizers package builds from them;
* the prompt embeddings (pipe.encode_prompt) and the image (seeded, two steps, numpy output) equal those
  of the reference folder loaded the same way -- the source folder (bf16 tags) or OUT/ref/<dir>, the
  source with every quantized tensor decoded in numpy from the stored codes -- within TOL;
* the negative control OUT/wrong/<dir> (codes decoded in a wrong order) differs from the reference by
  more than FAR, so the comparison can fail;
* unquantized tags: the bf16/ and fp32/ variant folders give the same embeddings and image as the top.
Everything runs on CPU in float32 with one thread. Prints one line per failed check and
"N passed, M failed"; exit status 1 on failure.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_lib as L  # noqa: E402

TOL = 1e-5     # the same weights give the same float32 results; measured 0
FAR = 1e-2     # what the negative control must exceed (measured: above 0.1)


def run(folder, e):
    """(embeddings, image) of the pipeline in folder, as float32 numpy arrays."""
    import torch
    from diffusers import DiffusionPipeline
    pipe = DiffusionPipeline.from_pretrained(folder, dtype=torch.float32)
    pipe.set_progress_bar_config(disable=True)
    call = dict(e["call"])
    with torch.no_grad():
        if "text_encoder_out_layers" in call:
            call["text_encoder_out_layers"] = tuple(call["text_encoder_out_layers"])
            emb = pipe.encode_prompt(e["prompt"], device="cpu", max_sequence_length=call["max_sequence_length"],
                                     text_encoder_out_layers=call["text_encoder_out_layers"])[0]
        else:
            emb = pipe.encode_prompt(e["prompt"], device="cpu", do_classifier_free_guidance=False,
                                     max_sequence_length=call["max_sequence_length"])[0]
        emb = torch.cat([t.flatten() for t in emb]) if isinstance(emb, list) else emb.flatten()
        image = pipe(prompt=e["prompt"], num_inference_steps=2, generator=torch.Generator("cpu").manual_seed(0),
                     output_type="np", **call).images
    return emb.float().numpy(), np.asarray(image, dtype=np.float32)


def diff(a, b):
    if a.shape != b.shape:
        return float("inf")
    return float(np.abs(a.astype(np.float64) - b.astype(np.float64)).max())


def check_tokenizer(r, d, mdir, src):
    from transformers import AutoTokenizer
    try:
        got = AutoTokenizer.from_pretrained(os.path.join(mdir, "tokenizer"))
        want = AutoTokenizer.from_pretrained(os.path.join(src, "tokenizer"))
        msgs = [{"role": "user", "content": "a red fox"}]
        r.ok(got("a red fox jumps").input_ids == want("a red fox jumps").input_ids, f"{d}: tokenizer ids differ")
        r.ok(got.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
             == want.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True), f"{d}: chat template differs")
        # the slow-tokenizer files rebuilt from tokenizer.json: a BPE read from them by the tokenizers package
        # itself, with tokenizer.json's pre-tokenizer and decoder, splits text like the source tokenizer
        from tokenizers import Tokenizer, models
        tk = Tokenizer.from_file(os.path.join(mdir, "tokenizer", "tokenizer.json"))
        tk.model = models.BPE.from_file(os.path.join(mdir, "tokenizer", "vocab.json"),
                                        os.path.join(mdir, "tokenizer", "merges.txt"))
        for text in ("a red fox jumps over the lazy dog", "dance monkey, the quick brown cat!"):
            r.ok(tk.encode(text, add_special_tokens=False).ids == want(text, add_special_tokens=False).input_ids,
                 f"{d}: vocab.json + merges.txt give other ids than the source tokenizer for {text!r}")
    except Exception as ex:  # noqa: BLE001
        r.fail(f"{d}: AutoTokenizer on tokenizer/ failed: {type(ex).__name__}: {ex}")


def check_model(r, mount, out, d, e):
    mdir = os.path.join(mount, d)
    check_tokenizer(r, d, mdir, os.path.join(out, e["source"]))
    load = os.path.join(mdir, e["load"]) if e["load"] else mdir
    try:
        got = run(load, e)
    except Exception as ex:  # noqa: BLE001
        r.fail(f"{d}: DiffusionPipeline.from_pretrained({e['load'] or '.'}) + 2 steps failed: {type(ex).__name__}: {ex}")
        return
    want = run(os.path.join(out, e["ref"]), e)
    de, di = diff(got[0], want[0]), diff(got[1], want[1])
    print(f"{d}: max |embeddings - reference| = {de:.3g}, max |image - reference| = {di:.3g}")
    r.ok(de <= TOL, f"{d}: prompt embeddings differ from {e['ref']} by {de:.3g} > {TOL}")
    r.ok(di <= TOL, f"{d}: image differs from {e['ref']} by {di:.3g} > {TOL}")
    if e["wrong"]:
        wrong = run(os.path.join(out, e["wrong"]), e)
        we, wi = diff(wrong[0], want[0]), diff(wrong[1], want[1])
        print(f"{d}: negative control (wrong code order): embeddings {we:.3g}, image {wi:.3g}")
        r.ok(max(we, wi) > FAR, f"{d}: the negative control differs by only {max(we, wi):.3g} <= {FAR}")
    else:
        for v in ("bf16", "fp32"):
            try:
                alt = run(os.path.join(mdir, v), e)
            except Exception as ex:  # noqa: BLE001
                r.fail(f"{d}: DiffusionPipeline.from_pretrained({v}/) failed: {type(ex).__name__}: {ex}")
                continue
            r.ok(diff(alt[0], got[0]) <= TOL and diff(alt[1], got[1]) <= TOL,
                 f"{d}: {v}/ gives other embeddings or another image than the top folder")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mount")
    ap.add_argument("out")
    a = ap.parse_args()
    import torch
    torch.set_num_threads(1)
    r = L.Report("check_diffusers")
    with open(os.path.join(a.out, "diffusers.json")) as f:
        models = json.load(f)["models"]
    pipelines = {e["pipeline"] for e in models.values()}
    r.ok(len(models) >= 10 and pipelines == {"ZImagePipeline", "Flux2KleinPipeline"},
         f"diffusers.json lists {len(models)} models of {sorted(pipelines)}, expected 10 of two pipelines")
    for d, e in sorted(models.items()):
        check_model(r, os.path.abspath(a.mount), os.path.abspath(a.out), d, e)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
