#!/usr/bin/env bash
# One bad-input case: `shard check CASE.yaml` at 1 and 3 ranks must exit non-zero (not by timeout), and its
# stderr must contain the line of CASE.expected exactly once (printed by rank 0 only).  A line
# "# ranks: 3 4" in the scene replaces the rank counts (for errors that only exist on several ranks); a line
# "# build: catalyst off" makes the case one of builds without Catalyst (skipped, exit 77, in the others).
# Cases live in folders named for the scene section they test (run/, materials/, bodies/, ...).  CASE is
# SECTION/NAME, or NAME alone, which is looked up in the section folders.  The check runs in the case's folder,
# so a message names the scene by its file name and a mesh by the path the scene gives.
# usage: run_case.sh SHARD CASE   (run in tests/bad_input)
set -uo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
shard=$1 arg=$2
case $shard in
  */*) shard=$(cd "$(dirname "$shard")" && pwd)/$(basename "$shard") ;;
esac
path=$arg
if [ ! -f "$path.yaml" ]; then
  found=("$(dirname "$0")"/*/"$arg.yaml")
  if [ ${#found[@]} -ne 1 ] || [ ! -f "${found[0]}" ]; then
    fail "$arg: no such case (or more than one)"
    finish
  fi
  path=${found[0]%.yaml}
fi
dir=$(dirname "$path") name=$(basename "$path")
what=$(basename "$(cd "$dir" && pwd)")/$name
cd "$dir" || exit 1
expected=$(head -n 1 "$name.expected")
ranks=$(sed -n 's/^# ranks: *//p' "$name.yaml")
if grep -q '^# build: catalyst off$' "$name.yaml" && ! "$shard" --version 2>/dev/null | grep -q '^Catalyst: off'; then
  skip "$what: a case of builds without Catalyst"
fi
for n in ${ranks:-1 3}; do
  err=$(mpi_run 120 "$n" "$shard" check "$name.yaml" 2>&1 >/dev/null)
  expect_once "$what at $n rank(s)" $? error "$err" "$expected" || finish
done
finish "$what ($expected)"
