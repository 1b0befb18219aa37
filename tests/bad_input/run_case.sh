#!/usr/bin/env bash
# One bad-input case: `shard check CASE.yaml` at 1 and 3 ranks must exit non-zero (not by timeout), and its
# stderr must contain the line of CASE.expected exactly once (printed by rank 0 only).  A line
# "# ranks: 3 4" in the scene replaces the rank counts (for errors that only exist on several ranks).
# usage: run_case.sh SHARD CASE   (run in tests/bad_input)
set -uo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
shard=$1 case=$2
expected=$(head -n 1 "$case.expected")
ranks=$(sed -n 's/^# ranks: *//p' "$case.yaml")
for n in ${ranks:-1 3}; do
  err=$(mpi_run 120 "$n" "$shard" check "$case.yaml" 2>&1 >/dev/null)
  expect_once "$case at $n rank(s)" $? error "$err" "$expected" || finish
done
finish "$case ($expected)"
