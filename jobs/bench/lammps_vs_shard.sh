#!/usr/bin/env bash
# shellcheck disable=SC2059  # the table format is a variable on purpose
# Shard against LAMMPS's bond-based peridynamics (PERI package, pair_style peri/pmb) on the same problem: a
# simple-cubic block of NX x NY x NZ particles with lattice spacing SPACING, no gravity, no obstacle, a small
# initial velocity, the same time step and the same number of neighbours per particle.
#
#   jobs/bench/lammps_vs_shard.sh                      # defaults below
#   NX=60 NY=60 NZ=56 STEPS=100 RANKS="2" jobs/bench/lammps_vs_shard.sh
#
# Every variable below can be overridden from the environment:
#   NX NY NZ    lattice points along x, y, z (the block spans [0, N*SPACING) on each axis)       50 50 50
#   SPACING     lattice spacing a (m)                                                              0.001
#   SUPPORT     Shard's support radius h in spacings; LAMMPS's horizon delta = SUPPORT * SPACING   2.2
#               (2.2 gives 32 partners in the interior: all lattice vectors with |r|^2 in {1,2,3,4} a^2)
#   STEPS       time steps of the timed run                                                        200
#   RANKS       MPI rank counts to run, space separated                                            "1 2"
#   REPEATS     runs per code and rank count; the fastest is kept                                  3
#   RHO E NU    material: density (kg/m^3), Young's modulus (Pa), Poisson's ratio                  1000 1e9 0.25
#               (bond-based PMB has nu = 1/4 in 3D whatever NU is; NU only sets its bulk modulus)
#   VEL         initial speed scale (m/s): LAMMPS a random Gaussian field with this RMS per         0.01
#               component; Shard a uniform VEL along x plus a spin of VEL / (NX a) about z
#   DT          time step (s) of both codes; "auto": DT_SAFETY * SPACING / c_p (Shard's own rule)   auto
#   DT_SAFETY   safety factor of DT=auto                                                           0.4
#   S00         peri/pmb critical stretch, large so that no bond breaks                            1.0
#   SKIN        LAMMPS neighbour skin in spacings                                                  0.3
#   SEED        LAMMPS velocity seed                                                               12345
#   LMP         LAMMPS executable                                                                  lmp
#   SHARD       shard executable (default: build/shard, /tmp/build-bench/shard, then PATH)
#   MPIEXEC MPIEXEC_FLAGS   MPI launcher and extra flags                                           mpiexec ""
#   OUT         output folder: inputs, logs, per-rank time reports, results.csv       /tmp/shard-bench/lammps_vs_shard
#
# Prints one table (code, ranks, particles, neighbours/particle, loop time, particle-steps/s/core, the ratio
# Shard/LAMMPS, bytes per particle from the max RSS of every rank summed / particles, and each code's own memory
# figure) and writes it to $OUT/results.csv.  Needs GNU time (/usr/bin/time -v) for the RSS column.
set -euo pipefail

# shellcheck source=jobs/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
# shellcheck source=jobs/lammps_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lammps_lib.sh"
NX=${NX:-50}
NY=${NY:-50}
NZ=${NZ:-50}
job_block_defaults
STEPS=${STEPS:-200}
RANKS=${RANKS:-"1 2"}
REPEATS=${REPEATS:-3}
DT_SAFETY=${DT_SAFETY:-0.4}
S00=${S00:-1.0}
SKIN=${SKIN:-0.3}
SEED=${SEED:-12345}
OUT=${OUT:-/tmp/shard-bench/lammps_vs_shard}
job_need_mpirun

# ---- checks -------------------------------------------------------------------------------------------------
job_need_int NX NY NZ STEPS REPEATS SEED
job_need_num SPACING SUPPORT RHO E VEL DT_SAFETY S00 SKIN
job_need_nu
job_need_auto_num DT
job_need_rank_list
lmp_need pmb
job_find_shard /tmp/build-bench
job_out_dir

