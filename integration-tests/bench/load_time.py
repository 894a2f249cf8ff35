#!/usr/bin/env python3
"""Whole tools loading models from a fresh modelfs mount against local copies of the same bytes (issue 37, point 1).

Usage: load_time.py JAR WORKDIR [--hidden H --layers N --vocab V] [--rounds R] [--java JAVA] [--node DIR]
                    [--cache-dir] [--ahead] [--states S,S] [--cache-dir-size SIZE] [--bindfs] [--read-ahead-kb K] [--timeout S]

Store: make_load_store.py's (an `x/create` int4 Llama `load-st` and a Q4_K GGUF Llama `load-gguf` of the same shape),
made in WORKDIR/store-<shape> unless there. Local copies: each measured file or folder copied once from a mount to
WORKDIR/local (the same bytes the mount serves). For every round, case and state, one measurement = a fresh
`modelfs mount` (default warm-up; the time before it is listed is not counted), then the tool run on the mount, then
on the local copy, each a new process timed from its start (interpreter start and imports included, the same on
both sides) to:
  * transformers: `AutoModelForCausalLM.from_pretrained(folder, torch_dtype="auto")` and one forward pass of 4
    tokens (`load-st/bf16/`, converted from int4; `load-gguf/fp32/`, the GGUF's Hugging Face folder, f32);
  * diffusers: `DiffusionPipeline.from_pretrained(folder, torch_dtype=bfloat16)` of the image model's bf16/
    (`load-image`, converted from int4), to the loaded pipeline;
  * llama.cpp (node-llama-cpp, mmap): the first generated token of a 5-token prompt (`load-st/model.gguf`,
    synthesized; `load-gguf/model.gguf`, kernel passthrough of the blob; `load-dialect/model.gguf`, translated from
    Ollama's dialect: a new header, the tensor data read from the blob through modelfs, not passthrough);
states: cold = `sync; echo 3 > /proc/sys/vm/drop_caches` (root) right before each side's run, so blobs, local
copies and everything else come from disk; warm = the store's blobs and the local copy read once before (page
cache), but a fresh mount (nothing converted yet). With --cache-dir, a third state: a fresh mount with
`--cache-dir` that a previous mount filled (every case read once, then waited until that mount wrote nothing more into
the cache directory for 5 s: its complete files assembled), page cache warm for the blobs, the local copy and the
cache directory's complete files alike (issue 37 point 2, "converted once, then at local-file speed"); these mounts
do not convert ahead (--no-convert-ahead). With --ahead, another state: the first load after a pull, once modelfs has
converted ahead: a mount over an empty cache directory that nothing reads, converting ahead by default, waited for until
it has logged no new `converted ahead:` line for 10 s with nothing being written; then, as for cache-dir, fresh
mounts over that directory (converting ahead as by default: nothing is left to convert), page cache warm (ahead) or
dropped for both sides (ahead-cold: a pull, then a reboot). --states S,S runs only those states. A GGUF model's
`fp32/model.safetensors` has the bytes (and the complete-file name) of its converted-ahead `model.safetensors`; the
translated `model.gguf` is assembled whole once the filling mount's warm-up has read it; a case whose files are not
whole there is converted by its load, as on the warm state's mount.
With --bindfs, each warm measurement also times the tool on the local copy through a fresh `bindfs -o ro` mount of
the local folder (a C FUSE filesystem, the same libfuse2, no conversion; its source in the page cache, its own FUSE
page cache empty, as the fresh modelfs mount's is): what reading through FUSE alone costs against the page cache.
Prints one Markdown table: medians over --rounds of the seconds on the mount and locally, and local / mount
(1.00 = as fast as local files; targets: cold >= 0.8, warm >= 0.95).
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))

TRANSFORMERS = r"""
import sys, time
t0 = time.perf_counter()
import torch, transformers
torch.set_num_threads(2)
m = transformers.AutoModelForCausalLM.from_pretrained(sys.argv[1], torch_dtype="auto")
loaded = time.perf_counter()
with torch.no_grad():
    out = m(torch.tensor([[1, 17, 42, 99]]))
