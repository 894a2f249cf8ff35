#!/usr/bin/env python3
"""Checks a whole-blob file of a modelfs mount against the blob it shows, through the clients that map it.

    check_passthrough.py MOUNTED_GGUF BLOB

  * gguf-py's GGUFReader (numpy.memmap of the file) reads the same key/value fields and the same tensors
    (names, types, shapes and every byte of data) from the mounted file as from the blob itself;
  * an mmap(2) of the mounted file equals the blob byte for byte, and so do pread(2) calls at
    page-unaligned offsets on two descriptors held open at once.
Prints "OK <tensors> tensors, <bytes> bytes" or the first difference, and exits non-zero on a difference.
"""
from __future__ import annotations

import mmap
import os
import sys

import numpy as np
from gguf import GGUFReader


def main() -> int:
    mounted, blob = sys.argv[1], sys.argv[2]
    a, b = GGUFReader(mounted), GGUFReader(blob)
    fa = {k: (f.types, [bytes(p.tobytes()) for p in f.parts]) for k, f in a.fields.items()}
    fb = {k: (f.types, [bytes(p.tobytes()) for p in f.parts]) for k, f in b.fields.items()}
    if fa != fb:
        print("key/value fields differ:", sorted(set(fa) ^ set(fb)) or "values")
        return 1
    if len(a.tensors) != len(b.tensors) or not a.tensors:
        print(f"tensor counts differ: {len(a.tensors)} != {len(b.tensors)}")
        return 1
    for ta, tb in zip(a.tensors, b.tensors):
        if (ta.name, ta.tensor_type, list(ta.shape)) != (tb.name, tb.tensor_type, list(tb.shape)):
            print("tensor differs:", ta.name, tb.name)
            return 1
        if not np.array_equal(np.asarray(ta.data).view(np.uint8), np.asarray(tb.data).view(np.uint8)):
            print("tensor data differs:", ta.name)
            return 1
    with open(blob, "rb") as f:
        truth = f.read()
    with open(mounted, "rb") as f, mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ) as m:
        if m[:] != truth:
            print("mmap of the mounted file differs from the blob")
            return 1
    fd1, fd2 = os.open(mounted, os.O_RDONLY), os.open(mounted, os.O_RDONLY)
    try:
        for i, off in enumerate(range(1, len(truth), max(1, len(truth) // 97))):
            got = os.pread(fd1 if i % 2 else fd2, 12345, off)
            if got != truth[off:off + 12345]:
                print("pread at", off, "differs")
                return 1
    finally:
        os.close(fd1)
        os.close(fd2)
    print(f"OK {len(a.tensors)} tensors, {len(truth)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
