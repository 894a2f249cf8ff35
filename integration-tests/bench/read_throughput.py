#!/usr/bin/env python3
"""Read throughput of modelfs files next to bindfs (a C FUSE filesystem on the same libfuse2), same run.

Usage: read_throughput.py JAR WORKDIR [--mib 512] [--rounds 3] [--stream-gb 20] [--java JAVA]

Writes a store with one GGUF (Q8_0 and Q4_K tensors) and one safetensors model (an int4 g64 tensor
and a bf16 tensor, two blobs), mounts it with the real CLI and mounts bindfs (`-r -o kernel_cache`)
over its blobs/, then, in each of --rounds rounds (medians reported):
  - (after one unmeasured warm-up read of each file, for the JIT)
  - first reads: `cat FILE > /dev/null` after dropping just that file's pages
    (posix_fadvise DONTNEED; the blobs themselves stay in the page cache, as in the issue);
  - page-cache reads: the third read of the same file;
  - converted first reads with the modelfs JVM pinned to 1 core and to 2 cores (`taskset -a -p`);
  - 4 processes reading 4 different converted files at once against the same 4 read one by one;
once: fio 4 KiB random reads (4 jobs, O_DIRECT so every read is a FUSE request) on the passthrough
file and on bindfs, and the JVM's peak RSS while streaming --stream-gb GB of converted files.
Prints Markdown tables: GB/s of the file read (of output, for converted files) and the ratios.
JVM flags come from MODELFS_JVM_FLAGS (scripts/lib.sh passes the launcher's).
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import threading
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


def drop(path):
    """Drops one file's pages from the page cache (the next read goes to its filesystem)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def first_read_gbs(path):
    drop(path)
    return os.path.getsize(path) / cat_seconds([path]) / 1e9


def cached_read_gbs(path):
    cat_seconds([path])
    cat_seconds([path])
    return os.path.getsize(path) / cat_seconds([path]) / 1e9


def parallel_gbs(paths):
    """Aggregate GB/s of one `cat` per file, all at once (after dropping their pages)."""
    for p in paths:
        drop(p)
    t = time.perf_counter()
    procs = [subprocess.Popen(["cat", p], stdout=subprocess.DEVNULL) for p in paths]
    for p in procs:
        p.wait()
    return sum(os.path.getsize(p) for p in paths) / (time.perf_counter() - t) / 1e9


def serial_gbs(paths):
    total = 0.0
    for p in paths:
        drop(p)
        total += cat_seconds([p])
    return sum(os.path.getsize(p) for p in paths) / total / 1e9


def pin(pid, cpus):
    subprocess.run(["taskset", "-a", "-p", "-c", cpus, str(pid)], stdout=subprocess.DEVNULL, check=True)


def fio_iops(path, seconds=5):
    r = subprocess.run(["fio", "--name=rr", "--filename=" + path, "--readonly", "--rw=randread", "--bs=4k",
                        "--numjobs=4", "--ioengine=psync", "--direct=1", "--time_based", "--runtime=" + str(seconds),
                        "--group_reporting", "--output-format=json"], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)["jobs"][0]["read"]["iops"]


def rss_kib(pid):
    """(VmRSS, RssAnon) in KiB: all resident pages, and those not backed by a file (mapped blobs are file pages)."""
    v = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k = line.split(":")[0]
            if k in ("VmRSS", "RssAnon"):
                v[k] = int(line.split()[1])
    return v.get("VmRSS", 0), v.get("RssAnon", 0)


