#!/usr/bin/env bash
# Load balancing: what a repartition and migration cost, and what balancing gains in a fragmenting scene.
#
#  1. Cost: a block of N^3 particles (10^6 by default, 32 bonds each inside) at RANKS_COST ranks, with a new
#     partition at steps 5 and 10 (`balance: {every: 5, threshold: 1, method: M}`) for each method of METHODS.
#     The first moves the particles from the start-up's partition (RCB) to the method's, the second (the cuts reused) shows a
#     repartition of an unchanged state (no migration when nothing moves).  Per check: particles moved, MB,
#     partition and migration seconds, and the edge cut before and after.
#  2. Gain: a brittle sphere (R/spacing = DIV) shattering on a plane at V m/s beside a block at rest of about
#     as many particles (the start-up's RCB gives each its own rank), at RANKS_GAIN ranks, checked
#     every EVERY steps with `cost: time` (the force phases' measured time); once with a threshold no imbalance
#     reaches (checks only: the imbalance without balancing) and once with THRESHOLD.  Reports the largest
#     cost imbalance seen, the migrations, the loop times and the speed-up.
#
#   jobs/bench/balance.sh
#   N=60 METHODS=rcb DIV=10 jobs/bench/balance.sh
#
# Variables (environment):
#   N             lattice points per axis of the block                                     100
#   METHODS       balance methods of part 1 (empty: part 1 is skipped)                     "rcb hsfc graph"
#   RANKS_COST    ranks of part 1                                                          2
#   DIV V T_END   part 2: sphere radius / spacing, impact speed (m/s), simulated time (s)  15 60 4e-4
#   EVERY THRESHOLD COST   part 2: steps between checks, threshold, cost model                20 1.1 time
#   RANKS_GAIN    ranks of part 2                                                          2
#   SHARD         shard executable (default: build/shard, then PATH)
#   MPIEXEC MPIEXEC_FLAGS   MPI launcher and extra flags                                   mpiexec ""
#   OUT           folder for scenes, logs and results                                      /tmp/shard-bench/balance
set -euo pipefail

# shellcheck source=jobs/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
N=${N:-100}
METHODS=${METHODS-"rcb hsfc graph"}
RANKS_COST=${RANKS_COST:-2}
DIV=${DIV:-15}
V=${V:-60}
T_END=${T_END:-4e-4}
EVERY=${EVERY:-20}
THRESHOLD=${THRESHOLD:-1.1}
COST=${COST:-time}
RANKS_GAIN=${RANKS_GAIN:-2}
OUT=${OUT:-/tmp/shard-bench/balance}
job_need_int N RANKS_COST DIV EVERY RANKS_GAIN
job_need_num V T_END THRESHOLD
job_need_mpirun
job_find_shard
job_out_dir

echo "1. Repartition and migration of a block of $((N * N * N)) particles on $RANKS_COST ranks"
printf '%-6s %-6s %10s %9s %12s %12s %18s\n' method step moved MB partition_s migration_s edge_cut
for m in $METHODS; do
  cat > "$OUT/block_$m.yaml" <<EOF
run:
  steps: 11
  gravity: [0, 0, -9.81]
materials:
  rock: {density: 2500, E: 1.0e9, nu: 0.25}
bodies:
  - name: block
    material: rock
    shape: {box: {min: [0, 0, 0], max: [$N, $N, $N]}}
    spacing: 1
balance: {every: 5, threshold: 1, method: $m}
EOF
  job_mpirun "$RANKS_COST" "$OUT/block_$m" "$SHARD" run "$OUT/block_$m.yaml"
  grep '^balance step' "$OUT/block_$m.log" | while read -r line; do
    step=$(printf '%s\n' "$line" | sed -n 's/^balance step \([0-9]*\):.*/\1/p')
    moved=$(printf '%s\n' "$line" | sed -n 's/.*, \([0-9]*\) particle(s) moved.*/\1/p')
    mb=$(printf '%s\n' "$line" | sed -n 's/.*moved (\([0-9.e+-]*\) MB).*/\1/p')
    part=$(printf '%s\n' "$line" | sed -n 's/.*(partition \([0-9.e+-]*\) s,.*/\1/p')
    migr=$(printf '%s\n' "$line" | sed -n 's/.*migration \([0-9.e+-]*\) s).*/\1/p')
    cut=$(printf '%s\n' "$line" | sed -n 's/.*edge cut \([0-9]* -> [0-9]*\)$/\1/p')
    [ -n "$moved" ] || { moved=0 mb=0 migr=0 cut=unchanged
      part=$(printf '%s\n' "$line" | sed -n 's/.*(partition \([0-9.e+-]*\) s).*/\1/p'); }
    printf '%-6s %-6s %10s %9s %12s %12s %18s\n' "$m" "$step" "$moved" "$mb" "$part" "$migr" "$cut"
  done
done

echo
echo "2. A sphere (R/spacing $DIV) shattering at $V m/s on $RANKS_GAIN ranks, cost: $COST, checks every $EVERY steps"
# the sphere, and beside it (out of reach) a block at rest of the sphere's volume (0.0806 m a side) that cannot
# break: the start-up's RCB gives each its own rank, so the rank of the sphere does all the fracture and contact work
gain_scene() { # name threshold
  job_shatter_scene "$OUT/$1.yaml" "$DIV" "$V" "$T_END" jobs/bench/balance.sh \
    "balance: {every: $EVERY, threshold: $2, cost: $COST}"
  awk -v s="$(awk -v d="$DIV" 'BEGIN { printf "%.10g", 0.05 / d }')" '
    /^materials:/ { print; print "  stone: {density: 2440, E: 72e9, nu: 0.22}"; next }
    /^obstacles:/ { print "  - name: block"; print "    material: stone";
      print "    shape: {box: {min: [0.2, -0.0403, 0.01], max: [0.2806, 0.0403, 0.0906]}}"
      printf "    spacing: %s\n", s }
    { print }' "$OUT/$1.yaml" > "$OUT/$1.tmp" && mv "$OUT/$1.tmp" "$OUT/$1.yaml"
}
gain_scene checks_only 1e9
gain_scene balanced "$THRESHOLD"
printf '%-12s %10s %10s %12s %12s %10s %18s\n' run loop_s migrations imb_first imb_largest moved state_hash
for r in checks_only balanced; do
  job_mpirun "$RANKS_GAIN" "$OUT/$r" "$SHARD" run "$OUT/$r.yaml" --quiet
  log=$OUT/$r.log
  loop=$(sed -n 's/^Loop time of \([0-9.e+-]*\) s.*/\1/p' "$log")
  line=$(grep '^Balance (' "$log")
  migr=$(printf '%s\n' "$line" | sed -n 's/.* \([0-9]*\) migration(s).*/\1/p')
  moved=$(printf '%s\n' "$line" | sed -n 's/.* \([0-9]*\) particle(s) moved.*/\1/p')
  first=$(printf '%s\n' "$line" | sed -n 's/.*first check \([0-9.]*\),.*/\1/p')
  largest=$(printf '%s\n' "$line" | sed -n 's/.*largest \([0-9.]*\).*/\1/p')
  printf '%-12s %10s %10s %12s %12s %10s %18s\n' "$r" "$loop" "$migr" "$first" "$largest" "$moved" \
    "$(sed -n 's/^State hash: //p' "$log")"
  eval "loop_$r=$loop"
done
# shellcheck disable=SC2154  # set by the eval above
echo "speed-up of balancing: $(awk -v a="$loop_checks_only" -v b="$loop_balanced" 'BEGIN { printf "%.3f", a / b }')"
grep '^balance step' "$OUT/balanced.log" | head -5 || true
