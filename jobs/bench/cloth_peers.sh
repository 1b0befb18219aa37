#!/usr/bin/env bash
# shellcheck disable=SC2059  # the table format is a variable on purpose
# A cloth draped on a sphere in Shard and in Bullet's soft-body cloth, on the same mesh with the same time step:
# steps per second on 1 and 2 ranks (Shard) and one core (Bullet), and the self-intersections of the final
# state (pairs of triangles that share no vertex and intersect), counted by one independent program for both.
# One table and OUT/results.csv.  The programs are jobs/bench/cloth_peers/bullet_cloth.cpp (Bullet's side; its
# comment says how the scene maps onto Bullet) and tests/support/intersections.c (the counter: exact predicates,
# a uniform-grid broad phase; it reads Shard's HDF5 output and Bullet's mesh dump; the cloth collision tests link
# it too), built here into OUT/bin from Debian's packages; the counter's self-test runs before the benchmark.
# The scene is defined once, by the variables below: the Shard scene file and bullet_cloth's arguments are both
# written from them.
#
#   jobs/bench/cloth_peers.sh                                  # the defaults below (about 30 minutes on 2 cores)
#   N=100 STEPS=3000 DT=1e-4 jobs/bench/cloth_peers.sh         # a coarser cloth (cells of 1 cm; about 3 minutes)
# (The coarser cloth run longer, or at DT 2.5e-4, stops at about 0.35 s with "cloth vertex ... moves ... more
# than half the skin": its soft corners whip at some 25 m/s as it wraps the sphere (a scene of its own would
# raise run.skin).)
#   ENGINES="bullet bullet_classic" jobs/bench/cloth_peers.sh  # Bullet's two soft-body solvers only
#   SHARD_RANKS=2 ENGINES=shard KEEP_OUTPUT=1 jobs/bench/cloth_peers.sh
#
# The scene (SI units, z up, gravity -9.81 z): a square cloth of N x N cells and side SIDE, flat at z = RADIUS + GAP,
# centred above a static sphere of radius RADIUS at the origin, falls from rest and drapes over it for STEPS steps
# of DT.  Its mesh is Shard's `grid`: vertex (i, j) is vertex j (N + 1) + i, each cell cut along its (i, j) -
# (i + 1, j + 1) diagonal, (N + 1)^2 vertices and 2 N^2 triangles (Bullet gets the same nodes and triangles).  Cloth:
# THICKNESS, DENSITY (areal density DENSITY x THICKNESS, a vertex weighing a third of its triangles), E and NU
# (St Venant-Kirchhoff membrane in Shard; springs of 3/4 E THICKNESS N/m on every edge in Bullet, the same
# in-plane stiffness along the grid axes at NU = 1/3), DAMPING (stiffness-proportional, s; Bullet's spring damping
# is DAMPING x its stiffness), FRICTION against the sphere.  Shard's bending stiffness is its default, the plate's
# E THICKNESS^3 / (12 (1 - NU^2)); Bullet's mass-spring cloth has none (bullet_cloth.cpp, bend_k).  Contact:
# Shard's vertices touch the sphere with a radius of THICKNESS / 2 and its default contact spring (E x cell size);
# Bullet's nodes keep a margin of THICKNESS / 2.
# Self-collision: Bullet's deformable solver ("bullet") detects vertex-face proximity within a thickness and
# pushes apart, with continuous collision detection; its classic solver ("bullet_classic") cannot self-collide in
# Bullet 3.24 at all; Shard's cloth always runs its collision stage (Bridson et al. 2002: proximity, continuous
# collision detection, impact zones; docs/models/cloth.md), self-collision included, while its vertices
# touch the sphere through contact; the count says how many triangle pairs intersect at the end.
#
# Every variable below can be overridden from the environment:
#   N           cells along each side ((N + 1)^2 vertices)                                      250
#   SIDE        side of the cloth (m)                                                           1
#   RADIUS      radius of the sphere (m)                                                        0.3
#   GAP         the cloth's height above the top of the sphere at the start (m)                 0.02
#   DT          time step (s) of every code.  The default is Shard's `dt: auto` for this        1e-4
#               cloth at N = 250 (1.03e-4 s: 0.4 of its stability bound); Bullet's explicit
#               springs are stable there too.  It scales with the cell size SIDE / N
#   STEPS       steps (the default 3000 x 1e-4 s = 0.3 s: the cloth lands on the sphere at       3000
#               about 0.06 s, and its sides and corners hang below the sphere's equator by 0.3 s)
#   THICKNESS   cloth thickness (m)                                                             0.001
#   DENSITY     mass density (kg/m^3); areal density DENSITY x THICKNESS                         200
#   E, NU       Young's modulus (Pa) and Poisson's ratio: E THICKNESS = 20 N/m, a stretchy knit  2e4, 1/3
#   DAMPING     stiffness-proportional damping time (s)                                         1e-5
#   FRICTION    Coulomb friction between the cloth and the sphere                               0.3
#   ENGINES     codes: shard, bullet (deformable solver, self-collision on), bullet_classic      "bullet shard"
#               (Bullet's position-based solver; no self-collision possible)
#   SHARD_RANKS Shard's rank counts (each a full run; the state hashes are compared)            "1 2"
#   BULLET_OPTIONS  extra options of bullet_cloth for both Bullet rows (self=0, bend_k=K,         ""
#               piterations=P for bullet_classic; see bullet_cloth.cpp)
#   KEEP_OUTPUT 1 keeps Shard's output folders and Bullet's dumps, 0 removes them               0
#   INSTALL     1: apt-get install what is missing (pkg-config, libbullet-dev,                  1
#               libhdf5-openmpi-dev) when run as root; 0: only say so
#   CC CXX CFLAGS CXXFLAGS   compilers and flags                                      cc c++ "-O2" "-O2"
#   SHARD       shard executable (default: build/shard, then PATH)
#   MPIEXEC MPIEXEC_FLAGS   launcher of Shard's runs (jobs/lib.sh)                           mpiexec ""
#   OUT         output folder: bin/, logs, results.csv                               /tmp/shard-bench/cloth
#
# Figures:
#   steps/s     Shard: STEPS over the loop time of its report ("Loop time of X s ... for N steps": every phase,
#               the two output files at step 0 and at the end included); Bullet: the stepping loop less its
#               first step, which also builds Bullet's face tree once (O(F^2) in 3.24: 40 s or more at N = 250;
#               shown apart as "first (s)"), over STEPS - 1 steps
#   ratio       steps/s over that of the "bullet" row (Bullet's deformable solver)
#   isect       pairs of triangles sharing no vertex that intersect (closed triangles: touching counts), exact for
#               the coordinates written (Shard's doubles, Bullet's floats); tris: triangles in such pairs
#   z min       the lowest vertex at the end (the sphere's centre is at z = 0: below 0 the cloth hangs past the
#               equator); in sphere: vertices inside the sphere at the end (deepest in the log)
# Logs: OUT/bullet[_classic].log, OUT/shard-p<P>/{scene.yaml,run.log}, OUT/<code>.isect (the counter's output),
# OUT/selftest.log, OUT/build.log.  Needs Debian's libbullet-dev (pkg-config bullet), libhdf5-openmpi-dev (for
# reading Shard's files), a C and C++ compiler, and for Shard's rows mpiexec.
set -euo pipefail

