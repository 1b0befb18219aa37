# script-version: 2
# Test script for `run.sh fragments`, run by shard beside jobs/catalyst/fragments.py: on every rank, checks the
# fragment statistics in the field data of the rank's "particles" partition and appends one line per call to
# OUT/fragments_check_<rank>.txt: "step n_fragments n_bins".  A failed check raises, which stops the run with
# "catalyst script '...': failed at step N: AssertionError: ...".  Checked: each of the ten arrays is there exactly
# once; the five histogram arrays have n_bins >= 1 values, the others one; bin k spans [m0 2^k, m0 2^(k+1)); the
# counts add up to n_fragments; the cumulative mass fraction starts at 1 and never grows; the largest fragment's
# share is in (0, 1]; no tau without 2 fragments fitted; the field data holds nothing of an earlier call twice.
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

HISTOGRAM = ["fragment_bin_min", "fragment_bin_max", "fragment_bin_count", "fragment_bin_mass", "fragment_cumulative"]
FIGURES = ["n_fragments", "largest_fraction", "fragment_tau", "fragment_tau_error", "fragment_n_fit"]
controller = vtkMultiProcessController.GetGlobalController()
rank = controller.GetLocalProcessId() if controller is not None else 0


def particles_partition():
    data = shard_input.GetClientSideObject().GetOutputDataObject(0)
    assert data is not None and data.IsA("vtkPartitionedDataSetCollection"), "no collection on rank %d" % rank
    assert data.GetNumberOfPartitions(0) == 1, "rank %d: %d partitions" % (rank, data.GetNumberOfPartitions(0))
    return data.GetPartition(0, 0)


def catalyst_execute(info):
    shard_input.UpdatePipeline(info.time)
    fd = particles_partition().GetFieldData()
    names = [fd.GetArrayName(i) for i in range(fd.GetNumberOfArrays())]
    where = "rank %d, step %d" % (rank, info.timestep)
    v = {}
    for name in HISTOGRAM + FIGURES:
        assert names.count(name) == 1, "%s: %s %d times in %s" % (where, name, names.count(name), names)
        a = fd.GetArray(name)
        assert a.GetNumberOfComponents() == 1 and a.GetDataTypeAsString() == "double", "%s: %s" % (where, name)
        v[name] = [a.GetValue(i) for i in range(a.GetNumberOfTuples())]
    nb = len(v["fragment_bin_min"])
    assert nb >= 1, "%s: no bins" % where
    for name in HISTOGRAM:
        assert len(v[name]) == nb, "%s: %s has %d values, fragment_bin_min %d" % (where, name, len(v[name]), nb)
    for name in FIGURES:
        assert len(v[name]) == 1, "%s: %s has %d values" % (where, name, len(v[name]))
    lo, hi = v["fragment_bin_min"], v["fragment_bin_max"]
    for k in range(nb):
        assert lo[k] > 0 and hi[k] == 2 * lo[k] and lo[k] == lo[0] * 2 ** k, \
            "%s: bin %d [%g, %g)" % (where, k, lo[k], hi[k])
    n = v["n_fragments"][0]
    assert n >= 1 and sum(v["fragment_bin_count"]) == n, \
        "%s: counts %s, n_fragments %g" % (where, v["fragment_bin_count"], n)
    cum = v["fragment_cumulative"]
    assert abs(cum[0] - 1.0) < 1e-12, "%s: cumulative starts at %r" % (where, cum[0])
    assert all(cum[k + 1] <= cum[k] for k in range(nb - 1)), "%s: cumulative %s grows" % (where, cum)
    assert 0.0 < v["largest_fraction"][0] <= 1.0, "%s: largest_fraction %r" % (where, v["largest_fraction"][0])
    tau, n_fit = v["fragment_tau"][0], v["fragment_n_fit"][0]
    assert n_fit >= 2 or math.isnan(tau), "%s: tau %r with %g fragments fitted" % (where, tau, n_fit)
    out = os.environ.get("SHARD_CATALYST_OUT", "catalyst-out")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "fragments_check_%d.txt" % rank), "a") as f:
        f.write("%d %d %d\n" % (info.timestep, n, nb))
