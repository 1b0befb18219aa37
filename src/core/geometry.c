/* Geometry (core): shape inside tests and bounds, obstacle distances (see geometry.h). */
#include "shard/geometry.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Switches without a default: a kind added to the enums and not named here is a compiler warning (-Wswitch). */
const char *shard_shape_name(shard_shape_kind kind)
{
    switch (kind) {
    case SHARD_SHAPE_BOX:
        return "box";
    case SHARD_SHAPE_SPHERE:
        return "sphere";
    case SHARD_SHAPE_CYLINDER:
        return "cylinder";
    case SHARD_SHAPE_MESH:
        return "mesh";
    case SHARD_SHAPE_GRID:
        return "grid";
    }
    return "?";
}

const char *shard_obstacle_name(shard_obstacle_kind kind)
{
    switch (kind) {
    case SHARD_OBSTACLE_PLANE:
        return "plane";
    case SHARD_OBSTACLE_SPHERE:
        return "sphere";
    case SHARD_OBSTACLE_BOX:
        return "box";
    }
    return "?";
}

int shard_shape_contains(const shard_shape *s, const double p[3])
{
    switch (s->kind) {
    case SHARD_SHAPE_BOX:
        /* Half-open, so a lattice point on a face shared by two boxes belongs to exactly one of them. */
        for (int d = 0; d < 3; d++)
            if (!(p[d] >= s->min[d] && p[d] < s->max[d]))
                return 0;
        return 1;
    case SHARD_SHAPE_SPHERE: {
        double r2 = 0;
        for (int d = 0; d < 3; d++)
            r2 += (p[d] - s->center[d]) * (p[d] - s->center[d]);
        return r2 < s->radius * s->radius;
    }
    case SHARD_SHAPE_CYLINDER: {
        double axis[3], rel[3], len2 = 0, t = 0;
        for (int d = 0; d < 3; d++) {
            axis[d] = s->p1[d] - s->p0[d];
            rel[d] = p[d] - s->p0[d];
            len2 += axis[d] * axis[d];
            t += rel[d] * axis[d];
        }
        if (!(len2 > 0))
            return 0;
        /* t is the position along the axis as a fraction of its length: half-open [0, 1) like the box. */
        t /= len2;
        if (!(t >= 0 && t < 1))
            return 0;
        double r2 = 0;
        for (int d = 0; d < 3; d++) {
            double q = rel[d] - t * axis[d];
            r2 += q * q;
        }
        return r2 < s->radius * s->radius;
    }
    case SHARD_SHAPE_MESH:
    case SHARD_SHAPE_GRID:
        return 0;
    }
    return 0;
}

void shard_shape_bounds(const shard_shape *s, double lo[3], double hi[3])
{
    switch (s->kind) {
    case SHARD_SHAPE_BOX:
        memcpy(lo, s->min, sizeof s->min), memcpy(hi, s->max, sizeof s->max);
        break;
    case SHARD_SHAPE_SPHERE:
        for (int k = 0; k < 3; k++)
            lo[k] = s->center[k] - s->radius, hi[k] = s->center[k] + s->radius;
        break;
    case SHARD_SHAPE_CYLINDER: {
        double a[3] = {s->p1[0] - s->p0[0], s->p1[1] - s->p0[1], s->p1[2] - s->p0[2]};
        double L = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
        for (int k = 0; k < 3; k++) {
            double ak = a[k] / L, e = s->radius * sqrt(fmax(0.0, 1.0 - ak * ak));
            lo[k] = fmin(s->p0[k], s->p1[k]) - e;
            hi[k] = fmax(s->p0[k], s->p1[k]) + e;
        }
        break;
    }
    case SHARD_SHAPE_GRID:
        for (int k = 0; k < 3; k++) {
            double a = s->p0[k], b = a + s->u[k], c = a + s->v[k], d = b + s->v[k];
            lo[k] = fmin(fmin(a, b), fmin(c, d));
            hi[k] = fmax(fmax(a, b), fmax(c, d));
        }
        break;
    default:
        lo[0] = lo[1] = lo[2] = hi[0] = hi[1] = hi[2] = 0.0;
    }
}

double shard_shape_surface(const shard_shape *s, const double p[3], double n[3])
{
    n[0] = n[1] = n[2] = 0.0;
    switch (s->kind) {
    case SHARD_SHAPE_BOX: {
        double best = INFINITY;
        for (int k = 0; k < 3; k++) {
            double lo = p[k] - s->min[k], hi = s->max[k] - p[k];
            if (lo < best)
                best = lo, n[0] = n[1] = n[2] = 0.0, n[k] = -1.0;
            if (hi < best)
                best = hi, n[0] = n[1] = n[2] = 0.0, n[k] = 1.0;
        }
        return best;
    }
    case SHARD_SHAPE_SPHERE: {
        double d[3] = {p[0] - s->center[0], p[1] - s->center[1], p[2] - s->center[2]};
        double r = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        if (r > 0.0)
            n[0] = d[0] / r, n[1] = d[1] / r, n[2] = d[2] / r;
        else
            n[2] = 1.0;
        return s->radius - r;
    }
    case SHARD_SHAPE_CYLINDER: {
        double a[3] = {s->p1[0] - s->p0[0], s->p1[1] - s->p0[1], s->p1[2] - s->p0[2]};
        double L = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
        if (!(L > 0.0))
            return 0.0;
        for (int k = 0; k < 3; k++)
            a[k] /= L;
        double rel[3] = {p[0] - s->p0[0], p[1] - s->p0[1], p[2] - s->p0[2]};
        double t = rel[0] * a[0] + rel[1] * a[1] + rel[2] * a[2], q[3], r = 0.0;
        for (int k = 0; k < 3; k++) {
            q[k] = rel[k] - t * a[k];
            r += q[k] * q[k];
        }
        r = sqrt(r);
        double side = s->radius - r, best = side;
        if (r > 0.0)
            n[0] = q[0] / r, n[1] = q[1] / r, n[2] = q[2] / r;
        if (t < best)
            best = t, n[0] = -a[0], n[1] = -a[1], n[2] = -a[2];
        if (L - t < best)
            best = L - t, n[0] = a[0], n[1] = a[1], n[2] = a[2];
        return best;
    }
    case SHARD_SHAPE_MESH:
    case SHARD_SHAPE_GRID:
        break;
    }
    return 0.0;
}

