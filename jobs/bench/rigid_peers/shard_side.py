#!/usr/bin/env python3
"""Shard's side of the rigid-body benchmark (jobs/bench/rigid_peers.sh): the scene file of a benchmark scene, and
the figures of a run, with the definitions of scene.h / scene.c, so that Shard's row reads like the engines'.

  shard_side.py scene   SCENE SIZE T DT ITERATIONS WALL TILT SPIN EVERY SPACING OUTDIR  > scene.yaml
  shard_side.py figures SCENE SIZE T DT ITERATIONS WALL TILT SPIN EVERY SPACING OUTDIR LOG

scene: the same cubes (side 0.1 m, 1 kg, friction 0.5, restitution 0), layout, planes, step and number of steps
as scene.c builds for the engine programs, as `kind: rigid` boxes sampled at SPACING (the particles ride along;
no deformable body touches them here), `rigid: {iterations: ITERATIONS}` (the most per step; Shard stops earlier
at its tolerance), and output every EVERY steps (the poses under /frames).  Shard's box shape is axis-aligned, so
the pour must have TILT = 0 (a SPIN replaces the tilt).

figures: reads OUTDIR's output files and Shard's end report LOG and prints the engines' key=value lines and CSV
row (scene.c, peer_report_figures): the pose figures (floor, walls, sink, the cubes' overlap) from the files after
step 0 (the engines measure after the same steps with sample=EVERY), drift, kinetic energy and cubes outside the
container from the last file; steps/s from the loop time less the I/O phase (the engines time their step calls
only); contacts, iterations and the last relative impulse change from the report.
Needs numpy and h5py (Debian: python3-numpy python3-h5py).
"""
import glob
import math
import os
import re
import sys

# scene.h
CUBE_SIDE = 0.1
DENSITY = 1000.0
CUBE_MASS = DENSITY * CUBE_SIDE ** 3
CUBE_INERTIA = CUBE_MASS * CUBE_SIDE ** 2 / 6.0
FRICTION = 0.5
GRAVITY_Z = -9.81
PYRAMID_PITCH = 0.105
POUR_SPACING = 0.15
POUR_Z0 = 0.3
ANGLE_PRIME = 7919


def fail(msg):
    sys.stderr.write("error: %s\n" % msg)
    sys.exit(1)


