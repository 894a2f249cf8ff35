#!/usr/bin/env python3
"""The goals of issue 19, measured as a user meets them: a fresh mount (or a fresh `modelfs nfs`) per
measurement, bindfs and nfs-ganesha in the same run, ratios printed.

Usage: fresh_mount.py JAR WORKDIR --nfs-reader BIN [--mib 512] [--rounds 3] [--java JAVA] [--inflight 8]

Store: read_throughput.py's (a Q8_0 + Q4_K GGUF `big-gguf`, an int4 g64 + bf16 safetensors model `big-st`),
reused from WORKDIR when present. The blobs are in the page cache before every read (as in the issue; read
before each measurement and locked there with `vmtouch -l` for the whole run);
bindfs (`-r -o kernel_cache`) serves `blobs/` for the FUSE reference, nfs-ganesha (VFS backend, NFSv4,
exporting `blobs/`) for the NFS one. Each round, medians over --rounds:
  1. first touch: each converted file read the moment the tree is listed on a fresh mount, then again on the
     same mount after dropping its pages ("warm"; a 128 MiB chunk cache, smaller than each file's converted
     bytes, so the warm read converts again); with the warm-up (the default, done before the mount appears),
     with --no-warmup, and with --no-warmup but a JDK 25 AOT cache trained by one mount that read the same
     files; the time from the command to the tree listed, the warm-up's CPU seconds from its log line and
     the JVM's anonymous RSS before any read;
  2. passthrough `model.gguf` and reassembled `model.safetensors` first reads on a fresh mount (5 mounts per
     round, each after a bindfs first read), and the reassembled file right after a conversion; `model.gguf`
     again on 5 mounts with --no-kernel-passthrough (modelfs's own read path: the reassembled file's reference);
  3. NFS: nfs-cat and the parallel reader (--nfs-reader, INFLIGHT READs in flight) from a fresh
     `modelfs nfs` and from ganesha, same blob; a converted file read twice by the parallel reader;
  4. 4 readers of one converted file at once (FUSE and NFS), CPU seconds of the server per GB served against
     one reader; --cache-dir: the read after a restart of the NFS server;
  5. fio 4 KiB random reads, 4 jobs, O_DIRECT (served by modelfs, not kernel passthrough), on a fresh mount
     and on bindfs; again on a fresh `--io-uring` mount (FUSE over io_uring; fuse.enable_uring is turned on for
     that mount as root and back after it), with its reassembled and passthrough first reads.
With --goals-only, only the rows the read-path goals are stated on: 1 with the warm-up (no --no-warmup or AOT rows)
and 2, for large stores (issue 37: "once at 8 GiB") where the whole run would take hours.
"""
import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from read_throughput import build_store, cache_blobs, cat_seconds, drop, fio_iops, first_read_gbs, median, fmt, rss_kib  # noqa: E402

GANESHA = "/usr/bin/ganesha.nfsd"
BF16 = "big-st/bf16/model.safetensors"
FP32 = "big-gguf/model.fp32.gguf"
CONVERTED = {"int4+bf16 -> bf16 (`big-st/bf16/model.safetensors`)": BF16,
             "Q8_0+Q4_K -> f32 (`big-gguf/model.fp32.gguf`)": FP32}


