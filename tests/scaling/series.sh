#!/usr/bin/env bash
# jobs/scaling/series.sh and predict.sh on a small block at 1 and 2 ranks: the CSV has the documented columns
# and one row per rank count, the figures in it agree with the run logs, the PNG plots exist; weak scaling
# doubles the block on 2 ranks; the prediction has one row per rank count for the block and the fragmenting
# scene, and its plot; a run's end report (FRAG_REPORT) gives the scene's figures.
# usage: series.sh SHARD WORKDIR
set -uo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
test_init "$1" "$2"
need_matplotlib

# csv_col FILE COLUMN: the column's values, one per row (by name, not position).
csv_col() {
  "$PYTHON" -c 'import csv, sys
f = open(sys.argv[1])
if sys.argv[3] == "1": f.readline()
for r in csv.DictReader(f): print(r[sys.argv[2]])' "$1" "$2" "${3:-0}"
}

want_cols="mode ranks particles bonds steps loop_time_s wall_time_s neigh_min_s neigh_avg_s neigh_max_s solid_min_s
solid_avg_s solid_max_s contact_min_s contact_avg_s contact_max_s comm_min_s comm_avg_s comm_max_s integrate_min_s
integrate_avg_s integrate_max_s io_min_s io_avg_s io_max_s insitu_min_s insitu_avg_s insitu_max_s other_min_s
other_avg_s other_max_s comm_bytes_total comm_bytes_per_step_per_rank particle_steps_per_s
particle_steps_per_s_per_core speedup parallel_efficiency imbalance ghosts_avg ghosts_max bond_ghosts_avg
bond_ghosts_max peak_mem_max_mib bytes_per_particle state_hash scene log"

for mode in strong weak; do
  out=$WORK/$mode
  if MODE=$mode RANKS="1 2" NX=10 NY=10 NZ=8 STEPS=4 OUT=$out "$REPO/jobs/scaling/series.sh" >"$WORK/$mode.txt" 2>&1; then
    pass "$mode series ran"
  else
    fail "$mode series failed:"; cat "$WORK/$mode.txt"; continue
  fi
  csv=$out/series.csv
  header=$(head -n 1 "$csv")
  for c in $want_cols; do
    [[ ",$header," == *",$c,"* ]] || fail "$mode: column '$c' missing from $csv (header: $header)"
  done
  expect_eq "$mode: rows (one per rank count)" "$(($(wc -l <"$csv") - 1))" 2
  expect_eq "$mode: ranks column" "$(csv_col "$csv" ranks | tr '\n' ' ')" "1 2 "
  expect_eq "$mode: steps column" "$(csv_col "$csv" steps | sort -u)" 4
  expect_eq "$mode: mode column" "$(csv_col "$csv" mode | sort -u)" "$mode"
  # The CSV against the logs it came from (Loop time line of each run).
  for P in 1 2; do
    log=$out/runs/np$P/rep1/shard.log
    t=$(sed -n "s/^Loop time of \([^ ]*\) s on $P rank(s) for 4 steps with \([0-9]*\) particles$/\1 \2/p" "$log")
    row=$(paste -d' ' <(csv_col "$csv" loop_time_s) <(csv_col "$csv" particles) | sed -n "${P}p")
    t_csv=$(awk -v a="${row% *}" 'BEGIN { printf "%.5g", a }') t_log=$(awk -v a="${t% *}" 'BEGIN { printf "%.5g", a }')
    expect_eq "$mode: np=$P loop time and particles in the CSV = the log's" "$t_csv ${row#* }" "$t_log ${t#* }"
  done
  eff1=$(csv_col "$csv" parallel_efficiency | sed -n 1p)
  expect_eq "$mode: efficiency of the reference run" "$(awk -v e="$eff1" 'BEGIN { printf "%.3f", e }')" "1.000"
  bytes=$(csv_col "$csv" comm_bytes_total | tr '\n' ' ')
  awk -v b="$bytes" 'BEGIN { split(b, x, " "); exit !(x[1] == 0 && x[2] > 0) }' &&
    pass "$mode: bytes communicated 0 on 1 rank, > 0 on 2 ($bytes)" || fail "$mode: bytes communicated: $bytes"
  for png in speedup efficiency phases; do
    png_ok "$out/$png.png" && pass "$mode: $png.png is a PNG ($(stat -c %s "$out/$png.png") bytes)" ||
      fail "$mode: $out/$png.png missing or not a PNG"
  done
done
n=$(csv_col "$WORK/weak/series.csv" particles | tr '\n' ' ')
expect_eq "weak: particles on 2 ranks = 2 x particles on 1" "$n" "800 1600 "
n=$(csv_col "$WORK/strong/series.csv" particles | tr '\n' ' ')
expect_eq "strong: the same particles on 1 and 2 ranks" "$n" "800 800 "

