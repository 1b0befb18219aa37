#!/usr/bin/env bash
# Command 1 of the README: install, build, and run the demo scene on all local cores.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
. scripts/mpi-env.sh
ranks=${RANKS:-$(nproc)}
exec mpiexec -n "$ranks" build/shard run jobs/scenes/demo.yaml "$@"