# ---- derived quantities (awk does the floating point) -------------------------------------------------------
N=$((NX * NY * NZ))
read -r K_BULK DELTA C_PMB CP DT_USED TEMP <<<"$(awk -v E="$E" -v nu="$NU" -v rho="$RHO" -v a="$SPACING" \
    -v s="$SUPPORT" -v dt="$DT" -v sf="$DT_SAFETY" -v vel="$VEL" 'BEGIN {
    pi = atan2(0, -1); kB = 1.380649e-23
    k = E / (3 * (1 - 2 * nu)); delta = s * a
    c = 18 * k / (pi * delta ^ 4)                      # PMB micromodulus from the bulk modulus
    lam = E * nu / ((1 + nu) * (1 - 2 * nu)); mu = E / (2 * (1 + nu))
    cp = sqrt((lam + 2 * mu) / rho)                   # P-wave speed, as in Shard
    if (dt == "auto") dt = sf * a / cp
    m = rho * a ^ 3
    T = m * vel * vel / kB                            # velocity create: RMS per component = sqrt(kB T / m)
    printf "%.10g %.10g %.10g %.10g %.6e %.10g\n", k, delta, c, cp, dt, T }')"

# Partners of an interior lattice point: lattice vectors r != 0 with |r| < SUPPORT (Shard) / |r| <= delta (LAMMPS).
read -r INTERIOR ONSPHERE <<<"$(awk -v s="$SUPPORT" 'BEGIN {
    R = int(s) + 1; n = 0; on = 0
    for (i = -R; i <= R; i++) for (j = -R; j <= R; j++) for (k = -R; k <= R; k++) {
        r2 = i * i + j * j + k * k
        if (r2 == 0) continue
        if (sqrt(r2) < s - 1e-9) n++; else if (sqrt(r2) <= s + 1e-9) on++
    }
    print n, on }')"
[ "$ONSPHERE" = 0 ] || echo "warning: $ONSPHERE lattice vectors lie on the horizon |r| = SUPPORT; Shard (|r| < h) and LAMMPS (|r| <= delta) may then count them differently" >&2

# PMB stability (explicit bond sum of an interior point): dt_crit = sqrt(2 rho / sum_j c V_j / |xi_j|).
DT_PMB=$(awk -v s="$SUPPORT" -v a="$SPACING" -v c="$C_PMB" -v rho="$RHO" 'BEGIN {
    R = int(s) + 1; sum = 0
    for (i = -R; i <= R; i++) for (j = -R; j <= R; j++) for (k = -R; k <= R; k++) {
        r2 = i * i + j * j + k * k
        if (r2 > 0 && sqrt(r2) < s) sum += c * a ^ 3 / (sqrt(r2) * a)
    }
    printf "%.4e", sqrt(2 * rho / sum) }')
if awk -v d="$DT_USED" -v c="$DT_PMB" 'BEGIN { exit !(d > c) }'; then
    echo "warning: DT=$DT_USED exceeds the PMB stability limit $DT_PMB; LAMMPS may blow up" >&2
fi

# ---- inputs -------------------------------------------------------------------------------------------------
LMP_TITLE="Generated by jobs/bench/lammps_vs_shard.sh: ${NX} x ${NY} x ${NZ} simple-cubic block, a = ${SPACING} m.
horizon delta = ${SUPPORT} a; c = 18 k / (pi delta^4) with k = E / (3 (1 - 2 nu)) = ${K_BULK} Pa"
LMP_A=$SPACING LMP_REGION="block 0 ${NX} 0 ${NY} 0 ${NZ}" LMP_MODEL=pmb LMP_C=$C_PMB LMP_DELTA=$DELTA LMP_S00=$S00
LMP_ALPHA=0.0 LMP_RHO=$RHO LMP_VELOCITY="create ${TEMP} ${SEED} dist gaussian loop geom" LMP_SKIN=$SKIN LMP_DT=$DT_USED
LMP_IN=$OUT/in.pmb
lmp_peri_input "$LMP_IN" "$STEPS" "neigh_modify    every 1 delay 0 check yes" "thermo_style    custom step temp ke"
# A separate, untimed run: compute coord/atom needs a full neighbour list, which would inflate the timed run's
# memory.  It counts neighbours within the horizon, the same distance test as the bond family.
LMP_CHECK=$OUT/in.pmb-check
lmp_peri_input "$LMP_CHECK" 0 "neigh_modify    every 1 delay 0 check yes" \
    "compute         nb all coord/atom cutoff ${DELTA}" "compute         nbave all reduce ave c_nb" \
    "compute         nbmax all reduce max c_nb" "thermo_style    custom step c_nbave c_nbmax"

