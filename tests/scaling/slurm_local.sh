#!/usr/bin/env bash
# The SLURM templates without SLURM, through jobs/slurm/local.sh (srun -> mpiexec):
#  - run.sbatch on 2 ranks, chained by step count: 40 steps in 2 jobs of 20 (the template adds a checkpoint
#    section to a copy of the scene, the second job restarts from the first one's checkpoint); the final state
#    hash equals an uninterrupted 2-rank run's; the third job, queued by the second, is cancelled; DONE is written;
#  - run.sbatch on a scene with a bad value stops the chain (no successor runs);
#  - strong.sbatch on 1 node x 2 tasks: the series CSV (ranks 1 and 2) and its plots.
# usage: slurm_local.sh SHARD WORKDIR
set -uo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
test_init "$1" "$2"
need_hdf5 "no checkpoints, no chaining"
export SHARD_HOME=$REPO
cat >"$WORK/drop.yaml" <<YAML
run: {steps: 40, gravity: [0, 0, -9.81]}
materials:
  m: {density: 1000, E: 1.0e6, nu: 0.3}
bodies:
  - name: block
    material: m
    shape: {box: {min: [0, 0, 0.01], max: [0.1, 0.1, 0.08]}}
    spacing: 0.01
    velocity: [0.1, 0, -1]
obstacles:
  - plane: {point: [0, 0, 0], normal: [0, 0, 1]}
YAML
cd "$WORK" || exit 1

ref=$(shard_run 2 run drop.yaml --steps 40 --out "$WORK/ref" | hash_of)
[ -n "$ref" ] || { fail "no reference hash"; finish; }

NODES=1 TASKS_PER_NODE=2 SCENE=$WORK/drop.yaml STEPS=40 CHECKPOINT_EVERY=10 SEGMENT_STEPS=20 SHARD_FLAGS=--quiet \
  OUT=$WORK/runs timeout 600 "$REPO/jobs/slurm/local.sh" -J chain "$REPO/jobs/slurm/run.sbatch" >chain.txt 2>&1
rc=$?
expect_eq "local.sh run.sbatch exit status" "$rc" 0
run_dir=$(ls -d "$WORK"/runs/chain-* 2>/dev/null | head -n 1)
[ -n "$run_dir" ] && [ -f "$run_dir/DONE" ] && pass "run folder $run_dir marked DONE" || fail "no DONE in $WORK/runs: $(ls -R "$WORK/runs")"
expect_eq "jobs that ran" "$(grep -c '^local.sh: job [0-9]* ended with exit code 0' chain.txt)" 2
expect_eq "successor of the last job cancelled" "$(grep -c '^local.sh: job [0-9]* cancelled' chain.txt)" 1
grep -q -- "--restart $run_dir/checkpoint_000020.h5" "$run_dir/chain.log" && pass "job 2 restarted from checkpoint_000020.h5" ||
  fail "job 2 did not restart from step 20: $(cat "$run_dir/chain.log")"
expect_eq "state hash of the chained run = uninterrupted run" "$(hash_of "$run_dir/shard-1.log")" "$ref"
grep -q '^checkpoint: {every: 10, keep: 2}' "$run_dir/scene.yaml" && pass "checkpoint section added to the run's copy" ||
  fail "no checkpoint section in $run_dir/scene.yaml"
ls "$WORK"/chain-*.out >/dev/null 2>&1 && pass "job output files (#SBATCH --output)" || fail "no job output files"

# A bad scene: shard exits 3 and the chain stops.
sed 's/nu: 0.3/nu: 0.7/' drop.yaml >bad.yaml
NODES=1 TASKS_PER_NODE=2 SCENE=$WORK/bad.yaml STEPS=40 OUT=$WORK/bad timeout 300 "$REPO/jobs/slurm/local.sh" -J bad \
  "$REPO/jobs/slurm/run.sbatch" >bad.txt 2>&1
rc=$?
expect_eq "bad scene: exit status" "$rc" 3
expect_eq "bad scene: no job after the first" "$(grep -c '^local.sh: job [0-9]* (bad)' bad.txt)" 1
grep -q "nu: must be in" bad.txt && pass "bad scene: Shard's message shown" || fail "bad scene: no message: $(cat bad.txt)"

# strong.sbatch through the local launcher.
NODES=1 TASKS_PER_NODE=2 NX=10 NY=10 NZ=8 STEPS=3 OUT=$WORK/scaling timeout 600 \
  "$REPO/jobs/slurm/local.sh" "$REPO/jobs/slurm/strong.sbatch" >strong.txt 2>&1
rc=$?
expect_eq "local.sh strong.sbatch exit status" "$rc" 0
sdir=$(ls -d "$WORK"/scaling/strong-* 2>/dev/null | head -n 1)
if [ -n "$sdir" ] && [ -f "$sdir/series.csv" ]; then
  expect_eq "strong.sbatch: CSV rows" "$(awk -F, 'NR > 1 { printf "%s ", $2 }' "$sdir/series.csv")" "1 2 "
  grep -q 'srun -N {NODES} -n {P}' strong.txt && pass "strong.sbatch launched the runs with srun" || fail "no srun launcher in strong.txt"
  if "$PYTHON" -c 'import matplotlib' 2>/dev/null; then
    png_ok "$sdir/speedup.png" && png_ok "$sdir/phases.png" && pass "strong.sbatch: plots" || fail "strong.sbatch: no plots in $sdir"
  fi
else
  fail "strong.sbatch: no series.csv:"; cat strong.txt
fi
finish
