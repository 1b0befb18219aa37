#!/usr/bin/env bash
# shellcheck disable=SC2059  # the table format is a variable on purpose
# Rigid bodies with non-penetrating contact and Coulomb friction in Shard and in two established single-process
# engines, ODE (dWorldQuickStep) and Bullet (btDiscreteDynamicsWorld with sequential impulses), on the same two
# scenes with the same time step and solver iterations; one table and OUT/results.csv.  The engine programs are
# jobs/bench/rigid_peers/{ode,bullet}_bench (built here into OUT/bin from Debian's packages); the scenes and every
# figure are defined once, in jobs/bench/rigid_peers/scene.h; jobs/bench/rigid_peers/shard_side.py writes Shard's
# scene file from the same parameters and measures Shard's run the same way (from the poses of its output files).
#
#   jobs/bench/rigid_peers.sh                          # both scenes, the three codes, defaults below
#   SCENES=pyramid ROWS=20 jobs/bench/rigid_peers.sh
#   SCENES=pour N=216 SHARD_RANKS="1 2" jobs/bench/rigid_peers.sh
#   ENGINES="ode bullet" POUR_TILT=0.3 POUR_SPIN=0 jobs/bench/rigid_peers.sh   # the engine programs' own pour
#
# The scenes (SI units; cubes of side 0.1 m, 1 kg; friction 0.5 everywhere; restitution 0; gravity -9.81 z):
#   pyramid     ROWS rows of cubes on the floor z = 0, row k holding ROWS-k cubes 0.105 m apart (5 mm gaps), each
#               row resting exactly on the one below, at rest; run for T_PYRAMID
#   pour        N cubes on a g x g x g grid (g^3 >= N) at 0.15 m, centred on x = y = 0, lowest layer at z = 0.3,
#               each tilted about (1, 2, 3) by POUR_TILT ((7919 i) mod 1000) / 1000 rad and spinning about the same
#               axis at POUR_SPIN ((7919 i) mod 1000) / 1000 rad/s, falling into a box of a floor and walls at
#               x, y = +-WALL; run for T_POUR.  Shard's box shape is axis-aligned, so with Shard the cubes start
#               untilted (POUR_TILT=0) and a spin breaks the grid's symmetry instead; the engines get the same
#               start
# In Shard every cube is a `kind: rigid` box sampled at SPACING (8 particles per cube at the default): its
# particles are carried along (they would touch deformable bodies; there are none here), while the contacts among
# cubes and with the planes are the rigid module's exact box-box and box-plane points.  Its scene sets
# `rigid: {iterations: ITERATIONS}` and leaves the section's other keys at their defaults (tolerance, margin,
# position correction, slop).
#
# Every variable below can be overridden from the environment:
#   SCENES      scenes to run                                                                   "pyramid pour"
#   ENGINES     codes to run                                                              "ode bullet shard"
#   ROWS        pyramid rows (ROWS (ROWS + 1) / 2 cubes)                                        15
#   N           pour: number of cubes                                                           1000
#   T_PYRAMID   pyramid: simulated time (s)                                                     10
#   T_POUR      pour: simulated time (s)                                                        2
#   DT          time step (s) of every engine                                                   1e-3
#   ITERATIONS  contact-solver iterations per step                                              50
#   REPEATS     runs per code and scene; the one with the least wall time is kept               1
#   WALL        pour: half width of the container (m).  The 10 x 10 x 10 grid reaches +-0.725 m    0.8
#               untilted, +-0.743 m at the programs' own tilt of 0.3 rad; the programs refuse a
#               grid that starts beyond the walls
#   POUR_TILT   pour: largest initial tilt (rad); Shard needs 0                                  0
#   POUR_SPIN   pour: largest initial spin (rad/s)                                               3
#   SAMPLE_PYRAMID, SAMPLE_POUR   the poses are measured after every this many steps and the    100, 20
#               last (Shard writes an output file then; the engines measure after the same steps)
#   SPACING     Shard: particle spacing of the cubes (m); 0.05, half a side: 8 particles a cube  0.05
#   SHARD_RANKS Shard: rank counts to run (each a full run; the state hashes are compared)        "1"
#   KEEP_OUTPUT Shard: 1 keeps the output files (OUT/shard-<scene>-p<P>-r<k>/out), 0 removes them  0
#   INSTALL     1: apt-get install what is missing (libode-dev, libbullet-dev, pkg-config, and     1
#               python3-h5py, python3-numpy for Shard's figures) when run as root; 0: only say so
#   ODE_OPTIONS     extra options of ode_bench (erp=, cfm=, w=, layer=; default: ODE's own)    ""
#   BULLET_OPTIONS  extra options of bullet_bench (friction_dirs=1|2, default 2)               ""
#   CC CXX CFLAGS CXXFLAGS   compilers and flags                                     cc c++ "-O2" "-O2"
#   SHARD       shard executable (default: build/shard, then PATH)
#   PYTHON      Python 3 with numpy and h5py, for Shard's figures                    /usr/bin/python3
#   MPIEXEC MPIEXEC_FLAGS   launcher of Shard's runs (jobs/lib.sh)                           mpiexec ""
#   OUT         output folder: bin/, one log per run, results.csv                    /tmp/shard-bench/rigid
#
# Logs: OUT/<engine>-<scene>.log (the kept run), OUT/<engine>-<scene>-r<k>.log (every run); Shard:
# OUT/shard-<scene>-p<P>.log (the figures of the kept run), OUT/shard-<scene>-p<P>-r<k>/ (scene.yaml, run.log,
# figures.log).
# Figures (each program prints them as key=value lines and one CSV row; see scene.h):
#   wall (s), steps/s   time inside the engine's step calls (collision detection, solver, integration), not the
#                       measurements between steps; Shard: its loop time less its I/O phase (the output files
#                       the figures are measured from)
#   ratio ode, bullet   Shard's steps/s over the engine's
#   contacts            contact points the solver got at the last step (ODE: touching; Bullet: the manifolds'
#                       points, touching or within its breaking distance; Shard: touching or within its
#                       margin, half a spacing, speculative ones included: "contacts at the end" of its report)
#   pen cont (mm)       largest penetration depth of any contact point the engine reported, over all steps
#                       (Shard does not report its contact depths: -)
#   pen floor (mm)      largest depth of any cube vertex below z = 0, from the poses, over the sampled steps
#   pen box (mm)        largest overlap of two cubes from their poses (separating axes), over the sampled steps
#   pen wall (mm)       pour: the largest distance of a vertex beyond a wall, over the sampled steps
#   sink (mm)           pyramid: largest drop of any cube's lowest vertex below its initial bottom, sampled steps
#   drift (mm)          pyramid: largest distance of any cube's centre from its start, at the end
#   KE (J)              kinetic energy (translation and rotation) at the end
#   left                pour: cubes whose centre is outside |x|, |y| < WALL or below z = 0 at the end
#   iters               solver iterations per step: the engines always do ITERATIONS; Shard stops at its
#                       tolerance (1e-6 relative change) or at ITERATIONS: mean/largest of its report
#   residual            Shard: the last iteration's largest relative impulse change at the last step
# Needs Debian's libode-dev and libbullet-dev (pkg-config ode, bullet), a C and C++ compiler, and for Shard's rows
# mpiexec, python3-numpy and python3-h5py.
set -euo pipefail

