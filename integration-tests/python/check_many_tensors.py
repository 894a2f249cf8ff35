"""Checks a safetensors model with very many tiny tensors as the mount serves it (MemoryBudgetTest).

usage: check_many_tensors.py MOUNTPOINT MODEL BLOB...

The oracle is the safetensors package reading the store's own tensor blobs (each one a safetensors
file): the mount's MODEL/model.safetensors must hold exactly their tensors with the same bytes,
fp32/model.safetensors the same values as float32 (numpy's cast), and MODEL/tensors/*.safetensors must
be the blobs byte for byte. Prints "N passed, 0 failed" (exit 0) or the failures (exit 1).
"""
import hashlib
import os
import sys

import numpy as np
from safetensors import safe_open


def main():
    mount, model, blobs = sys.argv[1], sys.argv[2], sys.argv[3:]
    folder = os.path.join(mount, model)
    passed, failed = 0, []

    def check(ok, what):
        nonlocal passed
        if ok:
            passed += 1
        else:
            failed.append(what)

    expected = {}
    digests = set()
    for b in blobs:
        with safe_open(b, "np") as f:
            for k in f.keys():
                expected[k] = f.get_tensor(k)
        with open(b, "rb") as fh:
            digests.add(hashlib.sha256(fh.read()).hexdigest())
    names = os.listdir(folder)
    check({"model.safetensors", "fp32", "tensors", "ollama"} <= set(names), "listing of %s: %s" % (model, sorted(names)))

    with safe_open(os.path.join(folder, "model.safetensors"), "np") as f:
        keys = list(f.keys())
        check(sorted(keys) == sorted(expected), "model.safetensors has %d tensors, the blobs %d" % (len(keys), len(expected)))
        wrong = [k for k in keys if k in expected and not (f.get_tensor(k).dtype == expected[k].dtype
                                                          and np.array_equal(f.get_tensor(k), expected[k]))]
        check(not wrong, "model.safetensors: %d tensors differ, e.g. %s" % (len(wrong), wrong[:3]))
    with safe_open(os.path.join(folder, "fp32", "model.safetensors"), "np") as f:
        sample = sorted(expected)[::997]
        wrong = [k for k in sample if not np.array_equal(f.get_tensor(k), expected[k].astype(np.float32))]
        check(not wrong, "fp32/model.safetensors: %d of %d sampled tensors differ, e.g. %s" % (len(wrong), len(sample), wrong[:3]))

    served = set()
    tensors = os.path.join(folder, "tensors")
    for root, _, files in os.walk(tensors):
        for name in files:
            with open(os.path.join(root, name), "rb") as fh:
                served.add(hashlib.sha256(fh.read()).hexdigest())
    check(served == digests, "tensors/ holds %d files, %d of them blobs" % (len(served), len(served & digests)))

    for w in failed:
        print("FAIL", w)
    print("%d passed, %d failed" % (passed, len(failed)))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
