#!/usr/bin/env python3
"""One weight set per folder (docs/SEMANTICS.md "One weight set per folder"), over a whole mount.

    check_one_weight_set.py MOUNT [--skip-unreadable]

Walks every folder of the mount. In each folder outside tensors/ and ollama/ (and their subfolders),
no tensor name may appear in two of the folder's *.safetensors files (vLLM loads every *.safetensors of a
folder without an index, mlx-lm loads model*.safetensors, mflux every *.safetensors of a component
folder), and no file may carry a variant= name (<weights>.<fp32|fp16|bf16>.safetensors: the variants are
the sibling folders fp32/, fp16/, bf16/). The headers are read with the safetensors package's own
parser (safe_open); a file it cannot open is a failure too, except that --skip-unreadable (the hostile
store, whose broken blobs fail reads with EIO/EACCES/ENOENT on purpose) skips files whose read fails
with an OSError. Prints one line per failed check and
"N passed, M failed"; exit status 1 on failure or when no weight file was found.
"""
from __future__ import annotations

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_lib as L  # noqa: E402

SKIPPED = {"tensors", "ollama"}
VARIANT_NAME = re.compile(r".+\.(fp32|fp16|bf16)\.safetensors")


def main(argv):
    if len(argv) not in (2, 3) or (len(argv) == 3 and argv[2] != "--skip-unreadable"):
        print("usage: check_one_weight_set.py MOUNT [--skip-unreadable]", file=sys.stderr)
        return 2
    skip_unreadable = len(argv) == 3
    from safetensors import safe_open
    r = L.Report("check_one_weight_set")
    mount = os.path.abspath(argv[1])
    folders = files = 0
    for dirpath, dirnames, filenames in os.walk(mount):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED)
        weights = sorted(f for f in filenames if f.endswith(".safetensors"))
        if not weights:
            continue
        rel = os.path.relpath(dirpath, mount)
        folders += 1
        owner, dups = {}, []
        for f in weights:
            files += 1
            r.ok(not VARIANT_NAME.fullmatch(f), f"{rel}/{f}: a variant= file name (use the {f.split('.')[-2]}/ folder)")
            try:
                with safe_open(os.path.join(dirpath, f), framework="np") as st:
                    keys = list(st.keys())
            except OSError as ex:
                if not skip_unreadable:
                    r.fail(f"{rel}/{f}: cannot be read: {ex}")
                continue
            except Exception as ex:  # noqa: BLE001
                r.fail(f"{rel}/{f}: safetensors cannot open it: {type(ex).__name__}: {ex}")
                continue
            for k in keys:
                if k in owner:
                    dups.append(f"{k} ({owner[k]}, {f})")
                else:
                    owner[k] = f
        r.ok(not dups, f"{rel}: {len(dups)} tensor names in two files, e.g. {dups[:3]}")
    print(f"{folders} weight folders, {files} safetensors files walked")
    r.ok(files > 0, "no *.safetensors file found outside tensors/ and ollama/")
    return r.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