PASS_MOUNTS = 5                  # fresh mounts per round for the passthrough and reassembled first reads


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    """utime + stime of a process (all threads), seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Modelfs:
    """One `modelfs mount` or `modelfs nfs` process, with its output in a log file."""

    def __init__(self, a, args, ready, jvm=()):
        """Starts `modelfs ARGS` (extra JVM flags `jvm`); returns once ready(self) is true."""
        self.log = tempfile.NamedTemporaryFile(prefix="modelfs-", suffix=".log", delete=False).name
        flags = os.environ.get("MODELFS_JVM_FLAGS", "--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow "
                               "-Xms32m -XX:+UseSerialGC -XX:-UseProfiledLoopPredicate --add-modules jdk.incubator.vector").split() + list(jvm)
        t0 = time.time()
        with open(self.log, "w") as out:
            # the cache directory is on by default: a fresh mount converts afresh unless the case names one
            cache = [] if "--cache-dir" in args else ["--no-cache-dir"]
            self.proc = subprocess.Popen([a.java, *flags, "-jar", a.jar, args[0], *cache, *args[1:]], stdout=out,
                                         stderr=subprocess.STDOUT)
        deadline = time.time() + 120
        while not ready(self):
            if time.time() > deadline or self.proc.poll() is not None:
                sys.exit("modelfs did not start: " + self.text())
            time.sleep(0.02)
        self.ready_seconds = time.time() - t0       # from the command to the tree listed (or the server answering)
        # the warm-up runs behind the served tree and converted opens wait for it: reads are timed once it is done,
        # as when the tree appeared only after it (docs/DESIGN.md §2.8)
        while "--no-warmup" not in args and "warm-up done" not in self.text():
            if time.time() > deadline or self.proc.poll() is not None:
                sys.exit("modelfs's warm-up did not end: " + self.text())
            time.sleep(0.02)
        self.warmed_seconds = time.time() - t0      # from the command to the warm-up's end

    def text(self):
        with open(self.log) as f:
            return f.read()

    def warmup(self):
        """CPU seconds of the warm-up's kernels and read path (its log line); None without one."""
        m = re.search(r"warm-up: .* ([0-9.]+) s CPU", self.text())
        return float(m.group(1)) if m else None

    def converted(self):
        """Chunks converted, from the line printed at the end (call after stop)."""
        m = re.search(r"\(([0-9]+) chunks converted", self.final)
        return int(m.group(1)) if m else None

    def stop(self, mnt=None):
        if mnt:
            subprocess.run(["fusermount", "-u", mnt], stderr=subprocess.DEVNULL)
        self.proc.terminate()
        self.proc.wait(60)
        self.final = self.text()
        os.unlink(self.log)


URING = "/sys/module/fuse/parameters/enable_uring"


def uring_possible():
    """Whether this kernel has FUSE over io_uring and this process may turn it on (root)."""
    return os.path.exists(URING) and os.access(URING, os.W_OK)


class kernel_uring:
    """fuse.enable_uring on for a `with` block, then back to what it was."""

    def __enter__(self):
        with open(URING) as f:
            self.before = f.read().strip()
        with open(URING, "w") as f:
            f.write("Y")

    def __exit__(self, *exc):
        with open(URING, "w") as f:
            f.write("Y" if self.before == "Y" else "N")


def mount(a, store, mnt, *extra, jvm=()):
    return Modelfs(a, ["mount", "--store", store, *extra, mnt], lambda m: os.path.isdir(os.path.join(mnt, "big-gguf")), jvm)


def train_aot_cache(a, store, mnt, blobs):
    """A JDK 25 AOT cache (JEP 483/514/515: classes linked, method profiles) trained by one mount that reads every
    converted file of the goals and the passthrough file; written when that JVM exits."""
    aot = os.path.join(a.work, "modelfs.aot")
    if os.path.exists(aot):
        os.unlink(aot)
    cache_blobs(store, blobs)
    mf = mount(a, store, mnt, "--no-warmup", jvm=("-XX:AOTCacheOutput=" + aot,))
    try:
        for f in [*CONVERTED.values(), "big-gguf/model.gguf", "big-st/model.safetensors"]:
            cat_seconds([os.path.join(mnt, f)])
    finally:
        mf.stop(mnt)
    if not os.path.exists(aot):
        sys.exit("the AOT training run wrote no cache")
    return aot


def nfs(a, store, port, *extra):
    return Modelfs(a, ["nfs", "--store", store, "--port", str(port), *extra], lambda m: "serving NFS" in m.text())


def url(path, port, version=3):
    q = f"version={version}&nfsport={port}" + (f"&mountport={port}" if version == 3 else "")
    return f"nfs://127.0.0.1/{path}?{q}"


def ifmt(xs):
    """A count's median (min–max)."""
    return f"{median(xs):.0f} ({min(xs):.0f}–{max(xs):.0f})"


