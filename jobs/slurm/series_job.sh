# shellcheck shell=bash
# The body of jobs/slurm/strong.sbatch and weak.sbatch (sourced after they set MODE and their defaults): runs
# jobs/scaling/series.sh inside the allocation with srun as the launcher, chained like run.sbatch: every job
# queues a successor first; a successor resumes the series (runs whose report is complete are kept) until
# the CSV and the plots are written.
NODES=${SLURM_NNODES:-1}
TASKS_PER_NODE=${SLURM_NTASKS_PER_NODE:-$((${SLURM_NTASKS:-1} / NODES))}
export TASKS_PER_NODE
export SHARD=${SHARD:-$SHARD_HOME/build/shard}
export RANKS=${RANKS:-pow2:${SLURM_NTASKS:-1}}
export OUT=${OUT:-${SLURM_SUBMIT_DIR:-$PWD}/shard-scaling}
RUN_DIR=${RUN_DIR:-$OUT/$MODE-${SLURM_JOB_ID:-0}}
SRUN_FLAGS=${SRUN_FLAGS:-}
export LAUNCHER="srun -N {NODES} -n {P} $SRUN_FLAGS"
export MODE RESUME=1
# shellcheck source=jobs/slurm/chain.sh
. "$SHARD_HOME/jobs/slurm/chain.sh"

chain_begin
[ -x "$SHARD" ] || chain_stop 1 "SHARD=$SHARD is not an executable (build Shard: ./scripts/setup.sh)"
chain_log "$MODE scaling series, ranks $RANKS, on $NODES node(s) x $TASKS_PER_NODE task(s): $RUN_DIR"
chain_submit_next
set +e
OUT=$RUN_DIR "$SHARD_HOME/jobs/scaling/series.sh" 2>&1 | tee -a "$RUN_DIR/series-$CHAIN_INDEX.log"
rc=${PIPESTATUS[0]}
set -e
# series.sh exits 1 on an error of its own or of a run: stop; a signal or the time limit: the successor resumes.
chain_finish "$rc" 1 "1 2 3 4 5 6"
