#!/usr/bin/env bash
# Output at every step: the cost of one output must not grow with the outputs already written.  A tiny scene (a
# ball of 32 particles dropped on the ground) writes OUTPUTS + 1 outputs, one per step from step 0, each an HDF5
# file, a grid more in the XDMF index (particles.xmf) and a row more in decomposition.csv.  The run prints a
# diagnostic line every BLOCK steps; each line is stamped with the wall clock as it arrives, so the time of each
# block of BLOCK outputs is measured inside one run.  Reports the time per output of every block, the last
# block's against the first's, against the target (the last no slower than the first, within TOLERANCE %).  The
# run is repeated REPEATS times and each block keeps its best time, so that other work on the machine does not
# decide the comparison.
#
#   jobs/bench/output_index.sh
#   OUTPUTS=2000 BLOCK=500 REPEATS=1 jobs/bench/output_index.sh
#
# Every variable below can be overridden from the environment:
#   OUTPUTS     steps of the run (one output per step, plus the one of step 0)                 10000
#   BLOCK       outputs per timed block (a divisor of OUTPUTS)                                  1000
#   FIELDS      output.fields of the scene ("all": every field; the index grid grows with them)  all
#   RANKS       ranks of the run                                                                1
#   REPEATS     runs; each block's best time is kept                                            3
#   TOLERANCE   how much slower the last block may be than the first, %, for the machine's noise  10
#   SHARD       shard executable (default: build/shard, then PATH)
#   MPIEXEC MPIEXEC_FLAGS   MPI launcher and extra flags                                        mpiexec ""
#   OUT         folder for the scene, the stamped logs, results.csv and the output files (~7 KB per output)
#                                                                                               /tmp/shard-bench/output_index
#
# The first block holds BLOCK + 1 outputs (step 0 too; timed from the run's "Running" line), the others BLOCK.
# The time of a block is the whole loop's (steps and output), but with 32 particles the steps take a few per cent
# of it; the report's I/O row says how much.  stdout is line-buffered through stdbuf (coreutils) so that each
# line arrives when it is printed.
set -euo pipefail

# shellcheck source=jobs/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
OUTPUTS=${OUTPUTS:-10000}
BLOCK=${BLOCK:-1000}
FIELDS=${FIELDS:-all}
RANKS=${RANKS:-1}
REPEATS=${REPEATS:-3}
TOLERANCE=${TOLERANCE:-10}
OUT=${OUT:-/tmp/shard-bench/output_index}
job_need_int OUTPUTS BLOCK RANKS REPEATS
job_need_num TOLERANCE
[ $((OUTPUTS % BLOCK)) -eq 0 ] || job_die "BLOCK=$BLOCK does not divide OUTPUTS=$OUTPUTS"
command -v stdbuf > /dev/null || job_die "stdbuf (coreutils) not found"
job_need_mpiexec
job_find_shard
"$SHARD" --version | grep -q "HDF5: not built in" && job_die "$SHARD was built without HDF5"
job_out_dir
job_load_warning

fields_line=""
[ "$FIELDS" = all ] || fields_line="  fields: [$FIELDS]"
cat > "$OUT/ball.yaml" <<EOF
run:
  steps: $OUTPUTS
  diagnostics_every: $BLOCK
  output_dir: $OUT/files
materials:
  rubber: {density: 1100, E: 1.0e6, nu: 0.4}
bodies:
  - name: ball
    material: rubber
    shape: {sphere: {center: [0, 0, 0.1], radius: 0.02}}
    spacing: 0.01
    velocity: [0, 0, -1]
obstacles:
  - plane: {point: [0, 0, 0], normal: [0, 0, 1]}
output:
  every: 1
$fields_line
EOF

echo "Output index: $OUTPUTS steps with an output at every step, $RANKS rank(s), blocks of $BLOCK outputs," \
  "best of $REPEATS run(s) ($SHARD)"
logs=()
for r in $(seq 1 "$REPEATS"); do
  rm -rf "$OUT/files"
  log=$OUT/run-$r.log
  # shellcheck disable=SC2086  # MPIEXEC_FLAGS is a list of words
  $MPIEXEC $MPIEXEC_FLAGS -n "$RANKS" stdbuf -oL "$SHARD" run "$OUT/ball.yaml" 2>&1 |
    while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done > "$log"
  grep -q '^[0-9.]* Loop time of' "$log" || job_log_die "$log" "run $r did not finish"
  logs+=("$log")
done

# Block k of a run: from the stamp of the line that ends block k - 1 (the "Running" line for k = 1) to the diag
# line of step k BLOCK; each block's best over the runs.
awk -v block="$BLOCK" -v tol="$TOLERANCE" -v csv="$OUT/results.csv" '
  FNR == 1 { prev = ""; k = 0 }
  $2 == "Running" && prev == "" { prev = $1 }
  $2 == "diag" && $3 == "step" {
    k++; s[k] = $4; d = $1 - prev; prev = $1
    if (!(k in b) || d < b[k]) b[k] = d
    if (k > n) n = k
  }
  END {
    if (n == 0) { print "error: no stamped lines"; exit 1 }
    printf "%-16s %10s %12s %14s\n", "outputs", "block_s", "ms/output", "vs first"
    printf "%-16s %10s %12s %14s\n", "----------------", "----------", "------------", "--------------"
    print "first_step,last_step,outputs,block_s,ms_per_output" > csv
    for (k = 1; k <= n; k++) {
      m = (k == 1) ? block + 1 : block
      first = (k == 1) ? 0 : s[k - 1] + 1
      per[k] = 1000 * b[k] / m
      printf "%-16s %10.3f %12.3f %13.3fx\n", first ".." s[k], b[k], per[k], per[k] / per[1]
      print first "," s[k] "," m "," b[k] "," per[k] > csv
    }
    r = per[n] / per[1]
    printf "\nLast block / first block: %.3f (%.3f ms against %.3f ms per output)\n", r, per[n], per[1]
    if (r <= 1 + tol / 100)
      printf "Target met: the last %d outputs cost no more than the first %d (within %s %%)\n", block, block, tol
    else
      printf "Target missed: the last %d outputs cost %.1f %% more than the first %d\n", block, 100 * (r - 1), block
  }' "${logs[@]}"
echo "The last run's report:"
sed -n 's/^[0-9.]* \(I\/O  *|.*\)/\1/p; s/^[0-9.]* \(Loop time of.*\)/\1/p; s/^[0-9.]* \(I\/O: .*\)/\1/p' "$log"
echo "Index: $(wc -c < "$OUT/files/particles.xmf") bytes of particles.xmf, $(wc -l < "$OUT/files/decomposition.csv") lines of decomposition.csv"
rm -rf "$OUT/files"
echo "Results: $OUT/results.csv; stamped logs: $OUT/run-*.log"
