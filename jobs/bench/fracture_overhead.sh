#!/usr/bin/env bash
# Fracture overhead: a block of N^3 particles thrown onto the ground and spinning (every particle strains), run
# without fracture, with a fracture rule that never breaks a bond (stabilization 0, so that only the fracture
# machinery differs), with the same rule and its default stabilisation (0.1), and with the rule, output every
# EVERY steps and the fragment analysis at each output.  Targets: fracture on with no bond breaking costs at
# most TARGET % (10) over fracture off; the fragment analysis at most FRAG_TARGET % (5) of the run time at one
# output every EVERY (100) steps.
#
#   jobs/bench/fracture_overhead.sh
#   N=40 STEPS=100 RANKS="1 2" jobs/bench/fracture_overhead.sh
#
# Variables (environment):
#   N            lattice points per axis (N^3 particles)                                     60
#   SPACING      lattice spacing (m)                                                         0.01
#   STEPS        time steps                                                                  100
#   EVERY        steps between outputs of the last run                                       100
#   RANKS        rank counts, space separated                                                "1 2"
#   REPEAT       runs of each case; the fastest loop time counts                             2
#   SHARD        shard executable (default: build/shard, then PATH)
#   MPIEXEC MPIEXEC_FLAGS   MPI launcher and extra flags                                     mpiexec ""
#   OUT          folder for scenes, logs and results                                         /tmp/shard-bench/fracture
#   TARGET FRAG_TARGET      the targets, %                                                   10 5
#
# Reports per rank count the loop times (fastest of REPEAT), the overheads, the Fracture row of Shard's timing
# table, and the fragment analysis' time per output from the report's "Fragment analysis" line, as a share of
# the run at one output per EVERY steps: t_frag / (EVERY * t_step + t_frag).
set -euo pipefail

# shellcheck source=jobs/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
N=${N:-60}
SPACING=${SPACING:-0.01}
STEPS=${STEPS:-100}
EVERY=${EVERY:-100}
RANKS=${RANKS:-"1 2"}
REPEAT=${REPEAT:-2}
TARGET=${TARGET:-10}
FRAG_TARGET=${FRAG_TARGET:-5}
OUT=${OUT:-/tmp/shard-bench/fracture}
job_need_int N STEPS EVERY REPEAT
job_need_rank_list
job_need_mpirun
job_find_shard
job_out_dir
L=$(awk -v n="$N" -v s="$SPACING" 'BEGIN { printf "%.10g", n * s }')
scene() { # name, material extras, extra sections
  cat > "$OUT/$1.yaml" <<EOF
run:
  steps: $STEPS
  gravity: [0, 0, -9.81]
  output_dir: $OUT/files-$1
materials:
  rubber: {density: 1100, E: 1.0e7, nu: 0.4, damping: 1.0e-5$2}
bodies:
  - name: block
    material: rubber
    shape: {box: {min: [0, 0, 0.001], max: [$L, $L, $(awk -v l="$L" 'BEGIN { print l + 0.001 }')]}}
    spacing: $SPACING
    velocity: [0.2, 0, -1]
    angular_velocity: [0, 0, 0.5]
obstacles:
  - plane: {point: [0, 0, 0], normal: [0, 0, 1]}
$3
EOF
}
scene off "" ""
scene on ", stabilization: 0, fracture: {critical_stretch: 10}" ""
scene on_stab ", fracture: {critical_stretch: 10}" ""
scene frag ", stabilization: 0, fracture: {critical_stretch: 10}" "output: {every: $EVERY, fields: [damage, fragment]}"

best_loop() { # name ranks: runs REPEAT times, prints the fastest loop time; keeps the last log
  local best=""
  for ((k = 0; k < REPEAT; k++)); do
    rm -rf "$OUT/files-$1"
    job_mpirun "$2" "$OUT/$1-$2" "$SHARD" run "$OUT/$1.yaml" --quiet
    local t
    t=$(job_shard_loop_time "$OUT/$1-$2.log")
    best=$(awk -v a="$best" -v b="$t" 'BEGIN { print (a == "" || b < a) ? b : a }')
  done
  echo "$best"
}
echo "Fracture overhead: $N^3 = $((N * N * N)) particles, $STEPS steps ($SHARD)"
printf '%-6s %10s %10s %10s %10s %9s %9s %10s %10s %9s\n' ranks off_s on_s on_stab_s frag_s "over_%" \
  "stab_%" fracture_s t_frag_s "frag_%"
echo "ranks,particles,steps,loop_off_s,loop_on_s,loop_on_stab_s,loop_frag_s,overhead_pct,overhead_stab_pct,fracture_phase_s,frag_per_output_s,frag_share_pct" > "$OUT/results.csv"
worst=0 worst_frag=0
for p in $RANKS; do
  off=$(best_loop off "$p")
  on=$(best_loop on "$p")
  stab=$(best_loop on_stab "$p")
  frag=$(best_loop frag "$p")
  fph=$(sed -n 's/^Fracture  *| *[0-9.e+-]* | *\([0-9.e+-]*\) |.*/\1/p' "$OUT/on-$p.log" | head -n 1)
  read -r runs tf < <(sed -n 's/^Fragment analysis: \([0-9]*\) run(s), \([0-9.e+-]*\) s.*/\1 \2/p' "$OUT/frag-$p.log")
  read -r over overs tper share < <(awk -v a="$off" -v b="$on" -v c="$stab" -v f="$frag" -v r="$runs" -v t="$tf" \
    -v s="$STEPS" -v e="$EVERY" 'BEGIN { per = t / r; step = (f - t) / s;
      printf "%.2f %.2f %.4g %.2f\n", 100 * (b - a) / a, 100 * (c - a) / a, per, 100 * per / (e * step + per) }')
  printf '%-6s %10s %10s %10s %10s %9s %9s %10s %10s %9s\n' "$p" "$off" "$on" "$stab" "$frag" "$over" "$overs" \
    "$fph" "$tper" "$share"
  echo "$p,$((N * N * N)),$STEPS,$off,$on,$stab,$frag,$over,$overs,$fph,$tper,$share" >> "$OUT/results.csv"
  worst=$(awk -v a="$worst" -v b="$over" 'BEGIN { print (b > a) ? b : a }')
  worst_frag=$(awk -v a="$worst_frag" -v b="$share" 'BEGIN { print (b > a) ? b : a }')
done
rm -rf "$OUT"/files-*
echo "Results: $OUT/results.csv; logs: $OUT/*.log"
awk -v w="$worst" -v t="$TARGET" 'BEGIN { exit !(w <= t) }' && echo "Target met: fracture with no bond breaking costs ${worst} % <= ${TARGET} %" ||
  echo "Target missed: fracture with no bond breaking costs ${worst} % > ${TARGET} %"
awk -v w="$worst_frag" -v t="$FRAG_TARGET" 'BEGIN { exit !(w <= t) }' && echo "Target met: the fragment analysis takes ${worst_frag} % <= ${FRAG_TARGET} % at one output per $EVERY steps" ||
  echo "Target missed: the fragment analysis takes ${worst_frag} % > ${FRAG_TARGET} % at one output per $EVERY steps"
