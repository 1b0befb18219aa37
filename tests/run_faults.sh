#!/usr/bin/env bash
# Faults that only show once a run is going, at 1 and 3 ranks: each ends on every rank with its documented exit
# status and one message, and never hangs.
#   lost particle  a velocity of 1e150 m/s: exit 4 naming the particle and where it went (no undefined
#                  behaviour in the cell lists: the domain check stops the run first)
#   out of memory  a run under a small address-space limit: exit 5, "out of memory" with the rank, the size
#                  and the file and line that asked (never SIGABRT)
# usage: run_faults.sh SHARD   (run in tests/)
set -uo pipefail
# shellcheck source=tests/lib.sh
. ./lib.sh
test_init "$1"
cat > "$WORK/lost.yaml" <<'YAML'
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
for n in 1 3; do
  out=$(mpi_run 120 "$n" "$SHARD" run "$WORK/lost.yaml" --quiet 2>&1)
  expect_once "lost particle at $n rank(s)" $? 4 "$out" "shard: error:" "step 1: particle"
  # 300 MB of address space per rank: enough for MPI and the scene text, not for a million particles.
  out=$(ulimit -v 300000; mpi_run 120 "$n" "$SHARD" run "$REPO/jobs/scenes/block_1m.yaml" --steps 1 --quiet 2>&1)
  expect_once "out of memory at $n rank(s)" $? 5 "$out" "out of memory:"
done
finish "run-time faults end cleanly"
