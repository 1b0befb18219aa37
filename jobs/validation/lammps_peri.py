#!/usr/bin/env python3
"""The analysis of jobs/validation/lammps_peri.sh: LAMMPS's examples/peri (a spherical indenter through a PMB
cylinder) next to Shard's version of it.

  lammps_peri.py penetration --lammps DUMP | --shard DIR  --radius R --y0 Y0 --vy VY [--dt DT]
      how deep particle centres sit inside the indenter sphere (|x - c| < R, c = (0, Y0 + VY t, 0)), over every
      frame: prints "mean max samples force_depth" (m, m, particle-frames, m): force_depth = sum d^2 / sum d,
      the depth at which a linear spring matches the total force of LAMMPS's K d^2 over the same depths.  LAMMPS frames need --dt (t = step dt); Shard's
      files carry their time.
  lammps_peri.py analyse --manifest FILE --table FILE [--figure GROUP=PNG ...] [--history GROUP=PNG ...]
                         [--link 1.5]
      one line of the table per run of the manifest; for each --figure GROUP=PNG, damage maps of the runs of that
      group; for each --history GROUP=PNG, the broken fraction against time of the runs of GROUP and GROUP+ (the
      script's table-only rows).

The manifest is tab-separated, one run a line:
  group  label  code  spacing  horizon  data  log  radius  y0  vy  dt
code is lammps (data: a `dump custom` text file with columns id x y z damage, sorted by id, frames from step 0 to
the end) or shard (data: the output folder of particles_<step>.h5 files with damage and fragment).  horizon is
the bond radius: LAMMPS bonds pairs with |X_j - X_i| <= delta, Shard with < support x spacing (no lattice pair
sits at the horizon at 3.0002 spacings, so both count the same pairs).

Per run: particles, steps, loop time and time per step (from the log); the bond pairs at rest (counted from the
first frame's positions), the broken ones, sum_i d_i n_i / 2 from the final damage d_i and the bond count n_i of
each particle (damage is the broken fraction of a particle's bonds in both codes); the mean damage and the share
of particles with damage > 0.5; the fragments of the common count: connected components of the graph joining
final positions closer than LINK spacings (the same method on both codes' positions), with the number of single
particles and the largest component's share; for Shard its own count (the components of its unbroken bonds,
from the report's "Fracture:" line); the indenter's mean penetration.
"""
import argparse
import glob
import math
import os
import re
import sys

import numpy as np


def die(msg):
    sys.stderr.write("error: %s\n" % msg)
    sys.exit(1)


# ---- reading ------------------------------------------------------------------------------------------------
def lammps_frames(path):
    """Yields (step, ids, positions (n, 3), damage (n)) for every frame of a LAMMPS `dump custom` text file whose
    columns are id x y z damage (in that order)."""
    with open(path) as f:
        while True:
            line = f.readline()
            if not line:
                return
            if not line.startswith("ITEM: TIMESTEP"):
                continue
            step = int(f.readline())
            f.readline()  # ITEM: NUMBER OF ATOMS
            n = int(f.readline())
            for _ in range(4):  # box bounds
                f.readline()
            head = f.readline().split()[2:]
            if head[:4] != ["id", "x", "y", "z"] or len(head) < 5:
                die("%s: dump columns %s, expected id x y z damage" % (path, " ".join(head)))
            rows = np.loadtxt([f.readline() for _ in range(n)], ndmin=2)
            order = np.argsort(rows[:, 0], kind="stable")
            rows = rows[order]
            yield step, rows[:, 0].astype(np.int64), rows[:, 1:4].copy(), rows[:, 4].copy()


def shard_files(folder):
    files = sorted(glob.glob(os.path.join(folder, "particles_*.h5")))
    if not files:
        die("no particles_*.h5 in %s" % folder)
    return files


def shard_frame(path, fields=("damage",)):
    import h5py

    with h5py.File(path, "r") as f:
        gid = f["particles/global_id"][...]
        order = np.argsort(gid, kind="stable")
        out = {"step": int(f.attrs["step"]), "time": float(f.attrs["time"]), "id": gid[order],
               "x": f["particles/position"][...][order]}
        for name in fields:
            out[name] = f["particles/" + name][...][order] if "particles/" + name in f else None
    return out