def settle_dir(d, quiet=1.0, limit=60.0):
    """(seconds until the number of files under d stayed the same for `quiet` s, that number); at most `limit` s."""
    def count():
        return sum(len(files) for _, _, files in os.walk(d))
    t0 = time.monotonic()
    last, since = count(), t0
    while time.monotonic() - since < quiet and time.monotonic() - t0 < limit:
        time.sleep(0.1)
        n = count()
        if n != last:
            last, since = n, time.monotonic()
    return since - t0, last


def parallel_read(a, u, inflight=None):
    """(GB/s, checksum) of one file read by the parallel NFS reader."""
    r = subprocess.run([a.nfs_reader, u, str(inflight or a.inflight)], capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        sys.exit(f"{a.nfs_reader} {u}: {r.stderr}")
    kv = dict(x.split("=") for x in r.stdout.split())
    return float(kv["bytes"]) / float(kv["seconds"]) / 1e9, kv["fnv"]


def nfs_cat_gbs(u, size):
    t = time.perf_counter()
    subprocess.run(["nfs-cat", u], stdout=subprocess.DEVNULL, check=True)
    return size / (time.perf_counter() - t) / 1e9


class Ganesha:
    """nfs-ganesha (VFS backend, NFSv4) exporting DIR as /blobs on a free port of 127.0.0.1."""

    def __init__(self, work, export):
        self.port = free_port()
        d = tempfile.mkdtemp(prefix="ganesha-", dir=work)
        os.makedirs(os.path.join(d, "recovery"))
        conf = os.path.join(d, "ganesha.conf")
        with open(conf, "w") as f:
            f.write(f"""NFS_CORE_PARAM {{ Protocols = 4; NFS_Port = {self.port}; Bind_addr = 127.0.0.1;
  Enable_NLM = false; Enable_RQUOTA = false; Enable_UDP = false; }}
NFSV4 {{ Graceless = true; RecoveryRoot = {d}/recovery; }}
EXPORT {{ Export_Id = 1; Path = {export}; Pseudo = /blobs; Access_Type = RO; Squash = No_Root_Squash;
  SecType = sys; Protocols = 4; Transports = TCP; FSAL {{ Name = VFS; }} }}
""")
        self.proc = subprocess.Popen([GANESHA, "-F", "-f", conf, "-L", os.path.join(d, "ganesha.log"), "-p",
                                      os.path.join(d, "ganesha.pid"), "-N", "NIV_EVENT"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        deadline = time.time() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.5).close()
                break
            except OSError:
                if time.time() > deadline or self.proc.poll() is not None:
                    sys.exit("ganesha did not start; see " + d)
                time.sleep(0.2)

    def url(self, blob):
        return url("blobs/sha256-" + blob, self.port, version=4)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(30)


def at_once(cmds):
    t = time.perf_counter()
    procs = [subprocess.Popen(c, stdout=subprocess.DEVNULL) for c in cmds]
    for p in procs:
        if p.wait() != 0:
            sys.exit("failed: " + " ".join(procs[0].args))
    return time.perf_counter() - t


def row(name, mine, ref_name, ref, goal=None):
    ratio = median(mine) / median(ref)
    status = "" if goal is None else (" **met**" if ratio >= goal else " **not met**")
    print(f"| {name} | {fmt(mine)} | {ref_name}: {fmt(ref)} | {ratio:.2f}{'' if goal is None else f' (goal ≥ {goal})'}{status} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("jar")
    ap.add_argument("work")
    ap.add_argument("--nfs-reader", required=True)
    ap.add_argument("--mib", type=int, default=512)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--inflight", type=int, default=8)
    ap.add_argument("--java", default=os.environ.get("JAVA", "java"))
    ap.add_argument("--goals-only", action="store_true", help="only sections 1 (with the warm-up) and 2")
    a = ap.parse_args()
    store, mnt, bmnt = (os.path.join(a.work, d) for d in ("store", "fresh-mnt", "fresh-bindfs"))
    os.makedirs(mnt, exist_ok=True)
    os.makedirs(bmnt, exist_ok=True)
    blobs_json = os.path.join(a.work, "blobs.json")
    if os.path.isdir(os.path.join(store, "manifests")) and os.path.exists(blobs_json):
        with open(blobs_json) as f:
            blobs = json.load(f)
    else:
        blobs = build_store(store, a.mib)
        with open(blobs_json, "w") as f:
            json.dump(blobs, f)
    gguf = blobs["gguf"][0]
    # the blobs stay in the page cache for the whole run: this VM's DAMON (kdamond, action pageout) otherwise
    # pages out file pages a few seconds after they were read, and "blobs in the page cache" would not hold
    pin = subprocess.Popen(["vmtouch", "-l", *(os.path.join(store, "blobs", "sha256-" + d) for d in blobs["gguf"] + blobs["st"])],
                           stdout=subprocess.DEVNULL)
    subprocess.run(["bindfs", "-r", "-o", "kernel_cache", os.path.join(store, "blobs"), bmnt], check=True)
    bindfs_blob = os.path.join(bmnt, "sha256-" + gguf)
    m = lambda p: os.path.join(mnt, p)
    r = {}

    def add(k, v):
        r.setdefault(k, []).append(v)

    try:
        aot = None if a.goals_only else train_aot_cache(a, store, mnt, blobs)
        for _ in range(a.rounds):
            # 1. first touch: the moment the tree is listed, with the warm-up (the default: before the mount
            #    appears) and without, and with an AOT cache instead of the warm-up. A chunk cache smaller than the
            #    converted bytes of each file, so that the second read on the same mount ("warm") converts again.
            for tag, extra, jvm in (("", (), ()),) if a.goals_only else (("", (), ()), (" nowarm", ("--no-warmup",), ()),
                                                                          (" aot", ("--no-warmup",), ("-XX:AOTCache=" + aot,))):
                for name, f in CONVERTED.items():
                    cache_blobs(store, blobs)
                    add("bindfs1", first_read_gbs(bindfs_blob))
                    mf = mount(a, store, mnt, "--cache-size", "128M", *extra, jvm=jvm)
                    try:
                        add("ready" + tag, mf.ready_seconds)
                        add("warmed" + tag, mf.warmed_seconds)
                        add("anon MiB" + tag, rss_kib(mf.proc.pid)[1] / 1024)     # before any read
                        add(name + " fresh" + tag, first_read_gbs(m(f)))
                        if tag == "":                          # a reassembled read right after a conversion (either)
                            add("reas after conv", first_read_gbs(m("big-st/model.safetensors")))
                        add(name + " warm" + tag, first_read_gbs(m(f)))
                        if tag == "":
                            add("warmup cpu", mf.warmup() or 0.0)
                    finally:
                        mf.stop(mnt)
                    if tag == "" and f == FP32:
                        add("fp32 conversions", mf.converted())
            # 2. passthrough and reassembled on a fresh mount: PASS_MOUNTS mounts per round (a first read is one
            #    sample per mount, and these reads vary by ±15 % from one to the next, bindfs's as much)
            #    The default mount opens `model.gguf` with the kernel's FUSE passthrough; a mount with
            #    --no-kernel-passthrough measures modelfs's own read path for the same file, the reference of the
            #    reassembled file (which modelfs always serves itself).
            for i in range(PASS_MOUNTS):
                for tag, extra in (("", ()), (" served", ("--no-kernel-passthrough",))):
                    cache_blobs(store, blobs)
                    add("bindfs1", first_read_gbs(bindfs_blob))
                    mf = mount(a, store, mnt, *extra)
                    try:
                        add("pass1" + tag, first_read_gbs(m("big-gguf/model.gguf")))
                        if tag == "":
                            add("reas1", first_read_gbs(m("big-st/model.safetensors")))
                        if i == 0 and tag == "" and not a.goals_only:
                            # 5. random reads on this mount (after the sequential ones), every round; O_DIRECT opens
                            #    are served by modelfs (passthrough would read the disk)
                            add("fio", fio_iops(m("big-gguf/model.gguf")))
                            add("fio bindfs", fio_iops(bindfs_blob))
                    finally:
                        mf.stop(mnt)
            if a.goals_only:
                continue
            # 5. the same random reads with FUSE over io_uring (`--io-uring`), and what it costs a reassembled first
            #    read; the kernel's consent (fuse.enable_uring) is given for this mount and taken back after it
            if uring_possible():
                with kernel_uring():
                    cache_blobs(store, blobs)
                    mf = mount(a, store, mnt, "--io-uring")
                    try:
                        deadline = time.time() + 10
                        while "fuse-over-io_uring: " not in mf.text() and time.time() < deadline:
                            time.sleep(0.1)
                        if "fuse-over-io_uring: " not in mf.text():
                            sys.exit("--io-uring: the mount did not start its rings:\n" + mf.text())
                        add("uring reas1", first_read_gbs(m("big-st/model.safetensors")))
                        add("uring pass1", first_read_gbs(m("big-gguf/model.gguf")))
                        add("fio uring", fio_iops(m("big-gguf/model.gguf")))
                        add("fio bindfs uring", fio_iops(bindfs_blob))
                    finally:
                        mf.stop(mnt)
            # 4a. 4 FUSE readers of one converted file at once against 1, CPU per GB, fresh mounts
            for n in (1, 4):
                cache_blobs(store, blobs)
                mf = mount(a, store, mnt, "--no-warmup")
                try:
                    c0 = cpu_seconds(mf.proc.pid)
                    secs = at_once([["cat", m(FP32)]] * n)
                    size = os.path.getsize(m(FP32))
                    r["fp32 size"] = [size]
                    add(f"fuse cpu/GB x{n}", (cpu_seconds(mf.proc.pid) - c0) / (n * size / 1e9))
                    add(f"fuse agg x{n}", n * size / secs / 1e9)
                finally:
                    mf.stop(mnt)
            # 3. NFS: modelfs nfs against ganesha, nfs-cat and the parallel reader, fresh servers
            cache_blobs(store, blobs)
            size = os.path.getsize(os.path.join(store, "blobs", "sha256-" + gguf))
            g = Ganesha(a.work, os.path.join(store, "blobs")) if os.path.exists(GANESHA) and os.geteuid() == 0 else None
            port = free_port()
            srv = nfs(a, store, port)
            add("nfs ready", srv.ready_seconds)
            try:
                add("nfs cat", nfs_cat_gbs(url("big-gguf/model.gguf", port), size))
                gbs, mine = parallel_read(a, url("big-gguf/model.gguf", port))
                add("nfs par", gbs)
                if g:
                    add("ganesha cat", nfs_cat_gbs(g.url(gguf), size))
                    gbs, theirs = parallel_read(a, g.url(gguf))
                    add("ganesha par", gbs)
                    if theirs != mine:
                        sys.exit("ganesha and modelfs nfs served different bytes for the same blob")
                gbs1, s1 = parallel_read(a, url(FP32, port))
                gbs2, s2 = parallel_read(a, url(FP32, port))
                if s1 != s2:
                    sys.exit("two reads of a converted file over NFS differ")
                add("nfs conv 1st", gbs1)
                add("nfs conv 2nd", gbs2)
            finally:
                srv.stop()
                if g:
                    g.stop()
            # 4b. 4 NFS clients of one converted file at once against 1; then --cache-dir across a restart
            for n in (1, 4):
                port = free_port()
                srv = nfs(a, store, port, "--no-warmup")
                try:
                    c0 = cpu_seconds(srv.proc.pid)
                    secs = at_once([[a.nfs_reader, url(FP32, port), str(a.inflight)]] * n)
                    add(f"nfs cpu/GB x{n}", (cpu_seconds(srv.proc.pid) - c0) / (n * r["fp32 size"][0] / 1e9))
                    add(f"nfs secs x{n}", secs)
                finally:
                    srv.stop()
            cache_dir = tempfile.mkdtemp(prefix="chunks-", dir=a.work)
            for phase in ("fill", "restart"):
                port = free_port()
                srv = nfs(a, store, port, "--cache-dir", cache_dir)
                try:
                    gbs, _ = parallel_read(a, url(FP32, port))
                    add("disk " + phase, gbs)
                    # the server writes what its full write queue turned away once idle: let it, as a server does
                    secs, files = settle_dir(os.path.join(cache_dir, "chunks"))
                    add(f"disk {phase} settle", secs)
                    add(f"disk {phase} files", files)
                finally:
                    srv.stop()
            subprocess.run(["rm", "-rf", cache_dir])
    finally:
        subprocess.run(["fusermount", "-u", bmnt])
        pin.terminate()
        pin.wait(30)
    with open(os.path.join(a.work, "fresh-samples.json"), "w") as f:    # every sample, for a closer look at the noise
        json.dump(r, f, indent=1)
    report(a, r)


def report(a, r):
    """The table of every row measured; with --goals-only, the rows the read-path goals are stated on."""
    b1 = r["bindfs1"]
    print(f"Fresh mounts (a new modelfs JVM per measurement){' --goals-only, --mib ' + str(a.mib) if a.goals_only else ''},"
          f" medians of {a.rounds} rounds (min–max), GB/s (of output for converted files); GB = 10^9 bytes.")
    print()
    print("| goal: read | modelfs | reference, same run | ratio |")
    print("|---|---|---|---|")
    for name in CONVERTED:
        row(f"1. {name}, first read on a fresh mount", r[name + " fresh"], "the same read on a warm mount", r[name + " warm"], 0.8)
        row(f"1. {name}, first read on a fresh mount", r[name + " fresh"], "bindfs first read of the blob", b1, 0.5)
        if a.goals_only:
            continue
        row("1. the same, `--no-warmup`", r[name + " fresh nowarm"], "with the warm-up", r[name + " fresh"])
        row("1. the same, `--no-warmup` with a trained AOT cache (`-XX:AOTCache`)", r[name + " fresh aot"], "the same read on a warm mount", r[name + " warm"], 0.8)
    if not a.goals_only:
        print(f"| 1. warm-up cost at mount | {fmt(r['warmup cpu'])} CPU s; the tree is listed {fmt(r['ready'])} s after the command,"
              f" the warm-up behind it done (converted reads timed from then) {fmt(r['warmed'])} s after it"
              f" | with `--no-warmup`: {fmt(r['ready nowarm'])} s | |")
        print(f"| 1. JVM anonymous RSS when the tree is listed, before any read | {fmt(r['anon MiB'])} MiB | with `--no-warmup`:"
              f" {fmt(r['anon MiB nowarm'])} MiB | |")
        print(f"| 1. chunks converted by a fresh and a warm read of `{FP32}` (`--cache-size 128M`: the warm read converts"
              f" again) | {fmt(r['fp32 conversions'])} | | |")
    row("2. `model.gguf` first read, fresh mount (kernel passthrough)", r["pass1"], "bindfs first read", b1, 1.0)
    row("2. `model.gguf` first read, fresh mount, `--no-kernel-passthrough` (modelfs's read path)", r["pass1 served"],
        "bindfs first read", b1)
    row("2. `model.safetensors` (as stored), first read, fresh mount", r["reas1"],
        "`model.gguf` through modelfs's read path (`--no-kernel-passthrough`)", r["pass1 served"], 0.9)
    row("2. the same, right after a conversion", r["reas after conv"],
        "`model.gguf` through modelfs's read path (`--no-kernel-passthrough`)", r["pass1 served"], 0.9)
    row("2. `model.safetensors` (as stored), first read, fresh mount", r["reas1"], "`model.gguf` with kernel passthrough",
        r["pass1"])
    if a.goals_only:
        return
    if "ganesha cat" in r:
        row("3. NFS passthrough `model.gguf`, `nfs-cat`", r["nfs cat"], "ganesha (VFS, NFSv4), `nfs-cat`", r["ganesha cat"], 1.0)
        print(f"| 3. `modelfs nfs` start-up, warm-up included | answers {fmt(r['nfs ready'])} s after the command | | |")
        row(f"3. NFS passthrough, parallel reader ({a.inflight} READs in flight)", r["nfs par"], "ganesha, same reader", r["ganesha par"], 1.0)
    else:
        print("| 3. NFS against ganesha | not measured: ganesha missing or not root | | |")
    row("3. NFS converted `model.fp32.gguf`, second read, parallel reader", r["nfs conv 2nd"], "NFS passthrough, parallel reader", r["nfs par"], 0.8)
    row("3. NFS converted, first read, parallel reader", r["nfs conv 1st"], "NFS passthrough, parallel reader", r["nfs par"])
    print(f"| 4. FUSE: 4 readers of `{FP32}` at once, server CPU s per GB served | {fmt(r['fuse cpu/GB x4'])} | 1 reader: {fmt(r['fuse cpu/GB x1'])} | {median(r['fuse cpu/GB x4']) / median(r['fuse cpu/GB x1']):.2f} (each chunk converted once: ≈ 1/4 expected) |")
    print(f"| 4. FUSE: the same, aggregate GB/s | {fmt(r['fuse agg x4'])} | 1 reader {fmt(r['fuse agg x1'])} | {median(r['fuse agg x4']) / median(r['fuse agg x1']):.2f} |")
    print(f"| 4. NFS: 4 parallel readers of `{FP32}` at once, server CPU s per GB served | {fmt(r['nfs cpu/GB x4'])} | 1 reader: {fmt(r['nfs cpu/GB x1'])} | {median(r['nfs cpu/GB x4']) / median(r['nfs cpu/GB x1']):.2f} (each chunk converted once: ≈ 1/4 expected) |")
    row("4. NFS `--cache-dir`: converted read after a server restart", r["disk restart"], "the read that filled the cache", r["disk fill"])
    print(f"| 4. NFS `--cache-dir`: chunks on disk before the restart | {ifmt(r['disk fill files'])} (after the restart's read:"
          f" {ifmt(r['disk restart files'])}) | the last written {fmt(r['disk fill settle'])} s after the fill's read ended"
          f" (the backlog of a full write queue) | |")
    row("4. NFS `--cache-dir`: converted read after a restart", r["disk restart"], "NFS passthrough, parallel reader", r["nfs par"], 0.8)
    fm, fb = median(r["fio"]), median(r["fio bindfs"])
    status = "**met**" if fm >= fb else "**not met**"
    lo, hi = min(r["fio"]) / 1000, max(r["fio"]) / 1000
    blo, bhi = min(r["fio bindfs"]) / 1000, max(r["fio bindfs"]) / 1000
    print(f"| 5. fio 4 KiB random reads, 4 jobs, O_DIRECT, fresh mount | {fm / 1000:.0f}k IOPS ({lo:.0f}k–{hi:.0f}k) | bindfs {fb / 1000:.0f}k IOPS ({blo:.0f}k–{bhi:.0f}k) | {fm / fb:.2f} (goal ≥ 1.0) {status} |")
    if "fio uring" in r:
        fu, fbu = median(r["fio uring"]), median(r["fio bindfs uring"])
        status = "**met**" if fu >= fbu else "**not met**"
        lo, hi = min(r["fio uring"]) / 1000, max(r["fio uring"]) / 1000
        blo, bhi = min(r["fio bindfs uring"]) / 1000, max(r["fio bindfs uring"]) / 1000
        print(f"| 5. fio 4 KiB random reads, 4 jobs, O_DIRECT, fresh mount, `--io-uring` | {fu / 1000:.0f}k IOPS ({lo:.0f}k–{hi:.0f}k) | bindfs {fbu / 1000:.0f}k IOPS ({blo:.0f}k–{bhi:.0f}k) | {fu / fbu:.2f} (goal ≥ 1.0) {status} |")
        row("what `--io-uring` costs: `model.safetensors` (as stored), first read, fresh mount", r["uring reas1"],
            "`model.gguf` through modelfs over `/dev/fuse` (`--no-kernel-passthrough`)", r["pass1 served"])
        row("the same, default mount (over `/dev/fuse`)", r["reas1"], "`model.gguf` through modelfs over `/dev/fuse`",
            r["pass1 served"])
        row("`--io-uring`: `model.gguf` first read, fresh mount (kernel passthrough; its OPEN came through the ring)",
            r["uring pass1"], "bindfs first read", r["bindfs1"])
    else:
        print("| 5. fio with `--io-uring` | not measured: no FUSE over io_uring in this kernel, or not root | | |")


if __name__ == "__main__":
    main()
