/* Collide: contact points of spheres, boxes, cylinders and planes (see collide.h for the methods and the ids).
 *
 * Every pair function takes its shapes in the order sphere, box, cylinder, plane (the lower kind first) and
 * writes normals from the second shape to the first; shard_collide swaps a reversed pair and negates the normals.
 * A point is written as the midpoint of a point on each surface, so the two orders give the same points.
 */
#include "rigid/collide.h"

#include "shard/rotation.h"

#include <math.h>
#include <stdint.h>

static double shard_collide_dot(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void shard_collide_cross(const double a[3], const double b[3], double out[3])
{
    double x = a[1] * b[2] - a[2] * b[1];
    double y = a[2] * b[0] - a[0] * b[2];
    double z = a[0] * b[1] - a[1] * b[0];
    out[0] = x, out[1] = y, out[2] = z;
}

/* out = a + s v */
static void shard_collide_axpy(const double a[3], double s, const double v[3], double out[3])
{
    for (int k = 0; k < 3; k++)
        out[k] = a[k] + s * v[k];
}

/* The three columns of R (the shape's axes in world coordinates). */
static void shard_collide_axes(const double R[9], double ax[3][3])
{
    for (int k = 0; k < 3; k++)
        ax[k][0] = R[k], ax[k][1] = R[3 + k], ax[k][2] = R[6 + k];
}

/* One contact point: p = (pa + pb) / 2 for pa on a's surface and pb on b's. */
static void shard_collide_emit(shard_collide_point *o, const double pa[3], const double pb[3], const double n[3],
                               double depth, uint32_t feature)
{
    for (int k = 0; k < 3; k++) {
        o->p[k] = 0.5 * (pa[k] + pb[k]);
        o->n[k] = n[k];
    }
    o->depth = depth;
    o->feature = feature;
}

static int shard_collide_finite3(const double v[3]) { return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]); }

/* The fields a shape of its kind uses are finite and its sizes >= 0; anything else gives no contact rather than
 * NaN points. */
static int shard_collide_shape_ok(const shard_collide_shape *s)
{
    if (!shard_collide_finite3(s->pos))
        return 0;
    if (s->kind == SHARD_COLLIDE_PLANE)
        return shard_collide_finite3(s->normal);
    for (int k = 0; k < 9; k++)
        if (!isfinite(s->R[k]))
            return 0;
    switch (s->kind) {
    case SHARD_COLLIDE_SPHERE:
        return s->radius >= 0 && isfinite(s->radius);
    case SHARD_COLLIDE_BOX:
        return s->half[0] >= 0 && s->half[1] >= 0 && s->half[2] >= 0 && shard_collide_finite3(s->half);
    case SHARD_COLLIDE_CYLINDER:
        return s->radius >= 0 && isfinite(s->radius) && s->half_height >= 0 && isfinite(s->half_height);
    default:
        return 0;
    }
}

/* The plane's unit normal; 0 when the given normal is zero (no contact then). */
static int shard_collide_plane_normal(const shard_collide_shape *pl, double n[3])
{
    double len = sqrt(shard_collide_dot(pl->normal, pl->normal));
    if (!(len > 0) || !isfinite(len))
        return 0;
    for (int k = 0; k < 3; k++)
        n[k] = pl->normal[k] / len;
    return 1;
}

/* ---- sphere with sphere and plane ---------------------------------------------------------------------------- */

static int shard_collide_sphere_sphere(const shard_collide_shape *a, const shard_collide_shape *b, double margin,
                                       shard_collide_point *out)
{
    double d[3] = {a->pos[0] - b->pos[0], a->pos[1] - b->pos[1], a->pos[2] - b->pos[2]};
    double dist = sqrt(shard_collide_dot(d, d));
    double sep = dist - (a->radius + b->radius); /* the sum first: the same bits in either order */
    if (!(sep <= margin))
        return 0;
    double n[3] = {0, 0, 1}; /* coincident centres (or a distance whose square underflows): any axis will do */
    if (dist > 0)
        for (int k = 0; k < 3; k++)
            n[k] = d[k] / dist;
    double pa[3], pb[3];
    shard_collide_axpy(a->pos, -a->radius, n, pa);
    shard_collide_axpy(b->pos, b->radius, n, pb);
    shard_collide_emit(out, pa, pb, n, -sep, 0);
    return 1;
}

