#!/usr/bin/env bash
# In-situ (Catalyst) tests with the stand-in driver tests/insitu/insitu_driver (see its header) and the example
# scripts of jobs/catalyst/.  One case per call; each works in its own empty folder, made here.
#   extracts     2 ranks, extracts.py every 5 steps of 0..12: steps 0 5 10 written, 512 points, every field
#   empty_rank   3 ranks sharing 2 particles (rank 0 owns none): the extracts are still complete
#   optional     2 ranks, only positions passed: the extracts carry "rank" and nothing else; the output folder
#                comes from the driver (shard_insitu_create's out_dir)
#   render       2 ranks under xvfb-run, render_von_mises.py every 4 steps of 0..8: three PNGs, none blank
#   errors       a missing script, a syntax error, a script that raises at step 2 (at 2 and 3 ranks), every = 0:
#                each exits non-zero (not by timeout) with "shard: error: catalyst script '...': <reason>" printed
#                once, and a raising script's traceback printed once (by the lowest failing rank)
#   exported     docs/insitu.md's GUI recipe done headless (tests/insitu/export_state.py): a script saved with
#                File > Save Catalyst State from a sample extract renamed "input" runs: its CSV and PNG extracts
#                appear at the steps requested
#   live         live.py with tests/insitu/live_client.py as the ParaView GUI: the client receives the particles
#   shard_run    the real driver: `shard run` of tests/mpi/scenes/collide_obstacles.yaml at 2 ranks with the scene
#                key (extracts.py every 10 steps, into run.output_dir) and with --catalyst: the extracts are
#                complete, the state hash is the one of a run without Catalyst, the timing table has its In-situ
#                row, `shard --version` says "Catalyst: on", and a missing script stops shard with exit 3
#   fragments    the real driver on a breaking scene: `shard run` of tests/mpi/scenes/fracture_impact.yaml (with
#                output every 100 steps) at 2 ranks for 300 steps with fragments.py and tests/insitu/
#                fragments_check.py every 100 steps: four non-blank PNGs, fragments_live.csv equal to the same
#                columns of Shard's own fragments.csv, the field data checked on both ranks, the state hash of a run
#                without Catalyst; without matplotlib (hidden from the script) one warning and only the CSV; on a
#                scene that cannot break one warning and no files
#   rigid        the real driver on rigid bodies (tests/io/scenes/restart_rigid.yaml) at 2 ranks with
#                tests/insitu/rigid_check.py every 20 steps: block "frames" has the five frames on rank 0 and none
#                elsewhere, with their arrays, the same centre as the output file, and the state hash is unchanged
#   cloth        the stand-in's cloth (insitu_driver --cloth: the lattice's face y = 0, ghost vertices from the next
#                rank) at 2 ranks and at 3 (4 x 4 x 2: one rank lists no triangle, one has no vertex) with
#                tests/insitu/cloth_check.py and extracts.py every 2 steps of 0..4: block "surfaces" is there by name,
#                only triangles, GlobalIds, velocity, body and rank, the total number of triangles, each rank's
#                points and triangles; in the extracts every cloth point is where its particle is; a triangle that
#                points past its rank's points stops the run with exit 5 and one message; and shard itself on
#                tests/mpi/scenes/cloth_drape.yaml at 3 ranks: 1600 triangles, the state hash of the run without Catalyst
# usage: run.sh CASE DRIVER REPO WORKDIR [SHARD]   (exit 77: skipped, a tool is missing)
set -uo pipefail
case=$1 driver=$2 repo=$3 work=$4 shard=${5:-}
# shellcheck source=tests/lib.sh
. "$repo/tests/lib.sh"
scripts=$repo/jobs/catalyst here=$repo/tests/insitu
pvpython=${PVPYTHON:-/usr/bin/pvpython}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
# A case stops at its first failure (the library's fail counts and goes on).
fail() { echo "FAIL: $case: $*"; exit 1; }
# run LOG N ARGS...: the driver on N ranks, stdout+stderr to LOG; never longer than 120 s
run() { local log=$1 n=$2; shift 2; mpi_run 120 "$n" "$driver" "$@" >"$log" 2>&1; }
# xrun LOG SECONDS CMD...: CMD under a virtual X server, stdout+stderr to LOG.  -noreset: by default an X server
# resets when its last client disconnects and refuses connections meanwhile, so a rank that connects just after
# another rank's short probe connection closed fails (about one connection in ten here, and ParaView aborts).
# -a looks for a free display from -n upwards; a random start keeps two tests that start together apart.  The
# time limit applies to CMD inside xvfb-run, so that xvfb-run still stops its X server when CMD is killed.
xrun() {
  local log=$1 secs=$2
  shift 2
  xvfb-run -a -n $((100 + RANDOM % 800)) -s "-screen 0 1280x1024x24 -noreset" timeout "$secs" "$@" >"$log" 2>&1
}

