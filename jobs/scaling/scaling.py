#!/usr/bin/python3
"""Scaling-experiment tools for Shard: parse run reports, collect a series into one CSV, draw the plots,
predict strong scaling from `shard partition` figures and a network model, and tabulate Shard against LAMMPS.

Run with Debian's Python (/usr/bin/python3): the plots need matplotlib (Debian package python3-matplotlib);
everything else uses the standard library only.

  scaling.py parse LOG                                   # the figures of one `shard run` report
  scaling.py collect --mode strong|weak --out CSV LOG... # one CSV row per run (the fastest per rank count)
  scaling.py plot CSV --out-dir DIR                      # speedup.png, efficiency.png, phases.png
  scaling.py calibrate LOG                               # the model's scene figures from a run's report
  scaling.py predict --partitions DIR ... --out-csv F    # model of the strong-scaling efficiency
  scaling.py plot-predict --predicted F ... --out PNG    # predicted curves next to the measured points
  scaling.py lammps-table MANIFEST --out CSV             # Shard next to LAMMPS, one table

Every report line is found by its text, never by its position; a missing line is an error naming the file
and the line that was expected.  See docs/scaling.md for the CSV columns and the model.
"""
import argparse
import csv
import math
import os
import re
import sys

# ---------------------------------------------------------------------------------------------------------
# Shard's end-of-run report


class ReportError(Exception):
    pass


NUM = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf)"

# name -> (regex, example of the expected line, required?)
SHARD_LINES = {
    "loop": (r"^Loop time of " + NUM + r" s on (\d+) rank\(s\) for (\d+) steps with (\d+) particles",
             "Loop time of T s on P rank(s) for S steps with N particles", True),
    "perf": (r"^Performance: " + NUM + r" particle-steps/s, " + NUM + r" particle-steps/s/core",
             "Performance: A particle-steps/s, B particle-steps/s/core", True),
    "mem": (r"^Peak memory per rank: min " + NUM + r" MiB, avg " + NUM + r" MiB, max " + NUM + r" MiB \(" + NUM +
            r" bytes per particle", "Peak memory per rank: min X MiB, avg Y MiB, max Z MiB (B bytes per particle ...)",
            True),
    "owned": (r"^Owned per rank: min " + NUM + r" avg " + NUM + r" max " + NUM + r" \(imbalance " + NUM +
              r"\); ghosts per rank: min " + NUM + r" avg " + NUM + r" max " + NUM,
              "Owned per rank: min A avg B max C (imbalance I); ghosts per rank: min D avg E max F", True),
    "bonds": (r"^Bonds: (\d+) \(" + NUM + r" per particle\), edge cut (\d+); halo bytes sent: " + NUM + r" total",
              "Bonds: B (X per particle), edge cut C; halo bytes sent: H total; ...", True),
    "bond_ghosts": (r"^Bond ghosts per rank: min " + NUM + r" avg " + NUM + r" max " + NUM,
                    "Bond ghosts per rank: min X avg Y max Z", False),
    "hash": (r"^State hash: ([0-9a-f]+)", "State hash: HEX", True),
    # optional: the prediction's calibration (reports of older builds lack them)
    "rebuilds": (r"^Bonds: .*; contact rebuilds (\d+)", "Bonds: ...; contact rebuilds R; ...", False),
    "bytes": (r"^Bytes sent: bond halos " + NUM + r", contact ghosts " + NUM + r" \(of which rebuilds " + NUM +
              r"\), migrations " + NUM, "Bytes sent: bond halos B, contact ghosts C (of which rebuilds R), "
              "migrations M; ...", False),
    "balance": (r"^Balance \([a-z]+, [a-z]+ cost, every (\d+) steps.*\): (\d+) check\(s\), (\d+) migration\(s\) "
                r"\(\d+ for ghost growth\), (\d+) particle\(s\) moved; cost imbalance at the first check " + NUM +
                r", largest " + NUM, "Balance (...): C check(s), M migration(s) (...), N particle(s) moved; cost "
                "imbalance at the first check A, largest B ...", False),
    "startup": (r"^Start-up: (?:sampled|read) on \d+ rank\(s\) in " + NUM + r" s, partitioned and distributed in " +
                NUM + r" s", "Start-up: sampled on P rank(s) in A s, partitioned and distributed in B s ...", False),
}


def _last_match(lines, regex):
    rx = re.compile(regex)
    found = None
    for line in lines:
        m = rx.search(line)
        if m:
            found = m
    return found