static int shard_collide_sphere_plane(const shard_collide_shape *a, const shard_collide_shape *b, double margin,
                                      shard_collide_point *out)
{
    double n[3];
    if (!shard_collide_plane_normal(b, n))
        return 0;
    double rel[3] = {a->pos[0] - b->pos[0], a->pos[1] - b->pos[1], a->pos[2] - b->pos[2]};
    double h = shard_collide_dot(rel, n); /* height of the centre above the plane */
    double sep = h - a->radius;
    if (!(sep <= margin))
        return 0;
    double pa[3], pb[3];
    shard_collide_axpy(a->pos, -a->radius, n, pa);
    shard_collide_axpy(a->pos, -h, n, pb);
    shard_collide_emit(out, pa, pb, n, -sep, 0);
    return 1;
}

/* ---- sphere with box and cylinder: closest point in the solid's frame ----------------------------------------- */

/* The contact of sphere a with solid b whose surface point closest to a's centre is cl (b's local coordinates),
 * local outward normal nl, separation sep of the two surfaces. */
static int shard_collide_sphere_finish(const shard_collide_shape *a, const shard_collide_shape *b, const double cl[3],
                                       const double nl[3], double sep, double margin, uint32_t feature,
                                       shard_collide_point *out)
{
    if (!(sep <= margin))
        return 0;
    double n[3], pb[3], pa[3];
    shard_mat3_mul_vec(b->R, nl, n);
    shard_mat3_mul_vec(b->R, cl, pb);
    for (int k = 0; k < 3; k++)
        pb[k] += b->pos[k];
    shard_collide_axpy(a->pos, -a->radius, n, pa);
    shard_collide_emit(out, pa, pb, n, -sep, feature);
    return 1;
}

static int shard_collide_sphere_box(const shard_collide_shape *a, const shard_collide_shape *b, double margin,
                                    shard_collide_point *out)
{
    double rel[3] = {a->pos[0] - b->pos[0], a->pos[1] - b->pos[1], a->pos[2] - b->pos[2]}, q[3];
    shard_mat3_tmul_vec(b->R, rel, q);
    const double *h = b->half;
    double cl[3], nl[3] = {0, 0, 0}, sep;
    int code[3], inside = 1;
    for (int k = 0; k < 3; k++) {
        code[k] = q[k] < -h[k] ? 0 : q[k] > h[k] ? 2 : 1;
        cl[k] = code[k] == 0 ? -h[k] : code[k] == 2 ? h[k] : q[k];
        inside &= code[k] == 1;
    }
    if (!inside) {
        double v[3] = {q[0] - cl[0], q[1] - cl[1], q[2] - cl[2]};
        double dist = sqrt(shard_collide_dot(v, v));
        if (dist > 0) {
            for (int k = 0; k < 3; k++)
                nl[k] = v[k] / dist;
        } else { /* |v| underflowed: v is along the first axis the centre is outside of */
            int k = code[0] != 1 ? 0 : code[1] != 1 ? 1 : 2;
            nl[k] = code[k] == 2 ? 1 : -1;
        }
        sep = dist - a->radius;
    } else {
        /* out through the nearest face; a tie goes to the lowest axis, a centre on the mid-plane to the + side */
        int k = 0;
        double gap = h[0] - fabs(q[0]);
        for (int j = 1; j < 3; j++)
            if (h[j] - fabs(q[j]) < gap)
                k = j, gap = h[j] - fabs(q[j]);
        double s = q[k] >= 0 ? 1.0 : -1.0;
        nl[k] = s;
        cl[k] = s * h[k];
        code[k] = s > 0 ? 2 : 0;
        sep = -gap - a->radius;
    }
    uint32_t feature = (uint32_t)(code[0] + 3 * code[1] + 9 * code[2]);
    return shard_collide_sphere_finish(a, b, cl, nl, sep, margin, feature, out);
}

