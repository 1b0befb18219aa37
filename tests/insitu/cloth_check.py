# script-version: 2
# Test script for `run.sh cloth`: on every rank, checks block "surfaces" of the collection and appends one line per
# call to OUT/cloth_check_<rank>.txt: "step points triangles" (this rank's partition).
# Checked: the block is there by name (and "particles" is still block 0); each rank has one partition whose cells
# are all triangles (no vertex, line or strip cells) over its own points, each with three distinct global ids;
# the points carry GlobalIds (int64, named global_id), velocity (3 components), body and rank (this rank); the
# triangles of all ranks add up to CLOTH_TRIANGLES; ExtractBlock(Selectors=['/Root/surfaces']), as docs/insitu.md
# shows it, keeps this rank's triangles.  Every rank runs the same pipeline updates and reaches the reduction of
# the total before any raises, so that a failure on one rank stops the run instead of leaving the others waiting.
#   SHARD_CATALYST_OUT  output folder
#   CLOTH_TRIANGLES     triangles over all ranks
import os

from paraview import catalyst
from paraview.simple import *
from vtkmodules.vtkCommonCore import vtkIdTypeArray
from vtkmodules.vtkCommonDataModel import VTK_TRIANGLE
from vtkmodules.vtkParallelCore import vtkCommunicator, vtkMultiProcessController

shard_input = PVTrivialProducer(registrationName="input")
surfaces_only = ExtractBlock(registrationName="surfaces_only", Input=shard_input, Selectors=["/Root/surfaces"])
options = catalyst.Options()
options.GlobalTrigger = "TimeStep"
options.GlobalTrigger.Frequency = 1

controller = vtkMultiProcessController.GetGlobalController()
rank = controller.GetLocalProcessId() if controller is not None else 0
want = int(os.environ.get("CLOTH_TRIANGLES", "-1"))


def check_partition(mesh, where):
    """The failures of one rank's partition of block "surfaces" (a list of messages)."""
    failures = []
    n, cells = mesh.GetNumberOfPoints(), mesh.GetNumberOfCells()
    if mesh.GetNumberOfPolys() != cells or mesh.GetNumberOfVerts() or mesh.GetNumberOfLines() or \
            mesh.GetNumberOfStrips():
        failures.append("%s: %d cells, %d of them polygons" % (where, cells, mesh.GetNumberOfPolys()))
    pd = mesh.GetPointData()
    ids = pd.GetGlobalIds()
    if ids is None or ids.GetName() != "global_id" or not isinstance(ids, vtkIdTypeArray) or \
            ids.GetNumberOfTuples() != n:
        got = None if ids is None else (ids.GetName(), ids.GetClassName(), ids.GetNumberOfTuples())
        failures.append("%s: GlobalIds %s, want global_id, int64, %d values" % (where, got, n))
        ids = None
    for name, k in {"velocity": 3, "body": 1, "rank": 1}.items():
        a = pd.GetArray(name)
        if a is None or a.GetNumberOfComponents() != k or a.GetNumberOfTuples() != n:
            failures.append("%s: array %s: %s" % (where, name, None if a is None else
                                                  (a.GetNumberOfComponents(), a.GetNumberOfTuples())))
    ranks = pd.GetArray("rank")
    if ranks is not None and n and ranks.GetRange(0) != (rank, rank):
        failures.append("%s: rank values %s" % (where, ranks.GetRange(0)))
    for c in range(cells):
        if mesh.GetCellType(c) != VTK_TRIANGLE:
            failures.append("%s: cell %d has type %d, not a triangle" % (where, c, mesh.GetCellType(c)))
            break
        points = mesh.GetCell(c).GetPointIds()
        corners = [points.GetId(j) for j in range(points.GetNumberOfIds())]
        if len(corners) != 3 or not all(0 <= p < n for p in corners):
            failures.append("%s: triangle %d has points %s of %d" % (where, c, corners, n))
            break
        if ids is not None and len({ids.GetValue(p) for p in corners}) != 3:
            failures.append("%s: triangle %d has global ids %s" % (where, c, [ids.GetValue(p) for p in corners]))
            break
    return failures


def catalyst_execute(info):
    shard_input.UpdatePipeline(info.time)
    surfaces_only.UpdatePipeline(info.time)
    data = shard_input.GetClientSideObject().GetOutputDataObject(0)
    where = "rank %d, step %d" % (rank, info.timestep)
    names = [data.GetMetaData(i).Get(data.NAME()) for i in range(data.GetNumberOfPartitionedDataSets())]
    failures, n, cells = [], 0, 0
    if names[:1] != ["particles"] or "surfaces" not in names:
        failures.append("%s: blocks %s" % (where, names))
    else:
        block = data.GetPartitionedDataSet(names.index("surfaces"))
        if block.GetNumberOfPartitions() != 1 or block.GetPartition(0) is None:
            failures.append("%s: %d partitions in block surfaces, want 1" % (where, block.GetNumberOfPartitions()))
        else:
            mesh = block.GetPartition(0)
            n, cells = mesh.GetNumberOfPoints(), mesh.GetNumberOfCells()
            failures += check_partition(mesh, where)
        picked = surfaces_only.GetClientSideObject().GetOutputDataObject(0)
        got = sum(picked.GetPartitionedDataSet(i).GetNumberOfCells()
                  for i in range(picked.GetNumberOfPartitionedDataSets()))
        if got != cells:
            failures.append("%s: ExtractBlock /Root/surfaces keeps %d cells, want %d" % (where, got, cells))

    mine, out = vtkIdTypeArray(), vtkIdTypeArray()
    mine.SetNumberOfTuples(1)
    out.SetNumberOfTuples(1)
    mine.SetValue(0, cells)
    if controller is not None and controller.GetNumberOfProcesses() > 1:
        controller.AllReduce(mine, out, vtkCommunicator.SUM_OP)
    else:
        out.DeepCopy(mine)
    if rank == 0 and out.GetValue(0) != want:
        failures.append("%s: %d triangles over the ranks, want %d" % (where, out.GetValue(0), want))
    assert not failures, "; ".join(failures)
    out_dir = os.environ.get("SHARD_CATALYST_OUT", ".")
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "cloth_check_%d.txt" % rank), "a") as f:
        f.write("%d %d %d\n" % (info.timestep, n, cells))
