#!/usr/bin/env bash
# `shard partition` on a small block: the counts add up and agree with independent counts and with a real run.
#  - particles: `shard check`, the partition report and a lattice count (NX NY NZ) agree; owned sums to them;
#  - bonds (the work column) sum to a brute-force count of lattice pairs closer than the support radius;
#  - halo bytes = 120 x ghosts; neighbour counts symmetric in total; ghosts <= 2 x edge cut; the --per-rank
#    table and the summary rows agree with the CSV;
#  - a 3-rank `shard run` of the same scene reports the same owned, bond and edge-cut figures and the same bond
#    ghost counts (its halo lists, built by the start-up distribution, not by the statistics code) as
#    `shard partition` run on 3 processes, and on this block the 1-process prediction is the same table;
#  - P = 1024 on a 125 000-particle block, in one process.
# usage: partition.sh SHARD WORKDIR
set -uo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
test_init "$1" "$2"

NX=14 NY=12 NZ=10 P=3
scene=$WORK/block.yaml
cat >"$scene" <<YAML
run: {steps: 1, gravity: [0, 0, 0], output_dir: $WORK/out}
materials:
  m: {density: 1000, E: 1.0e9, nu: 0.25}
bodies:
  - name: block
    material: m
    shape: {box: {min: [0, 0, 0], max: [0.014, 0.012, 0.010]}}
    spacing: 0.001
    support: 2.2
    velocity: [0.01, 0, 0]
YAML

# Independent counts: lattice points and ordered pairs (i, j) with |x_i - x_j| < 2.2 a on the NX x NY x NZ lattice.
read -r n_lattice b_lattice <<<"$("$PYTHON" -c '
import math, sys
n = [int(x) for x in sys.argv[1:4]]; s = 2.2; R = 3; bonds = 0
for dx in range(-R, R + 1):
    for dy in range(-R, R + 1):
        for dz in range(-R, R + 1):
            r2 = dx * dx + dy * dy + dz * dz
            if r2 and math.sqrt(r2) < s:
                bonds += max(0, n[0] - abs(dx)) * max(0, n[1] - abs(dy)) * max(0, n[2] - abs(dz))
print(n[0] * n[1] * n[2], bonds)' $NX $NY $NZ)"

check=$(mpi_run 300 1 "$SHARD" check "$scene" 2>&1) || { fail "shard check: $check"; finish; }
n_check=$(sed -n 's/^Particles: \([0-9]*\), bonds: .*/\1/p' <<<"$check")
expect_eq "particles: shard check = lattice count" "$n_check" "$n_lattice"

rep=$(mpi_run 300 $P "$SHARD" partition "$scene" --ranks $P --per-rank --csv "$WORK/part.csv" 2>&1) ||
  { fail "shard partition: $rep"; finish; }
echo "$rep"
rep1=$(mpi_run 300 1 "$SHARD" partition "$scene" --ranks $P --per-rank 2>&1) || { fail "shard partition (1 process): $rep1"; finish; }
per_rank_table() { awk '/^ *rank +owned +bonds +ghosts/ { on = 1; next } on && NF == 6 { print }' <<<"$1"; }
expect_eq "partition on 1 process = on $P processes (per-rank table)" "$(per_rank_table "$rep1")" "$(per_rank_table "$rep")"
read -r n_rep b_rep cut_rep <<<"$(sed -n 's/^Particles: \([0-9]*\), bonds: \([0-9]*\) (.*edge cut: \([0-9]*\) .*/\1 \2 \3/p' <<<"$rep")"
expect_eq "particles: partition report = lattice count" "$n_rep" "$n_lattice"
expect_eq "bonds: partition report = brute-force pair count" "$b_rep" "$b_lattice"

