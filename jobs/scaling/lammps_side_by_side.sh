#!/usr/bin/env bash
# Shard next to LAMMPS's peridynamics (PERI package: pair_style peri/pmb and peri/lps) on the same problems,
# generated for both codes from one description, at the same rank counts; one table of particle-steps/s/core,
# the ratio Shard / LAMMPS, and the memory per particle.
#
#   jobs/scaling/lammps_side_by_side.sh
#   CASES=cylinder CYL_REFINE=2 RANKS="1 2" REPEATS=3 jobs/scaling/lammps_side_by_side.sh
#
# Cases:
#   block     a simple-cubic block of NX x NY x NZ points, spacing SPACING; Shard's support radius SUPPORT
#             spacings = LAMMPS's horizon (2.2: 32 partners inside; no lattice vector lies on the horizon);
#             no gravity, no obstacle, a small uniform velocity (VEL along x) and BLOCK_STEPS steps.
#   cylinder  LAMMPS's examples/peri (in.peri.pmb, in.peri.lps): a cylinder target (radius 5 mm, height 5 mm,
#             axis y, y from -5 mm to 0) on a simple-cubic lattice of 0.5 mm / CYL_REFINE, horizon 3.0002
#             spacings (0.0015001 m in the example: 122 partners inside), density 2200 kg/m^3, bulk and shear
#             modulus 14.9 GPa, shot by a spherical indenter of radius 1.5 mm starting at y = 1.55 mm and moving
#             at -100 m/s (LAMMPS: fix indent, K = 1e17 N/m^3; Shard: a moving `sphere` obstacle with its
#             automatic contact stiffness), time step 1e-7 s, CYL_STEPS steps.  Both lattices sit at
#             (i + 1/2) a, so both codes get exactly the same particles (the example's own lattice sits at
#             i a: 3487 atoms instead of these).
# One description per case gives both inputs: lattice and spacing; horizon = support radius (the same partners:
# the script checks the bond totals); density; bulk modulus K and shear modulus G (block: from E and NU) ->
# peri/pmb micromodulus c = 18 K / (pi delta^4) (bond-based: Poisson's ratio 1/4 whatever G is), peri/lps K and
# G, Shard E = 9 K G / (3 K + G), nu = (3 K - 2 G) / (2 (3 K + G)); time step; steps.  LAMMPS breaks bonds
# (critical stretch S00 / CYL_S00); Shard has no fracture yet, so in the cylinder case LAMMPS loses some bonds
# near the indenter and does slightly less work per step than Shard.
#
# Every variable below can be overridden from the environment:
#   CASES           cases to run                                                        "block cylinder"
#   MODELS          LAMMPS pair styles (peri/<model>)                                   "pmb lps"
#   RANKS           MPI rank counts                                                      "1 2"
#   REPEATS         runs per code, model and rank count; the fastest is kept             1
#   NX NY NZ SPACING SUPPORT   block lattice                                             30 30 30 0.001 2.2
#   RHO E NU VEL    block material and initial velocity                                  1000 1e9 0.25 0.01
#   BLOCK_STEPS     block steps                                                          100
#   S00             block critical stretch (large: no bond breaks)                       1.0
#   CYL_REFINE      cylinder lattice refinement (1: the example's 0.5 mm; k: k^3 times the particles)   1
#   CYL_STEPS       cylinder steps (the example: 1000)                                   1000
#   CYL_S00         cylinder critical stretch (the example's)                            0.0005
#   MARGINAL        1: also run each code on a smaller copy of each case (half the size in every dimension, 1 rank,
#                   a few steps) and report the marginal memory per particle (RSS difference / particle
#                   difference), free of the fixed cost of MPI and the libraries                         1
#   WAIT_IDLE       seconds to wait before each timed run for an idle machine (under 0.25 cores busy)  0
#   LMP             LAMMPS executable                                                    lmp
#   SHARD           shard executable (default: build/shard, then PATH)
#   MPIEXEC MPIEXEC_FLAGS   MPI launcher and flags                                       mpiexec ""
#   OUT             output folder: inputs, logs, manifest.tsv, results.csv   /tmp/shard-scaling/lammps
#   PYTHON          Python 3                                                             /usr/bin/python3
#
# Columns of OUT/results.csv and of the table: case, ranks, code, model, particles, bonds (sum over particles
# of their partners), steps, loop_time_s (each code's own 'Loop time'), particle_steps_per_s_per_core,
# ratio_shard_over_lammps (Shard's rate / this LAMMPS row's rate), rss_bytes_per_particle (max RSS of every
# rank summed, GNU time, / particles: includes MPI and the libraries), self_bytes_per_particle (LAMMPS: 'Per MPI
# rank memory allocation' avg x ranks; Shard: its 'Peak memory' line), marginal_bytes_per_particle (MARGINAL).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=jobs/lib.sh
. "$HERE/../lib.sh"
# shellcheck source=jobs/lammps_lib.sh
. "$HERE/../lammps_lib.sh"
CASES=${CASES:-"block cylinder"}
MODELS=${MODELS:-"pmb lps"}
RANKS=${RANKS:-"1 2"}
REPEATS=${REPEATS:-1}
NX=${NX:-30}
NY=${NY:-30}
NZ=${NZ:-30}
job_block_defaults
BLOCK_STEPS=${BLOCK_STEPS:-100}
S00=${S00:-1.0}
CYL_REFINE=${CYL_REFINE:-1}
CYL_STEPS=${CYL_STEPS:-1000}
CYL_S00=${CYL_S00:-0.0005}
MARGINAL=${MARGINAL:-1}
OUT=${OUT:-/tmp/shard-scaling/lammps}
WAIT_IDLE=${WAIT_IDLE:-0}
job_need_mpirun

