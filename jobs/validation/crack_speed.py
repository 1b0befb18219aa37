#!/usr/bin/python3
"""Crack speed job's analysis (jobs/validation/crack_speed.sh).

usage: crack_speed.py SPACING_MM DIR [SPACING_MM DIR ...]
For each output of DIR: the crack tip is the damaged particle (damage > 0.35, beyond the pre-crack's tip at
x = 50 mm) farthest along x; its speed is the slope of the tip position over windows of 2 us (least squares).
Branching: at the last output, damaged particles grouped along y in each 2 mm slice of x behind the tip; a slice
with two groups at least 4 spacings apart whose y have opposite signs (or both away from y = 0 by more than 4
spacings) is branched; the first such x is reported.  The Rayleigh speed of the glass (E 72 GPa, nu 0.22,
rho 2440 kg/m^3) comes from the Rayleigh equation.
"""
import glob
import math
import os
import sys

import h5py
import numpy

E, NU, RHO = 72e9, 0.22, 2440.0


def rayleigh():
    cs = math.sqrt(E / (2 * (1 + NU)) / RHO)
    cl = math.sqrt(E * (1 - NU) / ((1 + NU) * (1 - 2 * NU)) / RHO)
    lo, hi = 0.5 * cs, cs
    for _ in range(200):  # (2 - x^2)^2 = 4 sqrt(1 - x^2) sqrt(1 - (x cs/cl)^2), x = c / cs
        x = 0.5 * (lo + hi) / cs
        f = (2 - x * x) ** 2 - 4 * math.sqrt(1 - x * x) * math.sqrt(1 - (x * cs / cl) ** 2)
        if f > 0:  # f < 0 below the root (in (0.5, 1) c_s), > 0 above
            hi = x * cs
        else:
            lo = x * cs
    return 0.5 * (lo + hi), cs


def main():
    args = sys.argv[1:]
    if not args or len(args) % 2:
        sys.exit("crack_speed.py: error: give SPACING_MM DIR pairs")
    cr, cs = rayleigh()
    print("Crack speed in glass: Rayleigh speed c_R = %.0f m/s (c_s %.0f m/s); tip = the farthest damaged particle "
          "(damage > 0.35)" % (cr, cs))
    print("%-9s %9s %12s %12s %12s %10s %14s" % ("spacing", "outputs", "init_us", "max_v_m/s", "max_v/c_R",
                                               "tip_mm", "branch_at_mm"))
    for k in range(0, len(args), 2):
        mm, d = args[k], args[k + 1]
        s = float(mm) / 1000.0
        files = sorted(glob.glob(os.path.join(d, "particles_*.h5")))
        ts, tips = [], []
        last = None
        for name in files:
            with h5py.File(name, "r") as f:
                x = f["/particles/position"][:]
                dmg = f["/particles/damage"][:]
                t = float(f.attrs["time"])
            hit = (dmg > 0.35) & (x[:, 0] > 0.05 + s)
            ts.append(t)
            tips.append(x[hit, 0].max() if hit.any() else 0.05)
            last = (x, dmg)
        ts, tips = numpy.array(ts), numpy.array(tips)
        moved = numpy.nonzero(tips > 0.05 + 2 * s)[0]
        init = ts[moved[0]] * 1e6 if len(moved) else float("nan")
        vmax = 0.0
        for i in range(len(ts)):
            w = (ts >= ts[i]) & (ts <= ts[i] + 2e-6)
            if w.sum() >= 3 and tips[w].max() > 0.05 + 2 * s:
                v = numpy.polyfit(ts[w], tips[w], 1)[0]
                vmax = max(vmax, v)
        x, dmg = last
        hit = (dmg > 0.35) & (x[:, 0] > 0.05 + s)
        branch = float("nan")
        if hit.any():
            xs, ys = x[hit, 0], x[hit, 1]
            for x0 in numpy.arange(0.05, xs.max(), 0.002):
                sel = numpy.sort(ys[(xs >= x0) & (xs < x0 + 0.002)])
                if len(sel) < 2:
                    continue
                gaps = numpy.diff(sel)
                j = numpy.argmax(gaps)
                if gaps[j] >= 4 * s and (sel[0] < -2 * s or sel[-1] > 2 * s) and sel[0] < 0 < sel[-1]:
                    branch = x0 * 1e3
                    break
        print("%-9s %9d %12.2f %12.0f %12.3f %10.1f %14s" % (mm + " mm", len(files), init, vmax, vmax / cr,
                                                           tips[-1] * 1e3,
                                                           "no" if math.isnan(branch) else "%.0f" % branch))


if __name__ == "__main__":
    main()
