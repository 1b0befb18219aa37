#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer check (ctest -L sanitize; docs/testing.md).
#
# Builds shard with clang, -DSHARD_SANITIZE=ON (Debug, Catalyst off, -fsanitize=address,undefined,
# -fno-sanitize-recover=undefined) in its own build folder, then runs under the sanitizers, each at 1 and 3 ranks:
#   scenes     every shipped scene (jobs/scenes/*.yaml, tests/mpi/scenes/*.yaml) for a few steps
#   io         HDF5 output, a checkpoint, and a restart from it on the other rank count (tests/io/scenes/restart.yaml)
#   bad_input  every tests/bad_input case, through tests/bad_input/run_case.sh (its checks, at its rank counts)
#   faults     the fault and bad-input scripts tests/io/bad_checkpoint.sh, tests/io/checkpoint_keep.sh,
#              tests/bad_input/special_files.sh and tests/io/tmp_links.sh (their checks, at their rank counts), with
#              SHARD_TEST_NO_VM_LIMIT=1: the one case that needs an address-space limit (bad_checkpoint's huge
#              particle count) is skipped, special_files runs without its limit (hard_rss_limit_mb=2048 instead)
# It fails when a run crashes or fails its checks, or when any sanitizer reports anything: a memory error, undefined
# behaviour ("runtime error:"), or a leak that tests/sanitize/lsan.supp does not suppress (it only suppresses what
# Open MPI leaks for itself: in MPI_Init, in PMIx's progress thread, in its MPI-IO collective write).  Each report
# is printed with the scene or case, the rank count and rank, and the innermost frames in Shard's sources.
#
# usage: tests/sanitize/run.sh [BUILD_DIR] [PART...]
#   BUILD_DIR  the sanitizer build folder (default: build-sanitize in the repository root); work files and the
#              sanitizer logs go to BUILD_DIR/sanitize-work/PART
#   PART       build, scenes, io, bad_input, faults (default: all of them, in that order); the run parts expect the
#              build
# Environment:
#   SANITIZE_STEPS=N     steps for every scene instead of the table below
#   SANITIZE_SCENES="A.yaml B.yaml"  run these scenes instead of the shipped ones (to reproduce a report)
#   SANITIZE_CASES="E_zero nu_nan"   run these bad-input cases instead of all of them
#   SANITIZE_BLOCK_1M=1  also run jobs/scenes/block_1m.yaml (10^6 particles, one step: 3-4 minutes more on 2
#                        cores, 1.3 GB on rank 0); left out by default to keep the check to a few minutes
#   SANITIZE_JOBS=N      bad-input cases run at once (default 3; most of a case's time is start-up and waiting)
#   SANITIZE_FAULTS="bad_checkpoint tmp_links"  run these scripts of the faults part instead of all four
#   SANITIZE_TAMPER=PATH the checkpoint tamper tool (io_ckpt_tamper) for bad_checkpoint.sh; default: built in
#                        BUILD_DIR (which configures it with BUILD_TESTING=ON), run with the leak check off
#   SANITIZE_CC          the compiler (default clang: GCC's UBSan ignores log_path and would write into stderr)
# Exit status 77 (ctest: skipped): no clang, no sanitizer runtime or no llvm-symbolizer (scripts/setup.sh with
# SHARD_TEST_DEPS=1 installs clang, libclang-rt-dev and llvm).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

parts=()
build=""
for a in "$@"; do
  case $a in
    build | scenes | io | bad_input | faults | _bad_case:*) parts+=("$a") ;;
    *) [ -z "$build" ] && [ ${#parts[@]} -eq 0 ] || { echo "usage: $0 [BUILD_DIR] [PART...]" >&2; exit 2; }
       build=$a ;;
  esac
done
[ ${#parts[@]} -gt 0 ] || parts=(build scenes io bad_input faults)
build=${build:-$root/build-sanitize}
mkdir -p "$build" && build=$(cd "$build" && pwd)
shard_bin=$build/shard
keep_lib=$build/libkeep_libraries.so # preloaded by rank.sh: see keep_libraries.c

# Steps per scene: enough to build the neighbour and contact lists, exchange halos and contact ghosts and take a
# few time steps on every path, small enough to keep the whole check to a few minutes on 2 cores (the start-up is
# most of a run under the sanitizers at -O0).
scene_steps() {
  case $(basename "$1" .yaml) in
    block_1m) echo 1 ;;                             # 10^6 particles: 100-130 s on 1 rank, 70-110 s on 3
    cylinder_indenter | demo | mesh_drop) echo 5 ;; # 14-22 k particles: 0.3-0.6 s a step
    collide_obstacles) echo 40 ;;                   # the two bodies touch after about 12 steps
    *) echo 20 ;;
  esac
}