print(loaded - t0, time.perf_counter() - t0)
"""

DIFFUSERS = r"""
import sys, time
t0 = time.perf_counter()
import torch, diffusers
torch.set_num_threads(2)
pipe = diffusers.DiffusionPipeline.from_pretrained(sys.argv[1], torch_dtype=torch.bfloat16)
print(time.perf_counter() - t0)
"""

CASES = [  # (label, path in the mount, tool); IMAGE is the image model's folder (shape.json)
    ("transformers `from_pretrained(load-st/bf16/)` + forward (int4 -> bf16)", "load-st/bf16", "transformers"),
    ("transformers `from_pretrained(load-gguf/fp32/)` + forward (Q4_K GGUF -> f32)", "load-gguf/fp32", "transformers"),
    ("llama.cpp, synthesized `load-st/model.gguf`, to the first token", "load-st/model.gguf", "llama"),
    ("llama.cpp, passthrough `load-gguf/model.gguf`, to the first token", "load-gguf/model.gguf", "llama"),
    ("llama.cpp, translated `load-dialect/model.gguf` (Ollama's dialect, Llama 3 vocabulary), to the first token",
     "load-dialect/model.gguf", "llama"),
    ("diffusers `DiffusionPipeline.from_pretrained(load-image/bf16/)` (int4 -> bf16), loaded", "IMAGE/bf16", "diffusers"),
]


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def drop_caches():
    subprocess.run(["sync"], check=True)
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3")


def read_all(paths):
    for p in paths:
        for f in ([p] if os.path.isfile(p) else sorted(glob.glob(os.path.join(p, "**"), recursive=True))):
            if os.path.isfile(f):
                with open(f, "rb") as fh:
                    while fh.read(1 << 20):
                        pass


class Mount:
    """A fresh `modelfs mount` of the store, listed before it returns."""

    def __init__(self, a, store, mnt, *extra):
        os.makedirs(mnt, exist_ok=True)
        self.mnt = mnt
        self.log = tempfile.NamedTemporaryFile(prefix="modelfs-load-", suffix=".log", delete=False).name
        flags = os.environ.get("MODELFS_JVM_FLAGS", "--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow "
                               "-Xms32m -XX:+UseSerialGC --add-modules jdk.incubator.vector").split()
        with open(self.log, "w") as out:
            # the cache directory is on by default: every state but cache-dir converts afresh (--no-cache-dir)
            cache = [] if "--cache-dir" in extra else ["--no-cache-dir"]
            window = [] if a.read_ahead_kb is None else ["--read-ahead-kb", str(a.read_ahead_kb)]
            self.proc = subprocess.Popen([a.java, *flags, "-jar", a.jar, "mount", "--store", store, *cache, *window, *extra, mnt],
                                         stdout=out, stderr=subprocess.STDOUT)
        deadline = time.time() + 120
        while not os.path.isdir(os.path.join(mnt, "load-gguf")):
            if time.time() > deadline or self.proc.poll() is not None:
                sys.exit("modelfs did not start: " + open(self.log).read())
            time.sleep(0.02)
        # the warm-up runs behind the served tree (converted opens wait for it): tools start once it is done
        while "--no-warmup" not in extra and "warm-up done" not in open(self.log).read():
            if time.time() > deadline or self.proc.poll() is not None:
                sys.exit("modelfs's warm-up did not end: " + open(self.log).read())
            time.sleep(0.02)

    def stop(self):
        subprocess.run(["fusermount", "-u", self.mnt], stderr=subprocess.DEVNULL)
        self.proc.terminate()
        self.proc.wait(60)
        text = open(self.log).read()
        os.unlink(self.log)
        return text


class Bindfs:
    """A fresh read-only bindfs mount of `source` at `mnt` (the C FUSE peer), unmounted by stop(); with `window_kb`,
    its read-ahead window set as modelfs's (--read-ahead-kb) is, so that both read through the same window."""

    def __init__(self, source, mnt, window_kb=None):
        os.makedirs(mnt, exist_ok=True)
        subprocess.run(["bindfs", "-o", "ro", source, mnt], check=True, timeout=60)
        self.mnt = mnt
        if window_kb:
            dev = os.stat(mnt).st_dev
            with open(f"/sys/class/bdi/{os.major(dev)}:{os.minor(dev)}/read_ahead_kb", "w") as knob:
                knob.write(str(window_kb))

    def stop(self):
        subprocess.run(["fusermount", "-u", self.mnt], check=True, timeout=60)


def run_tool(a, tool, path):
    """Seconds from the tool's process start to its model loaded and (forward pass | first token)."""
    t0 = time.perf_counter()
    if tool in ("transformers", "diffusers"):
        script = TRANSFORMERS if tool == "transformers" else DIFFUSERS
        r = subprocess.run([a.python, "-c", script, path], capture_output=True, text=True, timeout=a.timeout,
                           env={**os.environ, "HF_HUB_OFFLINE": "1"})
    else:
        r = subprocess.run(["node", os.path.join(TOP, "integration-tests/node/llama_first_token.mjs"), path],
                           capture_output=True, text=True, timeout=a.timeout, cwd=os.path.join(TOP, "integration-tests/node"))
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit(f"{tool} on {path} failed:\n{r.stdout}\n{r.stderr}")
    return wall


