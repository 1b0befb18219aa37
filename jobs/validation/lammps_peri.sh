#!/usr/bin/env bash
# shellcheck disable=SC2016  # LAMMPS variables ($ in the input lines) are LAMMPS's, not the shell's
# LAMMPS side by side, fracture: LAMMPS's examples/peri problem (in.peri.pmb: a spherical indenter, `fix indent`,
# moving at 100 m/s through a cylinder of PMB peridynamic material, `pair_style peri/pmb`, critical stretch s00)
# run with LAMMPS and with Shard at the same resolution, damage maps of both in one figure and a table.
#
#   jobs/validation/lammps_peri.sh                   # the example's spacing (0.5 mm) and 0.25 mm, 2 ranks
#   SPACINGS=0.5 VARIANTS= jobs/validation/lammps_peri.sh
#
# Every quantity of the problem is read from the example (EXAMPLE, found with `dpkg -L lammps-examples`): the
# lattice spacing A0, pair_coeff c delta s00 alpha, the density, the time step and the steps, the region (a
# cylinder along y: radius 5 mm, y from -5 to 0 mm) and the indenter (K, radius R, start y0, speed vy).  For each
# spacing a (mm) of SPACINGS, f = a / A0:
#   LAMMPS  lattice a with origin 0.5 (points at (i + 1/2) a, where Shard samples its shapes: both codes get the
#           same particles), horizon delta = (delta0 / A0) a = 3.0002 a, c = c0 / f^4 (the same bulk modulus
#           K = pi c delta^4 / 18), s00 as in the example, alpha = ALPHA, dt = f dt0 and steps0 / f steps (the same
#           100 us), the example's indenter (K = 1e17, R = 1.5 mm), neighbour skin 2 a, a dump of id x y z damage
#           every 100 / f steps
#   Shard   the same cylinder (kind solid), spacing a, support 3.0002, density, E = 1.5 K and nu = 1/4 (the bulk
#           modulus of the PMB material, whose nu is 1/4), `fracture: {critical_stretch: s00}`, contact damping
#           and friction 0, dt as LAMMPS's (SHARD_DT), the projectile a sphere obstacle of radius R - a/2 (Shard's
#           obstacle touches a particle's contact sphere of radius a/2, LAMMPS's indenter the particle's centre:
#           both start pushing at centre distance R) moving at vy, friction 0, damping 0, stiffness STIFFNESS
# At the example's spacing LAMMPS also runs the example as shipped (its own lattice, at i a: 3487 atoms, and its
# alpha) and, when ALPHA differs from it, the matched lattice with the example's alpha; Shard runs VARIANTS.
#
# Variables (environment):
#   SPACINGS    lattice spacings (mm), space separated                                          "0.5 0.25"
#   ALPHA       LAMMPS's alpha on the matched lattice: s0 = s00 - alpha * (the smallest stretch of the
#               particle's bonds at the previous step), so compression raises the threshold; 0 is Shard's rule
#               (a bond breaks when its stretch reaches s00)                                     0
#   STIFFNESS   Shard's obstacle stiffness (N/m): "lammps": the linear spring k d with the total force of LAMMPS's
#               quadratic indenter at the depths d = R - r of the particles inside it in LAMMPS's matched run
#               (every output frame): k = K V sum d^2 / sum d, V = a^3 (LAMMPS's K (R - r)^2 is a force
#               density: it is divided by the "mass" rmass = density); "auto": Shard's own (E a); or a number
#                                                                                                lammps
#   SHARD_DT    Shard's time step: "lammps" (the same as LAMMPS, 0.70 of Shard's CFL step h / c_p) or "auto"
#               (Shard's rule, 0.4 of it: 1.75 times the steps)                                   lammps
#   VARIANTS    extra Shard runs at the example's spacing (table rows; the figure shows the main runs, stab1 and
#               K_FIG): k_scan (k times each factor of K_SCAN), dt_auto (SHARD_DT=auto), k_auto
#               (STIFFNESS=auto), stab1 (stabilization 1 instead of the breaking default 0.1)
#                                                                           "k_scan dt_auto k_auto stab1"
#   K_SCAN      factors of k_scan                                                           "0.15 0.25 0.35 0.5 0.7"
#   K_FIG       the k_scan factor whose run goes into the figure too                              0.25
#   LINK        the common fragment count joins final positions closer than LINK spacings         1.5
#   RANKS       MPI ranks of every run                                                            2
#   EXAMPLE     LAMMPS's in.peri.pmb                             (dpkg -L lammps-examples | grep in.peri.pmb)
#   LMP         LAMMPS executable (Debian: apt-get install lammps lammps-examples)                lmp
#   SHARD       shard executable (default: build/shard, then PATH)
#   MPIEXEC MPIEXEC_FLAGS   MPI launcher and extra flags                                          mpiexec ""
#   OUT         inputs, scenes, logs, dumps, Shard output               /tmp/shard-validation/lammps_peri
#   RESULTS     folder of lammps_peri.txt and the figures        jobs/validation/results
#
# Writes RESULTS/lammps_peri.txt (the table, lammps_peri.py analyse), RESULTS/lammps_peri.png (damage maps at the
# example's spacing), RESULTS/lammps_peri_history.png (the broken fraction of the bonds against time, every run at
# the example's spacing) and RESULTS/lammps_peri_<a>mm.png (damage maps) for the other spacings.
set -euo pipefail

