#!/usr/bin/env bash
# Restart equivalence: (run N steps) and (run k steps, checkpoint, restart on another rank count, run N - k)
# end with the same state hash, bit for bit; writing output and checkpoints does not change the state hash.
# usage: restart.sh SHARD   (run in tests/io)
set -uo pipefail
# shellcheck source=tests/lib.sh
. ../lib.sh
test_init "$1"
need_hdf5
scene=scenes/restart.yaml
N=400

ref=$(ref_hash "$scene" $N)
[ -n "$ref" ] || { fail "no reference hash"; finish; }
echo "reference: $N steps on 1 rank without output: $ref"

h=$(shard_run 2 run "$scene" --steps $N --out "$WORK/full" | hash_of)
expect_eq "output and checkpoints do not perturb the state (2 ranks)" "$h" "$ref"

# 1 -> 3: 200 steps on 1 rank (checkpoints at 100 and 200), then 3 ranks from step 200.
shard_run 1 run "$scene" --steps 200 --out "$WORK/a" > "$WORK/a.log"
# A restart that runs no step reports what the run that wrote the checkpoint did: the same Final line, its
# elastic energy with the restored contact springs (exact sums, so bit for bit on another rank count).
want=$(grep '^Final:' "$WORK/a.log")
got=$(shard_run 3 run "$scene" --restart "$WORK/a/checkpoint_000200.h5" --steps 200 --out "$WORK/a0" | grep '^Final:')
expect_eq "restart without a step (3 ranks): the Final line of step 200" "$got" "$want"
out=$(shard_run 3 run "$scene" --restart "$WORK/a/checkpoint_000200.h5" --steps $N --out "$WORK/a")
expect_eq "restart 1 -> 3 ranks at step 200" "$(printf '%s\n' "$out" | hash_of)" "$ref"
printf '%s\n' "$out" | grep -q "for 200 steps" && pass "restarted run ran 200 steps" ||
  fail "restarted run did not report 200 steps: $(printf '%s\n' "$out" | grep 'Loop time')"
grids=$(grep -c '<Grid Name="step_' "$WORK/a/particles.xmf")
expect_eq "XDMF after the restart lists all 9 outputs (0..400 every 50)" "$grids" 9
# The restart wrote its index whole at its first output and appended the rest; the uninterrupted run appended
# every grid: the same bytes.
cmp -s "$WORK/full/particles.xmf" "$WORK/a/particles.xmf" &&
  pass "XDMF after the restart equals the uninterrupted run's, byte for byte" ||
  fail "XDMF after the restart differs: $(diff "$WORK/full/particles.xmf" "$WORK/a/particles.xmf" | head -5)"

# A restart from an earlier checkpoint of a run that went further (to 400), to 350: its index and
# decomposition.csv list 0..350, each step once, none beyond; a row cut short by a killed append is dropped.
printf '37' >> "$WORK/full/decomposition.csv"
shard_run 2 run "$scene" --restart "$WORK/full/checkpoint_000300.h5" --steps 350 --out "$WORK/full" > "$WORK/r350.log"
want=$(seq -s ' ' 0 50 350)
got=$(sed -n 's/.*<Grid Name="step_0*\([0-9][0-9]*\)".*/\1/p' "$WORK/full/particles.xmf" | paste -sd' ' -)
expect_eq "XDMF after a restart at 300 to 350 of a run that went to 400: 0..350, each once" "$got" "$want"
got=$(tail -n +2 "$WORK/full/decomposition.csv" | cut -d, -f1 | paste -sd' ' -)
expect_eq "decomposition.csv after it: 0..350, each once, no row cut short" "$got" "$want"

# 4 -> 2: 100 steps on 4 ranks, then 2 ranks from step 100 with the scene stored in the checkpoint.
shard_run 4 run "$scene" --steps 100 --out "$WORK/b" > "$WORK/b.log"
h=$(shard_run 2 run --restart "$WORK/b/checkpoint_000100.h5" --steps $N --out "$WORK/b" | hash_of)
expect_eq "restart 4 -> 2 ranks at step 100 (scene from the checkpoint)" "$h" "$ref"

# 5 -> 3: 100 steps on 5 ranks, then 3 ranks from step 100, every rank reading its range of the file.
shard_run 5 run "$scene" --steps 100 --out "$WORK/c" > "$WORK/c.log"
out=$(shard_run 3 run "$scene" --restart "$WORK/c/checkpoint_000100.h5" --steps $N --out "$WORK/c")
expect_eq "restart 5 -> 3 ranks at step 100 (parallel read)" "$(printf '%s\n' "$out" | hash_of)" "$ref"
printf '%s\n' "$out" | grep -q "^Start-up: read on 3 rank(s)" && pass "the restart says it read the file on 3 ranks" ||
  fail "no Start-up line for the parallel read: $(printf '%s\n' "$out" | grep '^Start-up')"

# keep: 2 -> only the two newest of 100..400 remain
kept=$(find "$WORK/b" -maxdepth 1 -name 'checkpoint_*.h5' | wc -l)
expect_eq "checkpoints kept (keep: 2)" "$kept" 2
[ -f "$WORK/b/checkpoint_000400.h5" ] && [ -f "$WORK/b/checkpoint_000300.h5" ] && pass "newest two kept" ||
  fail "newest two checkpoints missing: $(ls "$WORK/b")"

# Restart in the middle of crack growth, on another rank count: broken bonds, debris and fragments carry over.
fscene=scenes/restart_fracture.yaml
fref=$(ref_hash "$fscene" 400)
shard_run 1 run "$fscene" --steps 400 --out "$WORK/f1" > "$WORK/f1.log"
expect_eq "fracture: output and checkpoints do not perturb the state" "$(hash_of "$WORK/f1.log")" "$fref"
broken=$(sed -n 's/^Fracture: \([0-9]*\) of.*/\1/p' "$WORK/f1.log")
[ -n "$broken" ] && [ "$broken" -gt 0 ] && pass "fracture: $broken bonds broken by step 400" ||
  fail "fracture: no bond broken ($(grep '^Fracture' "$WORK/f1.log"))"
shard_run 3 run "$fscene" --steps 200 --out "$WORK/f2" > /dev/null
mid=$(sed -n 's/^200,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,\([0-9]*\)$/\1/p' "$WORK/f2/fragments.csv")
[ -n "$mid" ] && [ "$mid" -gt 0 ] && [ "$mid" -lt "$broken" ] && pass "fracture: the checkpoint of step 200 is in the middle of crack growth ($mid bonds broken)" ||
  fail "fracture: step 200 is not in the middle of crack growth ($mid of $broken)"
out=$(shard_run 2 run "$fscene" --restart "$WORK/f2/checkpoint_000200.h5" --steps 400 --out "$WORK/f2")
expect_eq "fracture: restart 3 -> 2 ranks at step 200" "$(printf '%s\n' "$out" | hash_of)" "$fref"
expect_eq "fracture: the report's fracture line" "$(printf '%s\n' "$out" | grep '^Fracture:')" "$(grep '^Fracture:' "$WORK/f1.log")"
cmp -s "$WORK/f1/fragments.csv" "$WORK/f2/fragments.csv" && pass "fracture: fragments.csv of the restarted run equals the uninterrupted one's" ||
  fail "fracture: fragments.csv differs: $(diff "$WORK/f1/fragments.csv" "$WORK/f2/fragments.csv" | head -5)"
cmp -s "$WORK/f1/fragments_histogram.csv" "$WORK/f2/fragments_histogram.csv" && pass "fracture: fragments_histogram.csv too" ||
  fail "fracture: fragments_histogram.csv differs"

finish "restart equivalence"