# shellcheck source=jobs/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
SRC=$JOB_REPO/jobs/bench/cloth_peers
COUNTER=$JOB_REPO/tests/support/intersections.c
N=${N:-250}
SIDE=${SIDE:-1}
RADIUS=${RADIUS:-0.3}
GAP=${GAP:-0.02}
DT=${DT:-1e-4}
STEPS=${STEPS:-3000}
THICKNESS=${THICKNESS:-0.001}
DENSITY=${DENSITY:-200}
E=${E:-2e4}
NU=${NU:-0.3333333333333333}
DAMPING=${DAMPING:-1e-5}
FRICTION=${FRICTION:-0.3}
ENGINES=${ENGINES:-"bullet shard"}
SHARD_RANKS=${SHARD_RANKS:-"1 2"}
BULLET_OPTIONS=${BULLET_OPTIONS:-}
KEEP_OUTPUT=${KEEP_OUTPUT:-0}
INSTALL=${INSTALL:-1}
CC=${CC:-cc}
CXX=${CXX:-c++}
CFLAGS=${CFLAGS:--O2}
CXXFLAGS=${CXXFLAGS:--O2}
OUT=${OUT:-/tmp/shard-bench/cloth}

# ---- checks -------------------------------------------------------------------------------------------------
job_need_int N STEPS
job_need_num SIDE RADIUS GAP DT THICKNESS DENSITY E
job_need_nu
job_need_zero_or_num DAMPING FRICTION
[ "$N" -ge 2 ] || job_die "N must be at least 2, got $N"
job_need_flag KEEP_OUTPUT INSTALL
job_peer_engines bullet bullet_classic