# shellcheck source=jobs/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
# shellcheck source=jobs/lammps_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lammps_lib.sh"
HERE=$JOB_REPO/jobs/validation
HELPER=$HERE/lammps_peri.py
SPACINGS=${SPACINGS:-"0.5 0.25"}
ALPHA=${ALPHA:-0}
STIFFNESS=${STIFFNESS:-lammps}
SHARD_DT=${SHARD_DT:-lammps}
VARIANTS=${VARIANTS-"k_scan dt_auto k_auto stab1"}
K_SCAN=${K_SCAN:-"0.15 0.25 0.35 0.5 0.7"}
K_FIG=${K_FIG:-0.25}
LINK=${LINK:-1.5}
RANKS=${RANKS:-2}
OUT=${OUT:-/tmp/shard-validation/lammps_peri}
RESULTS=${RESULTS:-$HERE/results}

# ---- checks -------------------------------------------------------------------------------------------------
job_need_int RANKS
job_need_num LINK
for s in $SPACINGS; do job_is_num "$s" || job_die "SPACINGS: a spacing must be a number of mm > 0, got '$s'"; done
awk -v x="$ALPHA" 'BEGIN { exit !(x ~ /^[0-9.eE+-]+$/ && x >= 0) }' || job_die "ALPHA must be a number >= 0, got '$ALPHA'"
[ "$STIFFNESS" = lammps ] || [ "$STIFFNESS" = auto ] || job_is_num "$STIFFNESS" ||
    job_die "STIFFNESS must be 'lammps', 'auto' or a number > 0, got '$STIFFNESS'"
case $SHARD_DT in lammps | auto) ;; *) job_die "SHARD_DT must be 'lammps' or 'auto', got '$SHARD_DT'" ;; esac
for v in $VARIANTS; do
    case $v in k_scan | dt_auto | k_auto | stab1) ;; *) job_die "VARIANTS: unknown variant '$v' (k_scan, dt_auto, k_auto, stab1)" ;; esac
done
for x in $K_SCAN; do job_is_num "$x" || job_die "K_SCAN: factors must be numbers > 0, got '$x'"; done
job_need_mpirun
lmp_need pmb
if [ -z "${EXAMPLE:-}" ]; then
    EXAMPLE=$(dpkg -L lammps-examples 2>/dev/null | grep '/peri/in\.peri\.pmb$' | head -n 1 || true)
    [ -n "$EXAMPLE" ] || EXAMPLE=/usr/share/lammps/examples/peri/in.peri.pmb
fi
[ -f "$EXAMPLE" ] || job_die "LAMMPS's example in.peri.pmb not found (apt-get install lammps-examples, or set EXAMPLE)"
job_find_shard
job_out_dir
mkdir -p "$RESULTS"
RESULTS=$(cd "$RESULTS" && pwd)
"$PYTHON" -c 'import h5py, numpy, scipy, matplotlib' 2>/dev/null ||
    job_die "$PYTHON cannot import h5py, numpy, scipy and matplotlib (Debian: python3-h5py python3-scipy python3-matplotlib)"

