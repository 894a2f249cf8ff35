#!/usr/bin/env bash
# Runs every benchmark and prints Markdown for BENCHMARKS.md:
#   1. JMH kernels (GGML and MLX families -> f32/bf16), one core, GB/s of output;
#   2. gguf-py's numpy dequantization of the same data sizes, for comparison;
#   3. the goals of issue 19 on fresh mounts (a new modelfs JVM per measurement), next to bindfs and
#      nfs-ganesha in the same run (integration-tests/bench/fresh_mount.py): first touch with and without
#      the kernel warm-up, passthrough and reassembled first reads, NFS with nfs-cat and a parallel
#      libnfs reader (integration-tests/bench/nfs_parallel_read.c) against ganesha, 4 readers of one
#      converted file (server CPU per GB), --cache-dir across a restart, fio random reads;
#   4. read throughput through one long-lived (warm) mount next to bindfs in the same run:
#      first reads, page-cache reads, 1 vs 2 cores, 4 parallel readers, fio random reads, peak RSS.
#   --load runs only 5: whole tools (transformers from_pretrained + forward, llama.cpp to the first token) loading
#      models from fresh mounts against local copies of the same bytes, cold (page cache dropped) and warm
#      (integration-tests/bench/load_time.py, issue 37); --load-shape H,N,V sets the Llama's hidden size, layers and
#      vocabulary (default 256,2,512, a smoke size; ~1e9 parameters: 2048,16,32000); --load-cache-dir adds a
#      third state, a fresh mount over a filled --cache-dir (--load-cache-dir-size SIZE: its bound, default modelfs's);
#      --load-ahead two more, the first load once modelfs has converted ahead into an empty cache directory, cold and
#      warm; --load-states S,S runs only those states (cold, warm, cache-dir, ahead-cold, ahead);
#      --load-only S runs only the cases whose path in the mount contains S (e.g. st/model.gguf); --load-bindfs also
#      times each warm load on the local copy through a fresh bindfs mount (FUSE's own cost, no conversion);
#      --load-read-ahead-kb K mounts with --read-ahead-kb K and gives bindfs's mount the same window (default: modelfs's).
#      Needs root (drop_caches).
#   --mmap runs only 7: files that are not kernel passthrough loaded by mmap (plain, MADV_WILLNEED as llama.cpp does,
#      MADV_SEQUENTIAL) against read(2), on fresh mounts and local copies, at the mount's read_ahead_kb values --ra-kb
#      (integration-tests/bench/mmap_load.py, issue 37 point 3; the store and shape of --load). Needs root.
#   --startup runs only 6: start-up, the seconds from `modelfs mount` / `modelfs nfs` to a listable tree and to the end
#      of the warm-up behind it, quiet and beside `stress-ng --cpu 2`, over the integration fixture's store (44 models;
#      $MODELFS_STARTUP_STORE, else made by make_fixture.py in the work folder) and a store of 100 models made from it
#      by copying manifests (integration-tests/bench/startup_time.py, issue 37); --startup-before JAR adds an older
#      build's jar to compare with (e.g. main's mount-cli/target/modelfs.jar). Each table has a row of this build
#      started with its AOT cache (made first by the launcher's training run, scripts/lib.sh aot_flags, in the work
#      folder) and the JVM's CPU seconds until the listing (utime + stime, robust to other load).
# Usage: scripts/bench.sh [--mib N] [--rounds R] [--stream-gb G] [--mount-only] [--fresh-only | --goals-only] [--work DIR]
#        scripts/bench.sh --load [--load-shape H,N,V] [--load-cache-dir] [--load-ahead] [--load-states S,S] [--load-cache-dir-size SIZE] [--load-only S] [--load-bindfs] [--load-read-ahead-kb K] [--rounds R] [--work DIR]
#        scripts/bench.sh --mmap [--load-shape H,N,V] [--ra-kb K,K] [--rounds R] [--work DIR]
#        scripts/bench.sh --startup [--startup-before JAR] [--rounds R] [--work DIR]
#   N: size of each generated model for 3 and 4 (default 512); R: rounds, medians reported (default 3);
#   G: GB of converted files streamed for the RSS figure (default 20); --mount-only skips 1 and 2;
#   --fresh-only runs only 3; --goals-only runs only the rows of 3 the read-path goals are stated on (for
#   large --mib: issue 37's 8 GiB); DIR: keep the generated store there and reuse it (default: a temporary folder).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mib=512; rounds=3; stream_gb=20; mount_only=; fresh_only=; keep=; load=; load_shape=256,2,512; load_args=; mmap=; ra_kb=128,1024; startup=; before=; goals_only=
while [ $# -gt 0 ]; do
  case "$1" in
    --mib) mib="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --stream-gb) stream_gb="$2"; shift 2 ;;
    --mount-only) mount_only=1; shift ;;
    --fresh-only) mount_only=1; fresh_only=1; shift ;;
    --goals-only) mount_only=1; fresh_only=1; goals_only=--goals-only; shift ;;
    --work) keep="$2"; shift 2 ;;
    --load) load=1; shift ;;
    --load-shape) load_shape="$2"; shift 2 ;;
    --load-cache-dir) load_args="$load_args --cache-dir"; shift ;;
    --load-ahead) load_args="$load_args --ahead"; shift ;;
    --load-states) load_args="$load_args --states $2"; shift 2 ;;
    --load-cache-dir-size) load_args="$load_args --cache-dir-size $2"; shift 2 ;;
    --load-only) load_args="$load_args --only $2"; shift 2 ;;
    --load-bindfs) load_args="$load_args --bindfs"; shift ;;
    --load-read-ahead-kb) load_args="$load_args --read-ahead-kb $2"; shift 2 ;;
    --mmap) mmap=1; shift ;;
    --ra-kb) ra_kb="$2"; shift 2 ;;
    --startup) startup=1; shift ;;
    --startup-before) before="$2"; shift 2 ;;
    *) die "unknown argument $1" ;;
  esac
