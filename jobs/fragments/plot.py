#!/usr/bin/env python3
"""Plots of Shard's fragment statistics: reads fragments.csv and fragments_histogram.csv of a run's output
folder and writes two PNG files.

  plot.py OUTDIR [--out PREFIX] [--fit-min K]

  fragments_history.png       number of fragments, the largest fragment's share of the mass and the broken
                              bonds against time
  fragments_distribution.png  the cumulative mass distribution at the first output step with fragments, a
                              middle one and the last; the number density n(m) at the last step on log-log
                              axes, with the fitted power law n ~ m^-tau

The PNG files go into OUTDIR, or with --out into the folder PREFIX (when it is one or ends with '/'), or else
next to PREFIX with names that start with PREFIX_.  Needs matplotlib (Debian package python3-matplotlib);
everything else is the standard library.  Errors in the input (a file missing, empty, a wrong header, a value
that is not a number) print one "plot.py: error: ..." line and exit with status 2.
"""
import argparse
import csv
import math
import os
import sys

PROG = "plot.py"
HISTORY_COLS = ["step", "time", "n_fragments", "largest_fraction", "largest_mass", "tau", "tau_error", "n_fit",
                "broken_bonds"]
HISTOGRAM_COLS = ["step", "time", "bin_min", "bin_max", "count", "mass", "cumulative"]
INT_COLS = {"step", "n_fragments", "n_fit", "broken_bonds", "count"}


class InputError(Exception):
    pass


def die(msg):
    print(f"{PROG}: error: {msg}", file=sys.stderr)
    sys.exit(2)