# ---- the example --------------------------------------------------------------------------------------------
# ex WORD N: the N-th word of the example's first line that starts with WORD (comments skipped).
ex() {
    local v
    v=$(awk -v w="$1" -v n="$2" '$1 == w { print $n; exit }' "$EXAMPLE")
    [ -n "$v" ] || job_die "$EXAMPLE: no '$1' line with a word $2"
    echo "$v"
}
# exvar NAME: the value of the example's `variable NAME equal VALUE`.
exvar() {
    local v
    v=$(awk -v w="$1" '$1 == "variable" && $2 == w && $3 == "equal" { print $4; exit }' "$EXAMPLE")
    [ -n "$v" ] || job_die "$EXAMPLE: no 'variable $1 equal' line"
    echo "$v"
}
[ "$(ex pair_style 2)" = peri/pmb ] || job_die "$EXAMPLE: pair_style is not peri/pmb"
A0=$(ex lattice 3)
C0=$(ex pair_coeff 4)
DELTA0=$(ex pair_coeff 5)
S00=$(ex pair_coeff 6)
ALPHA0=$(ex pair_coeff 7)
RHO=$(awk '$1 == "set" && $4 == "density" { print $5; exit }' "$EXAMPLE")
DT0=$(ex timestep 2)
STEPS0=$(ex run 2)
# region target cylinder y C1 C2 RADIUS LO HI units box
read -r RAXIS RC1 RC2 RRAD RLO RHI <<<"$(awk '$1 == "region" && $3 == "cylinder" { print $4, $5, $6, $7, $8, $9; exit }' "$EXAMPLE")"
[ "$RAXIS" = y ] || job_die "$EXAMPLE: the target is not a cylinder along y"
# fix 2 all indent K sphere X v_y Z R units box
read -r KIND IX IZ IR <<<"$(awk '$1 == "fix" && $4 == "indent" && $6 == "sphere" { print $5, $7, $9, $10; exit }' "$EXAMPLE")"
[ -n "$IR" ] || job_die "$EXAMPLE: no 'fix ... indent K sphere' line"
Y0=$(exvar y0)
VY=$(exvar vy)
for v in A0 C0 DELTA0 S00 ALPHA0 RHO DT0 STEPS0 RRAD KIND IR; do
    awk -v x="${!v}" 'BEGIN { exit !(x + 0 > 0 || x == "0.0" || x == "0") }' || job_die "$EXAMPLE: could not read $v (got '${!v}')"
done
HSP=$(awk -v d="$DELTA0" -v a="$A0" 'BEGIN { printf "%.10g", d / a }')   # horizon in spacings: 3.0002

echo "LAMMPS: $(command -v "$LMP") ($(sed -n 's/^Large-scale.*Simulator - //p' <<<"$LMP_HELP" | head -n 1)); example $EXAMPLE"
echo "Shard:  $SHARD; $RANKS rank(s); output $OUT"
echo "Example: lattice sc $A0 m, peri/pmb c $C0 delta $DELTA0 (= $HSP a) s00 $S00 alpha $ALPHA0, density $RHO," \
    "dt $DT0 s x $STEPS0 steps; cylinder r $RRAD m along y, y in [$RLO, $RHI]; indenter K $KIND R $IR y0 $Y0 vy $VY"
job_load_warning

MANIFEST=$OUT/manifest.tsv
: >"$MANIFEST"
# manifest GROUP LABEL CODE A DATA LOG DT
manifest() {
    local hz
    hz=$(awk -v h="$HSP" -v a="$4" 'BEGIN { printf "%.10g", h * a }')
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$hz" "$5" "$6" "$IR" "$Y0" "$VY" "$7" \
        >>"$MANIFEST"
}

