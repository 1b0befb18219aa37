#!/usr/bin/env bash
# Fragmentation statistics: a brittle sphere (R = 50 mm; glass-like, E = 72 GPa, nu = 0.22, rho = 2440 kg/m^3,
# tensile strength 50 MPa with a Weibull scatter of modulus 8) hits a rigid plane at each speed of VS (default
# 30, 40 and 60 m/s: from a few cracks to shattering) and breaks; the report's fragment line and fragments.csv
# give the number of fragments, the largest one's share of the mass and the exponent tau of n(m) ~ m^-tau
# (maximum likelihood over the fragments of at least FIT_MIN particles, the largest left out); the table also
# counts the single-particle fragments and those of at least FIT_MIN particles.  The 3D brittle-fragmentation literature finds tau = 1.6-1.7 for bulk
# fragmentation (e.g. Timar, Kun, Carmona & Herrmann 2010, PRE 81 0161xx; Kun & Herrmann 1996): the job prints
# what it finds at each resolution, and when the distribution has too few fragments to fit, says so.
#
#   jobs/validation/fragmentation.sh                       # R/spacing = 10 and 15, 2 ranks
#   DIVS="8 12" VS=150 jobs/validation/fragmentation.sh
#   DIVS=25 VS="16 21" STAB=1 FRACTURE="{energy_release_rate: 200}" jobs/validation/fragmentation.sh
#
# Variables: DIVS (R / spacing, "10 15"), VS (m/s, "30 40 60"), FIT_MIN (3), RANKS (2), T_END (s, 4e-4),
# FRACTURE (the material's fracture mapping, default the strength above), STAB (its stabilization; default the
# material default, 0.1 with fracture), OUT (/tmp/shard-validation/fragmentation), RESULTS (the table's file,
# jobs/validation/results/fragmentation.txt), SHARD.  Writes the scenes and runs under OUT and a table on stdout
# and in RESULTS.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=jobs/lib.sh
. "$here/../lib.sh"
DIVS=${DIVS:-"10 15"}
VS=${VS:-"30 40 60"}
FIT_MIN=${FIT_MIN:-3}
RANKS=${RANKS:-2}
T_END=${T_END:-4e-4}
OUT=${OUT:-/tmp/shard-validation/fragmentation}
FRACTURE=${FRACTURE:-$JOB_SHATTER_FRACTURE}
STAB=${STAB:-}
job_need_int RANKS FIT_MIN
job_need_num T_END
job_need_mpirun
job_find_shard
job_out_dir
mkdir -p "$here/results"
res=${RESULTS:-$here/results/fragmentation.txt}
{
  echo "Fragmentation of a brittle sphere (R = 0.05 m) hitting a plane, $T_END s after contact; tau fitted over fragments of >= $FIT_MIN particles"
  echo "fracture: $FRACTURE; stabilization: ${STAB:-the default}"
  printf '%-6s %6s %10s %8s %9s %10s %9s %9s %10s %8s %8s\n' "R/s" "V_m/s" particles steps broken% fragments singles ">=fit" largest tau tau_err
} | tee "$res"
for d in $DIVS; do
  job_is_int "$d" || job_die "DIVS must hold positive integers, got '$d'"
  for V in $VS; do
  job_is_num "$V" || job_die "VS must hold speeds in m/s, got '$V'"
  scene=$OUT/sphere_${d}_$V.yaml
  job_shatter_scene "$scene" "$d" "$V" "$T_END" jobs/validation/fragmentation.sh \
    "fragments: {fit_min: $FIT_MIN}
output: {every_time: $(awk -v t="$T_END" 'BEGIN { printf "%.6g", t / 8 }'), fields: [damage, fragment]}" \
    "$FRACTURE" "$STAB"
  run=$OUT/run_${d}_$V
  rm -rf "$run"
  job_mpirun "$RANKS" "$run" "$SHARD" run "$scene" --out "$run" --quiet
  log=$run.log
  line=$(grep '^Fracture:' "$log")
  n=$(job_shard_particles "$log")
  steps=$(sed -n 's/^Loop time of .* for \([0-9]*\) steps.*/\1/p' "$log")
  broken=$(printf '%s\n' "$line" | sed -n 's/^Fracture: \([0-9]*\) of.*/\1/p')
  frags=$(printf '%s\n' "$line" | sed -n 's/.*; \([0-9]*\) fragment(s).*/\1/p')
  largest=$(printf '%s\n' "$line" | sed -n 's/.*the largest \([0-9.e+-]*\) of the mass.*/\1/p')
  tau=$(printf '%s\n' "$line" | sed -n 's/.*tau \([0-9.e+-]*\) +- \([0-9.e+-]*\) (\([0-9]*\) fragments.*/\1 \2 \3/p')
  read -r t te nf <<< "${tau:-nan nan 0}"
  total=$(printf '%s\n' "$line" | sed -n 's/^Fracture: [0-9]* of \([0-9]*\) bonds.*/\1/p')
  pct=$(awk -v b="$broken" -v t="$total" 'BEGIN { printf "%.1f", 100 * b / t }')
  # the first bin of the last step's histogram holds the fragments of one particle (all particles weigh m0)
  singles=$(awk -F, 'NR > 1 { if ($1 != s) { s = $1; first = $5 } } END { print first + 0 }' "$run/fragments_histogram.csv")
  printf '%-6s %6s %10s %8s %9s %10s %9s %9s %10s %8s %8s\n' "$d" "$V" "$n" "$steps" "$pct" "$frags" "$singles" "$nf" \
    "$largest" "$t" "$te" | tee -a "$res"
  done
done
echo "Runs: $OUT/run_*; the history of each in its fragments.csv (plots: jobs/fragments/plot.py DIR)"
