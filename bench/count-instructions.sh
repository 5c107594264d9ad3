#!/usr/bin/env bash
# Instructions per turn of one contender (bench/turn-cost.ts, in-memory fetch), counted by
# callgrind: stable on a loaded machine, where CPU time is not. Two runs with the same warm-up,
# one with `measured` more conversations; the difference divided by their turns is the cost of a
# warm turn (start-up, loading and warm-up cancel out). V8 runs single-threaded so JIT and GC
# work is counted on the one thread, in the same place every time.
#   bench/count-instructions.sh "Skein runStream" [warm-up conversations=10] [measured=10] [dist dir=dist]
# YOUNG_MB=128 gives V8 a young generation that large: no scavenge in the window, so counts do
# not move with where collections fall (the mutator's work only; bytes allocated are
# turn-allocation.ts's to show). Short windows are dominated by when the JIT compiles what:
# round 10 used 30 warm-up and 50 measured conversations.
set -euo pipefail
name=${1:?contender name, e.g. "Skein runStream"}
warmup=${2:-10}
measured=${3:-10}
dist=${4:-dist}
turns=50
young=()
if [[ -n "${YOUNG_MB:-}" ]]; then young=("--min-semi-space-size=$YOUNG_MB" "--max-semi-space-size=$YOUNG_MB"); fi
count() {
  local out
  out=$(mktemp)
  valgrind --tool=callgrind --callgrind-out-file=/dev/null node --single-threaded "${young[@]}" "$dist/bench/turn-cost.js" "$name" "$1" "$turns" "$warmup" 2>"$out" >/dev/null
  grep -o 'Collected : [0-9]*' "$out" | grep -o '[0-9]*$'
  rm -f "$out"
}
base=$(count 0)
more=$(count "$measured")
echo "{\"contender\":\"$name\",\"instructionsPerTurn\":$(( (more - base) / (measured * turns) )),\"warmup\":$warmup,\"measured\":$measured}"