# The indenter lines of the example, the damage compute and the dump (DUMP every EVERY steps, sorted by id).
indenter_lines() {
    printf '%s\n' "variable        y0 equal ${Y0}" "variable        vy equal ${VY}" \
        'variable        y equal "v_y0 + step*dt*v_vy"' \
        "fix             2 all indent ${KIND} sphere ${IX} v_y ${IZ} ${IR} units box" \
        "compute         1 all damage/atom" \
        'variable        py equal "mass(all)*vcm(all,y)"' \
        "thermo_style    custom step ke pe f_2 f_2[2] v_py" \
        "dump            1 all custom $2 $1 id x y z c_1" \
        "dump_modify     1 sort id"
}

# lmp_matched FILE A ALPHA STEPS DT EVERY DUMP: the example on the lattice at (i + 1/2) a.
lmp_matched() {
    local f=$1 a=$2 al=$3 steps=$4 dt=$5 every=$6 dump=$7
    local -a cmds
    mapfile -t cmds < <(indenter_lines "$dump" "$every")
    LMP_TITLE="Generated by jobs/validation/lammps_peri.sh from $EXAMPLE: spacing $a m, lattice points at (i + 1/2) a
(Shard's), c scaled by (A0/a)^4 (the same bulk modulus), alpha $al"
    LMP_A=$a
    LMP_REGION="cylinder y ${RC1} ${RC2} ${RRAD} ${RLO} ${RHI} units box"
    LMP_MODEL=pmb
    LMP_C=$(awk -v c="$C0" -v a0="$A0" -v a="$a" 'BEGIN { printf "%.10g", c * (a0 / a) ^ 4 }')
    LMP_DELTA=$(awk -v h="$HSP" -v a="$a" 'BEGIN { printf "%.10g", h * a }')
    LMP_S00=$S00 LMP_ALPHA=$al LMP_RHO=$RHO LMP_VELOCITY="set 0.0 0.0 0.0 sum no units box" LMP_SKIN=2 LMP_DT=$dt
    lmp_peri_input "$f" "$steps" "${cmds[@]}"
}

# lmp_example FILE DUMP: the example as shipped, plus the dump (before `run`) and a thermo_style with ke.
lmp_example() {
    local -a cmds
    mapfile -t cmds < <(indenter_lines "$2" "$((STEPS0 / 10))" | tail -n 4)
    {
        echo "# jobs/validation/lammps_peri.sh: $EXAMPLE as shipped, plus the last four lines before 'run'"
        awk -v extra="$(printf '%s\n' "${cmds[@]}")" '$1 == "run" && !done { print extra; done = 1 } { print }' "$EXAMPLE"
    } >"$1"
}

# shard_scene FILE A DT STEPS EVERY STIFF STAB: Shard's version (DT "auto": end_time and every_time instead).
shard_scene() {
    local f=$1 a=$2 dt=$3 steps=$4 every=$5 stiff=$6 stab=$7
    local K E rs run out kline sline odir
    odir=$(dirname "$f")/out
    K=$(awk -v c="$C0" -v d="$DELTA0" 'BEGIN { printf "%.10g", c * atan2(0, -1) * d ^ 4 / 18 }')
    E=$(awk -v k="$K" 'BEGIN { printf "%.10g", 1.5 * k }')
    rs=$(awk -v r="$IR" -v a="$a" 'BEGIN { printf "%.10g", r - a / 2 }')
    if [ "$dt" = auto ]; then
        run="{end_time: $(awk -v s="$steps" -v d="$DT0" -v a="$a" -v a0="$A0" 'BEGIN { printf "%.10g", s * d * a / a0 }'), dt: auto"
        out="{every_time: $(awk -v e="$every" -v d="$DT0" -v a="$a" -v a0="$A0" 'BEGIN { printf "%.10g", e * d * a / a0 * (1 - 1e-9) }'), fields: [damage, fragment]}"
    else
        run="{steps: $steps, dt: $dt"
        out="{every: $every, fields: [damage, fragment]}"
    fi
    kline=""
    [ "$stiff" = auto ] || kline="
    stiffness: $stiff"
    sline=""
    [ -z "$stab" ] || sline="
    stabilization: $stab"
    cat >"$f" <<EOF
# Generated by jobs/validation/lammps_peri.sh: LAMMPS's $EXAMPLE in Shard, spacing $a m.
# E = 1.5 K, K = pi c delta^4 / 18 = $K Pa (peri/pmb's bulk modulus; PMB's nu is 1/4)
run: ${run}, gravity: [0, 0, 0], output_dir: $odir}
materials:
  pmb:
    density: $RHO
    E: $E
    nu: 0.25
    fracture: {critical_stretch: $S00}
    contact: {damping: 0, friction: 0}${sline}
bodies:
  - name: target
    kind: solid
    material: pmb
    shape: {cylinder: {p0: [$RC1, $RLO, $RC2], p1: [$RC1, $RHI, $RC2], radius: $RRAD}}
    spacing: $a
    support: $HSP
obstacles:
  - name: projectile
    sphere: {center: [$IX, $Y0, $IZ], radius: $rs}
    velocity: [0, $VY, 0]
    friction: 0
    damping: 0$kline
output: $out
EOF
}