case $case in
extracts)
  need_cmd "$pvpython"
  SHARD_CATALYST_OUT=out run run.log 2 --script "$scripts/extracts.py" --every 5 --steps 12 || { cat run.log; fail "run failed"; }
  "$pvpython" "$here/check_extracts.py" out 512 2 0 5 10 || fail "extracts"
  ;;
empty_rank)
  need_cmd "$pvpython"
  SHARD_CATALYST_OUT=out run run.log 3 --script "$scripts/extracts.py" --every 3 --steps 4 --lattice 2 1 1 ||
    { cat run.log; fail "run failed"; }
  "$pvpython" "$here/check_extracts.py" out 2 3 0 3 || fail "extracts"
  ;;
optional)
  need_cmd "$pvpython"
  # The folder comes from the driver (shard_insitu_create's out_dir) this time, not from the environment.
  env -u SHARD_CATALYST_OUT mpiexec -n 2 "$driver" --script "$scripts/extracts.py" --every 2 --steps 3 \
    --fields position --out out >run.log 2>&1 || { cat run.log; fail "run failed"; }
  "$pvpython" "$here/check_extracts.py" out 512 2 0 2 --only-position || fail "extracts"
  ;;
render)
  need_cmd xvfb-run
  SHARD_CATALYST_OUT=out SHARD_CATALYST_SIZE=640,480 xrun run.log 180 mpiexec -n 2 "$driver" \
    --script "$scripts/render_von_mises.py" --every 4 --steps 8 || { cat run.log; fail "run failed"; }
  for s in 000000 000004 000008; do [ -s "out/von_mises_$s.png" ] || fail "out/von_mises_$s.png missing"; done
  [ "$(ls out/*.png | wc -l)" = 3 ] || fail "expected 3 images, got: $(ls out)"
  "$PYTHON" "$here/check_png.py" 50 out/*.png || fail "blank image"
  ;;
errors)
  printf 'from paraview.simple import *\nsource = PVTrivialProducer(registrationName="input"\n' >broken.py
  printf 'from paraview import catalyst\nfrom paraview.simple import *\nsource = PVTrivialProducer(registrationName="input")\noptions = catalyst.Options()\n\ndef catalyst_execute(info):\n    if info.timestep == 2:\n        raise RuntimeError("no data for you")\n' >raises.py
  check() { # name ranks expected-message driver-args...: exits non-zero (not by timeout), the message once
    local name=$1 n=$2 want=$3
    shift 3
    run "$name.log" "$n" "$@"
    expect_once "$name ($n ranks)" $? error "$(cat "$name.log")" "$want"
  }
  check missing 2 "shard: error: catalyst script 'no_such_script.py': cannot read it: No such file or directory" \
    --script no_such_script.py
  check syntax 2 "shard: error: catalyst script 'broken.py': SyntaxError at line 2" --script broken.py
  check raises 2 "shard: error: catalyst script 'raises.py': failed at step 2: RuntimeError: no data for you" \
    --script raises.py --steps 4
  check raises_3 3 "shard: error: catalyst script 'raises.py': failed at step 2: RuntimeError: no data for you" \
    --script raises.py --steps 4
  [ "$(grep -c "Traceback (most recent call last)" raises_3.log)" = 1 ] || { cat raises_3.log; fail "traceback not printed once"; }
  check every 2 "shard: error: catalyst script '$scripts/extracts.py': every must be an integer >= 1, got 0" \
    --script "$scripts/extracts.py" --every 0
  ;;
exported)
  need_cmd "$pvpython"
  need_cmd xvfb-run
  SHARD_CATALYST_OUT=sample run sample.log 1 --script "$scripts/extracts.py" --every 5 --steps 5 ||
    { cat sample.log; fail "sample run failed"; }
  xrun export.log 120 "$pvpython" "$here/export_state.py" sample/particles_000005.vtpc pipeline.py out ||
    { cat export.log; fail "saving the Catalyst state failed"; }
  grep -q "registrationName='input'" pipeline.py || fail "the saved state has no source named 'input'"
  xrun run.log 180 mpiexec -n 2 "$driver" --script pipeline.py --every 4 --steps 8 || { cat run.log; fail "run failed"; }
  for s in 000000 000004 000008; do
    [ -s "out/particles_$s.csv" ] || fail "out/particles_$s.csv missing"
    [ -s "out/view_$s.png" ] || fail "out/view_$s.png missing"
  done
  [ "$(ls out | wc -l)" = 6 ] || fail "expected 6 extracts, got: $(ls out)"
  rows=$(($(wc -l <out/particles_000004.csv) - 1))
  [ "$rows" = 512 ] || fail "out/particles_000004.csv has $rows rows, expected 512"
  # Points drawn one pixel wide on the default background: not blank is all that is asked here.
  "$PYTHON" "$here/check_png.py" 1 out/view_*.png || fail "blank image"
  ;;
live)
  need_cmd "$pvpython"
  port=$((22300 + RANDOM % 600))
  timeout 150 "$pvpython" "$here/live_client.py" "$port" 512 120 >client.log 2>&1 &
  client=$!
  for _ in $(seq 1 600); do grep -q "client: listening" client.log 2>/dev/null && break; sleep 0.1; done
  grep -q "client: listening" client.log || { cat client.log; kill "$client"; fail "the live client did not start"; }
  SHARD_CATALYST_LIVE_URL=localhost:$port run run.log 2 --script "$scripts/live.py" --steps 40 --work 0.1
  rc=$?
  wait "$client"
  crc=$?
  cat client.log
  [ $rc -eq 0 ] || { cat run.log; fail "simulation exit status $rc"; }
  [ $crc -eq 0 ] || fail "the live client did not receive the particles"
  ;;
shard_run)
  need_cmd "$pvpython"
  [ -x "$shard" ] || fail "no shard executable given"
  "$shard" --version | grep -qx "Catalyst: on (ParaView .*)" || fail "shard --version: $("$shard" --version | grep Catalyst)"
  scene=$repo/tests/mpi/scenes/collide_obstacles.yaml
  particles=$("$shard" check "$scene" | sed -n 's/^Particles: \([0-9]*\).*/\1/p')
  sed "s|output_dir: .*||" "$scene" >plain.yaml
  { cat plain.yaml; printf 'catalyst: {script: %s, every: 10}\n' "$scripts/extracts.py"; } >with.yaml
  timeout 300 mpiexec -n 2 "$shard" run plain.yaml --steps 20 --quiet --out plain >plain.log 2>&1 ||
    { cat plain.log; fail "run without Catalyst failed"; }
  env -u SHARD_CATALYST_OUT timeout 300 mpiexec -n 2 "$shard" run with.yaml --steps 20 --quiet --out scene \
    >scene.log 2>&1 || { cat scene.log; fail "run with the catalyst key failed"; }
  "$pvpython" "$here/check_extracts.py" scene "$particles" 2 0 10 20 || fail "extracts of the scene key"
  [ -n "$(hash_of plain.log)" ] && [ "$(hash_of plain.log)" = "$(hash_of scene.log)" ] ||
    fail "state hash $(hash_of scene.log) with Catalyst, $(hash_of plain.log) without"
  grep -q "^In-situ " scene.log || fail "no In-situ row in the timing table"
  env -u SHARD_CATALYST_OUT timeout 300 mpiexec -n 2 "$shard" run plain.yaml --steps 20 --quiet --out cli \
    --catalyst "$scripts/extracts.py" --catalyst-every 20 >cli.log 2>&1 || { cat cli.log; fail "--catalyst run failed"; }
  "$pvpython" "$here/check_extracts.py" cli "$particles" 2 0 20 || fail "extracts of --catalyst"
  mpi_run 120 2 "$shard" run plain.yaml --steps 5 --catalyst no_such.py >missing.log 2>&1
  expect_once "missing script" $? 3 "$(cat missing.log)" "shard: error: catalyst script 'no_such.py': cannot read it"
  ;;
