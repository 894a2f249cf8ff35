#!/usr/bin/env python3
"""Start-up of `modelfs mount` and `modelfs nfs`: seconds from the command to a listable tree, quiet and beside
`stress-ng --cpu 2` (issue 37, point 4).

Usage: startup_time.py STORE WORKDIR --jar LABEL=JAR [--jar LABEL=JAR ...] [--rounds R] [--java JAVA] [--copies N]
                       [--stores both|fixture] [--no-warmup-row] [--aot-cache CACHE] [--fronts mount,nfs] [--loads quiet,stress]

STORE: a store (scripts/bench.sh --startup passes the integration fixture's, make_fixture.py: 44 models). A second
store of N models (--copies, default 100) is made in WORKDIR/store-N from it: its blobs hard-linked (copied when
links are not possible), its valid `registry.ollama.ai/library` manifests copied under new names until there are N
(the same blobs, more models to list and warm up).
For every store, load (quiet; both CPUs busy with `stress-ng --cpu 2`), front end and jar, R rounds of one fresh
process each: the time from starting the JVM (the same flags as the launcher) to
  * mount: the mount point listed with at least one entry (os.listdir, as `ls` does);
  * nfs: `nfs-ls` of the export root answering with at least one entry (libnfs, polled);
and the time to the warm-up's end (its log line `warm-up done`, or for a jar whose warm-up runs before serving, the
listable time itself); and the CPU seconds the JVM had used when its tree was first listed (utime + stime of the
process from /proc/PID/stat, all its threads: what the start costs, whatever the machine's load does to the wall time;
sampled when the serving line is first seen in the log, polled every 20 ms, or at the listing if that comes first,
so that the warm-up behind the served tree, which a loaded machine lets run before the listing, is not counted).
--aot-cache CACHE adds a row of the first jar started with that AOT cache (`-XX:AOTCache`, JDK 25: classes loaded and
linked from the cache, as the launcher does: scripts/lib.sh `aot_flags`; made by the launcher's training run,
`modelfs aot-train`, as scripts/bench.sh --startup does). Prints one Markdown table of medians (min-max).
"""
import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

FLAGS = ("--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow -Xms32m -XX:+UseSerialGC "
         "-XX:-UseProfiledLoopPredicate --add-modules jdk.incubator.vector")
NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def copy_store(src, dst, models):
    """A store of `models` models at dst: src's blobs linked, its valid library manifests copied under new names."""
    if os.path.isdir(dst):
        return dst
    tmp = dst + ".part"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(os.path.join(tmp, "blobs"))
    for b in os.listdir(os.path.join(src, "blobs")):
        s, d = os.path.join(src, "blobs", b), os.path.join(tmp, "blobs", b)
        try:
            os.link(s, d)
        except OSError:
            shutil.copy2(s, d)
    lib = os.path.join(src, "manifests", "registry.ollama.ai", "library")
    manifests = []
    for name in sorted(os.listdir(lib)):
        if not os.path.isdir(os.path.join(lib, name)):
            continue                     # a manifest in the wrong place (a hostile case of the fixture)
        for tag in sorted(os.listdir(os.path.join(lib, name))):
            p = os.path.join(lib, name, tag)
            if NAME.match(name) and os.path.isfile(p):
                manifests.append((name, tag, p))
    n, copy = 0, 0
    while n < models:
        for name, tag, p in manifests:
            if n >= models:
                break
            new = name if copy == 0 else f"{name}-copy{copy}"
            d = os.path.join(tmp, "manifests", "registry.ollama.ai", "library", new)
            os.makedirs(d, exist_ok=True)
            shutil.copy2(p, os.path.join(d, tag))
            n += 1
        copy += 1
    os.rename(tmp, dst)
    return dst


def count_models(store):
    n = 0
    for root, _dirs, files in os.walk(os.path.join(store, "manifests")):
        n += len(files)
    return n


class Load:
    """`stress-ng --cpu 2` for a `with` block (bounded by its own --timeout too)."""

    def __enter__(self):
        self.p = subprocess.Popen(["stress-ng", "--cpu", "2", "--timeout", "1800s"], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, start_new_session=True)
        time.sleep(1)     # its workers forked
        return self

    def __exit__(self, *exc):
        os.killpg(self.p.pid, signal.SIGTERM)
        self.p.wait(30)


def listable_mount(mnt):
    try:
        return len(os.listdir(mnt)) > 0
    except OSError:
        return False


def listable_nfs(port):
    url = f"nfs://127.0.0.1/?version=3&nfsport={port}&mountport={port}"
    r = subprocess.run(["nfs-ls", url], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=30)
    return r.returncode == 0 and len(r.stdout.strip()) > 0


