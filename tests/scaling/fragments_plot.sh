#!/usr/bin/env bash
# jobs/fragments/plot.py on a small breaking run (a ball through a pre-cracked glass plate, a notched bar pulled
# apart; 200 steps, output every 100): shard writes fragments.csv and fragments_histogram.csv, the script turns
# them into fragments_history.png and fragments_distribution.png (in the output folder, and with --out PREFIX
# next to PREFIX), each a PNG of some size; a folder without the CSV files and a CSV file with a wrong header
# are errors (exit 2, one "plot.py: error: ..." line).  Exit 77 = skipped (no Python 3 or no matplotlib).
# usage: fragments_plot.sh SHARD [WORKDIR]
set -uo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
test_init "$1" "${2:-}"
need_cmd "$PYTHON" "apt-get install python3"
need_matplotlib
need_hdf5 "the output section writes HDF5 files"
PLOT=$REPO/jobs/fragments/plot.py

[ -x "$PLOT" ] && [ "$(head -n 1 "$PLOT")" = "#!/usr/bin/env python3" ] &&
  pass "plot.py is executable, with its #! line" || fail "$PLOT: not executable or no '#!/usr/bin/env python3' line"

scene=$WORK/scene.yaml
cat >"$scene" <<'YAML'
run:
  end_time: 2.0e-3
  gravity: [0, 0, 0]
materials:
  glass:
    density: 2440
    E: 7.2e9
    nu: 0.22
    fracture: {tensile_strength: 1.0e7, weibull_modulus: 8, weibull_seed: 3}
  brittle:
    density: 2000
    E: 5.0e9
    nu: 0.25
    fracture: {critical_stretch: 2.0e-3}
  steel: {density: 7800, E: 2.0e10, nu: 0.3}
bodies:
  - name: plate
    material: glass
    shape: {box: {min: [-0.05, -0.05, 0.0], max: [0.05, 0.05, 0.01]}}
    spacing: 0.0033333333
    notches:
      - {min: [-0.05, 0.0, 0.0], max: [-0.03, 0.0, 0.01]}
  - name: ball
    material: steel
    shape: {sphere: {center: [0.0, 0.0, 0.022], radius: 0.01}}
    spacing: 0.0033333333
    velocity: [0, 0, -15]
  - name: bar
    material: brittle
    shape: {box: {min: [-0.05, 0.07, 0.0], max: [0.05, 0.08, 0.01]}}
    spacing: 0.0033333333
    notches:
      - {min: [-0.001, 0.075, -1], max: [0.001, 1, 1]}
    prescribed:
      - {region: {box: {min: [-1, 0.0, -1], max: [-0.045, 1, 1]}}, velocity: [-2, 0, 0]}
      - {region: {box: {min: [0.045, 0.0, -1], max: [1, 1, 1]}}, velocity: [2, 0, 0]}
output: {every: 100}
YAML

out=$WORK/run
run=$(shard_run 1 run "$scene" --steps 200 --out "$out") || { printf '%s\n' "$run"; fail "shard run failed"; finish; }
for f in fragments.csv fragments_histogram.csv; do
  [ -s "$out/$f" ] && pass "shard wrote $f ($(($(wc -l <"$out/$f") - 1)) lines)" || fail "shard wrote no $out/$f"
done
# The input reaches every part of the plots: fragments at the end, and a fitted exponent to draw.
last=$(tail -n 1 "$out/fragments.csv")
awk -F, -v l="$last" 'BEGIN { split(l, x, ","); exit !(x[3] > 2 && x[6] != "nan") }' &&
  pass "the run breaks up: last line $last" || fail "no fragments or no tau at the last output step: $last"

# png_size FILE MIN_BYTES: a PNG of at least MIN_BYTES bytes and at least 300 x 300 pixels (IHDR).
png_size() {
  local size wh
  png_ok "$1" || { fail "$1 missing or not a PNG"; return; }
  size=$(stat -c %s "$1")
  wh=$(od -An -tu1 -j16 -N8 "$1" | awk '{ printf "%d %d", $1*16777216 + $2*65536 + $3*256 + $4,
                                                          $5*16777216 + $6*65536 + $7*256 + $8 }')
  [ "$size" -ge "$2" ] && [ "${wh% *}" -ge 300 ] && [ "${wh#* }" -ge 300 ] &&
    pass "$(basename "$1") is a PNG of $size bytes, ${wh% *} x ${wh#* } pixels" ||
    fail "$1: $size bytes, ${wh% *} x ${wh#* } pixels (want >= $2 bytes, >= 300 x 300)"
}

msg=$("$PYTHON" "$PLOT" "$out" 2>&1)
rc=$?
expect_eq "plot.py OUTDIR: exit status" "$rc" 0
[ $rc -eq 0 ] || printf '%s\n' "$msg"
png_size "$out/fragments_history.png" 10000
png_size "$out/fragments_distribution.png" 10000

mkdir -p "$WORK/plots"
msg=$("$PYTHON" "$PLOT" "$out" --out "$WORK/plots/impact" 2>&1)
rc=$?
expect_eq "plot.py OUTDIR --out PREFIX: exit status" "$rc" 0
[ $rc -eq 0 ] || printf '%s\n' "$msg"
png_size "$WORK/plots/impact_fragments_history.png" 10000
png_size "$WORK/plots/impact_fragments_distribution.png" 10000

# Errors: exit 2 and one message naming what is wrong.
mkdir -p "$WORK/nocsv"
msg=$("$PYTHON" "$PLOT" "$WORK/nocsv" 2>&1)
expect_once "a folder without the CSV files" $? 2 "$msg" "plot.py: error: $WORK/nocsv/fragments.csv: no such file"
[ -e "$WORK/nocsv/fragments_history.png" ] && fail "a PNG was written for a folder without the CSV files"
mkdir -p "$WORK/badhead"
cp "$out/fragments_histogram.csv" "$WORK/badhead/"
sed '1s/n_fragments/fragments/' "$out/fragments.csv" >"$WORK/badhead/fragments.csv"
msg=$("$PYTHON" "$PLOT" "$WORK/badhead" 2>&1)
expect_once "a wrong header" $? 2 "$msg" "plot.py: error: $WORK/badhead/fragments.csv: bad header"
finish
