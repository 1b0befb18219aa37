#!/usr/bin/env bash
# Load balancing, migration and contact ghosts that follow the pieces (docs/models/parallel.md, "Load balancing"
# and "Contact ghosts"), on scenes/spread_tiles.yaml: a plate cut into 16 tiles bursts while it is thrown
# across the domain, and the tiles fly apart.  (With a graph partition at start-up, each rank held tiles from all
# over the plate, and with one box per body and rank the busiest rank held 1024 contact ghosts for 512 owned
# particles at the end at 4 ranks.)
#  1. At 4 ranks without `balance`: the state hash of 1 rank; the busiest rank's contact ghosts and bytes sent
#     per step (decomposition.csv) stay within twice their first value (the start-up partition gives each rank
#     a region, and one box per cluster of a rank's particles keeps the space between its tiles free of ghosts).
#  2. At 3 ranks with `balance: {every: 10, threshold: 1, cost: counts}` (rcb, a new partition at every check
#     whose counts are not equal, with weights that do not depend on timing; at 4 ranks the start-up partition
#     is already balanced and nothing moves): the same hash, migrations (rcb keeps the tiles whole, which the
#     start-up partition does not), and the same bound.
#  3. Migrations across a restart: with a new partition at every tenth step by the hypergraph repartitioner
#     (threshold 1: particles move at every check) on 3 ranks, the report counts the migrations, the particles
#     moved and their bytes, and the checkpoint of step 400 is written after them; restarted on 2 ranks (where it
#     keeps migrating), the run ends with the uninterrupted hash.
# Each run's ghosts and bytes per step are printed.
# usage: balance.sh SHARD   (run in tests/mpi)
set -uo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
test_init "$1"
need_hdf5
scene=scenes/spread_tiles.yaml
N=623
ref=$(ref_hash "$scene" $N)
[ -n "$ref" ] || { fail "no reference hash"; finish; }
echo "reference: $N steps on 1 rank: $ref"

# column NAME of decomposition.csv over the rows after step 0 (the first has bytes per step since step 0):
# its first value and its largest
csv_col() { awk -F, -v name="$2" 'NR == 1 { for (k = 1; k <= NF; k++) if ($k == name) c = k; next } $1 == 0 { next }
  { v = $c + 0; if (!seen) { first = v; seen = 1 } if (v > max) max = v } END { printf "%g %g\n", first, max }' "$1"; }
within_2x() { # WHAT DIR
  local g0 gmax b0 bmax
  read -r g0 gmax < <(csv_col "$2/decomposition.csv" contact_ghosts_max)
  read -r b0 bmax < <(csv_col "$2/decomposition.csv" bytes_per_step_max)
  echo "$1: contact ghosts (busiest rank) first $g0, largest $gmax; bytes per step (busiest rank) first $b0, largest $bmax"
  awk -v a="$gmax" -v b="$g0" -v c="$bmax" -v d="$b0" 'BEGIN { exit !(b > 0 && d > 0 && a <= 2 * b && c <= 2 * d) }' &&
    pass "$1: contact ghosts and bytes per step stay within 2x" ||
    fail "$1: contact ghosts ($g0 -> $gmax) or bytes per step ($b0 -> $bmax) grew past 2x"
}

# the scene with an output section (decomposition.csv is written at every output step)
{ cat "$scene"; printf 'output: {every: 25, fields: [position]}\n'; } > "$WORK/plain.yaml"
out=$(shard_run 4 run "$WORK/plain.yaml" --out "$WORK/plain")
expect_eq "4 ranks without balancing" "$(printf '%s\n' "$out" | hash_of)" "$ref"
within_2x "without balancing" "$WORK/plain"

{ cat "$WORK/plain.yaml"; printf 'balance: {every: 10, threshold: 1, cost: counts}\n'; } > "$WORK/balanced.yaml"
out=$(shard_run 3 run "$WORK/balanced.yaml" --out "$WORK/bal")
expect_eq "3 ranks with balancing" "$(printf '%s\n' "$out" | hash_of)" "$ref"
printf '%s\n' "$out" | grep -q '^Balance (.* [1-9][0-9]* migration(s)' && pass "3 ranks: particles migrated" ||
  fail "3 ranks: no migration: $(printf '%s\n' "$out" | grep '^Balance (')"
within_2x "with balancing" "$WORK/bal"

{ cat "$WORK/plain.yaml"; printf 'balance: {every: 10, threshold: 1, method: graph}\ncheckpoint: {every: 100, keep: 10}\n'; } \
  > "$WORK/always.yaml"
out=$(shard_run 3 run "$WORK/always.yaml" --out "$WORK/b3" --steps 400)
line=$(printf '%s\n' "$out" | grep '^Balance (')
migr=$(printf '%s\n' "$line" | sed -n 's/.* \([0-9]*\) migration(s).*/\1/p')
moved=$(printf '%s\n' "$line" | sed -n 's/.* \([0-9]*\) particle(s) moved.*/\1/p')
mbytes=$(printf '%s\n' "$out" | sed -n 's/.*migrations \([0-9]*\); busiest.*/\1/p')
[ "${migr:-0}" -gt 0 ] && [ "${moved:-0}" -gt 0 ] && [ "${mbytes:-0}" -gt 0 ] &&
  pass "3 ranks: the report counts $migr migration(s), $moved particles moved, $mbytes bytes" ||
  fail "3 ranks: report '$line', migration bytes '$mbytes'"
ck3="$WORK/b3/checkpoint_000400.h5"
[ -f "$ck3" ] || { fail "3 ranks: no checkpoint of step 400"; finish; }
out=$(shard_run 2 run "$WORK/always.yaml" --restart "$ck3" --out "$WORK/b2")
expect_eq "restart on 2 ranks from a checkpoint written on 3 after migrations" "$(printf '%s\n' "$out" | hash_of)" "$ref"
printf '%s\n' "$out" | grep -q '^Balance (.* [1-9][0-9]* migration(s)' && pass "the restarted run migrates too" ||
  fail "the restarted run did not migrate: $(printf '%s\n' "$out" | grep '^Balance (')"
finish