fragments)
  need_cmd "$pvpython"
  [ -x "$shard" ] || fail "no shard executable given"
  "$pvpython" -c 'import matplotlib' 2>/dev/null ||
    skip "ParaView's Python has no matplotlib (apt-get install python3-matplotlib; scripts/setup.sh with SHARD_TEST_DEPS=1)"
  "$shard" --version | grep -q "HDF5: not built in" && skip "this shard was built without parallel HDF5 (output)"
  { cat "$repo/tests/mpi/scenes/fracture_impact.yaml"; printf 'output: {every: 100, fields: [fragment]}\n'; } >scene.yaml
  mpi_run 300 2 "$shard" run scene.yaml --steps 300 --quiet --out plain >plain.log 2>&1 ||
    { cat plain.log; fail "run without Catalyst failed"; }
  env -u SHARD_CATALYST_OUT timeout 300 mpiexec -n 2 "$shard" run scene.yaml --steps 300 --quiet --out out \
    --catalyst "$scripts/fragments.py" --catalyst "$here/fragments_check.py" --catalyst-every 100 >run.log 2>&1 ||
    { cat run.log; fail "run with fragments.py failed"; }
  [ -n "$(hash_of plain.log)" ] && [ "$(hash_of plain.log)" = "$(hash_of run.log)" ] ||
    fail "state hash $(hash_of run.log) with Catalyst, $(hash_of plain.log) without"
  cmp -s plain/fragments.csv out/fragments.csv || fail "fragments.csv differs with Catalyst: $(diff plain/fragments.csv out/fragments.csv)"
  for s in 000000 000100 000200 000300; do png_ok "out/fragments_$s.png" || fail "out/fragments_$s.png missing or not a PNG"; done
  [ "$(ls out/fragments_*.png | wc -l)" = 4 ] || fail "expected 4 images, got: $(ls out)"
  "$PYTHON" "$here/check_png.py" 50 out/fragments_*.png || fail "blank image"
  [ "$(sed 1d out/fragments_live.csv | wc -l)" = 4 ] || fail "fragments_live.csv: $(cat out/fragments_live.csv)"
  # The script's columns step,time,n_fragments,largest_fraction,tau and Shard's, header included, to the digit.
  cut -d, -f1-4,6 out/fragments.csv >shard_columns.csv
  cmp -s shard_columns.csv out/fragments_live.csv ||
    fail "fragments_live.csv is not fragments.csv's columns: $(diff shard_columns.csv out/fragments_live.csv)"
  want=$(sed 1d out/fragments.csv | cut -d, -f1,3 | tr , ' ')
  for r in 0 1; do
    [ "$(cut -d' ' -f1,2 "out/fragments_check_$r.txt" 2>/dev/null)" = "$want" ] ||
      fail "field data on rank $r: $(cat "out/fragments_check_$r.txt" 2>/dev/null) (want steps and counts $want)"
  done
  # Without matplotlib: a wrapper makes `import matplotlib` raise ImportError, then runs the script itself.
  printf '# script-version: 2\nimport os, sys\nsys.modules["matplotlib"] = None\npath = os.environ["FRAGMENTS_PY"]\nexec(compile(open(path).read(), path, "exec"))\n' >no_matplotlib.py
  FRAGMENTS_PY=$scripts/fragments.py SHARD_CATALYST_OUT=nompl mpi_run 300 2 "$shard" run scene.yaml --steps 100 \
    --quiet --out nompl_out --catalyst no_matplotlib.py --catalyst-every 50 >nompl.log 2>&1
  expect_once "without matplotlib" $? 0 "$(cat nompl.log)" "fragments.py: warning: matplotlib cannot be imported" ||
    fail "no single warning without matplotlib"
  [ "$(sed 1d nompl/fragments_live.csv | wc -l)" = 3 ] || fail "without matplotlib: $(cat nompl/fragments_live.csv)"
  [ -z "$(ls nompl/*.png 2>/dev/null)" ] || fail "images without matplotlib: $(ls nompl)"
  # A scene that cannot break: no statistics, one warning, nothing written.
  sed "s|output_dir: .*||" "$repo/tests/mpi/scenes/collide_obstacles.yaml" >solid.yaml
  SHARD_CATALYST_OUT=solid mpi_run 300 2 "$shard" run solid.yaml --steps 10 --quiet --catalyst "$scripts/fragments.py" \
    --catalyst-every 5 >solid.log 2>&1
  expect_once "no fracture" $? 0 "$(cat solid.log)" "fragments.py: warning: no fragment statistics in the data" ||
    fail "no single warning without fracture"
  [ ! -e solid ] || fail "files without fracture: $(ls solid)"
  ;;