# lsbs_run P PREFIX CMD...: job_mpirun after waiting up to WAIT_IDLE s for an idle machine.
lsbs_run() {
    if [ "$WAIT_IDLE" -gt 0 ]; then
        echo "    (other work: $(job_wait_idle "$WAIT_IDLE") cores busy)" >&2
    fi
    job_mpirun "$@"
}

job_need_seconds WAIT_IDLE
job_need_int NX NY NZ BLOCK_STEPS CYL_REFINE CYL_STEPS REPEATS
job_need_num SPACING SUPPORT RHO E VEL S00 CYL_S00
job_need_rank_list
for c in $CASES; do case $c in block | cylinder) ;; *) job_die "unknown case '$c' (block, cylinder)" ;; esac; done
for m in $MODELS; do case $m in pmb | lps) ;; *) job_die "unknown model '$m' (pmb, lps)" ;; esac; done
# shellcheck disable=SC2086  # MODELS is a list of words
lmp_need $MODELS
job_find_shard
job_out_dir

# ---- one description -> both inputs -----------------------------------------------------------------------
# case_params CASE SCALE: sets the description of CASE (SCALE 1: full size; 2: half size in every dimension).
case_params() {
    local c=$1 h=$2
    if [ "$c" = block ]; then
        A=$SPACING DELTA_S=$SUPPORT DENS=$RHO STEPS_C=$BLOCK_STEPS S00_C=$S00
        read -r KB GS <<<"$(awk -v E="$E" -v nu="$NU" 'BEGIN { printf "%.10g %.10g", E / (3 * (1 - 2 * nu)), E / (2 * (1 + nu)) }')"
        BX=$((NX / h > 0 ? NX / h : 1)) BY=$((NY / h > 0 ? NY / h : 1)) BZ=$((NZ / h > 0 ? NZ / h : 1))
        DT_C=auto
    else
        A=$(awk -v k="$CYL_REFINE" 'BEGIN { printf "%.10g", 0.0005 / k }')
        DELTA_S=3.0002 DENS=2200 KB=14.9e9 GS=14.9e9 STEPS_C=$CYL_STEPS S00_C=$CYL_S00 DT_C=1.0e-7
        # half size: radius and height / 2 (10 k -> 5 k spacings)
        CR=$(awk -v h="$h" 'BEGIN { printf "%.10g", 0.005 / h }')
    fi
    read -r DELTA EM NUM C_PMB CP <<<"$(awk -v K="$KB" -v G="$GS" -v a="$A" -v s="$DELTA_S" -v rho="$DENS" 'BEGIN {
        pi = atan2(0, -1); d = s * a
        E = 9 * K * G / (3 * K + G); nu = (3 * K - 2 * G) / (2 * (3 * K + G))
        c = 18 * K / (pi * d ^ 4)
        cp = sqrt((K + 4 * G / 3) / rho)
        printf "%.10g %.10g %.10g %.10g %.10g", d, E, nu, c, cp }')"
    if [ "$DT_C" = auto ]; then DT_C=$(awk -v a="$A" -v c="$CP" 'BEGIN { printf "%.6e", 0.4 * a / c }'); fi
}

