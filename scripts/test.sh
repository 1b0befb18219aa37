#!/usr/bin/env bash
# Command 2 of the README: install, build, and run the whole test suite (unit, validation, multi-rank at 1-4
# ranks, bad input, I/O: HDF5 round trip, restart, ParaView).  Extra arguments go to ctest (e.g. -R invariance).
set -euo pipefail
cd "$(dirname "$0")/.."
SHARD_TEST_DEPS=1 ./scripts/setup.sh
. scripts/mpi-env.sh
cd build
ctest --output-on-failure -j "${CTEST_JOBS:-2}" "$@"
