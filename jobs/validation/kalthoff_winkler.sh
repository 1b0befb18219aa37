#!/usr/bin/env bash
# Kalthoff-Winkler: a steel plate 200 x 100 x 9 mm with two parallel edge notches, struck on the edge between
# them; the cracks start at the notch tips and run at about 70 degrees to the notch direction (Kalthoff &
# Winkler 1987; 60-75 degrees in peridynamic and phase-field models).  For each spacing this writes a scene,
# runs Shard on RANKS ranks and measures the crack angles and the initiation with kalthoff_winkler.py, which
# writes the table to RESULTS.
#
#   jobs/validation/kalthoff_winkler.sh                 # spacings 2.083 and 1.389 mm
#   jobs/validation/kalthoff_winkler.sh 2.5 2.083 1.389
#   IMPACT=body jobs/validation/kalthoff_winkler.sh 2.083
#
# Arguments: lattice spacings in mm.  Each is snapped to the nearest 25/n mm (n an integer), so that the notch
# planes and the notch tips lie halfway between lattice planes: 2 -> 2.083 (n = 12), 1.4 -> 1.389 (n = 18).
#
# Geometry (m): the plate is x in [0, 0.1] (the impact direction), y in [-0.1, 0.1], z in [0, 0.009]; the
# impacted edge is x = 0; the notches are flat (planar cracks, no bond crosses them) at y = -0.025 and
# y = +0.025, x from the edge to the tips at x = 0.05 - spacing / 10 (the tenth of a spacing keeps the tips off the
# points where bonds cross the notch plane: a bond through the very tip would be cut at one notch and not at the
# other, by rounding).  The lattice fills the 9 mm with round(9 / spacing)
# layers (8.33 mm at both default spacings: the plate's mass is 0.93 of the real one; the problem is
# plane-stress-like, so the thickness hardly matters).
#
# Variables (environment):
#   IMPACT       prescribed: the particles of the impacted edge between the notches (|y| < 25 mm, the first
#                lattice layer) move at V into the plate for the whole run (the usual peridynamic
#                simplification);  body: a steel bar 50 x 100 x 9 mm (y, x, z) hits the edge at V
#                (same material, unbreakable; penalty contact)                                  prescribed
#   V            impact speed (m/s)                                                             32
#   E NU RHO     Young's modulus (Pa), Poisson's ratio, density (kg/m^3)                         1.91e11 0.3 8000
#   GC           energy release rate (J/m^2), turned into a critical stretch by Shard           22170
#   STABILIZATION  the material's stabilization; empty: Shard's default for breaking materials (0.1),
#                which shatters this plate (see README.md)                                     1
#   SUPPORT      support radius in spacings                                                     2.2
#   DT_SAFETY    CFL safety factor                                                              0.4
#   END_US       simulated time (microseconds)                                                  90
#   EVERY_US     time between outputs (microseconds)                                            2
#   THRESHOLD    damage above which a particle counts as cracked                                0.3
#   RANKS        MPI ranks                                                                      2
#   SHARD        shard executable (default: build/shard, then PATH)
#   MPIEXEC MPIEXEC_FLAGS   MPI launcher and extra flags                                        mpiexec ""
#   OUT          folder for scenes, logs and output files                                       /tmp/shard-validation/kalthoff_winkler
#   RESULTS      the table                                                      jobs/validation/results/kalthoff_winkler.txt
#   KEEP         1: keep the HDF5 output after the analysis (0: delete it)                      1
set -euo pipefail

# shellcheck source=jobs/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
HERE=$JOB_REPO/jobs/validation
IMPACT=${IMPACT:-prescribed}
V=${V:-32}
E=${E:-1.91e11}
NU=${NU:-0.3}
RHO=${RHO:-8000}
GC=${GC:-22170}
STABILIZATION=${STABILIZATION-1}
SUPPORT=${SUPPORT:-2.2}
DT_SAFETY=${DT_SAFETY:-0.4}
END_US=${END_US:-90}
EVERY_US=${EVERY_US:-2}
THRESHOLD=${THRESHOLD:-0.3}
RANKS=${RANKS:-2}
OUT=${OUT:-/tmp/shard-validation/kalthoff_winkler}
RESULTS=${RESULTS:-$HERE/results/kalthoff_winkler.txt}
KEEP=${KEEP:-1}
SPACINGS=("$@")
[ ${#SPACINGS[@]} -gt 0 ] || SPACINGS=(2.083 1.389)
case $IMPACT in prescribed | body) ;; *) job_die "IMPACT must be 'prescribed' or 'body', got '$IMPACT'" ;; esac
job_need_num V E RHO GC SUPPORT DT_SAFETY END_US EVERY_US THRESHOLD
job_need_int RANKS
[ -z "$STABILIZATION" ] || awk -v x="$STABILIZATION" 'BEGIN { exit !(x ~ /^[0-9.eE+-]+$/ && x >= 0 && x <= 1) }' ||
    job_die "STABILIZATION must be in [0, 1], got '$STABILIZATION'"
awk -v x="$NU" 'BEGIN { exit !(x ~ /^[0-9.eE+-]+$/ && x > -1 && x < 0.5) }' || job_die "NU must be in (-1, 0.5), got '$NU'"
for s in "${SPACINGS[@]}"; do job_is_num "$s" || job_die "a spacing must be a number of mm > 0, got '$s'"; done
job_need_mpiexec
job_find_shard
job_out_dir
[ -x "$PYTHON" ] || PYTHON=python3
"$PYTHON" -c 'import h5py, numpy' 2>/dev/null ||
    job_die "$PYTHON cannot import h5py and numpy (Debian: apt-get install python3-h5py python3-numpy; or set PYTHON)"

