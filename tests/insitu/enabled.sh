#!/usr/bin/env bash
# insitu.enabled: fails when ParaView is installed but this build has Catalyst off, so that a test run that could
# cover in-situ visualisation and does not is a failure, not a silent skip of every insitu.* test.
#   Catalyst on                                     PASS (and `shard --version` must say "Catalyst: on")
#   off, SHARD_WITH_CATALYST=OFF                    PASS with a note: the build left Catalyst out by choice
#   off, ParaView's CMake package installed         FAIL: says why (the configure's reason) and how to fix it
#   off, only pvpython (no paraview-dev)            SKIP (77): Catalyst cannot be built here
#   off, no ParaView at all                         SKIP (77)
# ParaView is looked for both at configure time (PV_CONFIG, cmake/catalyst.cmake's look) and now (the package
# file seen then, and the usual install locations), so ParaView installed after the last configure counts.
# usage: enabled.sh SHARD MODE FOUND BUILD_DIR [PV_CONFIG [REASON]]
#   MODE: SHARD_WITH_CATALYST as configured (AUTO, ON, OFF); FOUND: SHARD_CATALYST_FOUND (ON/OFF)
set -uo pipefail
shard=$1 mode=$2 found=$3 build=$4 pv_config=${5:-} reason=${6:-}
src=$(cd "$(dirname "$0")/../.." && pwd)
line=$("$shard" --version 2>&1 | grep '^Catalyst: ') || { echo "FAIL: insitu.enabled: '$shard --version' has no Catalyst line"; exit 1; }

case "$found" in
ON | on | TRUE | 1)
  [[ $line == "Catalyst: on"* ]] && { echo "PASS: insitu.enabled: $line (SHARD_WITH_CATALYST=$mode)"; exit 0; }
  echo "FAIL: insitu.enabled: configured with Catalyst but '$shard --version' says '$line': rebuild ($build)"
  exit 1 ;;
esac

# Catalyst is off.  Is ParaView here?
cmake_pkg=""
for f in "$pv_config" ${ParaView_DIR:+"$ParaView_DIR"/paraview-config.cmake} \
         /usr/lib/*/cmake/paraview-*/paraview-config.cmake /usr/lib/cmake/paraview-*/paraview-config.cmake \
         /usr/lib64/cmake/paraview-*/paraview-config.cmake /usr/local/lib/*/cmake/paraview-*/paraview-config.cmake \
         /usr/local/lib/cmake/paraview-*/paraview-config.cmake /usr/local/lib64/cmake/paraview-*/paraview-config.cmake; do
  if [ -n "$f" ] && [ -f "$f" ]; then cmake_pkg=$f; break; fi
done
pvpython=$(command -v "${PVPYTHON:-pvpython}" 2>/dev/null || true)

upper=$(printf '%s' "$mode" | tr '[:lower:]' '[:upper:]')
case "$upper" in
OFF | FALSE | NO | N | 0)
  echo "PASS: insitu.enabled: $line: the build was configured with SHARD_WITH_CATALYST=$mode on purpose," \
       "so no insitu.* test runs${cmake_pkg:+ although ParaView is installed ($cmake_pkg)}." \
       "Configure with -DSHARD_WITH_CATALYST=AUTO (or ON) to build and test in-situ visualisation."
  exit 0 ;;
esac

if [ -n "$cmake_pkg" ]; then
  if [ -n "$pv_config" ]; then
    seen="It saw ParaView ($pv_config): the configure's warning says what else was missing."
  else
    seen="It did not see ParaView: installed since, or hidden from CMake."
  fi
  cat <<EOF
FAIL: insitu.enabled: ParaView is installed ($cmake_pkg${pvpython:+, $pvpython}) but this build has Catalyst off
  ('$shard --version': $line), so none of the in-situ tests (insitu.*) was built or run.
  The last configure said: SHARD_WITH_CATALYST=$mode${reason:+: $reason}
  $seen
  Fix: reconfigure, which looks for ParaView again:
         cmake -S $src -B $build -DSHARD_WITH_CATALYST=AUTO && cmake --build $build
       (./scripts/setup.sh and ./scripts/test.sh configure every time; -DSHARD_WITH_CATALYST=ON makes a missing
       piece a configure error that says what it is.)
  Or, to build without Catalyst on purpose: cmake -B $build -DSHARD_WITH_CATALYST=OFF (this test then passes).
EOF
  exit 1
fi
if [ -n "$pvpython" ]; then
  echo "SKIP: insitu.enabled: $line; $pvpython is installed but not ParaView's CMake package (paraview-dev), so" \
       "Catalyst cannot be built here (apt-get install paraview-dev libfreetype-dev libx11-dev libxml2-dev g++," \
       "or SHARD_WITH_CATALYST=1 ./scripts/setup.sh; then reconfigure)"
  exit 77
fi
echo "SKIP: insitu.enabled: $line; ParaView is not installed, no in-situ test runs" \
     "(SHARD_WITH_CATALYST=1 ./scripts/setup.sh installs it and builds with Catalyst)"
exit 77
