#!/usr/bin/env bash
# Input files that are not regular files, which a repository cannot hold: a scene and a mesh that are FIFOs
# (named pipes: reading one waits for a writer), a mesh whose name ends in .stl but that is a link to /dev/zero
# (a device that never ends).  Each is refused before it is read, at 1 and 3 ranks: exit 3, its message once
# (naming the scene file, and for a mesh the line, column and key of its `file`), no hang.  The runs are limited
# to 2 GiB of address space each, so that a shard that reads the device anyway fails instead of filling memory.
# usage: special_files.sh SHARD   (run in tests/bad_input)
# Environment: SHARD_TEST_NO_VM_LIMIT=1 runs the cases without that limit, for a shard built with AddressSanitizer,
# which cannot start under one (tests/sanitize/run.sh sets it and limits each rank's resident memory instead).
set -uo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
test_init "$1"
cd "$WORK" || exit 1
mkfifo scene_fifo.yaml part.stl || skip "mkfifo failed"
ln -s /dev/zero zero.stl
scene() { # NAME MESH: a scene of one body whose mesh is MESH (its `file` at line 7, column 26)
  cat > "$1.yaml" <<EOS
run:
  steps: 10
materials:
  m: {density: 1000, E: 1.0e6, nu: 0.3}
bodies:
  - material: m
    shape: {mesh: {file: $2}}
    spacing: 0.1
EOS
}
scene mesh_fifo part.stl
scene mesh_device zero.stl
check() { # NAME RANKS MESSAGE ARGS...
  local name=$1 n=$2 text=$3 out
  shift 3
  out=$([ "${SHARD_TEST_NO_VM_LIMIT:-0}" = 1 ] || ulimit -v 2097152; mpi_run 60 "$n" "$SHARD" "$@" 2>&1 >/dev/null)
  expect_once "$name ($n rank(s))" $? 3 "$out" "shard: error: $text"
}
for n in 1 3; do
  check scene-fifo "$n" "scene_fifo.yaml: the scene file is a FIFO (named pipe), not a regular file" check scene_fifo.yaml
  check scene-fifo-run "$n" "scene_fifo.yaml: the scene file is a FIFO (named pipe), not a regular file" run scene_fifo.yaml
  check mesh-fifo "$n" \
    "mesh_fifo.yaml:7:26: bodies[0].shape.mesh.file: 'part.stl' is a FIFO (named pipe), not a regular file" \
    check mesh_fifo.yaml
  check mesh-device "$n" \
    "mesh_device.yaml:7:26: bodies[0].shape.mesh.file: 'zero.stl' is a character device, not a regular file" \
    check mesh_device.yaml
done
finish "input files that are not regular files"