static int shard_collide_sphere_cylinder(const shard_collide_shape *a, const shard_collide_shape *b, double margin,
                                         shard_collide_point *out)
{
    double rel[3] = {a->pos[0] - b->pos[0], a->pos[1] - b->pos[1], a->pos[2] - b->pos[2]}, q[3];
    shard_mat3_tmul_vec(b->R, rel, q);
    double rc = b->radius, hh = b->half_height;
    double rho = sqrt(q[0] * q[0] + q[1] * q[1]);
    double e[3] = {1, 0, 0}; /* radial direction; local x on the axis */
    if (rho > 0)
        e[0] = q[0] / rho, e[1] = q[1] / rho;
    double zs = q[2] >= 0 ? 1.0 : -1.0, az = fabs(q[2]);
    uint32_t cap = zs > 0 ? 1 : 2, rim = zs > 0 ? 3 : 4;
    double side_cl[3] = {rc * e[0], rc * e[1], q[2]}, side_n[3] = {e[0], e[1], 0};
    double cap_cl[3] = {q[0], q[1], zs * hh}, cap_n[3] = {0, 0, zs};
    if (rho <= rc && az <= hh) { /* inside: out through the nearer of side and cap (a tie: the cap) */
        if (rc - rho < hh - az)
            return shard_collide_sphere_finish(a, b, side_cl, side_n, -(rc - rho) - a->radius, margin, 0, out);
        return shard_collide_sphere_finish(a, b, cap_cl, cap_n, -(hh - az) - a->radius, margin, cap, out);
    }
    if (az <= hh)
        return shard_collide_sphere_finish(a, b, side_cl, side_n, rho - rc - a->radius, margin, 0, out);
    if (rho <= rc)
        return shard_collide_sphere_finish(a, b, cap_cl, cap_n, az - hh - a->radius, margin, cap, out);
    double cl[3] = {rc * e[0], rc * e[1], zs * hh};
    double v[3] = {q[0] - cl[0], q[1] - cl[1], q[2] - cl[2]};
    double dist = sqrt(shard_collide_dot(v, v)), nl[3] = {e[0], e[1], 0};
    if (dist > 0)
        for (int k = 0; k < 3; k++)
            nl[k] = v[k] / dist;
    return shard_collide_sphere_finish(a, b, cl, nl, dist - a->radius, margin, rim, out);
}

/* ---- box and cylinder with a plane ---------------------------------------------------------------------------- */

/* Vertex k of a box in world coordinates: local (+-hx, +-hy, +-hz), bit j of k set for the + side of axis j. */
static void shard_collide_box_vertex(const shard_collide_shape *box, int k, double v[3])
{
    double l[3];
    for (int j = 0; j < 3; j++)
        l[j] = (k >> j & 1) ? box->half[j] : -box->half[j];
    shard_mat3_mul_vec(box->R, l, v);
    for (int j = 0; j < 3; j++)
        v[j] += box->pos[j];
}

static int shard_collide_box_plane(const shard_collide_shape *a, const shard_collide_shape *b, double margin,
                                   shard_collide_point *out)
{
    double n[3];
    if (!shard_collide_plane_normal(b, n))
        return 0;
    double v[8][3], s[8];
    for (int k = 0; k < 8; k++) {
        shard_collide_box_vertex(a, k, v[k]);
        double rel[3] = {v[k][0] - b->pos[0], v[k][1] - b->pos[1], v[k][2] - b->pos[2]};
        s[k] = shard_collide_dot(rel, n);
    }
    /* the (at most) 4 deepest within the margin, ties to the lowest index, then listed by index */
    int chosen[8] = {0};
    for (int round = 0; round < 4; round++) {
        int best = -1;
        for (int k = 0; k < 8; k++)
            if (!chosen[k] && s[k] <= margin && (best < 0 || s[k] < s[best]))
                best = k;
        if (best < 0)
            break;
        chosen[best] = 1;
    }
    int count = 0;
    for (int k = 0; k < 8; k++) {
        if (!chosen[k])
            continue;
        double pb[3];
        shard_collide_axpy(v[k], -s[k], n, pb);
        shard_collide_emit(&out[count++], v[k], pb, n, -s[k], (uint32_t)k);
    }
    return count;
}

