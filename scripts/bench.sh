#!/usr/bin/env bash
# Runs every benchmark and prints Markdown for BENCHMARKS.md:
#   1. JMH kernels (GGML and MLX families -> f32/bf16), one core, GB/s of output;
#   2. gguf-py's numpy dequantization of the same data sizes, for comparison;
#   3. read throughput of modelfs files through a real mount vs `cat` of their blobs, same run.
# Usage: scripts/bench.sh [--mib N]     (N: size of each generated model for 3, default 512)
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
mib=512
[ "${1:-}" = "--mib" ] && mib="$2"
find_jdk; ensure_maven; ensure_fuse; ensure_python_venv
cd "$MODELFS_TOP"
mvn -q -B -Dstyle.color=never -DskipTests package
mvn -q -B -Dstyle.color=never -pl benchmarks -am compile dependency:build-classpath -Dmdep.outputFile=target/bench.cp
cp="benchmarks/target/classes:$(cat benchmarks/target/bench.cp)"
echo "## JMH: GGML kernels"
"$JAVA_HOME/bin/java" "${MODELFS_JVM_FLAGS[@]}" -cp "$cp" dev.modelfs.bench.GgmlDequantBench
echo "## JMH: MLX kernels"
"$JAVA_HOME/bin/java" "${MODELFS_JVM_FLAGS[@]}" -cp "$cp" dev.modelfs.bench.MlxDequantBench
echo "## gguf-py (numpy)"
"$MODELFS_PYTHON" integration-tests/python/bench_ggml_numpy.py
echo "## Read throughput through a mount"
work=$(mktemp -d)
trap 'fusermount -u "$work/mnt" 2>/dev/null || true; rm -rf "$work"' EXIT
"$MODELFS_PYTHON" integration-tests/bench/read_throughput.py "$MODELFS_JAR" "$work" --mib "$mib" --java "$JAVA_HOME/bin/java"
