#!/usr/bin/env bash
# Crack speed and branching in a glass plate (the set-up of Ha & Bobaru 2010, Int. J. Fract. 162, 229): a plate
# 100 x 40 mm with a 50 mm pre-crack from the middle of its left edge, both long edges pulled by a step traction
# of SIGMA (2 MPa) from t = 0; soda-lime glass, E = 72 GPa, nu = 0.22, rho = 2440 kg/m^3, G_c = 3.8 J/m^2
# (energy_release_rate).  The crack must never run faster than the Rayleigh wave speed c_R (3172 m/s here, from
# the Rayleigh equation), and it branches (in the experiments and in Ha & Bobaru's models, at about 20 mm from
# the pre-crack's tip, at 1600-1700 m/s).  The plate is LAYERS lattice layers thick (plane stress).
#
#   jobs/validation/crack_speed.sh                      # spacings 0.5 and 0.4 mm, 2 ranks
#   SPACINGS="0.8" RANKS=1 jobs/validation/crack_speed.sh
#
# Variables: SPACINGS (mm, "0.5 0.4"), LAYERS (3), SIGMA (Pa, 2e6), T_END (s, 4.6e-5), STABILIZATION (empty:
# Shard's default for breaking materials), RANKS (2), OUT (/tmp/shard-validation/crack_speed), SHARD, PYTHON.
# crack_speed.py measures the tip (the damaged particle farthest along x, damage > 0.35) at every output, its
# speed over windows of 2 us, and the branching (two damaged bands at least 4 spacings apart across the plate
# at one x); the table goes to stdout and to jobs/validation/results/crack_speed.txt.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=jobs/lib.sh
. "$here/../lib.sh"
SPACINGS=${SPACINGS:-"0.5 0.4"}
LAYERS=${LAYERS:-3}
SIGMA=${SIGMA:-2e6}
T_END=${T_END:-4.6e-5}
STABILIZATION=${STABILIZATION-}
RANKS=${RANKS:-2}
OUT=${OUT:-/tmp/shard-validation/crack_speed}
job_need_int RANKS LAYERS
job_need_num SIGMA T_END
job_need_mpirun
job_find_shard
job_out_dir
"$SHARD" --version | grep -q "HDF5: not built in" && job_die "$SHARD was built without HDF5"
"$PYTHON" -c 'import h5py, numpy' 2>/dev/null || job_die "$PYTHON has no h5py/numpy: apt-get install python3-h5py python3-numpy"
mkdir -p "$here/results"
args=()
for mm in $SPACINGS; do
  job_is_num "$mm" || job_die "SPACINGS must hold numbers of mm, got '$mm'"
  read -r s T top bot every < <(awk -v mm="$mm" -v L="$LAYERS" -v te="$T_END" 'BEGIN {
    s = mm / 1000; c = sqrt(72e9 * 0.78 / (1.22 * 0.56 * 2440)); dt = 0.4 * s / c
    every = int(1e-6 / dt + 0.5); if (every < 1) every = 1
    printf "%.10g %.10g %.10g %.10g %d\n", s, L * s, 0.02 - s, -0.02 + s, every }')
  stab=""
  [ -z "$STABILIZATION" ] || stab="    stabilization: $STABILIZATION"
  scene=$OUT/crack_speed_$mm.yaml
  cat > "$scene" <<EOF
# Crack branching in glass (written by jobs/validation/crack_speed.sh), spacing $mm mm
run:
  end_time: $T_END
  gravity: [0, 0, 0]
materials:
  glass:
    density: 2440
    E: 72e9
    nu: 0.22
$stab
    fracture: {energy_release_rate: 3.8}
bodies:
  - name: plate
    material: glass
    shape: {box: {min: [0, -0.02, 0], max: [0.1, 0.02, $T]}}
    spacing: $s
    notches:
      - {min: [-1, 0, -1], max: [0.05, 0, 1]}
    tractions:
      - {region: {box: {min: [-1, $top, -1], max: [1, 1, 1]}}, stress: [0, $SIGMA, 0]}
      - {region: {box: {min: [-1, -1, -1], max: [1, $bot, 1]}}, stress: [0, -$SIGMA, 0]}
output: {every: $every, fields: [damage]}
EOF
  sed -i '/^$/d' "$scene"
  rm -rf "$OUT/run_$mm"
  t0=$(date +%s)
  job_mpirun "$RANKS" "$OUT/run_$mm" "$SHARD" run "$scene" --out "$OUT/run_$mm" --quiet
  echo "spacing $mm mm: $(job_shard_particles "$OUT/run_$mm.log") particles, $(( $(date +%s) - t0 )) s on $RANKS rank(s)"
  args+=("$mm" "$OUT/run_$mm")
done
"$PYTHON" "$here/crack_speed.py" "${args[@]}" | tee "$here/results/crack_speed.txt"