def read_csv(path, want):
    """Rows of the CSV file at path as dicts of numbers; the header must be exactly the columns in want."""
    if not os.path.exists(path):
        raise InputError(f"{path}: no such file (a run writes it in its output folder when some body can break)")
    if not os.path.isfile(path):
        raise InputError(f"{path}: not a file")
    try:
        with open(path, newline="") as f:
            lines = list(csv.reader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise InputError(f"{path}: cannot be read: {e}")
    lines = [ln for ln in lines if ln and any(c.strip() for c in ln)]
    if not lines:
        raise InputError(f"{path}: the file is empty")
    header = [c.strip() for c in lines[0]]
    if header != want:
        raise InputError(f"{path}: bad header '{','.join(header)}' (want '{','.join(want)}')")
    if len(lines) == 1:
        raise InputError(f"{path}: no data lines after the header")
    rows = []
    for n, ln in enumerate(lines[1:], start=2):
        if len(ln) != len(want):
            raise InputError(f"{path}: line {n}: {len(ln)} values (want {len(want)})")
        row = {}
        for col, text in zip(want, ln):
            text = text.strip()
            try:
                row[col] = int(text) if col in INT_COLS else float(text)
            except ValueError:
                raise InputError(f"{path}: line {n}: {col} '{text}' is not a number")
        rows.append(row)
    return rows


def histogram_by_step(rows, path):
    """{step: the step's bins sorted by bin_min}, each bin checked."""
    steps = {}
    for r in rows:
        if not (0 < r["bin_min"] < r["bin_max"]) or r["count"] < 0 or not math.isfinite(r["cumulative"]):
            raise InputError(f"{path}: step {r['step']}: bad bin [{r['bin_min']}, {r['bin_max']}) with count "
                             f"{r['count']}, cumulative {r['cumulative']}")
        steps.setdefault(r["step"], []).append(r)
    for bins in steps.values():
        bins.sort(key=lambda b: b["bin_min"])
    return steps


def time_unit(tmax):
    """(scale, name) for a time axis that reaches tmax seconds."""
    if not tmax > 0:
        return 1.0, "s"
    for scale, name in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")):
        if tmax >= scale:
            return scale, name
    return 1e-9, "ns"


def fmt_err(tau, err):
    if math.isfinite(err):
        return f"τ = {tau:.3g} ± {err:.2g}"
    return f"τ = {tau:.3g}"


def centre(b):
    return 0.5 * (b["bin_min"] + b["bin_max"])


def plot_history(plt, hist, path):
    t = [r["time"] for r in hist]
    scale, unit = time_unit(max(t) if t else 0.0)
    ts = [x / scale for x in t]
    fig, axes = plt.subplots(3, 1, sharex=True, figsize=(7, 8), constrained_layout=True)
    style = dict(marker="o", markersize=3, linewidth=1.5)
    ax = axes[0]
    ax.plot(ts, [r["n_fragments"] for r in hist], color="tab:blue", **style)
    ax.set_ylabel("fragments")
    if max(r["n_fragments"] for r in hist) >= 100:
        ax.set_yscale("log")
    ax.set_title("Fragments against time")
    ax = axes[1]
    ax.plot(ts, [r["largest_fraction"] for r in hist], color="tab:red", **style)
    ax.set_ylabel("largest fragment\n(fraction of the mass)")
    ax.set_ylim(0, 1.05)
    ax = axes[2]
    ax.plot(ts, [r["broken_bonds"] for r in hist], color="tab:green", **style)
    ax.set_ylabel("broken bonds")
    ax.set_xlabel(f"time ({unit})")
    for ax in axes:
        ax.grid(True, alpha=0.3)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def chosen_steps(hist, by_step):
    """The first output step with fragments (more than at the first output step, or else the first with
    broken bonds), a middle one and the last, of those with a histogram."""
    lines = [r for r in hist if r["step"] in by_step]
    if not lines:
        return []
    n0 = lines[0]["n_fragments"]
    first = next((i for i, r in enumerate(lines) if r["n_fragments"] > n0), None)
    if first is None:
        first = next((i for i, r in enumerate(lines) if r["broken_bonds"] > 0), 0)
    last = len(lines) - 1
    picks = []
    for i in (first, (first + last) // 2, last):
        if lines[i]["step"] not in picks:
            picks.append(lines[i]["step"])
    return picks


def power_law(bins, m0, fit_min, largest_mass, tau):
    """(A, m_lo, m_hi, points) of the line n = A m^-tau through the bins of centre >= fit_min m0 that hold
    fragments (the largest fragment left out, as in the fit), or None when there are none."""
    pts = []
    for b in bins:
        count = b["count"]
        if b["bin_min"] <= largest_mass < b["bin_max"]:
            count -= 1  # the largest fragment is not in the fit
        if centre(b) >= fit_min * m0 * (1 - 1e-6) and count > 0:
            pts.append((centre(b), count / (b["bin_max"] - b["bin_min"]), b))
    if not pts:
        return None
    log_a = sum(math.log(n) + tau * math.log(m) for m, n, _ in pts) / len(pts)
    m_lo = max(fit_min * m0, pts[0][2]["bin_min"])
    m_hi = pts[-1][2]["bin_max"]
    return math.exp(log_a), m_lo, m_hi, pts


def plot_distribution(plt, hist, by_step, fit_min, path):
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 5), constrained_layout=True)
    picks = chosen_steps(hist, by_step)
    line_of = {r["step"]: r for r in hist}
    last_bins = by_step[picks[-1]]
    m0 = min(b["bin_min"] for bins in by_step.values() for b in bins)
    scale, unit = time_unit(max(line_of[s]["time"] for s in picks))
    for step in picks:
        bins = by_step[step]
        r = line_of[step]
        ax1.plot([b["bin_min"] for b in bins], [b["cumulative"] for b in bins], marker="o", markersize=4,
                 label=f"step {step}, t = {r['time'] / scale:.4g} {unit} ({r['n_fragments']} fragments)")
    ax1.set_xscale("log")
    ax1.set_ylim(0, 1.05)
    ax1.set_xlabel("fragment mass m (kg)")
    ax1.set_ylabel("mass fraction in fragments of mass ≥ m")
    ax1.set_title("Cumulative mass distribution")
    ax1.grid(True, which="both", alpha=0.3)
    ax1.legend(fontsize=8)

    last = line_of[picks[-1]]
    full = [b for b in last_bins if b["count"] > 0]
    ax2.plot([centre(b) for b in full], [b["count"] / (b["bin_max"] - b["bin_min"]) for b in full], "o",
             color="tab:blue", label=f"step {last['step']}: {sum(b['count'] for b in last_bins)} fragments")
    ax2.axvline(fit_min * m0, color="gray", linestyle=":", linewidth=1, label=f"{fit_min} m₀ (m₀ = {m0:.3g} kg)")
    tau, err, n_fit = last["tau"], last["tau_error"], last["n_fit"]
    if math.isfinite(tau):
        line = power_law(last_bins, m0, fit_min, last["largest_mass"], tau)
        if line is not None:
            a, m_lo, m_hi, _ = line
            ms = [m_lo * (m_hi / m_lo) ** (k / 50) for k in range(51)]
            ax2.plot(ms, [a * m ** -tau for m in ms], "-", color="tab:red",
                     label=f"n ~ m^-τ, {fmt_err(tau, err)}, n_fit = {n_fit}")
        else:
            ax2.plot([], [], " ", label=f"{fmt_err(tau, err)}, n_fit = {n_fit} (no bin to draw it through)")
    else:
        ax2.plot([], [], " ", label=f"τ not fitted (n_fit = {n_fit}: fewer than 2 fragments in the fit)")
    ax2.set_xscale("log")
    ax2.set_yscale("log")
    ax2.set_xlabel("fragment mass m (kg), bin centre")
    ax2.set_ylabel("n(m) = count / bin width (1/kg)")
    ax2.set_title(f"Number density at the last step (t = {last['time'] / scale:.4g} {unit})")
    ax2.grid(True, which="both", alpha=0.3)
    ax2.legend(fontsize=8)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def out_paths(outdir, prefix):
    names = ("fragments_history.png", "fragments_distribution.png")
    if prefix is None:
        return [os.path.join(outdir, n) for n in names]
    if prefix.endswith(os.sep) or os.path.isdir(prefix):
        try:
            os.makedirs(prefix, exist_ok=True)
        except OSError as e:
            raise InputError(f"--out {prefix}: cannot make the folder: {e.strerror}")
        return [os.path.join(prefix, n) for n in names]
    parent = os.path.dirname(prefix)
    if parent and not os.path.isdir(parent):
        raise InputError(f"--out {prefix}: no folder {parent}")
    return [f"{prefix}_{n}" for n in names]