# --- the tools -------------------------------------------------------------------------------------------------
skip() { echo "SKIPPED: $*"; echo "  (scripts/setup.sh with SHARD_TEST_DEPS=1 installs clang, libclang-rt-dev, llvm)"; exit 77; }
cc=${SANITIZE_CC:-clang}
symbolizer=${ASAN_SYMBOLIZER_PATH:-$(command -v llvm-symbolizer || ls /usr/lib/llvm-*/bin/llvm-symbolizer 2>/dev/null | tail -n 1)}
command -v "$cc" > /dev/null || skip "no $cc for the sanitizer build"
[ -x "$symbolizer" ] || skip "no llvm-symbolizer (needed for the suppressions and for file:line in the reports)"
export ASAN_SYMBOLIZER_PATH=$symbolizer

# --- sanitizer settings ----------------------------------------------------------------------------------------
# fast_unwind_on_malloc=0: Open MPI's libraries have no frame pointers, and the leak suppressions name functions
# deep in their stacks (ompi_mpi_init), which only the slow unwinder reaches.  handle_abort: an abort() (a failed
# SHARD_ASSERT) is reported with its stack.  exitcode 1 for ASan, UBSan (halt_on_error) and LSan alike.
. "$root/scripts/mpi-env.sh"
# mpiexec waits 2 x odls_base_sigkill_timeout (1 s) before it ends a job in which a process exited non-zero, as every
# bad-input case does; rank.sh already lets every rank finish first.
export OMPI_MCA_odls_base_sigkill_timeout=0
export ASAN_OPTIONS="detect_leaks=1:fast_unwind_on_malloc=0:malloc_context_size=40:handle_abort=1:strict_string_checks=1:exitcode=1"
export LSAN_OPTIONS="suppressions=$here/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:report_error_type=1"

failures=()
fail() { echo "FAIL: $*"; failures+=("$*"); }

# scan_logs DIR: print every sanitizer report in DIR, one block per report file (one rank of one run), and fail for
# each.  A file is named TAG.n<ranks>.r<rank>.<pid> by rank.sh.
scan_logs() {
  local dir=$1 f found=0
  for f in "$dir"/*; do
    [ -f "$f" ] || continue
    grep -qE "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|SUMMARY: |WARNING: AddressSanitizer" "$f" || continue
    found=1
    local name tag n r kind where
    name=$(basename "$f")
    tag=${name%.n*}
    n=${name#"$tag".n}; n=${n%%.*}
    r=${name#"$tag".n"$n".r}; r=${r%%.*}
    kind=$(grep -m1 -oE "ERROR: (AddressSanitizer|LeakSanitizer): .*|runtime error: .*" "$f" | sed 's/ on address.*//' |
           head -c 160)
    # the innermost frames in the project's sources ("in FUNC /root/dir/file.c:LINE:COL"), allocation wrappers
    # (shard_malloc, shard_reserve, ...) kept but not counted; or UBSan's "/root/dir/file.c:LINE:COL: runtime error"
    where=$(grep -oE "(in [^ ]+ )?$root/(src|io|decomposition|include)/[^ :]+:[0-9]+(:[0-9]+)?" "$f" |
            sed "s|^in ||; s|$root/||" | awk '!seen[$0]++' |
            awk '{ out = out (n ? " < " : "") $0; n++ } $1 !~ /^shard_(malloc|calloc|realloc|reserve)$/ { k++ }
                 k == 2 || n == 5 { exit } END { print out }')
    echo "---- sanitizer report: ${tag#*.} at $n rank(s), rank $r (log $f)"
    echo "     ${kind:-?}"
    echo "     Shard frames: ${where:-none: the report is inside a library; check its stack, and only if Shard is not the cause suppress it in tests/sanitize/lsan.supp}"
    sed -n '1,60p' "$f" | sed 's/^/     | /'
    fail "sanitizer report in ${tag#*.} at $n rank(s), rank $r: ${kind:-?} at ${where:-(a library)}"
  done
  return $found
}