def prepare_cache_dir(a, store, cache):
    """Fills `cache` through one mount: every case read once, then waits until the mount has written nothing into the
    cache directory for 5 s (no chunk or complete file being written: nothing under tmp/, no new record), at most
    30 min. Returns the number of complete files and the mount's last line."""
    shutil.rmtree(cache, ignore_errors=True)
    m = Mount(a, store, os.path.join(a.work, "mnt-fill"), "--cache-dir", cache, "--no-convert-ahead", *a.cache_dir_size)
    try:
        read_all([os.path.join(m.mnt, p) for _, p, _ in CASES])
        last, since, start = None, time.time(), time.time()
        while time.time() - since < 5 and time.time() - start < 1800:
            state = (len(glob.glob(os.path.join(cache, "files", "*", "*.sum"))), len(os.listdir(os.path.join(cache, "tmp"))))
            if state != last or state[1] > 0:
                last, since = state, time.time()
            time.sleep(0.2)
    finally:
        log = m.stop()
    summary = [line for line in log.splitlines() if "unmounted" in line]
    return last[0], (summary[-1] if summary else log[-2000:])


def prepare_ahead(a, store, cache):
    """Fills `cache` by converting ahead: a mount over the empty directory that reads nothing, waited for until it has
    logged no new `converted ahead:` line for 10 s and nothing is being written (at most 30 min). Returns the files
    converted ahead (the log's lines)."""
    shutil.rmtree(cache, ignore_errors=True)
    m = Mount(a, store, os.path.join(a.work, "mnt-ahead"), "--cache-dir", cache, *a.cache_dir_size)
    try:
        last, since, start = None, time.time(), time.time()
        while time.time() - since < 10 and time.time() - start < 1800:
            lines = [line for line in open(m.log).read().splitlines() if "converted ahead: " in line]
            busy = os.path.isdir(os.path.join(cache, "tmp")) and len(os.listdir(os.path.join(cache, "tmp"))) > 0
            if len(lines) != last or busy:
                last, since = len(lines), time.time()
            time.sleep(0.2)
    finally:
        log = m.stop()
    return [line.split("converted ahead: ", 1)[1] for line in log.splitlines() if "converted ahead: " in line]


def store_arguments():
    """The arguments every benchmark over this store takes: the jar, the work folder, the shape, rounds, java, python."""
    ap = argparse.ArgumentParser()
    ap.add_argument("jar")
    ap.add_argument("work")
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--vocab", type=int, default=512)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--java", default="java")
    ap.add_argument("--python", default=sys.executable)
    return ap


def ensure_store(a):
    """WORK/store-<shape> (made by make_load_store.py unless there): (its folder, its store)."""
    out = os.path.join(a.work, f"store-{a.hidden}x{a.layers}x{a.vocab}")
    store = os.path.join(out, "store")
    if not os.path.isdir(store):
        subprocess.run([a.python, os.path.join(HERE, "make_load_store.py"), out, "--hidden", str(a.hidden),
                        "--layers", str(a.layers), "--vocab", str(a.vocab)], check=True, timeout=3600, stdout=sys.stderr)
    return out, store