# shellcheck source=jobs/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
SRC=$JOB_REPO/jobs/bench/rigid_peers
SCENES=${SCENES:-"pyramid pour"}
ENGINES=${ENGINES:-"ode bullet shard"}
ROWS=${ROWS:-15}
N=${N:-1000}
T_PYRAMID=${T_PYRAMID:-10}
T_POUR=${T_POUR:-2}
DT=${DT:-1e-3}
ITERATIONS=${ITERATIONS:-50}
REPEATS=${REPEATS:-1}
WALL=${WALL:-0.8}
POUR_TILT=${POUR_TILT:-0}
POUR_SPIN=${POUR_SPIN:-3}
SAMPLE_PYRAMID=${SAMPLE_PYRAMID:-100}
SAMPLE_POUR=${SAMPLE_POUR:-20}
SPACING=${SPACING:-0.05}
SHARD_RANKS=${SHARD_RANKS:-1}
KEEP_OUTPUT=${KEEP_OUTPUT:-0}
INSTALL=${INSTALL:-1}
ODE_OPTIONS=${ODE_OPTIONS:-}
BULLET_OPTIONS=${BULLET_OPTIONS:-}
CC=${CC:-cc}
CXX=${CXX:-c++}
CFLAGS=${CFLAGS:--O2}
CXXFLAGS=${CXXFLAGS:--O2}
OUT=${OUT:-/tmp/shard-bench/rigid}