double shard_obstacle_distance(const shard_obstacle_def *o, double t, const double p[3], double n[3])
{
    switch (o->kind) {
    case SHARD_OBSTACLE_PLANE: {
        double q[3] = {o->point[0] + o->velocity[0] * t, o->point[1] + o->velocity[1] * t,
                       o->point[2] + o->velocity[2] * t};
        n[0] = o->normal[0], n[1] = o->normal[1], n[2] = o->normal[2];
        return (p[0] - q[0]) * n[0] + (p[1] - q[1]) * n[1] + (p[2] - q[2]) * n[2];
    }
    case SHARD_OBSTACLE_SPHERE: {
        double d[3];
        for (int k = 0; k < 3; k++)
            d[k] = p[k] - (o->center[k] + o->velocity[k] * t);
        double r = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        if (r > 0.0)
            n[0] = d[0] / r, n[1] = d[1] / r, n[2] = d[2] / r;
        else
            n[0] = 0.0, n[1] = 0.0, n[2] = 1.0;
        return r - o->radius;
    }
    case SHARD_OBSTACLE_BOX:
    default: {
        double lo[3], hi[3], q[3], out2 = 0.0, inside = -INFINITY;
        int face = 0;
        for (int k = 0; k < 3; k++) {
            lo[k] = o->min[k] + o->velocity[k] * t;
            hi[k] = o->max[k] + o->velocity[k] * t;
            q[k] = p[k] < lo[k] ? lo[k] : (p[k] > hi[k] ? hi[k] : p[k]);
            out2 += (p[k] - q[k]) * (p[k] - q[k]);
        }
        if (out2 > 0.0) {
            double r = sqrt(out2);
            for (int k = 0; k < 3; k++)
                n[k] = (p[k] - q[k]) / r;
            return r;
        }
        /* inside: the nearest face decides the normal */
        for (int k = 0; k < 3; k++) {
            double dl = lo[k] - p[k], dh = p[k] - hi[k]; /* both <= 0 */
            if (dl > inside)
                inside = dl, face = -(k + 1);
            if (dh > inside)
                inside = dh, face = k + 1;
        }
        n[0] = n[1] = n[2] = 0.0;
        n[abs(face) - 1] = face > 0 ? 1.0 : -1.0;
        return inside;
    }
    }
}

/* ------------------------------------------------------------------------------------------------------------
 * Exact 2-D orientation (geometry.h).  A floating-point filter (Shewchuk's orient2d stage A bound) settles almost
 * every call; the rest are evaluated exactly as a sum of six products, each split into two doubles by fma and
 * summed into a non-overlapping expansion whose largest component carries the sign.
 * ---------------------------------------------------------------------------------------------------------- */

static void shard_geom_two_sum(double a, double b, double *x, double *y)
{
    double s = a + b;
    double bv = s - a;
    double av = s - bv;
    *x = s;
    *y = (a - av) + (b - bv);
}

/* Adds b to the expansion e[0..m-1] (increasing magnitude, non-overlapping) in place, dropping zeros; returns
 * the new length (at most m + 1). */
static int shard_geom_grow(double *e, int m, double b)
{
    double q = b;
    int k = 0;
    for (int i = 0; i < m; i++) {
        double h;
        shard_geom_two_sum(q, e[i], &q, &h);
        if (h != 0.0)
            e[k++] = h;
    }
    if (q != 0.0 || k == 0)
        e[k++] = q;
    return k;
}

static int shard_geom_orient2d_exact(double ax, double ay, double bx, double by, double cx, double cy)
{
    const double f[6][2] = {{ax, by}, {-ax, cy}, {-ay, bx}, {ay, cx}, {bx, cy}, {-by, cx}};
    double e[13];
    int m = 0;
    for (int i = 0; i < 6; i++) {
        double p = f[i][0] * f[i][1];
        double r = fma(f[i][0], f[i][1], -p);
        m = shard_geom_grow(e, m, r);
        m = shard_geom_grow(e, m, p);
    }
    double top = e[m - 1];
    return (top > 0) - (top < 0);
}

int shard_geom_orient2d(double ax, double ay, double bx, double by, double cx, double cy)
{
    const double err_a = (3.0 + 16.0 * 0x1p-53) * 0x1p-53;
    double l = (ax - cx) * (by - cy);
    double r = (ay - cy) * (bx - cx);
    double det = l - r, sum;
    if (l > 0) {
        if (r <= 0)
            return (det > 0) - (det < 0);
        sum = l + r;
    } else if (l < 0) {
        if (r >= 0)
            return (det > 0) - (det < 0);
        sum = -l - r;
    } else {
        /* l is an exact zero (a difference of doubles is 0 only for equal operands), and r's sign is exact. */
        return (det > 0) - (det < 0);
    }
    if (det >= err_a * sum || -det >= err_a * sum)
        return (det > 0) - (det < 0);
    return shard_geom_orient2d_exact(ax, ay, bx, by, cx, cy);
}
