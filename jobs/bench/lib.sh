# shellcheck shell=bash
# Helpers sourced by the benchmark scripts in jobs/bench/ (not meant to be run on its own).
#
# Provides: bench_die, bench_find_shard, bench_mpirun, bench_rss_bytes, bench_field.
# Expects the caller to have `set -euo pipefail` and to define OUT (output folder).

BENCH_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

bench_die() {
    echo "error: $*" >&2
    exit 1
}

# Open MPI: allow root and oversubscription (the repository's own helper).
if [ -f "$BENCH_REPO/scripts/mpi-env.sh" ]; then
    # shellcheck source=/dev/null
    . "$BENCH_REPO/scripts/mpi-env.sh"
fi

MPIEXEC=${MPIEXEC:-mpiexec}
MPIEXEC_FLAGS=${MPIEXEC_FLAGS:-}
read -r -a BENCH_MPI_FLAGS <<<"$MPIEXEC_FLAGS"
TIME_BIN=${TIME_BIN:-/usr/bin/time}

command -v "$MPIEXEC" >/dev/null 2>&1 || bench_die "'$MPIEXEC' not found (install Open MPI or set MPIEXEC)"
if [ ! -x "$TIME_BIN" ] || ! "$TIME_BIN" -v true >/dev/null 2>&1; then
    echo "warning: GNU time ($TIME_BIN -v) not usable: max RSS will be 'n/a' (apt-get install time)" >&2
    TIME_BIN=
fi

# The shard executable: $SHARD, else build/shard in the repository, else /tmp/build-bench/shard, else PATH.
bench_find_shard() {
    if [ -n "${SHARD:-}" ]; then
        [ -x "$SHARD" ] || bench_die "SHARD=$SHARD is not an executable file"
        return
    fi
    local c
    for c in "$BENCH_REPO/build/shard" /tmp/build-bench/shard "$(command -v shard 2>/dev/null || true)"; do
        if [ -n "$c" ] && [ -x "$c" ]; then
            SHARD=$c
            return
        fi
    done
    bench_die "shard executable not found; build it (cmake -S $BENCH_REPO -B /tmp/build-bench -DCMAKE_BUILD_TYPE=Release && cmake --build /tmp/build-bench --target shard) or set SHARD=/path/to/shard"
}

# bench_mpirun P PREFIX CMD...: runs CMD on P ranks, stdout+stderr to PREFIX.log; with GNU time, each rank's
# max RSS report goes to PREFIX.rss.<rank>.  Stops the script with the log's tail if the command fails.
bench_mpirun() {
    local np=$1 prefix=$2
    shift 2
    rm -f "$prefix".rss.* "$prefix.log"
    local rc=0
    if [ -n "$TIME_BIN" ]; then
        # shellcheck disable=SC2016
        "$MPIEXEC" "${BENCH_MPI_FLAGS[@]}" -n "$np" bash -c \
            'r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${PMIX_RANK:-0}}}; t=$1; p=$2; shift 2; exec "$t" -v -o "$p.rss.$r" "$@"' \
            bench-rank "$TIME_BIN" "$prefix" "$@" >"$prefix.log" 2>&1 || rc=$?
    else
        "$MPIEXEC" "${BENCH_MPI_FLAGS[@]}" -n "$np" "$@" >"$prefix.log" 2>&1 || rc=$?
    fi
    if [ "$rc" != 0 ]; then
        echo "error: '$*' on $np rank(s) failed with exit code $rc; last lines of $prefix.log:" >&2
        tail -n 20 "$prefix.log" >&2
        exit 1
    fi
}

# bench_rss_bytes PREFIX P: max RSS summed over the P ranks, in bytes ('n/a' without GNU time).
bench_rss_bytes() {
    local prefix=$1 np=$2 r kb total=0
    if [ -z "$TIME_BIN" ]; then
        echo n/a
        return
    fi
    for ((r = 0; r < np; r++)); do
        [ -f "$prefix.rss.$r" ] || bench_die "no time report $prefix.rss.$r (is the MPI rank variable set?)"
        kb=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$prefix.rss.$r")
        [ -n "$kb" ] || bench_die "no 'Maximum resident set size' in $prefix.rss.$r"
        total=$((total + kb * 1024))
    done
    echo "$total"
}

# bench_field FILE REGEX FIELD: the FIELD-th whitespace-separated word of the last line matching REGEX.
bench_field() {
    local v
    v=$(awk -v f="$3" "/$2/ {v = \$f} END {print v}" "$1")
    [ -n "$v" ] || bench_die "could not find /$2/ in $1"
    echo "$v"
}

# Benchmarks want an idle machine: measure how many cores other work keeps busy (over 1 s, from /proc/stat).
bench_load_warning() {
    local cores busy a b
    cores=$(nproc 2>/dev/null || echo 1)
    if [ ! -r /proc/stat ]; then
        return
    fi
    a=$(awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9; exit}' /proc/stat)
    sleep 1
    b=$(awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9; exit}' /proc/stat)
    busy=$(awk -v a="$a" -v b="$b" -v c="$cores" 'BEGIN { split(a, x, " "); split(b, y, " ");
        d = y[2] - x[2]; printf "%.2f", (d > 0 ? c * (y[1] - x[1]) / d : 0) }')
    echo "Background load before the runs: $busy of $cores core(s) busy"
    if awk -v l="$busy" 'BEGIN { exit !(l > 0.2) }'; then
        echo "warning: $busy core(s) busy with other work before the runs: figures may be noisy (the best of REPEATS is kept)" >&2
    fi
}
