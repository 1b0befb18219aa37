#!/usr/bin/env bash
# The recorded state hash of every shipped scene (jobs/scenes/*.yaml and tests/mpi/scenes/*.yaml) after a few
# steps on one rank.  A restructuring of the code must leave every hash as it is; a commit that changes the
# physics on purpose updates hashes.txt and says why in its message.  A scene without a recorded hash fails
# too, so that new scenes get one.
# usage: hashes.sh SHARD   (run in tests/regression)
set -uo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
shard=$1
root=../..
declare -A want steps
while read -r scene n hash; do
  [ -z "$scene" ] || [ "${scene:0:1}" = "#" ] && continue
  want[$scene]=$hash steps[$scene]=$n
done < hashes.txt
for path in "$root"/jobs/scenes/*.yaml "$root"/tests/mpi/scenes/*.yaml; do
  scene=${path#"$root"/}
  if [ -z "${want[$scene]:-}" ]; then
    fail "$scene has no recorded hash in tests/regression/hashes.txt"; continue
  fi
  out=$(mpi_run 600 1 "$shard" run "$path" --steps "${steps[$scene]}" --quiet 2>&1)
  got=$(printf '%s\n' "$out" | hash_of)
  if [ "$got" = "${want[$scene]}" ]; then
    pass "$scene (${steps[$scene]} steps): $got"
  else
    [ -n "$got" ] || printf '%s\n' "$out" | tail -5
    fail "$scene (${steps[$scene]} steps): state hash '$got', recorded ${want[$scene]}"
  fi
done
finish "every recorded state hash"
