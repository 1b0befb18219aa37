#!/usr/bin/env bash
# Installs Shard's dependencies (Debian 12 packages) when any is missing, then configures and builds Shard in
# build/ (Release).  Safe to run again: it only installs what is missing and rebuilds what changed.
#   BUILD_DIR   build folder (default: build)
#   CMAKE_ARGS  extra arguments for cmake (e.g. -DSHARD_NATIVE=ON)
#   SHARD_TEST_DEPS=1  also install what the tests use (scripts/test.sh sets it)
#   SHARD_WITH_CATALYST=1  install ParaView for in-situ visualisation (also with SHARD_TEST_DEPS=1) and require it
#                      (-DSHARD_WITH_CATALYST=ON); =0 builds without (OFF); =auto goes back to the default, AUTO
#                      (Catalyst on when ParaView is found).  Unset: the build folder's choice stays; a new one is AUTO.
#                      CMake looks for ParaView at every configure (cmake/catalyst.cmake), and this script configures
#                      every time, so a build folder configured before ParaView was installed picks it up here.
#   SHARD_SETUP_CONFIGURE_ONLY=1  only configure: no package installs, no build (tests/setup/catalyst_reconfigure.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake pkg-config openmpi-bin libopenmpi-dev libhdf5-openmpi-dev
          libfyaml-dev libtrilinos-zoltan-dev)
if [ "${SHARD_TEST_DEPS:-0}" = 1 ]; then
  packages+=(lammps)
  # I/O tests: h5dump/h5ls, ParaView's own XDMF reader (pvpython) and an X server for its rendering.
  packages+=(hdf5-tools python3-paraview xvfb xauth)
  # Scaling scripts and tests (jobs/scaling, tests/scaling): plots with Debian's matplotlib, GNU time for RSS.
  packages+=(python3-matplotlib time)
  # Sanitizer tests (tests/sanitize): clang with its ASan/UBSan runtime, llvm-symbolizer for the reports.
  packages+=(clang libclang-rt-dev llvm)
fi
if [ "${SHARD_TEST_DEPS:-0}" = 1 ] || [ "${SHARD_WITH_CATALYST:-}" = 1 ]; then
  # Catalyst: the CMake package and headers, pvpython for the scripts, an X server to render off-screen, and the
  # development packages ParaView's CMake configuration looks for (docs/insitu.md).
  for p in paraview-dev python3-paraview xvfb xauth libfreetype-dev libx11-dev libxml2-dev; do
    [[ " ${packages[*]} " == *" $p "* ]] || packages+=("$p")
  done
fi
case "${SHARD_WITH_CATALYST:-}" in
  '') ;;
  1) CMAKE_ARGS="${CMAKE_ARGS:-} -DSHARD_WITH_CATALYST=ON" ;;
  0) CMAKE_ARGS="${CMAKE_ARGS:-} -DSHARD_WITH_CATALYST=OFF" ;;
  auto | AUTO) CMAKE_ARGS="${CMAKE_ARGS:-} -DSHARD_WITH_CATALYST=AUTO" ;;
  *) echo "setup: SHARD_WITH_CATALYST must be 1, 0 or auto, got '$SHARD_WITH_CATALYST'" >&2; exit 2 ;;
esac
missing=()
[ "${SHARD_SETUP_CONFIGURE_ONLY:-0}" = 1 ] && packages=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" = 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

build=${BUILD_DIR:-build}
# shellcheck disable=SC2086
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} > "$build.cmake.log" 2>&1 || {
  cat "$build.cmake.log"; exit 1; }
grep -E '^-- Catalyst: |SHARD_WITH_CATALYST: ' "$build.cmake.log" | sed 's/^-- /setup: /' || true
rm -f "$build.cmake.log"
[ "${SHARD_SETUP_CONFIGURE_ONLY:-0}" = 1 ] && exit 0
cmake --build "$build" -j "$(nproc)"