class Run:
    """One run of the manifest, with its first (reference) and last frame."""

    def __init__(self, cols):
        (self.group, self.label, self.code, spacing, horizon, self.data, self.log, radius, y0, vy,
         dt) = cols
        self.spacing, self.horizon = float(spacing), float(horizon)
        self.radius, self.y0, self.vy, self.dt = float(radius), float(y0), float(vy), float(dt)
        if self.code == "lammps":
            first = last = None
            frames = []
            self.damage_frames = []
            for fr in lammps_frames(self.data):
                if first is None:
                    first = fr
                last = fr
                frames.append((fr[0] * self.dt, fr[2]))
                self.damage_frames.append((fr[0] * self.dt, fr[3]))
            if first is None:
                die("no frames in %s" % self.data)
            if first[0] != 0:
                die("%s: the first frame is step %d, not 0 (the reference positions)" % (self.data, first[0]))
            if not np.array_equal(first[1], last[1]):
                die("%s: the first and last frames hold different atoms" % self.data)
            self.X, self.x, self.damage = first[2], last[2], last[3]
            self.own_fragments = None
            self.frames = frames
        elif self.code == "shard":
            files = shard_files(self.data)
            f0, f1 = shard_frame(files[0]), shard_frame(files[-1], ("damage", "fragment"))
            if f0["step"] != 0:
                die("%s: the first output is step %d, not 0" % (files[0], f0["step"]))
            if not np.array_equal(f0["id"], f1["id"]):
                die("%s: the first and last outputs hold different particles" % self.data)
            if f1["damage"] is None:
                die("%s has no damage field" % files[-1])
            self.X, self.x, self.damage = f0["x"], f1["x"], f1["damage"]
            self.fragment = f1["fragment"]
            self.frames, self.damage_frames = [], []
            for p in files:
                fr = shard_frame(p)
                if not np.array_equal(fr["id"], f0["id"]):
                    die("%s holds other particles than %s" % (p, files[0]))
                self.frames.append((fr["time"], fr["x"]))
                self.damage_frames.append((fr["time"], fr["damage"]))
        else:
            die("unknown code '%s' in the manifest" % self.code)
        self.read_log()

    def read_log(self):
        text = open(self.log).read()
        self.loop = self.steps = self.n_log = None
        self.own_fragments = self.own_broken = self.own_bonds = self.own_largest = None
        if self.code == "lammps":
            m = re.findall(r"^Loop time of (\S+) on (\d+) procs for (\d+) steps with (\d+) atoms", text, re.M)
            b = re.findall(r"total # of bonds = (\d+)", text)
            self.log_bonds = int(b[-1]) // 2 if b else None
            # the last thermo row before 'Loop time'; KinEng sums rmass v^2 / 2 with rmass = density (peri's
            # convention: forces are force densities), so the kinetic energy in J is KinEng x the volume a^3
            self.ke = self.py = None
            lines = text.split("\n")
            loops = [i for i, l in enumerate(lines) if l.startswith("Loop time of")]
            heads = [i for i, l in enumerate(lines) if l.split()[:1] == ["Step"] and loops and i < loops[-1]]
            if heads:
                names = lines[heads[-1]].split()
                last = lines[loops[-1] - 1].split()
                if len(last) == len(names):
                    v = self.spacing ** 3
                    if "KinEng" in names:
                        self.ke = float(last[names.index("KinEng")]) * v
                    if "v_py" in names:
                        self.py = float(last[names.index("v_py")]) * v
        else:
            m = re.findall(r"^Loop time of (\S+) s on (\d+) rank\(s\) for (\d+) steps with (\d+) particles", text,
                           re.M)
            fr = re.findall(r"^Fracture: (\d+) of (\d+) bonds .*?; (\d+) fragment\(s\), the largest (\S+) of the mass",
                            text, re.M)
            if fr:
                self.own_broken, self.own_bonds, self.own_fragments, self.own_largest = fr[-1]
            self.log_bonds = int(self.own_bonds) if self.own_bonds else None
            k = re.findall(r"^Final: .*?kinetic (\S+) J, .*?momentum (\S+) (\S+) (\S+),", text, re.M)
            self.ke = float(k[-1][0]) if k else None
            self.py = float(k[-1][2]) if k else None
        if not m:
            die("no 'Loop time' line in %s" % self.log)
        self.loop, self.ranks, self.steps, self.n_log = float(m[-1][0]), int(m[-1][1]), int(m[-1][2]), int(m[-1][3])
        if self.n_log != len(self.X):
            die("%s: %d particles in the log, %d in the output" % (self.log, self.n_log, len(self.X)))


