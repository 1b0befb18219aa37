# shellcheck shell=bash
# Helpers sourced by the tests in tests/io/ (run with tests/io as the working directory).
#   shard_run N ARGS...    `shard ARGS... --quiet` on N ranks, stdout+stderr on stdout, exit status kept
#   hash_of                the state hash in a report read from stdin
#   WORK                   a scratch folder removed on exit
WORK=$(mktemp -d "${TMPDIR:-/tmp}/shard-io.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
FAILS=0

shard_run() {
  local n=$1
  shift
  timeout 300 mpiexec --oversubscribe -n "$n" "$SHARD" "$@" --quiet 2>&1
}

hash_of() { sed -n 's/^State hash: //p'; }

pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

# expect_eq WHAT GOT WANT
expect_eq() {
  if [ -n "$2" ] && [ "$2" = "$3" ]; then pass "$1 ($2)"; else fail "$1: got '$2', want '$3'"; fi
}

# The scene without its output and checkpoint sections (they come last in the file).
strip_io() { sed '/^output:/,$d' "$1"; }

# Output and checkpoints need parallel HDF5: without it these tests are skipped (ctest SKIP_RETURN_CODE 77).
if "$SHARD" --version 2>/dev/null | grep -q "HDF5: not built in"; then
  echo "SKIPPED: this shard was built without parallel HDF5"
  exit 77
fi
