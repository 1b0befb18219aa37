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

NX=${NX:-50}
NY=${NY:-50}
NZ=${NZ:-50}
SPACING=${SPACING:-0.001}
SUPPORT=${SUPPORT:-2.2}
STEPS=${STEPS:-200}
RANKS=${RANKS:-"1 2"}
REPEATS=${REPEATS:-3}
RHO=${RHO:-1000}
E=${E:-1.0e9}
NU=${NU:-0.25}
VEL=${VEL:-0.01}
DT=${DT:-auto}
DT_SAFETY=${DT_SAFETY:-0.4}
S00=${S00:-1.0}
SKIN=${SKIN:-0.3}
SEED=${SEED:-12345}
LMP=${LMP:-lmp}
OUT=${OUT:-/tmp/shard-bench/lammps_vs_shard}

# shellcheck source=jobs/bench/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=jobs/bench/block_scene.sh
. "$(dirname "${BASH_SOURCE[0]}")/block_scene.sh"

# ---- checks -------------------------------------------------------------------------------------------------
is_int() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }
is_num() { awk -v x="$1" 'BEGIN { exit !(x ~ /^[+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ && x + 0 > 0) }'; }
for v in NX NY NZ STEPS REPEATS SEED; do is_int "${!v}" || bench_die "$v must be a positive integer, got '${!v}'"; done
for v in SPACING SUPPORT RHO E VEL DT_SAFETY S00 SKIN; do is_num "${!v}" || bench_die "$v must be a number > 0, got '${!v}'"; done
awk -v x="$NU" 'BEGIN { exit !(x ~ /^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$/ && x > -1 && x < 0.5) }' || bench_die "NU must be in (-1, 0.5), got '$NU'"
[ "$DT" = auto ] || is_num "$DT" || bench_die "DT must be 'auto' or a number > 0, got '$DT'"
[ -n "${RANKS// /}" ] || bench_die "RANKS is empty"
for p in $RANKS; do is_int "$p" || bench_die "RANKS must hold positive integers, got '$p'"; done
command -v "$LMP" >/dev/null 2>&1 || bench_die "LAMMPS executable '$LMP' not found (apt-get install lammps, or set LMP)"
LMP_HELP=$("$LMP" -h 2>/dev/null || true)
grep -qw 'peri/pmb' <<<"$LMP_HELP" || bench_die "'$LMP' has no pair_style peri/pmb (needs the PERI package)"
bench_find_shard
mkdir -p "$OUT" || bench_die "cannot create OUT=$OUT"
OUT=$(cd "$OUT" && pwd)

# ---- derived quantities (awk does the floating point) -------------------------------------------------------
N=$((NX * NY * NZ))
read -r K_BULK DELTA C_PMB CP DT_USED TEMP VOL OMEGA <<<"$(awk -v E="$E" -v nu="$NU" -v rho="$RHO" -v a="$SPACING" \
    -v s="$SUPPORT" -v dt="$DT" -v sf="$DT_SAFETY" -v vel="$VEL" -v nx="$NX" 'BEGIN {
    pi = atan2(0, -1); kB = 1.380649e-23
    k = E / (3 * (1 - 2 * nu)); delta = s * a
    c = 18 * k / (pi * delta ^ 4)                      # PMB micromodulus from the bulk modulus
    lam = E * nu / ((1 + nu) * (1 - 2 * nu)); mu = E / (2 * (1 + nu))
    cp = sqrt((lam + 2 * mu) / rho)                   # P-wave speed, as in Shard
    if (dt == "auto") dt = sf * a / cp
    m = rho * a ^ 3
    T = m * vel * vel / kB                            # velocity create: RMS per component = sqrt(kB T / m)
    printf "%.10g %.10g %.10g %.10g %.6e %.10g %.10g %.10g\n", k, delta, c, cp, dt, T, a ^ 3, vel / (nx * a) }')"

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
LMP_SETUP=$(cat <<EOF
# Generated by jobs/bench/lammps_vs_shard.sh: ${NX} x ${NY} x ${NZ} simple-cubic block, a = ${SPACING} m.
units           si
boundary        s s s
atom_style      peri
atom_modify     map array
# origin 0.5: lattice points at (i + 1/2) a, i = 0 .. N-1, exactly where Shard samples the box [0, N a)
lattice         sc ${SPACING} origin 0.5 0.5 0.5
region          block block 0 ${NX} 0 ${NY} 0 ${NZ}
create_box      1 block
create_atoms    1 region block

# horizon delta = ${SUPPORT} a; c = 18 k / (pi delta^4) with k = E / (3 (1 - 2 nu)) = ${K_BULK} Pa
pair_style      peri/pmb
pair_coeff      * * ${C_PMB} ${DELTA} ${S00} 0.0
set             group all density ${RHO}
set             group all volume ${VOL}
velocity        all create ${TEMP} ${SEED} dist gaussian loop geom
neighbor        $(awk -v s="$SKIN" -v a="$SPACING" 'BEGIN { printf "%.10g", s * a }') bin
neigh_modify    every 1 delay 0 check yes
fix             1 all nve
timestep        ${DT_USED}
EOF
)
LMP_IN=$OUT/in.pmb
cat >"$LMP_IN" <<EOF
${LMP_SETUP}