def stream_peak_rss(pid, paths, gb):
    """Reads the converted files round-robin (pages dropped first) until gb GB went by; peak (RSS, anon RSS) in MiB."""
    done, peak, anon, i = 0, 0, 0, 0
    while done < gb * 1e9:
        p = paths[i % len(paths)]
        drop(p)
        proc = subprocess.Popen(["cat", p], stdout=subprocess.DEVNULL)
        while proc.poll() is None:
            rss, a = rss_kib(pid)
            peak, anon = max(peak, rss), max(anon, a)
            time.sleep(0.05)
        done += os.path.getsize(p)
        i += 1
    return peak / 1024, anon / 1024, done / 1e9


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def fmt(xs):
    return f"{median(xs):.2f} ({min(xs):.2f}–{max(xs):.2f})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("jar")
    ap.add_argument("work")
    ap.add_argument("--mib", type=int, default=512, help="approximate size of each model")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--stream-gb", type=float, default=20)
    ap.add_argument("--cache-size", default="512M")
    ap.add_argument("--java", default=os.environ.get("JAVA", "java"))
    a = ap.parse_args()
    store, mnt, bmnt = (os.path.join(a.work, d) for d in ("store", "mnt", "bindfs"))
    os.makedirs(mnt, exist_ok=True)
    os.makedirs(bmnt, exist_ok=True)
    if os.path.isdir(os.path.join(store, "manifests")):
        with open(os.path.join(a.work, "blobs.json")) as f:
            blobs = json.load(f)
    else:
        blobs = build_store(store, a.mib)
        with open(os.path.join(a.work, "blobs.json"), "w") as f:
            json.dump(blobs, f)
    flags = os.environ.get("MODELFS_JVM_FLAGS", "--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow -Xms32m -XX:+UseSerialGC -XX:-UseProfiledLoopPredicate").split()
    proc = mount(a, flags, store, mnt)
    subprocess.run(["bindfs", "-r", "-o", "kernel_cache", os.path.join(store, "blobs"), bmnt], check=True)
    conv = {}
    try:
        m = lambda p: os.path.join(mnt, p)
        gguf_blob = os.path.join(bmnt, "sha256-" + blobs["gguf"][0])
        cache_blobs(store, blobs)
        passthrough = m("big-gguf/model.gguf")
        reassembled = m("big-st/model.safetensors")
        conv = {"int4+bf16 -> bf16 (big-st/bf16/model.safetensors)": m("big-st/bf16/model.safetensors"),
                "Q8_0+Q4_K -> f32 (big-gguf/model.fp32.gguf)": m("big-gguf/model.fp32.gguf")}
        four = [m("big-st/bf16/model.safetensors"), m("big-st/fp16/model.safetensors"),
                m("big-gguf/bf16/model.safetensors"), m("big-gguf/fp16/model.safetensors")]
        r = {k: [] for k in ["bindfs1", "pass1", "reas1", "bindfs3", "pass3", "par", "ser"]
             + [c + "@1" for c in conv] + [c + "@2" for c in conv]}
        cold = {p: first_read_gbs(p) for p in [passthrough, *conv.values()]}   # JIT warm-up, reported apart
        first_read_gbs(reassembled)
        for _ in range(a.rounds):
            # the converted files of the last round filled the page cache: bring the blobs back first, or the
            # first of the two readers of a blob (bindfs) pays the disk for both
            cache_blobs(store, blobs)
            r["bindfs1"].append(first_read_gbs(gguf_blob))
            r["pass1"].append(first_read_gbs(passthrough))
            r["reas1"].append(first_read_gbs(reassembled))
            r["bindfs3"].append(cached_read_gbs(gguf_blob))
            r["pass3"].append(cached_read_gbs(passthrough))
            for cpus, tag in (("0", "@1"), ("0,1", "@2")):
                pin(proc.pid, cpus)
                cache_blobs(store, blobs)
                for c, p in conv.items():
                    r[c + tag].append(first_read_gbs(p))
            r["ser"].append(serial_gbs(four))
            r["par"].append(parallel_gbs(four))
        b1 = median(r["bindfs1"])
        print(f"Medians of {a.rounds} rounds (min–max in brackets), GB/s; GB = 10^9 bytes; converted files in GB/s of output.")
        print()
        print("| read | modelfs | peer / reference | ratio |")
        print("|---|---|---|---|")
        print(f"| `model.gguf` first read (passthrough) | {fmt(r['pass1'])} | bindfs, same blob: {fmt(r['bindfs1'])} | {median(r['pass1']) / b1:.2f} |")
        for c in conv:
            print(f"| {c}, first read, 2 cores | {fmt(r[c + '@2'])} | bindfs {b1:.2f} | {median(r[c + '@2']) / b1:.2f} |")
            print(f"| {c}, first read, 1 core | {fmt(r[c + '@1'])} | same file, 2 cores | {median(r[c + '@2']) / median(r[c + '@1']):.2f}x from the 2nd core |")
        print(f"| `model.safetensors` (as stored, reassembled from 2 blobs), first read | {fmt(r['reas1'])} | modelfs passthrough {median(r['pass1']):.2f} | {median(r['reas1']) / median(r['pass1']):.2f} |")
        print(f"| `model.gguf` third read (page cache) | {fmt(r['pass3'])} | bindfs {fmt(r['bindfs3'])} | {median(r['pass3']) / median(r['bindfs3']):.2f} |")
        print(f"| 4 converted files read at once, aggregate | {fmt(r['par'])} | the same 4 one after another {fmt(r['ser'])} | {median(r['par']) / median(r['ser']):.2f} |")
        print()
        print("Right after mounting, the JIT has compiled nothing yet (the table's reads come after one warm-up read of "
              "each file): first reads of a fresh mount, GB/s: passthrough " + f"{cold[passthrough]:.2f}, "
              + ", ".join(f"{c} {cold[p]:.2f}" for c, p in conv.items()) + ".")
        print()
        fm, fb = fio_iops(passthrough), fio_iops(gguf_blob)
        print(f"fio, 4 KiB random reads, 4 jobs, O_DIRECT, 5 s: modelfs `model.gguf` {fm / 1000:.0f}k IOPS, bindfs {fb / 1000:.0f}k IOPS ({fm / fb:.2f}).")
        peak, anon, gb = stream_peak_rss(proc.pid, four + list(conv.values()), a.stream_gb)
        print(f"Peak RSS of the modelfs JVM while streaming {gb:.1f} GB of converted files (--cache-size {a.cache_size}): "
              f"{peak:.0f} MiB, of which anonymous (not the page cache of mapped blobs) {anon:.0f} MiB.")
    finally:
        unmount(proc, mnt)
    # the same converted first reads with the scalar kernels, to show what the Vector API ones bring
    proc = mount(a, flags + ["-Dmodelfs.kernels=scalar"], store, mnt)
    try:
        scalar = {c: [] for c in conv}
        for p in conv.values():
            first_read_gbs(p)                                            # JIT warm-up, not measured
        for _ in range(a.rounds):
            cache_blobs(store, blobs)
            for c, p in conv.items():
                scalar[c].append(first_read_gbs(p))
        print()
        print("| read, first, 2 cores | scalar kernels (`-Dmodelfs.kernels=scalar`) | Vector API kernels (above) | ratio |")
        print("|---|---|---|---|")
        for c in conv:
            print(f"| {c} | {fmt(scalar[c])} | {median(r[c + '@2']):.2f} | {median(r[c + '@2']) / median(scalar[c]):.2f}x |")
    finally:
        unmount(proc, mnt)
        subprocess.run(["fusermount", "-u", bmnt])