rigid)
  need_cmd "$pvpython"
  [ -x "$shard" ] || fail "no shard executable given"
  "$shard" --version | grep -q "HDF5: not built in" && skip "this shard was built without parallel HDF5 (output)"
  sed "s|output_dir: .*||" "$repo/tests/io/scenes/restart_rigid.yaml" >scene.yaml
  mpi_run 300 2 "$shard" run scene.yaml --steps 40 --quiet --out plain >plain.log 2>&1 ||
    { cat plain.log; fail "run without Catalyst failed"; }
  RIGID_BODIES=5 SHARD_CATALYST_OUT=out timeout 300 mpiexec -n 2 "$shard" run scene.yaml --steps 40 --quiet \
    --out out --catalyst "$here/rigid_check.py" --catalyst-every 20 >run.log 2>&1 ||
    { cat run.log; fail "run with rigid_check.py failed"; }
  [ -n "$(hash_of plain.log)" ] && [ "$(hash_of plain.log)" = "$(hash_of run.log)" ] ||
    fail "state hash $(hash_of run.log) with Catalyst, $(hash_of plain.log) without"
  [ "$(cut -d' ' -f1,2 out/rigid_check_0.txt | tr '\n' ' ')" = "0 5 20 5 40 5 " ] ||
    fail "rank 0 saw: $(cat out/rigid_check_0.txt)"
  [ "$(cut -d' ' -f1,2 out/rigid_check_1.txt | tr '\n' ' ')" = "0 0 20 0 40 0 " ] ||
    fail "rank 1 saw: $(cat out/rigid_check_1.txt)"
  # the first frame's height at step 40 is the one the output file holds (h5dump prints a few digits)
  if command -v h5dump >/dev/null; then
    z=$(h5dump -d /frames/position -s "0,2" -c "1,1" plain/particles_000040.h5 2>/dev/null | sed -n 's/^ *(0,2): //p')
    got=$(awk '$1 == 40 { print $5 }' out/rigid_check_0.txt)
    awk -v a="$z" -v b="$got" 'BEGIN { exit !(a != "" && a > 0.04 && a - b < 1e-6 && b - a < 1e-6) }' ||
      fail "frame 0 at z = $got in Catalyst, '$z' in the output"
  fi
  ;;
