#!/usr/bin/env bash
# Fuzzes every Jazzer target for SECONDS each, one Maven run per target (Jazzer fuzzes one target per JVM):
# fs's parsers (fs/src/fuzz/java/.../ParserFuzzTest.java) and the NFS server's RPC front and decoders
# (nfs/src/fuzz/java/.../RpcFuzzTest.java). A crash fails the run and leaves its input next to the
# target's seeds (<module>/src/fuzz/resources/.../<Class>Inputs/<target>/), where ./test replays it from
# then on; the growing corpus stays in .cifuzz-corpus/ (not committed).
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]     (SECONDS: default $MODELFS_FUZZ_SECONDS, else 60)
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
secs="${1:-${MODELFS_FUZZ_SECONDS:-60}}"
[ $# -gt 0 ] && shift
case "$secs" in ''|*[!0-9]*) die "fuzz.sh: SECONDS must be a whole number, got '$secs'";; esac
find_jdk; ensure_maven
cd "$MODELFS_TOP"
sources=(fs/src/fuzz/java/dev/modelfs/fuzz/ParserFuzzTest.java nfs/src/fuzz/java/dev/modelfs/nfs/RpcFuzzTest.java)
# every target as module:Class#method
all=()
for src in "${sources[@]}"; do
  module="${src%%/*}"; class="$(basename "$src" .java)"
  while read -r m; do all+=("$module:$class#$m"); done \
    < <(grep -A1 '@FuzzTest' "$src" | sed -n 's/^ *void \([A-Za-z0-9_]*\)(.*/\1/p')
done
targets=()
if [ $# -gt 0 ]; then
  for want in "$@"; do
    found=""
    for t in "${all[@]}"; do [ "${t##*#}" = "$want" ] && found="$t"; done
    [ -n "$found" ] || die "fuzz.sh: no target named $want (targets: ${all[*]##*#})"
    targets+=("$found")
  done
else
  targets=("${all[@]}")
fi
[ ${#targets[@]} -gt 0 ] || die "fuzz.sh: no @FuzzTest targets found in ${sources[*]}"
say "fuzzing ${targets[*]} for ${secs} s each"
mvn -B -q -ntp -pl fs,nfs -am test-compile
for t in "${targets[@]}"; do
  module="${t%%:*}"; test="${t#*:}"
  say "fuzzing $test ($module) for ${secs} s"
  # JAZZER_MAX_DURATION overrides the target's @FuzzTest(maxDuration); JAZZER_FUZZ=1 fuzzes instead of replaying
  JAZZER_FUZZ=1 JAZZER_MAX_DURATION="${secs}s" mvn -B -ntp -pl "$module" -am test -Dtest="$test" \
    -Dsurefire.failIfNoSpecifiedTests=false \
    || die "fuzz.sh: target $test failed: see the surefire output above; its crashing input is in $module/src/fuzz/resources/ next to the target's seeds"
done
say "fuzzing done: ${#targets[@]} targets, ${secs} s each, no findings"
