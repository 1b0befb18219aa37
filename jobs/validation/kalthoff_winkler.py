#!/usr/bin/env python3
"""Crack angles and initiation of a Kalthoff-Winkler run (jobs/validation/kalthoff_winkler.sh).

    kalthoff_winkler.py [--threshold 0.3] [--exclude-mm 5] [--near 3] [--write FILE] DIR...

DIR is a run's output folder (particles_<step>.h5, and run.json from the job, which gives the geometry; without
it the job's defaults are assumed).  Everything is measured on the particles' reference positions (those of
step 0, matched by global id) in the lattice layer(s) nearest the plate's mid-plane, so the cracks are lines in
the x-y plane.  The notches lie along +x (from the impacted edge x = 0 to the tips at x = 50 mm), at
y = -25 mm (the lower crack) and +25 mm (the upper one).

Per notch tip:
  crack     the mid-plane particles with damage > threshold at the last output, on the tip's outer side of the
            notch line (|y| > 25 mm - one spacing), that are connected (neighbouring lattice sites, diagonals
            included) to a cracked particle within NEAR spacings of the tip
  angle     the direction of the least-squares line (total least squares: the principal axis) through the
            crack's particles farther than EXCLUDE mm from the tip, measured from the notch direction (+x),
            positive away from the centre line; "5-25 mm": the same over the first 20 mm of that path only
  width     the rms distance of those particles from the line, in spacings (a crack one particle wide: ~0.3-0.6)
  length    the crack particle farthest from the tip
  init      the first output with damage > threshold within NEAR spacings of the tip (any layer), its time
  speed     slope of the crack length over the outputs while it grows from 10 mm to 80 % of its final length
Per run: the share of mid-plane particles with damage > threshold that belong to neither crack (damage away from
the two cracks: spall, crushing at the impact, branches), the number of fragments and the largest one's share of
the mass at the last output.
"""
import argparse
import glob
import json
import math
import os
import re
import sys
from collections import deque

import h5py
import numpy as np

DEFAULT_RUN = {"plate": {"min": [0, -0.1, 0], "max": [0.1, 0.1, 0.009]},
               "tips": [[0.05, -0.025], [0.05, 0.025]], "notch_y": [-0.025, 0.025]}


def outputs(d):
    files = glob.glob(os.path.join(d, "particles_*.h5"))
    files.sort(key=lambda f: int(re.search(r"particles_(\d+)\.h5$", f).group(1)))
    if len(files) < 2:
        sys.exit(f"error: {d}: fewer than two particles_<step>.h5 files")
    return files


def read(f, fields):
    """time, step, and the fields sorted by global id."""
    with h5py.File(f, "r") as h:
        p = h["particles"]
        order = np.argsort(p["global_id"][:], kind="stable")
        out = {k: p[k][:][order] for k in fields}
        out["global_id"] = p["global_id"][:][order]
        frag = None
        if "fragments" in h:
            a = h["fragments"].attrs
            if "n_fragments" in a and "largest_mass" in a and "total_mass" in a:
                frag = (int(a["n_fragments"]), float(a["largest_mass"]) / float(a["total_mass"]))
        return float(h.attrs["time"]), int(h.attrs["step"]), out, frag


def components(sites, seeds):
    """The sites (a set of integer (i, j, k) tuples) connected to any seed site through 26-neighbours."""
    seen = set(s for s in seeds if s in sites)
    q = deque(seen)
    while q:
        i, j, k = q.popleft()
        for di in (-1, 0, 1):
            for dj in (-1, 0, 1):
                for dk in (-1, 0, 1):
                    n = (i + di, j + dj, k + dk)
                    if n in sites and n not in seen:
                        seen.add(n)
                        q.append(n)
    return seen


def fit_angle(pts, tip, side):
    """Principal axis of pts (n x 2) oriented away from the tip: angle to +x (deg, + away from the centre
    line) and rms distance from the line; None with fewer than 3 points."""
    if len(pts) < 3:
        return None
    c = pts.mean(axis=0)
    _, _, vt = np.linalg.svd(pts - c, full_matrices=False)
    u = vt[0]
    if np.dot(u, c - tip) < 0:
        u = -u
    ang = math.degrees(math.atan2(side * u[1], u[0]))
    nrm = np.array([-u[1], u[0]])
    rms = float(np.sqrt(np.mean(((pts - c) @ nrm) ** 2)))
    return ang, rms


