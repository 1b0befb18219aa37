# shellcheck shell=bash
# Helpers sourced by the scripts in jobs/bench/, jobs/scaling/ and jobs/slurm/local.sh (not meant to be run on its
# own).  Expects `set -euo pipefail` in the caller.  LAMMPS's side of the comparisons is in jobs/lammps_lib.sh.
#
# On load: JOB_REPO (the repository), PYTHON (default /usr/bin/python3), JOB_SCALING_PY (jobs/scaling/scaling.py),
# MPIEXEC (default mpiexec) and MPIEXEC_FLAGS (default ""), and Open MPI allowed as root and on more ranks than
# cores (scripts/mpi-env.sh) -- unless the caller set JOB_MPI_ENV=unless-slurm and runs inside a SLURM job.
#
#   job_die MESSAGE                 "error: MESSAGE" on stderr, exit 1
#   job_log_die LOG MESSAGE         the same, followed by the last 20 lines of LOG
#   job_is_int X, job_is_num X      X is a positive integer / a number > 0
#   job_need_int VAR..., job_need_num VAR..., job_need_auto_num VAR..., job_need_seconds VAR..., job_need_nu,
#   job_need_rank_list              stop with a message naming the variable unless its value fits
#   job_need_matplotlib [HINT]      stop unless $PYTHON imports matplotlib
#   job_find_shard [DIR...]         SHARD: $SHARD, else build/shard, else DIR/shard for each DIR, else PATH
#   job_out_dir [SUBDIR]            creates $OUT (and OUT/SUBDIR) and makes OUT absolute
#   job_block_defaults              defaults of the generated block: SPACING SUPPORT RHO E NU VEL DT
#   job_block_scene FILE NX NY NZ STEPS DT OUTDIR WHO   the generated block's scene
#   job_ranks SPEC, job_dims P      rank-list syntax ("1 2 4", "pow2:MAX"); P -> "px py pz"
#   job_need_mpiexec, job_need_mpirun   $MPIEXEC must run; job_need_mpirun also looks for GNU time ($TIME_BIN)
#   job_run P LOG TEMPLATE CMD...   CMD on P ranks through a launcher template, wall time to LOG.wall
#   job_launcher_text, job_launch P LOG CMD...   the same through $LAUNCHER (jobs/scaling/series.sh)
#   job_mpirun P PREFIX CMD...      the same through $MPIEXEC, each rank under GNU time; stops on failure
#   job_rss_bytes PREFIX P, job_per_particle BYTES N    max RSS summed over the ranks; per particle
#   job_field FILE REGEX FIELD      a word of the last line matching REGEX
#   job_shard_loop_time LOG [N], job_shard_particles LOG, job_shard_neigh LOG, job_shard_bonds LOG, job_shard_self LOG
#                                   figures of Shard's report
#   job_faster T BEST               T is faster than BEST (the first word of BEST; an empty BEST: yes)
#   job_table_head FORMAT HEADER... a table's header line and its rule of dashes
#   job_busy_cores, job_load_warning, job_wait_idle MAX_SECONDS     background load on this machine

JOB_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PYTHON=${PYTHON:-/usr/bin/python3}
# shellcheck disable=SC2034  # for the scripts
JOB_SCALING_PY=$JOB_REPO/jobs/scaling/scaling.py
MPIEXEC=${MPIEXEC:-mpiexec}
MPIEXEC_FLAGS=${MPIEXEC_FLAGS:-}
TIME_BIN=${TIME_BIN:-/usr/bin/time}

job_die() {
    echo "error: $*" >&2
    exit 1
}

# job_log_die LOG MESSAGE: "error: MESSAGE; last lines of LOG:", those lines, exit 1.
job_log_die() {
    local log=$1
    shift
    echo "error: $*; last lines of $log:" >&2
    tail -n 20 "$log" >&2
    exit 1
}

# Open MPI: allow root and oversubscription (the repository's own helper); JOB_MPI_ENV=unless-slurm leaves a SLURM
# job's settings alone.
if { [ "${JOB_MPI_ENV:-always}" = always ] || [ -z "${SLURM_JOB_ID:-}" ]; } && [ -f "$JOB_REPO/scripts/mpi-env.sh" ]; then
    # shellcheck source=/dev/null
    . "$JOB_REPO/scripts/mpi-env.sh"
fi

# ---- checks -------------------------------------------------------------------------------------------------
job_is_int() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }
job_is_num() { awk -v x="$1" 'BEGIN { exit !(x ~ /^[+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ && x + 0 > 0) }'; }

