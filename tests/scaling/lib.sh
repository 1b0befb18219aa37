# shellcheck shell=bash
# Helpers sourced by the tests in tests/scaling/ (usage of each test: TEST.sh SHARD WORKDIR).
#   REPO      the repository root;  WORK  the test's scratch folder (emptied first, kept for inspection)
#   pass / fail / expect_eq / skip       results; the test ends with `finish`
#   need_matplotlib                      skip (exit 77) when /usr/bin/python3 has no matplotlib
#   png_ok FILE                          a non-empty PNG file
set -uo pipefail
SHARD=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
WORK=$2
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PYTHON=${PYTHON:-/usr/bin/python3}
export SHARD PYTHON
rm -rf "$WORK"
mkdir -p "$WORK"
. "$REPO/scripts/mpi-env.sh"
FAILS=0

pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
skip() { echo "SKIPPED: $*"; exit 77; }
expect_eq() {
  if [ -n "$2" ] && [ "$2" = "$3" ]; then pass "$1 ($2)"; else fail "$1: got '$2', want '$3'"; fi
}
need_matplotlib() {
  "$PYTHON" -c 'import matplotlib' 2>/dev/null ||
    skip "$PYTHON has no matplotlib (apt-get install python3-matplotlib; scripts/setup.sh with SHARD_TEST_DEPS=1)"
}
png_ok() {
  [ -s "$1" ] && [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]
}
finish() {
  [ $FAILS -eq 0 ] && echo "PASS: $(basename "$0" .sh)" || echo "FAIL: $FAILS check(s)"
  exit $((FAILS > 0))
}
