#!/usr/bin/env bash
# Output overhead: a block of 10^6 particles written to parallel HDF5 every 100 steps, on 1 and 2 ranks: the
# achieved write bandwidth and the share of the run time spent in output, against the target (< 5 %).
#
#   jobs/bench/output_overhead.sh
#   N=50 STEPS=200 RANKS="1 2 4" jobs/bench/output_overhead.sh
#
# Every variable below can be overridden from the environment:
#   N           lattice points per axis of the cube (N^3 particles)                           100
#   SPACING     lattice spacing (m)                                                           0.01
#   STEPS       time steps (outputs at 0, EVERY, 2 EVERY, ... STEPS)                          300
#   EVERY       steps between outputs                                                         100
#   FIELDS      output.fields of the scene ("all": every field)                                all
#   RANKS       rank counts, space separated                                                  "1 2"
#   SHARD       shard executable (default: build/shard, then /tmp/build-io/shard, then PATH)
#   MPIEXEC MPIEXEC_FLAGS   MPI launcher and extra flags                                      mpiexec ""
#   OUT         folder for the scene, logs, per-rank time reports and the HDF5 files (large: ~180 MB per output)
#                                                                                             /tmp/shard-bench/output
#   TARGET      the target share of the run time spent in output, %                          5
#
# For each rank count it runs the scene twice, with and without the output section, and reports: the loop time
# of both, the I/O row of Shard's table (time in the I/O phase: derived fields, file writes, XDMF), the bytes
# written and the write bandwidth Shard prints (bytes / slowest rank's time inside the HDF5 writes), the share
# of the loop time in the I/O phase, and the steady share at one output per EVERY steps,
#   t_out / (EVERY * t_step + t_out),  t_out = I/O time per output, t_step = (loop time - I/O time) / STEPS,
# both from the run with output (on a shared machine the run without output may have had other neighbours), and
# which does not count the extra output at step 0.  The HDF5 files land in OUT: put OUT on the file system
# you want to measure (a cluster's parallel file system, not /tmp, for production figures).
set -euo pipefail

# shellcheck source=jobs/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
N=${N:-100}
SPACING=${SPACING:-0.01}
STEPS=${STEPS:-300}
EVERY=${EVERY:-100}
FIELDS=${FIELDS:-all}
RANKS=${RANKS:-"1 2"}
TARGET=${TARGET:-5}
OUT=${OUT:-/tmp/shard-bench/output}
job_need_mpirun
job_find_shard /tmp/build-io
"$SHARD" --version | grep -q "HDF5: not built in" && job_die "$SHARD was built without HDF5"

job_out_dir
L=$(awk -v n="$N" -v s="$SPACING" 'BEGIN { printf "%.10g", n * s }')
fields_line=""
[ "$FIELDS" = all ] || fields_line="  fields: [$FIELDS]"
# A block thrown onto the ground, spinning: every particle strains, so the solid kernels do their full work.
cat > "$OUT/block.yaml" <<EOF
run:
  steps: $STEPS
  gravity: [0, 0, -9.81]
  output_dir: $OUT/files
materials:
  rubber: {density: 1100, E: 1.0e7, nu: 0.4, damping: 1.0e-5}
bodies:
  - name: block
    material: rubber
    shape: {box: {min: [0, 0, 0.001], max: [$L, $L, $(awk -v l="$L" 'BEGIN { print l + 0.001 }')]}}
    spacing: $SPACING
    velocity: [0.2, 0, -1]
    angular_velocity: [0, 0, 0.5]
obstacles:
  - plane: {point: [0, 0, 0], normal: [0, 0, 1]}
EOF
{ cat "$OUT/block.yaml"; printf 'output:\n  every: %s\n%s\n' "$EVERY" "$fields_line"; } > "$OUT/block-io.yaml"

field() { sed -n "$2" "$1" | head -n 1; }
echo "Output overhead: $N^3 = $((N * N * N)) particles, $STEPS steps, output every $EVERY steps ($SHARD)"
printf '%-6s %12s %12s %10s %10s %10s %12s %12s %8s\n' ranks "loop_noio_s" "loop_io_s" "io_s" outputs \
  "MB" "MB/s" "share_%" "steady_%"
header="ranks,particles,steps,every,loop_noio_s,loop_io_s,io_phase_s,outputs,bytes_MB,bandwidth_MBps"
echo "$header,share_pct,steady_pct" > "$OUT/results.csv"
worst=0
for p in $RANKS; do
  rm -rf "$OUT/files"
  job_mpirun "$p" "$OUT/noio-$p" "$SHARD" run "$OUT/block.yaml" --quiet
  job_mpirun "$p" "$OUT/io-$p" "$SHARD" run "$OUT/block-io.yaml" --quiet
  loop0=$(job_shard_loop_time "$OUT/noio-$p.log")
  loop1=$(job_shard_loop_time "$OUT/io-$p.log")
  io=$(field "$OUT/io-$p.log" 's/^I\/O  *| *[0-9.e+-]* | *\([0-9.e+-]*\) |.*/\1/p')
  nout=$(field "$OUT/io-$p.log" 's/^I\/O: \([0-9]*\) output file.*/\1/p')
  mb=$(field "$OUT/io-$p.log" 's/^I\/O: .*, \([0-9.e+-]*\) MB written.*/\1/p')
  bw=$(field "$OUT/io-$p.log" 's/.*write bandwidth \([0-9.e+-]*\) MB\/s.*/\1/p')
  read -r share steady < <(awk -v io="$io" -v l1="$loop1" -v l0="$loop0" -v n="$nout" -v s="$STEPS" -v e="$EVERY" \
    'BEGIN { t = io / n; step = (l1 - io) / s; printf "%.2f %.2f\n", 100 * io / l1, 100 * t / (e * step + t) }')
  printf '%-6s %12s %12s %10s %10s %10s %12s %12s %8s\n' "$p" "$loop0" "$loop1" "$io" "$nout" "$mb" "$bw" "$share" \
    "$steady"
  echo "$p,$((N * N * N)),$STEPS,$EVERY,$loop0,$loop1,$io,$nout,$mb,$bw,$share,$steady" >> "$OUT/results.csv"
  worst=$(awk -v a="$worst" -v b="$steady" 'BEGIN { print (b > a) ? b : a }')
done
rm -rf "$OUT/files"
echo "Results: $OUT/results.csv; logs: $OUT/*.log"
if awk -v w="$worst" -v t="$TARGET" 'BEGIN { exit !(w < t) }'; then
  echo "Target met: steady output share ${worst} % < ${TARGET} % at every rank count"
else
  echo "Target missed: steady output share ${worst} % >= ${TARGET} %"
fi