def analyse(d, thr, exclude, near):
    run = dict(DEFAULT_RUN)
    jf = os.path.join(d, "run.json")
    if os.path.exists(jf):
        with open(jf) as f:
            run.update(json.load(f))
    files = outputs(d)
    t0, _, ref, _ = read(files[0], ["position", "body", "damage"])
    plate = ref["body"] == 0
    X = ref["position"]
    zmin, zmax = run["plate"]["min"][2], run["plate"]["max"][2]
    lo = np.array(run["plate"]["min"])
    s = run.get("spacing")
    if not s:  # the lattice spacing from the reference positions
        xs = np.unique(np.round(X[plate, 0], 9))
        s = float(np.min(np.diff(xs)))
    idx = np.rint((X - lo) / s - 0.5).astype(int)  # lattice site of each particle
    zp = X[plate, 2]
    zc = 0.5 * (zp.min() + zp.max())
    dz = np.abs(X[:, 2] - zc)
    mid = plate & (dz <= dz[plate].min() + 1e-3 * s)
    tips = [np.array(t, dtype=float) for t in run["tips"]]
    sides = [-1.0, 1.0]
    names = ["lower", "upper"]
    r_tip = [np.hypot(X[:, 0] - t[0], X[:, 1] - t[1]) for t in tips]
    outer = [sd * (X[:, 1] - t[1]) > -s for t, sd in zip(tips, sides)]

    def cracks(dmg):
        """Per tip, the boolean mask of its crack (mid-plane particles)."""
        res = []
        hot = mid & (dmg > thr)
        for k in range(2):
            cand = np.nonzero(hot & outer[k])[0]
            sites = {tuple(idx[i]): i for i in cand}
            seeds = [tuple(idx[i]) for i in cand if r_tip[k][i] <= near * s]
            conn = components(set(sites), seeds)
            m = np.zeros(len(dmg), bool)
            m[[sites[c] for c in conn]] = True
            res.append(m)
        return res

    # initiation and crack length over time
    init = [None, None]
    length = [[], []]
    times = []
    frag = None
    dmg = None
    for f in files:
        t, step, o, frag = read(f, ["damage"])
        dmg = o["damage"]
        times.append(t)
        for k in range(2):
            if init[k] is None and np.any(plate & (r_tip[k] <= near * s) & (dmg > thr)):
                init[k] = (t, step)
        for k, m in enumerate(cracks(dmg)):
            length[k].append(float(r_tip[k][m].max()) if m.any() else 0.0)
    times = np.array(times)
    final = cracks(dmg)
    rows = []
    for k in range(2):
        m = final[k]
        path = m & (r_tip[k] > exclude)
        pts = X[path][:, :2]
        full = fit_angle(pts, tips[k], sides[k])
        first = fit_angle(X[path & (r_tip[k] <= exclude + 0.020)][:, :2], tips[k], sides[k])
        L = np.array(length[k])
        speed = None
        if L[-1] > 0.012:
            g = (L >= 0.010) & (L <= 0.8 * L[-1])
            if g.sum() >= 2:
                speed = float(np.polyfit(times[g], L[g], 1)[0])
        rows.append({"crack": names[k], "particles": int(m.sum()), "path": int(path.sum()),
                     "length_mm": 1e3 * L[-1], "angle": full[0] if full else None,
                     "angle_near": first[0] if first else None,
                     "width": full[1] / s if full else None,
                     "t_init_us": 1e6 * init[k][0] if init[k] else None,
                     "step_init": init[k][1] if init[k] else None, "speed": speed})
    hot = mid & (dmg > thr)
    elsewhere = hot & ~final[0] & ~final[1]
    summary = {"dir": d, "spacing_mm": 1e3 * s, "particles": run.get("particles", int(len(X))),
               "wall_s": run.get("wall_s"), "impact": run.get("impact", "?"), "nu": run.get("nu"),
               "critical_stretch": run.get("critical_stretch"), "stabilization": run.get("stabilization"),
               "support": run.get("support"), "steps": run.get("steps"),
               "t_end_us": 1e6 * times[-1], "outputs": len(files), "every_us": 1e6 * (times[1] - times[0]),
               "mid_layers": int(len(np.unique(np.round(X[mid, 2], 9)))), "mid_particles": int(mid.sum()),
               "damage0": float(ref["damage"][plate].max()),
               "cracked_share": float(hot.sum()) / max(1, int(mid.sum())),
               "elsewhere_share": float(elsewhere.sum()) / max(1, int(mid.sum())),
               "elsewhere_of_cracked": float(elsewhere.sum()) / max(1, int(hot.sum())),
               "fragments": frag[0] if frag else None, "largest": frag[1] if frag else None}
    return summary, rows