# ---- measures -----------------------------------------------------------------------------------------------
def pairs_within(x, r):
    from scipy.spatial import cKDTree

    return cKDTree(x).query_pairs(r, output_type="ndarray")


def bond_counts(run):
    """Bonds per particle at rest: pairs with |X_j - X_i| <= horizon (a hair more, for rounding)."""
    p = pairs_within(run.X, run.horizon * (1 + 1e-9))
    n = np.bincount(p.ravel(), minlength=len(run.X))
    return n, len(p)


def components(n, pairs):
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    if len(pairs) == 0:
        return n, np.arange(n)
    g = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    return connected_components(g, directed=False)


def penetration(frames, radius, y0, vy):
    """(mean, max, samples, sum d^2 / sum d) of the depth d = R - |x - c| over the particle-frames with the centre
    inside the sphere; sum d^2 / sum d is the depth at which a linear spring k d matches the total force of the
    quadratic K d^2 over the same depths (k = K sum d^2 / sum d)."""
    depths = []
    for t, x in frames:
        c = np.array([0.0, y0 + vy * t, 0.0])
        d = radius - np.linalg.norm(x - c, axis=1)
        depths.append(d[d > 0])
    d = np.concatenate(depths) if depths else np.zeros(0)
    if len(d) == 0:
        return 0.0, 0.0, 0, 0.0
    return float(d.mean()), float(d.max()), len(d), float(np.sum(d * d) / np.sum(d))


def measure(run, link):
    n_i, bonds = bond_counts(run)
    run.bonds = bonds
    run.broken = float(np.sum(run.damage * n_i) / 2)
    run.mean_damage = float(run.damage.mean())
    run.damaged = float(np.mean(run.damage > 0.5))
    ncomp, lab = components(len(run.x), pairs_within(run.x, link * run.spacing))
    sizes = np.bincount(lab)
    run.fragments, run.singles, run.largest = ncomp, int(np.sum(sizes == 1)), float(sizes.max() / len(run.x))
    run.history = [(t, float(np.sum(d * n_i) / 2 / bonds)) for t, d in run.damage_frames]
    run.pen_mean, run.pen_max, _, run.pen_force = penetration(run.frames, run.radius, run.y0, run.vy)


# ---- output -------------------------------------------------------------------------------------------------
def table(runs, link, path):
    head = ("run", "code", "a mm", "particles", "steps", "loop s", "ms/step", "bond pairs", "broken",
            "fraction", "mean dmg", "dmg>0.5", "frag (py)", "singles", "largest", "own frag", "pen. mm", "KE J", "p_y kg m/s")
    rows = []
    for r in runs:
        own = "-" if r.own_fragments is None else r.own_fragments
        rows.append((r.label, r.code, "%.3g" % (r.spacing * 1e3), str(len(r.x)), str(r.steps), "%.2f" % r.loop,
                     "%.2f" % (1e3 * r.loop / r.steps), str(r.bonds), "%.0f" % r.broken,
                     "%.1f %%" % (100 * r.broken / r.bonds), "%.3f" % r.mean_damage, "%.1f %%" % (100 * r.damaged),
                     str(r.fragments), str(r.singles), "%.3f" % r.largest, str(own), "%.3f" % (r.pen_mean * 1e3),
                     "-" if r.ke is None else "%.3g" % r.ke, "-" if r.py is None else "%.3g" % r.py))
    w = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head)]
    lines = [" | ".join(h.ljust(w[i]) for i, h in enumerate(head)),
             "-+-".join("-" * x for x in w)]
    lines += [" | ".join(c.ljust(w[i]) for i, c in enumerate(row)) for row in rows]
    notes = [
        "",
        "loop s: each code's 'Loop time' (%d rank(s)); ms/step = loop / steps.  bond pairs: pairs closer than the"
        % runs[0].ranks,
        "  horizon at rest, counted here from the first frame; broken = sum_i damage_i n_i / 2.  fraction: broken /"
        " bond pairs.",
        "mean dmg: the mean of the final damage; dmg>0.5: the share of particles that lost more than half their bonds.",
        "frag (py): connected components of the final positions joined closer than %.2g spacings (the same count for"
        % link,
        "  both codes); singles: components of one particle; largest: the largest component's share of the particles.",
        "own frag: Shard's own fragments (components of the unbroken bonds, its 'Fracture:' line).",
        "pen. mm: the mean depth of particle centres inside the indenter radius R = 1.5 mm, over every output frame.",
        "KE J, p_y: the target's kinetic energy and momentum along the projectile's path at the end (LAMMPS:",
        "  KinEng and mass(all) vcm(all,y) x a^3, its masses being the density): what the indenter put in.",
    ]
    for r in runs:
        if r.log_bonds is not None and r.log_bonds != r.bonds:
            notes.append("warning: %s: %d bond pairs in its log, %d counted here" % (r.label, r.log_bonds, r.bonds))
        if r.code == "shard" and r.own_broken is not None and abs(float(r.own_broken) - r.broken) > 0.5:
            notes.append("note: %s: Shard reports %s broken, sum d n / 2 gives %.0f" % (r.label, r.own_broken, r.broken))
    text = "\n".join(lines + notes) + "\n"
    with open(path, "w") as f:
        f.write(text)
    sys.stdout.write(text)


