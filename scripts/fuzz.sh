#!/usr/bin/env bash
# Fuzzes every Jazzer target (fs/src/fuzz/java/.../ParserFuzzTest.java) for SECONDS each, one Maven run per
# target (Jazzer fuzzes one target per JVM). A crash fails the run and leaves its input next to the
# target's seeds (fs/src/fuzz/resources/dev/modelfs/fuzz/ParserFuzzTestInputs/<target>/), where ./test
# replays it from then on; the growing corpus stays in .cifuzz-corpus/ (not committed).
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]     (SECONDS: default $MODELFS_FUZZ_SECONDS, else 60)
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
secs="${1:-${MODELFS_FUZZ_SECONDS:-60}}"
[ $# -gt 0 ] && shift
case "$secs" in ''|*[!0-9]*) die "fuzz.sh: SECONDS must be a whole number, got '$secs'";; esac
find_jdk; ensure_maven
cd "$MODELFS_TOP"
src=fs/src/fuzz/java/dev/modelfs/fuzz/ParserFuzzTest.java
if [ $# -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(grep -A1 '@FuzzTest' "$src" | sed -n 's/^ *void \([A-Za-z0-9_]*\)(.*/\1/p')
fi
[ ${#targets[@]} -gt 0 ] || die "fuzz.sh: no @FuzzTest targets found in $src"
say "fuzzing ${targets[*]} for ${secs} s each"
mvn -B -q -ntp -pl fs -am test-compile
for t in "${targets[@]}"; do
  say "fuzzing $t for ${secs} s"
  # JAZZER_MAX_DURATION overrides the target's @FuzzTest(maxDuration); JAZZER_FUZZ=1 fuzzes instead of replaying
  JAZZER_FUZZ=1 JAZZER_MAX_DURATION="${secs}s" mvn -B -ntp -pl fs -am test -Dtest="ParserFuzzTest#$t" \
    -Dsurefire.failIfNoSpecifiedTests=false \
    || die "fuzz.sh: target $t failed: see the surefire output above; its crashing input is in fs/src/fuzz/resources/dev/modelfs/fuzz/ParserFuzzTestInputs/$t/"
done
say "fuzzing done: ${#targets[@]} targets, ${secs} s each, no findings"
