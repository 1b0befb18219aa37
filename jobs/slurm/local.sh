#!/usr/bin/env bash
# Runs a SLURM batch template of jobs/slurm/ on this machine, without SLURM: the template runs unchanged, with
# stand-ins for srun (-> mpiexec -n <tasks>), sbatch (queues the job here; chained jobs run one after another,
# in submission order) and scancel (drops a queued job).
#
#   jobs/slurm/local.sh jobs/slurm/run.sbatch
#   NODES=1 TASKS_PER_NODE=2 SCENE=my.yaml STEPS=400 SEGMENT_STEPS=100 CHECKPOINT_EVERY=100 jobs/slurm/local.sh jobs/slurm/run.sbatch
#   jobs/slurm/local.sh -N 1 --ntasks-per-node 4 -t 60 jobs/slurm/strong.sbatch
#
# Options (each also as a variable; an option wins over the variable, the variable over the template's
# #SBATCH line, which wins over the default):
#   -N, --nodes N            NODES           nodes to pretend (tasks = NODES x TASKS_PER_NODE)       #SBATCH, else 1
#   --ntasks-per-node T      TASKS_PER_NODE  MPI ranks per pretended node                            #SBATCH, else 1
#   -t, --time SECONDS       LOCAL_TIME_LIMIT  wall-clock limit of every job, in seconds (the job is killed
#                            like SLURM kills it at its --time; the template's --time is NOT applied)  none
#   -J, --job-name NAME      JOB_NAME        SLURM_JOB_NAME                                          #SBATCH, else the file name
# Other variables:
#   MPIEXEC MPIEXEC_FLAGS    the launcher srun becomes                                               mpiexec ""
#   LOCAL_SPOOL              folder of the local queue                                      a new folder in /tmp
# Every other variable (SCENE, STEPS, ...) passes to the template as sbatch --export=ALL would pass it.
#
# Job output goes to the template's #SBATCH --output file (%j = job id, %x = job name; default slurm-%j.out)
# in the current folder, and to this terminal.  The exit status is that of the last job that ran.
set -euo pipefail

usage() {
    awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2
    exit 2
}
NODES_OPT='' TPN_OPT='' TIME_OPT='' NAME_OPT=''
while [ $# -gt 0 ]; do
    case $1 in
        -N | --nodes) NODES_OPT=${2:?}; shift 2 ;;
        --nodes=*) NODES_OPT=${1#*=}; shift ;;
        --ntasks-per-node) TPN_OPT=${2:?}; shift 2 ;;
        --ntasks-per-node=*) TPN_OPT=${1#*=}; shift ;;
        -t | --time) TIME_OPT=${2:?}; shift 2 ;;
        --time=*) TIME_OPT=${1#*=}; shift ;;
        -J | --job-name) NAME_OPT=${2:?}; shift 2 ;;
        --job-name=*) NAME_OPT=${1#*=}; shift ;;
        -h | --help) usage ;;
        -*) echo "local.sh: unknown option '$1'" >&2; usage ;;
        *) break ;;
    esac
