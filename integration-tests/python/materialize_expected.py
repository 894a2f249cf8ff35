#!/usr/bin/env python3
"""Build a "reference mount": a plain directory holding the tree that expected.json describes,
made of regular files (for self-testing the checkers without modelfs).

    materialize_expected.py OUT DEST [--corrupt REL_PATH]

Passthrough files are copied from the blobs named in expected.json, converted safetensors / GGUF
files are assembled from their sources and oracles (Go-style safetensors header, ggml GGUF layout),
file modes are set to 0444 and directories to 0555. Paths listed under "errors" (ENOENT/EIO) cannot
be represented by regular files and are left out; run the checkers with --reference on the result.
To exercise EROFS, bind-mount DEST read-only (mount --bind DEST M && mount -o remount,bind,ro M).
--corrupt flips one byte in the middle of REL_PATH after building (to prove the checkers fail).
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_lib as L  # noqa: E402


class Sources:
    def __init__(self, out, store):
        self.out = out
        self.store = store
        self.cache = {}

    def blob(self, digest: str) -> bytes:
        if digest not in self.cache:
            hexd = digest.split(":", 1)[1]
            for name in ("sha256-" + hexd, "sha256:" + hexd):
                p = os.path.join(self.store, "blobs", name)
                if os.path.exists(p):
                    with open(p, "rb") as f:
                        self.cache[digest] = f.read()
                    break
            else:
                raise FileNotFoundError(digest)
        return self.cache[digest]

    def tensor_bytes(self, src) -> bytes:
        buf = self.blob(src["blob"])
        if "key" in src:
            return L.st_tensor_bytes(buf, L.st_parse(buf), src["key"])
        g = L.gguf_read(buf)
        t = next(t for t in g["tensors"] if t["name"] == src["gguf_tensor"])
        return L.gguf_tensor_bytes(buf, g, t)

    def expected_bytes(self, t, dtype) -> bytes:
        if "oracle" in t:
            return L.f32_to_dtype_bytes(np.load(os.path.join(self.out, t["oracle"])), dtype)
        return self.tensor_bytes(t["source"])


def write(dest, rel, data):
    p = os.path.join(dest, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(data)


def build_safetensors(src: Sources, conv) -> bytes:
    entries = []
    for key, t in conv["tensors"].items():
        entries.append((key, t["dtype"], t["shape"], src.expected_bytes(t, t["dtype"])))
    return L.st_go(entries, {"format": "pt"})


def build_gguf(src: Sources, conv) -> bytes:
    kvs = []
    for k, vt, v in conv["kvs"]:
        if vt == "ARRAY":
            kvs.append((k, vt, v["values"], v["type"]))
        else:
            kvs.append((k, vt, v))
    tensors = []
    for t in conv["tensors"]:
        tensors.append((t["name"], t["ne"], L.GGML_ID[t["type"]], src.expected_bytes(t, t["type"])))
    return L.gguf_write(kvs, tensors, conv["alignment"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("dest")
    ap.add_argument("--corrupt", action="append", default=[])
    a = ap.parse_args()
    exp = L.load_expected(a.out)
    src = Sources(a.out, exp["store"] if os.path.isdir(exp["store"]) else os.path.join(a.out, "store"))
    os.makedirs(a.dest, exist_ok=True)
    for d, m in exp["models"].items():
        base = os.path.join(a.dest, d)
        os.makedirs(base, exist_ok=True)
        for sub in m["dirs"]:
            os.makedirs(os.path.join(base, sub), exist_ok=True)
        mpath = os.path.join(src.store, m["manifest"])
        for rel, f in m["files"].items():
            if rel == "ollama/manifest.json":
                with open(mpath, "rb") as fh:
                    data = fh.read()
            elif "text" in f:
                data = f["text"].encode()
            else:
                data = src.blob(f["blob"])
            assert L.sha256_hex(data) == f["sha256"], (d, rel)
            write(base, rel, data)
        for rel, conv in m["converted"].items():
            write(base, rel, build_safetensors(src, conv) if conv["kind"] == "safetensors" else build_gguf(src, conv))
    for rel in a.corrupt:
        p = os.path.join(a.dest, rel)
        with open(p, "r+b") as f:
            n = os.path.getsize(p)
            f.seek(n // 2)
            b = f.read(1)
            f.seek(n // 2)
            f.write(bytes([b[0] ^ 0x01]))
        print(f"corrupted one byte of {rel} at offset {os.path.getsize(p) // 2}")
    for dirpath, dirnames, filenames in os.walk(a.dest, topdown=False):
        for fn in filenames:
            os.chmod(os.path.join(dirpath, fn), 0o444)
        os.chmod(dirpath, 0o555)
    print(f"reference tree written to {a.dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
