#!/usr/bin/env bash
# Command-line behaviour: --help and --version succeed; every bad command line exits with status 2 on every
# rank, prints its message once, and does not hang; `shard check` names each body's shape (a cloth grid's too).
# usage: cli.sh SHARD   (run in tests/)
set -uo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
shard=$1
check() { # name expected-status (0, or an error: any non-zero status but the time limit's) expected-substring ranks args...
  local name=$1 want=$2 text=$3 n=$4 out
  shift 4
  [ "$want" = 0 ] || want=error
  out=$(mpi_run 60 "$n" "$shard" "$@" 2>&1)
  expect_once "$name ($n rank(s))" $? "$want" "$out" "$text"
}
for n in 1 3; do
  check help 0 "usage: shard run" "$n" --help
  check version 0 "Zoltan: 3" "$n" --version
  check no-command 2 "usage: shard run" "$n"
  check unknown-command 2 "shard: error: unknown command 'frobnicate'" "$n" frobnicate
  check unknown-option 2 "shard: error: unknown option '--fast'" "$n" run bad_input/../mpi/scenes/drop_contact.yaml --fast
  check steps-not-number 2 "shard: error: --steps: expected a finite non-negative number, got 'ten'" "$n" run x.yaml --steps ten
  check until-inf 2 "shard: error: --until: expected a finite non-negative number, got 'inf'" "$n" run x.yaml --until inf
  check dt-inf 2 "shard: error: --dt: expected a finite non-negative number, got 'inf'" "$n" run x.yaml --dt inf
  check out-empty 2 "shard: error: --out: expected a folder name, got ''" "$n" run x.yaml --out ''
  check until-huge 2 "shard: error: --until: an end time of 1e+300 s at a time step of" "$n" run mpi/scenes/drop_contact.yaml --until 1e300
  check dt-tiny 2 "shard: error: --dt: an end time of" "$n" run mpi/scenes/drop_contact.yaml --until 0.1 --dt 1e-300
  check until-short 2 "is shorter than one step" "$n" run mpi/scenes/drop_contact.yaml --until 1e-12
  check steps-zero 2 "shard: error: --steps: expected a positive integer, got '0'" "$n" run x.yaml --steps 0
  check dt-missing 2 "shard: error: --dt needs a value" "$n" run x.yaml --dt
  check both 2 "shard: error: give --steps or --until, not both" "$n" run x.yaml --steps 3 --until 1
  check two-scenes 2 "shard: error: more than one scene given ('a.yaml' and 'b.yaml')" "$n" run a.yaml b.yaml
  check check-no-scene 2 "shard: error: check needs a scene file" "$n" check
  check endless-scene 3 "shard: error: /dev/zero: the scene file is a character device, not a regular file" "$n" check /dev/zero
  check check-grid 0 "  sheet            grid     cloth  material cotton" "$n" check mpi/scenes/cloth_drape.yaml
  check missing-scene 3 "shard: error: no_such_scene.yaml: cannot open scene file: No such file or directory" "$n" run no_such_scene.yaml
done
finish
