# shellcheck shell=bash
# Helpers sourced by the shell tests (tests/cli.sh, tests/io/*.sh, tests/scaling/*.sh, tests/bad_input/run_case.sh,
# tests/mpi/invariance.sh, tests/regression/hashes.sh, tests/insitu/run.sh).  Every check prints one
# "PASS: ..." or "FAIL: ..." line and a test ends with `finish`; exit status 77 means skipped (ctest
# SKIP_RETURN_CODE).  Sourcing it sets no shell options and allows Open MPI to run as root and on more ranks than
# cores (scripts/mpi-env.sh, the same as ctest's environment).
#
#   REPO, PYTHON                 the repository root; Python 3 (default /usr/bin/python3), exported
#   test_init SHARD [WORKDIR]    SHARD, made absolute and exported; WORK: WORKDIR emptied first and kept for
#                                inspection, or without WORKDIR a new scratch folder removed on exit
#   pass MSG, fail MSG           a result line; fail counts in FAILS
#   expect_eq WHAT GOT WANT      GOT is WANT (and not empty)
#   expect_once NAME RC WANT OUTPUT TEXT...   a command's exit status RC is WANT ("error": non-zero, not the
#                                time limit's 124) and each TEXT stands exactly once in its OUTPUT
#   finish [SUMMARY]             "PASS: SUMMARY" (default: the test's name) or "FAIL: N check(s)", and the exit status
#   skip MSG, need_cmd CMD [HINT], need_hdf5, need_matplotlib    skip the test (exit 77) unless it can run
#   mpi_run SECONDS N CMD...     CMD on N ranks, killed after SECONDS (exit status 124)
#   shard_run N ARGS...          `$SHARD ARGS... --quiet` on N ranks (300 s at most), stdout+stderr on stdout
#   hash_of [FILE]               the state hash of a shard report (FILE, or stdin)
#   strip_io SCENE               the scene without its output and checkpoint sections (they come last)
#   ref_hash SCENE STEPS         the state hash of STEPS steps of SCENE on 1 rank without those sections
#   png_ok FILE                  FILE is a non-empty PNG
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PYTHON=${PYTHON:-/usr/bin/python3}
export PYTHON
# shellcheck source=scripts/mpi-env.sh
. "$REPO/scripts/mpi-env.sh"
FAILS=0

test_init() {
  SHARD=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
  export SHARD
  if [ -n "${2:-}" ]; then
    WORK=$2
    rm -rf "$WORK"
    mkdir -p "$WORK"
  else
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/shard-test.XXXXXX")
    # shellcheck disable=SC2064  # WORK is fixed now
    trap "rm -rf '$WORK'" EXIT
  fi
}

pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }

# expect_eq WHAT GOT WANT
expect_eq() {
  if [ -n "$2" ] && [ "$2" = "$3" ]; then pass "$1 ($2)"; else fail "$1: got '$2', want '$3'"; fi
}

# expect_once NAME RC WANT OUTPUT TEXT...: on failure OUTPUT is shown, then the FAIL line; returns 1.
expect_once() {
  local name=$1 rc=$2 want=$3 out=$4 text why='' count
  shift 4
  if [ "$rc" = 124 ] && [ "$want" != 124 ]; then
    why="exit 124 (timed out)"
  elif [ "$want" = error ]; then
    [ "$rc" != 0 ] || why="exit 0 (wanted non-zero)"
  elif [ "$rc" != "$want" ]; then
    why="exit $rc (wanted $want)"
  fi
  for text; do
    [ -z "$why" ] || break
    count=$(printf '%s\n' "$out" | grep -cF -- "$text" || true)
    [ "$count" = 1 ] || why="'$text' printed $count time(s)"
  done
  if [ -n "$why" ]; then
    printf '%s\n' "$out"
    fail "$name: $why"
    return 1
  fi
  pass "$name: $(printf '%s\n' "$out" | grep -m 1 -F -- "${!#}")"
}

# shellcheck disable=SC2120  # SUMMARY is optional
finish() {
  if [ "$FAILS" -eq 0 ]; then echo "PASS: ${1:-$(basename "$0" .sh)}"; else echo "FAIL: $FAILS check(s)"; fi
  exit $((FAILS > 0))
}

skip() { echo "SKIPPED: $*"; exit 77; }
need_cmd() {
  command -v "$1" >/dev/null 2>&1 || skip "$1 not found (${2:-scripts/setup.sh with SHARD_TEST_DEPS=1 installs it})"
}
# Output and checkpoints need parallel HDF5.
# shellcheck disable=SC2120  # the reason is optional
need_hdf5() {
  if "$SHARD" --version 2>/dev/null | grep -q "HDF5: not built in"; then
    skip "this shard was built without parallel HDF5${1:+ ($1)}"
  fi
}
need_matplotlib() {
  "$PYTHON" -c 'import matplotlib' 2>/dev/null ||
    skip "$PYTHON has no matplotlib (apt-get install python3-matplotlib; scripts/setup.sh with SHARD_TEST_DEPS=1)"
}

mpi_run() {
  local secs=$1 n=$2
  shift 2
  timeout "$secs" mpiexec --oversubscribe -n "$n" "$@"
}
shard_run() {
  local n=$1
  shift
  mpi_run 300 "$n" "$SHARD" "$@" --quiet 2>&1
}

# shellcheck disable=SC2120  # FILE is optional
hash_of() { sed -n 's/^State hash: //p' "$@"; }
strip_io() { sed '/^output:/,$d' "$1"; }
ref_hash() {
  strip_io "$1" >"$WORK/noio.yaml"
  shard_run 1 run "$WORK/noio.yaml" --steps "$2" | hash_of
}
png_ok() {
  [ -s "$1" ] && [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]
}