def phase_key(name):
    """Column stem of a phase name: 'I/O' -> 'io', 'In-situ' -> 'insitu'."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def parse_phases(lines, path):
    """The per-phase table: {name: (min, avg, max, max_rank, varavg, total_pct)} in report order."""
    start = None
    for k, line in enumerate(lines):
        if re.match(r"^Phase\s*\|", line):
            start = k  # the last table wins
    if start is None:
        raise ReportError(f"{path}: no phase table (expected a header line 'Phase | min (s) | avg (s) | max (s) | "
                          "max rank | %varavg | %total')")
    header = [c.strip() for c in lines[start].split("|")]
    want = ["min (s)", "avg (s)", "max (s)"]
    for w in want:
        if w not in header:
            raise ReportError(f"{path}: phase table header has no '{w}' column: {lines[start].strip()}")
    imin, iavg, imax = (header.index(w) for w in want)
    phases = {}
    for line in lines[start + 1:]:
        if not line.strip():
            break
        if re.match(r"^[-+]+$", line.strip()):
            continue
        cells = [c.strip() for c in line.split("|")]
        if len(cells) != len(header):
            raise ReportError(f"{path}: malformed phase row: {line.strip()}")
        try:
            phases[cells[0]] = tuple(float(cells[i]) for i in (imin, iavg, imax))
        except ValueError:
            raise ReportError(f"{path}: non-numeric phase row: {line.strip()}") from None
    if not phases:
        raise ReportError(f"{path}: the phase table has no rows")
    return phases


def parse_shard_report(path):
    """Figures of one Shard run log (stdout of `shard run`); raises ReportError naming any missing line."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise ReportError(f"{path}: {e.strerror}") from None
    m = {}
    for key, (rx, example, required) in SHARD_LINES.items():
        m[key] = _last_match(lines, rx)
        if required and m[key] is None:
            raise ReportError(f"{path}: no '{example.split(':')[0].split(' of ')[0]}' line in the report "
                              f"(expected '{example}'); did the run finish?")
    r = {}
    g = m["loop"].groups()
    r["loop_time_s"], r["ranks"], r["steps"], r["particles"] = float(g[0]), int(g[1]), int(g[2]), int(g[3])
    r["particle_steps_per_s"], r["particle_steps_per_s_per_core"] = (float(x) for x in m["perf"].groups())
    g = m["mem"].groups()
    r["peak_mem_min_mib"], r["peak_mem_avg_mib"], r["peak_mem_max_mib"] = float(g[0]), float(g[1]), float(g[2])
    r["bytes_per_particle"] = float(g[3])
    g = m["owned"].groups()
    r["owned_min"], r["owned_avg"], r["owned_max"], r["imbalance"] = (float(x) for x in g[:4])
    r["ghosts_min"], r["ghosts_avg"], r["ghosts_max"] = (float(x) for x in g[4:7])
    g = m["bonds"].groups()
    r["bonds"], r["edge_cut"], r["comm_bytes_total"] = int(g[0]), int(g[2]), float(g[3])
    if m["bond_ghosts"] is not None:
        r["bond_ghosts_min"], r["bond_ghosts_avg"], r["bond_ghosts_max"] = (float(x) for x in m["bond_ghosts"].groups())
    r["state_hash"] = m["hash"].group(1)
    if m["rebuilds"] is not None:
        r["contact_rebuilds"] = int(m["rebuilds"].group(1))
    if m["bytes"] is not None:
        (r["bytes_bond_halos"], r["bytes_contact_ghosts"], r["bytes_rebuilds"],
         r["bytes_migrations"]) = (float(x) for x in m["bytes"].groups())
    if m["balance"] is not None:
        g = m["balance"].groups()
        r["balance_every"], r["balance_checks"], r["migrations"], r["particles_moved"] = (int(x) for x in g[:4])
        r["cost_imbalance_first"], r["cost_imbalance_largest"] = float(g[4]), float(g[5])
    if m["startup"] is not None:
        r["startup_sample_s"], r["startup_distribute_s"] = (float(x) for x in m["startup"].groups())
    r["phases"] = parse_phases(lines, path)
    return r


# ---------------------------------------------------------------------------------------------------------
# collect: logs -> one CSV


BASE_COLUMNS = ["mode", "ranks", "particles", "bonds", "steps", "loop_time_s", "wall_time_s"]
TAIL_COLUMNS = ["comm_bytes_total", "comm_bytes_per_step_per_rank", "particle_steps_per_s",
                "particle_steps_per_s_per_core", "speedup", "parallel_efficiency", "imbalance", "ghosts_avg",
                "ghosts_max", "bond_ghosts_avg", "bond_ghosts_max", "peak_mem_max_mib", "bytes_per_particle", "state_hash", "scene", "log"]
# The phases of the report (columns follow the report's order, so a phase added later gets its columns too).
STANDARD_PHASES = ["Neigh", "Solid", "Contact", "Comm", "Integrate", "I/O", "In-situ", "Other"]
PHASE_NAMES = {phase_key(p): p for p in STANDARD_PHASES}


