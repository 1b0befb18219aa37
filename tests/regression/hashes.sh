#!/usr/bin/env bash
# The recorded state hash of every shipped scene (jobs/scenes/*.yaml and tests/mpi/scenes/*.yaml) after a few
# steps on one rank.  A restructuring of the code must leave every hash as it is; a commit that changes the
# physics on purpose updates hashes.txt and says why in its message.  A scene without a recorded hash fails
# too, so that new scenes get one.
# usage: hashes.sh SHARD   (run in tests/regression)
set -uo pipefail
shard=$1
root=../..
fails=0
declare -A want steps
while read -r scene n hash; do
  [ -z "$scene" ] || [ "${scene:0:1}" = "#" ] && continue
  want[$scene]=$hash steps[$scene]=$n
done < hashes.txt
for path in "$root"/jobs/scenes/*.yaml "$root"/tests/mpi/scenes/*.yaml; do
  scene=${path#"$root"/}
  if [ -z "${want[$scene]:-}" ]; then
    echo "FAIL: $scene has no recorded hash in tests/regression/hashes.txt"; fails=$((fails + 1)); continue
  fi
  out=$(timeout 600 mpiexec --oversubscribe -n 1 "$shard" run "$path" --steps "${steps[$scene]}" --quiet 2>&1)
  got=$(printf '%s\n' "$out" | sed -n 's/^State hash: //p')
  if [ "$got" = "${want[$scene]}" ]; then
    echo "PASS: $scene (${steps[$scene]} steps): $got"
  else
    [ -n "$got" ] || printf '%s\n' "$out" | tail -5
    echo "FAIL: $scene (${steps[$scene]} steps): state hash '$got', recorded ${want[$scene]}"; fails=$((fails + 1))
  fi
done
[ $fails -eq 0 ] && echo "PASS: every recorded state hash" || echo "FAIL: $fails scene(s)"
exit $((fails > 0))