# run_shard DIR LABEL GROUP A DT STEPS EVERY STIFF STAB
run_shard() {
    local dir=$1
    rm -rf "$dir"
    mkdir -p "$dir"
    shard_scene "$dir/scene.yaml" "$4" "$5" "$6" "$7" "$8" "$9"
    echo "  shard  $2 ..." >&2
    job_mpirun "$RANKS" "$dir/shard" "$SHARD" run "$dir/scene.yaml" --quiet
    echo "    $(grep '^Loop time' "$dir/shard.log")"
    echo "    $(grep '^Fracture:' "$dir/shard.log")"
    manifest "$3" "$2" shard "$4" "$dir/out" "$dir/shard.log" "$(awk -v s="$5" 'BEGIN { print (s == "auto") ? 0 : s }')"
}

# ---- runs ---------------------------------------------------------------------------------------------------
FIGS=()
T_ALL0=$(date +%s)
for amm in $SPACINGS; do
    a=$(awk -v s="$amm" 'BEGIN { printf "%.10g", s / 1000 }')
    f=$(awk -v a="$a" -v a0="$A0" 'BEGIN { printf "%.10g", a / a0 }')
    steps=$(awk -v s="$STEPS0" -v f="$f" 'BEGIN { printf "%d", s / f + 0.5 }')
    every=$(awk -v s="$STEPS0" -v f="$f" 'BEGIN { n = int(s / 10 / f + 0.5); printf "%d", n < 1 ? 1 : n }')
    dt=$(awk -v d="$DT0" -v f="$f" 'BEGIN { printf "%.10g", d * f }')
    group=$amm
    base=$(awk -v f="$f" 'BEGIN { exit !(f > 0.999999 && f < 1.000001) }' && echo 1 || echo 0)
    echo
    echo "== spacing $amm mm: $steps steps of $dt s, output every $every steps"
    d=$OUT/a${amm}mm
    mkdir -p "$d"

    if [ "$base" = 1 ]; then
        lmp_example "$d/in.example" "$d/dump.example"
        echo "  lammps example as shipped (alpha $ALPHA0) ..." >&2
        lmp_run "$RANKS" "$d/lammps-example" "$d/in.example"
        echo "    $(grep '^Loop time' "$d/lammps-example.log")"
        manifest "$group" "LAMMPS example as shipped (alpha $ALPHA0)" lammps "$a" "$d/dump.example" \
            "$d/lammps-example.log" "$DT0"
    fi
    alphas=$ALPHA
    if [ "$base" = 1 ] && ! awk -v x="$ALPHA" -v y="$ALPHA0" 'BEGIN { exit !(x == y) }'; then alphas="$ALPHA $ALPHA0"; fi
    for al in $alphas; do
        lmp_matched "$d/in.matched-a$al" "$a" "$al" "$steps" "$dt" "$every" "$d/dump.matched-a$al"
        echo "  lammps matched lattice, alpha $al ..." >&2
        lmp_run "$RANKS" "$d/lammps-matched-a$al" "$d/in.matched-a$al"
        echo "    $(grep '^Loop time' "$d/lammps-matched-a$al.log")"
        manifest "$group" "LAMMPS matched lattice, alpha $al" lammps "$a" "$d/dump.matched-a$al" \
            "$d/lammps-matched-a$al.log" "$dt"
    done

    # Shard's obstacle stiffness: k = K V sum d^2 / sum d over the depths d of the particles inside the indenter in
    # LAMMPS's matched run (ALPHA): the linear spring that gives the same total force at those depths.
    read -r pen_mean pen_max pen_n pen_f <<<"$("$PYTHON" "$HELPER" penetration --lammps "$d/dump.matched-a$ALPHA" \
        --radius "$IR" --y0 "$Y0" --vy "$VY" --dt "$dt")"
    kl=$(awk -v K="$KIND" -v a="$a" -v p="$pen_f" 'BEGIN { printf "%.4g", K * a ^ 3 * p }')
    km=$(awk -v K="$KIND" -v a="$a" -v p="$pen_mean" 'BEGIN { printf "%.4g", K * a ^ 3 * p }')
    case $STIFFNESS in lammps) k=$kl ;; *) k=$STIFFNESS ;; esac
    echo "  LAMMPS indenter (alpha $ALPHA): depth inside R mean $pen_mean m, max $pen_max m ($pen_n particle-frames)," \
        "sum d^2 / sum d $pen_f m: K V sum d^2 / sum d = $kl N/m (K V mean d = $km N/m); Shard's stiffness: $k"
    sdt=$dt
    [ "$SHARD_DT" = lammps ] || sdt=auto
    run_shard "$d/shard" "Shard, k = $k N/m, dt $sdt" "$group" "$a" "$sdt" "$steps" "$every" "$k" ""
    if [ "$base" = 1 ]; then
        for v in $VARIANTS; do
            case $v in
            dt_auto) run_shard "$d/shard-dt_auto" "Shard, k = $k N/m, dt auto" "$group+" "$a" auto "$steps" "$every" "$k" "" ;;
            k_auto) run_shard "$d/shard-k_auto" "Shard, k auto (E a), dt $sdt" "$group+" "$a" "$sdt" "$steps" "$every" auto "" ;;
            stab1) run_shard "$d/shard-stab1" "Shard, k = $k N/m, stabilization 1" "$group" "$a" "$sdt" "$steps" "$every" "$k" 1 ;;
            k_scan)
                for x in $K_SCAN; do
                    kx=$(awk -v k="$k" -v x="$x" 'BEGIN { printf "%.4g", k * x }')
                    g="$group+"
                    [ "$x" != "$K_FIG" ] || g=$group
                    run_shard "$d/shard-k$x" "Shard, k = $kx N/m ($x k)" "$g" "$a" "$sdt" "$steps" "$every" "$kx" ""
                done ;;
            esac
        done
        FIGS+=(--figure "$group=$RESULTS/lammps_peri.png" --history "$group=$RESULTS/lammps_peri_history.png")
    else
        FIGS+=(--figure "$group=$RESULTS/lammps_peri_${amm}mm.png")
    fi