def read_scene(log):
    """The scene file of a run, written by series.sh beside the log as LOG.scene (optional)."""
    try:
        with open(log + ".scene", encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return ""


def read_wall(log):
    """Wall time of the whole launch, written by series.sh beside the log as LOG.wall (optional)."""
    try:
        with open(log + ".wall", encoding="utf-8") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return float("nan")


def fmt(x):
    if isinstance(x, float):
        if math.isnan(x):
            return ""
        return f"{x:.6g}"
    return str(x)


def collect(args):
    runs = []
    for log in args.logs:
        r = parse_shard_report(log)
        r["log"] = os.path.abspath(log)
        r["wall_time_s"] = read_wall(log)
        r["scene"] = read_scene(log)
        runs.append(r)
    if not runs:
        raise ReportError("collect: no logs given")
    # The fastest run per rank count (repetitions).
    best = {}
    for r in runs:
        if r["ranks"] not in best or r["loop_time_s"] < best[r["ranks"]]["loop_time_s"]:
            best[r["ranks"]] = r
    rows = [best[p] for p in sorted(best)]
    steps = {r["steps"] for r in rows}
    if len(steps) != 1:
        raise ReportError(f"collect: the runs have different step counts {sorted(steps)}")
    ref = rows[0]
    if args.mode == "strong":
        sizes = {r["particles"] for r in rows}
        if len(sizes) != 1:
            raise ReportError(f"collect: strong scaling needs one problem size, got particle counts {sorted(sizes)}")
    else:
        for r in rows:
            per_rank = r["particles"] / r["ranks"]
            ref_per_rank = ref["particles"] / ref["ranks"]
            if abs(per_rank / ref_per_rank - 1) > 0.05:
                print(f"warning: weak scaling: {r['particles']} particles on {r['ranks']} ranks is "
                      f"{per_rank:.0f} per rank, {ref_per_rank:.0f} on {ref['ranks']}", file=sys.stderr)
    phases = list(rows[0]["phases"])
    for r in rows:
        for p in r["phases"]:
            if p not in phases:
                phases.append(p)
    phase_cols = [f"{phase_key(p)}_{s}_s" for p in phases for s in ("min", "avg", "max")]
    header = BASE_COLUMNS + phase_cols + TAIL_COLUMNS
    out = []
    for r in rows:
        # Speed-up from the throughput (particle-steps/s): strong and weak alike; efficiency = speed-up / ranks.
        speedup = ref["ranks"] * r["particle_steps_per_s"] / ref["particle_steps_per_s"]
        row = {
            "mode": args.mode, "ranks": r["ranks"], "particles": r["particles"], "bonds": r["bonds"],
            "steps": r["steps"], "loop_time_s": r["loop_time_s"], "wall_time_s": r["wall_time_s"],
            "comm_bytes_total": r["comm_bytes_total"],
            "comm_bytes_per_step_per_rank": r["comm_bytes_total"] / r["steps"] / r["ranks"],
            "particle_steps_per_s": r["particle_steps_per_s"],
            "particle_steps_per_s_per_core": r["particle_steps_per_s_per_core"],
            "speedup": speedup, "parallel_efficiency": speedup / r["ranks"], "imbalance": r["imbalance"],
            "ghosts_avg": r["ghosts_avg"], "ghosts_max": r["ghosts_max"],
            "bond_ghosts_avg": r.get("bond_ghosts_avg", float("nan")),
            "bond_ghosts_max": r.get("bond_ghosts_max", float("nan")), "peak_mem_max_mib": r["peak_mem_max_mib"],
            "bytes_per_particle": r["bytes_per_particle"], "state_hash": r["state_hash"], "scene": r["scene"],
            "log": r["log"],
        }
        for p in phases:
            mn, avg, mx = r["phases"].get(p, (0.0, 0.0, 0.0))
            k = phase_key(p)
            row[f"{k}_min_s"], row[f"{k}_avg_s"], row[f"{k}_max_s"] = mn, avg, mx
        out.append(row)
    with open(args.out, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        for row in out:
            w.writerow([fmt(row[c]) for c in header])
    # Summary table on stdout.
    print(f"{args.mode} scaling, {ref['steps']} steps (reference: {ref['ranks']} rank(s))")
    print(f"{'ranks':>5} {'particles':>10} {'loop (s)':>10} {'part-steps/s/core':>18} {'speed-up':>9} "
          f"{'efficiency':>10} {'comm MB':>9} {'imbalance':>9}")
    for row in out:
        print(f"{row['ranks']:>5} {row['particles']:>10} {row['loop_time_s']:>10.4g} "
              f"{row['particle_steps_per_s_per_core']:>18.4g} {row['speedup']:>9.3f} "
              f"{100 * row['parallel_efficiency']:>9.1f}% {row['comm_bytes_total'] / 1e6:>9.3g} "
              f"{row['imbalance']:>9.3f}")
    print(f"CSV: {args.out}")
    return 0


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise ReportError(f"{path}: no rows")
    return rows


# ---------------------------------------------------------------------------------------------------------
# plots


def _pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ReportError("the plots need matplotlib for /usr/bin/python3: apt-get install python3-matplotlib "
                          "(or run with PLOT=0)") from None
    return plt


def _rank_axis(ax, ranks):
    ax.set_xscale("log", base=2)
    ax.set_xticks(ranks)
    ax.set_xticklabels([str(p) for p in ranks])
    ax.minorticks_off()
    ax.set_xlabel("MPI ranks")
    ax.grid(True, which="major", alpha=0.3)


def plot(args):
    plt = _pyplot()
    rows = read_csv(args.csv)
    mode = rows[0]["mode"]
    ranks = [int(r["ranks"]) for r in rows]
    sp = [float(r["speedup"]) for r in rows]
    eff = [100 * float(r["parallel_efficiency"]) for r in rows]
    title = args.title or f"Shard {mode} scaling"
    os.makedirs(args.out_dir, exist_ok=True)
    sub = f"{rows[0]['particles']} particles" if mode == "strong" else \
        f"{int(rows[0]['particles']) // int(rows[0]['ranks'])} particles per rank"
    sub += f", {rows[0]['steps']} steps"

    fig, ax = plt.subplots(figsize=(6, 4.5))
    ax.plot(ranks, ranks, "k--", label="ideal")
    ax.plot(ranks, sp, "o-", color="C0", label="measured")
    _rank_axis(ax, ranks)
    ax.set_yscale("log", base=2)
    ax.set_yticks(ranks)
    ax.set_yticklabels([str(p) for p in ranks])
    ax.set_ylabel("speed-up" if mode == "strong" else "scaled speed-up (P x efficiency)")
    ax.set_title(f"{title}\n{sub}", fontsize=10)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(args.out_dir, "speedup.png"), dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(6, 4.5))
    ax.axhline(100, color="k", ls="--", label="ideal")
    ax.plot(ranks, eff, "o-", color="C1", label="measured")
    _rank_axis(ax, ranks)
    ax.set_ylim(0, max(110, max(eff) + 5))
    ax.set_ylabel("parallel efficiency (%)")
    ax.set_title(f"{title}\n{sub}", fontsize=10)
    ax.legend(loc="lower left")
    fig.tight_layout()
    fig.savefig(os.path.join(args.out_dir, "efficiency.png"), dpi=110)
    plt.close(fig)

    # Stacked average time per phase per rank count, with the loop time (slowest rank) as a marker.
    phases = [c[:-len("_avg_s")] for c in rows[0] if c.endswith("_avg_s")]
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    x = list(range(len(ranks)))
    bottom = [0.0] * len(ranks)
    for k, p in enumerate(phases):
        v = [float(r[f"{p}_avg_s"] or 0) for r in rows]
        if not any(v):
            continue
        ax.bar(x, v, bottom=bottom, color=f"C{k % 10}", label=PHASE_NAMES.get(p, p.capitalize()), width=0.6)
        bottom = [b + y for b, y in zip(bottom, v)]
    ax.plot(x, [float(r["loop_time_s"]) for r in rows], "k_", markersize=28, mew=2, label="loop time (max rank)")
    ax.set_xticks(x)
    ax.set_xticklabels([str(p) for p in ranks])
    ax.set_xlabel("MPI ranks")
    ax.set_ylabel("time per run (s), average over ranks")
    ax.set_title(f"{title}: time per phase\n{sub}", fontsize=10)
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles[::-1], labels[::-1], fontsize=8, loc="best")  # top of the stack first
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(args.out_dir, "phases.png"), dpi=110)
    plt.close(fig)
    for n in ("speedup.png", "efficiency.png", "phases.png"):
        print(f"plot: {os.path.join(args.out_dir, n)}")
    return 0


