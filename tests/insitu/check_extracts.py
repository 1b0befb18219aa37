"""Checks the extracts jobs/catalyst/extracts.py wrote (run with /usr/bin/pvpython).

usage: pvpython check_extracts.py DIR PARTICLES RANKS STEP... [--only-position] [--cloth TRIANGLES]
Passes when DIR holds exactly particles_<STEP>.vtpc for the given steps and, in each: ParaView opens it
(OpenDataFile) and counts PARTICLES points plus those of its other blocks; the file holds one partition per rank
in block "particles"; global ids are 0..PARTICLES-1 once each; "rank" takes values in 0..RANKS-1 and equals the
partition it is in; every field of the HDF5 output is there with its number of components (only "rank" with
--only-position); and "stress" is in VTK's component order (von Mises recomputed from it matches "von_mises").
With --cloth (the stand-in driver's --cloth, whose vertices are
particles): block "surfaces" holds at most one partition per rank (the writer leaves out empty partitions; one per
rank in the pipeline is tests/insitu/cloth_check.py's check), TRIANGLES triangles in all, and each of its points
(ghost vertices included) has the position, velocity and body of the particle with its global id.
"""
import glob
import os
import sys

import numpy
from paraview.simple import OpenDataFile
from paraview.vtk.util.numpy_support import vtk_to_numpy
from vtkmodules.vtkCommonDataModel import VTK_TRIANGLE, vtkCompositeDataSet
from vtkmodules.vtkIOXML import vtkXMLPartitionedDataSetCollectionReader

ARRAYS = {"velocity": 3, "displacement": 3, "stress": 9, "von_mises": 1, "plastic_strain": 1, "damage": 1,
          "inverted": 1, "stretch": 1, "contact": 1,
          "body": 1, "material": 1, "rank": 1, "global_id": 1}

argv = sys.argv[1:]
triangles = None
if "--cloth" in argv:
    at = argv.index("--cloth")
    triangles = int(argv[at + 1])
    del argv[at:at + 2]
args = [a for a in argv if not a.startswith("--")]
only_position = "--only-position" in argv
folder, particles, ranks = args[0], int(args[1]), int(args[2])
steps = sorted(int(s) for s in args[3:])
expected = {"rank": 1} if only_position else ARRAYS
failures = []


def check_cloth(name, pdc, blocks, by_id):
    """The failures of block "surfaces" of one extract; by_id: global id -> (position, velocity, body) of the
    particles."""
    if "surfaces" not in blocks:
        return ["%s: no block 'surfaces' (blocks %s)" % (name, blocks)]
    block, out, total = pdc.GetPartitionedDataSet(blocks.index("surfaces")), [], 0
    if block.GetNumberOfPartitions() > ranks:
        out.append("%s: surfaces: %d partitions, expected at most one per rank (%d)" %
                   (name, block.GetNumberOfPartitions(), ranks))
    for part in range(block.GetNumberOfPartitions()):
        mesh = block.GetPartition(part)
        if mesh is None or mesh.GetNumberOfPoints() == 0:
            continue
        total += mesh.GetNumberOfCells()
        if mesh.GetNumberOfPolys() != mesh.GetNumberOfCells() or \
                any(mesh.GetCellType(c) != VTK_TRIANGLE for c in range(mesh.GetNumberOfCells())):
            out.append("%s: surfaces partition %d: cells other than triangles" % (name, part))
        pd = mesh.GetPointData()
        gid, v, body = (pd.GetArray(a) for a in ("global_id", "velocity", "body"))
        if gid is None or v is None or body is None or pd.GetArray("rank") is None:
            out.append("%s: surfaces partition %d: arrays %s" %
                       (name, part, [pd.GetArrayName(k) for k in range(pd.GetNumberOfArrays())]))
            continue
        xyz, gid, v, body = (vtk_to_numpy(mesh.GetPoints().GetData()), vtk_to_numpy(gid), vtk_to_numpy(v),
                             vtk_to_numpy(body))
        for i, g in enumerate(gid):
            want = by_id.get(int(g))
            if want is None or not (numpy.array_equal(xyz[i], want[0]) and numpy.array_equal(v[i], want[1]) and
                                    body[i] == want[2]):
                out.append("%s: surfaces partition %d: point %d (global id %d) is not particle %d"
                           % (name, part, i, g, g))
                break
    if total != triangles:
        out.append("%s: surfaces: %d triangles, expected %d" % (name, total, triangles))
    return out


found = sorted(int(os.path.basename(f)[len("particles_"):-len(".vtpc")])
               for f in glob.glob(os.path.join(folder, "particles_*.vtpc")))
if found != steps:
    failures.append("steps written %s, requested %s" % (found, steps))