SCENE=$OUT/block.yaml
job_block_scene "$SCENE" "$NX" "$NY" "$NZ" "$STEPS" "$DT_USED" "$OUT/shard-out" jobs/bench/lammps_vs_shard.sh

echo "Block ${NX} x ${NY} x ${NZ} = ${N} particles, a = ${SPACING} m, h = delta = ${DELTA} m (${SUPPORT} a): ${INTERIOR} partners per interior particle"
echo "Material: rho ${RHO} kg/m^3, E ${E} Pa, nu ${NU}; bulk modulus ${K_BULK} Pa -> peri/pmb c = ${C_PMB}"
echo "Time step ${DT_USED} s (c_p = ${CP} m/s; PMB stability limit ${DT_PMB} s), ${STEPS} steps; ranks: ${RANKS}; best of ${REPEATS}"
echo "LAMMPS: $(command -v "$LMP") ($(sed -n 's/^Large-scale.*Simulator - //p' <<<"$LMP_HELP" | head -n 1))"
echo "Shard:  ${SHARD}"
echo "Inputs: ${LMP_IN} (neighbour check: ${LMP_CHECK}) ${SCENE}"
echo

# ---- runs ---------------------------------------------------------------------------------------------------
# results[code,P] = "loop particles neigh rss self"
job_load_warning

# results RES[code,P] = "loop particles neigh rss self"; repetitions outermost, so that both codes and every
# rank count see the same spells of background load.
declare -A RES BEST
LMP_BONDS='' SHARD_BONDS=''
echo "  lammps neighbour check (run 0, 1 rank) ..." >&2
lmp_run 1 "$OUT/lammps-check" "$LMP_CHECK"
read -r LMP_NB_AVE LMP_NB_MAX <<<"$(awk '/^ *Step +c_nbave/ {getline; print $2, $3; exit}' "$OUT/lammps-check.log")"
[ -n "$LMP_NB_MAX" ] || job_die "no coord/atom figures in $OUT/lammps-check.log"
for P in $RANKS; do [ "$P" -le "$N" ] || job_die "RANKS: $P ranks for $N particles"; done
for ((rep = 1; rep <= REPEATS; rep++)); do
    for P in $RANKS; do
        # LAMMPS
        pre=$OUT/lammps-np$P-r$rep
        echo "  lammps np=$P run $rep/$REPEATS ..." >&2
        lmp_run "$P" "$pre" "$LMP_IN"
        t=$(lmp_loop_time "$pre.log" "$N")
        if job_faster "$t" "${RES[lammps,$P]:-}"; then
            BEST[lammps,$P]=$pre
            nb=$(lmp_neigh "$pre.log")
            self=$(lmp_self_bytes "$pre.log" "$P" "$N")
            rss=$(job_rss_bytes "$pre" "$P")
            RES[lammps,$P]="$t $N $nb $rss $self"
        fi
        [ -n "$LMP_BONDS" ] || LMP_BONDS=$(lmp_bonds "$pre.log")

        # Shard
        pre=$OUT/shard-np$P-r$rep
        echo "  shard  np=$P run $rep/$REPEATS ..." >&2
        job_mpirun "$P" "$pre" "$SHARD" run "$SCENE" --quiet
        t=$(job_shard_loop_time "$pre.log" "$N")
        if job_faster "$t" "${RES[shard,$P]:-}"; then
            BEST[shard,$P]=$pre
            nb=$(job_shard_neigh "$pre.log")
            self=$(job_shard_self "$pre.log")
            rss=$(job_rss_bytes "$pre" "$P")
            RES[shard,$P]="$t $N $nb $rss $self"
        fi
        [ -n "$SHARD_BONDS" ] || SHARD_BONDS=$(job_shard_bonds "$pre.log")
    done