def fmt(x, f):
    return "-" if x is None else format(x, f)


def table(summary, rows, thr, exclude, near):
    s = summary
    out = [f"spacing {s['spacing_mm']:.3f} mm: {s['particles']} particles, {s['steps'] or '?'} steps to "
           f"{s['t_end_us']:.1f} us, wall {fmt(s['wall_s'], '.1f')} s; impact {s['impact']}, nu {s['nu']}, "
           f"support {s['support']}, stabilization {s['stabilization']}, s_c {fmt(s['critical_stretch'], '.4g')}",
           f"  outputs every {s['every_us']:.2f} us; mid-plane: {s['mid_layers']} layer(s), {s['mid_particles']} "
           f"particles; damage > {thr}: {100 * s['cracked_share']:.1f} % of them, "
           f"{100 * s['elsewhere_share']:.1f} % away from the two cracks "
           f"({100 * s['elsewhere_of_cracked']:.0f} % of the damaged); fragments {fmt(s['fragments'], 'd')}, "
           f"largest {fmt(s['largest'] and 100 * s['largest'], '.1f')} % of the mass",
           f"  {'crack':<6} {'particles':>9} {'length_mm':>9} {'angle_deg':>9} {'5-25mm_deg':>10} "
           f"{'width_sp':>8} {'init_us':>7} {'init_step':>9} {'speed_m/s':>9}"]
    for r in rows:
        out.append(f"  {r['crack']:<6} {r['particles']:>9d} {r['length_mm']:>9.1f} {fmt(r['angle'], '.1f'):>9} "
                   f"{fmt(r['angle_near'], '.1f'):>10} {fmt(r['width'], '.2f'):>8} {fmt(r['t_init_us'], '.1f'):>7} "
                   f"{fmt(r['step_init'], 'd'):>9} {fmt(r['speed'], '.0f'):>9}")
    if s["damage0"] > 0:
        out.append(f"  note: damage at step 0 up to {s['damage0']:.3f}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+", metavar="DIR")
    ap.add_argument("--threshold", type=float, default=0.3, help="damage threshold (default 0.3)")
    ap.add_argument("--exclude-mm", type=float, default=5.0,
                    help="leave out the crack within this distance of the tip in the fit (default 5)")
    ap.add_argument("--near", type=float, default=3.0, help="'at the tip': within this many spacings (default 3)")
    ap.add_argument("--write", metavar="FILE", help="also write the table to FILE")
    a = ap.parse_args()
    lines = [f"Kalthoff-Winkler: crack angle to the notch direction (experiment about 70 deg, models 60-75), "
             f"damage > {a.threshold}, fit beyond {a.exclude_mm:g} mm of the tip, initiation within {a.near:g} "
             f"spacings of the tip, at the last output", ""]
    for d in a.dirs:
        summary, rows = analyse(d, a.threshold, 1e-3 * a.exclude_mm, a.near)
        lines += table(summary, rows, a.threshold, a.exclude_mm, a.near) + [""]
    text = "\n".join(lines).rstrip() + "\n"
    sys.stdout.write(text)
    if a.write:
        os.makedirs(os.path.dirname(os.path.abspath(a.write)), exist_ok=True)
        with open(a.write, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
