#!/usr/bin/python3
"""Griffith job's analysis (jobs/validation/griffith.sh): from each run's output folder, the far-field stress at
crack initiation and at propagation, against sigma_c = sqrt(E G_c / (pi a)) / sqrt(sec(pi a / W)).

usage: griffith.py --W W --a A --E E --G G_c [--grow N] SPACING_MM DIR [SPACING_MM DIR ...]
The far-field stress of an output is the mean sigma_yy over the particles of two full-width bands,
y in [0.2 W, 0.3 W] and [0.7 W, 0.8 W].  Broken bonds per output come from DIR/fragments.csv.  Initiation: the
first output with a broken bond; propagation: the first with more than N x (the particles along the crack
front: 2 tips x the plate's layers) broken bonds.  Each stress is interpolated linearly in time between the
output before and the output of the event, at the event's output time (the later bound: the stress there is
an upper bound of the stress at the event, the earlier output's a lower one; both are printed).
"""
import argparse
import csv
import glob
import math
import os
import sys

import h5py
import numpy


def far_field(path, W):
    with h5py.File(path, "r") as f:
        y = f["/particles/position"][:, 1]
        s = f["/particles/stress"][:, 4]  # sigma_yy: row 1, column 1 of the full tensor
        t = float(f.attrs["time"])
    band = ((y >= 0.2 * W) & (y <= 0.3 * W)) | ((y >= 0.7 * W) & (y <= 0.8 * W))
    return t, float(s[band].mean())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--W", type=float, required=True)
    ap.add_argument("--a", type=float, required=True)
    ap.add_argument("--E", type=float, required=True)
    ap.add_argument("--G", type=float, required=True)
    ap.add_argument("--grow", type=float, default=3)
    ap.add_argument("runs", nargs="+")
    o = ap.parse_args()
    if len(o.runs) % 2:
        sys.exit("griffith.py: error: give SPACING_MM DIR pairs")
    sc = math.sqrt(o.E * o.G / (math.pi * o.a)) / math.sqrt(1.0 / math.cos(math.pi * o.a / o.W))
    print("Griffith plate: W = %g m, 2a = %g m, E = %g Pa, G_c = %g J/m^2: sigma_c = %.4g Pa (finite-width "
          "factor %.4f)" % (o.W, 2 * o.a, o.E, o.G, sc, 1.0 / math.sqrt(1.0 / math.cos(math.pi * o.a / o.W))))
    print("%-10s %10s %14s %14s %10s %14s %14s %10s" % ("spacing", "layers", "init_lo_Pa", "init_hi_Pa", "init/sc",
                                                        "prop_lo_Pa", "prop_hi_Pa", "prop/sc"))
    for k in range(0, len(o.runs), 2):
        mm, d = o.runs[k], o.runs[k + 1]
        rows = list(csv.DictReader(open(os.path.join(d, "fragments.csv"))))
        steps = [int(r["step"]) for r in rows]
        broken = [int(r["broken_bonds"]) for r in rows]
        s = float(mm) / 1000.0
        with h5py.File(os.path.join(d, "particles_%06d.h5" % steps[0]), "r") as f:
            z = f["/particles/position"][:, 2]
        layers = len(numpy.unique(numpy.floor(z / s)))
        front = 2 * layers
        out = []
        for limit in (0, o.grow * front):
            q = next((i for i, b in enumerate(broken) if b > limit), None)
            if q is None or q == 0:
                out.append((float("nan"), float("nan")))
                continue
            _, lo = far_field(os.path.join(d, "particles_%06d.h5" % steps[q - 1]), o.W)
            _, hi = far_field(os.path.join(d, "particles_%06d.h5" % steps[q]), o.W)
            out.append((lo, hi))
        (ilo, ihi), (plo, phi) = out
        print("%-10s %10d %14.4g %14.4g %10.3f %14.4g %14.4g %10.3f" % (mm + " mm", layers, ilo, ihi,
                                                                      0.5 * (ilo + ihi) / sc, plo, phi,
                                                                      0.5 * (plo + phi) / sc))


if __name__ == "__main__":
    main()
