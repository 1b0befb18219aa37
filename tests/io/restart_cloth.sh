#!/usr/bin/env bash
# Cloth through checkpoints and output: (run N steps) and (run k steps, checkpoint, restart on another rank
# count, run N - k) end with the same state hash, bit for bit (also through cloth collisions); every output
# file holds /surfaces/triangles (the two grids' 2 x (16 x 16 + 8 x 4) triangles, as rows of /particles whose
# global ids are the triangles' vertices), surfaces.xmf indexes them, and ParaView draws them (when pvpython
# and xvfb-run are installed).
# usage: restart_cloth.sh SHARD   (run in tests/io)
set -uo pipefail
# shellcheck source=tests/lib.sh
. ../lib.sh
test_init "$1"
need_hdf5
scene=scenes/restart_cloth.yaml
N=1500

ref=$(ref_hash "$scene" $N)
[ -n "$ref" ] || { fail "no reference hash"; finish; }
echo "reference: $N steps on 1 rank without output: $ref"

h=$(shard_run 2 run "$scene" --steps $N --out "$WORK/full" | hash_of)
expect_eq "output and checkpoints do not perturb the state (2 ranks)" "$h" "$ref"

shard_run 1 run "$scene" --steps 600 --out "$WORK/a" > "$WORK/a.log"
h=$(shard_run 3 run "$scene" --restart "$WORK/a/checkpoint_000600.h5" --steps $N --out "$WORK/a" | hash_of)
expect_eq "restart 1 -> 3 ranks at step 600" "$h" "$ref"
shard_run 3 run "$scene" --steps 600 --out "$WORK/b" > "$WORK/b.log"
h=$(shard_run 2 run --restart "$WORK/b/checkpoint_000600.h5" --steps $N --out "$WORK/b" | hash_of)
expect_eq "restart 3 -> 2 ranks at step 600" "$h" "$ref"

if command -v h5dump >/dev/null; then
  rows=$(h5dump -A -a /surfaces/triangles/count "$WORK/full/particles_001500.h5" 2>/dev/null | sed -n 's/^ *(0): //p')
  [ -n "$rows" ] || rows=$(h5dump -H -d /surfaces/triangles "$WORK/full/particles_001500.h5" 2>/dev/null |
                           sed -n 's/.*DATASPACE *SIMPLE { ( \([0-9]*\), 3 ).*/\1/p')
  expect_eq "/surfaces/triangles holds every triangle" "$rows" 576
  # every triangle's corners are rows whose global ids form a triangle of the grids: the first one of the
  # sheet's cell (0, 0) is (0, 1, 18), so some row of /surfaces/triangles maps to those ids
  python3 - "$WORK/full/particles_001500.h5" <<'PY' && pass "/surfaces/triangles rows name the grids' triangles" ||
import subprocess, sys
f = sys.argv[1]
def dump(d):
    out = subprocess.run(["h5dump", "-w", "0", "-y", "-d", d, f], capture_output=True, text=True).stdout
    body = out[out.index("DATA {") + 6:out.rindex("}")]
    return [int(v) for v in body.replace(",", " ").split() if v.lstrip("-").isdigit()]
tri, gid = dump("/surfaces/triangles"), dump("/particles/global_id")
tris = {tuple(sorted(gid[r] for r in tri[3 * k:3 * k + 3])) for k in range(len(tri) // 3)}
# the sheet's 16 x 16 grid: vertex (i, j) is j * 17 + i; cell (i, j) has (v00, v10, v11) and (v00, v11, v01)
want = set()
for j in range(16):
    for i in range(16):
        a, b, c, d = j * 17 + i, j * 17 + i + 1, (j + 1) * 17 + i + 1, (j + 1) * 17 + i
        want.add(tuple(sorted((a, b, c)))), want.add(tuple(sorted((a, c, d))))
sys.exit(0 if want <= tris and len(tris) == 576 else 1)
PY
  fail "/surfaces/triangles does not name the sheet's triangles"
fi
grids=$(grep -c '<Grid Name="step_' "$WORK/full/surfaces.xmf" 2>/dev/null)
expect_eq "surfaces.xmf lists the 6 outputs (0..1500 every 300)" "$grids" 6
grids=$(grep -c '<Grid Name="step_' "$WORK/a/surfaces.xmf" 2>/dev/null)
expect_eq "after the 1 -> 3 restart surfaces.xmf lists every output particles.xmf lists" "$grids" \
  "$(grep -c '<Grid Name="step_' "$WORK/a/particles.xmf" 2>/dev/null)"
grep -q 'TopologyType="Triangle"' "$WORK/full/surfaces.xmf" && pass "surfaces.xmf has Triangle grids" ||
  fail "surfaces.xmf has no Triangle topology"

if command -v pvpython >/dev/null && command -v xvfb-run >/dev/null; then
  n=$(shard_run 1 check "$scene" | sed -n 's/^Particles: \([0-9]*\),.*/\1/p')
  xvfb-run -a -s "-screen 0 1024x768x24 -noreset" pvpython check_xdmf.py --cells "$WORK/full/surfaces.xmf" "$n" 6 \
    > "$WORK/pv.log" 2>&1
  grep -q '^all checks passed' "$WORK/pv.log" && pass "ParaView draws surfaces.xmf's triangles" ||
    { tail -20 "$WORK/pv.log"; fail "ParaView's readers on surfaces.xmf"; }
fi

# Through collisions (proximity, continuous collisions, impact zones across ranks).
fold=scenes/restart_cloth_fold.yaml
ref=$(ref_hash "$fold" $N)
shard_run 1 run "$fold" --steps 600 --out "$WORK/c" > "$WORK/c.log"
h=$(shard_run 3 run "$fold" --restart "$WORK/c/checkpoint_000600.h5" --steps $N --out "$WORK/c" | hash_of)
expect_eq "cloth collisions: restart 1 -> 3 ranks at step 600" "$h" "$ref"
# the collision stage's force on each vertex (output field contact): the same, by global id, after the
# restart as in a run on 2 ranks without one, finite, >= 0, and not zero everywhere (the patch hits the net)
if command -v h5dump >/dev/null; then
  shard_run 2 run "$fold" --steps $N --out "$WORK/d" > "$WORK/d.log"
  python3 - "$WORK/c/particles_001500.h5" "$WORK/d/particles_001500.h5" "$WORK/d/particles_000300.h5" <<'PY' &&
import math, subprocess, sys
def dump(f, d):
    out = subprocess.run(["h5dump", "-m", "%.17g", "-w", "0", "-y", "-d", d, f], capture_output=True,
                         text=True).stdout
    at = out.index("DATA {") + 6
    return [float(v) for v in out[at:out.index("}", at)].replace(",", " ").split()]
def by_id(f):
    return dict(zip((int(g) for g in dump(f, "/particles/global_id")), dump(f, "/particles/contact")))
a, b, early = by_id(sys.argv[1]), by_id(sys.argv[2]), by_id(sys.argv[3])
ok = a == b and all(math.isfinite(v) and v >= 0.0 for v in list(a.values()) + list(early.values()))
ok = ok and max(a.values()) > 0.0 and max(early.values()) > 0.0
print("contact: %d vertices, largest %.4g N at step 1500, %.4g N at step 300" % (len(a), max(a.values()),
                                                                            max(early.values())))
sys.exit(0 if ok else 1)
PY
    pass "the contact field is the same after the restart, finite and not zero" ||
    fail "the contact field differs after the restart, or is not finite, or zero"
fi

finish "cloth restarts bit-identically on another rank count and is drawn from surfaces.xmf"
