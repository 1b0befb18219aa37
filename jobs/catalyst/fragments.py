# script-version: 2
# Catalyst script (4): the fragment statistics of a breaking run, plotted while it goes on.  Each step it runs
# on, rank 0 reads the statistics that Shard puts into the field data of block "particles" (the same on every
# rank: fragment_bin_min, fragment_bin_max, fragment_bin_count, fragment_bin_mass, fragment_cumulative,
# n_fragments, largest_fraction, fragment_tau, fragment_tau_error, fragment_n_fit; docs/insitu.md) and writes
#   OUT/fragments_<step:06d>.png  the number density n(m) = count / (bin_max - bin_min) against the bin centre on
#                                 log-log axes, the cumulative mass distribution (mass fraction in fragments of
#                                 mass >= m) on a second axis; the title gives step, time, fragments, tau +- error
#   OUT/fragments_live.csv        one line per call: step,time,n_fragments,largest_fraction,tau (with a header;
#                                 a restarted run keeps the lines before its first step, as Shard's CSV files do)
# Rendering uses matplotlib's Agg backend (Debian package python3-matplotlib), no X server.  Without matplotlib the
# script prints one warning and writes only the CSV file; a scene without breaking bodies has no statistics, and
# the script then prints one warning and writes nothing.  The other ranks do nothing.
#   SHARD_CATALYST_OUT   output folder (default: catalyst-out)
#   SHARD_CATALYST_SIZE  image size "W,H" in pixels (default 800,600)
import math
import os
import sys

from paraview import catalyst
from paraview.simple import *
from vtkmodules.vtkParallelCore import vtkMultiProcessController

shard_input = PVTrivialProducer(registrationName="input")

options = catalyst.Options()
options.ExtractsOutputDirectory = os.environ.get("SHARD_CATALYST_OUT", "catalyst-out")
options.GlobalTrigger = "TimeStep"
options.GlobalTrigger.Frequency = 1

out_dir = os.environ.get("SHARD_CATALYST_OUT", "catalyst-out")
width, height = (int(v) for v in os.environ.get("SHARD_CATALYST_SIZE", "800,600").split(","))
CSV_HEADER = "step,time,n_fragments,largest_fraction,tau\n"
HISTOGRAM = ["fragment_bin_min", "fragment_bin_max", "fragment_bin_count", "fragment_bin_mass", "fragment_cumulative"]
FIGURES = ["n_fragments", "largest_fraction", "fragment_tau", "fragment_tau_error", "fragment_n_fit"]

controller = vtkMultiProcessController.GetGlobalController()
is_rank0 = controller is None or controller.GetLocalProcessId() == 0
state = {"csv_started": False, "warned": set(), "plot": None}


def warn_once(key, text):
    if key not in state["warned"]:
        state["warned"].add(key)
        print("fragments.py: warning: " + text, file=sys.stderr, flush=True)


def local_statistics():
    """The statistics from the field data of this rank's "particles" partition (or of any partition that has
    them): {name: list of floats}, or None when the data carries none."""
    data = shard_input.GetClientSideObject().GetOutputDataObject(0)
    if data is None:
        return None
    candidates = [data]
    if data.IsA("vtkCompositeDataSet"):
        it = data.NewIterator()
        it.SetSkipEmptyNodes(False)
        it.InitTraversal()
        while not it.IsDoneWithTraversal():
            if it.GetCurrentDataObject() is not None:
                candidates.append(it.GetCurrentDataObject())
            it.GoToNextItem()
    for obj in candidates:
        fd = obj.GetFieldData()
        if fd is None or fd.GetArray("n_fragments") is None:
            continue
        stats = {}
        for name in HISTOGRAM + FIGURES:
            a = fd.GetArray(name)
            stats[name] = [a.GetValue(i) for i in range(a.GetNumberOfTuples())] if a is not None else []
        return stats
    return None


def figure(stats, key, default=float("nan")):
    values = stats.get(key) or []
    return values[0] if values else default