# ---------------------------------------------------------------------------------------------------------
# prediction


def read_partition_csv(path):
    rows = read_csv(path)
    need = ["rank", "owned", "bonds", "ghosts", "neighbours", "halo_bytes"]
    for c in need:
        if c not in rows[0]:
            raise ReportError(f"{path}: no '{c}' column (a `shard partition --csv` file has {', '.join(need)})")
    return [{k: int(r[k]) for k in need} for r in rows]


def measured_rate(series_csv, work):
    """Work units per second of one rank, from the series row with the fewest ranks (normally 1)."""
    rows = read_csv(series_csv)
    r = min(rows, key=lambda r: int(r["ranks"]))
    p, steps, loop = int(r["ranks"]), int(r["steps"]), float(r["loop_time_s"])
    units = {"bonds": int(r["bonds"]), "owned": int(r["particles"]),
             "weight": int(r["particles"]) + int(r["bonds"])}[work]
    if p != 1:
        print(f"warning: {series_csv} has no 1-rank run; the rate comes from {p} ranks (its Comm time included)",
              file=sys.stderr)
    return units * steps / (loop * p), r


# Bytes per bond ghost and step of the bond halos (x, v: 48; B: 72), per contact ghost of a rebuild's record
# (global id, body, flags, x, v, mass: 72) and of its forward (x, v: 48), per cluster box of a rebuild (7 doubles).
HALO_BYTES_PER_GHOST = 120
CONTACT_RECORD_OVER_FORWARD = 72 / 48
BOX_BYTES = 56
# The force phases: the work the model scales by N/P (and the balancer's time cost).
FORCE_PHASES = ("Solid", "Contact", "Neigh", "Fracture")


def report_calibration(path):
    """The model's scene figures from one `shard run` report: contact fraction, imbalance, bytes factors,
    rebuild and migration rates.  Figures the report cannot give (one rank: no bytes; no Balance line) are left
    out.  Returns (dict, text describing where each came from)."""
    r = parse_shard_report(path)
    ph, steps, P = r["phases"], r["steps"], r["ranks"]
    if "Solid" not in ph or ph["Solid"][1] <= 0:
        raise ReportError(f"{path}: no Solid time in the phase table: nothing to scale the other phases by")
    cal, notes = {}, []
    solid = ph["Solid"][1]
    extra = sum(ph[k][1] for k in FORCE_PHASES[1:] if k in ph)
    cal["contact_fraction"] = extra / solid
    notes.append(f"contact fraction {cal['contact_fraction']:.3g} = (" + " + ".join(
        f"{k} {ph[k][1]:.4g}" for k in FORCE_PHASES[1:] if k in ph) + f") / Solid {solid:.4g} s (averages)")
    if P > 1:
        if "cost_imbalance_largest" in r:
            cal["imbalance"] = r["cost_imbalance_largest"]
            notes.append(f"imbalance {cal['imbalance']:.3g}: the largest cost imbalance of the Balance line")
        else:
            mx = sum(ph[k][2] for k in FORCE_PHASES if k in ph)
            av = sum(ph[k][1] for k in FORCE_PHASES if k in ph)
            cal["imbalance"] = mx / av
            notes.append(f"imbalance {cal['imbalance']:.3g}: sum of the force phases' max / sum of their avg")
    if P > 1 and "bytes_bond_halos" in r and r.get("bond_ghosts_avg", 0) > 0:
        base = HALO_BYTES_PER_GHOST * r["bond_ghosts_avg"] * P * steps
        forward = r["bytes_contact_ghosts"] - r["bytes_rebuilds"]
        cal["bytes_factor"] = (r["bytes_bond_halos"] + forward) / base
        cal["contact_bytes_factor"] = forward / base
        notes.append(f"bytes factor {cal['bytes_factor']:.3g} = (bond halos {r['bytes_bond_halos']:.4g} + contact "
                     f"forwards {forward:.4g}) / ({HALO_BYTES_PER_GHOST} B x {r['bond_ghosts_avg'] * P:.0f} bond "
                     f"ghosts x {steps} steps); contact part {cal['contact_bytes_factor']:.3g}")
    if "contact_rebuilds" in r:
        cal["rebuild_rate"] = r["contact_rebuilds"] / steps
        notes.append(f"rebuild rate {cal['rebuild_rate']:.3g} = {r['contact_rebuilds']} rebuilds / {steps} steps")
    if "migrations" in r and P > 1:
        cal["balance_every"] = r["balance_every"]
        cal["migration_rate"] = r["migrations"] / steps
        cal["moved_fraction"] = (r["particles_moved"] / (r["migrations"] * r["particles"]) if r["migrations"]
                                 else 0.0)
        notes.append(f"migrations {r['migrations']} in {steps} steps (checks every {r['balance_every']}), "
                     f"{cal['moved_fraction']:.3g} of the particles moved by each")
    return cal, f"{path} ({P} rank(s), {r['particles']} particles, {steps} steps): " + "; ".join(notes)


