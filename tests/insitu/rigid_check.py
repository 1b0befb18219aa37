# script-version: 2
# Test script for `run.sh rigid`: on every rank, checks block "frames" of the collection and appends one line per
# call to OUT/rigid_check_<rank>.txt: "step points x0 y0 z0" (the first frame's centre; rank 0 only has points).
# Checked: the block is there by name; rank 0's partition has one point per rigid body (RIGID_BODIES in the
# environment), the others none; the arrays orientation (4 components, unit quaternions), velocity,
# angular_velocity, contact_force, contact_torque, axis_1..3 (unit, orthogonal) and body are there.
#   SHARD_CATALYST_OUT  output folder
import math
import os

from paraview import catalyst
from paraview.simple import *
from vtkmodules.vtkParallelCore import vtkMultiProcessController

shard_input = PVTrivialProducer(registrationName="input")
options = catalyst.Options()
options.GlobalTrigger = "TimeStep"
options.GlobalTrigger.Frequency = 1

controller = vtkMultiProcessController.GetGlobalController()
rank = controller.GetLocalProcessId() if controller is not None else 0
want = int(os.environ.get("RIGID_BODIES", "0"))


def catalyst_execute(info):
    shard_input.UpdatePipeline(info.time)
    data = shard_input.GetClientSideObject().GetOutputDataObject(0)
    where = "rank %d, step %d" % (rank, info.timestep)
    names = [data.GetMetaData(i).Get(data.NAME()) for i in range(data.GetNumberOfPartitionedDataSets())]
    assert "frames" in names, "%s: blocks %s" % (where, names)
    block = data.GetPartition(names.index("frames"), 0)
    n = block.GetNumberOfPoints()
    assert n == (want if rank == 0 else 0), "%s: %d frames, want %d" % (where, n, want if rank == 0 else 0)
    pd = block.GetPointData()
    ncomp = {"orientation": 4, "velocity": 3, "angular_velocity": 3, "contact_force": 3, "contact_torque": 3,
             "axis_1": 3, "axis_2": 3, "axis_3": 3, "body": 1}
    for name, k in ncomp.items():
        a = pd.GetArray(name)
        assert a is not None and a.GetNumberOfComponents() == k, "%s: array %s" % (where, name)
    for i in range(n):
        q = pd.GetArray("orientation").GetTuple(i)
        assert abs(math.sqrt(sum(c * c for c in q)) - 1) < 1e-12, "%s: frame %d: |q| = %r" % (where, i, q)
        axes = [pd.GetArray("axis_%d" % k).GetTuple(i) for k in (1, 2, 3)]
        for a in range(3):
            for b in range(3):
                d = sum(axes[a][c] * axes[b][c] for c in range(3))
                assert abs(d - (1 if a == b else 0)) < 1e-12, "%s: frame %d: axes %r" % (where, i, axes)
    out = os.environ.get("SHARD_CATALYST_OUT", ".")
    os.makedirs(out, exist_ok=True)
    first = block.GetPoint(0) if n else (0.0, 0.0, 0.0)
    with open(os.path.join(out, "rigid_check_%d.txt" % rank), "a") as f:
        f.write("%d %d %.17g %.17g %.17g\n" % (info.timestep, n, first[0], first[1], first[2]))