static int shard_collide_cylinder_plane(const shard_collide_shape *a, const shard_collide_shape *b, double margin,
                                        shard_collide_point *out)
{
    double n[3];
    if (!shard_collide_plane_normal(b, n))
        return 0;
    double ax[3][3];
    shard_collide_axes(a->R, ax);
    double c = shard_collide_dot(ax[2], n);
    double w[3] = {n[0] - c * ax[2][0], n[1] - c * ax[2][1], n[2] - c * ax[2][2]}; /* n within the cap planes */
    double wl = sqrt(shard_collide_dot(w, w));
    int flat = !(wl >= SHARD_COLLIDE_CYL_FLAT);
    int count = 0;
    for (int cap = 0; cap < 2; cap++) {
        double cc[3];
        shard_collide_axpy(a->pos, cap == 0 ? a->half_height : -a->half_height, ax[2], cc);
        for (int k = 0; k < (flat ? 4 : 1); k++) {
            double dir[3];
            for (int j = 0; j < 3; j++)
                dir[j] = flat ? (k & 2 ? -1 : 1) * ax[k & 1][j] : -w[j] / wl; /* +x, +y, -x, -y; or deepest */
            double x[3], pb[3];
            shard_collide_axpy(cc, a->radius, dir, x);
            double rel[3] = {x[0] - b->pos[0], x[1] - b->pos[1], x[2] - b->pos[2]};
            double s = shard_collide_dot(rel, n);
            if (!(s <= margin))
                continue;
            shard_collide_axpy(x, -s, n, pb);
            shard_collide_emit(&out[count++], x, pb, n, -s, (uint32_t)(flat ? 4 * cap + k : 8 + cap));
        }
    }
    return count;
}

/* ---- box with box ---------------------------------------------------------------------------------------------- */

typedef struct shard_collide_obb {
    const double *c; /* centre */
    double ax[3][3]; /* axes (unit columns of R) */
    const double *h; /* half extents */
} shard_collide_obb;

/* Half the extent of the box's projection on the unit axis L. */
static double shard_collide_obb_radius(const shard_collide_obb *o, const double L[3])
{
    return o->h[0] * fabs(shard_collide_dot(o->ax[0], L)) + o->h[1] * fabs(shard_collide_dot(o->ax[1], L)) +
           o->h[2] * fabs(shard_collide_dot(o->ax[2], L));
}

/* Separation of P and Q along the unit axis L (d = Q.c - P.c).  Swapping P and Q negates d (exactly) and swaps
 * the two radii, whose sum is taken first, so the result has the same bits in either order. */
static double shard_collide_obb_sep(const shard_collide_obb *P, const shard_collide_obb *Q, const double d[3],
                                    const double L[3])
{
    return fabs(shard_collide_dot(d, L)) - (shard_collide_obb_radius(P, L) + shard_collide_obb_radius(Q, L));
}

/* Closest points cA + s u and cB + t v of two segments with unit directions u, v and half lengths ea, eb
 * (Ericson 5.1.9, written for centred segments): s = b t - c, t = b s + f minimise the distance (b = u.v,
 * c = u.(cA - cB), f = v.(cA - cB)); the clamped solution is refined by one more pass of each.  Parallel segments
 * (1 - b^2 tiny) start from s = 0. */
static void shard_collide_segments(const double cA[3], const double u[3], double ea, const double cB[3],
                                   const double v[3], double eb, double pA[3], double pB[3])
{
    double r[3] = {cA[0] - cB[0], cA[1] - cB[1], cA[2] - cB[2]};
    double b = shard_collide_dot(u, v), c = shard_collide_dot(u, r), f = shard_collide_dot(v, r);
    double denom = 1 - b * b;
    double s = denom > 1e-12 ? (b * f - c) / denom : 0.0;
    s = fmin(fmax(s, -ea), ea);
    double t = fmin(fmax(b * s + f, -eb), eb);
    s = fmin(fmax(b * t - c, -ea), ea);
    shard_collide_axpy(cA, s, u, pA);
    shard_collide_axpy(cB, t, v, pB);
}

/* Id of the edge of a box along axis i whose other two coordinates have the signs sj (axis i+1) and sk (i+2). */
static uint32_t shard_collide_edge_id(int i, double sj, double sk)
{
    return (uint32_t)(4 * i + (sj > 0 ? 1 : 0) + (sk > 0 ? 2 : 0));
}

