#!/usr/bin/env bash
# setup.catalyst_reconfigure: ParaView installed after the first configure is picked up at the next one, and an
# explicit SHARD_WITH_CATALYST choice sticks (cmake/catalyst.cmake, scripts/setup.sh).  It configures throw-away
# build folders in WORKDIR through scripts/setup.sh (SHARD_SETUP_CONFIGURE_ONLY=1: no installs, no build) with
# ParaView hidden, then visible, and reads what the configure generated: Catalyst counts as on when the build
# system has the target shard_catalyst (the Catalyst module), and SHARD_CATALYST_FOUND in CMakeCache.txt, where
# present, must agree.  Cases:
#   readme     the README's order: ./scripts/demo.sh before ParaView is installed, then ./scripts/test.sh after:
#              off, then on
#   migrated   a build folder of an earlier version, whose boolean option cached the automatic OFF: on once
#              ParaView is there, and SHARD_WITH_CATALYST becomes AUTO
#   off        -DSHARD_WITH_CATALYST=OFF with ParaView hidden stays off when ParaView appears, and with
#              setup.sh's SHARD_WITH_CATALYST=0; SHARD_WITH_CATALYST=auto returns to detection (on)
#   on         SHARD_WITH_CATALYST=1 (setup.sh; -DSHARD_WITH_CATALYST=ON) without ParaView is a configure error
#              that says why; once ParaView is there, the same folder configures with Catalyst on, still ON
# Hiding ParaView: its CMake package folders (<prefix>/lib*/cmake/paraview-*) are covered with empty tmpfs mounts
# in a private mount namespace (unshare -m, as root; unshare -rm otherwise), so the configure sees a machine
# without ParaView whatever cmake/catalyst.cmake looks at.  Where no namespace can be made, they are passed as
# CMAKE_IGNORE_PATH, which cmake/catalyst.cmake honours like find_package.  SHARD_TEST_HIDE=namespace|ignore
# chooses.  About 10-30 s: configures only.
# usage: catalyst_reconfigure.sh SOURCE_DIR WORKDIR [CMAKE]   (exit 77: ParaView's CMake package is not installed)
set -uo pipefail
src=$1 work=$2 cmake_bin=${3:-cmake}
if [ "$cmake_bin" != cmake ]; then PATH=$(dirname "$cmake_bin"):$PATH; fi
rm -rf "$work" && mkdir -p "$work" || exit 1
fail=0
pass() { echo "PASS: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

# ParaView's package folders, under every spelling CMake may use (with merged /usr, /lib is /usr/lib).
pv_dirs=() pv_real=()
for d in /usr/local/lib*/cmake/paraview-* /usr/local/lib/*/cmake/paraview-* /usr/lib*/cmake/paraview-* \
         /usr/lib/*/cmake/paraview-* /lib*/cmake/paraview-* /lib/*/cmake/paraview-*; do
  [ -f "$d/paraview-config.cmake" ] || [ -f "$d/ParaViewConfig.cmake" ] || continue
  pv_dirs+=("$d")
  r=$(readlink -f "$d")
  [[ " ${pv_real[*]} " == *" $r "* ]] || pv_real+=("$r")
done
if [ ${#pv_dirs[@]} = 0 ]; then
  echo "SKIP: ParaView's CMake package (paraview-dev) is not installed: nothing to hide and reveal"
  exit 77
fi

# The inner script of a namespace: cover N folders with empty read-only tmpfs mounts, then run the command.
# shellcheck disable=SC2016  # expanded by the inner bash
cover='n=$1; shift; for ((i = 0; i < n; i++)); do mount -t tmpfs -o ro shard-hide "$1" || exit 97; shift; done; exec "$@"'
# try_ns UNSHARE...: whether that unshare command can hide a folder here.
ns_cmd=()
try_ns() {
  local probe=${pv_real[0]}
  "$@" bash -c "$cover" bash 1 "$probe" test ! -e "$probe/paraview-config.cmake" >/dev/null 2>&1
}
method=${SHARD_TEST_HIDE:-}
if [ -z "$method" ] || [ "$method" = namespace ]; then
  for u in "unshare -m --propagation private" "unshare -rm --propagation private"; do
    read -ra u_arr <<<"$u"
    if try_ns "${u_arr[@]}"; then ns_cmd=("${u_arr[@]}"); method=namespace; break; fi
  done
  [ ${#ns_cmd[@]} -gt 0 ] || { [ "$method" = namespace ] && { echo "FAIL: no mount namespace here"; exit 1; }; method=ignore; }
fi
ignore=$(IFS=';'; echo "${pv_dirs[*]}")
echo "ParaView's CMake package: ${pv_dirs[*]}; hidden by: $method${ns_cmd:+ (${ns_cmd[*]})}"

# conf DIR hidden|visible [NAME=VALUE...]: scripts/setup.sh configuring WORKDIR/DIR; output in WORKDIR/DIR.N.log,
# exit status in $rc.  NAME=VALUE go to its environment (CMAKE_ARGS, SHARD_WITH_CATALYST, ...).
n=0
conf() {
  local dir=$1 how=$2 args=""
  shift 2
  n=$((n + 1))
  log=$work/$dir.$n.log
  local envs=(BUILD_DIR="$work/$dir" SHARD_SETUP_CONFIGURE_ONLY=1 "$@")
  for e in "$@"; do [[ $e == CMAKE_ARGS=* ]] && args=${e#CMAKE_ARGS=}; done
  if [ "$method" = ignore ]; then
    if [ "$how" = hidden ]; then args="$args -DCMAKE_IGNORE_PATH=$ignore"; else args="$args -UCMAKE_IGNORE_PATH"; fi
  fi
  envs+=(CMAKE_ARGS="$args")
  if [ "$how" = hidden ] && [ "$method" = namespace ]; then
    "${ns_cmd[@]}" bash -c "$cover" bash ${#pv_real[@]} "${pv_real[@]}" env "${envs[@]}" "$src/scripts/setup.sh" >"$log" 2>&1
  else
    env "${envs[@]}" "$src/scripts/setup.sh" >"$log" 2>&1
  fi
  rc=$?
}
# state DIR: "on" or "off" as generated, "error: ..." when the configure did not generate or disagrees with itself.
state() {
  local b=$work/$1 gen cached
  if [ -f "$b/build.ninja" ]; then
    if grep -q '^build shard_catalyst:' "$b/build.ninja"; then gen=on; else gen=off; fi
  elif [ -f "$b/Makefile" ]; then
    if grep -q '^shard_catalyst:' "$b/Makefile"; then gen=on; else gen=off; fi
  else
    echo "error: no build system generated"; return
  fi
  cached=$(sed -n 's/^SHARD_CATALYST_FOUND:[A-Z]*=//p' "$b/CMakeCache.txt")
  case "$cached" in
  "") echo "$gen" ;;
  ON | TRUE | 1) [ "$gen" = on ] && echo on || echo "error: SHARD_CATALYST_FOUND=$cached but no shard_catalyst target" ;;
  *) [ "$gen" = off ] && echo off || echo "error: SHARD_CATALYST_FOUND=$cached but a shard_catalyst target" ;;
  esac
}
option() { sed -n 's/^SHARD_WITH_CATALYST:[A-Z]*=//p' "$work/$1/CMakeCache.txt"; }
# expect NAME DIR on|off [OPTION]: after a configure that must succeed
expect() {
  local name=$1 dir=$2 want=$3 want_opt=${4:-} s o
  if [ "$rc" != 0 ]; then bad "$name: configure failed (exit $rc, $log):"; tail -n 15 "$log"; return; fi
  s=$(state "$dir") o=$(option "$dir")
  if [ "$s" != "$want" ]; then
    bad "$name: Catalyst $s, wanted $want (SHARD_WITH_CATALYST=$o; $log: $(grep -m1 'Catalyst: ' "$log"))"; return
  fi
  if [ -n "$want_opt" ] && [ "$o" != "$want_opt" ]; then
    bad "$name: SHARD_WITH_CATALYST=$o in the cache, wanted $want_opt"; return
  fi
  pass "$name: Catalyst $s, SHARD_WITH_CATALYST=$o"
}

# readme: demo.sh (setup.sh, nothing set) before ParaView, then test.sh (SHARD_TEST_DEPS=1) after.
conf readme hidden
expect "readme: demo.sh, ParaView not installed yet" readme off AUTO
conf readme visible SHARD_TEST_DEPS=1
expect "readme: test.sh, ParaView installed since" readme on

# migrated: the cache an earlier version wrote, SHARD_WITH_CATALYST:BOOL=OFF computed without ParaView.
conf migrated hidden
expect "migrated: first configure, ParaView not installed" migrated off AUTO
sed -i -e 's/^SHARD_WITH_CATALYST:[A-Z]*=.*/SHARD_WITH_CATALYST:BOOL=OFF/' \
       -e '/^SHARD_CATALYST_TRISTATE:/d' -e '/^SHARD_WITH_CATALYST-STRINGS:/d' "$work/migrated/CMakeCache.txt"
conf migrated visible
expect "migrated: the earlier version's cached OFF, ParaView installed since" migrated on AUTO

# off: an explicit OFF sticks when ParaView appears; SHARD_WITH_CATALYST=auto undoes it.
conf off hidden CMAKE_ARGS=-DSHARD_WITH_CATALYST=OFF
expect "off: -DSHARD_WITH_CATALYST=OFF, ParaView not installed" off off OFF
conf off visible
expect "off: reconfigured after ParaView was installed, nothing given" off off OFF
conf off visible SHARD_WITH_CATALYST=0
expect "off: setup.sh with SHARD_WITH_CATALYST=0" off off OFF
conf off visible SHARD_WITH_CATALYST=auto
expect "off: setup.sh with SHARD_WITH_CATALYST=auto" off on AUTO

# on: ON without ParaView is an error saying why; it sticks, and works once ParaView is there.
conf on hidden SHARD_WITH_CATALYST=1
if [ "$rc" = 0 ]; then
  bad "on: SHARD_WITH_CATALYST=1 without ParaView: the configure succeeded ($(grep -m1 'Catalyst: ' "$log"))"
elif ! grep -q "SHARD_WITH_CATALYST=ON, but Catalyst cannot be built" "$log"; then
  bad "on: SHARD_WITH_CATALYST=1 without ParaView failed (exit $rc) without saying why:"; tail -n 15 "$log"
else
  pass "on: SHARD_WITH_CATALYST=1 without ParaView: configure error, $(grep -m1 -A1 'SHARD_WITH_CATALYST=ON, but' "$log" | tr -s ' \n' ' ')..."
fi
conf on visible
expect "on: reconfigured after ParaView was installed, nothing given" on on ON

[ $fail = 0 ] && echo "all cases passed (logs in $work)" || echo "some cases failed (logs in $work)"
exit $fail