done
T_ALL1=$(date +%s)

# ---- table and figures --------------------------------------------------------------------------------------
echo
{
    echo "# jobs/validation/lammps_peri.sh, $(date -u +%Y-%m-%d): LAMMPS $(sed -n 's/^Large-scale.*Simulator - //p' <<<"$LMP_HELP" | head -n 1) $EXAMPLE"
    echo "# (peri/pmb c $C0, delta $DELTA0 = $HSP a, s00 $S00, alpha $ALPHA0; indenter K $KIND, R $IR m, $VY m/s)"
    echo "# against Shard ($SHARD: $("$SHARD" --version 2>/dev/null | head -n 1)), $RANKS rank(s) each; ALPHA=$ALPHA STIFFNESS=$STIFFNESS SHARD_DT=$SHARD_DT"
    echo "# runs: $((T_ALL1 - T_ALL0)) s of wall time in all"
    echo
} >"$OUT/head.txt"
"$PYTHON" "$HELPER" analyse --manifest "$MANIFEST" --table "$OUT/table.txt" --link "$LINK" "${FIGS[@]}"
cat "$OUT/head.txt" "$OUT/table.txt" >"$RESULTS/lammps_peri.txt"
echo "Table: $RESULTS/lammps_peri.txt; inputs, scenes, logs and dumps: $OUT"
