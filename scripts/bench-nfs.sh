#!/usr/bin/env bash
# NFS read throughput, printed as Markdown for BENCHMARKS.md: `nfs-cat` (libnfs, NFSv3 over TCP on
# 127.0.0.1) from `modelfs nfs` against `cat` of the same files on a FUSE mount of the same store and
# `cat` of the blob, all in the same run. Store: read_throughput.py's generated models (a Q8_0+Q4_K GGUF).
# Usage: scripts/bench-nfs.sh [--mib N]     (N: size of the generated model, default 512)
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mib=512
[ "${1:-}" = "--mib" ] && mib="$2"
find_jdk; ensure_fuse; ensure_python_venv; ensure_nfs_clients; build_if_needed
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  fusermount -u "$work/mnt" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/mnt"
say "generating a ${mib} MiB GGUF store…"
"$MODELFS_PYTHON" integration-tests/python/make_bench_store.py "$work/store" "$mib"
java=("$JAVA_HOME/bin/java" "${MODELFS_JVM_FLAGS[@]}" "${MODELFS_VECTOR_FLAGS[@]}" -jar "$MODELFS_JAR")
"${java[@]}" mount --store "$work/store" --no-cache-dir --cache-size 256M "$work/mnt" > "$work/mount.log" 2>&1 & pids+=($!)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"${java[@]}" nfs --store "$work/store" --port "$port" --no-cache-dir --cache-size 256M > "$work/nfs.log" 2>&1 & pids+=($!)
for _ in $(seq 300); do
  grep -q "modelfs: serving NFS" "$work/nfs.log" && mountpoint -q "$work/mnt" && break
  sleep 0.1
done
grep -q "modelfs: serving NFS" "$work/nfs.log" || die "modelfs nfs did not start: $(cat "$work/nfs.log")"
mountpoint -q "$work/mnt" || die "modelfs mount did not start: $(cat "$work/mount.log")"
url() { echo "nfs://127.0.0.1/$1?version=3&nfsport=$port&mountport=$port"; }
# seconds taken by a command whose stdout is discarded
secs() { local t0 t1; t0=$(date +%s.%N); "$@" > /dev/null; t1=$(date +%s.%N); echo "$t1 - $t0" | bc -l; }
gbs() { echo "scale=2; $1 / $2 / 1000000000" | bc -l; }
echo "| file | size | \`cat\` on the FUSE mount, 1st / 2nd (GB/s) | \`nfs-cat\` from \`modelfs nfs\`, 1st / 2nd (GB/s) | NFS ÷ FUSE (2nd) |"
echo "|---|---|---|---|---|"
for f in big-gguf/model.gguf big-gguf/model.fp32.gguf; do
  size=$(stat -c %s "$work/mnt/$f")
  c1=$(secs cat "$work/mnt/$f"); c2=$(secs cat "$work/mnt/$f")
  n1=$(secs nfs-cat "$(url "$f")"); n2=$(secs nfs-cat "$(url "$f")")
  printf '| `%s` | %d MiB | %s / %s | %s / %s | %s |\n' "$f" $((size >> 20)) "$(gbs "$size" "$c1")" "$(gbs "$size" "$c2")" \
    "$(gbs "$size" "$n1")" "$(gbs "$size" "$n2")" "$(echo "scale=2; $c2 / $n2" | bc -l)"
done
f=big-gguf/model.gguf
size=$(stat -c %s "$work/mnt/$f")
blob=$(ls -S "$work/store/blobs" | head -n1)
b=$(secs cat "$work/store/blobs/$blob")
echo
echo "Same run: \`cat\` of the blob itself $(gbs "$size" "$b") GB/s."
t0=$(date +%s.%N)
readers=()
for _ in 1 2 3 4; do nfs-cat "$(url "$f")" > /dev/null & readers+=($!); done
wait "${readers[@]}"
t1=$(date +%s.%N)
echo "4 concurrent \`nfs-cat\` of \`$f\`: $(gbs $((size * 4)) "$(echo "$t1 - $t0" | bc -l)") GB/s in total."