# Sums over the CSV (awk by column name).
sums=$(awk -F, 'NR == 1 { for (k = 1; k <= NF; k++) c[$k] = k; next }
  { n++; o += $c["owned"]; b += $c["bonds"]; g += $c["ghosts"]; nb += $c["neighbours"];
    if ($c["halo_bytes"] != 120 * $c["ghosts"]) bad++;
    if ($c["neighbours"] > '$P' - 1 || ($c["ghosts"] > 0) != ($c["neighbours"] > 0)) badn++ }
  END { print n, o, b, g, nb, bad + 0, badn + 0 }' "$WORK/part.csv")
read -r rows owned bonds ghosts nbrs badbytes badnbr <<<"$sums"
expect_eq "CSV rows = ranks" "$rows" "$P"
expect_eq "sum of owned = particles" "$owned" "$n_lattice"
expect_eq "sum of bonds (work) = brute-force pair count" "$bonds" "$b_lattice"
expect_eq "halo_bytes = 120 x ghosts on every rank" "$badbytes" 0
expect_eq "neighbour counts in range, ghosts iff neighbours" "$badnbr" 0
[ $((nbrs % 2)) -eq 0 ] && pass "neighbour relation symmetric in total ($nbrs)" || fail "odd neighbour total $nbrs"
[ "$ghosts" -gt 0 ] && [ "$ghosts" -le $((2 * cut_rep)) ] && pass "0 < ghosts ($ghosts) <= 2 x edge cut ($cut_rep)" ||
  fail "ghosts $ghosts against edge cut $cut_rep"
# --per-rank table = CSV
table=$(awk '/^ *rank +owned +bonds +ghosts/ { on = 1; next } on && NF == 6 { print $1 "," $2 "," $3 "," $4 "," $5 "," $6 }' <<<"$rep")
expect_eq "--per-rank table = CSV" "$table" "$(tail -n +2 "$WORK/part.csv")"
# summary rows = CSV min / max
row_minmax() { awk -v name="$1" 'index($0, "  " name " ") == 1 { print $(NF - 3), $(NF - 1) }' <<<"$rep"; }
col_minmax() { awk -F, -v col="$1" 'NR == 1 { for (k = 1; k <= NF; k++) if ($k == col) c = k; next }
  { v = $c + 0; if (NR == 2 || v < mn) mn = v; if (NR == 2 || v > mx) mx = v } END { print mn, mx }' "$WORK/part.csv"; }
expect_eq "summary 'owned' min max = CSV" "$(row_minmax owned)" "$(col_minmax owned)"
expect_eq "summary 'bond ghosts' min max = CSV" "$(row_minmax "bond ghosts")" "$(col_minmax ghosts)"

# The same partition in a real 3-rank run: its figures come from the distributed particles and halo lists.
run=$(shard_run $P run "$scene" --steps 1) || { fail "3-rank run: $run"; finish; }
read -r omin _ omax <<<"$(sed -n 's/^Owned per rank: min \([0-9]*\) avg \([0-9.]*\) max \([0-9]*\) .*/\1 \2 \3/p' <<<"$run")"
expect_eq "run: owned min max = partition" "$omin $omax" "$(col_minmax owned)"
read -r b_run cut_run <<<"$(sed -n 's/^Bonds: \([0-9]*\) (.*edge cut \([0-9]*\);.*/\1 \2/p' <<<"$run")"
expect_eq "run: bonds = brute-force pair count" "$b_run" "$b_lattice"
expect_eq "run: edge cut = partition" "$cut_run" "$cut_rep"
bg=$(sed -n 's/^Bond ghosts per rank: min \([0-9]*\) avg \([0-9.]*\) max \([0-9]*\).*/\1 \2 \3/p' <<<"$run")
if [ -z "$bg" ]; then
  fail "run report has no 'Bond ghosts per rank: min X avg Y max Z' line (src/driver/report.c: shard_sim_report must print the bond-ghost counts of the halo lists)"
else
  read -r gmin gavg gmax <<<"$bg"
  pavg=$(awk -v g="$ghosts" -v p=$P 'BEGIN { printf "%.1f", g / p }')
  expect_eq "run: bond ghosts min avg max (halo lists) = partition" "$gmin $(awk -v a="$gavg" 'BEGIN { printf "%.1f", a }') $gmax" \
    "$(col_minmax ghosts | awk -v a="$pavg" '{ print $1, a, $2 }')"
fi

# P = 1024 on 125 000 particles (a 50^3 block): rank 0 alone, in seconds.
sed -e 's/max: \[0.014, 0.012, 0.010\]/max: [0.05, 0.05, 0.05]/' "$scene" >"$WORK/block50.yaml"
if out=$(mpi_run 300 1 "$SHARD" partition "$WORK/block50.yaml" --ranks 1024 --csv "$WORK/p1024.csv" 2>&1); then
  read -r rows owned <<<"$(awk -F, 'NR > 1 { n++; o += $2 } END { print n, o }' "$WORK/p1024.csv")"
  expect_eq "P=1024: CSV rows" "$rows" 1024
  expect_eq "P=1024: sum of owned" "$owned" 125000
else
  fail "P=1024 partition: $out"
fi
finish
