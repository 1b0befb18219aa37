# shellcheck shell=bash
# Helpers sourced by the scripts in jobs/scaling/ and the SLURM templates in jobs/slurm/ (not run on its own).
#
# Provides: scal_die, scal_find_shard, scal_ranks (rank-list syntax), scal_dims (P -> px py pz), scal_block_scene
# (the generated block), scal_launch (run a command on P ranks through $LAUNCHER), scal_is_int, scal_is_num.
# Expects `set -euo pipefail` in the caller.

SCAL_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PYTHON=${PYTHON:-/usr/bin/python3}
export SCAL_PY=$SCAL_REPO/jobs/scaling/scaling.py
# shellcheck source=jobs/bench/block_scene.sh
. "$SCAL_REPO/jobs/bench/block_scene.sh"

scal_die() {
    echo "error: $*" >&2
    exit 1
}

scal_is_int() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }
scal_is_num() { awk -v x="$1" 'BEGIN { exit !(x ~ /^[+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ && x + 0 > 0) }'; }

# Open MPI as root and on more ranks than cores (the repository's own helper), unless under SLURM.
if [ -z "${SLURM_JOB_ID:-}" ] && [ -f "$SCAL_REPO/scripts/mpi-env.sh" ]; then
    # shellcheck source=/dev/null
    . "$SCAL_REPO/scripts/mpi-env.sh"
fi

# The shard executable: $SHARD, else build/shard in the repository, else PATH.
scal_find_shard() {
    if [ -n "${SHARD:-}" ]; then
        [ -x "$SHARD" ] || scal_die "SHARD=$SHARD is not an executable file"
        return
    fi
    local c
    for c in "$SCAL_REPO/build/shard" "$(command -v shard 2>/dev/null || true)"; do
        if [ -n "$c" ] && [ -x "$c" ]; then
            SHARD=$c
            return
        fi
    done
    scal_die "shard executable not found; build it (./scripts/setup.sh, or cmake -S $SCAL_REPO -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build --target shard) or set SHARD=/path/to/shard"
}

# scal_ranks SPEC: the rank counts of SPEC, one per line.  SPEC is a list ("1 2 4 8", commas allowed) or
# "pow2:MAX" (1 2 4 ... up to MAX, and MAX itself when it is not a power of two).
scal_ranks() {
    local spec=${1//,/ } p
    if [[ $spec =~ ^pow2:([1-9][0-9]*)$ ]]; then
        local max=${BASH_REMATCH[1]}
        for ((p = 1; p <= max; p *= 2)); do echo "$p"; done
        (( (max & (max - 1)) == 0 )) || echo "$max"
        return
    fi
    [ -n "${spec// /}" ] || scal_die "RANKS is empty"
    for p in $spec; do
        scal_is_int "$p" || scal_die "RANKS must be positive integers or pow2:MAX, got '$p'"
        echo "$p"
    done
}

# scal_dims P: "px py pz" with px*py*pz = P, as even as possible (largest prime factors first, each to the
# smallest side so far; ties go to x, then y): P copies of the weak-scaling block tile a px x py x pz brick.
scal_dims() {
    awk -v P="$1" 'BEGIN {
        n = P; k = 0
        for (f = 2; f * f <= n; f++) while (n % f == 0) { fac[++k] = f; n /= f }
        if (n > 1) fac[++k] = n
        d[1] = d[2] = d[3] = 1
        for (i = k; i >= 1; i--) {
            m = 1; for (j = 2; j <= 3; j++) if (d[j] < d[m]) m = j
            d[m] *= fac[i]
        }
        print d[1], d[2], d[3] }'
}

# scal_block_scene FILE NX NY NZ STEPS OUTDIR: a simple-cubic block of NX x NY x NZ lattice points (spacing
# $SPACING, support $SUPPORT, material $RHO $E $NU), no gravity, a small translation and spin ($VEL), no
# obstacle: the solid's cost alone plus the halo, the case the scaling figures are about.
scal_block_scene() {
    shard_block_scene "$1" "$2" "$3" "$4" "$5" "${DT:-auto}" "$6" jobs/scaling
}

# scal_busy_cores: how many cores other work kept busy over the last second (from /proc/stat; 0 if unknown).
scal_busy_cores() {
    [ -r /proc/stat ] || { echo 0; return; }
    local a b
    a=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9; exit }' /proc/stat)
    sleep 1
    b=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9; exit }' /proc/stat)
    awk -v a="$a" -v b="$b" -v c="$(nproc 2>/dev/null || echo 1)" 'BEGIN { split(a, x, " "); split(b, y, " ");
        d = y[2] - x[2]; printf "%.2f\n", (d > 0 ? c * (y[1] - x[1]) / d : 0) }'
}

# scal_wait_idle MAX_SECONDS: waits until under 0.25 cores are busy (at most MAX_SECONDS); prints the load seen.
scal_wait_idle() {
    local max=$1 t=0 busy
    busy=$(scal_busy_cores)
    while awk -v l="$busy" 'BEGIN { exit !(l >= 0.25) }' && [ "$t" -lt "$max" ]; do
        sleep 4
        t=$((t + 5))
        busy=$(scal_busy_cores)
    done
    echo "$busy"
}

# The launcher template: $LAUNCHER, else "mpiexec -n {P} $MPIEXEC_FLAGS".
scal_launcher_text() {
    if [ -n "${LAUNCHER:-}" ]; then
        printf '%s\n' "$LAUNCHER"
    else
        printf 'mpiexec -n {P}%s\n' "${MPIEXEC_FLAGS:+ $MPIEXEC_FLAGS}"
    fi
}

# scal_launch P LOG CMD...: runs CMD on P ranks through $LAUNCHER ("{P}" -> P, "{NODES}" -> nodes needed at
# $TASKS_PER_NODE), stdout and stderr to LOG, the launch's wall time to LOG.wall.  Returns CMD's status.
scal_launch() {
    local np=$1 log=$2
    shift 2
    local nodes=1
    if [ -n "${TASKS_PER_NODE:-}" ]; then nodes=$(((np + TASKS_PER_NODE - 1) / TASKS_PER_NODE)); fi
    local launcher
    launcher=$(scal_launcher_text)
    launcher=${launcher//\{P\}/$np}
    launcher=${launcher//\{NODES\}/$nodes}
    local -a words
    read -r -a words <<<"$launcher"
    local rc=0 t0 t1
    t0=$(date +%s.%N)
    "${words[@]}" "$@" >"$log" 2>&1 || rc=$?
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }' >"$log.wall"
    return "$rc"
}