def calibrate(args):
    cal, src = report_calibration(args.log)
    for k, v in cal.items():
        print(f"{k}={v:.6g}")
    print(f"# {src}")
    return 0


def predict(args):
    parts = {}
    for spec in args.partitions:
        for name in sorted(os.listdir(spec)) if os.path.isdir(spec) else [spec]:
            path = os.path.join(spec, name) if os.path.isdir(spec) else spec
            m = re.search(r"part-(\d+)\.csv$", path)
            if m:
                parts[int(m.group(1))] = read_partition_csv(path)
    if not parts:
        raise ReportError(f"predict: no part-P.csv files in {args.partitions}")
    if args.rate:
        rate, src = args.rate, "given"
    elif args.series:
        rate, row = measured_rate(args.series, args.work)
        src = f"{args.series}: {row['ranks']} rank(s), {row['particles']} particles, {row['loop_time_s']} s"
    else:
        raise ReportError("predict: give --rate or --series (a series CSV with a 1-rank run)")
    # Scene figures: given > from the report > a single body without contact.
    cal, cal_src = report_calibration(args.report) if args.report else ({}, "")
    defaults = {"contact_fraction": 0.0, "imbalance": 1.0, "bytes_factor": 1.01, "contact_bytes_factor": 0.0,
                "rebuild_rate": 0.0, "balance_every": 0, "migration_rate": 0.0, "moved_fraction": 0.0}
    fig = {k: getattr(args, k) if getattr(args, k) is not None else cal.get(k, d) for k, d in defaults.items()}
    c, imb, f, fc = fig["contact_fraction"], fig["imbalance"], fig["bytes_factor"], fig["contact_bytes_factor"]
    rho, every, mig, moved = fig["rebuild_rate"], fig["balance_every"], fig["migration_rate"], fig["moved_fraction"]
    if mig > 0 and every <= 0:
        raise ReportError("predict: a migration rate needs --balance-every (steps between balance checks)")
    n_part = sum(r["owned"] for r in next(iter(parts.values())))
    n_target = args.target_particles or n_part
    s = n_target / n_part                 # volume factor: owned, bonds
    s_surf = s ** (2.0 / 3.0)             # surface factor: ghosts, halo bytes
    alpha, beta, omega = args.latency, args.bandwidth, args.overlap
    tau0, tau1 = args.partition_cost
    steps_run = args.run_steps
    total_work = None
    out = []
    for P in sorted(parts):
        rows = parts[P]
        if len(rows) != P:
            raise ReportError(f"predict: part-{P}.csv has {len(rows)} rows, expected {P}")
        work = [s * {"bonds": r["bonds"], "owned": r["owned"], "weight": r["owned"] + r["bonds"]}[args.work]
                for r in rows]
        if total_work is None:
            total_work = sum(work)
        L = math.ceil(math.log2(P)) if P > 1 else 0
        owned_max = s * max(r["owned"] for r in rows)
        # one rank: no imbalance, no message, no balancing, no migration at start-up
        t1 = total_work / rate * (1.0 + c) + n_target * (args.startup_sample + args.startup_build) / steps_run
        per_rank = []
        for r, w in zip(rows, work):
            o, g, h = s * r["owned"], s_surf * r["ghosts"], s_surf * r["halo_bytes"]
            comp = w / rate * (1.0 + c) * (imb if P > 1 else 1.0)
            lat = args.exchanges * r["neighbours"] * alpha if P > 1 else 0.0
            bw = f * h / beta if P > 1 else 0.0
            # the bond-halo exchanges run while the inner particles' passes are computed: x, v (48 of the 120
            # bytes per ghost) during pass 1, B (72) during pass 2, each pass half of the solid's time
            half = 0.5 * max(0.0, 1.0 - g / o) * w / rate if o > 0 else 0.0
            hidden = omega * (min(r["neighbours"] * alpha + 0.4 * h / beta, half)
                              + min(r["neighbours"] * alpha + 0.6 * h / beta, half)) if P > 1 else 0.0
            per_rank.append((comp + lat + bw - hidden, comp, lat, bw, hidden, r["neighbours"], h))
        worst = max(per_rank)
        allreduce = args.allreduces * L * alpha
        if P > 1:
            n_max = max(x[5] for x in per_rank)
            h_max = max(x[6] for x in per_rank)
            # every rank's cluster boxes (two allgathers), the counts to the neighbours, the records
            rebuild = rho * (2 * L * alpha + P * args.boxes * BOX_BYTES / beta + n_max * alpha
                             + CONTACT_RECORD_OVER_FORWARD * fc * h_max / beta)
            part = owned_max * (tau0 + tau1 * L) + args.rcb_allreduces * L * L * alpha
            migration = part + owned_max * args.migration_cost + moved * owned_max * args.record_bytes / beta
            balance = (2 * L * alpha / every if every > 0 else 0.0) + mig * migration
            startup = (owned_max * (args.startup_sample + args.startup_migrate) + part
                       + owned_max * args.startup_record_bytes / beta)
        else:
            rebuild = balance = 0.0
            startup = n_target * (args.startup_sample + args.startup_build)
        tp = worst[0] + allreduce + rebuild + balance + startup / steps_run
        out.append({
            "ranks": P, "particles": round(n_target), "owned_max": round(owned_max),
            "ghosts_max": round(s_surf * max(r["ghosts"] for r in rows)),
            "neighbours_max": max(r["neighbours"] for r in rows),
            "t1_step_s": t1, "tp_step_s": tp, "compute_s": worst[1], "latency_s": worst[2] + allreduce,
            "bandwidth_s": worst[3], "hidden_s": worst[4], "rebuild_s": rebuild, "balance_s": balance,
            "startup_s": startup, "speedup": t1 / tp, "efficiency": t1 / (P * tp),
        })
    header = list(out[0].keys())
    desc = (f"rate {rate:.6g} {args.work}-steps/s per rank ({src.replace(chr(10), ' ')}); contact fraction {c:.4g}, "
            f"imbalance {imb:.4g}, bytes factor {f:.4g} (contact {fc:.4g}), {rho:.4g} rebuilds per step, "
            f"{args.boxes:g} box(es) per rank; " +
            (f"balance every {every} steps, {mig:.4g} migrations per step moving {moved:.4g} of the particles; "
             if every > 0 else "no balancing; ") +
            f"latency {alpha:g} s, bandwidth {beta:g} B/s, {args.exchanges} exchanges + {args.allreduces} "
            f"allreduce(s) per step, overlap {omega:g}; start-up over {steps_run:g} steps; partitioned {n_part} "
            f"particles, predicted {n_target:.0f}")
    with open(args.out_csv, "w", newline="", encoding="utf-8") as fh:
        fh.write(f"# {args.label}: {desc}\n")
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        for row in out:
            w.writerow([fmt(row[k]) for k in header])
    print(f"{args.label}: {n_target:.4g} particles (partitioned: {n_part}; ghosts x {s_surf:.4g}, work x {s:.4g})")
    print(f"  rate {rate:.4g} {args.work}-steps/s on one rank ({src})")
    if cal_src:
        print(f"  from the report {cal_src}")
    print(f"  contact fraction {c:.3g}, imbalance {imb:.3g}, bytes factor {f:.3g} (contact part {fc:.3g}), "
          f"{rho:.3g} contact rebuilds per step, " +
          (f"balance every {every} steps with {mig:.3g} migrations per step ({moved:.3g} of the particles each)"
           if every > 0 else "no balancing"))
    print(f"  latency {alpha:g} s, bandwidth {beta:g} B/s per rank, {args.exchanges} halo exchanges and "
          f"{args.allreduces} allreduce(s) per step, overlap {omega:g}; start-up amortised over {steps_run:g} steps")
    print(f"  {'ranks':>6} {'owned max':>10} {'ghosts max':>10} {'nbr':>4} {'compute':>9} {'latency':>8} "
          f"{'bandw.':>8} {'hidden':>8} {'rebuild':>8} {'balance':>8} {'start-up':>8} {'step ms':>9} "
          f"{'efficiency':>10}")
    for row in out:
        print(f"  {row['ranks']:>6} {row['owned_max']:>10} {row['ghosts_max']:>10} {row['neighbours_max']:>4} "
              + " ".join(f"{1e3 * row[k]:>{wd}.4g}" for k, wd in (
                  ("compute_s", 9), ("latency_s", 8), ("bandwidth_s", 8), ("hidden_s", 8), ("rebuild_s", 8),
                  ("balance_s", 8)))
              + f" {1e3 * row['startup_s'] / steps_run:>8.4g} {1e3 * row['tp_step_s']:>9.4g} "
              f"{100 * row['efficiency']:>9.1f}%")
    print("  (ms per step; start-up: its time / the run's steps)")
    print(f"  CSV: {args.out_csv}")
    return 0


