#!/usr/bin/env bash
# Faults that only show once a run is going, at 1 and 3 ranks: each ends on every rank with its documented exit
# status and one message, and never hangs.
#   lost particle  a velocity of 1e150 m/s: exit 4 naming the particle and where it went (no undefined
#                  behaviour in the cell lists: the domain check stops the run first)
#   out of memory  a run under a small address-space limit: exit 5, "out of memory" with the rank, the size
#                  and the file and line that asked (never SIGABRT)
# usage: run_faults.sh SHARD   (run in tests/)
set -uo pipefail
shard=$1
fails=0
work=$(mktemp -d "${TMPDIR:-/tmp}/shard-faults.XXXXXX")
trap 'rm -rf "$work"' EXIT
cat > "$work/lost.yaml" <<'YAML'
run:
  steps: 20
materials:
  steel: {density: 7800, E: 2.0e11, nu: 0.3}
bodies:
  - name: bullet
    material: steel
    shape: {sphere: {center: [0, 0, 0], radius: 0.1}}
    spacing: 0.02
    velocity: [1e150, 0, 0]
YAML
# expect NAME STATUS TEXT COMMAND...: exit STATUS (not a timeout), TEXT exactly once.
expect() {
  local name=$1 want=$2 text=$3
  shift 3
  out=$("$@" 2>&1)
  rc=$?
  count=$(printf '%s\n' "$out" | grep -cF -- "$text" || true)
  if [ $rc -eq "$want" ] && [ "$count" -eq 1 ]; then
    echo "PASS: $name: $(printf '%s\n' "$out" | grep -F -- "$text")"
  else
    echo "FAIL: $name: exit $rc (want $want), '$text' printed $count time(s)"; printf '%s\n' "$out" | head -20
    fails=$((fails + 1))
  fi
}
for n in 1 3; do
  expect "lost particle at $n rank(s)" 4 "step 1: particle" \
    timeout 120 mpiexec --oversubscribe -n "$n" "$shard" run "$work/lost.yaml" --quiet
  # 300 MB of address space per rank: enough for MPI and the scene text, not for a million particles.
  expect "out of memory at $n rank(s)" 5 "out of memory:" \
    bash -c "ulimit -v 300000; timeout 120 mpiexec --oversubscribe -n $n '$shard' run ../jobs/scenes/block_1m.yaml --steps 1 --quiet"
done
exit $((fails > 0))