# A missing report line is an error naming it, not a silent empty column.
sed '/^Performance:/d' "$WORK/strong/runs/np2/rep1/shard.log" >"$WORK/broken.log"
msg=$("$PYTHON" "$REPO/jobs/scaling/scaling.py" collect --mode strong --out "$WORK/broken.csv" "$WORK/broken.log" 2>&1)
rc=$?
[ $rc -ne 0 ] && [[ $msg == *"Performance: A particle-steps/s"* ]] && pass "a missing 'Performance:' line is an error: $msg" ||
  fail "missing 'Performance:' line: exit $rc, '$msg'"

# Prediction from the strong series: a 2000-particle block scaled to 1e5, ranks 1 2 4 8.
if SERIES_CSV=$WORK/strong/series.csv PART_N=2000 TARGET_N=1e5 RANKS="1 2 4 8" TARGET_P=8 OUT=$WORK/predict \
    "$REPO/jobs/scaling/predict.sh" >"$WORK/predict.txt" 2>&1; then
  pass "predict.sh ran"
  expect_eq "predicted rows" "$(csv_col "$WORK/predict/predicted-target.csv" ranks 1 | tr '\n' ' ')" "1 2 4 8 "
  e1=$(csv_col "$WORK/predict/predicted-target.csv" efficiency 1 | sed -n 1p)
  expect_eq "predicted efficiency at 1 rank" "$(awk -v e="$e1" 'BEGIN { printf "%.3f", e }')" "1.000"
  expect_eq "the measured problem is modelled too" "$(csv_col "$WORK/predict/predicted-measured.csv" ranks 1 | sed -n 1p)" 1
  png_ok "$WORK/predict/prediction.png" && pass "prediction.png is a PNG" || fail "prediction.png missing"
  grep -q "^Predicted efficiency of the 1e+05-particle block at 8 ranks: " "$WORK/predict.txt" &&
    pass "headline line printed" || fail "no headline line in $WORK/predict.txt"
  # The fragmenting scene beside the block: the same rank counts, 100 % on one rank, less than the block on 8
  # (contact work, imbalance, more bytes, rebuilds and migrations all cost), one summary row per problem and P.
  frag=$WORK/predict/predicted-fragmenting-1e+05.csv
  expect_eq "fragmenting: predicted rows" "$(csv_col "$frag" ranks 1 | tr '\n' ' ')" "1 2 4 8 "
  e1=$(csv_col "$frag" efficiency 1 | sed -n 1p)
  expect_eq "fragmenting: efficiency at 1 rank" "$(awk -v e="$e1" 'BEGIN { printf "%.3f", e }')" "1.000"
  eb=$(csv_col "$WORK/predict/predicted-block-1e+05.csv" efficiency 1 | sed -n 4p)
  ef=$(csv_col "$frag" efficiency 1 | sed -n 4p)
  awk -v b="$eb" -v f="$ef" 'BEGIN { exit !(f > 0 && f < b) }' &&
    pass "fragmenting below the block at 8 ranks ($ef < $eb)" || fail "fragmenting $ef, block $eb at 8 ranks"
  expect_eq "summary rows" "$(($(wc -l <"$WORK/predict/summary.csv") - 1))" 8
  grep -q "^Predicted efficiency of the 1e+05-particle fragmenting scene at 8 ranks: " "$WORK/predict.txt" &&
    pass "fragmenting headline printed" || fail "no fragmenting headline in $WORK/predict.txt"
else
  fail "predict.sh failed:"; cat "$WORK/predict.txt"
fi

# The scene's figures from a run's end report (FRAG_REPORT): the 2-rank run's bytes factor reaches the model.
log2=$WORK/strong/runs/np2/rep1/shard.log
bf=$("$PYTHON" "$REPO/jobs/scaling/scaling.py" calibrate "$log2" | sed -n 's/^bytes_factor=//p')
if [ -n "$bf" ] && FRAG_REPORT=$log2 RATE=1e8 LOCAL=0 PART_N=2000 TARGET_N=1e5 RANKS="1 2" OUT=$WORK/predict \
    "$REPO/jobs/scaling/predict.sh" >"$WORK/predict-report.txt" 2>&1; then
  want=$(awk -v f="$bf" 'BEGIN { printf "bytes factor %.4g ", f }')
  grep -q "$want" <(head -n 1 "$frag") && pass "FRAG_REPORT: the report's $want is the model's" ||
    fail "FRAG_REPORT: '$want' not in $(head -n 1 "$frag")"
else
  fail "predict.sh with FRAG_REPORT failed (bytes factor '$bf'):"; cat "$WORK/predict-report.txt"
fi
if FRAG_REPORT=$WORK/no-such.log RATE=1e8 OUT=$WORK/predict "$REPO/jobs/scaling/predict.sh" >"$WORK/bad.txt" 2>&1; then
  fail "an unreadable FRAG_REPORT was accepted"
else
  grep -q "FRAG_REPORT=.* is not readable" "$WORK/bad.txt" && pass "an unreadable FRAG_REPORT is an error" ||
    fail "unreadable FRAG_REPORT: $(cat "$WORK/bad.txt")"
fi
finish