done
find_jdk; ensure_maven; ensure_fuse; ensure_python_venv
if [ -n "$startup" ]; then
  command -v stress-ng >/dev/null || need_root_or_say "stress-ng (both CPUs busy)" stress-ng
  ensure_nfs_clients
  cd "$MODELFS_TOP"
  mvn -q -B -Dstyle.color=never -DskipTests package
  work="${keep:-$(mktemp -d)}"; mkdir -p "$work"
  store="${MODELFS_STARTUP_STORE:-$work/fixture/store}"
  if [ ! -d "$store/manifests" ]; then
    "$MODELFS_PYTHON" integration-tests/python/make_fixture.py "$work/fixture" >/dev/null
  fi
  jars=(--jar "this build=$MODELFS_JAR")
  [ -z "$before" ] || jars+=(--jar "before=$before")
  # this build's AOT cache, made as the launcher makes it (a training run of `modelfs demo`), waited for here
  aot=("${MODELFS_JVM_FLAGS[@]}" "${MODELFS_VECTOR_FLAGS[@]}")
  MODELFS_AOT_DIR="$work/aot" aot_flags aot
  for _ in $(seq 300); do compgen -G "$work/aot/modelfs-*.aot" >/dev/null && break; sleep 1; done
  cache=$(compgen -G "$work/aot/modelfs-*.aot" | head -n1) || die "no AOT cache made in 300 s; see $work/aot/*.log"
  echo "## Start-up: from the command to a listable tree (issue 37)"
  rc=0
  "$MODELFS_PYTHON" integration-tests/bench/startup_time.py "$store" "$work/startup" "${jars[@]}" --no-warmup-row --rounds "$rounds" \
    --aot-cache "$cache" --java "$JAVA_HOME/bin/java" || rc=$?
  [ -n "$keep" ] || rm -rf "$work"
  exit $rc
fi
if [ -n "$load$mmap" ]; then
  cd "$MODELFS_TOP"
  mvn -q -B -Dstyle.color=never -DskipTests package
  IFS=, read -r h n v <<<"$load_shape"
  work="${keep:-$(mktemp -d)}"; mkdir -p "$work"
fi
if [ -n "$mmap" ]; then
  echo "## mmap through the mount against read (issue 37 point 3)"
  rc=0
  MODELFS_JVM_FLAGS="${MODELFS_JVM_FLAGS[*]} ${MODELFS_VECTOR_FLAGS[*]}" "$MODELFS_PYTHON" integration-tests/bench/mmap_load.py \
    "$MODELFS_JAR" "$work" --hidden "$h" --layers "$n" --vocab "$v" --rounds "$rounds" --java "$JAVA_HOME/bin/java" \
    --python "$MODELFS_PYTHON" --ra-kb "$ra_kb" || rc=$?
  [ -n "$keep" ] || rm -rf "$work"
  exit $rc
fi
if [ -n "$load" ]; then
  echo "## Whole tools: load times from fresh mounts against local copies (issue 37)"
  rc=0
  MODELFS_JVM_FLAGS="${MODELFS_JVM_FLAGS[*]} ${MODELFS_VECTOR_FLAGS[*]}" "$MODELFS_PYTHON" integration-tests/bench/load_time.py \
    "$MODELFS_JAR" "$work" --hidden "$h" --layers "$n" --vocab "$v" --rounds "$rounds" --java "$JAVA_HOME/bin/java" \
    --python "$MODELFS_PYTHON" $load_args || rc=$?
  [ -n "$keep" ] || rm -rf "$work"
  exit $rc
