#!/usr/bin/env python3
"""Writes tshirt.obj: a T-shirt-like cloth mesh (the shirt scene of Manén's cloth simulator, 2010), two T-shaped panels (front and back)
sewn along the shoulders, the sides and under the sleeves, open at the neck, the waist and the sleeve ends.

The T lies in the x-y plane (x across, y up the shirt), cells of SPACING; the front panel is at z = +D, the back
at z = -D, and the seam vertices (shared by both panels) at z = 0.  Each cell is two triangles, oriented so that
the surface's normals point out of the shirt (the front's towards +z, the back's towards -z).

usage: make_tshirt.py [OUT]   (default: tshirt.obj next to this script)
"""
import os
import sys

SPACING = 0.025
D = 0.02
TORSO = (0.25, 0.6)        # half width, height
SLEEVE = (0.45, 0.45)      # half span, height of the sleeves' underside
NECK = 0.1                 # half width of the neck opening


def inside(cx, cy):
    """Whether a cell centre lies in the T."""
    if abs(cx) < TORSO[0] and 0 < cy < TORSO[1]:
        return True
    return abs(cx) < SLEEVE[0] and SLEEVE[1] < cy < TORSO[1]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "tshirt.obj")
    nx, ny = round(2 * SLEEVE[0] / SPACING), round(TORSO[1] / SPACING)
    x0 = -SLEEVE[0]
    cells = {(i, j) for i in range(nx) for j in range(ny)
             if inside(x0 + (i + 0.5) * SPACING, (j + 0.5) * SPACING)}
    # boundary edges: a cell side with no cell across it; open where the shirt has an opening
    sewn = set()
    for (i, j) in cells:
        for (a, b, across) in (((i, j), (i + 1, j), (i, j - 1)), ((i + 1, j), (i + 1, j + 1), (i + 1, j)),
                               ((i + 1, j + 1), (i, j + 1), (i, j + 1)), ((i, j + 1), (i, j), (i - 1, j))):
            if across in cells:
                continue
            xa, ya = x0 + a[0] * SPACING, a[1] * SPACING
            xb, yb = x0 + b[0] * SPACING, b[1] * SPACING
            waist = ya < 1e-9 and yb < 1e-9
            neck = ya > TORSO[1] - 1e-9 and yb > TORSO[1] - 1e-9 and abs(xa + xb) / 2 < NECK
            cuff = abs(abs(xa) - SLEEVE[0]) < 1e-9 and abs(abs(xb) - SLEEVE[0]) < 1e-9
            if not (waist or neck or cuff):
                sewn.add(a), sewn.add(b)
    verts, index = [], {}

    def vertex(p, layer):
        key = (p, 0 if p in sewn else layer)
        if key not in index:
            index[key] = len(verts) + 1
            z = 0.0 if p in sewn else (D if layer > 0 else -D)
            verts.append((x0 + p[0] * SPACING, p[1] * SPACING, z))
        return index[key]

    tris = []
    for (i, j) in sorted(cells):
        a, b, c, d = (i, j), (i + 1, j), (i + 1, j + 1), (i, j + 1)
        for layer in (1, -1):
            va, vb, vc, vd = (vertex(p, layer) for p in (a, b, c, d))
            if layer > 0:
                tris += [(va, vb, vc), (va, vc, vd)]
            else:
                tris += [(va, vc, vb), (va, vd, vc)]
    with open(out, "w") as f:
        f.write("# T-shirt-like cloth: front and back panels sewn at the shoulders, sides and under the sleeves\n")
        f.write("# (jobs/scenes/make_tshirt.py; %d vertices, %d triangles; metres)\n" % (len(verts), len(tris)))
        for v in verts:
            f.write("v %.6f %.6f %.6f\n" % v)
        for t in tris:
            f.write("f %d %d %d\n" % t)
    print("%s: %d vertices, %d triangles" % (out, len(verts), len(tris)))


main()
