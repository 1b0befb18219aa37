#!/usr/bin/env bash
# The tracer kind of tests/matter/test_tracer.c at 1 and 3 ranks: each run passes its own checks, and the state
# hash and the (exact) diagnostics are the same on both.
# usage: tracer.sh TEST_TRACER
set -uo pipefail
bin=$1
ref=""
for n in 1 3; do
  out=$(timeout 300 mpiexec --oversubscribe -n "$n" "$bin" 2>&1) || { echo "$out"; echo "FAIL: $n rank(s)"; exit 1; }
  echo "$out" | sed "s/^/[$n] /"
  got=$(printf '%s\n' "$out" | grep -E '^(State hash|kinetic)')
  [ -n "$got" ] || { echo "FAIL: no hash at $n rank(s)"; exit 1; }
  if [ -z "$ref" ]; then ref=$got; elif [ "$got" != "$ref" ]; then echo "FAIL: $n rank(s) differ from 1 rank"; exit 1; fi
done
echo "PASS: tracer kind, the same state hash and diagnostics at 1 and 3 ranks"
