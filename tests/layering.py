#!/usr/bin/env python3
"""The layers of the code (docs/architecture.md): core -> physics / decomposition / io -> driver -> CLI.

Every header of include/shard/ belongs to one layer (the table below; a new header must be added to it), and every
file may include headers of its own layer and of the layers below it:
  core           src/core/*.c and its headers: nothing of Shard's but core
  physics        src/*.c: core, physics, and io's mesh reader (sampling closed meshes); no MPI, no decomposition
  decomposition  decomposition/: core and decomposition (the only place that calls MPI, with io/ for HDF5 files)
  io             io/: core, io, and comm.h (parallel HDF5 opens files on the run's communicator)
  driver         src/driver/: everything
  cli            src/main.c: everything
Exits 1 and names every include that breaks a rule, or a header missing from the table.
usage: layering.py ROOT
"""
import os
import re
import sys

LAYER_OF_HEADER = {
    "core": ["base.h", "fields.h", "geometry.h", "hash.h", "interval.h", "pairlist.h", "particles.h", "timer.h", "xsum.h", "fragment.h",
             "rotation.h", "massprops.h"],
    "physics": ["scene.h", "sample.h", "neighbor.h", "solid.h", "contact.h", "integrate.h", "matter.h", "fracture.h",
                "forces.h", "lcp.h", "rigid.h", "collide.h", "cloth.h", "cloth_collide.h"],
    "decomposition": ["comm.h", "halo.h", "ghosts.h", "partition.h", "partition_stats.h", "fragment_comm.h",
                      "migrate.h", "balance.h"],
    "io": ["output.h", "checkpoint.h", "mesh.h", "insitu.h", "fileio.h"],
    "driver": ["run.h", "partition_report.h"],
}
ALLOWED = {
    "core": {"core"},
    "physics": {"core", "physics", "io:mesh.h"},
    "decomposition": {"core", "decomposition"},
    "io": {"core", "io", "decomposition:comm.h"},
    "driver": {"core", "physics", "decomposition", "io", "driver"},
    "cli": {"core", "physics", "decomposition", "io", "driver"},
}
# Private headers of a folder belong to its layer and are found next to the file.
MPI_FREE = {"core", "physics"}

root = sys.argv[1] if len(sys.argv) > 1 else "."
header_layer = {h: layer for layer, hs in LAYER_OF_HEADER.items() for h in hs}
problems = []

for h in sorted(os.listdir(os.path.join(root, "include", "shard"))):
    if h.endswith(".h") and h not in header_layer:
        problems.append("include/shard/%s: not in the layer table of tests/layering.py" % h)


def layer_of(rel):
    if rel.startswith("include/shard/"):
        return header_layer.get(os.path.basename(rel))
    if rel.startswith("src/core/"):
        return "core"
    if rel == "src/main.c":
        return "cli"
    if rel.startswith("src/driver/"):
        return "driver"
    if rel.startswith("src/"):
        return "physics"
    if rel.startswith("decomposition/"):
        return "decomposition"
    if rel.startswith("io/"):
        return "io"
    return None


files = []
for folder in ("include/shard", "src", "src/core", "src/driver", "decomposition", "io"):
    for name in sorted(os.listdir(os.path.join(root, folder))):
        if name.endswith((".c", ".h", ".cxx")):
            files.append(os.path.join(folder, name))

for rel in files:
    layer = layer_of(rel)
    if layer is None:
        continue
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            m = re.match(r'\s*#\s*include\s*([<"])([^">]+)[">]', line)
            if not m:
                continue
            inc = m.group(2)
            if m.group(1) == "<":
                if inc == "mpi.h" and layer in MPI_FREE:
                    problems.append("%s:%d: includes mpi.h, but %s code is MPI-free" % (rel, lineno, layer))
                continue
            if not inc.startswith("shard/"):
                continue  # a private header of the same folder
            h = inc[len("shard/"):]
            hl = header_layer.get(h)
            if hl is None:
                problems.append("%s:%d: includes %s, which is not in the layer table" % (rel, lineno, inc))
                continue
            allowed = ALLOWED[layer]
            if hl not in allowed and "%s:%s" % (hl, h) not in allowed:
                problems.append("%s:%d: %s code includes %s (%s layer)" % (rel, lineno, layer, inc, hl))

for p in problems:
    print("FAIL:", p)
print("PASS: every include follows the layers" if not problems else "%d include(s) break the layers" % len(problems))
sys.exit(1 if problems else 0)
