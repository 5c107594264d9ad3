#!/usr/bin/env bash
# Instructions per turn of one contender (bench/turn-cost.ts, in-memory fetch), counted by
# callgrind: stable on a loaded machine, where CPU time is not. Two runs with the same warm-up,
# one with `measured` more conversations; the difference divided by their turns is the cost of a
# warm turn (start-up, loading and warm-up cancel out). V8 runs single-threaded so JIT and GC
# work is counted on the one thread, in the same place every time.
#   bench/count-instructions.sh "Skein runStream" [warm-up conversations=10] [measured=10] [dist dir=dist]
set -euo pipefail
name=${1:?contender name, e.g. "Skein runStream"}
warmup=${2:-10}
measured=${3:-10}
dist=${4:-dist}
turns=50
count() {
  local out
  out=$(mktemp)
  valgrind --tool=callgrind --callgrind-out-file=/dev/null node --single-threaded "$dist/bench/turn-cost.js" "$name" "$1" "$turns" "$warmup" 2>"$out" >/dev/null
  grep -o 'Collected : [0-9]*' "$out" | grep -o '[0-9]*$'
  rm -f "$out"
}
base=$(count 0)
more=$(count "$measured")
echo "{\"contender\":\"$name\",\"instructionsPerTurn\":$(( (more - base) / (measured * turns) )),\"warmup\":$warmup,\"measured\":$measured}"
