#!/usr/bin/env bash
# Runs one scene on 1, 2, 3 and 4 ranks and requires the same state hash every time (and the same step count).
# usage: invariance.sh SHARD SCENE STEPS [RANKS...]
set -euo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
shard=$1 scene=$2 steps=$3
shift 3
ranks=("$@")
[ ${#ranks[@]} -gt 0 ] || ranks=(1 2 3 4)
ref=""
for n in "${ranks[@]}"; do
  out=$(mpi_run 600 "$n" "$shard" run "$scene" --steps "$steps" --quiet 2>&1) || {
    echo "$out"; echo "FAIL: $scene on $n rank(s) exited with $?"; exit 1; }
  hash=$(printf '%s\n' "$out" | hash_of)
  contacts=$(printf '%s\n' "$out" | sed -n 's/.*active contacts \([0-9]*\).*/\1/p')
  echo "$scene: $n rank(s): state hash $hash, active contacts $contacts"
  [ -n "$hash" ] || { echo "$out"; echo "FAIL: no state hash"; exit 1; }
  if [ -z "$ref" ]; then
    ref=$hash
  elif [ "$hash" != "$ref" ]; then
    echo "FAIL: $scene: hash on $n rank(s) is $hash, on ${ranks[0]} rank(s) $ref"
    exit 1
  fi
done
echo "PASS: $scene bit-identical on ${ranks[*]} ranks"
