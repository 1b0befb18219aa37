#!/usr/bin/env bash
# A full disk during output and checkpoints: every case runs scenes/full_disk.yaml on a tmpfs file system of a
# chosen size, so that the disk fills during the first output file, a later one, the XDMF index written whole (at
# the first output of a restart into a folder with an earlier run's files), the first or a later checkpoint
# (SHARD_FAULT_RESERVE=late, given to the test build SHARD_FAULTS, moves the point where the space runs out into
# the datasets and the metadata flush of the file), at 1 and 3 ranks.  Every case must end with exit status 6 on every rank
# within 60 s, one message naming the file, no temporary file, no partial output file, the earlier outputs
# unchanged, particles.xmf well-formed and listing exactly the outputs on disk, and the earlier checkpoints
# loadable; from a later checkpoint the restart on another rank count gives the uninterrupted run's state hash.
# usage: full_disk.sh SHARD SHARD_FAULTS   (run in tests/io; it mounts tmpfs, so it needs root: exit 77 where it
# may not)
set -uo pipefail
# shellcheck source=tests/lib.sh
. ../lib.sh
test_init "$1"
FAULTS=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
need_hdf5
scene=scenes/full_disk.yaml
STEPS=200          # the reference runs' length: every failure planned below falls due by step 200
PAGE=$(getconf PAGESIZE)
MOUNTS=()
cleanup() {
  for m in "${MOUNTS[@]}"; do umount "$m" 2>/dev/null; done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

mkdir -p "$WORK/probe"
if ! mount -t tmpfs -o size=64k tmpfs "$WORK/probe" 2>"$WORK/probe.err"; then
  echo "SKIPPED: cannot mount a tmpfs file system here ($(head -n 1 "$WORK/probe.err")): needs root"
  exit 77
fi
umount "$WORK/probe"
# tmpfs counts whole pages; the fill levels below are planned in 4 KiB pages (an index of 14 pages and more).
[ "$PAGE" = 4096 ] || { echo "SKIPPED: the fill levels are planned for 4 KiB pages, this machine has $PAGE"; exit 77; }
command -v python3 > /dev/null || { echo "SKIPPED: needs python3 (the plan, the XML check)"; exit 77; }
command -v h5diff > /dev/null || echo "NOTE: no h5diff (hdf5-tools): earlier outputs are not compared"

# run_shard N LOG [ENV=VALUE...] -- ARGS: shard ($RUN_BIN when set) ARGS on N ranks with a 60 s limit, output in LOG, every rank's exit
# status in $ranks (sorted, e.g. "6 6 6"; a rank killed at the limit leaves none) and $rc = 124 after the limit
cat > "$WORK/rank.sh" <<'SH'
#!/bin/sh
status=$1
shift
"$@"
rc=$?
echo $rc > "$status.${OMPI_COMM_WORLD_RANK:-0}"
exit $rc
SH
chmod +x "$WORK/rank.sh"
run_shard() {
  local n=$1 log=$2
  shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  rm -f "$log".status.*
  # Open MPI kills the other ranks once one has exited non-zero (and then exits 0): let each report its own.
  env OMPI_MCA_orte_abort_on_non_zero_status=0 "${envs[@]}" timeout 60 \
    mpiexec --oversubscribe -n "$n" "$WORK/rank.sh" "$log.status" "${RUN_BIN:-$SHARD}" "$@" --quiet < /dev/null > "$log" 2>&1
  rc=$?
  ranks=$(cat "$log".status.* 2>/dev/null | sort -n | paste -sd' ' -)
}
# every CODE N: "CODE CODE ..." (N times), to compare with $ranks
every() { yes "$1" | head -n "$2" | paste -sd' ' -; }

# References: the state hash of the run without I/O, and the files of an uninterrupted run at 1 and 3 ranks.
strip_io "$scene" > "$WORK/noio.yaml"
run_shard 1 "$WORK/ref.log" -- run "$WORK/noio.yaml" --steps 250
ref=$(hash_of < "$WORK/ref.log")
[ -n "$ref" ] || { echo "FAIL: no reference hash"; cat "$WORK/ref.log"; exit 1; }
for n in 1 3; do
  run_shard $n "$WORK/ref$n.log" -- run "$scene" --steps $STEPS --out "$WORK/ref$n"
  [ "$ranks" = "$(every 0 $n)" ] ||
    { echo "FAIL: reference run on $n rank(s): exit '$ranks'"; cat "$WORK/ref$n.log"; exit 1; }
done

# The plan: for each case the size of the file system (in pages), the file that must fail, and what must be
# left.  Sizes come from the reference files (particles, checkpoints, the XDMF index, decomposition.csv); the
# schedule (output every 10, checkpoint every 100, keep 2) is the scene's.  While a file is written it may hold up to MARGIN pages more than its final size (the space
# reserved for it is an estimate, and an allowance for the metadata is reserved before the flush).
python3 - "$WORK/ref1" $PAGE > "$WORK/plan" <<'EOF' || { echo "FAIL: no plan"; exit 1; }
import os, re, sys
ref, page = sys.argv[1], int(sys.argv[2])
OUT, CK, KEEP, MARGIN = 10, 100, 2, 6
pages = lambda b: (b + page - 1) // page
a_out = pages(os.path.getsize(os.path.join(ref, "particles_000000.h5")))
a_ck = pages(os.path.getsize(os.path.join(ref, "checkpoint_000100.h5")))
text = open(os.path.join(ref, "particles.xmf")).read()
first = text.index('   <Grid Name="step_')
grids = re.findall(r'   <Grid Name="step_.*?   </Grid>\n', text, re.S)
head, foot = text[:first], text[first + sum(map(len, grids)):]
xmf = lambda k: pages(len(head) + sum(len(g) for g in grids[:k]) + len(foot))   # bytes with k grids
# decomposition.csv, rewritten (temporary file, rename) after each output: its pages with k rows
rows = open(os.path.join(ref, "decomposition.csv")).read().splitlines(True)
csv = lambda k: pages(sum(len(r) for r in rows[:k + 1]))

def events(first, last):
    for s in range(first, last + 1):
        if s % OUT == 0:
            yield ("out", s)
            yield ("xmf", s)
            yield ("csv", s)
        if s % CK == 0 and s > 0:
            yield ("ck", s)

# The XDMF index and decomposition.csv are written whole (a temporary file beside the old one, then a rename) at
# the run's first output, and then grow in place by a grid or a row per output.  restart: the run continues from
# the checkpoint of that step in a folder holding the reference run's files up to it (copied there first).
def plan(name, kind, step, late, frac, restart=None):
    files, outs, lower, whole = {}, [], 0, {"xmf", "csv"}
    if restart is not None:
        outs = list(range(0, restart + 1, OUT))
        files = {"out_%d" % s: a_out for s in outs}
        files.update({"ck_%d" % s: a_ck for s in range(CK, restart + 1, CK)[-KEEP:]})
        files.update(xmf=xmf(len(outs)), csv=csv(len(outs)))
        lower = sum(files.values())
    for ev in events(0 if restart is None else restart + 1, step):
        used = sum(files.values())
        if ev[0] == "out":
            need = a_out, a_out + MARGIN
        elif ev[0] == "ck":
            need = a_ck, a_ck + MARGIN
        else:
            size = (xmf if ev[0] == "xmf" else csv)(len(outs))
            need = (size if ev[0] in whole else size - files[ev[0]],) * 2
        if ev == (kind, step):
            upper = used + need[0]            # fewer pages than this: the write must fail
            if frac is None:
                size = upper - 1 if kind == "xmf" else (lower + upper) // 2
            elif frac == "flush":
                # room for the whole file but not for the metadata allowance reserved before the flush
                size = upper = used + need[0]
                upper += 1
            else:
                size = max(lower, used + int(frac * need[0]))
            assert lower <= size < upper, (name, lower, size, upper)
            if kind == "xmf":
                outs.pop()                    # an output whose index cannot be written is removed
            cks = sorted(int(f[3:]) for f in files if f.startswith("ck_"))
            print(name, kind, step, "late" if late else "restart:%d" % restart if restart is not None else "-", size,
                  ",".join(map(str, outs)) or "-", ",".join(map(str, cks)) or "-")
            return
        lower = max(lower, used + need[1])    # at least this many pages: the earlier writes succeed
        if ev[0] == "out":
            files["out_%d" % ev[1]] = a_out
            outs.append(ev[1])
        elif ev[0] in ("xmf", "csv"):
            files[ev[0]] = (xmf if ev[0] == "xmf" else csv)(len(outs))
            whole.discard(ev[0])
        else:
            files["ck_%d" % ev[1]] = a_ck
            for s in sorted((int(f[3:]) for f in files if f.startswith("ck_")), reverse=True)[KEEP:]:
                del files["ck_%d" % s]

plan("output-first", "out", 0, False, None)
plan("output-later", "out", 150, False, None)
# An index that grows by less than a page per output cannot be the one write that meets a full disk after the
# output file (which needs MARGIN pages more while it is written); the index written whole can: the restart's.
plan("xdmf-rewrite", "xmf", 210, False, None, restart=200)
plan("checkpoint-first", "ck", 100, False, None)
plan("checkpoint-later", "ck", 200, False, None)
plan("late-output-first", "out", 0, True, 0.3)
plan("late-output-middle", "out", 120, True, 0.6)
plan("late-output-end", "out", 120, True, 0.999)
plan("late-output-flush", "out", 120, True, "flush")
plan("late-checkpoint-early", "ck", 200, True, 0.1)
plan("late-checkpoint-middle", "ck", 200, True, 0.5)
plan("late-checkpoint-end", "ck", 200, True, 0.999)
plan("late-checkpoint-flush", "ck", 200, True, "flush")
EOF

# check_xdmf FILE DIR STEPS: well-formed XML whose grids are exactly STEPS (comma list or -), files present.
check_xdmf() {
  python3 - "$@" <<'EOF'
import os, sys, xml.etree.ElementTree as ET
path, folder, want = sys.argv[1], sys.argv[2], sys.argv[3]
want = [] if want == "-" else ["step_%06d" % int(s) for s in want.split(",")]
if not os.path.exists(path):
    sys.exit(0 if not want else "no %s" % path)
try:
    root = ET.parse(path).getroot()
except ET.ParseError as e:
    sys.exit("%s is not well-formed XML: %s" % (path, e))
grids = [g.get("Name") for g in root.iter("Grid") if g.get("GridType") == "Uniform"]
if grids != want:
    sys.exit("%s lists %s, want %s" % (path, grids, want))
missing = sorted({d.text.split(":")[0] for d in root.iter("DataItem")} - set(os.listdir(folder)))
if missing:
    sys.exit("%s names missing files %s" % (path, missing))
EOF
}

while read -r name kind step mode pages outs cks; do
  for n in 1 3; do
    tag="$name, $n rank(s)"
    dir="$WORK/$name-$n"
    mkdir -p "$dir"
    mount -t tmpfs -o size=$((pages * PAGE / 1024))k tmpfs "$dir" || { fail "$tag: mount"; continue; }
    MOUNTS+=("$dir")
    envs=() bin=$SHARD args=() src=$WORK/ref$n
    [ "$mode" = late ] && envs=(SHARD_FAULT_RESERVE=late) bin=$FAULTS
    if [ "${mode%%:*}" = restart ]; then   # the 1-rank reference run's files up to that step, restarted from there
      at=${mode#restart:} src=$WORK/ref1
      for f in "$src"/*; do
        s=$(basename "$f" | sed -n 's/^[a-z]*_0*\([0-9][0-9]*\)\.h5$/\1/p')
        { [ -z "$s" ] || [ "$s" -le "$at" ]; } && cp "$f" "$dir/"
      done
      args=(--restart "$(printf '%s/checkpoint_%06d.h5' "$dir" "$at")")
    fi
    t0=$EPOCHREALTIME
    RUN_BIN=$bin run_shard $n "$dir.log" "${envs[@]}" -- run "$scene" --steps 250 --out "$dir" "${args[@]}"
    secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
    case $kind in
      out) file=$(printf 'particles_%06d.h5' "$step") ;;
      xmf) file=particles.xmf ;;
      ck) file=$(printf 'checkpoint_%06d.h5' "$step") ;;
    esac
    msgs=$(grep -c '^shard: error' "$dir.log")
    noise=$(grep -v '^shard: error' "$dir.log" | grep -ci 'error\|space\|fail')
    echo "--- $tag: $pages pages, exit ${ranks:-none}, ${secs} s: $(grep -m 1 '^shard: error' "$dir.log")"
    if [ $rc -eq 124 ]; then fail "$tag: hung (killed after 60 s; exit status of the ranks that had ended: '$ranks')"
    elif [ "$ranks" = "$(every 6 $n)" ]; then pass "$tag: exit 6 on every rank"
    else fail "$tag: exit status of the ranks '$ranks', want 6 on every rank"; sed -n '1,15p' "$dir.log"; fi
    if [ "$msgs" -eq 1 ] && [ "$noise" -eq 0 ] && grep '^shard: error' "$dir.log" | grep -qF "$file"; then
      pass "$tag: one message naming $file, nothing else"
    else
      fail "$tag: $msgs message(s) and $noise other error line(s), want one message naming $file"
    fi
    left=$(cd "$dir" && ls -A | grep -E '\.tmp$' | tr '\n' ' ')
    [ -z "$left" ] && pass "$tag: no temporary file left" || fail "$tag: left $left"
    if [ "$kind" = out ]; then
      [ ! -e "$dir/$file" ] && pass "$tag: no partial $file" || fail "$tag: partial $file left"
    fi
    got=$(cd "$dir" && ls | sed -n 's/^particles_0*\([0-9][0-9]*\)\.h5$/\1/p' | sort -n | paste -sd, -)
    expect_eq "$tag: outputs on disk" "${got:--}" "$outs"
    if command -v h5diff > /dev/null; then
      bad=""
      for f in "$dir"/particles_*.h5; do
        [ -e "$f" ] || continue
        h5diff -q "$f" "$src/$(basename "$f")" > /dev/null 2>&1 || bad="$bad $(basename "$f")"
      done
      [ -z "$bad" ] && pass "$tag: earlier outputs identical to the uninterrupted run's" || fail "$tag: changed:$bad"
    fi
    if why=$(check_xdmf "$dir/particles.xmf" "$dir" "$outs" 2>&1); then
      pass "$tag: particles.xmf well-formed, lists exactly the outputs on disk"
    else
      fail "$tag: $why"
    fi
    got=$(cd "$dir" && ls | sed -n 's/^checkpoint_0*\([0-9][0-9]*\)\.h5$/\1/p' | sort -n | paste -sd, -)
    expect_eq "$tag: checkpoints on disk" "${got:--}" "$cks"
    for s in ${cks//,/ }; do
      [ "$s" = - ] && continue
      ck=$(printf '%s/checkpoint_%06d.h5' "$dir" "$s")
      run_shard 1 "$dir.load.log" -- run --restart "$ck" --steps "$s" --out "$WORK/load"
      [ "$ranks" = 0 ] && pass "$tag: $(basename "$ck") loads" || fail "$tag: $(basename "$ck"): exit '$ranks'"
    done
    # From the earlier checkpoint of a failed checkpoint write, on another rank count, to the reference hash.
    if [ "$name" = checkpoint-later ]; then
      m=$((n == 1 ? 3 : 2))
      run_shard $m "$dir.restart.log" -- run --restart "$dir/checkpoint_000100.h5" --steps 250 --out "$WORK/rs$n"
      expect_eq "$tag: restart $n -> $m ranks from checkpoint_000100.h5" "$(hash_of < "$dir.restart.log")" "$ref"
    fi
    umount "$dir" && rmdir "$dir"
  done
done < "$WORK/plan"

finish "full disk"