def read_predicted(path):
    with open(path, encoding="utf-8") as f:
        first = f.readline()
        label = first[2:].split(":")[0].strip() if first.startswith("#") else os.path.basename(path)
        if not first.startswith("#"):
            f.seek(0)
        rows = list(csv.DictReader(f))
    return label, rows


def plot_predict(args):
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.8))
    allp = set()
    for k, path in enumerate(args.predicted):
        label, rows = read_predicted(path)
        P = [int(r["ranks"]) for r in rows]
        allp.update(P)
        ax.plot(P, [100 * float(r["efficiency"]) for r in rows], ".-", color=f"C{k}", label=f"model: {label}")
    for k, path in enumerate(args.measured or []):
        rows = read_csv(path)
        P = [int(r["ranks"]) for r in rows]
        allp.update(P)
        lab = args.measured_label[k] if args.measured_label and k < len(args.measured_label) else \
            f"measured: {rows[0]['particles']} particles, {rows[0]['mode']}"
        ax.plot(P, [100 * float(r["parallel_efficiency"]) for r in rows], "o", color=f"C{k + 5}", ms=8, label=lab)
    if args.target:
        tp, te = args.target
        allp.add(int(tp))
        ax.plot([tp], [te], "k*", ms=12, label=f"target: {te:g} % at {tp:g} ranks")
    ranks = sorted(allp)
    _rank_axis(ax, [p for p in ranks if p & (p - 1) == 0] or ranks)
    ax.set_ylim(0, 105)
    ax.set_ylabel("strong-scaling efficiency (%)")
    ax.set_title(args.title, fontsize=10)
    ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    plt.close(fig)
    print(f"plot: {args.out}")
    return 0


# ---------------------------------------------------------------------------------------------------------
# LAMMPS next to Shard

LMP_LOOP = r"^Loop time of " + NUM + r" on (\d+) procs for (\d+) steps with (\d+) atoms"
LMP_MEM = r"^Per MPI rank memory allocation \(min/avg/max\) = " + NUM + r" \| " + NUM + r" \| " + NUM + " Mbytes"
LMP_BONDS = r"total # of bonds = (\d+)"