thermo_style    custom step temp ke
thermo          ${STEPS}
run             ${STEPS}
EOF
# A separate, untimed run: compute coord/atom needs a full neighbour list, which would inflate the timed run's
# memory.  It counts neighbours within the horizon, the same distance test as the bond family.
LMP_CHECK=$OUT/in.pmb-check
cat >"$LMP_CHECK" <<EOF
${LMP_SETUP}

compute         nb all coord/atom cutoff ${DELTA}
compute         nbave all reduce ave c_nb
compute         nbmax all reduce max c_nb
thermo_style    custom step c_nbave c_nbmax
run             0
EOF

SCENE=$OUT/block.yaml
shard_block_scene "$SCENE" "$NX" "$NY" "$NZ" "$STEPS" "$DT_USED" "$OUT/shard-out" jobs/bench/lammps_vs_shard.sh

echo "Block ${NX} x ${NY} x ${NZ} = ${N} particles, a = ${SPACING} m, h = delta = ${DELTA} m (${SUPPORT} a): ${INTERIOR} partners per interior particle"
echo "Material: rho ${RHO} kg/m^3, E ${E} Pa, nu ${NU}; bulk modulus ${K_BULK} Pa -> peri/pmb c = ${C_PMB}"
echo "Time step ${DT_USED} s (c_p = ${CP} m/s; PMB stability limit ${DT_PMB} s), ${STEPS} steps; ranks: ${RANKS}; best of ${REPEATS}"
echo "LAMMPS: $(command -v "$LMP") ($(sed -n 's/^Large-scale.*Simulator - //p' <<<"$LMP_HELP" | head -n 1))"
echo "Shard:  ${SHARD}"
echo "Inputs: ${LMP_IN} (neighbour check: ${LMP_CHECK}) ${SCENE}"
echo

# ---- runs ---------------------------------------------------------------------------------------------------
# results[code,P] = "loop particles neigh rss self"
bench_load_warning