cloth)
  need_cmd "$pvpython"
  # cloth_case RANKS NX NY NZ TRIANGLES "POINTS TRIANGLES"...: the last, one per rank, what each rank's partition
  # holds at every execution
  cloth_case() {
    local n=$1 nx=$2 ny=$3 nz=$4 triangles=$5 out=out_$1 r=0 want
    shift 5
    CLOTH_TRIANGLES=$triangles SHARD_CATALYST_OUT=$out run "run_$n.log" "$n" --cloth --lattice "$nx" "$ny" "$nz" \
      --script "$here/cloth_check.py" --every 2 --script "$scripts/extracts.py" --every 2 --steps 4 ||
      { cat "run_$n.log"; fail "run at $n ranks failed"; }
    for want; do
      [ "$(tr '\n' ' ' <"$out/cloth_check_$r.txt")" = "0 $want 2 $want 4 $want " ] ||
        fail "$n ranks: rank $r saw '$(cat "$out/cloth_check_$r.txt" 2>/dev/null)', want '$want' at steps 0 2 4"
      r=$((r + 1))
    done
    "$pvpython" "$here/check_extracts.py" "$out" $((nx * ny * nz)) "$n" 0 2 4 --cloth "$triangles" ||
      fail "extracts at $n ranks"
  }
  # 2 ranks: rank 0 lists the squares of rows z = 0, 1 and passes rank 1's row z = 2 as ghosts
  cloth_case 2 16 8 4 90 "48 60" "32 30"
  cloth_case 3 4 4 2 6 "8 6" "4 0" "0 0"
  SHARD_CATALYST_OUT=bad run bad.log 2 --cloth --cloth-bad 1 --script "$scripts/extracts.py" --steps 2
  expect_once "triangle past the points" $? 5 "$(cat bad.log)" "shard: error: Catalyst: block \"surfaces\" on rank 1:" \
    "triangle 29 of 30 has a vertex that is not one of the rank's 32 cell points"
  [ ! -e bad ] || fail "extracts written despite the bad triangle: $(ls bad)"
  # shard itself: the cloths of tests/mpi/scenes/cloth_drape.yaml (2 x 24 x 24 + 2 x 12 x 8 + 2 x 16 x 8 = 1600
  # triangles, ghost vertices across the 3 ranks), the same state hash as without Catalyst
  if [ -x "$shard" ] && ! "$shard" --version | grep -q "HDF5: not built in"; then
    cp "$repo/tests/mpi/scenes/cloth_drape.yaml" "$repo/tests/mpi/scenes/sleeve.obj" .
    mpi_run 300 3 "$shard" run cloth_drape.yaml --steps 20 --quiet --out plain >plain.log 2>&1 ||
      { cat plain.log; fail "cloth_drape without Catalyst failed"; }
    CLOTH_TRIANGLES=1600 SHARD_CATALYST_OUT=drape timeout 300 mpiexec -n 3 "$shard" run cloth_drape.yaml --steps 20 \
      --quiet --out drape --catalyst "$here/cloth_check.py" --catalyst-every 10 >drape.log 2>&1 ||
      { cat drape.log; fail "cloth_drape with cloth_check.py failed"; }
    [ -n "$(hash_of plain.log)" ] && [ "$(hash_of plain.log)" = "$(hash_of drape.log)" ] ||
      fail "cloth_drape: state hash $(hash_of drape.log) with Catalyst, $(hash_of plain.log) without"
    total=0
    for r in 0 1 2; do
      total=$((total + $(awk '$1 == 20 { print $3 }' "drape/cloth_check_$r.txt")))
    done
    [ "$total" = 1600 ] || fail "cloth_drape: the ranks' partitions hold $total triangles at step 20, not 1600"
  fi
  ;;
*)
  fail "unknown case"
  ;;
esac
finish "$case"
