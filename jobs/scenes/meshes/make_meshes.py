#!/usr/bin/env python3
"""Writes the demo scenes' example meshes into this folder (run once; the outputs are committed).

block_with_hole.stl  ASCII STL: the cube [-0.5, 0.5]^3 with a square hole [-0.2, 0.2]^2 through it along z
                     (genus 1, non-convex: exercises the ray-parity sampling), 32 triangles.
icosphere.obj        OBJ: icosahedron subdivided twice (320 triangles, 162 vertices), radius 0.5, centred at 0.

Both are closed and counter-clockwise seen from outside, as shard_mesh_check_closed requires.
"""
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def sub(a, b):
    return [a[i] - b[i] for i in range(3)]


def cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def dot(a, b):
    return sum(a[i] * b[i] for i in range(3))


def oriented(tri, outward):
    """The triangle (three points), reversed if its normal does not point along `outward`."""
    n = cross(sub(tri[1], tri[0]), sub(tri[2], tri[0]))
    return tri if dot(n, outward) > 0 else [tri[0], tri[2], tri[1]]


def quad(a, b, c, d, outward):
    return [oriented([a, b, c], outward), oriented([a, c, d], outward)]


def block_with_hole():
    o, h = 0.5, 0.2
    outer = [[-o, -o], [o, -o], [o, o], [-o, o]]
    inner = [[-h, -h], [h, -h], [h, h], [-h, h]]
    tris = []
    for z, up in ((o, 1.0), (-o, -1.0)):  # top and bottom: a square ring as four trapezoids
        for i in range(4):
            j = (i + 1) % 4
            tris += quad(outer[i] + [z], outer[j] + [z], inner[j] + [z], inner[i] + [z], [0, 0, up])
    for ring, sign in ((outer, 1.0), (inner, -1.0)):  # outer walls face out, the hole's walls face the axis
        for i in range(4):
            j = (i + 1) % 4
            mid = [(ring[i][0] + ring[j][0]) * sign, (ring[i][1] + ring[j][1]) * sign, 0]
            tris += quad(ring[i] + [-o], ring[j] + [-o], ring[j] + [o], ring[i] + [o], mid)
    with open(os.path.join(HERE, "block_with_hole.stl"), "w") as f:
        f.write("solid block_with_hole\n")
        for t in tris:
            n = cross(sub(t[1], t[0]), sub(t[2], t[0]))
            length = math.sqrt(dot(n, n))
            f.write("  facet normal %g %g %g\n    outer loop\n" % tuple(c / length for c in n))
            for p in t:
                f.write("      vertex %g %g %g\n" % tuple(p))
            f.write("    endloop\n  endfacet\n")
        f.write("endsolid block_with_hole\n")


def icosphere(radius=0.5, levels=2):
    t = (1 + math.sqrt(5)) / 2
    verts = [[-1, t, 0], [1, t, 0], [-1, -t, 0], [1, -t, 0], [0, -1, t], [0, 1, t], [0, -1, -t], [0, 1, -t],
             [t, 0, -1], [t, 0, 1], [-t, 0, -1], [-t, 0, 1]]
    faces = [[0, 11, 5], [0, 5, 1], [0, 1, 7], [0, 7, 10], [0, 10, 11], [1, 5, 9], [5, 11, 4], [11, 10, 2],
             [10, 7, 6], [7, 1, 8], [3, 9, 4], [3, 4, 2], [3, 2, 6], [3, 6, 8], [3, 8, 9], [4, 9, 5], [2, 4, 11],
             [6, 2, 10], [8, 6, 7], [9, 8, 1]]
    verts = [[c / math.sqrt(dot(v, v)) for c in v] for v in verts]
    for _ in range(levels):
        cache = {}

        def midpoint(a, b):
            key = (min(a, b), max(a, b))
            if key not in cache:
                m = [(verts[a][i] + verts[b][i]) / 2 for i in range(3)]
                length = math.sqrt(dot(m, m))
                verts.append([c / length for c in m])
                cache[key] = len(verts) - 1
            return cache[key]

        new = []
        for a, b, c in faces:
            ab, bc, ca = midpoint(a, b), midpoint(b, c), midpoint(c, a)
            new += [[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]
        faces = new
    for f in faces:  # outward = away from the centre
        p = [verts[i] for i in f]
        assert dot(cross(sub(p[1], p[0]), sub(p[2], p[0])), p[0]) > 0
    with open(os.path.join(HERE, "icosphere.obj"), "w") as f:
        f.write("# icosphere: icosahedron subdivided %d times, radius %g, centred at the origin\n" % (levels, radius))
        f.write("o icosphere\n")
        for v in verts:
            f.write("v %.9f %.9f %.9f\n" % tuple(radius * c for c in v))
        for a, b, c in faces:
            f.write("f %d %d %d\n" % (a + 1, b + 1, c + 1))


if __name__ == "__main__":
    block_with_hole()
    icosphere()