for step in found:
    name = os.path.join(folder, "particles_%06d.vtpc" % step)
    source = OpenDataFile(name)
    source.UpdatePipeline()
    info = source.GetDataInformation()
    reader = vtkXMLPartitionedDataSetCollectionReader()
    reader.SetFileName(name)
    reader.Update()
    pdc = reader.GetOutput()
    blocks = [pdc.GetMetaData(b).Get(vtkCompositeDataSet.NAME())
              for b in range(pdc.GetNumberOfPartitionedDataSets())]
    others = sum(pdc.GetPartitionedDataSet(b).GetNumberOfPoints() for b in range(1, len(blocks)))
    if info.GetNumberOfPoints() != particles + others:
        failures.append("%s: ParaView counts %d points, expected %d (%d in other blocks)" %
                        (name, info.GetNumberOfPoints(), particles + others, others))

    if blocks[:1] != ["particles"]:
        failures.append("%s: block 0 is not 'particles'" % name)
        continue
    block = pdc.GetPartitionedDataSet(0)
    if block.GetNumberOfPartitions() != ranks:
        failures.append("%s: %d partitions, expected one per rank (%d)" % (name, block.GetNumberOfPartitions(), ranks))
    ids, points, by_id = [], 0, {}
    for part in range(block.GetNumberOfPartitions()):
        mesh = block.GetPartition(part)
        if mesh is None:
            continue
        n = mesh.GetNumberOfPoints()
        points += n
        if mesh.GetNumberOfVerts() != n:
            failures.append("%s: partition %d has %d vertex cells for %d points" % (name, part, mesh.GetNumberOfVerts(), n))
        pd = mesh.GetPointData()
        present = {pd.GetArrayName(k) for k in range(pd.GetNumberOfArrays())}
        for array, ncomp in expected.items():
            a = pd.GetArray(array)
            if a is None:
                failures.append("%s: partition %d: array '%s' missing (have %s)" % (name, part, array, sorted(present)))
            elif a.GetNumberOfComponents() != ncomp or a.GetNumberOfTuples() != n:
                failures.append("%s: partition %d: '%s' has %d x %d values, expected %d x %d" %
                                (name, part, array, a.GetNumberOfTuples(), a.GetNumberOfComponents(), n, ncomp))
        if present - set(expected):
            failures.append("%s: partition %d: unexpected arrays %s" % (name, part, sorted(present - set(expected))))
        if n and pd.GetArray("rank") is not None:
            owner = numpy.unique(vtk_to_numpy(pd.GetArray("rank")))
            if owner.tolist() != [part] or part >= ranks:
                failures.append("%s: partition %d has rank values %s" % (name, part, owner.tolist()))
        if n and pd.GetArray("global_id") is not None:
            ids.append(vtk_to_numpy(pd.GetArray("global_id")))
            if triangles is not None:
                xyz, v, body = (vtk_to_numpy(mesh.GetPoints().GetData()), vtk_to_numpy(pd.GetArray("velocity")),
                                vtk_to_numpy(pd.GetArray("body")))
                for i, g in enumerate(ids[-1]):
                    by_id[int(g)] = (xyz[i], v[i], body[i])
        if n and pd.GetArray("von_mises") is not None and pd.GetArray("stress") is not None:
            # The stress reaches ParaView as the full 3x3 tensor, row by row (XX XY XZ YX YY YZ ZX ZY ZZ), which
            # every VTK filter reads the same way: symmetric, and von Mises from it must match the driver's.
            s = vtk_to_numpy(pd.GetArray("stress"))
            vm = vtk_to_numpy(pd.GetArray("von_mises"))
            xx, xy, xz, yx, yy, yz, zx, zy, zz = (s[:, k] for k in range(9))
            check = numpy.sqrt(0.5 * ((xx - yy) ** 2 + (yy - zz) ** 2 + (zz - xx) ** 2) + 3 * (xy ** 2 + yz ** 2 + xz ** 2))
            names = [pd.GetArray("stress").GetComponentName(k) for k in range(9)]
            if not numpy.allclose(check, vm, rtol=1e-12, atol=1e-9 * max(1.0, numpy.abs(vm).max())):
                failures.append("%s: partition %d: stress components are not row by row" % (name, part))
            if not (numpy.array_equal(xy, yx) and numpy.array_equal(yz, zy) and numpy.array_equal(xz, zx)):
                failures.append("%s: partition %d: stress tensor is not symmetric" % (name, part))
            if names != ["XX", "XY", "XZ", "YX", "YY", "YZ", "ZX", "ZY", "ZZ"]:
                failures.append("%s: partition %d: stress component names %s" % (name, part, names))
    if points != particles:
        failures.append("%s: %d points in the partitions, expected %d" % (name, points, particles))
    if triangles is not None:
        failures += check_cloth(name, pdc, blocks, by_id)
    if not only_position and not numpy.array_equal(numpy.sort(numpy.concatenate(ids)), numpy.arange(particles)):
        failures.append("%s: global ids are not 0..%d once each" % (name, particles - 1))

for f in failures:
    print("FAIL:", f)
if not failures:
    print("PASS: %d extract(s) at steps %s, %d points on %d rank(s), arrays: %s%s" %
          (len(found), found, particles, ranks, ", ".join(sorted(expected)),
           "" if triangles is None else "; block surfaces: %d triangles" % triangles))
sys.exit(1 if failures else 0)