def main(argv):
    ap = argparse.ArgumentParser(prog=PROG, description="Plots of the fragment statistics of a Shard run "
                                 "(fragments.csv and fragments_histogram.csv in its output folder).")
    ap.add_argument("outdir", metavar="OUTDIR", help="the run's output folder")
    ap.add_argument("--out", metavar="PREFIX", help="where the PNG files go: a folder (existing or ending with "
                    "'/'), or a prefix of their names (PREFIX_fragments_history.png, ...); default OUTDIR")
    ap.add_argument("--fit-min", metavar="K", type=int, default=3, help="the scene's fragments.fit_min: the "
                    "power law is drawn through the bins of centre >= K m0 (default 3)")
    args = ap.parse_args(argv)
    if args.fit_min < 1:
        die("--fit-min must be at least 1")
    try:
        if not os.path.isdir(args.outdir):
            raise InputError(f"{args.outdir}: no such folder")
        hist_path = os.path.join(args.outdir, "fragments.csv")
        bins_path = os.path.join(args.outdir, "fragments_histogram.csv")
        hist = read_csv(hist_path, HISTORY_COLS)
        by_step = histogram_by_step(read_csv(bins_path, HISTOGRAM_COLS), bins_path)
        hist.sort(key=lambda r: r["step"])
        if not any(r["step"] in by_step for r in hist):
            raise InputError(f"{bins_path}: no step in common with {hist_path}")
        paths = out_paths(args.outdir, args.out)
    except InputError as e:
        die(str(e))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        die(f"matplotlib is not installed for {sys.executable} (Debian package python3-matplotlib)")
    try:
        plot_history(plt, hist, paths[0])
        plot_distribution(plt, hist, by_step, args.fit_min, paths[1])
    except OSError as e:
        die(f"cannot write the plots: {e}")
    for p in paths:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