# scene FILE SPACING_M TAG: the scene of one run.
scene() {
    local f=$1 s=$2 tag=$3
    local stab="" proj="" tipx
    tipx=$(awk -v s="$s" 'BEGIN { printf "%.12g", 0.05 - 0.1 * s }')
    [ -z "$STABILIZATION" ] || stab="
    stabilization: $STABILIZATION"
    if [ "$IMPACT" = prescribed ]; then
        impact="    prescribed:
      - {region: {box: {min: [-0.001, -0.025, -0.001], max: [$s, 0.025, 0.01]}}, velocity: [$V, 0, 0]}"
    else
        # a bar of the plate's thickness, half a spacing clear of the edge, its lattice in register with the plate's
        local gap x1 x0
        gap=$(awk -v s="$s" 'BEGIN { printf "%.10g", 0.5 * s }')
        x1=$(awk -v g="$gap" 'BEGIN { printf "%.10g", -g }')
        x0=$(awk -v g="$gap" 'BEGIN { printf "%.10g", -g - 0.1 }')
        impact=""
        proj="  - name: projectile
    material: projectile
    shape: {box: {min: [$x0, -0.025, 0], max: [$x1, 0.025, 0.009]}}
    spacing: $s
    support: $SUPPORT
    velocity: [$V, 0, 0]"
    fi
    cat > "$f" <<EOF
# Kalthoff-Winkler plate, spacing $tag mm, impact: $IMPACT at $V m/s (written by jobs/validation/kalthoff_winkler.sh)
run:
  end_time: ${END_US}e-6
  gravity: [0, 0, 0]
  dt_safety: $DT_SAFETY
  diagnostics_every: 100
materials:
  steel:
    density: $RHO
    E: $E
    nu: $NU
    fracture: {energy_release_rate: $GC}$stab
  projectile: {density: $RHO, E: $E, nu: $NU}
bodies:
  - name: plate
    material: steel
    shape: {box: {min: [0, -0.1, 0], max: [0.1, 0.1, 0.009]}}
    spacing: $s
    support: $SUPPORT
    notches:
      - {min: [-0.001, -0.025, -0.001], max: [$tipx, -0.025, 0.01]}
      - {min: [-0.001, 0.025, -0.001], max: [$tipx, 0.025, 0.01]}
$impact
$proj
output:
  every_time: ${EVERY_US}e-6
  fields: [damage, body, fragment]
EOF
}

echo "Kalthoff-Winkler: impact $IMPACT at $V m/s, E $E Pa, nu $NU, rho $RHO kg/m^3, G_c $GC J/m^2, support $SUPPORT," \
    "stabilization ${STABILIZATION:-default}, $END_US us on $RANKS rank(s) ($SHARD)"
dirs=()
for smm in "${SPACINGS[@]}"; do
    n=$(awk -v s="$smm" 'BEGIN { n = int(25 / s + 0.5); print (n < 1) ? 1 : n }')
    s=$(awk -v n="$n" 'BEGIN { printf "%.12g", 0.025 / n }')
    tag=$(awk -v s="$s" 'BEGIN { printf "%.3f", 1000 * s }')
    tipx=$(awk -v s="$s" 'BEGIN { printf "%.12g", 0.05 - 0.1 * s }')
    name=kw_${tag}mm
    dir=$OUT/$name
    rm -rf "$dir"
    mkdir -p "$dir"
    scene "$OUT/$name.yaml" "$s" "$tag"
    "$SHARD" check "$OUT/$name.yaml" > "$OUT/$name.check" 2>&1 || job_log_die "$OUT/$name.check" "scene $OUT/$name.yaml refused"
    echo "spacing $tag mm (25/$n mm): $(grep '^Particles:' "$OUT/$name.check"); $(grep '^Time step:' "$OUT/$name.check")"
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    "$MPIEXEC" $MPIEXEC_FLAGS -n "$RANKS" "$SHARD" run "$OUT/$name.yaml" --out "$dir" --quiet > "$OUT/$name.log" 2>&1 ||
        job_log_die "$OUT/$name.log" "shard failed on $name"
    t1=$(date +%s.%N)
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    particles=$(job_shard_particles "$OUT/$name.log")
    steps=$(job_field "$OUT/$name.log" '^Loop time of' 10)
    sc=$(sed -n 's/.*breaks at a stretch of \([0-9.e+-]*\),.*/\1/p' "$OUT/$name.check" | head -n 1)
    cat > "$dir/run.json" <<EOF
{"spacing_mm": $tag, "spacing": $s, "support": $SUPPORT, "impact": "$IMPACT", "velocity": $V, "nu": $NU,
 "stabilization": "${STABILIZATION:-default}", "critical_stretch": ${sc:-null}, "ranks": $RANKS, "wall_s": $wall,
 "particles": $particles, "steps": $steps, "plate": {"min": [0, -0.1, 0], "max": [0.1, 0.1, 0.009]},
 "tips": [[$tipx, -0.025], [$tipx, 0.025]], "notch_y": [-0.025, 0.025]}
EOF
    echo "  $particles particles, $steps steps, wall $wall s; $(grep '^Fracture:' "$OUT/$name.log" | cut -c 11-)"
    dirs+=("$dir")
done
mkdir -p "$(dirname "$RESULTS")"
"$PYTHON" "$HERE/kalthoff_winkler.py" --threshold "$THRESHOLD" --write "$RESULTS" "${dirs[@]}"
if [ "$KEEP" = 0 ]; then
    for d in "${dirs[@]}"; do rm -f "$d"/particles_*.h5; done
fi
echo "Scenes and logs: $OUT; table: $RESULTS"