def cache_blobs(store, blobs):
    """Reads every blob of the store once, so that first reads find them in the page cache."""
    for d in blobs["gguf"] + blobs["st"]:
        cat_seconds([os.path.join(store, "blobs", "sha256-" + d)])


def mount(a, flags, store, mnt):
    """Starts `modelfs mount` with these JVM flags; returns once the models are listed."""
    proc = subprocess.Popen([a.java, *flags, "-jar", a.jar, "mount", "--store", store, "--no-cache-dir", "--cache-size", a.cache_size, mnt],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.time() + 120
    while not os.path.isdir(os.path.join(mnt, "big-gguf")):
        if time.time() > deadline or proc.poll() is not None:
            sys.exit("mount failed: " + (proc.stdout.read().decode() if proc.poll() is not None else "timeout"))
        time.sleep(0.1)
    # the warm-up runs behind the served tree (converted opens wait for it): reads start once it is done; the output
    # is drained on a thread of its own from then on
    warmed = threading.Event()

    def drain():
        for line in proc.stdout:
            if b"warm-up done" in line:
                warmed.set()
        warmed.set()
    threading.Thread(target=drain, daemon=True).start()
    if not warmed.wait(120) or proc.poll() is not None:
        sys.exit("the mount's warm-up did not end")
    return proc


def unmount(proc, mnt):
    subprocess.run(["fusermount", "-u", mnt])
    proc.terminate()
    proc.wait(30)


if __name__ == "__main__":
    main()