/* Edge-edge contact on the axis P.ax[i] x Q.ax[j] (unit L, pointing from P to Q): the edge of P furthest along L
 * and the edge of Q furthest along -L, their closest points pP, pQ and their ids. */
static void shard_collide_edge_contact(const shard_collide_obb *P, int i, const shard_collide_obb *Q, int j,
                                       const double L[3], double pP[3], double pQ[3], uint32_t *idP, uint32_t *idQ)
{
    double cP[3] = {P->c[0], P->c[1], P->c[2]}, cQ[3] = {Q->c[0], Q->c[1], Q->c[2]}, sg[2][3];
    for (int k = 0; k < 3; k++) {
        sg[0][k] = shard_collide_dot(P->ax[k], L) >= 0 ? 1.0 : -1.0;
        sg[1][k] = shard_collide_dot(Q->ax[k], L) > 0 ? -1.0 : 1.0;
        if (k != i)
            shard_collide_axpy(cP, sg[0][k] * P->h[k], P->ax[k], cP);
        if (k != j)
            shard_collide_axpy(cQ, sg[1][k] * Q->h[k], Q->ax[k], cQ);
    }
    shard_collide_segments(cP, P->ax[i], P->h[i], cQ, Q->ax[j], Q->h[j], pP, pQ);
    *idP = shard_collide_edge_id(i, sg[0][(i + 1) % 3], sg[0][(i + 2) % 3]);
    *idQ = shard_collide_edge_id(j, sg[1][(j + 1) % 3], sg[1][(j + 2) % 3]);
}

/* Picks at most 4 of the n points x (depth dep) in the plane of normal nrm: the deepest, the farthest from it, then
 * the points that span the largest triangle with those two on either side (ties: the first).  Writes the picked
 * indices in increasing order to keep[] and returns their number. */
static int shard_collide_reduce(int n, const double x[][3], const double *dep, const double nrm[3], int keep[4])
{
    int i0 = 0;
    for (int k = 1; k < n; k++)
        if (dep[k] > dep[i0])
            i0 = k;
    int i1 = -1;
    double far = -1;
    for (int k = 0; k < n; k++) {
        double v[3] = {x[k][0] - x[i0][0], x[k][1] - x[i0][1], x[k][2] - x[i0][2]};
        double d2 = shard_collide_dot(v, v);
        if (k != i0 && d2 > far)
            i1 = k, far = d2;
    }
    int i2 = -1, i3 = -1;
    double amax = 0, amin = 0;
    double e[3] = {x[i1][0] - x[i0][0], x[i1][1] - x[i0][1], x[i1][2] - x[i0][2]};
    for (int k = 0; k < n; k++) {
        double v[3] = {x[k][0] - x[i0][0], x[k][1] - x[i0][1], x[k][2] - x[i0][2]}, cr[3];
        shard_collide_cross(e, v, cr);
        double area = shard_collide_dot(cr, nrm);
        if (area > amax)
            i2 = k, amax = area;
        if (area < amin)
            i3 = k, amin = area;
    }
    int m = 0, pick[4] = {i0, i1, i2, i3};
    for (int k = 0; k < n; k++)
        for (int j = 0; j < 4; j++)
            if (pick[j] == k) {
                keep[m++] = k;
                break;
            }
    return m;
}

/* Clipping polygon of the face contact: points, their ids (collide.h) and the label of the edge that leaves each
 * (0-3 an incident face edge, 4-7 a reference side plane).  A quad clipped by 4 planes has at most 8 vertices;
 * the room for 16 covers rounding that makes a near-degenerate polygon cross a plane more than twice. */
enum { SHARD_COLLIDE_POLY_MAX = 16 };
typedef struct shard_collide_poly {
    int n;
    double x[SHARD_COLLIDE_POLY_MAX][3];
    int id[SHARD_COLLIDE_POLY_MAX], lab[SHARD_COLLIDE_POLY_MAX];
} shard_collide_poly;