def parse_lammps(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    loop = _last_match(lines, LMP_LOOP)
    if not loop:
        raise ReportError(f"{path}: no 'Loop time of T on P procs for S steps with N atoms' line")
    mem = _last_match(lines, LMP_MEM)
    if not mem:
        raise ReportError(f"{path}: no 'Per MPI rank memory allocation (min/avg/max) = ...' line")
    bonds = _last_match(lines, LMP_BONDS)
    if not bonds:
        raise ReportError(f"{path}: no 'total # of bonds = B' line (not a peri/* run?)")
    t, p, s, n = loop.groups()
    return {"loop_time_s": float(t), "ranks": int(p), "steps": int(s), "particles": int(n),
            "self_bytes": float(mem.group(2)) * 1048576 * int(p), "bonds": int(bonds.group(1))}


def lammps_table(args):
    """MANIFEST: tab-separated lines: case, code (shard|lammps), model, ranks, log, rss_bytes ('n/a' allowed)."""
    entries = []
    with open(args.manifest, encoding="utf-8") as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            case, code, model, ranks, log, rss = line.rstrip("\n").split("\t")
            if code == "shard":
                r = parse_shard_report(log)
                r["self_bytes"] = r["bytes_per_particle"] * r["particles"]
            else:
                r = parse_lammps(log)
            if r["ranks"] != int(ranks):
                raise ReportError(f"{log}: ran on {r['ranks']} rank(s), expected {ranks}")
            r.update(case=case, code=code, model=model, log=log,
                     rss_bytes=float(rss) if rss not in ("", "n/a") else float("nan"))
            r["rate"] = r["particles"] * r["steps"] / r["loop_time_s"] / r["ranks"]
            entries.append(r)
    # Best (fastest) run per (case, code, model, ranks).
    best = {}
    for r in entries:
        k = (r["case"], r["code"], r["model"], r["ranks"])
        if k not in best or r["loop_time_s"] < best[k]["loop_time_s"]:
            best[k] = r
    header = ["case", "ranks", "code", "model", "particles", "bonds", "steps", "loop_time_s",
              "particle_steps_per_s_per_core", "ratio_shard_over_lammps", "rss_bytes_per_particle",
              "self_bytes_per_particle", "marginal_bytes_per_particle"]
    rows = []
    cases = []
    for k in best:
        if k[0] not in cases:
            cases.append(k[0])
    problems = []
    for case in cases:
        n = {(k[1], k[2]): v["particles"] for k, v in best.items() if k[0] == case}
        b = {(k[1], k[2]): v["bonds"] for k, v in best.items() if k[0] == case}
        if len(set(n.values())) != 1:
            raise ReportError(f"case {case}: the codes made different particle counts {n}: not the same problem")
        if len(set(b.values())) != 1:
            problems.append(f"case {case}: different bond totals {b}: the neighbour families differ")
    # Marginal memory per particle: (RSS of the 1-rank run - RSS of the half-size run) / particle difference.
    marginal = {}
    if args.marginal:
        with open(args.marginal, encoding="utf-8") as f:
            for line in f:
                if not line.strip() or line.startswith("#"):
                    continue
                case, code, model, n_half, rss_half = line.rstrip("\n").split("\t")
                full = [v for k, v in best.items() if k[:3] == (case, code, model) and k[3] == 1]
                rss_full = min((v["rss_bytes"] for v in entries
                                if (v["case"], v["code"], v["model"], v["ranks"]) == (case, code, model, 1)),
                               default=float("nan"))
                if full and rss_half not in ("", "n/a") and full[0]["particles"] > int(n_half):
                    marginal[(case, code, model)] = (rss_full - float(rss_half)) / (full[0]["particles"] - int(n_half))
    for case in cases:
        shard = {k[3]: v for k, v in best.items() if k[0] == case and k[1] == "shard"}
        for P in sorted({k[3] for k in best if k[0] == case}):
            for k in sorted((k for k in best if k[0] == case and k[3] == P), key=lambda k: (k[1] != "shard", k[2])):
                r = best[k]
                ratio = ""
                if r["code"] == "lammps" and P in shard:
                    ratio = shard[P]["rate"] / r["rate"]
                rows.append({"case": case, "ranks": P, "code": r["code"], "model": r["model"],
                             "particles": r["particles"], "bonds": r["bonds"], "steps": r["steps"],
                             "loop_time_s": r["loop_time_s"], "particle_steps_per_s_per_core": r["rate"],
                             "ratio_shard_over_lammps": ratio,
                             "rss_bytes_per_particle": r["rss_bytes"] / r["particles"],
                             "self_bytes_per_particle": r["self_bytes"] / r["particles"],
                             "marginal_bytes_per_particle": marginal.get(k[:3], float("nan"))})
    with open(args.out, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        for row in rows:
            w.writerow([fmt(row[c]) for c in header])
    f = "{:<9} {:>5} {:<6} {:<5} {:>9} {:>10} {:>5} {:>9} {:>17} {:>12} {:>10} {:>11} {:>12}"
    print(f.format("case", "ranks", "code", "model", "particles", "bonds", "steps", "loop (s)", "part-steps/s/core",
                   "Shard/LAMMPS", "RSS B/part", "self B/part", "marg. B/part"))
    print("-" * 132)

    def num(x):
        return "n/a" if isinstance(x, float) and math.isnan(x) else f"{x:.0f}"
    for row in rows:
        ratio = f"{row['ratio_shard_over_lammps']:.3f}" if row["ratio_shard_over_lammps"] != "" else "-"
        print(f.format(row["case"], row["ranks"], row["code"], row["model"], row["particles"], row["bonds"],
                       row["steps"], f"{row['loop_time_s']:.4g}", f"{row['particle_steps_per_s_per_core']:.4g}", ratio,
                       num(row["rss_bytes_per_particle"]), num(row["self_bytes_per_particle"]),
                       num(row["marginal_bytes_per_particle"])))
    for p in problems:
        print(f"warning: {p}")
    print(f"CSV: {args.out}")
    return 0


# ---------------------------------------------------------------------------------------------------------


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("parse", help="print the figures of one shard run log")
    p.add_argument("log")
    p.set_defaults(func=lambda a: [print(f"{k} = {v}") for k, v in parse_shard_report(a.log).items()] and 0)

    p = sub.add_parser("collect", help="shard run logs -> one CSV row per rank count (fastest run)")
    p.add_argument("--mode", choices=["strong", "weak"], required=True)
    p.add_argument("--out", required=True)
    p.add_argument("logs", nargs="+")
    p.set_defaults(func=collect)

    p = sub.add_parser("plot", help="series CSV -> speedup.png, efficiency.png, phases.png")
    p.add_argument("csv")
    p.add_argument("--out-dir", required=True)
    p.add_argument("--title")
    p.set_defaults(func=plot)

    p = sub.add_parser("calibrate", help="the model's scene figures from a `shard run` log, as KEY=VALUE lines")
    p.add_argument("log")
    p.set_defaults(func=calibrate)

    p = sub.add_parser("predict", help="strong-scaling model from `shard partition --csv` files")
    p.add_argument("--partitions", nargs="+", required=True, help="folders (or files) of part-P.csv files")
    p.add_argument("--series", help="series CSV: its 1-rank row gives the compute rate")
    p.add_argument("--rate", type=float, help="work units per second of one rank (instead of --series)")
    p.add_argument("--work", choices=["bonds", "owned", "weight"], default="bonds")
    p.add_argument("--target-particles", type=float, help="predict for this many particles (default: as partitioned)")
    p.add_argument("--latency", type=float, default=1.5e-6, help="s per message (HDR InfiniBand + MPI)")
    p.add_argument("--bandwidth", type=float, default=25e9 / 32,
                   help="B/s per rank (HDR NIC, 25 GB/s, shared by 32 ranks of a node)")
    p.add_argument("--exchanges", type=int, default=3, help="halo exchanges per step (2 of them: the bond halos)")
    p.add_argument("--allreduces", type=int, default=1)
    p.add_argument("--report", help="a `shard run` log whose end report gives the scene figures below")
    p.add_argument("--bytes-factor", type=float, help="bytes a step sends / bond-ghost bytes (default 1.01)")
    p.add_argument("--contact-bytes-factor", type=float, help="the contact ghosts' part of it (default 0)")
    p.add_argument("--contact-fraction", type=float,
                   help="(Contact + Neigh + Fracture) / Solid time on one rank (default 0)")
    p.add_argument("--imbalance", type=float, help="largest / average force work of a step, on top of the "
                   "partition's bond imbalance (default 1)")
    p.add_argument("--rebuild-rate", type=float, help="contact-ghost rebuilds per step (default 0)")
    p.add_argument("--boxes", type=float, default=1.0, help="cluster boxes per rank at a rebuild")
    p.add_argument("--balance-every", type=int, help="steps between balance checks (default 0: no balancing)")
    p.add_argument("--migration-rate", type=float, help="migrations per step (default 0)")
    p.add_argument("--moved-fraction", type=float, help="share of the particles a migration moves (default 0)")
    p.add_argument("--migration-cost", type=float, default=4.6e-6, help="s per particle held, per migration")
    p.add_argument("--record-bytes", type=float, default=750.0, help="bytes per migrating particle")
    p.add_argument("--partition-cost", type=float, nargs=2, default=[1.7e-7, 1e-8], metavar=("T0", "T1"),
                   help="RCB: s per particle held, plus s per particle held per cut level")
    p.add_argument("--rcb-allreduces", type=int, default=30, help="RCB allreduces per cut level")
    p.add_argument("--overlap", type=float, default=0.0,
                   help="share (0-1) of the bond halos' time hidden behind the inner particles' passes")
    p.add_argument("--run-steps", type=float, default=1e4, help="steps the start-up is amortised over")
    p.add_argument("--startup-sample", type=float, default=3.7e-6, help="start-up: s per particle to sample")
    p.add_argument("--startup-build", type=float, default=3.7e-6,
                   help="start-up on one rank: s per particle to build the store")
    p.add_argument("--startup-migrate", type=float, default=12.8e-6,
                   help="start-up on P > 1 ranks: s per particle held to partition, migrate and build")
    p.add_argument("--startup-record-bytes", type=float, default=790.0, help="start-up: bytes per particle moved")
    p.add_argument("--label", default="prediction")
    p.add_argument("--out-csv", required=True)
    p.set_defaults(func=predict)

    p = sub.add_parser("plot-predict", help="predicted efficiency curves and measured points")
    p.add_argument("--predicted", nargs="+", required=True)
    p.add_argument("--measured", nargs="*")
    p.add_argument("--measured-label", nargs="*")
    p.add_argument("--target", nargs=2, type=float, metavar=("RANKS", "PERCENT"))
    p.add_argument("--title", default="Shard strong scaling: model and measurements")
    p.add_argument("--out", required=True)
    p.set_defaults(func=plot_predict)

    p = sub.add_parser("lammps-table", help="Shard next to LAMMPS from a manifest of logs")
    p.add_argument("manifest")
    p.add_argument("--marginal", help="TSV of half-size 1-rank runs: case, code, model, particles, rss_bytes")
    p.add_argument("--out", required=True)
    p.set_defaults(func=lammps_table)

    args = ap.parse_args(argv)
    try:
        return args.func(args) or 0
    except ReportError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