fi
command -v bindfs >/dev/null || need_root_or_say "bindfs (the C FUSE peer)" bindfs
command -v fio >/dev/null || need_root_or_say "fio" fio
command -v vmtouch >/dev/null || need_root_or_say "vmtouch (keeps the blobs in the page cache)" vmtouch
command -v taskset >/dev/null || need_root_or_say "taskset" util-linux
ensure_nfs_clients
command -v cc >/dev/null || need_root_or_say "a C compiler (the parallel NFS reader)" gcc libc6-dev
[ -f /usr/include/nfsc/libnfs.h ] || need_root_or_say "libnfs headers (the parallel NFS reader)" libnfs-dev
cd "$MODELFS_TOP"
mvn -q -B -Dstyle.color=never -DskipTests package
reporting=/sys/module/page_reporting/parameters/page_reporting_order; reporting_was=
on_exit() {
  for m in mnt bindfs fresh-mnt fresh-bindfs; do fusermount -u "$work/$m" 2>/dev/null || true; done
  [ -n "$keep" ] || rm -rf "$work"
  [ -z "$reporting_was" ] || echo "$reporting_was" > "$reporting"
}
if [ -n "$keep" ]; then
  work="$keep"; mkdir -p "$work"
else
  work=$(mktemp -d)
fi
trap on_exit EXIT
# Free page reporting (virtio-balloon: this VM's guest hands free pages back to its host with no minimum delay) makes the
# first touch of such a page a host fault; what a timed read then costs depends on what ran before it (a read right
# after another reuses the pages that one freed, a read after a fresh mount's warm-up pays the faults). Every party
# (modelfs, bindfs, ganesha) is measured with it off, and the setting is restored on exit: BENCHMARKS.md.
if [ -e "$reporting" ]; then
  was=$(cat "$reporting")
  if (echo 11 > "$reporting") 2>/dev/null; then      # above the largest page order (10): no free page is reported
    reporting_was=$was
    echo "(free page reporting off for the run: page_reporting_order $was -> 11, restored on exit)"
  else
    echo "(free page reporting is on and could not be turned off (root only): first reads vary with what ran before them)"
  fi
fi
if [ -z "$mount_only" ]; then
mvn -q -B -Dstyle.color=never -pl benchmarks -am compile dependency:build-classpath -Dmdep.outputFile=target/bench.cp
cp="benchmarks/target/classes:$(cat benchmarks/target/bench.cp)"
echo "## JMH: GGML kernels"
"$JAVA_HOME/bin/java" "${MODELFS_JVM_FLAGS[@]}" "${MODELFS_VECTOR_FLAGS[@]}" -cp "$cp" dev.modelfs.bench.GgmlDequantBench
echo "## JMH: MLX kernels"
"$JAVA_HOME/bin/java" "${MODELFS_JVM_FLAGS[@]}" "${MODELFS_VECTOR_FLAGS[@]}" -cp "$cp" dev.modelfs.bench.MlxDequantBench
echo "## gguf-py (numpy)"
"$MODELFS_PYTHON" integration-tests/python/bench_ggml_numpy.py
fi
mkdir -p "$work"
cc -O2 -Wall -o "$work/nfs_parallel_read" integration-tests/bench/nfs_parallel_read.c -lnfs
echo "## Issue 19 goals: fresh mounts next to bindfs and nfs-ganesha"
MODELFS_JVM_FLAGS="${MODELFS_JVM_FLAGS[*]} ${MODELFS_VECTOR_FLAGS[*]}" "$MODELFS_PYTHON" integration-tests/bench/fresh_mount.py "$MODELFS_JAR" "$work" \
  --nfs-reader "$work/nfs_parallel_read" --mib "$mib" --rounds "$rounds" --java "$JAVA_HOME/bin/java" $goals_only
[ -n "$fresh_only" ] && exit 0
echo "## Read throughput through a warm mount, next to bindfs"
MODELFS_JVM_FLAGS="${MODELFS_JVM_FLAGS[*]} ${MODELFS_VECTOR_FLAGS[*]}" "$MODELFS_PYTHON" integration-tests/bench/read_throughput.py "$MODELFS_JAR" "$work" \
  --mib "$mib" --rounds "$rounds" --stream-gb "$stream_gb" --java "$JAVA_HOME/bin/java"