class Scene:
    def __init__(self, argv):
        if len(argv) < 11:
            fail("expected SCENE SIZE T DT ITERATIONS WALL TILT SPIN EVERY SPACING OUTDIR")
        self.name = argv[0]
        if self.name not in ("pyramid", "pour"):
            fail("unknown scene '%s'" % self.name)
        self.size = int(argv[1])
        self.t_end = float(argv[2])
        self.dt = float(argv[3])
        self.iterations = int(argv[4])
        self.wall = float(argv[5])
        self.tilt = float(argv[6])
        self.spin = float(argv[7])
        self.every = int(argv[8])
        self.spacing = float(argv[9])
        self.outdir = argv[10]
        self.steps = int(math.floor(self.t_end / self.dt + 0.5))  # lround
        if self.steps < 1:
            fail("T / DT gives no step")
        self.x0, self.w0 = [], []
        if self.name == "pyramid":
            rows = self.size
            for k in range(rows):
                in_row = rows - k
                for j in range(in_row):
                    self.x0.append(((j - 0.5 * (in_row - 1)) * PYRAMID_PITCH, 0.0, 0.5 * CUBE_SIDE + CUBE_SIDE * k))
                    self.w0.append((0.0, 0.0, 0.0))
        else:
            if self.tilt != 0:
                fail("pour: Shard's boxes start axis-aligned (its box shape has no orientation): use TILT=0 "
                     "(and a SPIN) to compare Shard")
            n, g = self.size, 1
            while g ** 3 < n:
                g += 1
            norm = math.sqrt(14.0)
            for i in range(n):
                ix, iy, iz = i % g, (i // g) % g, i // (g * g)
                self.x0.append(((ix - 0.5 * (g - 1)) * POUR_SPACING, (iy - 0.5 * (g - 1)) * POUR_SPACING,
                                POUR_Z0 + iz * POUR_SPACING))
                frac = ((i * ANGLE_PRIME) % 1000) / 1000.0
                self.w0.append(tuple(self.spin * frac * a / norm for a in (1.0, 2.0, 3.0)))
            reach = max(max(abs(c[0]), abs(c[1])) for c in self.x0) + 0.5 * CUBE_SIDE
            if reach >= self.wall:
                fail("pour: the grid reaches +-%.4g m, beyond the walls at +-%.4g m" % (reach, self.wall))
        self.count = len(self.x0)


def num(v):
    return repr(float(v))


def vec(v):
    return "[" + ", ".join(num(c) for c in v) + "]"


def write_scene(s):
    h = 0.5 * CUBE_SIDE
    out = sys.stdout
    what = ("%d rows (%d cubes)" % (s.size, s.count)) if s.name == "pyramid" else \
        ("%d cubes into +-%g m, spin up to %g rad/s" % (s.count, s.wall, s.spin))
    out.write("# Rigid-body benchmark (jobs/bench/rigid_peers.sh): %s, %s, %g s\n" % (s.name, what, s.t_end))
    out.write("run: {steps: %d, dt: %s, gravity: [0, 0, %s], output_dir: %s}\n" %
              (s.steps, num(s.dt), num(GRAVITY_Z), s.outdir))
    out.write("materials:\n")
    out.write("  cube: {density: %s, E: 1.0e8, nu: 0.3, contact: {friction: %s, restitution: 0}}\n" %
              (num(DENSITY), num(FRICTION)))
    out.write("rigid: {iterations: %d}\n" % s.iterations)
    out.write("output: {every: %d, fields: []}\n" % s.every)
    out.write("obstacles:\n")
    planes = [("floor", (0, 0, 0), (0, 0, 1))]
    if s.name == "pour":
        w = s.wall
        planes += [("wall_xm", (-w, 0, 0), (1, 0, 0)), ("wall_xp", (w, 0, 0), (-1, 0, 0)),
                   ("wall_ym", (0, -w, 0), (0, 1, 0)), ("wall_yp", (0, w, 0), (0, -1, 0))]
    for name, p, n in planes:
        out.write("  - {name: %s, plane: {point: %s, normal: %s}, friction: %s, restitution: 0}\n" %
                  (name, vec(p), vec(n), num(FRICTION)))
    out.write("bodies:\n")
    for i, (c, w) in enumerate(zip(s.x0, s.w0)):
        lo = [c[k] - h for k in range(3)]
        hi = [c[k] + h for k in range(3)]
        out.write("  - {name: c%d, kind: rigid, material: cube, shape: {box: {min: %s, max: %s}}, spacing: %s%s}\n" %
                  (i, vec(lo), vec(hi), num(s.spacing),
                   (", angular_velocity: %s" % vec(w)) if any(w) else ""))


# ---- figures ---------------------------------------------------------------------------------------------------

def quat_matrices(np, q):
    """Rotation matrices (n, 3, 3) of unit quaternions (n, 4) stored (w, x, y, z)."""
    q = q / np.linalg.norm(q, axis=1)[:, None]
    w, x, y, z = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
    R = np.empty((len(q), 3, 3))
    R[:, 0, 0] = 1 - 2 * (y * y + z * z)
    R[:, 0, 1] = 2 * (x * y - w * z)
    R[:, 0, 2] = 2 * (x * z + w * y)
    R[:, 1, 0] = 2 * (x * y + w * z)
    R[:, 1, 1] = 1 - 2 * (x * x + z * z)
    R[:, 1, 2] = 2 * (y * z - w * x)
    R[:, 2, 0] = 2 * (x * z - w * y)
    R[:, 2, 1] = 2 * (y * z + w * x)
    R[:, 2, 2] = 1 - 2 * (x * x + y * y)
    return R


def boxes_overlap(np, c, E):
    """The largest overlap of two cubes (scene.c, peer_box_overlap): centres c (n, 3), edge directions as the
    columns of E (n, 3, 3); pairs whose bounding spheres meet; per pair the smallest projection overlap over the
    15 separating axes, 0 when one separates them."""
    h = 0.5 * CUBE_SIDE
    reach = math.sqrt(3.0) * CUBE_SIDE
    n = len(c)
    if n < 2:
        return 0.0
    i, j = np.triu_indices(n, 1)
    d = c[j] - c[i]
    near = np.einsum("pk,pk->p", d, d) < reach * reach
    i, j, T = i[near], j[near], d[near]
    if len(i) == 0:
        return 0.0
    A = np.transpose(E[i], (0, 2, 1))  # rows: edge directions of the first cube
    B = np.transpose(E[j], (0, 2, 1))
    axes = [A[:, k] for k in range(3)] + [B[:, k] for k in range(3)]
    valid = [np.ones(len(i), bool)] * 6
    for a in range(3):
        for b in range(3):
            cr = np.cross(A[:, a], B[:, b])
            ln = np.linalg.norm(cr, axis=1)
            ok = ln >= 1e-6  # parallel edges: the face normals cover them
            axes.append(cr / np.where(ok, ln, 1.0)[:, None])
            valid.append(ok)
    depth = np.full(len(i), np.inf)
    separated = np.zeros(len(i), bool)
    for L, ok in zip(axes, valid):
        ra = np.abs(np.einsum("pkr,pr->pk", A, L)).sum(axis=1)
        rb = np.abs(np.einsum("pkr,pr->pk", B, L)).sum(axis=1)
        overlap = h * (ra + rb) - np.abs(np.einsum("pr,pr->p", T, L))
        separated |= ok & (overlap <= 0)
        depth = np.where(ok, np.minimum(depth, overlap), depth)
    depth = np.where(separated, 0.0, depth)
    return float(depth.max())


def report_field(text, pattern, group=1, conv=float, default=None):
    m = None
    for m in re.finditer(pattern, text, re.M):
        pass
    if m is None:
        return default
    return conv(m.group(group))


def phase_row(text, name):
    """(avg, max) seconds of a row of the end report's timing table."""
    m = re.search(r"^%s\s*\|\s*(\S+)\s*\|\s*(\S+)\s*\|\s*(\S+)\s*\|\s*\S+\s*\|\s*\S+\s*\|\s*(\S+)" % re.escape(name),
                  text, re.M)
    if not m:
        return None
    return float(m.group(2)), float(m.group(3)), float(m.group(4))


def figures(s, log):
    try:
        import numpy as np
        import h5py
    except ImportError as e:
        fail("%s: apt-get install python3-numpy python3-h5py" % e)
    text = open(log, encoding="utf-8", errors="replace").read()
    files = []
    for f in glob.glob(os.path.join(s.outdir, "particles_*.h5")):
        m = re.search(r"particles_(\d+)\.h5$", f)
        if m:
            files.append((int(m.group(1)), f))
    files.sort()
    if not files or files[0][0] != 0:
        fail("no output file of step 0 in %s" % s.outdir)
    h = 0.5 * CUBE_SIDE
    x0 = np.array(s.x0)

    def load(path):
        with h5py.File(path, "r") as f:
            g = f["frames"]
            order = np.argsort(g["body"][...])
            data = {k: g[k][...][order] for k in ("position", "orientation", "velocity", "angular_velocity")}
        if len(data["position"]) != s.count:
            fail("%s holds %d bodies, the scene %d" % (path, len(data["position"]), s.count))
        return data

    first = load(files[0][1])
    R0 = quat_matrices(np, first["orientation"])  # the principal frame at the start; the cube's edges are the axes
    floor = wall = sink = box = 0.0
    observed = 0
    status = "ok"
    diverged_at = None
    last = first
    for step, path in files[1:]:
        d = load(path)
        last = d
        observed += 1
        c = d["position"]
        if not np.all(np.isfinite(c)) or not np.all(np.isfinite(d["orientation"])):
            status, diverged_at = "diverged", step
            break
        E = quat_matrices(np, d["orientation"]) @ np.transpose(R0, (0, 2, 1))  # columns: the edges in the world
        ext = h * np.abs(E).sum(axis=2)  # half extent along each world axis
        low = c[:, 2] - ext[:, 2]
        floor = max(floor, float((-low).max()))
        if s.name == "pyramid":
            sink = max(sink, float(((x0[:, 2] - h) - low).max()))
        else:
            wall = max(wall, float((np.abs(c[:, 0]) + ext[:, 0] - s.wall).max()),
                       float((np.abs(c[:, 1]) + ext[:, 1] - s.wall).max()))
        box = max(box, boxes_overlap(np, c, E))
    c, v, w = last["position"], last["velocity"], last["angular_velocity"]
    ke = float(0.5 * CUBE_MASS * (v * v).sum() + 0.5 * CUBE_INERTIA * (w * w).sum())
    drift = float(np.sqrt(((c - x0) ** 2).sum(axis=1)).max())
    left = int((~((np.abs(c[:, 0]) < s.wall) & (np.abs(c[:, 1]) < s.wall) & (c[:, 2] >= 0))).sum())

    loop = report_field(text, r"^Loop time of (\S+) s on (\d+) rank")
    ranks = report_field(text, r"^Loop time of (\S+) s on (\d+) rank", 2, int)
    steps_done = report_field(text, r"^Loop time of \S+ s on \d+ rank\(s\) for (\d+) steps", 1, int)
    particles = report_field(text, r"for \d+ steps with (\d+) particles", 1, int)
    if loop is None or steps_done is None:
        fail("no 'Loop time' line in %s" % log)
    io = phase_row(text, "I/O")
    rigid = phase_row(text, "Rigid")
    io_s = io[1] if io else 0.0
    engine_s = loop - io_s
    contacts = report_field(text, r"contacts at the end (\d+)", 1, int)
    contacts_largest = report_field(text, r"contacts at the end \d+, largest (\d+)", 1, int)
    it_mean = report_field(text, r"iterations per step mean ([0-9.eE+-]+)")
    it_max = report_field(text, r"iterations per step mean [0-9.eE+-]+, largest (\d+)", 1, int)
    residual = report_field(text, r"last relative change ([0-9.eE+-]+|nan|inf)", 1, str)
    state_hash = report_field(text, r"^State hash: (\S+)", 1, str)
    version = os.environ.get("SHARD_VERSION", "-")  # shard --version, less "shard "

    def opt(v, fmt, none="-"):
        return none if v is None else fmt % v

    sps = steps_done / engine_s if engine_s > 0 else 0.0
    pyramid = s.name == "pyramid"
    lines = [
        ("engine", "shard"), ("version", version), ("scene", s.name),
        ("rows" if pyramid else "n", s.size), ("bodies", s.count), ("particles", opt(particles, "%d")),
        ("spacing_m", "%g" % s.spacing), ("t_end_s", "%g" % s.t_end), ("dt_s", "%g" % s.dt), ("steps", s.steps),
        ("iterations", s.iterations), ("sample_every", s.every), ("ranks", ranks), ("status", status),
    ]
    if diverged_at is not None:
        lines.append(("diverged_at_step", diverged_at))
    lines += [
        ("steps_done", steps_done), ("loop_s", "%.3f" % loop), ("io_s", "%.3f" % io_s),
        ("wall_s", "%.3f" % engine_s), ("steps_per_s", "%.2f" % sps),
        ("rigid_s", opt(rigid[0] if rigid else None, "%.3f")),
        ("rigid_share_pct", opt(rigid[2] if rigid else None, "%.1f")),
        ("contacts", opt(contacts, "%d")), ("contacts_largest", opt(contacts_largest, "%d")),
        ("iterations_mean", opt(it_mean, "%g")), ("iterations_max", opt(it_max, "%d")),
        ("residual", residual or "-"), ("state_hash", state_hash or "-"), ("observed", observed),
        ("pen_contact_mm", "-"), ("pen_floor_mm", "%.4f" % (1e3 * floor)), ("pen_box_mm", "%.4f" % (1e3 * box)),
    ]
    if pyramid:
        lines += [("sink_mm", "%.4f" % (1e3 * sink)), ("drift_mm", "%.4f" % (1e3 * drift))]
    else:
        lines += [("pen_wall_mm", "%.4f" % (1e3 * max(0.0, wall))), ("left", left)]
    lines.append(("ke_j", "%.6g" % ke))
    for k, v in lines:
        print("%s=%s" % (k, v))
    print("csv=%s" % ",".join(str(x) for x in [
        "shard", version, s.name, s.size, s.count, "%g" % s.t_end, "%g" % s.dt, s.iterations, steps_done,
        "%.3f" % engine_s, "%.2f" % sps, opt(contacts, "%d", ""), "", "", "%.4f" % (1e3 * floor),
        "" if pyramid else "%.4f" % (1e3 * max(0.0, wall)), "%.4f" % (1e3 * box),
        "%.4f" % (1e3 * sink) if pyramid else "", "%.4f" % (1e3 * drift) if pyramid else "", "%.6g" % ke,
        "" if pyramid else left, status, ranks, opt(it_mean, "%g", ""), residual or "", s.every,
        "%g" % s.tilt, "%g" % s.spin]))
    return 0 if status == "ok" else 3


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        sys.stdout.write(__doc__)
        return 0 if len(argv) >= 2 else 1
    if argv[1] == "scene":
        write_scene(Scene(argv[2:]))
        return 0
    if argv[1] == "figures":
        if len(argv) < 14:
            fail("figures: expected the scene's arguments and LOG")
        return figures(Scene(argv[2:13]), argv[13])
    fail("unknown command '%s' (scene, figures)" % argv[1])
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
