#!/usr/bin/env bash
# One rank of the sanitizer build of shard: tests/sanitize/run.sh passes this script where the tests take the shard
# binary (mpiexec -n N rank.sh ARGS..., run_case.sh rank.sh CASE).  It runs $SHARD_SAN_BIN ARGS... with the
# reports of the sanitizers written to $SHARD_SAN_LOGS/$SHARD_SAN_TAG.n<ranks>.r<rank>.<pid> instead of stderr
# (so that the tests still see shard's own stderr), and keeps shard's exit status.
#
# mpiexec kills the whole job as soon as one rank exits non-zero, which would cut short the leak check the other
# ranks run at exit (a bad-input case exits 3 on every rank): a rank that exits non-zero therefore first waits,
# up to 30 s, until every rank of the job has exited.
set -u
bin=${SHARD_SAN_BIN:?} logs=${SHARD_SAN_LOGS:?} tag=${SHARD_SAN_TAG:-run}
size=${OMPI_COMM_WORLD_SIZE:-1} rank=${OMPI_COMM_WORLD_RANK:-0}
log="$logs/$tag.n$size.r$rank"
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:log_path=$log" UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:log_path=$log"
# keep_libraries.c (built by run.sh next to shard): dlclose() does nothing, see there.
[ -f "${SHARD_SAN_PRELOAD:-}" ] && export LD_PRELOAD="$SHARD_SAN_PRELOAD${LD_PRELOAD:+:$LD_PRELOAD}"
job=${PMIX_NAMESPACE:-${OMPI_MCA_ess_base_jobid:-}}
[ -n "${OMPI_COMM_WORLD_SIZE:-}" ] && [ -n "$job" ] || exec "$bin" "$@"

"$bin" "$@" <&0 &
child=$!
trap 'kill -TERM "$child" 2>/dev/null' TERM INT HUP
while :; do
  wait "$child"
  rc=$?
  kill -0 "$child" 2>/dev/null || break # wait returned for a trapped signal: wait again
done
trap - TERM INT HUP
sync_dir="$logs/.exited/$job"
mkdir -p "$sync_dir" && : > "$sync_dir/$rank"
if [ "$rc" -ne 0 ]; then
  for _ in $(seq 300); do
    [ "$(find "$sync_dir" -type f | wc -l)" -ge "$size" ] && break
    sleep 0.1
  done
fi
exit "$rc"