# results RES[code,P] = "loop particles neigh rss self"; repetitions outermost, so that both codes and every
# rank count see the same spells of background load.
declare -A RES BEST
LMP_BONDS='' SHARD_BONDS=''
echo "  lammps neighbour check (run 0, 1 rank) ..." >&2
(cd "$OUT" && bench_mpirun 1 "$OUT/lammps-check" "$LMP" -in "$LMP_CHECK" -log none -echo none)
read -r LMP_NB_AVE LMP_NB_MAX <<<"$(awk '/^ *Step +c_nbave/ {getline; print $2, $3; exit}' "$OUT/lammps-check.log")"
[ -n "$LMP_NB_MAX" ] || bench_die "no coord/atom figures in $OUT/lammps-check.log"
for P in $RANKS; do [ "$P" -le "$N" ] || bench_die "RANKS: $P ranks for $N particles"; done
for ((rep = 1; rep <= REPEATS; rep++)); do
    for P in $RANKS; do
        # LAMMPS
        pre=$OUT/lammps-np$P-r$rep
        echo "  lammps np=$P run $rep/$REPEATS ..." >&2
        (cd "$OUT" && bench_mpirun "$P" "$pre" "$LMP" -in "$LMP_IN" -log none -echo none)
        grep -q '^Loop time of' "$pre.log" || bench_die "no 'Loop time' line in $pre.log"
        t=$(bench_field "$pre.log" '^Loop time of' 4)
        [ "$(bench_field "$pre.log" '^Loop time of' 12)" = "$N" ] || bench_die "LAMMPS made $(bench_field "$pre.log" '^Loop time of' 12) atoms, expected $N ($pre.log)"
        if [ -z "${BEST[lammps,$P]:-}" ] || awk -v a="$t" -v b="${RES[lammps,$P]%% *}" 'BEGIN { exit !(a < b) }'; then
            BEST[lammps,$P]=$pre
            nb=$(bench_field "$pre.log" 'bonds\/atom =' 3)
            selfmb=$(bench_field "$pre.log" '^Per MPI rank memory allocation' 10)
            self=$(awk -v m="$selfmb" -v p="$P" -v n="$N" 'BEGIN { printf "%.0f", m * 1048576 * p / n }')
            RES[lammps,$P]="$t $N $nb $(bench_rss_bytes "$pre" "$P") $self"
        fi
        [ -n "$LMP_BONDS" ] || LMP_BONDS=$(bench_field "$pre.log" 'total # of bonds =' 6)

        # Shard
        pre=$OUT/shard-np$P-r$rep
        echo "  shard  np=$P run $rep/$REPEATS ..." >&2
        bench_mpirun "$P" "$pre" "$SHARD" run "$SCENE" --quiet
        grep -q '^Loop time of' "$pre.log" || bench_die "no 'Loop time' line in $pre.log"
        t=$(bench_field "$pre.log" '^Loop time of' 4)
        [ "$(bench_field "$pre.log" '^Loop time of' 13)" = "$N" ] || bench_die "Shard made $(bench_field "$pre.log" '^Loop time of' 13) particles, expected $N ($pre.log)"
        if [ -z "${BEST[shard,$P]:-}" ] || awk -v a="$t" -v b="${RES[shard,$P]%% *}" 'BEGIN { exit !(a < b) }'; then
            BEST[shard,$P]=$pre
            nb=$(bench_field "$pre.log" '^Bonds:' 3 | tr -d '(')
            self=$(sed -n 's/^Peak memory per rank:.*(\([0-9.]*\) bytes per particle.*/\1/p' "$pre.log")
            RES[shard,$P]="$t $N $nb $(bench_rss_bytes "$pre" "$P") ${self:-n/a}"
        fi
        [ -n "$SHARD_BONDS" ] || SHARD_BONDS=$(bench_field "$pre.log" '^Bonds:' 2)
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
printf "$fmt" code ranks particles neigh/part "loop (s)" "part-steps/s/core" "Shard/LAMMPS" "RSS B/part" "self B/part"
printf "$fmt" ------ ----- --------- ---------- ---------- ------------------ ------------ -------------- -------------- | tr ' ' '-' | sed 's/-|-/-+-/g'
for P in $RANKS; do
    read -r tl nl nbl rssl selfl <<<"${RES[lammps,$P]}"
    read -r ts ns nbs rsss selfs <<<"${RES[shard,$P]}"
    psl=$(awk -v n="$nl" -v s="$STEPS" -v t="$tl" -v p="$P" 'BEGIN { printf "%.4g", n * s / t / p }')
    pss=$(awk -v n="$ns" -v s="$STEPS" -v t="$ts" -v p="$P" 'BEGIN { printf "%.4g", n * s / t / p }')
    ratio=$(awk -v a="$pss" -v b="$psl" 'BEGIN { printf "%.3f", a / b }')
    if [ "$rssl" = n/a ]; then bpl=n/a; else bpl=$(awk -v r="$rssl" -v n="$nl" 'BEGIN { printf "%.0f", r / n }'); fi
    if [ "$rsss" = n/a ]; then bps=n/a; else bps=$(awk -v r="$rsss" -v n="$ns" 'BEGIN { printf "%.0f", r / n }'); fi
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