job_need_int() {
    local v
    for v; do job_is_int "${!v}" || job_die "$v must be a positive integer, got '${!v}'"; done
}
job_need_num() {
    local v
    for v; do job_is_num "${!v}" || job_die "$v must be a number > 0, got '${!v}'"; done
}
job_need_auto_num() {
    local v
    for v; do [ "${!v}" = auto ] || job_is_num "${!v}" || job_die "$v must be 'auto' or a number > 0, got '${!v}'"; done
}
job_need_seconds() {
    local v
    for v; do [[ ${!v} =~ ^[0-9]+$ ]] || job_die "$v must be a number of seconds, got '${!v}'"; done
}
job_need_nu() {
    awk -v x="$NU" 'BEGIN { exit !(x ~ /^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$/ && x > -1 && x < 0.5) }' ||
        job_die "NU must be in (-1, 0.5), got '$NU'"
}
# job_need_rank_list: RANKS is a list of positive integers (spaces between).
job_need_rank_list() {
    local p
    [ -n "${RANKS// /}" ] || job_die "RANKS is empty"
    for p in $RANKS; do job_is_int "$p" || job_die "RANKS must hold positive integers, got '$p'"; done
}
# job_need_zero_or_num VAR...: each is 0 or a number > 0.
job_need_zero_or_num() {
    local v
    for v; do [ "${!v}" = 0 ] || job_is_num "${!v}" || job_die "$v must be a number >= 0, got '${!v}'"; done
}
# job_need_flag VAR...: each is 0 or 1.
job_need_flag() {
    local v
    for v; do [ "${!v}" = 0 ] || [ "${!v}" = 1 ] || job_die "$v must be 0 or 1, got '${!v}'"; done
}
# job_peer_engines PEER...: splits ENGINES (which must not be empty) into PEERS (the peer codes named, of those
# allowed, in ENGINES order) and WITH_SHARD (1 when it names shard); then SHARD_RANKS must be a list of
# positive integers when Shard runs.
job_peer_engines() {
    local e ok p allowed="$*"
    [ -n "${ENGINES// /}" ] || job_die "ENGINES is empty"
    PEERS=''
    WITH_SHARD=0
    for e in $ENGINES; do
        if [ "$e" = shard ]; then
            WITH_SHARD=1
            continue
        fi
        ok=0
        for p; do [ "$e" = "$p" ] && ok=1; done
        [ "$ok" = 1 ] || job_die "ENGINES: unknown engine '$e' (${allowed// /, }, shard)"
        PEERS="$PEERS $e"
    done
    PEERS=${PEERS# }
    if [ "$WITH_SHARD" = 1 ]; then
        [ -n "${SHARD_RANKS// /}" ] || job_die "SHARD_RANKS is empty"
        for p in $SHARD_RANKS; do job_is_int "$p" || job_die "SHARD_RANKS must hold positive integers, got '$p'"; done
    fi
}
# job_need_matplotlib [HINT]: HINT is added to the message (e.g. "or PLOT=0 for the CSV alone").
# shellcheck disable=SC2120  # HINT is optional
job_need_matplotlib() {
    "$PYTHON" -c 'import matplotlib' 2>/dev/null ||
        job_die "$PYTHON has no matplotlib: apt-get install python3-matplotlib${1:+ ($1)}"
}

# job_find_shard [DIR...]: the shard executable in SHARD: $SHARD, else build/shard in the repository, else DIR/shard
# for each DIR given (a script's own build folder), else PATH.
job_find_shard() {
    if [ -n "${SHARD:-}" ]; then
        [ -x "$SHARD" ] || job_die "SHARD=$SHARD is not an executable file"
        return
    fi
    local c d
    local -a cands=("$JOB_REPO/build/shard")
    for d; do cands+=("$d/shard"); done
    cands+=("$(command -v shard 2>/dev/null || true)")
    for c in "${cands[@]}"; do
        if [ -n "$c" ] && [ -x "$c" ]; then
            SHARD=$c
            return
        fi
    done
    job_die "shard executable not found; build it (./scripts/setup.sh, or cmake -S $JOB_REPO -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build --target shard) or set SHARD=/path/to/shard"
}

# job_out_dir [SUBDIR]: creates OUT (and OUT/SUBDIR); OUT becomes an absolute path.
# shellcheck disable=SC2120  # SUBDIR is optional
job_out_dir() {
    mkdir -p "$OUT${1:+/$1}" || job_die "cannot create OUT=$OUT"
    OUT=$(cd "$OUT" && pwd)
}

# ---- the generated block ------------------------------------------------------------------------------------
# job_block_defaults: the block's lattice and material, each overridable from the environment: SPACING 0.001 m,
# SUPPORT 2.2 spacings (32 partners inside), RHO 1000 kg/m^3, E 1e9 Pa, NU 0.25, VEL 0.01 m/s, DT auto.
job_block_defaults() {
    SPACING=${SPACING:-0.001}
    SUPPORT=${SUPPORT:-2.2}
    RHO=${RHO:-1000}
    E=${E:-1.0e9}
    NU=${NU:-0.25}
    VEL=${VEL:-0.01}
    DT=${DT:-auto}
}

# job_block_scene FILE NX NY NZ STEPS DT OUTDIR WHO: writes a Shard scene of a simple-cubic block of NX x NY x NZ
# lattice points (box from 0 to N * SPACING, so the points sit at (i + 1/2) SPACING) with a small velocity VEL
# along x plus a spin VEL / (NX SPACING) about z, no gravity, no obstacle.  Material and lattice come from the
# caller's SPACING, SUPPORT, RHO, E, NU and VEL; DT is a number or "auto"; WHO names the generating script.
job_block_scene() {
    local file=$1 nx=$2 ny=$3 nz=$4 steps=$5 dt=$6 outdir=$7 who=$8
    cat >"$file" <<EOF
# Generated by ${who}: ${nx} x ${ny} x ${nz} simple-cubic block ($((nx * ny * nz)) particles), a = ${SPACING} m.
run: {steps: ${steps}, dt: ${dt}, gravity: [0, 0, 0], output_dir: ${outdir}}
materials:
  solid: {density: ${RHO}, E: ${E}, nu: ${NU}}
bodies:
  - name: block
    material: solid
    shape: {box: {min: [0, 0, 0], max: [$(awk -v a="$SPACING" -v x="$nx" -v y="$ny" -v z="$nz" \
        'BEGIN { printf "%.10g, %.10g, %.10g", x * a, y * a, z * a }')]}}
    spacing: ${SPACING}
    support: ${SUPPORT}
    velocity: [${VEL}, 0, 0]
    angular_velocity: [0, 0, $(awk -v v="$VEL" -v n="$nx" -v a="$SPACING" 'BEGIN { printf "%.10g", v / (n * a) }')]
EOF
}

# job_shatter_scene FILE DIV V T_END WHO [EXTRA]: a brittle glass sphere (R = 50 mm, R / spacing = DIV; E = 72 GPa,
# nu = 0.22, rho = 2440 kg/m^3, tensile strength 50 MPa with a Weibull scatter of modulus 8, surface sampling)
# hitting a rigid plane at V m/s, run for T_END s; EXTRA (lines) is appended; WHO names the generating script.
# FRACTURE (a flow mapping; default JOB_SHATTER_FRACTURE) replaces the fracture section and STAB (in [0, 1]) sets
# the material's stabilization.
JOB_SHATTER_FRACTURE="{tensile_strength: 50e6, weibull_modulus: 8, weibull_seed: 1}"
job_shatter_scene() {
    local file=$1 div=$2 v=$3 t_end=$4 who=$5 extra=${6:-}
    local fracture=${7:-$JOB_SHATTER_FRACTURE} stab=${8:-}
    local s
    s=$(awk -v d="$div" 'BEGIN { printf "%.10g", 0.05 / d }')
    cat >"$file" <<EOF
# A brittle sphere shattering on a plane (written by ${who})
run:
  end_time: ${t_end}
  gravity: [0, 0, 0]
materials:
  glass:
    density: 2440
    E: 72e9
    nu: 0.22
    fracture: ${fracture}
${stab:+    stabilization: ${stab}
}bodies:
  - name: sphere
    material: glass
    shape: {sphere: {center: [0, 0, $(awk -v s="$s" 'BEGIN { printf "%.10g", 0.05 + 0.3 * s }')], radius: 0.05}}
    spacing: ${s}
    sampling: surface
    velocity: [0, 0, -${v}]
obstacles:
  - plane: {point: [0, 0, 0], normal: [0, 0, 1]}
${extra}
EOF
}

# ---- rank counts --------------------------------------------------------------------------------------------
# job_ranks SPEC: the rank counts of SPEC, one per line.  SPEC is a list ("1 2 4 8", commas allowed) or
# "pow2:MAX" (1 2 4 ... up to MAX, and MAX itself when it is not a power of two).
job_ranks() {
    local spec=${1//,/ } p
    if [[ $spec =~ ^pow2:([1-9][0-9]*)$ ]]; then
        local max=${BASH_REMATCH[1]}
        for ((p = 1; p <= max; p *= 2)); do echo "$p"; done
        (( (max & (max - 1)) == 0 )) || echo "$max"
        return
    fi
    [ -n "${spec// /}" ] || job_die "RANKS is empty"
    for p in $spec; do
        job_is_int "$p" || job_die "RANKS must be positive integers or pow2:MAX, got '$p'"
        echo "$p"
    done
}

# job_dims P: "px py pz" with px*py*pz = P, as even as possible (largest prime factors first, each to the
# smallest side so far; ties go to x, then y): P copies of the weak-scaling block tile a px x py x pz brick.
job_dims() {
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

# ---- launching ----------------------------------------------------------------------------------------------
job_need_mpiexec() {
    command -v "$MPIEXEC" >/dev/null 2>&1 || job_die "'$MPIEXEC' not found (install Open MPI or set MPIEXEC)"
}

# job_need_mpirun: what job_mpirun needs: $MPIEXEC, and GNU time ($TIME_BIN -v) for the RSS figures (without it
# TIME_BIN becomes empty and the RSS figures 'n/a').
job_need_mpirun() {
    job_need_mpiexec
    if [ ! -x "$TIME_BIN" ] || ! "$TIME_BIN" -v true >/dev/null 2>&1; then
        echo "warning: GNU time ($TIME_BIN -v) not usable: max RSS will be 'n/a' (apt-get install time)" >&2
        TIME_BIN=
    fi
}

# job_run P LOG TEMPLATE CMD...: runs CMD on P ranks through the launcher TEMPLATE ("{P}" -> P, "{NODES}" -> the
# nodes needed at $TASKS_PER_NODE ranks per node), stdout and stderr to LOG, the launch's wall time (s) to LOG.wall.
# Returns CMD's status.
job_run() {
    local np=$1 log=$2 launcher=$3
    shift 3
    local nodes=1
    if [ -n "${TASKS_PER_NODE:-}" ]; then nodes=$(((np + TASKS_PER_NODE - 1) / TASKS_PER_NODE)); fi
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

# job_launcher_text: the launcher template of job_launch: $LAUNCHER, else "mpiexec -n {P} $MPIEXEC_FLAGS".
job_launcher_text() {
    if [ -n "${LAUNCHER:-}" ]; then
        printf '%s\n' "$LAUNCHER"
    else
        printf 'mpiexec -n {P}%s\n' "${MPIEXEC_FLAGS:+ $MPIEXEC_FLAGS}"
    fi
}

# job_launch P LOG CMD...: job_run through $LAUNCHER (job_launcher_text).  Returns CMD's status.
job_launch() {
    local np=$1 log=$2
    shift 2
    job_run "$np" "$log" "$(job_launcher_text)" "$@"
}

# job_mpirun P PREFIX CMD...: runs CMD on P ranks with $MPIEXEC $MPIEXEC_FLAGS, stdout+stderr to PREFIX.log (wall
# time to PREFIX.log.wall); with GNU time (job_need_mpirun), each rank's max RSS report goes to PREFIX.rss.<rank>.
# Stops the script with the log's tail if the command fails.
job_mpirun() {
    local np=$1 prefix=$2
    shift 2
    rm -f "$prefix".rss.* "$prefix.log"
    local -a timed=()
    # shellcheck disable=SC2016
    [ -z "$TIME_BIN" ] || timed=(bash -c \
        'r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${PMIX_RANK:-0}}}; t=$1; p=$2; shift 2; exec "$t" -v -o "$p.rss.$r" "$@"' \
        bench-rank "$TIME_BIN" "$prefix")
    job_run "$np" "$prefix.log" "$MPIEXEC $MPIEXEC_FLAGS -n {P}" "${timed[@]}" "$@" ||
        job_log_die "$prefix.log" "'$*' on $np rank(s) failed with exit code $?"
}

# ---- figures ------------------------------------------------------------------------------------------------
# job_rss_bytes PREFIX P: max RSS summed over the P ranks of a job_mpirun, in bytes ('n/a' without GNU time).
job_rss_bytes() {
    local prefix=$1 np=$2 r kb total=0
    if [ -z "$TIME_BIN" ]; then
        echo n/a
        return
    fi
    for ((r = 0; r < np; r++)); do
        [ -f "$prefix.rss.$r" ] || job_die "no time report $prefix.rss.$r (is the MPI rank variable set?)"
        kb=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$prefix.rss.$r")
        [ -n "$kb" ] || job_die "no 'Maximum resident set size' in $prefix.rss.$r"
        total=$((total + kb * 1024))
    done
    echo "$total"
}

# job_per_particle BYTES N: BYTES / N rounded ('n/a' stays 'n/a').
job_per_particle() {
    if [ "$1" = n/a ]; then echo n/a; else awk -v r="$1" -v n="$2" 'BEGIN { printf "%.0f", r / n }'; fi
}

# job_field FILE REGEX FIELD: the FIELD-th whitespace-separated word of the last line matching REGEX.
job_field() {
    local v
    v=$(awk -v f="$3" "/$2/ {v = \$f} END {print v}" "$1")
    [ -n "$v" ] || job_die "could not find /$2/ in $1"
    echo "$v"
}

# Shard's report: "Loop time of T s on P rank(s) for S steps with N particles", "Bonds: B (X per particle), ...",
# "Peak memory per rank: ... (B bytes per particle ...".
job_shard_particles() { job_field "$1" '^Loop time of' 13; }
# job_shard_loop_time LOG [N]: T, after checking that the run had N particles (when N is given).
job_shard_loop_time() {
    grep -q '^Loop time of' "$1" || job_die "no 'Loop time' line in $1"
    [ -z "${2:-}" ] || [ "$(job_shard_particles "$1")" = "$2" ] ||
        job_die "Shard made $(job_shard_particles "$1") particles, expected $2 ($1)"
    job_field "$1" '^Loop time of' 4
}
job_shard_neigh() { job_field "$1" '^Bonds:' 3 | tr -d '('; }
job_shard_bonds() { job_field "$1" '^Bonds:' 2; }
job_shard_self() {
    local v
    v=$(sed -n 's/^Peak memory per rank:.*(\([0-9.]*\) bytes per particle.*/\1/p' "$1")
    echo "${v:-n/a}"
}

# job_faster T BEST: true when there is no BEST yet or T is below BEST's first word (the best-of-REPEATS rule).
job_faster() {
    [ -z "$2" ] || awk -v a="$1" -v b="${2%% *}" 'BEGIN { exit !(a < b) }'
}

# job_table_head FORMAT HEADER...: the header line, then a rule of dashes as wide as each column ("-+-" between).
job_table_head() {
    local fmt=$1
    shift
    # shellcheck disable=SC2059  # the format is the caller's
    printf "$fmt" "$@"
    local -a empty=()
    while [ ${#empty[@]} -lt $# ]; do empty+=(""); done
    # shellcheck disable=SC2059
    printf "$fmt" "${empty[@]}" | tr ' ' '-' | sed 's/-|-/-+-/g'
}

# ---- background load ----------------------------------------------------------------------------------------
# job_busy_cores: how many cores other work kept busy over the last second (from /proc/stat; 0 if unknown).
job_busy_cores() {
    [ -r /proc/stat ] || { echo 0; return; }
    local a b
    a=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9; exit }' /proc/stat)
    sleep 1
    b=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9; exit }' /proc/stat)
    awk -v a="$a" -v b="$b" -v c="$(nproc 2>/dev/null || echo 1)" 'BEGIN { split(a, x, " "); split(b, y, " ");
        d = y[2] - x[2]; printf "%.2f\n", (d > 0 ? c * (y[1] - x[1]) / d : 0) }'
}

# job_load_warning: benchmarks want an idle machine: prints the background load, warns when over 0.2 cores.
job_load_warning() {
    [ -r /proc/stat ] || return 0
    local busy
    busy=$(job_busy_cores)
    echo "Background load before the runs: $busy of $(nproc 2>/dev/null || echo 1) core(s) busy"
    if awk -v l="$busy" 'BEGIN { exit !(l > 0.2) }'; then
        echo "warning: $busy core(s) busy with other work before the runs: figures may be noisy (the best of REPEATS is kept)" >&2
    fi
}

# job_wait_idle MAX_SECONDS: waits until under 0.25 cores are busy (at most MAX_SECONDS); prints the load seen.
job_wait_idle() {
    local max=$1 t=0 busy
    busy=$(job_busy_cores)
    while awk -v l="$busy" 'BEGIN { exit !(l >= 0.25) }' && [ "$t" -lt "$max" ]; do
        sleep 4
        t=$((t + 5))
        busy=$(job_busy_cores)
    done
    echo "$busy"
}