def main():
    ap = store_arguments()
    ap.add_argument("--cache-dir", action="store_true")
    ap.add_argument("--ahead", action="store_true", help="two states: the first load once modelfs has converted ahead, "
                    "page cache dropped (ahead-cold) and warm (ahead)")
    ap.add_argument("--states", help="run only these states (comma-separated: cold,warm,cache-dir,ahead-cold,ahead)")
    ap.add_argument("--cache-dir-size", help="the --cache-dir-size of the cache-dir and ahead states (default: modelfs's, 10G)")
    ap.add_argument("--timeout", type=int, default=900, help="seconds allowed per tool run")
    ap.add_argument("--only", help="run only the cases whose path in the mount contains this (e.g. model.gguf)")
    ap.add_argument("--bindfs", action="store_true", help="warm: also the local copy through a fresh bindfs mount")
    ap.add_argument("--read-ahead-kb", type=int, help="modelfs's --read-ahead-kb (default: modelfs's, the kernel's "
                    "window); bindfs's mount gets the same window")
    a = ap.parse_args()
    if a.bindfs and shutil.which("bindfs") is None:
        sys.exit("--bindfs needs bindfs (apt-get install bindfs)")
    a.work = os.path.abspath(a.work)
    a.cache_dir_size = ["--cache-dir-size", a.cache_dir_size] if a.cache_dir_size else []
    if os.geteuid() != 0:
        sys.exit("load_time.py drops the page cache for its cold runs: run it as root")
    out, store = ensure_store(a)
    image = json.load(open(os.path.join(out, "shape.json"))).get("image")
    if image is None:
        sys.exit(f"{out} was made before load-image existed: remove it and run again")
    global CASES
    CASES = [(label, p.replace("IMAGE", image), tool) for label, p, tool in CASES if not a.only or a.only in p]
    if not CASES:
        sys.exit(f"no case's path contains {a.only!r}")
    local = os.path.join(out, "local")
    mnt = os.path.join(a.work, "mnt")
    if not all(os.path.exists(os.path.join(local, p)) for _, p, _ in CASES):
        shutil.rmtree(local, ignore_errors=True)
        m = Mount(a, store, mnt)
        try:
            if not os.path.isfile(os.path.join(mnt, "load-dialect", "ollama", "model.gguf")):
                sys.exit("load-dialect/model.gguf is not a translation (no ollama/model.gguf beside it)")
            for _, p, _ in CASES:
                src, dst = os.path.join(mnt, p), os.path.join(local, p)
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                (shutil.copytree if os.path.isdir(src) else shutil.copyfile)(src, dst)
        finally:
            m.stop()
    blobs = sorted(glob.glob(os.path.join(store, "blobs", "sha256-*")))
    states = ["cold", "warm"] + (["cache-dir"] if a.cache_dir else []) + (["ahead-cold", "ahead"] if a.ahead else [])
    if a.states:
        states = [s for s in states if s in a.states.split(",")]
    cache = os.path.join(a.work, "cache-dir")
    ahead = os.path.join(a.work, "ahead-dir")
    if a.cache_dir:
        n, summary = prepare_cache_dir(a, store, cache)
        print(f"(--cache-dir filled: {n} complete files; the filling mount: {summary})", file=sys.stderr)
    if a.ahead:
        done = prepare_ahead(a, store, ahead)
        print(f"(converted ahead: {len(done)} files: {'; '.join(done)})", file=sys.stderr)
    dirs = {"cache-dir": ["--cache-dir", cache, "--no-convert-ahead"], "ahead": ["--cache-dir", ahead],
            "ahead-cold": ["--cache-dir", ahead]}
    times = {(c, s): ([], []) for c in range(len(CASES)) for s in states}
    peer = {c: [] for c in range(len(CASES))}          # --bindfs: warm seconds through bindfs
    for r in range(a.rounds):
        for ci, (label, p, tool) in enumerate(CASES):
            for s in states:
                m = Mount(a, store, mnt, *([*dirs[s], *a.cache_dir_size] if s in dirs else []))
                try:
                    if s.endswith("cold"):
                        drop_caches()
                    else:   # the cache-dir state's complete files too: what the local copy has, they have
                        read_all(blobs + [os.path.join(local, p)]
                                 + (glob.glob(os.path.join(dirs[s][1], "files", "*", "*")) if s in dirs else []))
                    mine = run_tool(a, tool, os.path.join(mnt, p))
                finally:
                    m.stop()
                if s.endswith("cold"):
                    drop_caches()
                ref = run_tool(a, tool, os.path.join(local, p))
                times[(ci, s)][0].append(mine)
                times[(ci, s)][1].append(ref)
                print(f"round {r + 1} {s:9} {p:24} mount {mine:7.2f} s  local {ref:7.2f} s", file=sys.stderr, flush=True)
                if s == "warm" and a.bindfs:
                    b = Bindfs(local, os.path.join(a.work, "mnt-bindfs"),
                               a.read_ahead_kb)
                    try:
                        peer[ci].append(run_tool(a, tool, os.path.join(b.mnt, p)))
                    finally:
                        b.stop()
                    print(f"round {r + 1} {'warm':9} {p:24} bindfs {peer[ci][-1]:6.2f} s (local {ref:7.2f} s)", file=sys.stderr, flush=True)
    shape = json.load(open(os.path.join(out, "shape.json")))
    params = sum(os.path.getsize(b) for b in blobs)
    print(f"Store: hidden {shape['hidden']}, {shape['layers']} layers, vocab {shape['vocab']} ({params / 1e6:.0f} MB of blobs); "
          f"medians of {a.rounds} rounds; ratio = local seconds / mount seconds.\n")
    print("| load | " + " | ".join(f"{s}: mount s | local s | ratio" for s in states)
          + (" | warm through bindfs s | ratio |" if a.bindfs else " |"))
    print("|---|" + "---|---|---|" * len(states) + ("---|---|" if a.bindfs else ""))
    for ci, (label, _, _) in enumerate(CASES):
        cells = []
        for s in states:
            mine, ref = median(times[(ci, s)][0]), median(times[(ci, s)][1])
            cells.append(f"{mine:.2f} | {ref:.2f} | {ref / mine:.2f}")
        if a.bindfs:
            through = median(peer[ci])
            cells.append(f"{through:.2f} | {median(times[(ci, 'warm')][1]) / through:.2f}")
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
