#!/usr/bin/env bash
# A run killed in the middle of writing a checkpoint (fault injection of the test build shard_faults:
# SHARD_FAULT_CHECKPOINT) leaves the previous checkpoint complete and loadable, its own partial file refused, and
# an XDMF index that lists exactly the outputs that were complete; restarting from the previous checkpoint is
# still bit-identical.  The shard program itself has no fault injection: it ignores the variable.
# usage: fault.sh SHARD SHARD_FAULTS   (run in tests/io)
set -uo pipefail
# shellcheck source=tests/lib.sh
. ../lib.sh
test_init "$1"
FAULTS=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
need_hdf5
scene=scenes/restart.yaml
N=400

ref=$(ref_hash "$scene" $N)

# shard itself: the variable changes nothing.
out=$(SHARD_FAULT_CHECKPOINT=100:1 shard_run 1 run "$scene" --steps 100 --out "$WORK/r")
rc=$?
if [ $rc -eq 0 ] && [ -f "$WORK/r/checkpoint_000100.h5" ]; then
  pass "shard ignores SHARD_FAULT_CHECKPOINT (its checkpoint written)"
else
  fail "shard with SHARD_FAULT_CHECKPOINT: exit $rc (a release program must have no fault injection): $out"
fi

# Killed after the 3rd dataset of the step-200 checkpoint, on 2 ranks.
out=$(SHARD_FAULT_CHECKPOINT=200:3 SHARD=$FAULTS shard_run 2 run "$scene" --steps $N --out "$WORK/f")
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] && pass "killed run exits non-zero ($rc)" || fail "killed run: exit $rc"
[ -f "$WORK/f/checkpoint_000100.h5" ] && pass "previous checkpoint present" || fail "checkpoint_000100.h5 missing"
[ ! -e "$WORK/f/checkpoint_000200.h5" ] && pass "no checkpoint_000200.h5 under the final name" ||
  fail "checkpoint_000200.h5 exists"
[ -f "$WORK/f/checkpoint_000200.h5.tmp" ] && pass "partial file left under the temporary name" ||
  fail "no partial checkpoint_000200.h5.tmp (was the run killed during the write?)"
grids=$(grep -c '<Grid Name="step_' "$WORK/f/particles.xmf")
expect_eq "XDMF lists the 5 complete outputs (0..200)" "$grids" 5
tail -n 1 "$WORK/f/particles.xmf" | grep -q '</Xdmf>' && pass "XDMF is complete" || fail "XDMF truncated"

out=$(shard_run 3 run "$scene" --restart "$WORK/f/checkpoint_000200.h5.tmp" --steps $N --out "$WORK/f")
rc=$?
n=$(printf '%s\n' "$out" | grep -c "shard: error: .*checkpoint_000200.h5.tmp: ")
if [ $rc -eq 3 ] && [ "$n" -eq 1 ]; then pass "partial file refused: $(printf '%s\n' "$out" | grep 'shard: error')"
else fail "partial file: exit $rc, $n message(s): $out"; fi

h=$(shard_run 3 run "$scene" --restart "$WORK/f/checkpoint_000100.h5" --steps $N --out "$WORK/f" | hash_of)
expect_eq "restart 2 -> 3 ranks from the previous checkpoint" "$h" "$ref"
[ ! -e "$WORK/f/checkpoint_000200.h5.tmp" ] && pass "the rerun replaced the partial file" ||
  fail "checkpoint_000200.h5.tmp still there"

finish "fault injection"