# --- build -----------------------------------------------------------------------------------------------------
part_build() {
  echo "== sanitizer build in $build ($cc)"
  printf 'int main(void){return 0;}\n' > "$build/probe.c"
  "$cc" -fsanitize=address,undefined "$build/probe.c" -o "$build/probe" 2> "$build/probe.log" ||
    { cat "$build/probe.log"; skip "$cc cannot link -fsanitize=address,undefined (no sanitizer runtime)"; }
  rm -f "$build/probe.c" "$build/probe" "$build/probe.log"
  cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER="$cc" -DSHARD_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug \
        -DSHARD_WITH_CATALYST=OFF -DBUILD_TESTING=OFF > "$build/sanitize-cmake.log" 2>&1 ||
    { cat "$build/sanitize-cmake.log"; fail "cmake configure"; return; }
  cmake --build "$build" -j "${SANITIZE_BUILD_JOBS:-2}" --target shard || { fail "build"; return; }
  "$cc" -shared -fPIC -O2 -o "$keep_lib" "$here/keep_libraries.c" || { fail "build of $keep_lib"; return; }
  echo "built $shard_bin and $keep_lib"
}

need_binary() {
  [ -x "$shard_bin" ] && [ -f "$keep_lib" ] ||
    { fail "no sanitizer build at $shard_bin (run: $0 $build build)"; return 1; }
  grep -q "^SHARD_SANITIZE:BOOL=ON" "$build/CMakeCache.txt" 2>/dev/null ||
    { fail "$build is not a SHARD_SANITIZE=ON build"; return 1; }
}

# start_part NAME: fresh work and log folders for one part
start_part() {
  work=$build/sanitize-work/$1
  rm -rf "$work" && mkdir -p "$work/logs"
  export SHARD_SAN_BIN=$shard_bin SHARD_SAN_LOGS=$work/logs SHARD_SAN_PRELOAD=$keep_lib
}

# run_shard TAG N ARGS...: shard ARGS... on N ranks under the sanitizers; output in $work/TAG.nN.out
run_shard() {
  local tag=$1 n=$2
  shift 2
  SHARD_SAN_TAG=$tag timeout "${RUN_TIMEOUT:-300}" mpiexec --oversubscribe -n "$n" "$here/rank.sh" "$@" \
    > "$work/$tag.n$n.out" 2>&1
}