/* Sutherland-Hodgman against one plane: keeps the part with m.(x - o) - off <= 0; plane label 4 + s. */
static void shard_collide_clip(const shard_collide_poly *in, const double m[3], const double o[3], double off, int s,
                               shard_collide_poly *outp)
{
    outp->n = 0;
    for (int k = 0; k < in->n; k++) {
        int kn = (k + 1) % in->n;
        double rp[3] = {in->x[k][0] - o[0], in->x[k][1] - o[1], in->x[k][2] - o[2]};
        double rq[3] = {in->x[kn][0] - o[0], in->x[kn][1] - o[1], in->x[kn][2] - o[2]};
        double dp = shard_collide_dot(m, rp) - off, dq = shard_collide_dot(m, rq) - off;
        int inp = dp <= 0, inq = dq <= 0;
        if (inp && outp->n < SHARD_COLLIDE_POLY_MAX) {
            int j = outp->n++;
            for (int c = 0; c < 3; c++)
                outp->x[j][c] = in->x[k][c];
            outp->id[j] = in->id[k];
            outp->lab[j] = in->lab[k];
        }
        if (inp != inq && outp->n < SHARD_COLLIDE_POLY_MAX) {
            double t = dp / (dp - dq); /* dp and dq of opposite signs: dp - dq != 0 */
            int j = outp->n++;
            for (int c = 0; c < 3; c++)
                outp->x[j][c] = in->x[k][c] + t * (in->x[kn][c] - in->x[k][c]);
            outp->id[j] = 4 + 4 * in->lab[k] + s;
            outp->lab[j] = inp ? 4 + s : in->lab[k]; /* leaving: on to the next crossing along the plane */
        }
    }
}

/* Face contact with reference face i (side sigma) of X against Y: the clipped incident face of Y, points within
 * the margin, reduced to 4.  Writes points (midway), depths and ids (bits 0-12 of the feature, without the bit of
 * which box is the reference) and returns their number; nref gets the reference normal (from X to Y). */
static int shard_collide_face_contact(const shard_collide_obb *X, int i, double sigma, const shard_collide_obb *Y,
                                      double margin, double pts[4][3], double dep[4], uint32_t ids[4], double nref[3])
{
    for (int c = 0; c < 3; c++)
        nref[c] = sigma * X->ax[i][c];
    /* incident face: Y's face most anti-parallel to nref (ties: lowest axis) */
    int k = 0;
    double best = -1;
    for (int j = 0; j < 3; j++) {
        double dj = fabs(shard_collide_dot(nref, Y->ax[j]));
        if (dj > best)
            k = j, best = dj;
    }
    double tau = shard_collide_dot(nref, Y->ax[k]) > 0 ? -1.0 : 1.0;
    int ku = (k + 1) % 3, kw = (k + 2) % 3;
    static const double su[4] = {-1, 1, 1, -1}, sw[4] = {-1, -1, 1, 1};
    shard_collide_poly buf[2];
    double fc[3];
    shard_collide_axpy(Y->c, tau * Y->h[k], Y->ax[k], fc);
    buf[0].n = 4;
    for (int m = 0; m < 4; m++) {
        shard_collide_axpy(fc, su[m] * Y->h[ku], Y->ax[ku], buf[0].x[m]);
        shard_collide_axpy(buf[0].x[m], sw[m] * Y->h[kw], Y->ax[kw], buf[0].x[m]);
        buf[0].id[m] = m;
        buf[0].lab[m] = m;
    }
    /* side planes of the reference face: +u, -u, +w, -w; a relative 1e-12 slack keeps a vertex that lies on a
     * side plane (boxes aligned edge on edge) a vertex rather than two crossings a rounding apart */
    int iu = (i + 1) % 3, iw = (i + 2) % 3, cur = 0;
    for (int s = 0; s < 4; s++) {
        int axis = s < 2 ? iu : iw;
        double sgn = (s & 1) ? -1.0 : 1.0, m[3];
        for (int c = 0; c < 3; c++)
            m[c] = sgn * X->ax[axis][c];
        shard_collide_clip(&buf[cur], m, X->c, X->h[axis] * (1 + 1e-12), s, &buf[1 - cur]);
        cur = 1 - cur;
    }
    const shard_collide_poly *poly = &buf[cur];
    double x[SHARD_COLLIDE_POLY_MAX][3], d[SHARD_COLLIDE_POLY_MAX];
    int idk[SHARD_COLLIDE_POLY_MAX], n = 0;
    for (int m = 0; m < poly->n; m++) {
        double r[3] = {poly->x[m][0] - X->c[0], poly->x[m][1] - X->c[1], poly->x[m][2] - X->c[2]};
        double sep = shard_collide_dot(r, nref) - X->h[i];
        if (!(sep <= margin))
            continue;
        shard_collide_axpy(poly->x[m], -0.5 * sep, nref, x[n]); /* midway to the reference plane */
        d[n] = -sep;
        idk[n++] = poly->id[m];
    }
    int keep[4] = {0, 1, 2, 3}, nk = n;
    if (n > 4)
        nk = shard_collide_reduce(n, (const double(*)[3])x, d, nref, keep);
    uint32_t faces = (uint32_t)((2 * i + (sigma < 0)) << 10 | (2 * k + (tau < 0)) << 7);
    for (int m = 0; m < nk; m++) {
        for (int c = 0; c < 3; c++)
            pts[m][c] = x[keep[m]][c];
        dep[m] = d[keep[m]];
        ids[m] = faces | (uint32_t)idk[keep[m]];
    }
    return nk;
}

