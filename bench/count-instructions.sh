#!/usr/bin/env bash
# Instructions per turn of one contender (bench/turn-cost.ts, in-memory fetch), counted by
# callgrind: stable on a loaded machine, where CPU time is not. Two runs with the same warm-up,
# one with `measured` more conversations; the difference divided by their turns is the cost of a
# warm turn (start-up, loading and warm-up cancel out). V8 runs with --predictable: single-threaded
# (JIT and GC work counted on the one thread) and with fixed hash and random seeds, so two runs
# of one build count the same to within about 0.01% (round 10: 2,037,672,359 vs 2,037,815,541
# instructions); with --single-threaded alone, counts of one build differed by 15-40%.
#   bench/count-instructions.sh "Skein runStream" [warm-up conversations=10] [measured=10] [dist dir=dist]
# YOUNG_MB=128 gives V8 a young generation that large: no scavenge in the window (the mutator's
# work only; bytes allocated are turn-allocation.ts's to show).
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
  valgrind --tool=callgrind --callgrind-out-file=/dev/null node --predictable "${young[@]}" "$dist/bench/turn-cost.js" "$name" "$1" "$turns" "$warmup" 2>"$out" >/dev/null
  grep -o 'Collected : [0-9]*' "$out" | grep -o '[0-9]*$'
  rm -f "$out"
}
base=$(count 0)
more=$(count "$measured")
echo "{\"contender\":\"$name\",\"instructionsPerTurn\":$(( (more - base) / (measured * turns) )),\"warmup\":$warmup,\"measured\":$measured}"
