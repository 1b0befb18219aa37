#!/usr/bin/env bash
# A run owns its checkpoints: `keep` deletes only the files that record the run's id (a run restarted from a
# checkpoint carries on with that id), never another run's in the same folder; and `--out DIR` puts every file
# of a run in DIR, whatever folders the scene names.  Each case at 1 and 3 ranks.
#   - two scenes writing checkpoints into one folder with keep: 1: the first run's newest checkpoint survives the
#     second run, and the second run keeps only its own newest;
#   - the first run restarted from its checkpoint (its own id): its older files go, the second run's stay;
#   - a scene whose output.dir and checkpoint.dir name other folders, run with --out: everything in --out's.
# usage: checkpoint_keep.sh SHARD   (run in tests/io)
set -uo pipefail
# shellcheck source=tests/lib.sh
. ../lib.sh
test_init "$1"
need_hdf5

# Scene A (an elastic ball on a slab) every 7 steps, scene B (rigid bodies) every 10, both keep: 1.
strip_io scenes/restart.yaml > "$WORK/a.yaml"
printf 'checkpoint: {every: 7, keep: 1}\n' >> "$WORK/a.yaml"
strip_io scenes/restart_rigid.yaml > "$WORK/b.yaml"
printf 'checkpoint: {every: 10, keep: 1}\n' >> "$WORK/b.yaml"
# Scene C names other folders for its output and checkpoints.
strip_io scenes/restart.yaml > "$WORK/c.yaml"
printf 'output: {every: 10, dir: %s}\ncheckpoint: {every: 10, dir: %s}\n' "$WORK/c-output" "$WORK/c-checkpoints" \
  >> "$WORK/c.yaml"

ckpts() { (cd "$1" && ls checkpoint_*.h5 2>/dev/null | tr '\n' ' '); }
run_ok() { # NAME N ARGS...: a run that must succeed
  local name=$1 n=$2 out rc
  shift 2
  out=$(shard_run "$n" run "$@")
  rc=$?
  [ "$rc" = 0 ] || { printf '%s\n' "$out"; fail "$name at $n rank(s): exit $rc"; }
}

for n in 1 3; do
  d=$WORK/shared-$n
  run_ok "scene A" "$n" "$WORK/a.yaml" --steps 14 --out "$d"
  expect_eq "scene A keeps its newest checkpoint ($n rank(s))" "$(ckpts "$d")" "checkpoint_000014.h5 "
  # B writes steps 10, 20, 30: at 20, A's step 14 is older than B's newest, and not B's.
  run_ok "scene B" "$n" "$WORK/b.yaml" --steps 30 --out "$d"
  expect_eq "scene B leaves scene A's checkpoint ($n rank(s))" "$(ckpts "$d")" \
    "checkpoint_000014.h5 checkpoint_000030.h5 "
  # A continues from step 14 (its own id) to 35: its steps 14, 21, 28 go, B's 30 stays.
  run_ok "scene A restarted" "$n" "$WORK/a.yaml" --restart "$d/checkpoint_000014.h5" --steps 35 --out "$d"
  expect_eq "scene A restarted keeps its own newest, and scene B's ($n rank(s))" "$(ckpts "$d")" \
    "checkpoint_000030.h5 checkpoint_000035.h5 "
  out=$(shard_run "$n" run "$WORK/b.yaml" --restart "$d/checkpoint_000030.h5" --steps 40 --out "$d")
  expect_once "scene B restarts from its checkpoint ($n rank(s))" $? 0 "$out" "State hash:"

  o=$WORK/out-$n
  run_ok "scene C with --out" "$n" "$WORK/c.yaml" --steps 20 --out "$o"
  expect_eq "--out holds scene C's checkpoints ($n rank(s))" "$(ckpts "$o")" \
    "checkpoint_000010.h5 checkpoint_000020.h5 "
  [ -f "$o/particles_000020.h5" ] && [ -f "$o/particles.xmf" ] &&
    pass "--out holds scene C's output ($n rank(s))" || fail "--out: no output of scene C in $o ($n rank(s))"
  [ ! -e "$WORK/c-output" ] && [ ! -e "$WORK/c-checkpoints" ] &&
    pass "the scene's own folders are not made ($n rank(s))" ||
    fail "scene C wrote into its own folders despite --out ($n rank(s))"
  rm -rf "$WORK/c-output" "$WORK/c-checkpoints"
done

finish "a run deletes only its own checkpoints; --out holds every file of a run"
