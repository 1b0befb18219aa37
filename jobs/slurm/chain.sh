# shellcheck shell=bash
# Restart chaining for the batch templates in jobs/slurm/ (sourced, not run).  A run longer than the
# wall-clock limit becomes a chain of jobs: every job first queues its successor with
# `sbatch --dependency=afterany:$SLURM_JOB_ID` (so the successor exists even when this job is killed at its time
# limit), then works; the job that finishes the run marks RUN_DIR/DONE and cancels the successor it queued.  A
# successor that finds DONE exits at once.  A job stopped by an error of Shard's own (bad input, invalid state,
# a failed write: exit codes 2-6) cancels its successor too, so a broken run does not loop.
#
# Variables (the templates set them; the chain passes RUN_DIR and CHAIN_INDEX on to its successors):
#   RUN_DIR      the run's folder, the same for every job of the chain
#   CHAIN_INDEX  0 for the first job, 1 for its successor, ...
#   CHAIN_MAX    the most jobs a chain may have (the last one queues no successor)           20
#   JOB_SCRIPT   the batch script to queue again (default: the job's own, from scontrol, else $0)

CHAIN_INDEX=${CHAIN_INDEX:-0}
CHAIN_MAX=${CHAIN_MAX:-20}
CHAIN_NEXT=

chain_log() {
    printf '%s job %s [%s]: %s\n' "$(date '+%F %T')" "${SLURM_JOB_ID:-?}" "$CHAIN_INDEX" "$*" | tee -a "$RUN_DIR/chain.log"
}

# chain_begin: creates RUN_DIR; exits 0 when the run is already complete.
chain_begin() {
    mkdir -p "$RUN_DIR" || { echo "error: cannot create RUN_DIR=$RUN_DIR" >&2; exit 1; }
    if [ -f "$RUN_DIR/DONE" ]; then
        chain_log "run already complete ($RUN_DIR/DONE): nothing to do"
        exit 0
    fi
}

# chain_submit_next: queues the successor (afterany: it starts when this job ends, however it ends).
chain_submit_next() {
    if [ $((CHAIN_INDEX + 1)) -ge "$CHAIN_MAX" ]; then
        chain_log "CHAIN_MAX=$CHAIN_MAX jobs reached: no successor queued"
        return
    fi
    local script=${JOB_SCRIPT:-}
    if [ -z "$script" ] && command -v scontrol >/dev/null 2>&1; then
        script=$(scontrol show job "$SLURM_JOB_ID" 2>/dev/null | sed -n 's/^ *Command=\([^ ]*\).*/\1/p' | head -n 1)
        [ -r "$script" ] || script=
    fi
    script=${script:-$0}
    CHAIN_NEXT=$(sbatch --parsable --dependency="afterany:$SLURM_JOB_ID" \
        --export="ALL,RUN_DIR=$RUN_DIR,CHAIN_INDEX=$((CHAIN_INDEX + 1)),JOB_SCRIPT=$script" "$script") ||
        { chain_log "warning: could not queue the successor (sbatch failed)"; CHAIN_NEXT=; return; }
    CHAIN_NEXT=${CHAIN_NEXT%%;*}
    chain_log "successor queued: job $CHAIN_NEXT (afterany:$SLURM_JOB_ID)"
}

chain_cancel_next() {
    if [ -n "$CHAIN_NEXT" ]; then
        scancel "$CHAIN_NEXT" || true
        chain_log "successor $CHAIN_NEXT cancelled"
    fi
}

# chain_done: the run is complete.
chain_done() {
    touch "$RUN_DIR/DONE"
    chain_log "run complete"
    chain_cancel_next
}

# chain_stop RC MESSAGE: an error that another job would only repeat: cancel the successor, exit RC.
chain_stop() {
    local rc=$1
    shift
    chain_log "stopped: $* (exit $rc)"
    chain_cancel_next
    exit "$rc"
}

# chain_finish RC COMPLETE [STOP_CODES]: after the work of this job.  RC 0 and COMPLETE 1: the run is complete;
# RC 0 and COMPLETE 0: a segment is done and the successor continues; RC in STOP_CODES (default "2 3 4 5 6",
# Shard's own errors): stop the chain; anything else (a signal, the time limit): the successor continues.
chain_finish() {
    local rc=$1 complete=$2 stop=${3:-"2 3 4 5 6"}
    if [ "$rc" = 0 ] && [ "$complete" = 1 ]; then
        chain_done
        exit 0
    fi
    if [ "$rc" = 0 ]; then
        [ -n "$CHAIN_NEXT" ] || chain_stop 1 "segment done but no successor could be queued (CHAIN_MAX=$CHAIN_MAX?)"
        chain_log "segment done; job $CHAIN_NEXT continues"
        exit 0
    fi
    if [[ " $stop " == *" $rc "* ]]; then
        chain_stop "$rc" "failed with exit code $rc (see the log); another job would fail the same way"
    fi
    chain_log "ended with exit code $rc (time limit or a signal?); ${CHAIN_NEXT:+job $CHAIN_NEXT continues}"
    exit "$rc"
}
