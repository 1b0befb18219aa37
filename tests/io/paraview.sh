#!/usr/bin/env bash
# ParaView's readers (XDMFReader, Xdmf3ReaderS/T, OpenDataFile's choice; absolute and relative paths) open
# Shard's XDMF output: points = particles in vertex cells, every array present, every time step listed, a
# rendered picture not blank (tests/io/check_xdmf.py under pvpython and xvfb-run); also for the
# output of a run killed in the middle of a checkpoint, which must be readable up to its last complete output.
# Exits 77 (ctest: skipped) only when pvpython or xvfb-run is not installed.
# usage: paraview.sh SHARD SHARD_FAULTS   (run in tests/io; SHARD_FAULTS, the test build, kills the second run)
set -uo pipefail
# shellcheck source=tests/lib.sh
. ../lib.sh
need_cmd pvpython "Debian: apt-get install python3-paraview"
need_cmd xvfb-run "Debian: apt-get install xvfb xauth"
test_init "$1"
FAULTS=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
need_hdf5
scene=scenes/restart.yaml
n=$(shard_run 1 check "$scene" | sed -n 's/^Particles: \([0-9]*\),.*/\1/p')
[ -n "$n" ] || { fail "no particle count from shard check"; finish; }

# pvpython CHECK-ARGS...: a crash of the X server or of the OpenGL context set-up (a signal, exit >= 128) is
# retried twice; a failed check is not.
pv() {
  local try rc
  for try in 1 2 3; do
    xvfb-run -a -s "-screen 0 1024x768x24 -noreset" pvpython check_xdmf.py "$@" > "$WORK/pv.log" 2>&1
    rc=$?
    [ $rc -lt 128 ] && break
    echo "(pvpython ended by a signal, exit $rc; retrying)"
  done
  grep -E '^(PASS|FAIL|all checks|[0-9]+ check)' "$WORK/pv.log" || tail -20 "$WORK/pv.log"
  [ $rc -eq 0 ] && grep -q '^all checks passed' "$WORK/pv.log"
}

shard_run 3 run "$scene" --steps 400 --out "$WORK/full" > "$WORK/full.log" || { cat "$WORK/full.log"; exit 1; }
pv "$WORK/full/particles.xmf" "$n" 9 "$WORK/full.png" || fail "complete run (3 ranks)"

SHARD_FAULT_CHECKPOINT=300:2 SHARD=$FAULTS shard_run 2 run "$scene" --steps 400 --out "$WORK/crash" > "$WORK/crash.log"
pv "$WORK/crash/particles.xmf" "$n" 7 "$WORK/crash.png" || fail "run killed during the step-300 checkpoint"

finish "ParaView reads the XDMF output"
