#!/usr/bin/env bash
# Griffith: a plate with a central crack under slowly increased tension breaks at
#   sigma_c = sqrt(E G_c / (pi a)) / sqrt(sec(pi a / W))
# (Griffith 1921; the secant factor is Feddersen's finite-width correction, 0.975 here).  The plate is
# W x W x T (W = 0.1 m, T = 3 spacings), the crack a flat notch of length 2a = 0.02 m through the thickness at
# mid-height; E = 72 GPa, nu = 0 (so that plane stress and plane strain give the same sigma_c, and the grips,
# which hold the edge layers' lateral motion, concentrate nothing), rho = 2440 kg/m^3, G_c = 3.8 J/m^2 (soda-lime
# glass; the material's energy_release_rate, turned into a critical stretch by Silling & Askari's relation).
# The top and bottom layers are pulled apart at +-V, so the far-field stress rises by E 2V/W per second,
# reaching sigma_c in about 20 wave transits of the plate.  The far-field stress is the mean sigma_yy of two
# full-width bands (y in [0.02, 0.03] and [0.07, 0.08] m) of the output; initiation is the first output with a
# broken bond, propagation the first output with more broken bonds than GROW x the crack front's particles.
#
#   jobs/validation/griffith.sh                   # the two spacings 2 and 1.25 mm, 2 ranks
#   SPACINGS="2" RANKS=1 jobs/validation/griffith.sh
#
# Variables: SPACINGS (mm, "2 1.25"), RANKS (2), GROW (3), OUT (/tmp/shard-validation/griffith), SHARD, PYTHON.
# Writes OUT/griffith_<spacing>.yaml, the runs' output folders and logs, and a table on stdout and in
# jobs/validation/results/griffith.txt.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=jobs/lib.sh
. "$here/../lib.sh"
SPACINGS=${SPACINGS:-"2 1.25"}
RANKS=${RANKS:-2}
GROW=${GROW:-3}
OUT=${OUT:-/tmp/shard-validation/griffith}
job_need_int RANKS GROW
job_need_mpirun
job_find_shard
job_out_dir
"$SHARD" --version | grep -q "HDF5: not built in" && job_die "$SHARD was built without HDF5"
"$PYTHON" -c 'import h5py, numpy' 2>/dev/null || job_die "$PYTHON has no h5py/numpy: apt-get install python3-h5py python3-numpy"

W=0.1 A=0.01 E=72e9 RHO=2440 GC=3.8
for mm in $SPACINGS; do
  job_is_num "$mm" || job_die "SPACINGS must hold numbers of mm, got '$mm'"
  read -r s T v t_end every < <(awk -v mm="$mm" -v W="$W" -v A="$A" -v E="$E" -v rho="$RHO" -v G="$GC" 'BEGIN {
    pi = atan2(0, -1); s = mm / 1000; T = 3 * s
    sc = sqrt(E * G / (pi * A)) / sqrt(1 / cos(pi * A / W))
    c = sqrt(E / rho); tr = W / c                      # one wave transit of the plate
    tf = 20 * tr; v = sc / E * W / (2 * tf)            # sigma_c reached at tf
    dt = 0.4 * s / c                                   # the CFL step (nu = 0: c_p = c0)
    every = int(tf / dt / 60); if (every < 1) every = 1
    printf "%.10g %.10g %.10g %.10g %d\n", s, T, v, 2.2 * tf, every }')
  scene=$OUT/griffith_$mm.yaml
  cat > "$scene" <<EOF
# Griffith plate, spacing $mm mm (written by jobs/validation/griffith.sh)
run:
  end_time: $t_end
  gravity: [0, 0, 0]
materials:
  glass:
    density: $RHO
    E: $E
    nu: 0
    fracture: {energy_release_rate: $GC}
bodies:
  - name: plate
    material: glass
    shape: {box: {min: [0, 0, 0], max: [$W, $W, $T]}}
    spacing: $s
    notches:
      - {min: [$(awk -v W="$W" -v A="$A" 'BEGIN { print W / 2 - A }'), $(awk -v W="$W" 'BEGIN { print W / 2 }'), -1], max: [$(awk -v W="$W" -v A="$A" 'BEGIN { print W / 2 + A }'), $(awk -v W="$W" 'BEGIN { print W / 2 }'), 1]}
    prescribed:
      - {region: {box: {min: [-1, -1, -1], max: [1, $s, 1]}}, velocity: [0, -$v, 0]}
      - {region: {box: {min: [-1, $(awk -v W="$W" -v s="$s" 'BEGIN { printf "%.10g", W - s }'), -1], max: [1, 1, 1]}}, velocity: [0, $v, 0]}
output: {every: $every, fields: [stress, damage]}
EOF
  rm -rf "$OUT/run_$mm"
  t0=$(date +%s)
  job_mpirun "$RANKS" "$OUT/run_$mm" "$SHARD" run "$scene" --out "$OUT/run_$mm" --quiet
  echo "spacing $mm mm: $(job_shard_particles "$OUT/run_$mm.log") particles, $(( $(date +%s) - t0 )) s on $RANKS rank(s)"
done
mkdir -p "$here/results"
args=()
for mm in $SPACINGS; do args+=("$mm" "$OUT/run_$mm"); done
"$PYTHON" "$here/griffith.py" --W "$W" --a "$A" --E "$E" --G "$GC" --grow "$GROW" "${args[@]}" | tee "$here/results/griffith.txt"