done
[ $# -eq 1 ] || usage
TEMPLATE=$1
[ -r "$TEMPLATE" ] || { echo "local.sh: cannot read $TEMPLATE" >&2; exit 2; }
TEMPLATE=$(cd "$(dirname "$TEMPLATE")" && pwd)/$(basename "$TEMPLATE")

# sbatch_opt LONG SHORT: the value of an #SBATCH option in the template (--long=V, --long V, -S V).
sbatch_opt() {
    sed -n "s/^#SBATCH[[:space:]]\{1,\}\(--$1[= ]\|-$2[[:space:]]\{1,\}\)[[:space:]]*\([^[:space:]]*\).*/\2/p" "$TEMPLATE" | tail -n 1
}
NODES=${NODES_OPT:-${NODES:-$(sbatch_opt nodes N)}}
NODES=${NODES:-1}
TASKS_PER_NODE=${TPN_OPT:-${TASKS_PER_NODE:-$(sbatch_opt ntasks-per-node X)}}
TASKS_PER_NODE=${TASKS_PER_NODE:-1}
JOB_NAME=${NAME_OPT:-${JOB_NAME:-$(sbatch_opt job-name J)}}
JOB_NAME=${JOB_NAME:-$(basename "$TEMPLATE")}
LOCAL_TIME_LIMIT=${TIME_OPT:-${LOCAL_TIME_LIMIT:-}}
OUTPUT_PATTERN=$(sbatch_opt output o)
OUTPUT_PATTERN=${OUTPUT_PATTERN:-slurm-%j.out}
for v in NODES TASKS_PER_NODE; do
    [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "local.sh: $v must be a positive integer, got '${!v}'" >&2; exit 2; }
done
[ -z "$LOCAL_TIME_LIMIT" ] || [[ $LOCAL_TIME_LIMIT =~ ^[1-9][0-9]*$ ]] ||
    { echo "local.sh: the time limit is in seconds here, got '$LOCAL_TIME_LIMIT'" >&2; exit 2; }

# MPIEXEC, MPIEXEC_FLAGS and Open MPI as root / on more ranks than cores (scripts/mpi-env.sh), for the jobs too.
# shellcheck source=jobs/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
job_need_mpiexec
export MPIEXEC MPIEXEC_FLAGS

SPOOL_GIVEN=${LOCAL_SPOOL:-}
SPOOL=${LOCAL_SPOOL:-$(mktemp -d /tmp/shard-local-slurm.XXXXXX)}
mkdir -p "$SPOOL/bin"
: >"$SPOOL/queue"
: >"$SPOOL/cancelled"
echo $(($$ * 100)) >"$SPOOL/last_id"
export LOCAL_SPOOL=$SPOOL

# ---- stand-ins for srun, sbatch, scancel -------------------------------------------------------------------
cat >"$SPOOL/bin/srun" <<'EOF'
#!/usr/bin/env bash
# local.sh's srun: srun [options] CMD ARGS -> $MPIEXEC -n <ntasks> $MPIEXEC_FLAGS CMD ARGS
set -euo pipefail
n=${SLURM_NTASKS:-1}
while [ $# -gt 0 ]; do
    case $1 in
        -n | --ntasks) n=$2; shift 2 ;;
        --ntasks=*) n=${1#*=}; shift ;;
        -n[0-9]*) n=${1#-n}; shift ;;
        -N | --nodes | -c | --cpus-per-task | -t | --time | -J | --job-name | -o | --output | -e | --error | \
            -p | --partition | -m | --distribution | --mpi | --mem | --cpu-bind | --ntasks-per-node | -w | --nodelist)
            shift 2 ;;
        --) shift; break ;;
        -*) shift ;;   # --exclusive, --kill-on-bad-exit, -l, -u, --opt=value, ...
        *) break ;;
    esac
done
[ $# -gt 0 ] || { echo "srun (local): no command" >&2; exit 2; }
[[ $n =~ ^[1-9][0-9]*$ ]] || { echo "srun (local): bad task count '$n'" >&2; exit 2; }
read -r -a flags <<<"${MPIEXEC_FLAGS:-}"
# mpiexec must not think it runs inside a SLURM allocation (Open MPI reads SLURM_* variables).
while read -r v; do unset "$v"; done < <(compgen -e | grep '^SLURM_' || true)
exec "${MPIEXEC:-mpiexec}" "${flags[@]}" -n "$n" "$@"
EOF
cat >"$SPOOL/bin/sbatch" <<'EOF'
#!/usr/bin/env bash
# local.sh's sbatch: queues SCRIPT with the caller's environment (--export=ALL[,VAR=value...]).
set -euo pipefail
parsable=0 exports=()
while [ $# -gt 0 ]; do
    case $1 in
        --parsable) parsable=1; shift ;;
        --export=*) IFS=, read -r -a e <<<"${1#*=}"; for x in "${e[@]}"; do [[ $x == *=* ]] && exports+=("$x"); done; shift ;;
        --dependency=* | --*=*) shift ;;   # dependencies: the queue runs in order, after the job that submits
        -d | --dependency | -J | --job-name | -t | --time | -N | --nodes | -n | --ntasks | -o | --output | -p | --partition) shift 2 ;;
        -*) shift ;;
        *) break ;;
    esac
