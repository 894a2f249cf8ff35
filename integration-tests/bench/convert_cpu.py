#!/usr/bin/env python3
"""CPU seconds per GiB served of a converted file's first read on a fresh mount (issue 37, stop 42).

For each file and each way of reading it (`cat`: sequential read(2) of 128 KiB; `mmap`: the file mapped and
every page touched in order, 1 MiB at a time, so the kernel's fault read-ahead sends the READs), a new modelfs
JVM is started over STORE (blobs in the page cache: they are read once before), the warm-up is waited for, then the
file is read once. The figures are the modelfs JVM's CPU seconds (utime + stime of /proc/PID/stat, every thread)
and the reader's (getrusage of the child), before and after the read, per GiB of the file, and the wall time.
CPU time, unlike wall time, barely depends on what else the machine runs, so these figures survive a loaded machine
(the wall-clock ones do not).

Usage: convert_cpu.py JAR STORE FILE... [--rounds N] [--how cat,mmap] [--mount-args ARGS] [--after FILE]
                      [--jfr DIR] [--perf DIR] [--java JAVA]
  FILE: a path inside the mount, e.g. big-st/bf16/model.safetensors
JVM flags: MODELFS_JVM_FLAGS (as fresh_mount.py), plus -XX:StartFlightRecording with --jfr.
"""
import argparse
import mmap
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

TICK = os.sysconf("SC_CLK_TCK")
GIB = 1 << 30
FLAGS = ("--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow -Xms32m -XX:+UseSerialGC "
         "-XX:-UseProfiledLoopPredicate --add-modules jdk.incubator.vector")


def proc_cpu(pid):
    """utime + stime of every thread of PID, in seconds (and stime alone)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK, int(fields[12]) / TICK


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def mmap_reader(path):
    """Maps PATH and copies it out 1 MiB at a time, in order (run in a child, so that its CPU is its own)."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        with mmap.mmap(f.fileno(), size, prot=mmap.PROT_READ) as m:
            for off in range(0, size, 1 << 20):
                m[off:off + (1 << 20)]


class Mount:
    def __init__(self, a, store, jfr=None):
        self.mnt = tempfile.mkdtemp(prefix="convcpu-")
        self.log = open(os.path.join(self.mnt + ".log"), "w+")
        flags = os.environ.get("MODELFS_JVM_FLAGS", FLAGS).split()
        self.proc = subprocess.Popen([a.java, *flags, "-jar", a.jar, "mount", "--store", store,
                                          *([] if "--cache-dir" in a.mount_args else ["--no-cache-dir"]), *a.mount_args.split(), self.mnt],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 120
        while time.time() < deadline:
            self.log.seek(0)
            if "warm-up done" in self.log.read():
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.2)
        self.log.seek(0)
        raise SystemExit("mount did not finish its warm-up:\n" + self.log.read())

    def stop(self):
        self.proc.terminate()                         # SIGTERM: it unmounts and prints its conversion counts
        self.proc.wait(timeout=60)
        os.rmdir(self.mnt)
        self.log.seek(0)
        counts = re.search(r"unmounted \S+ \((.*)\)", self.log.read())
        self.log.close()
        os.unlink(self.log.name)
        return counts.group(1) if counts else "?"


def jcmd(a, pid, *args):
    subprocess.run([os.path.join(os.path.dirname(a.java), "jcmd"), str(pid), *args], stdout=subprocess.DEVNULL, check=True)


def measure(a, store, rel, how, jfr=None, perf=None):
    m = Mount(a, store)
    try:
        path = os.path.join(m.mnt, rel)
        size = os.stat(path).st_size
        if a.after:                 # another file read first (not measured): the read path is then warm, as on a busy mount
            subprocess.run(["cat", os.path.join(m.mnt, a.after)], stdout=subprocess.DEVNULL, check=True)
        if jfr:                     # CPU-time sampling (JEP 509) of the read alone, every thread, Java and native frames
            jcmd(a, m.proc.pid, "JFR.start", "name=read", "jdk.CPUTimeSample#enabled=true",
                 "jdk.CPUTimeSample#throttle=1ms", "jdk.ExecutionSample#enabled=false",
                 "jdk.Compilation#enabled=true", "jdk.Compilation#threshold=0ms", "jdk.Deoptimization#enabled=true")
        rec = None
        if perf:                    # kernel, libfuse and JIT frames (a perf map of the JIT's code is written after)
            rec = subprocess.Popen(["perf", "record", "-q", "-F", "1999", "-g", "-p", str(m.proc.pid), "-o", perf],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1)
        j0, c0, t0 = proc_cpu(m.proc.pid), child_cpu(), time.perf_counter()
        if how == "cat":
            subprocess.run(["cat", path], stdout=subprocess.DEVNULL, check=True)
        else:
            subprocess.run([sys.executable, os.path.abspath(__file__), "--mmap-child", path], check=True)
        t1, c1, j1 = time.perf_counter(), child_cpu(), proc_cpu(m.proc.pid)
        if jfr:
            jcmd(a, m.proc.pid, "JFR.stop", "name=read", f"filename={jfr}")
        if rec:
            rec.send_signal(2)
            rec.wait()
            jcmd(a, m.proc.pid, "Compiler.perfmap")
    finally:
        counts = m.stop()
    gib = size / GIB
    return {"jvm": (j1[0] - j0[0]) / gib, "sys": (j1[1] - j0[1]) / gib, "reader": (c1 - c0) / gib, "wall": (t1 - t0) / gib, "gib": gib, "counts": counts}


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--mmap-child":
        mmap_reader(sys.argv[2])
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("jar")
    ap.add_argument("store")
    ap.add_argument("files", nargs="+")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--how", default="cat,mmap")
    ap.add_argument("--jfr", help="a directory: one flight recording per measurement")
    ap.add_argument("--mount-args", default="", help="more options of modelfs mount, e.g. '--warmup-seconds 60'")
    ap.add_argument("--after", help="a file of the mount read first, not measured (the steady state: JIT warm, buffers recycled)")
    ap.add_argument("--perf", help="a directory: one perf recording per measurement (perf record -g)")
    ap.add_argument("--java", default=os.environ.get("JAVA", "java"))
    a = ap.parse_args()
    for d in os.listdir(os.path.join(a.store, "blobs")):          # the store's blobs in the page cache
        subprocess.run(["cat", os.path.join(a.store, "blobs", d)], stdout=subprocess.DEVNULL, check=True)
    print(f"{'file':40} {'read':5} {'GiB':>5}  {'JVM CPU-s/GiB':>13} {'reader CPU-s/GiB':>16} {'wall s/GiB':>10}")
    for rel in a.files:
        for how in a.how.split(","):
            for r in range(a.rounds):
                jfr = os.path.join(a.jfr, f"{rel.replace('/', '_')}-{how}-{r}.jfr") if a.jfr else None
                perf = os.path.join(a.perf, f"{rel.replace('/', '_')}-{how}-{r}.data") if a.perf else None
                x = measure(a, a.store, rel, how, jfr, perf)
                print(f"{rel:40} {how:5} {x['gib']:5.2f}  {x['jvm']:5.2f} ({x['sys']:4.2f} sys) {x['reader']:16.2f} {x['wall']:10.2f}  {x['counts']}", flush=True)


if __name__ == "__main__":
    main()