static int shard_collide_box_box(const shard_collide_shape *a, const shard_collide_shape *b, double margin,
                                 shard_collide_point *out)
{
    /* P is the box lower along the largest component of the centre difference (a when the centres coincide), Q the
     * other: computing in that order makes the result independent of the argument order, ties included. */
    double dab[3] = {b->pos[0] - a->pos[0], b->pos[1] - a->pos[1], b->pos[2] - a->pos[2]};
    int kd = 0;
    for (int k = 1; k < 3; k++)
        if (fabs(dab[k]) > fabs(dab[kd]))
            kd = k;
    int p_is_b = dab[kd] < 0;
    const shard_collide_shape *sp = p_is_b ? b : a, *sq = p_is_b ? a : b;
    shard_collide_obb P = {sp->pos, {{0}}, sp->half}, Q = {sq->pos, {{0}}, sq->half};
    shard_collide_axes(sp->R, P.ax);
    shard_collide_axes(sq->R, Q.ax);
    double d[3] = {Q.c[0] - P.c[0], Q.c[1] - P.c[1], Q.c[2] - P.c[2]};

    /* face axes of P and Q (ties: lowest axis), then the 9 edge axes (near-parallel edges skipped: the face axes
     * cover them) */
    double sF[2] = {-INFINITY, -INFINITY};
    int iF[2] = {0, 0};
    for (int w = 0; w < 2; w++) {
        const shard_collide_obb *o = w ? &Q : &P;
        for (int k = 0; k < 3; k++) {
            double s = shard_collide_obb_sep(&P, &Q, d, o->ax[k]);
            if (!(s <= margin))
                return 0; /* a separating axis (or NaN) */
            if (s > sF[w])
                sF[w] = s, iF[w] = k;
        }
    }
    double sE = -INFINITY, LE[3] = {0, 0, 0};
    int iE = -1, jE = -1;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double L[3];
            shard_collide_cross(P.ax[i], Q.ax[j], L);
            double len = sqrt(shard_collide_dot(L, L));
            if (!(len > 1e-6))
                continue;
            for (int c = 0; c < 3; c++)
                L[c] /= len;
            double s = shard_collide_obb_sep(&P, &Q, d, L);
            if (!(s <= margin))
                return 0;
            if (s > sE)
                sE = s, iE = i, jE = j, LE[0] = L[0], LE[1] = L[1], LE[2] = L[2];
        }

    /* tolerances in length: 1e-3 of the smallest half extent */
    double hmin = fmin(fmin(fmin(P.h[0], P.h[1]), fmin(P.h[2], Q.h[0])), fmin(Q.h[1], Q.h[2]));
    double tol = 1e-3 * hmin;
    int ref; /* 0: P's face, 1: Q's face */
    if (sF[1] > sF[0] + tol)
        ref = 1;
    else if (sF[0] > sF[1] + tol)
        ref = 0;
    else {
        double areaP = P.h[(iF[0] + 1) % 3] * P.h[(iF[0] + 2) % 3];
        double areaQ = Q.h[(iF[1] + 1) % 3] * Q.h[(iF[1] + 2) % 3];
        ref = areaQ > areaP * (1 + 1e-9) ? 1 : 0;
    }
    double sFace = sF[ref];
    int use_edge = iE >= 0 && sE > sFace + 0.05 * fabs(sFace) + tol;

    if (!use_edge) {
        const shard_collide_obb *X = ref ? &Q : &P, *Y = ref ? &P : &Q;
        int i = iF[ref];
        double dxy[3] = {Y->c[0] - X->c[0], Y->c[1] - X->c[1], Y->c[2] - X->c[2]};
        double sigma = shard_collide_dot(dxy, X->ax[i]) >= 0 ? 1.0 : -1.0;
        double pts[4][3], dep[4], nref[3];
        uint32_t ids[4];
        int n = shard_collide_face_contact(X, i, sigma, Y, margin, pts, dep, ids, nref);
        if (n > 0) {
            int x_is_b = (ref == 1) != p_is_b; /* X is Q when ref = 1; Q is b unless P is */
            double nrm[3] = {x_is_b ? nref[0] : -nref[0], x_is_b ? nref[1] : -nref[1], x_is_b ? nref[2] : -nref[2]};
            for (int m = 0; m < n; m++)
                shard_collide_emit(&out[m], pts[m], pts[m], nrm, dep[m], ids[m] | (uint32_t)x_is_b << 13);
            return n;
        }
        if (iE < 0)
            return 0; /* nothing of the face within the margin and no edge axis to fall back on */
    }

    /* edge-edge: L from P to Q */
    if (shard_collide_dot(d, LE) < 0)
        for (int c = 0; c < 3; c++)
            LE[c] = -LE[c];
    double pP[3], pQ[3];
    uint32_t idP, idQ;
    shard_collide_edge_contact(&P, iE, &Q, jE, LE, pP, pQ, &idP, &idQ);
    /* normal from b to a: -L when P is a */
    double nrm[3] = {p_is_b ? LE[0] : -LE[0], p_is_b ? LE[1] : -LE[1], p_is_b ? LE[2] : -LE[2]};
    uint32_t ida = p_is_b ? idQ : idP, idb = p_is_b ? idP : idQ;
    shard_collide_emit(&out[0], pP, pQ, nrm, -sE, 1u << 14 | ida << 4 | idb);
    return 1;
}

