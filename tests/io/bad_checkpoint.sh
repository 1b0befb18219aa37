#!/usr/bin/env bash
# Every bad checkpoint given to --restart (missing, truncated, corrupt header, corrupt data, wrong format
# version, a missing dataset of a module's state or of a contact memory, a rigid-body record missing or
# damaged, inconsistent sizes (a count of 2^31 particles over a file of a thousand: refused at once, under an
# address-space limit that any allocation from it would exceed), a step that does
# not match the time or is out of range, an output file, the wrong scene, another time step, a stored scene text
# edited (refused by its checksum) or edited with its checksum so that the bodies it builds are not those the
# checkpoint recorded (two bodies swapped, a density changed, a cloth's grid with fewer vertices or with its
# vertices elsewhere); a --steps that
# ends before the checkpoint: exit 2) gives one clear message, `shard: error: FILE: ...`, printed once; every
# rank exits with status 3 (no hang), and the existing output folder is left exactly as it was.  Each case at
# 1 and 3 ranks.
# usage: bad_checkpoint.sh SHARD TAMPER   (run in tests/io)
# Environment: SHARD_TEST_NO_VM_LIMIT=1 skips the cases that need an address-space limit (the huge count), for a
# shard built with AddressSanitizer, which cannot start under one.
set -uo pipefail
TAMPER=$2
# shellcheck source=tests/lib.sh
. ../lib.sh
test_init "$1"
need_hdf5
scene=scenes/restart.yaml
shard_run 1 run "$scene" --steps 100 --out "$WORK/out" > "$WORK/good.log" || { cat "$WORK/good.log"; exit 1; }
good=$WORK/out/checkpoint_000100.h5
[ -f "$good" ] || { fail "no checkpoint written"; finish; }
snapshot() { (cd "$WORK/out" && find . -type f -printf '%p %s %T@\n' | sort && md5sum ./* | sort); }
before=$(snapshot)

mk() { cp "$good" "$WORK/$1.h5"; echo "$WORK/$1.h5"; }
bad_truncated=$(mk truncated)
truncate -s $(( $(stat -c %s "$good") / 2 )) "$bad_truncated"
bad_header=$(mk header)
printf 'XXXXXXXX' | dd of="$bad_header" bs=1 seek=0 conv=notrunc status=none
bad_data=$(mk data)
off=$("$TAMPER" offset "$bad_data" /particles/velocity) || { fail "tamper offset"; finish; }
printf '\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f' | dd of="$bad_data" bs=1 seek=$((off + 800)) conv=notrunc status=none
bad_version=$(mk version)
"$TAMPER" set-i64 "$bad_version" format_version 99
bad_dataset=$(mk dataset)
"$TAMPER" delete "$bad_dataset" /solid/plastic_strain
bad_memory=$(mk memory)
"$TAMPER" delete "$bad_memory" /contact_memory/value
bad_size=$(mk size)
"$TAMPER" set-i64 "$bad_size" n_particles 1000
bad_bonds=$(mk bonds)
"$TAMPER" set-i64 "$bad_bonds" n_bonds 17
# A header whose count is far beyond its datasets: refused before anything is allocated from it (under the
# address-space limit of case_limited, the 16 GiB a reader would take for 2^31 global ids ends the run with
# exit 5 instead).
bad_huge=$(mk huge)
"$TAMPER" set-i64 "$bad_huge" n_particles 2147483648
bad_step9=$(mk step9)
"$TAMPER" set-i64 "$bad_step9" step 1000000000
bad_step18=$(mk step18)
"$TAMPER" set-i64 "$bad_step18" step 1000000000000000000
# A rigid-body scene's checkpoint: its module record (the bodies' poses, momenta, warm starts) removed, or
# damaged.
rigid_scene=scenes/restart_rigid.yaml
shard_run 1 run "$rigid_scene" --steps 100 --out "$WORK/rigid" > "$WORK/rigid.log" || { cat "$WORK/rigid.log"; exit 1; }
rgood=$WORK/rigid/checkpoint_000100.h5
bad_rigid_gone=$WORK/rigid_gone.h5
cp "$rgood" "$bad_rigid_gone"
"$TAMPER" delete "$bad_rigid_gone" /module_state/rigid
bad_rigid_data=$WORK/rigid_data.h5
cp "$rgood" "$bad_rigid_data"
off=$("$TAMPER" offset "$bad_rigid_data" /module_state/rigid) || { fail "tamper offset"; finish; }
printf '\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f' | dd of="$bad_rigid_data" bs=1 seek=$((off + 40)) conv=notrunc status=none
# The stored scene text edited: E changed (refused by the text's checksum); two rigid bodies' lines swapped and
# a density changed, each with the checksum rewritten to match (refused by the bodies' identities: the scene's
# body names, kinds and materials, and the masses it gives the particles, against those the checkpoint
# recorded).
sed 's/E: 1.0e7/E: 2.0e7/' "$rigid_scene" > "$WORK/scene_E.yaml"
awk '/name: crate/ { c = $0; getline; c = c "\n" $0; next } /name: brick/ { print; getline; print; print c; next } 1' \
  "$rigid_scene" > "$WORK/scene_swap.yaml"
sed 's/density: 600/density: 601/' "$rigid_scene" > "$WORK/scene_density.yaml"
for v in E swap density; do
  cp "$rgood" "$WORK/rigid_$v.h5"
  "$TAMPER" set-text "$WORK/rigid_$v.h5" /scene "$WORK/scene_$v.yaml" || fail "tamper set-text $v"
  [ "$v" = E ] || "$TAMPER" rehash-scene "$WORK/rigid_$v.h5" || fail "tamper rehash-scene $v"
done
grep -q 'name: crate' <(sed -n '/name: brick/,+2p' "$WORK/scene_swap.yaml") || fail "the swapped scene is not swapped"
# A cloth's checkpoint whose stored scene (its checksum rewritten) makes another grid of the tag: fewer vertices
# than the data holds, or as many at other places (the run's elements name their vertices by their place in the
# body: before, a NaN at the first step, exit 4, or a vertex not found among its element's on every rank, exit 5
# through MPI_Abort).  The scene gives the time step, which the grid would change otherwise.
cloth_scene=$WORK/cloth.yaml
sed -e 's/^  steps: 1500$/  steps: 1500\n  dt: 2.0e-5/' -e 's/every: 600/every: 10/' scenes/restart_cloth.yaml > "$cloth_scene"
shard_run 1 run "$cloth_scene" --steps 10 --out "$WORK/cloth" > "$WORK/cloth.log" || { cat "$WORK/cloth.log"; exit 1; }
for v in 8,3 4,8; do
  sed "s/divisions: \[8, 4\]/divisions: [${v/,/, }]/" "$cloth_scene" > "$WORK/cloth_$v.yaml"
  cp "$WORK/cloth/checkpoint_000010.h5" "$WORK/cloth_$v.h5"
  "$TAMPER" set-text "$WORK/cloth_$v.h5" /scene "$WORK/cloth_$v.yaml" && "$TAMPER" rehash-scene "$WORK/cloth_$v.h5" ||
    fail "tamper cloth $v"
done
other_scene=$WORK/other.yaml
sed 's/steps: 400/steps: 401/' "$scene" > "$other_scene"

# case_code STATUS NAME EXPECTED-SUBSTRING ARGS...; case_ NAME ... (status 3)
case_code() {
  local code=$1 name=$2 want=$3
  shift 3
  for n in 1 3; do
    out=$(shard_run "$n" run "$@" --out "$WORK/out")
    expect_once "$name at $n rank(s)" $? "$code" "$out" "shard: error:" "$want"
    now=$(snapshot)
    [ "$now" = "$before" ] || fail "$name at $n rank(s): the output folder changed"
  done
}
case_() { case_code 3 "$@"; }
# case_limited NAME EXPECTED-SUBSTRING ARGS...: case_ with at most 4 GB of address space per process, and within
# 60 s for both rank counts.
# SHARD_TEST_NO_VM_LIMIT=1 (set by tests/sanitize/run.sh: AddressSanitizer reserves terabytes of address space for
# its shadow memory and cannot start under such a limit) skips these cases.
case_limited() {
  if [ "${SHARD_TEST_NO_VM_LIMIT:-0}" = 1 ]; then
    echo "SKIPPED: $1 (SHARD_TEST_NO_VM_LIMIT=1: the case needs its address-space limit)"
    return
  fi
  local t0=$SECONDS
  (f0=$FAILS; ulimit -v 4000000 || exit 1; case_ "$@"; exit $((FAILS > f0))) || FAILS=$((FAILS + 1))
  [ $((SECONDS - t0)) -lt 60 ] || fail "$1: $((SECONDS - t0)) s at 1 and 3 ranks"
}

case_ missing "$WORK/none.h5: cannot open checkpoint: No such file or directory" "$scene" --restart "$WORK/none.h5"
case_ truncated "$bad_truncated: " "$scene" --restart "$bad_truncated"
case_ corrupt-header "$bad_header: not a readable HDF5 file (truncated or corrupt)" "$scene" --restart "$bad_header"
case_ corrupt-data "$bad_data: checksum mismatch: the data is corrupt" "$scene" --restart "$bad_data"
case_ wrong-version "$bad_version: checkpoint format version 99; this shard reads version 6" "$scene" \
  --restart "$bad_version"
case_ missing-dataset "$bad_dataset: missing dataset /solid/plastic_strain" "$scene" --restart "$bad_dataset"
case_ missing-memory "$bad_memory: missing dataset /contact_memory/value" "$scene" --restart "$bad_memory"
case_ wrong-size "$bad_size: dataset /particles/global_id has the wrong size (expected 1000 rows)" "$scene" \
  --restart "$bad_size"
case_limited huge-count "$bad_huge: dataset /particles/global_id has the wrong size (expected 2147483648 rows)" \
  "$scene" --restart "$bad_huge"
case_ wrong-bond-count "$bad_bonds: dataset /bonds/partner has the wrong size (expected 17 rows)" "$scene" \
  --restart "$bad_bonds"
case_ output-file "$WORK/out/particles_000100.h5: this is an output file, not a checkpoint" "$scene" \
  --restart "$WORK/out/particles_000100.h5"
case_ wrong-scene "$good: written for a different scene" "$other_scene" --restart "$good"
case_ wrong-dt "$good: written with the time step" "$scene" --restart "$good" --dt 1e-6
case_ step-not-time "$bad_step9: step 1000000000 does not match the time" "$scene" --restart "$bad_step9"
case_ step-huge "$bad_step18: header values out of range (step 1000000000000000000" "$scene" --restart "$bad_step18"
case_ rigid-record-missing "$bad_rigid_gone: module state checksum mismatch" "$rigid_scene" --restart "$bad_rigid_gone"
case_ rigid-record-corrupt "$bad_rigid_data: module state checksum mismatch" "$rigid_scene" --restart "$bad_rigid_data"
case_ scene-edited "$WORK/rigid_E.h5: /scene: the stored scene text does not match its checksum" \
  --restart "$WORK/rigid_E.h5"
case_ bodies-swapped "$WORK/rigid_swap.h5: bodies[0] 'brick': the scene's body (kind rigid, material wood) is not \
the checkpoint's 'crate'" --restart "$WORK/rigid_swap.h5"
case_ density-changed "$WORK/rigid_density.h5: bodies[0] 'crate': the scene gives its 192 particles a mass of \
1.8030000000000004 kg, the checkpoint records 1.8000000000000003 kg" --restart "$WORK/rigid_density.h5"
case_ cloth-fewer-vertices "$WORK/cloth_8,3.h5: bodies[1] 'tag': the scene makes 36 particles of it, the \
checkpoint holds 45" --restart "$WORK/cloth_8,3.h5" --steps 20
case_ cloth-other-vertices "$WORK/cloth_4,8.h5: bodies[1] 'tag': particle 290 rests at (0.32, -0.075, 0.1), not \
where the scene puts its particle 1, (0.32, -0.05, 0.1)" --restart "$WORK/cloth_4,8.h5" --steps 20
case_code 2 steps-before-checkpoint "--steps: the run would end at step 50, before the checkpoint's step 100" \
  "$scene" --restart "$good" --steps 50

finish "every bad checkpoint refused"
