#!/usr/bin/env bash
# Installs Shard's dependencies (Debian 12 packages) when any is missing, then configures and builds Shard in
# build/ (Release).  Safe to run again: it only installs what is missing and rebuilds what changed.
#   BUILD_DIR   build folder (default: build)
#   CMAKE_ARGS  extra arguments for cmake (e.g. -DSHARD_NATIVE=ON)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake pkg-config openmpi-bin libopenmpi-dev libmetis-dev libhdf5-openmpi-dev
          libfyaml-dev)
if [ "${SHARD_TEST_DEPS:-0}" = 1 ]; then
  packages+=(lammps)
fi
missing=()
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
rm -f "$build.cmake.log"
cmake --build "$build" -j "$(nproc)"