def grid_image(X, values, a, reduce="mean"):
    """values on the (x, z) lattice columns of the reference positions X: an image and its extent."""
    ix = np.rint((X[:, 0] - X[:, 0].min()) / a).astype(int)
    iz = np.rint((X[:, 2] - X[:, 2].min()) / a).astype(int)
    img_sum = np.zeros((iz.max() + 1, ix.max() + 1))
    img_n = np.zeros_like(img_sum)
    np.add.at(img_sum, (iz, ix), values)
    np.add.at(img_n, (iz, ix), 1)
    img = np.where(img_n > 0, img_sum / np.maximum(img_n, 1), np.nan)
    ext = (X[:, 0].min() - a / 2, X[:, 0].max() + a / 2, X[:, 2].min() - a / 2, X[:, 2].max() + a / 2)
    return img, [e * 1e3 for e in ext]


def nearest_layer(coord, target):
    vals = np.unique(np.round(coord, 12))
    v = vals[np.argmin(np.abs(vals - target) + 1e-12 * (vals < target))]
    return np.abs(coord - v) < 1e-9, v


def figure(runs, path, title):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = ("damage averaged along the axis (y)", "mid-thickness layer", "final positions, seen along -y",
            "side section near z = 0 (x, y)")
    height = 3.6 * len(runs) + 0.8
    fig, axes = plt.subplots(len(runs), 4, figsize=(17, height), squeeze=False)
    fig.subplots_adjust(left=0.07, right=0.9, bottom=0.4 / height, top=1 - 1.15 / height, hspace=0.45, wspace=0.3)
    norm = matplotlib.colors.Normalize(0, 1)
    cmap = "inferno"
    for row, r in zip(axes, runs):
        a = r.spacing
        img, ext = grid_image(r.X, r.damage, a)
        row[0].imshow(img, origin="lower", extent=ext, norm=norm, cmap=cmap)
        ymid = 0.5 * (r.X[:, 1].min() + r.X[:, 1].max())
        sel, yv = nearest_layer(r.X[:, 1], ymid)
        img, ext = grid_image(r.X[sel], r.damage[sel], a)
        row[1].imshow(img, origin="lower", extent=ext, norm=norm, cmap=cmap)
        row[1].set_title("layer y = %.2f mm" % (yv * 1e3), fontsize=8)
        order = np.argsort(r.x[:, 1])  # the highest y (nearest the viewer, the projectile's side) drawn last
        lim = 1.6 * max(abs(r.X[:, 0]).max(), abs(r.X[:, 2]).max()) * 1e3
        row[2].scatter(r.x[order, 0] * 1e3, r.x[order, 2] * 1e3, c=r.damage[order], s=3 if len(r.x) < 10000 else 0.6,
                       norm=norm, cmap=cmap, linewidths=0)
        row[2].set_xlim(-lim, lim)
        row[2].set_ylim(-lim, lim)
        row[2].set_facecolor("#d0d0d0")
        sel, zv = nearest_layer(r.X[:, 2], 0.0)
        ix = np.rint((r.X[sel, 0] - r.X[sel, 0].min()) / a).astype(int)
        iy = np.rint((r.X[sel, 1] - r.X[sel, 1].min()) / a).astype(int)
        img = np.full((iy.max() + 1, ix.max() + 1), np.nan)
        img[iy, ix] = r.damage[sel]
        ext = [1e3 * v for v in (r.X[sel, 0].min() - a / 2, r.X[sel, 0].max() + a / 2, r.X[sel, 1].min() - a / 2,
                                 r.X[sel, 1].max() + a / 2)]
        im = row[3].imshow(img, origin="lower", extent=ext, norm=norm, cmap=cmap)
        row[3].set_title("z = %.2f mm (projectile enters at the top)" % (zv * 1e3), fontsize=8)
        row[0].set_ylabel("%s\n%s\nz (mm)" % (r.label, "%d particles" % len(r.x)), fontsize=9)
        for ax in row[:3]:
            ax.set_aspect("equal")
        row[3].set_aspect("equal")
        row[3].set_ylabel("y (mm)")
        for ax in row:
            ax.set_xlabel("x (mm)")
            ax.tick_params(labelsize=7)
        row[0].set_title("broken %.1f %% of the bonds, %d fragment(s) (py)" % (100 * r.broken / r.bonds, r.fragments),
                         fontsize=8)
    for ax, c in zip(axes[0], cols):
        ax.set_title(c + ("\n" + ax.get_title() if ax.get_title() else ""), fontsize=9)
    cax = fig.add_axes([0.92, 0.3, 0.012, 0.4])
    fig.colorbar(im, cax=cax, label="damage (broken fraction of bonds)")
    fig.suptitle(title, fontsize=11)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print("figure: %s" % path)