done
[ $# -ge 1 ] || { echo "sbatch (local): no script" >&2; exit 2; }
script=$1
shift
id=$(($(cat "$LOCAL_SPOOL/last_id") + 1))
echo "$id" >"$LOCAL_SPOOL/last_id"
{
    export -p
    for x in "${exports[@]}"; do printf 'export %s=%q\n' "${x%%=*}" "${x#*=}"; done
} >"$LOCAL_SPOOL/job-$id.env"
printf '%s\t%s\n' "$id" "$script" >>"$LOCAL_SPOOL/queue"
if [ "$parsable" = 1 ]; then echo "$id"; else echo "Submitted batch job $id"; fi
EOF
cat >"$SPOOL/bin/scancel" <<'EOF'
#!/usr/bin/env bash
# local.sh's scancel: drops queued jobs.
for id in "$@"; do echo "$id" >>"$LOCAL_SPOOL/cancelled"; done
EOF
chmod +x "$SPOOL/bin/srun" "$SPOOL/bin/sbatch" "$SPOOL/bin/scancel"
export PATH=$SPOOL/bin:$PATH

# ---- the queue ---------------------------------------------------------------------------------------------
SUBMIT_DIR=$PWD
first=$(sbatch --parsable "$TEMPLATE")
rc=0
done_lines=0
while :; do
    line=$(sed -n "$((done_lines + 1))p" "$SPOOL/queue")
    [ -n "$line" ] || break
    done_lines=$((done_lines + 1))
    id=${line%%$'\t'*}
    script=${line#*$'\t'}
    if grep -qx "$id" "$SPOOL/cancelled"; then
        echo "local.sh: job $id cancelled"
        continue
    fi
    out=${OUTPUT_PATTERN//%j/$id}
    out=${out//%x/$JOB_NAME}
    case $out in /*) ;; *) out=$SUBMIT_DIR/$out ;; esac
    echo "local.sh: job $id ($JOB_NAME): $NODES node(s) x $TASKS_PER_NODE task(s)${LOCAL_TIME_LIMIT:+, limit ${LOCAL_TIME_LIMIT} s}; output $out"
    limit=()
    [ -z "$LOCAL_TIME_LIMIT" ] || limit=(timeout -k 10 "$LOCAL_TIME_LIMIT")
    set +e
    (
        cd "$SUBMIT_DIR"
        # shellcheck source=/dev/null
        [ "$id" = "$first" ] || . "$SPOOL/job-$id.env" 2>/dev/null || true
        export PATH=$SPOOL/bin:$PATH LOCAL_SPOOL=$SPOOL
        export SLURM_JOB_ID=$id SLURM_JOBID=$id SLURM_JOB_NAME=$JOB_NAME SLURM_SUBMIT_DIR=$SUBMIT_DIR \
            SLURM_NNODES=$NODES SLURM_JOB_NUM_NODES=$NODES SLURM_NTASKS_PER_NODE=$TASKS_PER_NODE \
            SLURM_NTASKS=$((NODES * TASKS_PER_NODE)) SLURM_NPROCS=$((NODES * TASKS_PER_NODE)) SHARD_LOCAL_SLURM=1
        exec "${limit[@]}" bash "$script"
    ) 2>&1 | tee "$out"
    rc=${PIPESTATUS[0]}
    set -e
    if [ "$rc" = 124 ] && [ -n "$LOCAL_TIME_LIMIT" ]; then
        echo "local.sh: job $id reached its time limit (${LOCAL_TIME_LIMIT} s) and was killed"
    fi
    echo "local.sh: job $id ended with exit code $rc"
done
[ -n "$SPOOL_GIVEN" ] || rm -rf "$SPOOL"
exit "$rc"