def cpu_seconds(pid):
    """utime + stime of a process (all its threads), in seconds: /proc/PID/stat fields 14 and 15."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one(a, jar, store, front, work, extra=(), jvm=()):
    """One fresh process (extra arguments `extra`, extra JVM flags `jvm`): (seconds to listable, seconds to the warm-up's
    end, CPU seconds of the JVM when listable)."""
    log = tempfile.NamedTemporaryFile(prefix="startup-", suffix=".log", dir=work, delete=False).name
    mnt = os.path.join(work, "mnt")
    os.makedirs(mnt, exist_ok=True)
    port = free_port()
    cache = [] if "--cache-dir" in extra else ["--no-cache-dir"]     # as before the default cache directory (its start-up scan: DESIGN.md §2.7)
    args = ["mount", "--store", store, *cache, *extra, mnt] if front == "mount" else ["nfs", "--store", store, "--port", str(port), *cache, *extra]
    ready = (lambda: listable_mount(mnt)) if front == "mount" else (lambda: listable_nfs(port))
    t0 = time.time()
    with open(log, "w") as out:
        p = subprocess.Popen([a.java, *FLAGS.split(), *jvm, "-jar", jar, *args], stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = t0 + 180
        cpu = None
        while not ready():
            if time.time() > deadline or p.poll() is not None:
                sys.exit(f"modelfs {front} did not start:\n" + open(log).read())
            if cpu is None and "modelfs: serving" in open(log).read():
                cpu = cpu_seconds(p.pid)     # at the serving line: before the warm-up behind it adds its own
            time.sleep(0.02)
        listed = time.time() - t0
        if cpu is None:
            cpu = cpu_seconds(p.pid)
        text = open(log).read()
        done = None
        while "--no-warmup" not in extra and time.time() < deadline:
            text = open(log).read()
            if "warm-up done" in text:
                done = time.time() - t0
                break
            if "FUSE read warm-up:" in text or "NFS read warm-up:" in text:
                if text.find("modelfs: serving") > max(text.find("FUSE read warm-up:"), text.find("NFS read warm-up:")):
                    done = listed        # a warm-up before serving (an older jar): it ended before the tree was listed
                    break
            time.sleep(0.05)
        return listed, done, cpu
    finally:
        if front == "mount":
            subprocess.run(["fusermount", "-u", mnt], stderr=subprocess.DEVNULL)
        p.terminate()
        try:
            p.wait(60)
        except subprocess.TimeoutExpired:
            p.kill()
        os.unlink(log)


def fmt(xs):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return "-"
    return f"{xs[len(xs) // 2]:.2f} ({xs[0]:.2f}-{xs[-1]:.2f})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("store")
    ap.add_argument("work")
    ap.add_argument("--jar", action="append", required=True, help="LABEL=PATH")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--java", default="java")
    ap.add_argument("--copies", type=int, default=100)
    ap.add_argument("--stores", choices=("both", "fixture"), default="both")
    ap.add_argument("--no-warmup-row", action="store_true", help="also the first jar with --no-warmup (the floor)")
    ap.add_argument("--aot-cache", help="also the first jar with this AOT cache (-XX:AOTCache, the launcher's flags)")
    ap.add_argument("--fronts", default="mount,nfs")
    ap.add_argument("--loads", default="quiet,stress")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    stores = [a.store] if a.stores == "fixture" else [a.store, copy_store(a.store, os.path.join(a.work, f"store-{a.copies}"), a.copies)]
    jars = [(label, path, (), ()) for label, path in (j.split("=", 1) for j in a.jar)]
    if a.no_warmup_row:
        jars.append((jars[0][0] + ", `--no-warmup`", jars[0][1], ("--no-warmup",), ()))
    if a.aot_cache:
        # the launcher's AOT flags (scripts/lib.sh aot_flags): the cache, and no log lines about it
        jars.append((jars[0][0] + ", AOT cache", jars[0][1], (), (f"-XX:AOTCache={a.aot_cache}", "-XX:+VerifySharedSpaces", "-Xlog:aot*=off", "-Xlog:cds*=off")))
    print("| store | front end | load | build | to a listable tree, s | JVM CPU s until then | to the warm-up's end, s | load average |")
    print("|---|---|---|---|---|---|---|---|")
    for store in stores:
        for loaded in [x == "stress" for x in a.loads.split(",")]:
            for front in a.fronts.split(","):
                for label, jar, extra, jvm in jars:
                    listed, done, cpu = [], [], []
                    for _ in range(a.rounds):
                        if loaded:
                            with Load():
                                l, d, c = one(a, jar, store, front, a.work, extra, jvm)
                        else:
                            l, d, c = one(a, jar, store, front, a.work, extra, jvm)
                        listed.append(l)
                        done.append(d)
                        cpu.append(c)
                    with open("/proc/loadavg") as f:
                        load = f.read().split()[0]
                    print(f"| {count_models(store)} manifests | {front} | {'stress-ng --cpu 2' if loaded else 'quiet'} | {label} "
                          f"| {fmt(listed)} | {fmt(cpu)} | {fmt(done)} | {load} |", flush=True)
    with open("/proc/loadavg") as f:
        print(f"\nload average at the end: {f.read().split()[0]}")


if __name__ == "__main__":
    main()