def history(runs, path, title):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 5.5))
    colours = plt.get_cmap("tab20").colors
    for i, r in enumerate(runs):
        t, b = zip(*r.history)
        ax.plot(1e6 * np.array(t), 100 * np.array(b), "-o" if r.code == "lammps" else "--s", ms=3,
                color=colours[(2 * i) % 20 if i < 10 else (2 * i + 1) % 20], lw=2 if r.code == "lammps" else 1.2,
                label="%s: %.1f %%" % (r.label, 100 * b[-1]))
    ax.set_xlabel("t (us)")
    ax.set_ylabel("broken bonds (% of the bond pairs)")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print("figure: %s" % path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("penetration")
    p.add_argument("--lammps")
    p.add_argument("--shard")
    p.add_argument("--radius", type=float, required=True)
    p.add_argument("--y0", type=float, required=True)
    p.add_argument("--vy", type=float, required=True)
    p.add_argument("--dt", type=float)
    p = sub.add_parser("analyse")
    p.add_argument("--manifest", required=True)
    p.add_argument("--table", required=True)
    p.add_argument("--figure", action="append", default=[], help="GROUP=PNG: damage maps of the runs of GROUP")
    p.add_argument("--history", action="append", default=[],
                   help="GROUP=PNG: broken fraction against time of the runs of GROUP and GROUP+")
    p.add_argument("--link", type=float, default=1.5, help="fragment link distance in spacings")
    args = ap.parse_args()

    if args.cmd == "penetration":
        if args.lammps:
            if args.dt is None:
                die("--lammps needs --dt")
            frames = [(s * args.dt, x) for s, _, x, _ in lammps_frames(args.lammps)]
        elif args.shard:
            frames = [(fr["time"], fr["x"]) for fr in (shard_frame(p, ()) for p in shard_files(args.shard))]
        else:
            die("penetration needs --lammps DUMP or --shard DIR")
        m, mx, k, df = penetration(frames, args.radius, args.y0, args.vy)
        print("%.6e %.6e %d %.6e" % (m, mx, k, df))
        return

    runs = []
    for line in open(args.manifest):
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.rstrip("\n").split("\t")
        if len(cols) != 11:
            die("%s: %d columns in '%s', expected 11" % (args.manifest, len(cols), line.strip()))
        print("reading %s ..." % cols[1], file=sys.stderr)
        r = Run(cols)
        measure(r, args.link)
        runs.append(r)
    table(runs, args.link, args.table)
    for spec in args.figure:
        group, _, png = spec.partition("=")
        sel = [r for r in runs if r.group == group]
        if not sel:
            die("no runs in group '%s'" % group)
        figure(sel, png, "LAMMPS examples/peri (peri/pmb + fix indent) and Shard, spacing %s mm, t = %.0f us"
               % (group, 1e6 * sel[0].steps * sel[0].dt))
    for spec in args.history:
        group, _, png = spec.partition("=")
        sel = [r for r in runs if r.group in (group, group + "+")]
        if not sel:
            die("no runs in group '%s'" % group)
        history(sel, png, "LAMMPS examples/peri and Shard, spacing %s mm: bonds broken against time" % group)


if __name__ == "__main__":
    main()