done
for P in $RANKS; do
    cp "${BEST[lammps,$P]}.log" "$OUT/lammps-np$P-best.log"
    cp "${BEST[shard,$P]}.log" "$OUT/shard-np$P-best.log"
done

# ---- table --------------------------------------------------------------------------------------------------
CSV=$OUT/results.csv
echo "code,ranks,particles,neighbours_per_particle,steps,loop_time_s,particle_steps_per_s_per_core,ratio_shard_over_lammps,rss_bytes_per_particle,self_reported_bytes_per_particle" >"$CSV"
fmt="%-6s | %5s | %9s | %10s | %10s | %18s | %12s | %14s | %14s\n"
echo
echo "Block ${NX}x${NY}x${NZ}, ${STEPS} steps, dt ${DT_USED} s, best of ${REPEATS}"
job_table_head "$fmt" code ranks particles neigh/part "loop (s)" "part-steps/s/core" "Shard/LAMMPS" "RSS B/part" "self B/part"
for P in $RANKS; do
    read -r tl nl nbl rssl selfl <<<"${RES[lammps,$P]}"
    read -r ts ns nbs rsss selfs <<<"${RES[shard,$P]}"
    psl=$(awk -v n="$nl" -v s="$STEPS" -v t="$tl" -v p="$P" 'BEGIN { printf "%.4g", n * s / t / p }')
    pss=$(awk -v n="$ns" -v s="$STEPS" -v t="$ts" -v p="$P" 'BEGIN { printf "%.4g", n * s / t / p }')
    ratio=$(awk -v a="$pss" -v b="$psl" 'BEGIN { printf "%.3f", a / b }')
    bpl=$(job_per_particle "$rssl" "$nl")
    bps=$(job_per_particle "$rsss" "$ns")
    printf "$fmt" lammps "$P" "$nl" "$nbl" "$tl" "$psl" "-" "$bpl" "$selfl"
    printf "$fmt" shard "$P" "$ns" "$nbs" "$ts" "$pss" "$ratio" "$bps" "$selfs"
    echo "lammps,$P,$nl,$nbl,$STEPS,$tl,$psl,,$bpl,$selfl" >>"$CSV"
    echo "shard,$P,$ns,$nbs,$STEPS,$ts,$pss,$ratio,$bps,$selfs" >>"$CSV"
done
echo
echo "RSS B/part: max resident set size of every rank (GNU time) summed, / particles (includes MPI and libraries)."
echo "self B/part: LAMMPS 'Per MPI rank memory allocation' avg x ranks (its own arrays only); Shard's 'Peak memory' line (getrusage max RSS)."
echo "Neighbour check: interior partners by lattice count ${INTERIOR}; LAMMPS coord/atom within delta: max ${LMP_NB_MAX:-?}, mean ${LMP_NB_AVE:-?};"
if [ "$LMP_BONDS" = "$SHARD_BONDS" ]; then
    echo "  bond totals: LAMMPS ${LMP_BONDS}, Shard ${SHARD_BONDS}: identical neighbour families."
else
    echo "  bond totals: LAMMPS ${LMP_BONDS}, Shard ${SHARD_BONDS}: DIFFERENT neighbour families (the comparison is not like for like)."
fi
echo "CSV: $CSV; logs and per-rank time reports: $OUT"