def plotter():
    """matplotlib's Figure and Agg canvas (no pyplot: no global backend, nothing shared with other scripts), or
    None when matplotlib cannot be imported."""
    if state["plot"] is None:
        try:
            from matplotlib.backends.backend_agg import FigureCanvasAgg
            from matplotlib.figure import Figure
            state["plot"] = (Figure, FigureCanvasAgg)
        except Exception as e:  # ImportError, or a broken installation
            warn_once("matplotlib", "matplotlib cannot be imported (%s: %s); writing only fragments_live.csv "
                      "(install python3-matplotlib for the images)" % (type(e).__name__, e))
            state["plot"] = False
    return state["plot"] or None


def write_csv(step, time, stats):
    path = os.path.join(out_dir, "fragments_live.csv")
    if not state["csv_started"]:
        # First line of this run: keep an earlier run's lines before this step (a restart), drop the rest.
        kept = []
        if os.path.isfile(path):
            with open(path) as f:
                for line in f.readlines()[1:]:
                    try:
                        if int(line.split(",", 1)[0]) < step:
                            kept.append(line)
                    except ValueError:
                        pass
        with open(path, "w") as f:
            f.write(CSV_HEADER)
            f.writelines(kept)
        state["csv_started"] = True
    with open(path, "a") as f:
        f.write("%d,%.9g,%d,%.9g,%.6g\n" % (step, time, int(figure(stats, "n_fragments", 0)),
                                            figure(stats, "largest_fraction"), figure(stats, "fragment_tau")))


def write_png(step, time, stats, Figure, FigureCanvasAgg):
    lo, hi = stats["fragment_bin_min"], stats["fragment_bin_max"]
    count, cumulative = stats["fragment_bin_count"], stats["fragment_cumulative"]
    nb = min(len(lo), len(hi), len(count), len(cumulative))
    centre = [0.5 * (lo[k] + hi[k]) for k in range(nb)]
    filled = [k for k in range(nb) if count[k] > 0 and hi[k] > lo[k]]
    dpi = 100
    fig = Figure(figsize=(width / dpi, height / dpi), dpi=dpi)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    if filled:
        ax.loglog([centre[k] for k in filled], [count[k] / (hi[k] - lo[k]) for k in filled], "o-",
                  color="tab:blue", label="number density n(m)")
        ax.set_yscale("log")
    else:
        ax.text(0.5, 0.5, "no fragments", transform=ax.transAxes, ha="center", va="center")
    ax.set_xscale("log")
    ax.set_xlabel("fragment mass m (kg)")
    ax.set_ylabel("n(m) = count / bin width (1/kg)", color="tab:blue")
    ax.grid(True, which="both", alpha=0.3)
    if nb:
        # The mass fraction in fragments of mass >= m, a step at each bin's lower edge.
        ax2 = ax.twinx()
        ax2.step(lo[:nb] + [hi[nb - 1]], cumulative[:nb] + [0.0], where="post", color="tab:red",
                 label="cumulative mass fraction")
        ax2.set_xscale("log")
        ax2.set_ylim(0.0, 1.05)
        ax2.set_ylabel("mass fraction in fragments of mass >= m", color="tab:red")
    n = int(figure(stats, "n_fragments", 0))
    tau, err = figure(stats, "fragment_tau"), figure(stats, "fragment_tau_error")
    if math.isfinite(tau):
        fit = "\u03c4 = %.3g \u00b1 %.2g (%d fitted)" % (tau, err, int(figure(stats, "fragment_n_fit", 0)))
    else:
        fit = "\u03c4: too few fragments to fit"
    ax.set_title("step %d, t = %.4g s: %d fragments, %s" % (step, time, n, fit), fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "fragments_%06d.png" % step))


def catalyst_execute(info):
    # Every rank brings its producer up to date (cheap, and the same calls everywhere); rank 0 reads and writes.
    shard_input.UpdatePipeline(info.time)
    if not is_rank0:
        return
    stats = local_statistics()
    if stats is None:
        warn_once("nodata", "no fragment statistics in the data (no body of the scene can break); nothing written")
        return
    os.makedirs(out_dir, exist_ok=True)
    write_csv(info.timestep, info.time, stats)
    plot = plotter()
    if plot:
        write_png(info.timestep, info.time, stats, *plot)