# ---- checks -------------------------------------------------------------------------------------------------
job_need_int ROWS N ITERATIONS REPEATS SAMPLE_PYRAMID SAMPLE_POUR
job_need_num T_PYRAMID T_POUR DT WALL SPACING
job_need_zero_or_num POUR_TILT POUR_SPIN
job_need_flag KEEP_OUTPUT INSTALL
[ -n "${SCENES// /}" ] || job_die "SCENES is empty"
for s in $SCENES; do
    case $s in pyramid | pour) ;; *) job_die "SCENES: unknown scene '$s' (pyramid, pour)" ;; esac
done
job_peer_engines ode bullet
if [ "$WITH_SHARD" = 1 ]; then
    if [[ " $SCENES " == *" pour "* ]] && [ "$POUR_TILT" != 0 ]; then
        job_die "POUR_TILT=$POUR_TILT: Shard's cubes start axis-aligned (its box shape has no orientation); use POUR_TILT=0 (and POUR_SPIN) with Shard, or ENGINES=\"ode bullet\""
    fi
fi

# ---- what is needed ---------------------------------------------------------------------------------------------
# Debian's packages: the engines' development files (through pkg-config) and, for Shard's figures, numpy and h5py.
# As root with INSTALL=1 what is missing is installed (apt-get update first, only then).
rp_missing() {
    local e
    if [ -n "$PEERS" ]; then
        command -v pkg-config >/dev/null 2>&1 || echo pkg-config
        for e in $PEERS; do
            command -v pkg-config >/dev/null 2>&1 && pkg-config --exists "$e" || echo "lib$e-dev"
        done
    fi
    if [ "$WITH_SHARD" = 1 ]; then
        "$PYTHON" -c 'import numpy' >/dev/null 2>&1 || echo python3-numpy
        "$PYTHON" -c 'import h5py' >/dev/null 2>&1 || echo python3-h5py
    fi
}
mapfile -t MISSING < <(rp_missing)
if [ ${#MISSING[@]} -gt 0 ]; then
    if [ "$INSTALL" = 1 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "Installing ${MISSING[*]} (apt-get) ..." >&2
        APT_LOG=$(mktemp)
        { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${MISSING[@]}"; } >"$APT_LOG" 2>&1 ||
            job_log_die "$APT_LOG" "apt-get install ${MISSING[*]} failed"
        rm -f "$APT_LOG"
        mapfile -t MISSING < <(rp_missing)
        [ ${#MISSING[@]} -eq 0 ] || job_die "still missing after apt-get: ${MISSING[*]} (PYTHON=$PYTHON: Debian's python3-h5py is for /usr/bin/python3)"
    else
        job_die "missing: ${MISSING[*]}: apt-get install ${MISSING[*]} (or run as root with INSTALL=1)"
    fi
fi
if [ -n "$PEERS" ]; then
    command -v "$CC" >/dev/null 2>&1 || job_die "C compiler '$CC' not found: apt-get install build-essential (or set CC)"
    command -v "$CXX" >/dev/null 2>&1 || job_die "C++ compiler '$CXX' not found: apt-get install build-essential (or set CXX)"
fi
if [ "$WITH_SHARD" = 1 ]; then
    job_find_shard
    job_need_mpiexec
    SHARD_VERSION=$("$SHARD" --version 2>/dev/null | head -n 1 | sed 's/^shard //')
    [ -n "$SHARD_VERSION" ] || job_die "$SHARD --version printed nothing"
fi
job_out_dir bin

# ---- build --------------------------------------------------------------------------------------------------
# Each engine's flags come from its Debian package (pkg-config); its version is compiled in for the report.
BUILD_LOG=$OUT/build.log
: >"$BUILD_LOG"
# shellcheck disable=SC2086  # the flags are word lists
build() {
    echo "+ $*" >>"$BUILD_LOG"
    "$@" >>"$BUILD_LOG" 2>&1 || job_log_die "$BUILD_LOG" "building the engine programs failed"
}
# shellcheck disable=SC2086
[ -z "$PEERS" ] || build "$CC" $CFLAGS -std=c11 -Wall -c "$SRC/scene.c" -o "$OUT/bin/scene.o"
for e in $PEERS; do
    # shellcheck disable=SC2046,SC2086
    case $e in
    ode)
        build "$CC" $CFLAGS -std=c11 -Wall -DPEER_ENGINE_VERSION="\"$(pkg-config --modversion ode)\"" \
            $(pkg-config --cflags ode) "$SRC/ode_bench.c" "$OUT/bin/scene.o" $(pkg-config --libs ode) -lm \
            -o "$OUT/bin/ode_bench"
        ;;
    bullet)
        build "$CXX" $CXXFLAGS -std=c++11 -Wall -DPEER_ENGINE_VERSION="\"$(pkg-config --modversion bullet)\"" \
            $(pkg-config --cflags bullet) "$SRC/bullet_bench.cpp" "$OUT/bin/scene.o" $(pkg-config --libs bullet) \
            -lm -o "$OUT/bin/bullet_bench"
        ;;
    esac
done

# ---- runs ---------------------------------------------------------------------------------------------------
# rp_value LOG KEY: the value of KEY=... in LOG ('-' when absent).
rp_value() {
    local v
    v=$(sed -n "s/^$2=//p" "$1" | tail -n 1)
    echo "${v:--}"
}

# rp_shard_args SCENE: shard_side.py's scene arguments, less OUTDIR (the size, T, and so on of SCENE).
rp_shard_args() {
    if [ "$1" = pyramid ]; then
        echo "pyramid $ROWS $T_PYRAMID $DT $ITERATIONS $WALL 0 0 $SAMPLE_PYRAMID $SPACING"
    else
        echo "pour $N $T_POUR $DT $ITERATIONS $WALL $POUR_TILT $POUR_SPIN $SAMPLE_POUR $SPACING"
    fi
}

# rp_shard_run SCENE P REP: one run of Shard on P ranks into OUT/shard-SCENE-pP-rREP/ (scene.yaml, run.log,
# figures.log); prints the figures log's path.
rp_shard_run() {
    local s=$1 np=$2 rep=$3 dir rc=0
    local -a sargs
    read -r -a sargs <<<"$(rp_shard_args "$s")"
    dir=$OUT/shard-$s-p$np-r$rep
    rm -rf "$dir"
    mkdir -p "$dir"
    "$PYTHON" "$SRC/shard_side.py" scene "${sargs[@]}" "$dir/out" >"$dir/scene.yaml" ||
        job_die "shard_side.py scene ${sargs[*]} failed"
    job_run "$np" "$dir/run.log" "$MPIEXEC $MPIEXEC_FLAGS -n {P}" "$SHARD" run "$dir/scene.yaml" --quiet || rc=$?
    [ "$rc" = 0 ] || job_log_die "$dir/run.log" "shard run $dir/scene.yaml on $np rank(s) failed with exit code $rc"
    rc=0
    # the executable's version at this run (a rebuild between runs shows)
    SHARD_VERSION=$("$SHARD" --version 2>/dev/null | head -n 1 | sed 's/^shard //') \
        "$PYTHON" "$SRC/shard_side.py" figures "${sargs[@]}" "$dir/out" "$dir/run.log" \
        >"$dir/figures.log" 2>&1 || rc=$?
    # 3: the run went non-finite; its figures up to then are still reported
    [ "$rc" = 0 ] || [ "$rc" = 3 ] || job_log_die "$dir/figures.log" "shard_side.py figures failed with exit code $rc"
    [ "$KEEP_OUTPUT" = 1 ] || rm -rf "$dir/out"
    echo "$dir/figures.log"
}

# Shard's rows are named shard/P (P ranks).
CODES=
for e in $ENGINES; do
    if [ "$e" = shard ]; then
        for p in $SHARD_RANKS; do CODES="$CODES shard/$p"; done
    else
        CODES="$CODES $e"
    fi
done
CODES=${CODES# }

echo "Scenes: ${SCENES}; codes: ${ENGINES}; DT ${DT} s, ${ITERATIONS} solver iterations per step"
echo "  pyramid: ${ROWS} rows ($((ROWS * (ROWS + 1) / 2)) cubes), ${T_PYRAMID} s, poses every ${SAMPLE_PYRAMID} steps"
echo "  pour: ${N} cubes in +-${WALL} m, tilt ${POUR_TILT} rad, spin ${POUR_SPIN} rad/s, ${T_POUR} s, poses every ${SAMPLE_POUR} steps"
for e in $PEERS; do echo "  $e $(pkg-config --modversion "$e") (pkg-config $e): $OUT/bin/${e}_bench"; done
[ "$WITH_SHARD" = 0 ] ||
    echo "  shard $SHARD_VERSION: $SHARD on ${SHARD_RANKS// /, } rank(s), spacing $SPACING m, through $MPIEXEC"
job_load_warning
echo

declare -A LOG BEST
for s in $SCENES; do
    if [ "$s" = pyramid ]; then
        size=$ROWS t=$T_PYRAMID sample=$SAMPLE_PYRAMID
    else
        size=$N t=$T_POUR sample=$SAMPLE_POUR
    fi
    for e in $PEERS; do
        opts=ODE_OPTIONS
        [ "$e" = bullet ] && opts=BULLET_OPTIONS
        # shellcheck disable=SC2206  # options are words
        args=($s "$size" "$t" "$DT" "$ITERATIONS" "sample=$sample" ${!opts})
        [ "$s" = pour ] && args+=("wall=$WALL" "tilt=$POUR_TILT" "spin=$POUR_SPIN")
        for ((rep = 1; rep <= REPEATS; rep++)); do
            log=$OUT/$e-$s-r$rep.log
            echo "  $e $s run $rep/$REPEATS ..." >&2
            rc=0
            "$OUT/bin/${e}_bench" "${args[@]}" >"$log" 2>&1 || rc=$?
            # 3: the run went non-finite; its figures up to then are still reported
            [ "$rc" = 0 ] || [ "$rc" = 3 ] || job_log_die "$log" "${e}_bench ${args[*]} failed with exit code $rc"
            grep -q '^csv=' "$log" || job_log_die "$log" "no csv= line in $log"
            if job_faster "$(rp_value "$log" wall_s)" "${BEST[$e,$s]:-}"; then
                BEST[$e,$s]=$(rp_value "$log" wall_s)
                LOG[$e,$s]=$log
            fi
        done
        cp "${LOG[$e,$s]}" "$OUT/$e-$s.log"
        LOG[$e,$s]=$OUT/$e-$s.log
    done

    # ---- Shard: the same scene, right after the engines ------------------------------------------------------
    if [ "$WITH_SHARD" = 1 ]; then
        for np in $SHARD_RANKS; do
            c=shard/$np
            for ((rep = 1; rep <= REPEATS; rep++)); do
                echo "  shard $s on $np rank(s), run $rep/$REPEATS ..." >&2
                log=$(rp_shard_run "$s" "$np" "$rep")
                if job_faster "$(rp_value "$log" wall_s)" "${BEST[$c,$s]:-}"; then
                    BEST[$c,$s]=$(rp_value "$log" wall_s)
                    LOG[$c,$s]=$log
                fi
            done
            cp "${LOG[$c,$s]}" "$OUT/shard-$s-p$np.log"
            LOG[$c,$s]=$OUT/shard-$s-p$np.log
        done
    fi
done

# ---- table --------------------------------------------------------------------------------------------------
# rp_ratio A B: A / B to 3 figures ('-' unless both are numbers > 0).
rp_ratio() {
    if job_is_num "$1" && job_is_num "$2"; then awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3g", a / b }'; else echo -; fi
}
CSV=$OUT/results.csv
CSV_COLUMNS="engine,version,scene,size,bodies,t_end_s,dt_s,iterations,steps,wall_s,steps_per_s,contacts,contacts_touching,pen_contact_mm,pen_floor_mm,pen_wall_mm,pen_box_mm,sink_mm,drift_mm,ke_j,left,status,ranks,iterations_mean,residual,sample_every,tilt_rad,spin_rad_s"
echo "$CSV_COLUMNS" >"$CSV"
fmt="%-7s | %-8s | %6s | %6s | %8s | %8s | %9s | %9s | %8s | %8s | %9s | %7s | %8s | %7s | %7s | %11s | %4s | %9s | %8s | %-8s\n"
echo
echo "DT ${DT} s, at most ${ITERATIONS} iterations, best of ${REPEATS}; penetrations, sink and drift in mm (drift at"
echo "the end; pen cont over all steps; pen floor, box, wall and sink after every ${SAMPLE_PYRAMID} (pyramid) or ${SAMPLE_POUR} (pour) steps)"
job_table_head "$fmt" scene code bodies steps "wall (s)" "steps/s" "ratio ode" "ratio bul" contacts "pen cont" \
    "pen floor" "pen box" "pen wall" sink drift "KE (J)" left iters residual status
for s in $SCENES; do
    for c in $CODES; do
        log=${LOG[$c,$s]}
        r_ode=- r_bullet=- iters=$ITERATIONS
        if [ "${c%%/*}" = shard ]; then
            sps=$(rp_value "$log" steps_per_s)
            [ -z "${LOG[ode,$s]:-}" ] || r_ode=$(rp_ratio "$sps" "$(rp_value "${LOG[ode,$s]}" steps_per_s)")
            [ -z "${LOG[bullet,$s]:-}" ] || r_bullet=$(rp_ratio "$sps" "$(rp_value "${LOG[bullet,$s]}" steps_per_s)")
            iters="$(rp_value "$log" iterations_mean)/$(rp_value "$log" iterations_max)"
        fi
        printf "$fmt" "$s" "$c" "$(rp_value "$log" bodies)" "$(rp_value "$log" steps_done)" \
            "$(rp_value "$log" wall_s)" "$(rp_value "$log" steps_per_s)" "$r_ode" "$r_bullet" \
            "$(rp_value "$log" contacts)" "$(rp_value "$log" pen_contact_mm)" "$(rp_value "$log" pen_floor_mm)" \
            "$(rp_value "$log" pen_box_mm)" "$(rp_value "$log" pen_wall_mm)" "$(rp_value "$log" sink_mm)" \
            "$(rp_value "$log" drift_mm)" "$(rp_value "$log" ke_j)" "$(rp_value "$log" left)" "$iters" \
            "$(rp_value "$log" residual)" "$(rp_value "$log" status)"
        rp_value "$log" csv >>"$CSV"
    done
done
echo
if [ "$WITH_SHARD" = 1 ]; then
    echo "Shard (spacing $SPACING m; loop = wall + I/O; Rigid: the rigid-body phase's share of the loop):"
    for s in $SCENES; do
        hashes=
        for np in $SHARD_RANKS; do
            log=${LOG[shard/$np,$s]}
            echo "  $s, $np rank(s): $(rp_value "$log" particles) particles carried; loop $(rp_value "$log" loop_s) s," \
                "I/O $(rp_value "$log" io_s) s, Rigid $(rp_value "$log" rigid_s) s ($(rp_value "$log" rigid_share_pct) %);" \
                "contacts at the end $(rp_value "$log" contacts), largest $(rp_value "$log" contacts_largest);" \
                "state hash $(rp_value "$log" state_hash)"
            hashes="$hashes $(rp_value "$log" state_hash)"
        done
        if [ "$(echo "$hashes" | wc -w)" -gt 1 ]; then
            # shellcheck disable=SC2086  # one hash a word
            if [ "$(printf '%s\n' $hashes | sort -u | wc -l)" = 1 ]; then
                echo "  $s: the same state hash on ${SHARD_RANKS// /, } ranks"
            else
                echo "  $s: state hashes differ between rank counts:$hashes"
            fi
        fi
    done
fi
if [ -n "$PEERS" ]; then
    echo "Engine settings:"
    for e in $PEERS; do
        for s in $SCENES; do
            grep -E "^${e}_" "${LOG[$e,$s]}" | sed "s/^/  /"
            break
        done
    done
fi
echo "CSV: $CSV; logs: $OUT/<code>-<scene>[-p<ranks>].log${PEERS:+; build log: $BUILD_LOG}"
