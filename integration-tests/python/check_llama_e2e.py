#!/usr/bin/env python3
"""transformers end-to-end check of a modelfs mount against OUT/expected.json (see make_fixture.py).

    check_llama_e2e.py MOUNT OUT

For every entry of expected.json "e2e" (tiny-llama-st and tiny-llama-st:int8):
AutoModelForCausalLM.from_pretrained(MOUNT/<dir>/fp32) on CPU, torch float32, eager
attention, one thread, model.eval(), torch.no_grad(); the logits for the fixed input ids must be
bit-for-bit equal to the "logits_exact" oracle (the original model for tiny-llama-st; the model
with the numpy-dequantized int8 weights for :int8), and -- where "logits_close" is given -- within
"atol" (max absolute difference; 0.02) of the original model's logits.
The generator computed the oracles through the same function (fixture_lib.e2e_logits).
Prints one line per failed check and ends with "N passed, M failed"; exit status 1 on failure.
"""
from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_lib as L  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mount")
    ap.add_argument("out")
    a = ap.parse_args()
    r = L.Report("check_llama_e2e")
    try:
        exp = L.load_expected(a.out)
    except Exception as e:  # noqa: BLE001
        r.fail(f"cannot load {a.out}/expected.json: {e}")
        return r.finish()
    e2e = exp.get("e2e") or {}
    if not r.ok(len(e2e) >= 2, f"expected.json lists {len(e2e)} e2e models, expected 2"):
        return r.finish()
    for d, e in e2e.items():
        path = os.path.join(os.path.abspath(a.mount), d, "fp32")
        if not r.ok(os.path.isfile(os.path.join(path, "model.safetensors"))
                    and os.path.isfile(os.path.join(path, "config.json")),
                    f"{d}: fp32/model.safetensors or fp32/config.json missing on the mount"):
            continue
        try:
            got = L.e2e_logits(path, e["input_ids"])
        except Exception as ex:  # noqa: BLE001
            r.fail(f"{d}: from_pretrained(fp32/) + forward failed: {type(ex).__name__}: {ex}")
            continue
        want = np.load(os.path.join(a.out, e["logits_exact"]))
        if not r.ok(got.shape == want.shape, f"{d}: logits shape {got.shape}, expected {want.shape}"):
            continue
        same = np.array_equal(got.view(np.uint32), want.view(np.uint32))
        r.ok(same, f"{d}: logits are not bit-identical to {e['logits_exact']} "
                   f"(max |diff| {float(np.abs(got - want).max()):.3g})")
        if e.get("logits_close"):
            ref = np.load(os.path.join(a.out, e["logits_close"]))
            diff = float(np.abs(got - ref).max())
            r.ok(diff <= e["atol"], f"{d}: max |logits - original logits| = {diff:.4g} > atol {e['atol']}")
            print(f"{d}: max |logits - original| = {diff:.4g} (atol {e['atol']})")
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
