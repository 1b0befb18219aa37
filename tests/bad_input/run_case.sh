#!/usr/bin/env bash
# One bad-input case: `shard check CASE.yaml` at 1 and 3 ranks must exit non-zero (not by timeout), and its
# stderr must contain the line of CASE.expected exactly once (printed by rank 0 only).  A line
# "# ranks: 3 4" in the scene replaces the rank counts (for errors that only exist on several ranks).
# usage: run_case.sh SHARD CASE   (run in tests/bad_input)
set -uo pipefail
shard=$1 case=$2
expected=$(head -n 1 "$case.expected")
ranks=$(sed -n 's/^# ranks: *//p' "$case.yaml")
for n in ${ranks:-1 3}; do
  err=$(timeout 120 mpiexec --oversubscribe -n "$n" "$shard" check "$case.yaml" 2>&1 >/dev/null)
  rc=$?
  if [ $rc -eq 0 ]; then echo "FAIL: $case at $n rank(s): exit status 0"; exit 1; fi
  if [ $rc -eq 124 ]; then echo "FAIL: $case at $n rank(s): hung (killed after 120 s)"; exit 1; fi
  count=$(printf '%s\n' "$err" | grep -cF -- "$expected" || true)
  if [ "$count" -ne 1 ]; then
    echo "FAIL: $case at $n rank(s): expected message found $count time(s)"
    echo "expected: $expected"
    echo "got:"; printf '%s\n' "$err"
    exit 1
  fi
done
echo "PASS: $case ($expected)"
