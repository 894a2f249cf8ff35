#!/usr/bin/env python3
"""Read throughput of modelfs files against a plain `cat` of their blobs, measured in the same run.

Usage: read_throughput.py JAR WORKDIR [--mib 512]

Writes a store with one large GGUF (Q8_0 and Q4_K tensors) and one safetensors model (an int4
tensor, a bf16 tensor), mounts it with the real CLI, and times `cat FILE > /dev/null`:
  - the raw blobs (cold = first read after writing them is not possible to guarantee without
    dropping caches, so every file is read twice and both runs are reported);
  - the passthrough model.gguf (FUSE path, then page-cache path);
  - converted variants (model.fp32.gguf, model.bf16.safetensors, <st>/model.fp32.safetensors).
Prints a Markdown table with GB/s (of the file read) and the ratio to `cat` of the blob(s).
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import time

import numpy as np
import gguf


def sha(b):
    return hashlib.sha256(b).hexdigest()


def put_blob(store, data):
    d = sha(data)
    with open(os.path.join(store, "blobs", "sha256-" + d), "wb") as f:
        f.write(data)
    return d


def put_blob_file(store, path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 24), b""):
            h.update(chunk)
    d = h.hexdigest()
    os.replace(path, os.path.join(store, "blobs", "sha256-" + d))
    return d, os.path.getsize(os.path.join(store, "blobs", "sha256-" + d))


def manifest(store, path, config, layers):
    cfg = json.dumps(config).encode()
    c = put_blob(store, cfg)
    m = {"schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
         "config": {"mediaType": "application/vnd.docker.container.image.v1+json", "digest": "sha256:" + c, "size": len(cfg)},
         "layers": layers}
    p = os.path.join(store, "manifests", path)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as f:
        json.dump(m, f)


def q8_0_blocks(rng, n_blocks):
    b = np.zeros((n_blocks, 34), dtype=np.uint8)
    d = (rng.random(n_blocks, dtype=np.float32) * 0.01 + 0.001).astype(np.float16)
    b[:, 0:2] = d.view(np.uint8).reshape(-1, 2)
    b[:, 2:] = rng.integers(0, 256, (n_blocks, 32), dtype=np.uint8)
    return b


def q4_k_blocks(rng, n_blocks):
    b = rng.integers(0, 256, (n_blocks, 144), dtype=np.uint8)
    d = (rng.random((n_blocks, 2), dtype=np.float32) * 0.01 + 0.001).astype(np.float16)
    b[:, 0:4] = d.view(np.uint8).reshape(-1, 4)
    return b


def build_store(store, mib):
    os.makedirs(os.path.join(store, "blobs"), exist_ok=True)
    rng = np.random.default_rng(0)
    cols = 4096
    # GGUF: half the bytes Q8_0, half Q4_K
    rows8 = max(1, (mib << 19) // (cols // 32 * 34))
    rows4 = max(1, (mib << 19) // (cols // 256 * 144))
    tmp = os.path.join(store, "model.gguf.tmp")
    w = gguf.GGUFWriter(tmp, "llama")
    w.add_tensor("blk.0.ffn_up.weight", q8_0_blocks(rng, rows8 * cols // 32).reshape(rows8, -1),
                 raw_dtype=gguf.GGMLQuantizationType.Q8_0)
    w.add_tensor("blk.0.ffn_down.weight", q4_k_blocks(rng, rows4 * cols // 256).reshape(rows4, -1),
                 raw_dtype=gguf.GGMLQuantizationType.Q4_K)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    gd, gsize = put_blob_file(store, tmp)
    manifest(store, "registry.ollama.ai/library/big-gguf/latest",
             {"model_format": "gguf", "file_type": "Q8_0"},
             [{"mediaType": "application/vnd.ollama.image.model", "digest": "sha256:" + gd, "size": gsize}])
    # safetensors: an int4 g64 tensor (MLX layout) and a bf16 tensor, each its own blob
    from safetensors.numpy import save
    rows = max(64, (mib << 19) // (cols // 2))
    codes = rng.integers(0, 2 ** 32, (rows, cols // 8), dtype=np.uint32)
    scale = (rng.random((rows, cols // 64), dtype=np.float32) * 0.01).astype(np.float32)
    import ml_dtypes
    q = save({"model.layers.0.mlp.up_proj.weight": codes,
              "model.layers.0.mlp.up_proj.weight.scale": scale.astype(ml_dtypes.bfloat16),
              "model.layers.0.mlp.up_proj.weight.bias": (-8 * scale).astype(ml_dtypes.bfloat16)},
             metadata={"quant_type": "int4", "group_size": "64"})
    qd = put_blob(store, q)
    brow = max(1, (mib << 19) // (cols * 2))
    bf = save({"model.embed_tokens.weight": rng.standard_normal((brow, cols), dtype=np.float32).astype(ml_dtypes.bfloat16)})
    bd = put_blob(store, bf)
    cfg = json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama"}).encode()
    cd = put_blob(store, cfg)
    manifest(store, "registry.ollama.ai/library/big-st/latest",
             {"model_format": "safetensors", "file_type": "int4"},
             [{"mediaType": "application/vnd.ollama.image.tensor", "digest": "sha256:" + qd, "size": len(q), "name": "model.layers.0.mlp.up_proj.weight"},
              {"mediaType": "application/vnd.ollama.image.tensor", "digest": "sha256:" + bd, "size": len(bf), "name": "model.embed_tokens.weight"},
              {"mediaType": "application/vnd.ollama.image.json", "digest": "sha256:" + cd, "size": len(cfg), "name": "config.json"}])
    return {"gguf": [gd], "st": [qd, bd]}


def cat_seconds(paths):
    t = time.perf_counter()
    subprocess.run(["cat", *paths], stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("jar")
    ap.add_argument("work")
    ap.add_argument("--mib", type=int, default=512, help="approximate size of each model")
    ap.add_argument("--java", default=os.environ.get("JAVA", "java"))
    a = ap.parse_args()
    store, mnt = os.path.join(a.work, "store"), os.path.join(a.work, "mnt")
    os.makedirs(mnt, exist_ok=True)
    blobs = build_store(store, a.mib)
    proc = subprocess.Popen([a.java, "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow",
                             "-jar", a.jar, "mount", "--store", store, "--cache-size", "256M", mnt],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.time() + 60
    while not os.path.isdir(os.path.join(mnt, "big-gguf")):
        if time.time() > deadline or proc.poll() is not None:
            sys.exit("mount failed: " + (proc.stdout.read().decode() if proc.poll() is not None else "timeout"))
        time.sleep(0.1)
    try:
        b = lambda ds: [os.path.join(store, "blobs", "sha256-" + d) for d in ds]
        cases = [
            ("big-gguf/model.gguf (passthrough)", [os.path.join(mnt, "big-gguf/model.gguf")], b(blobs["gguf"])),
            ("big-gguf/model.fp32.gguf (Q8_0+Q4_K -> F32)", [os.path.join(mnt, "big-gguf/model.fp32.gguf")], b(blobs["gguf"])),
            ("big-gguf/model.bf16.safetensors (-> BF16)", [os.path.join(mnt, "big-gguf/model.bf16.safetensors")], b(blobs["gguf"])),
            ("big-st/model.safetensors (reassembled, as stored)", [os.path.join(mnt, "big-st/model.safetensors")], b(blobs["st"])),
            ("big-st/model.fp32.safetensors (int4+bf16 -> F32)", [os.path.join(mnt, "big-st/model.fp32.safetensors")], b(blobs["st"])),
        ]
        print("| file | size | cat of blob(s), warm | 1st read | GB/s | ratio | 2nd read | GB/s | ratio |")
        print("|---|---|---|---|---|---|---|---|---|")
        for name, files, raw in cases:
            cat_seconds(raw)                       # warm the blob pages
            raw_s = min(cat_seconds(raw) for _ in range(2))
            raw_bytes = sum(os.path.getsize(p) for p in raw)
            size = sum(os.path.getsize(p) for p in files)
            first = cat_seconds(files)
            second = cat_seconds(files)
            raw_gbs = raw_bytes / raw_s / 1e9
            g1, g2 = size / first / 1e9, size / second / 1e9
            print(f"| {name} | {size / 2**20:.0f} MiB | {raw_gbs:.2f} GB/s | {first:.2f} s | {g1:.2f} | {g1 / raw_gbs:.2f} | {second:.2f} s | {g2:.2f} | {g2 / raw_gbs:.2f} |")
    finally:
        subprocess.run(["fusermount", "-u", mnt])
        proc.terminate()
        proc.wait(30)


if __name__ == "__main__":
    main()