# --- shipped scenes --------------------------------------------------------------------------------------------
part_scenes() {
  need_binary || return
  start_part scenes
  local scene name steps n t0 rc hash
  local scenes=("$root"/jobs/scenes/*.yaml "$root"/tests/mpi/scenes/*.yaml)
  [ -n "${SANITIZE_SCENES:-}" ] && read -r -a scenes <<< "$SANITIZE_SCENES"
  for scene in "${scenes[@]}"; do
    name=$(basename "$scene" .yaml)
    [ "$name" = block_1m ] && [ "${SANITIZE_BLOCK_1M:-0}" != 1 ] &&
      { echo "scene $name: left out (SANITIZE_BLOCK_1M=1 runs it)"; continue; }
    steps=${SANITIZE_STEPS:-$(scene_steps "$scene")}
    for n in 1 3; do
      t0=$(date +%s%N)
      RUN_TIMEOUT=600 run_shard "scene.$name" "$n" run "$scene" --steps "$steps" --quiet --out "$work/out-$name-$n"
      rc=$?
      hash=$(sed -n 's/^State hash: //p' "$work/scene.$name.n$n.out")
      printf 'scene %-18s %d rank(s) %3d steps: exit %d, %4d s, state hash %s\n' "$name" "$n" "$steps" "$rc" \
        $((($(date +%s%N) - t0) / 1000000000)) "${hash:-none}"
      if [ $rc -ne 0 ] || [ -z "$hash" ]; then
        tail -n 30 "$work/scene.$name.n$n.out"
        fail "scene $name at $n rank(s): exit status $rc$([ $rc = 124 ] && echo ' (timeout)'), state hash '${hash:-none}' (the sanitizer report, if any, is below)"
      fi
    done
  done
  scan_logs "$work/logs" && echo "no sanitizer report in the scenes"
}

# --- output, checkpoint, restart -------------------------------------------------------------------------------
part_io() {
  need_binary || return
  start_part io
  if "$shard_bin" --version 2> /dev/null | grep -q "HDF5: not built in"; then
    echo "io: this build has no parallel HDF5, nothing to check"
    return
  fi
  local scene=$work/io.yaml a b rc
  sed '/^output:/,$d' "$root/tests/io/scenes/restart.yaml" > "$scene"
  printf 'output: {every: 2}\ncheckpoint: {every: 4, keep: 1}\n' >> "$scene"
  for a in 1 3; do
    b=$((4 - a))
    run_shard "io.write" "$a" run "$scene" --steps 4 --quiet --out "$work/out-$a"
    rc=$?
    echo "io: 4 steps with output and a checkpoint on $a rank(s): exit $rc"
    [ $rc -eq 0 ] && [ -f "$work/out-$a/checkpoint_000004.h5" ] ||
      { tail -n 30 "$work/io.write.n$a.out"; fail "io: output and checkpoint on $a rank(s) (exit $rc)"; continue; }
    run_shard "io.restart" "$b" run --restart "$work/out-$a/checkpoint_000004.h5" --steps 8 --quiet --out "$work/out-$a"
    rc=$?
    echo "io: restart from it on $b rank(s) to step 8: exit $rc"
    [ $rc -eq 0 ] || { tail -n 30 "$work/io.restart.n$b.out"; fail "io: restart on $b rank(s) (exit $rc)"; }
  done
  scan_logs "$work/logs" && echo "no sanitizer report in output, checkpoint and restart"
}

# --- bad input -------------------------------------------------------------------------------------------------
part_bad_input() {
  need_binary || return
  start_part bad_input
  local cases=() c
  for c in "$root"/tests/bad_input/*/*.expected; do cases+=("$(basename "$c" .expected)"); done
  [ -n "${SANITIZE_CASES:-}" ] && read -r -a cases <<< "$SANITIZE_CASES"
  echo "bad input: ${#cases[@]} cases through tests/bad_input/run_case.sh, ${SANITIZE_JOBS:-3} at a time"
  printf '_bad_case:%s\n' "${cases[@]}" | xargs -P "${SANITIZE_JOBS:-3}" -n 1 "$0" "$build"
  local out nfail=0
  for c in "${cases[@]}"; do
    out=$work/$c.out
    if ! grep -q "^PASS: " "$out" 2> /dev/null; then
      cat "$out" 2> /dev/null
      fail "bad input $c: run_case.sh failed"
      nfail=$((nfail + 1))
    fi
  done
  echo "bad input: $((${#cases[@]} - nfail)) of ${#cases[@]} cases pass run_case.sh"
  scan_logs "$work/logs" && echo "no sanitizer report in the bad-input cases"
}

# one case (run by part_bad_input through xargs): run_case.sh with rank.sh standing for shard
bad_case() {
  local c=$1
  work=$build/sanitize-work/bad_input
  export SHARD_SAN_BIN=$shard_bin SHARD_SAN_LOGS=$work/logs SHARD_SAN_PRELOAD=$keep_lib SHARD_SAN_TAG=bad_input.$c
  (cd "$root/tests/bad_input" && ./run_case.sh "$here/rank.sh" "$c") > "$work/$c.out" 2>&1
  exit 0
}

# --- fault and bad-input scripts --------------------------------------------------------------------------------
# Each script gets rank.sh for shard (as run_case.sh does), so every shard process it starts, at its own rank
# counts, runs under the sanitizers; its work folder is made under $work.
part_faults() {
  need_binary || return
  start_part faults
  local tamper=${SANITIZE_TAMPER:-} scripts=(bad_checkpoint checkpoint_keep special_files tmp_links) s dir args
  local extra t0 rc nfail=0
  [ -n "${SANITIZE_FAULTS:-}" ] && read -r -a scripts <<< "$SANITIZE_FAULTS"
  if [ -z "$tamper" ] && [[ " ${scripts[*]} " == *" bad_checkpoint "* ]]; then
    # the test helper that damages checkpoints (it is not shard): built here, with the tests configured
    cmake -S "$root" -B "$build" -DBUILD_TESTING=ON > "$work/tamper-cmake.log" 2>&1 &&
      cmake --build "$build" -j "${SANITIZE_BUILD_JOBS:-2}" --target io_ckpt_tamper > "$work/tamper-build.log" 2>&1 ||
      { cat "$work"/tamper-*.log; fail "faults: build of io_ckpt_tamper in $build"; return; }
    tamper=$work/io_ckpt_tamper
    printf '#!/bin/sh\nASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" exec "%s" "$@"\n' "$build/tests/io_ckpt_tamper" \
      > "$tamper" && chmod +x "$tamper"
  fi
  for s in "${scripts[@]}"; do
    case $s in
      bad_checkpoint) dir=io args=("$tamper") extra="" ;;
      checkpoint_keep | tmp_links) dir=io args=() extra="" ;;
      # in place of the script's address-space limit: a rank that reads the device anyway stops at 2 GiB
      special_files) dir=bad_input args=() extra=":hard_rss_limit_mb=2048" ;;
      *) fail "faults: no script $s"; continue ;;
    esac
    t0=$(date +%s)
    (cd "$root/tests/$dir" &&
      SHARD_SAN_TAG=faults.$s SHARD_TEST_NO_VM_LIMIT=1 TMPDIR=$work ASAN_OPTIONS=$ASAN_OPTIONS$extra \
        timeout "${RUN_TIMEOUT:-1500}" "./$s.sh" "$here/rank.sh" "${args[@]}") > "$work/$s.out" 2>&1
    rc=$?
    echo "faults: tests/$dir/$s.sh: exit $rc, $(($(date +%s) - t0)) s, $(grep -c '^PASS: ' "$work/$s.out") passed," \
         "$(grep -c '^FAIL: ' "$work/$s.out") failed, $(grep -c '^SKIPPED: ' "$work/$s.out") skipped"
    grep '^SKIPPED: ' "$work/$s.out" | sed 's/^/  /'
    if [ $rc -eq 77 ]; then
      echo "  (the script skipped itself)"
    elif [ $rc -ne 0 ]; then
      tail -n 40 "$work/$s.out"
      fail "faults: tests/$dir/$s.sh failed (exit $rc$([ $rc = 124 ] && echo ', timeout'))"
      nfail=$((nfail + 1))
    fi
  done
  echo "faults: $((${#scripts[@]} - nfail)) of ${#scripts[@]} scripts pass"
  scan_logs "$work/logs" && echo "no sanitizer report in the fault and bad-input scripts"
}

t_start=$(date +%s)
for p in "${parts[@]}"; do
  case $p in
    _bad_case:*) bad_case "${p#_bad_case:}" ;;
    build) part_build ;;
    scenes) part_scenes ;;
    io) part_io ;;
    bad_input) part_bad_input ;;
    faults) part_faults ;;
  esac
done
echo "sanitize (${parts[*]}): $(($(date +%s) - t_start)) s"
if [ ${#failures[@]} -gt 0 ]; then
  echo "FAIL: ${#failures[@]} problem(s) under AddressSanitizer/UndefinedBehaviorSanitizer:"
  printf '  %s\n' "${failures[@]}"
  exit 1
fi
echo "PASS: no sanitizer report, no failed run (${parts[*]})"