# write_lammps CASE MODEL FILE STEPS: the LAMMPS input of CASE for peri/MODEL.
write_lammps() {
    local c=$1 m=$2 file=$3 steps=$4
    LMP_TITLE="Generated by jobs/scaling/lammps_side_by_side.sh: case $c, peri/$m"
    LMP_A=$A LMP_MODEL=$m LMP_C=$C_PMB LMP_K=$KB LMP_G=$GS LMP_DELTA=$DELTA LMP_S00=$S00_C LMP_ALPHA=0.25
    LMP_RHO=$DENS LMP_DT=$DT_C
    if [ "$c" = block ]; then
        LMP_REGION="block 0 ${BX} 0 ${BY} 0 ${BZ}" LMP_VELOCITY="set ${VEL} 0.0 0.0 sum no units box" LMP_SKIN=0.3
        lmp_peri_input "$file" "$steps"
    else
        LMP_REGION="cylinder y 0.0 0.0 ${CR} -${CR} 0.0 units box" LMP_VELOCITY="set 0.0 0.0 0.0 sum no units box"
        LMP_SKIN=2
        lmp_peri_input "$file" "$steps" "variable        y0 equal 0.00155" "variable        vy equal -100" \
            "variable        y equal \"v_y0 + step*dt*v_vy\"" \
            "fix             2 all indent 1e17 sphere 0.0 v_y 0.0 0.0015 units box"
    fi
}

write_shard() {
    local c=$1 file=$2 steps=$3
    {
        echo "# Generated by jobs/scaling/lammps_side_by_side.sh: case $c (E, nu from K = $KB Pa, G = $GS Pa)"
        echo "run: {steps: ${steps}, dt: ${DT_C}, gravity: [0, 0, 0], output_dir: ${OUT}/shard-out}"
        echo "materials:"
        echo "  m: {density: ${DENS}, E: ${EM}, nu: ${NUM}, contact: {friction: 0}}"
        echo "bodies:"
        echo "  - name: target"
        echo "    material: m"
        if [ "$c" = block ]; then
            echo "    shape: {box: {min: [0, 0, 0], max: [$(awk -v a="$A" -v x="$BX" -v y="$BY" -v z="$BZ" \
                'BEGIN { printf "%.10g, %.10g, %.10g", x * a, y * a, z * a }')]}}"
        else
            echo "    shape: {cylinder: {p0: [0, -${CR}, 0], p1: [0, 0, 0], radius: ${CR}}}"
        fi
        echo "    spacing: ${A}"
        echo "    support: ${DELTA_S}"
        if [ "$c" = block ]; then
            echo "    velocity: [${VEL}, 0, 0]"
        else
            echo "obstacles:"
            echo "  - name: projectile"
            echo "    sphere: {center: [0, 0.00155, 0], radius: 0.0015}"
            echo "    velocity: [0, -100, 0]"
            echo "    friction: 0"
        fi
    } >"$file"
}

