#!/usr/bin/env bash
# Temporary files in the output folder are never opened through what another party put at their names: a
# symbolic link planted at the temporary name of an output file, of the XDMF index, of a checkpoint or of a CSV
# table (to a file, or dangling) ends the run with exit status 6 and one message naming it, at 1 and 3 ranks,
# and the link's target is neither written nor created; the link itself stays.  A leftover regular file at a
# temporary name (a write an earlier run did not finish) is replaced and the run succeeds.
# usage: tmp_links.sh SHARD   (run in tests/io)
set -uo pipefail
# shellcheck source=tests/lib.sh
. ../lib.sh
test_init "$1"
need_hdf5

# case NAME RANKS SCENE STEPS TMP LINK: runs SCENE for STEPS steps into a fresh folder where TMP (a temporary
# name) is a symbolic link to LINK ("file": a file with known contents; "none": a name that does not exist).
case_link() {
  local name=$1 n=$2 scene=$3 steps=$4 tmp=$5 link=$6 dir out rc
  dir=$WORK/$name.$n
  mkdir -p "$dir/out"
  printf 'precious\n' > "$dir/target"
  if [ "$link" = file ]; then ln -s ../target "$dir/out/$tmp"; else ln -s ../absent "$dir/out/$tmp"; fi
  out=$(shard_run "$n" run "$scene" --steps "$steps" --out "$dir/out")
  rc=$?
  expect_once "$name ($n rank(s))" "$rc" 6 "$out" "'$dir/out/$tmp' is a symbolic link: not replaced (remove it)"
  [ "$(cat "$dir/target")" = precious ] && pass "$name ($n rank(s)): the target is untouched" ||
    fail "$name ($n rank(s)): the target was written"
  [ ! -e "$dir/absent" ] && pass "$name ($n rank(s)): nothing created through the link" ||
    fail "$name ($n rank(s)): $dir/absent was created through the link"
  [ -L "$dir/out/$tmp" ] && pass "$name ($n rank(s)): the link stays" || fail "$name ($n rank(s)): the link is gone"
}

for n in 1 3; do
  case_link output "$n" scenes/restart.yaml 10 particles_000000.h5.tmp file
  case_link output_dangling "$n" scenes/restart.yaml 10 particles_000000.h5.tmp none
  case_link xdmf "$n" scenes/restart.yaml 10 particles.xmf.tmp file
  case_link checkpoint "$n" scenes/restart.yaml 120 checkpoint_000100.h5.tmp file
  case_link csv "$n" scenes/restart_fracture.yaml 10 fragments.csv.tmp none
  # the outputs written before the checkpoint failed are complete and listed
  [ -f "$WORK/checkpoint.$n/out/particles_000100.h5" ] &&
    grep -q 'particles_000100.h5' "$WORK/checkpoint.$n/out/particles.xmf" &&
    pass "checkpoint ($n rank(s)): the outputs before it are complete" ||
    fail "checkpoint ($n rank(s)): earlier outputs missing"

  # a leftover regular file of an unfinished write is replaced
  dir=$WORK/leftover.$n
  mkdir -p "$dir"
  printf 'partial\n' > "$dir/particles_000000.h5.tmp"
  printf 'partial\n' > "$dir/particles.xmf.tmp"
  out=$(shard_run "$n" run scenes/restart.yaml --steps 10 --out "$dir")
  rc=$?
  if [ $rc -eq 0 ] && [ -f "$dir/particles_000000.h5" ] && [ ! -e "$dir/particles_000000.h5.tmp" ] &&
    [ ! -e "$dir/particles.xmf.tmp" ]; then
    pass "leftover temporary files replaced ($n rank(s))"
  else
    printf '%s\n' "$out"
    fail "leftover temporary files ($n rank(s)): exit $rc"
  fi
done
finish "temporary files and planted links"
