#!/usr/bin/env bash
# Runs one scene on 1, 2, 3 and 4 ranks and requires the same state hash every time, and the same figures of the
# end report that sum over particles (the Final line: energies and momentum; the per-body table: mass, centre of
# mass, mean velocity, extent), which are exact sums and so must have the same digits on any rank count.
# usage: invariance.sh SHARD SCENE STEPS [RANKS...]
set -euo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
shard=$1 scene=$2 steps=$3
shift 3
ranks=("$@")
[ ${#ranks[@]} -gt 0 ] || ranks=(1 2 3 4)
ref="" ref_figures=""
for n in "${ranks[@]}"; do
  rc=0
  out=$(mpi_run 600 "$n" "$shard" run "$scene" --steps "$steps" --quiet 2>&1) || rc=$?
  [ $rc -eq 0 ] || { echo "$out"; echo "FAIL: $scene on $n rank(s) exited with $rc"; exit 1; }
  hash=$(printf '%s\n' "$out" | hash_of)
  contacts=$(printf '%s\n' "$out" | sed -n 's/.*active contacts \([0-9]*\).*/\1/p')
  figures=$(printf '%s\n' "$out" | sed -n '/^Final:/p; /^Bodies at the end:/,/^State hash:/p')
  echo "$scene: $n rank(s): state hash $hash, active contacts $contacts"
  [ -n "$hash" ] || { echo "$out"; echo "FAIL: no state hash"; exit 1; }
  if [ -z "$ref" ]; then
    ref=$hash ref_figures=$figures
  elif [ "$hash" != "$ref" ]; then
    echo "FAIL: $scene: hash on $n rank(s) is $hash, on ${ranks[0]} rank(s) $ref"
    exit 1
  elif [ "$figures" != "$ref_figures" ]; then
    echo "FAIL: $scene: the report's sums on $n rank(s) differ from ${ranks[0]} rank(s):"
    diff <(printf '%s\n' "$ref_figures") <(printf '%s\n' "$figures") || true
    exit 1
  fi
done
printf '%s\n' "$ref_figures" | head -1
echo "PASS: $scene bit-identical on ${ranks[*]} ranks (state hash and the report's sums)"