# ---- runs ---------------------------------------------------------------------------------------------------
MANIFEST=$OUT/manifest.tsv
printf '# case\tcode\tmodel\tranks\tlog\trss_bytes\n' >"$MANIFEST"
MARG=$OUT/marginal.tsv
printf '# case\tcode\tmodel\tparticles\trss_bytes\n' >"$MARG"
job_load_warning
echo "LAMMPS: $(command -v "$LMP"); Shard: $SHARD; ranks: $RANKS; best of $REPEATS; output: $OUT"
for c in $CASES; do
    case_params "$c" 1
    echo
    echo "Case $c: spacing $A m, horizon = support $DELTA m ($DELTA_S spacings), density $DENS, K $KB Pa, G $GS Pa"
    echo "  -> peri/pmb c = $C_PMB; peri/lps K, G; Shard E = $EM Pa, nu = $NUM; dt $DT_C s, $STEPS_C steps"
    write_shard "$c" "$OUT/$c.yaml" "$STEPS_C"
    for m in $MODELS; do write_lammps "$c" "$m" "$OUT/$c-$m.in" "$STEPS_C"; done
    for ((rep = 1; rep <= REPEATS; rep++)); do
        for P in $RANKS; do
            pre=$OUT/$c-shard-np$P-r$rep
            echo "  shard      np=$P run $rep/$REPEATS ..." >&2
            lsbs_run "$P" "$pre" "$SHARD" run "$OUT/$c.yaml" --quiet
            printf '%s\tshard\tmls\t%s\t%s\t%s\n' "$c" "$P" "$pre.log" "$(job_rss_bytes "$pre" "$P")" >>"$MANIFEST"
            for m in $MODELS; do
                pre=$OUT/$c-lammps-$m-np$P-r$rep
                echo "  lammps $m np=$P run $rep/$REPEATS ..." >&2
                lmp_run "$P" "$pre" "$OUT/$c-$m.in" lsbs_run
                printf '%s\tlammps\t%s\t%s\t%s\t%s\n' "$c" "$m" "$P" "$pre.log" "$(job_rss_bytes "$pre" "$P")" >>"$MANIFEST"
            done
        done
    done
    if [ "$MARGINAL" = 1 ] && [ -n "$TIME_BIN" ]; then
        # Half size, 1 rank, 2 steps: the memory difference to the full-size 1-rank run.
        case_params "$c" 2
        write_shard "$c" "$OUT/$c-half.yaml" 2
        pre=$OUT/$c-half-shard
        echo "  shard      half size, 1 rank (memory) ..." >&2
        job_mpirun 1 "$pre" "$SHARD" run "$OUT/$c-half.yaml" --quiet
        n=$(job_shard_particles "$pre.log")
        printf '%s\tshard\tmls\t%s\t%s\n' "$c" "$n" "$(job_rss_bytes "$pre" 1)" >>"$MARG"
        for m in $MODELS; do
            write_lammps "$c" "$m" "$OUT/$c-$m-half.in" 2
            pre=$OUT/$c-half-lammps-$m
            echo "  lammps $m half size, 1 rank (memory) ..." >&2
            lmp_run 1 "$pre" "$OUT/$c-$m-half.in"
            n=$(lmp_atoms "$pre.log")
            printf '%s\tlammps\t%s\t%s\t%s\n' "$c" "$m" "$n" "$(job_rss_bytes "$pre" 1)" >>"$MARG"
        done
    fi
done

# ---- table --------------------------------------------------------------------------------------------------
echo
marg=()
[ "$MARGINAL" = 1 ] && [ -n "$TIME_BIN" ] && marg=(--marginal "$MARG")
"$PYTHON" "$JOB_SCALING_PY" lammps-table "$MANIFEST" "${marg[@]}" --out "$OUT/results.csv"
echo
echo "RSS B/part: max resident set size of every rank (GNU time) summed, / particles: includes MPI and the libraries."
echo "self B/part: LAMMPS 'Per MPI rank memory allocation' (its own arrays); Shard's 'Peak memory' line (its own RSS)."
echo "marg. B/part: (RSS full size - RSS half size) / (particles full - particles half), 1 rank: memory per particle"
echo "  without the fixed cost of MPI and the libraries."
echo "Bonds: the sum over particles of their partners, as each code reports it (LAMMPS 'total # of bonds', Shard"
echo "  'Bonds:'); equal bonds = the same neighbour families.  Logs, inputs, manifest: $OUT"