# ---- what is needed ---------------------------------------------------------------------------------------------
# Debian's packages, through pkg-config: Bullet for its rows, parallel HDF5 (what Shard links) for reading Shard's
# files.  As root with INSTALL=1 what is missing is installed (apt-get update first, only then).
cp_missing() {
    command -v pkg-config >/dev/null 2>&1 || echo pkg-config
    if [ -n "$PEERS" ]; then
        command -v pkg-config >/dev/null 2>&1 && pkg-config --exists bullet || echo libbullet-dev
    fi
    if [ "$WITH_SHARD" = 1 ]; then
        command -v pkg-config >/dev/null 2>&1 && pkg-config --exists hdf5-openmpi || echo libhdf5-openmpi-dev
    fi
}
mapfile -t MISSING < <(cp_missing)
if [ ${#MISSING[@]} -gt 0 ]; then
    if [ "$INSTALL" = 1 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "Installing ${MISSING[*]} (apt-get) ..." >&2
        APT_LOG=$(mktemp)
        { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${MISSING[@]}"; } >"$APT_LOG" 2>&1 ||
            job_log_die "$APT_LOG" "apt-get install ${MISSING[*]} failed"
        rm -f "$APT_LOG"
        mapfile -t MISSING < <(cp_missing)
        [ ${#MISSING[@]} -eq 0 ] || job_die "still missing after apt-get: ${MISSING[*]}"
    else
        job_die "missing: ${MISSING[*]}: apt-get install ${MISSING[*]} (or run as root with INSTALL=1)"
    fi
fi
command -v "$CC" >/dev/null 2>&1 || job_die "C compiler '$CC' not found: apt-get install build-essential (or set CC)"
[ -z "$PEERS" ] || command -v "$CXX" >/dev/null 2>&1 ||
    job_die "C++ compiler '$CXX' not found: apt-get install build-essential (or set CXX)"
if [ "$WITH_SHARD" = 1 ]; then
    job_find_shard
    job_need_mpiexec
    SHARD_VERSION=$("$SHARD" --version 2>/dev/null | head -n 1 | sed 's/^shard //')
    [ -n "$SHARD_VERSION" ] || job_die "$SHARD --version printed nothing"
fi
job_out_dir bin

# ---- the scene's derived figures ----------------------------------------------------------------------------
cp_calc() { awk "BEGIN { printf \"%.10g\", $1 }"; }
Z0=$(cp_calc "$RADIUS + $GAP")
HALF=$(cp_calc "$SIDE / 2")
AREAL=$(cp_calc "$DENSITY * $THICKNESS")
MEMBRANE=$(cp_calc "$E * $THICKNESS")
BENDING=$(cp_calc "$E * $THICKNESS ^ 3 / (12 * (1 - $NU ^ 2))")
CELL=$(cp_calc "$SIDE / $N")
T_END=$(cp_calc "$STEPS * $DT")
VERTICES=$(((N + 1) * (N + 1)))
TRIANGLES=$((2 * N * N))

# ---- build --------------------------------------------------------------------------------------------------
BUILD_LOG=$OUT/build.log
: >"$BUILD_LOG"
build() {
    echo "+ $*" >>"$BUILD_LOG"
    "$@" >>"$BUILD_LOG" 2>&1 || job_log_die "$BUILD_LOG" "building the benchmark programs failed"
}
# The counter reads Shard's files with the parallel HDF5 library Shard itself uses (serially: no MPI_Init needed).
# shellcheck disable=SC2046,SC2086  # flags are word lists
if [ "$WITH_SHARD" = 1 ]; then
    build "$CC" $CFLAGS -std=c11 -Wall -DWITH_HDF5 $(pkg-config --cflags hdf5-openmpi) "$COUNTER" \
        $(pkg-config --libs hdf5-openmpi) -lm -o "$OUT/bin/intersections"
else
    build "$CC" $CFLAGS -std=c11 -Wall "$COUNTER" -lm -o "$OUT/bin/intersections"
fi
BULLET_VERSION=-
if [ -n "$PEERS" ]; then
    BULLET_VERSION=$(pkg-config --modversion bullet)
    # Bullet's headers warn under -Wall: include them as system headers
    # shellcheck disable=SC2046,SC2086
    build "$CXX" $CXXFLAGS -std=c++11 -Wall -DPEER_ENGINE_VERSION="\"$BULLET_VERSION\"" \
        $(pkg-config --cflags bullet | sed 's/-I/-isystem /g') "$SRC/bullet_cloth.cpp" $(pkg-config --libs bullet) \
        -o "$OUT/bin/bullet_cloth"
fi

# ---- the counter's self-test --------------------------------------------------------------------------------
"$OUT/bin/intersections" --self-test >"$OUT/selftest.log" 2>&1 ||
    job_log_die "$OUT/selftest.log" "the intersection counter failed its self-test"

# ---- runs ---------------------------------------------------------------------------------------------------
# cp_value LOG KEY: the value of KEY=... in LOG ('-' when absent).
cp_value() {
    local v
    v=$(sed -n "s/^$2=//p" "$1" 2>/dev/null | tail -n 1)
    echo "${v:--}"
}

echo "Cloth ${N} x ${N} cells (${VERTICES} vertices, ${TRIANGLES} triangles) of side ${SIDE} m, ${CELL} m cells, at"
echo "  ${GAP} m above a sphere of radius ${RADIUS} m; thickness ${THICKNESS} m, ${AREAL} kg/m^2, E ${E} Pa (E t = ${MEMBRANE} N/m),"
echo "  nu ${NU}, damping ${DAMPING} s, friction ${FRICTION}; DT ${DT} s x ${STEPS} steps = ${T_END} s"
echo "  codes: ${ENGINES}${PEERS:+; Bullet $BULLET_VERSION (pkg-config bullet)}"
[ "$WITH_SHARD" = 0 ] || echo "  shard $SHARD_VERSION: $SHARD on ${SHARD_RANKS// /, } rank(s), through $MPIEXEC"
echo "  intersection counter: $(grep -c ': ok$' "$OUT/selftest.log") self-test cases passed ($OUT/selftest.log)"
job_load_warning
echo

declare -A LOG ISECT
CODES=
# cp_count CODE NAME FILE: the counter on FILE into OUT/NAME.isect
cp_count() {
    local rc=0
    "$OUT/bin/intersections" --sphere 0 0 0 "$RADIUS" "$3" >"$OUT/$2.isect" 2>&1 || rc=$?
    [ "$rc" = 0 ] || echo "status=counter failed ($rc)" >>"$OUT/$2.isect"
    ISECT[$1]=$OUT/$2.isect
}

for e in $PEERS; do
    world=deformable
    [ "$e" = bullet_classic ] && world=classic
    log=$OUT/$e.log
    echo "  $e ($world solver) ..." >&2
    rc=0
    # shellcheck disable=SC2086  # options are words
    "$OUT/bin/bullet_cloth" "n=$N" "side=$SIDE" "radius=$RADIUS" "gap=$GAP" "dt=$DT" "steps=$STEPS" "areal=$AREAL" \
        "membrane=$MEMBRANE" "bending=$BENDING" "beta=$DAMPING" "thickness=$THICKNESS" "friction=$FRICTION" \
        "world=$world" "out=$OUT/$e.mesh" $BULLET_OPTIONS >"$log" 2>&1 || rc=$?
    # 3: a position went non-finite; the figures up to then are still reported
    [ "$rc" = 0 ] || [ "$rc" = 3 ] || job_log_die "$log" "bullet_cloth failed with exit code $rc"
    LOG[$e]=$log
    CODES="$CODES $e"
    cp_count "$e" "$e" "$OUT/$e.mesh"
    [ "$KEEP_OUTPUT" = 1 ] || rm -f "$OUT/$e.mesh"
done

# cp_shard_scene FILE OUTDIR: Shard's scene from the variables above.
cp_shard_scene() {
    cat >"$1" <<EOF
# Generated by jobs/bench/cloth_peers.sh: a ${N} x ${N} cloth of side ${SIDE} m draped on a sphere of radius ${RADIUS} m
run: {steps: ${STEPS}, dt: ${DT}, output_dir: ${2}}
materials:
  cloth: {density: ${DENSITY}, E: ${E}, nu: ${NU}, damping: ${DAMPING}, contact: {friction: ${FRICTION}}}
bodies:
  - name: sheet
    kind: cloth
    material: cloth
    shape: {grid: {corner: [-${HALF}, -${HALF}, ${Z0}], u: [${SIDE}, 0, 0], v: [0, ${SIDE}, 0], divisions: [${N}, ${N}]}}
    thickness: ${THICKNESS}
obstacles:
  - sphere: {center: [0, 0, 0], radius: ${RADIUS}}
    friction: ${FRICTION}
output: {every: ${STEPS}, fields: [velocity]}
EOF
}

declare -A SHARD_SPS SHARD_LOOP SHARD_STATUS SHARD_HASH SHARD_IO
if [ "$WITH_SHARD" = 1 ]; then
    for np in $SHARD_RANKS; do
        c=shard/$np
        dir=$OUT/shard-p$np
        rm -rf "$dir"
        mkdir -p "$dir"
        cp_shard_scene "$dir/scene.yaml" "$dir/out"
        echo "  shard on $np rank(s) ..." >&2
        rc=0
        job_run "$np" "$dir/run.log" "$MPIEXEC $MPIEXEC_FLAGS -n {P}" "$SHARD" run "$dir/scene.yaml" --quiet || rc=$?
        LOG[$c]=$dir/run.log
        CODES="$CODES $c"
        SHARD_STATUS[$c]=ok
        [ "$rc" = 0 ] || SHARD_STATUS[$c]="failed ($rc)"
        if grep -q '^Loop time of' "$dir/run.log"; then
            SHARD_LOOP[$c]=$(awk -v t="$(job_field "$dir/run.log" '^Loop time of' 4)" 'BEGIN { printf "%.4g", t }')
            SHARD_SPS[$c]=$(awk -v s="$(job_field "$dir/run.log" '^Loop time of' 10)" -v t="${SHARD_LOOP[$c]}" \
                'BEGIN { printf "%.4g", s / t }')
            SHARD_IO[$c]=$(awk -F'|' '$1 ~ /^I\/O / { gsub(/ /, "", $3); print $3 }' "$dir/run.log")
        fi
        SHARD_HASH[$c]=$(sed -n 's/^State hash: //p' "$dir/run.log")
        last=$(find "$dir/out" -maxdepth 1 -name "particles_$(printf '%06d' "$STEPS").h5" 2>/dev/null | head -n 1)
        if [ -n "$last" ]; then
            cp_count "$c" "shard-p$np" "$last"
        else
            echo "status=no output file of step $STEPS" >"$OUT/shard-p$np.isect"
            ISECT[$c]=$OUT/shard-p$np.isect
        fi
        [ "$KEEP_OUTPUT" = 1 ] || rm -rf "$dir/out"
    done
fi
CODES=${CODES# }

# ---- table --------------------------------------------------------------------------------------------------
cp_ratio() {
    if job_is_num "$1" && job_is_num "$2"; then awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3g", a / b }'; else echo -; fi
}
BULLET_SPS=-
[ -z "${LOG[bullet]:-}" ] || BULLET_SPS=$(cp_value "${LOG[bullet]}" steps_per_s)
CSV=$OUT/results.csv
echo "code,version,ranks,n,vertices,triangles,dt_s,steps,t_end_s,wall_s,first_step_s,steps_per_s,ratio_to_bullet,intersections,triangles_involved,exact_calls,z_min_m,inside_sphere,sphere_depth_mm,self_collision,status" >"$CSV"
fmt="%-15s | %5s | %5s | %8s | %9s | %8s | %6s | %7s | %7s | %8s | %9s | %-10s\n"
echo
echo "Cloth ${N} x ${N} on a sphere, DT ${DT} s, ${STEPS} steps (${T_END} s); intersections of the final state"
job_table_head "$fmt" code ranks steps "wall (s)" "first (s)" "steps/s" ratio isect tris "z min" "in sphere" status
for c in $CODES; do
    log=${LOG[$c]}
    is=${ISECT[$c]:-/dev/null}
    if [ "${c%%/*}" = shard ]; then
        ranks=${c#shard/} version=$SHARD_VERSION first=- self=on
        steps=$STEPS wall=${SHARD_LOOP[$c]:--} sps=${SHARD_SPS[$c]:--} status=${SHARD_STATUS[$c]}
    else
        ranks=1 version=$BULLET_VERSION first=$(cp_value "$log" first_step_s)
        steps=$(cp_value "$log" steps_done) wall=$(cp_value "$log" wall_s) sps=$(cp_value "$log" steps_per_s)
        status=$(cp_value "$log" status)
        self=$(cp_value "$log" self_collision)
        self=${self%% (*}
    fi
    st=$(cp_value "$is" status)
    [ "$st" = - ] || status="$status; $st"
    ratio=$(cp_ratio "$sps" "$BULLET_SPS")
    printf "$fmt" "$c" "$ranks" "$steps" "$wall" "$first" "$sps" "$ratio" "$(cp_value "$is" intersections)" \
        "$(cp_value "$is" triangles_involved)" "$(cp_value "$is" z_min)" "$(cp_value "$is" inside_sphere)" "$status"
    echo "${c%%/*},$version,$ranks,$N,$VERTICES,$TRIANGLES,$DT,$steps,$T_END,$wall,$first,$sps,$ratio,$(cp_value "$is" intersections),$(cp_value "$is" triangles_involved),$(cp_value "$is" exact_calls),$(cp_value "$is" z_min),$(cp_value "$is" inside_sphere),$(cp_value "$is" sphere_depth_mm),\"$self\",\"$status\"" >>"$CSV"
done
echo
for c in $CODES; do
    is=${ISECT[$c]:-/dev/null}
    z=$(cp_value "$is" z_min) k=$(cp_value "$is" intersections)
    drape="has not reached the sphere's equator"
    if job_is_num "$RADIUS" && [ "$z" != - ] && awk -v z="$z" 'BEGIN { exit !(z < 0) }'; then
        drape="hangs below the sphere's equator (lowest vertex at z = $z m)"
    fi
    case $c in
    shard/*) what="Shard's collision stage is on" ;;
    bullet)
        what="Bullet's deformable solver, self-collision on"
        [ "$(cp_value "${LOG[$c]}" self_collision)" != off ] || what="Bullet's deformable solver, self-collision off"
        ;;
    *) what="no self-collision possible in this solver" ;;
    esac
    if [ "$k" = 0 ]; then self="does not intersect itself"; elif [ "$k" = - ]; then self="was not counted"; else self="intersects itself: $k triangle pairs ($what)"; fi
    echo "  $c: the cloth $drape and $self;" \
        "$(cp_value "$is" inside_sphere) vertices inside the sphere (deepest $(cp_value "$is" sphere_depth_mm) mm)"
done
if [ "$WITH_SHARD" = 1 ]; then
    hashes=
    for np in $SHARD_RANKS; do
        echo "  shard/$np: loop ${SHARD_LOOP[shard/$np]:--} s, of which I/O ${SHARD_IO[shard/$np]:--} s (the output files of step 0 and $STEPS); state hash ${SHARD_HASH[shard/$np]:--}"
        hashes="$hashes ${SHARD_HASH[shard/$np]:--}"
    done
    if [ "$(echo "$hashes" | wc -w)" -gt 1 ]; then
        # shellcheck disable=SC2086  # one hash a word
        if [ "$(printf '%s\n' $hashes | sort -u | wc -l)" = 1 ]; then
            echo "  shard: the same state hash on ${SHARD_RANKS// /, } ranks"
        else
            echo "  shard: state hashes differ between rank counts:$hashes"
        fi
    fi
fi
for e in $PEERS; do
    echo "  $e: $(cp_value "${LOG[$e]}" bullet_world); self-collision: $(cp_value "${LOG[$e]}" self_collision)"
done
echo "CSV: $CSV; logs: $OUT/<code>.log, $OUT/shard-p<P>/run.log, $OUT/*.isect; build log: $BUILD_LOG"
