#!/usr/bin/env bash
# Faults that only show once a run is going, at 1 and 3 ranks: each ends on every rank with its documented exit
# status and one message, and never hangs.
#   lost particle  a velocity of 1e150 m/s: exit 4 naming the particle and where it went (no undefined
#                  behaviour in the cell lists: the domain check stops the run first)
#   out of memory  a run under a small address-space limit: exit 5, "out of memory" with the rank, the size
#                  and the file and line that asked, once per rank that ran out (never SIGABRT)
#   relax unsupported  a free ball under gravity, with nothing that could hold it: refused before it relaxes
#                  (exit 3, naming the ball and the relax section), not after relax.max_steps
#   relax unsettled  a ball with mass damping whose only fixed region holds none of its particles (which scene
#                  data cannot tell): its pseudo-dynamics settles at a terminal speed (a = 0), which the static
#                  check refuses: exit 4, "check that the bodies are supported"
#   inversion      a ball crushed at v = 0.5 c0 without the volume barrier: the run goes on (exit 0), one
#                  warning names the count, the first particle, its body and position, the Final line counts
#                  the inverted particles; with the default barrier the same impact warns of nothing
#   cloth unresolved  two cloths started through each other: the impact zones cannot separate them, so the run
#                  stops at its first step (exit 4) naming the step and the first pair; with `cloth: {unresolved:
#                  continue}` it runs on (exit 0) and every diagnostics line counts the unresolved steps
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
for barrier in 0 1; do
  cat > "$WORK/crush_$barrier.yaml" <<YAML
run:
  end_time: 0.03
  gravity: [0, 0, 0]
  diagnostics_every: 10
materials:
  soft: {density: 1000, E: 1.0e6, nu: 0.3, volume_barrier: $barrier}
bodies:
  - name: ball
    material: soft
    shape: {sphere: {center: [0, 0, 0.1001], radius: 0.1}}
    spacing: 0.0142857
    velocity: [0, 0, -15.8]
obstacles:
  - plane: {point: [0, 0, 0], normal: [0, 0, 1]}
YAML
done
for go in stop continue; do
  cat > "$WORK/cross_$go.yaml" <<YAML
run: {steps: 40, gravity: [0, 0, 0], diagnostics_every: 10}
cloth: {unresolved: $go}
materials:
  cotton: {density: 300, E: 2.0e6, nu: 0.3}
bodies:
  - {name: a, kind: cloth, material: cotton, thickness: 0.002, velocity: [0, 0, 1],
     shape: {grid: {corner: [-0.1, -0.1, 0], u: [0.2, 0, 0], v: [0, 0.2, 0], divisions: [8, 8]}}}
  - {name: b, kind: cloth, material: cotton, thickness: 0.002,
     shape: {grid: {corner: [-0.1, 0, -0.1], u: [0.2, 0, 0], v: [0, 0, 0.2], divisions: [8, 8]}}}
YAML
done
cat > "$WORK/free.yaml" <<'YAML'
run: {steps: 10}
materials:
  gel: {density: 1000, E: 1.0e6, nu: 0.3}
bodies:
  - {name: ball, material: gel, spacing: 0.02, shape: {sphere: {center: [0, 0, 1], radius: 0.1}}}
relax: {}
YAML
cat > "$WORK/fall.yaml" <<'YAML'
run: {steps: 10}
materials:
  gel: {density: 1000, E: 1.0e6, nu: 0.3, mass_damping: 5}
bodies:
  - {name: ball, material: gel, spacing: 0.02, shape: {sphere: {center: [0, 0, 1], radius: 0.1}},
     fixed: [{box: {min: [5, 5, 5], max: [6, 6, 6]}}]}
relax: {max_steps: 3000}
YAML
for n in 1 3; do
  out=$(mpi_run 20 "$n" "$SHARD" run "$WORK/free.yaml" --quiet 2>&1)
  expect_once "relax unsupported at $n rank(s)" $? 3 "$out" "free.yaml:6:8: relax: body 'ball' cannot reach static equilibrium"
  out=$(mpi_run 120 "$n" "$SHARD" run "$WORK/fall.yaml" --quiet 2>&1)
  expect_once "relax unsettled at $n rank(s)" $? 4 "$out" "shard: error: relax:" "check that the bodies are supported"
  out=$(mpi_run 120 "$n" "$SHARD" run "$WORK/crush_0.yaml" 2>&1)
  expect_once "inversion warned at $n rank(s)" $? 0 "$out" "shard: warning:" \
    "particle(s) turned inside out (det J <= 0); the first, particle 0 of body 'ball', is at ("
  printf '%s\n' "$out" | grep -q '^Final: .*, inverted [1-9]' || fail "inversion at $n rank(s): the Final line counts none"
  out=$(mpi_run 120 "$n" "$SHARD" run "$WORK/crush_1.yaml" 2>&1)
  if [ $? != 0 ] || printf '%s\n' "$out" | grep -q "warning:" || ! printf '%s\n' "$out" | grep -q '^Final: .*, inverted 0$'; then
    printf '%s\n' "$out" | tail -5
    fail "barrier at $n rank(s): a warning, no 'inverted 0' on the Final line, or a failed run"
  else
    pass "barrier at $n rank(s): no particle inverted"
  fi
  out=$(mpi_run 120 "$n" "$SHARD" run "$WORK/cross_stop.yaml" --quiet --out "$WORK/o" 2>&1)
  expect_once "cloth unresolved at $n rank(s)" $? 4 "$out" "shard: error: step 0: cloth collisions unresolved after" \
    "the first between particles 27 36 108 117 (global ids)"
  out=$(mpi_run 120 "$n" "$SHARD" run "$WORK/cross_continue.yaml" --out "$WORK/o" 2>&1)
  expect_once "cloth unresolved counted at $n rank(s)" $? 0 "$out" "diag step 40 " "cloth unresolved 40 steps"
  out=$(mpi_run 120 "$n" "$SHARD" run "$WORK/lost.yaml" --quiet 2>&1)
  expect_once "lost particle at $n rank(s)" $? 4 "$out" "shard: error:" "step 1: particle"
  # 300 MB of address space per rank: enough for MPI and the scene text, not for a million particles.
  out=$(ulimit -v 300000; mpi_run 120 "$n" "$SHARD" run "$REPO/jobs/scenes/block_1m.yaml" --steps 1 --quiet 2>&1)
  # Every rank samples its share at start-up, so several ranks may run out at once: each says so once, with
  # its rank; then the run is aborted with exit 5.
  rc=$?
  lines=$(printf '%s\n' "$out" | grep -c "shard: error on rank [0-9]*: out of memory:" || true)
  ranks=$(printf '%s\n' "$out" | grep -o "shard: error on rank [0-9]*: out of memory:" | sort -u | wc -l)
  if [ "$rc" = 5 ] && [ "$lines" -ge 1 ] && [ "$lines" -le "$n" ] && [ "$lines" = "$ranks" ]; then
    pass "out of memory at $n rank(s): $(printf '%s\n' "$out" | grep -m 1 "out of memory:")"
  else
    printf '%s\n' "$out"
    fail "out of memory at $n rank(s): exit $rc, $lines message(s) from $ranks rank(s)"
  fi
done
finish "run-time faults end cleanly"