/* ---- dispatch ----------------------------------------------------------------------------------------------- */

int shard_collide(const shard_collide_shape *a, const shard_collide_shape *b, double margin, shard_collide_point *out)
{
    if (!a || !b || !out || !shard_collide_shape_ok(a) || !shard_collide_shape_ok(b))
        return 0;
    if (!(margin >= 0))
        margin = 0;
    int swap = a->kind > b->kind;
    const shard_collide_shape *s = swap ? b : a, *t = swap ? a : b;
    int n = 0;
    switch (s->kind * 4 + t->kind) {
    case SHARD_COLLIDE_SPHERE * 4 + SHARD_COLLIDE_SPHERE:
        n = shard_collide_sphere_sphere(s, t, margin, out);
        break;
    case SHARD_COLLIDE_SPHERE * 4 + SHARD_COLLIDE_BOX:
        n = shard_collide_sphere_box(s, t, margin, out);
        break;
    case SHARD_COLLIDE_SPHERE * 4 + SHARD_COLLIDE_CYLINDER:
        n = shard_collide_sphere_cylinder(s, t, margin, out);
        break;
    case SHARD_COLLIDE_SPHERE * 4 + SHARD_COLLIDE_PLANE:
        n = shard_collide_sphere_plane(s, t, margin, out);
        break;
    case SHARD_COLLIDE_BOX * 4 + SHARD_COLLIDE_BOX:
        n = shard_collide_box_box(s, t, margin, out);
        break;
    case SHARD_COLLIDE_BOX * 4 + SHARD_COLLIDE_PLANE:
        n = shard_collide_box_plane(s, t, margin, out);
        break;
    case SHARD_COLLIDE_CYLINDER * 4 + SHARD_COLLIDE_PLANE:
        n = shard_collide_cylinder_plane(s, t, margin, out);
        break;
    default: /* box-cylinder, cylinder-cylinder, plane-plane: surface particles */
        return 0;
    }
    if (swap)
        for (int m = 0; m < n; m++)
            for (int k = 0; k < 3; k++)
                out[m].n[k] = -out[m].n[k];
    return n;
}
