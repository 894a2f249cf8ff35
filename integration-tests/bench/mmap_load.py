#!/usr/bin/env python3
"""mmap through the mount against read (issue 37, point 3): how fast a file that is not kernel passthrough loads when a
tool maps it (llama.cpp does by default) instead of reading it, and what the kernel's read-ahead does to that.

Usage: mmap_load.py JAR WORKDIR [--hidden H --layers N --vocab V] [--rounds R] [--java JAVA] [--ra-kb K,K,...]

Store: bench/load_time.py's (make_load_store.py), made in WORKDIR/store-<shape> unless there. Files measured, each
where the tree has it: the synthesized `load-st/model.gguf` (converted data), the reassembled
`load-st/model.safetensors` (blob slices; not passthrough), the GGUF folder's `load-gguf/fp32/model.safetensors`
(converted) and the passthrough `load-gguf/model.gguf` (the kernel maps the blob: the reference for the mount).

One measurement = a fresh `modelfs mount` (nothing converted yet, the FUSE file's page cache empty), the blobs in the
page cache (read once before: the disk is not what is measured), the mount's read-ahead (`read_ahead_kb` of its bdi,
root only) set to one of --ra-kb, then the whole file loaded once by one method, in this process:
  * read       sequential read(2) of 1 MiB blocks (what `cat` and transformers' safetensors loader do);
  * mmap       mmap(2), then one byte of every page touched in file order (page faults: the kernel's read-around);
  * willneed   mmap, madvise(MADV_WILLNEED) over the whole file, then the same touches (llama.cpp's llama_mmap with
               its default prefetch);
  * sequential mmap, madvise(MADV_SEQUENTIAL), then the same touches.
The same four methods on a local copy of the same bytes (WORKDIR/store-<shape>/mmap-local, page cache warm) give the
local figure. Prints a Markdown table: medians over --rounds of GB/s per file, method and read-ahead, and mount/local.
"""
import mmap
import os
import shutil
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import load_time as L  # noqa: E402

FILES = [  # (path in the mount, what it is)
    ("load-st/model.gguf", "synthesized GGUF (converted)"),
    ("load-st/model.safetensors", "reassembled safetensors (blob slices)"),
    ("load-gguf/fp32/model.safetensors", "GGUF folder f32 (converted)"),
    ("load-gguf/model.gguf", "passthrough GGUF (the blob)"),
]
METHODS = ["read", "mmap", "willneed", "sequential"]
PAGE = mmap.PAGESIZE


def load(path, method):
    """Seconds to bring every byte of `path` into this process by `method`; the file's size."""
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        t0 = time.perf_counter()
        if method == "read":
            buf = bytearray(1 << 20)
            view = memoryview(buf)
            while os.readv(fd, [view]) > 0:
                pass
        else:
            m = mmap.mmap(fd, size, prot=mmap.PROT_READ)
            try:
                if method == "willneed":
                    m.madvise(mmap.MADV_WILLNEED)
                elif method == "sequential":
                    m.madvise(mmap.MADV_SEQUENTIAL)
                a = np.frombuffer(m, dtype=np.uint8)
                int(a[::PAGE].sum())                     # one byte of every page, in file order
                del a
            finally:
                m.close()
        return time.perf_counter() - t0, size
    finally:
        os.close(fd)


def set_read_ahead(mnt, kb):
    """Sets the mount's bdi read-ahead; returns the value it had."""
    st = os.stat(mnt)
    f = f"/sys/class/bdi/{os.major(st.st_dev)}:{os.minor(st.st_dev)}/read_ahead_kb"
    was = int(open(f).read())
    with open(f, "w") as out:
        out.write(str(kb))
    return was


def main():
    ap = L.store_arguments()
    ap.add_argument("--ra-kb", default="128,1024", help="the mount's read_ahead_kb values to compare (kernel default 128)")
    a = ap.parse_args()
    a.work = os.path.abspath(a.work)
    if os.geteuid() != 0:
        sys.exit("mmap_load.py sets the mount's read_ahead_kb: run it as root")
    ras = [int(x) for x in a.ra_kb.split(",")]
    out, store = L.ensure_store(a)
    mnt = os.path.join(a.work, "mnt")
    local = os.path.join(out, "mmap-local")
    m = L.Mount(a, store, mnt, "--no-warmup")
    try:
        files = [(p, what) for p, what in FILES if os.path.isfile(os.path.join(mnt, p))]
        for p, _ in files:
            dst = os.path.join(local, p)
            if not os.path.isfile(dst):
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copyfile(os.path.join(mnt, p), dst)
    finally:
        m.stop()
    missing = [p for p, _ in FILES if p not in dict(files)]
    blobs = sorted(os.path.join(store, "blobs", b) for b in os.listdir(os.path.join(store, "blobs")))
    gbs = {}
    for r in range(a.rounds):
        for p, _ in files:
            for method in METHODS:
                for ra in ras:
                    L.read_all(blobs)
                    m = L.Mount(a, store, mnt)
                    try:
                        set_read_ahead(mnt, ra)
                        s, size = load(os.path.join(mnt, p), method)
                    finally:
                        m.stop()
                    gbs.setdefault((p, method, ra), []).append(size / s / 1e9)
                    print(f"round {r + 1} {p:34} {method:10} ra {ra:5} KiB {size / s / 1e9:6.2f} GB/s", file=sys.stderr, flush=True)
                L.read_all([os.path.join(local, p)])
                s, size = load(os.path.join(local, p), method)
                gbs.setdefault((p, method, "local"), []).append(size / s / 1e9)
    sizes = {p: os.path.getsize(os.path.join(local, p)) for p, _ in files}
    print(f"Store: hidden {a.hidden}, {a.layers} layers, vocab {a.vocab}; medians of {a.rounds} rounds, GB/s; fresh mount per "
          f"measurement, blobs in the page cache; ratio = mount / local copy (page cache warm)."
          + (f" Not in this tree: {', '.join(missing)}." if missing else "") + "\n")
    print("| file | method | " + " | ".join(f"mount, ra {ra} KiB" for ra in ras) + " | local | best ratio |")
    print("|---|---|" + "---|" * (len(ras) + 2))
    for p, what in files:
        for method in METHODS:
            cells = [L.median(gbs[(p, method, ra)]) for ra in ras]
            loc = L.median(gbs[(p, method, "local")])
            print(f"| `{p}` ({what}, {sizes[p] / 1e6:.0f} MB) | {method} | " + " | ".join(f"{c:.2f}" for c in cells)
                  + f" | {loc:.2f} | {max(cells) / loc:.2f} |")


if __name__ == "__main__":
    main()
