/* Rigid bodies: mass properties and state from the scene, the Newton-Euler step, contact points and the
 * projected Jacobi update of one contact (see rigid.h). */
#include "rigid/rigid.h"

#include "shard/massprops.h"
#include "shard/mesh.h"
#include "shard/rotation.h"
#include "shard/sample.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int shard_rigid_key_cmp(const shard_rigid_key *x, const shard_rigid_key *y)
{
    if (x->a != y->a)
        return (x->a > y->a) - (x->a < y->a);
    if (x->b != y->b)
        return (x->b > y->b) - (x->b < y->b);
    return (x->feature > y->feature) - (x->feature < y->feature);
}

static double shard_rigid_dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void shard_rigid_cross(const double a[3], const double b[3], double out[3])
{
    double c0 = a[1] * b[2] - a[2] * b[1], c1 = a[2] * b[0] - a[0] * b[2], c2 = a[0] * b[1] - a[1] * b[0];
    out[0] = c0, out[1] = c1, out[2] = c2;
}

/* A right-handed frame (columns x, y, z) whose z is the unit vector a: x along a x e, e the world axis least
 * aligned with a (the first in x, y, z order on a tie), so the choice is deterministic. */
static void shard_rigid_frame_of(const double a[3], double F[9])
{
    int k = 0;
    for (int j = 1; j < 3; j++)
        if (fabs(a[j]) < fabs(a[k]))
            k = j;
    double e[3] = {0, 0, 0};
    e[k] = 1.0;
    double x[3], y[3];
    shard_rigid_cross(a, e, x);
    double nx = sqrt(shard_rigid_dot(x, x));
    for (int j = 0; j < 3; j++)
        x[j] /= nx;
    shard_rigid_cross(a, x, y);
    for (int r = 0; r < 3; r++)
        F[3 * r] = x[r], F[3 * r + 1] = y[r], F[3 * r + 2] = a[r];
}

/* The world inverse inertia R diag(inv_I) R^T. */
static void shard_rigid_inv_inertia_world(const shard_rigid_body *rb, double Iw[9])
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double s = 0.0;
            for (int k = 0; k < 3; k++)
                s += rb->R[3 * i + k] * rb->inv_inertia[k] * rb->R[3 * j + k];
            Iw[3 * i + j] = s;
        }
}

/* R diag(inv_I) R^T L. */
static void shard_rigid_omega_of(const shard_rigid_body *rb, const double L[3], double w[3])
{
    double Lb[3];
    shard_mat3_tmul_vec(rb->R, L, Lb);
    for (int k = 0; k < 3; k++)
        Lb[k] *= rb->inv_inertia[k];
    shard_mat3_mul_vec(rb->R, Lb, w);
}

void shard_rigid_omega(shard_rigid_body *rb)
{
    if (!rb->kinematic) /* a kinematic body's w is prescribed */
        shard_rigid_omega_of(rb, rb->L, rb->w);
    shard_rigid_omega_of(rb, rb->Lp, rb->wp);
}

void shard_rigid_derive(shard_rigid_body *rb)
{
    shard_quat_to_matrix(rb->q, rb->R);
    shard_rigid_omega(rb);
}

void shard_rigid_point_velocity(const shard_rigid_body *rb, const double p[3], int pseudo, double out[3])
{
    double r[3] = {p[0] - rb->x[0], p[1] - rb->x[1], p[2] - rb->x[2]}, wr[3];
    const double *v = pseudo ? rb->vp : rb->v, *w = pseudo ? rb->wp : rb->w;
    shard_rigid_cross(w, r, wr);
    for (int k = 0; k < 3; k++)
        out[k] = v[k] + wr[k];
}

void shard_rigid_kick(shard_rigid_body *rb, const double g[3], double h)
{
    if (rb->kinematic)
        return;
    for (int k = 0; k < 3; k++) {
        rb->v[k] += h * (rb->F[k] * rb->inv_mass + g[k]);
        rb->L[k] += h * rb->tau[k];
    }
    shard_rigid_derive(rb);
}

/* q <- exp(w dt) q: a turn by |w| dt about w. */
static void shard_rigid_turn(double q[4], const double w[3], double dt)
{
    double a = sqrt(shard_rigid_dot(w, w));
    if (!(a > 0.0))
        return;
    double dq[4];
    shard_quat_from_axis_angle(w, a * dt, dq);
    shard_quat_mul(dq, q, q);
}

void shard_rigid_drift(shard_rigid_body *rb, double dt)
{
    for (int k = 0; k < 3; k++)
        rb->x[k] += dt * (rb->v[k] + rb->vp[k]);
    if (rb->kinematic)
        shard_rigid_turn(rb->q, rb->w, dt);
    else
        shard_rotor_step(rb->q, rb->L, rb->inertia, dt);
    shard_rigid_turn(rb->q, rb->wp, dt);
    shard_quat_normalise(rb->q);
    shard_rigid_derive(rb);
}

/* ---- set-up from the scene ------------------------------------------------------------------------------ */

static int shard_rigid_massprops_error(const shard_scene *sc, const shard_body_def *bd, shard_massprops_status st,
                                       shard_error *err)
{
    return shard_error_at(err, sc->path, &bd->shape.loc, "body '%s': its mass properties cannot be computed (%s)",
                          bd->name, shard_massprops_status_name(st));
}

/* The body's mass properties and its primitive (kind, size, bound), from its shape: the primitive's centre and
 * axis (a cylinder's) in the world into centre and axis. */
static int shard_rigid_body_shape(const shard_scene *sc, const shard_body_def *bd, shard_rigid_body *rb,
                                  shard_massprops *mp, double centre[3], double axis[3], shard_error *err)
{
    const shard_material *m = &sc->materials[bd->material];
    shard_massprops_status st = SHARD_MASSPROPS_OK;
    const shard_shape *s = &bd->shape;
    switch (s->kind) {
    case SHARD_SHAPE_BOX:
        st = shard_massprops_box(m->density, s->min, s->max, mp);
        for (int k = 0; k < 3; k++)
            rb->shape.half[k] = 0.5 * (s->max[k] - s->min[k]), centre[k] = 0.5 * (s->min[k] + s->max[k]);
        rb->shape.kind = SHARD_COLLIDE_BOX;
        rb->bound = sqrt(shard_rigid_dot(rb->shape.half, rb->shape.half));
        break;
    case SHARD_SHAPE_SPHERE:
        st = shard_massprops_sphere(m->density, s->center, s->radius, mp);
        memcpy(centre, s->center, 3 * sizeof *centre);
        rb->shape.kind = SHARD_COLLIDE_SPHERE;
        rb->shape.radius = s->radius;
        rb->bound = s->radius;
        break;
    case SHARD_SHAPE_CYLINDER: {
        st = shard_massprops_cylinder(m->density, s->p0, s->p1, s->radius, mp);
        double d[3] = {s->p1[0] - s->p0[0], s->p1[1] - s->p0[1], s->p1[2] - s->p0[2]};
        double len = sqrt(shard_rigid_dot(d, d));
        for (int k = 0; k < 3; k++)
            axis[k] = d[k] / len, centre[k] = 0.5 * (s->p0[k] + s->p1[k]);
        rb->shape.kind = SHARD_COLLIDE_CYLINDER;
        rb->shape.radius = s->radius;
        rb->shape.half_height = 0.5 * len;
        rb->bound = sqrt(s->radius * s->radius + 0.25 * len * len);
        break;
    }
    case SHARD_SHAPE_GRID: /* a surface: not a rigid body's (the driver refuses the pair first) */
        break;
    case SHARD_SHAPE_MESH: {
        const shard_mesh *mesh = s->mesh; /* loaded and checked closed with the scene (mesh_io.h) */
        if (!mesh)
            return shard_error_at(err, sc->path, &s->file_loc, "'%s': the mesh was not loaded", s->file);
        int64_t *tri = shard_malloc(3 * mesh->n_triangles * sizeof *tri + 1);
        memcpy(tri, mesh->triangles, 3 * mesh->n_triangles * sizeof *tri);
        if (shard_mesh_volume(mesh) < 0.0) /* inward-wound (accepted by sampling): turn the triangles over */
            for (size_t t = 0; t < mesh->n_triangles; t++) {
                int64_t tmp = tri[3 * t + 1];
                tri[3 * t + 1] = tri[3 * t + 2], tri[3 * t + 2] = tmp;
            }
        st = shard_massprops_mesh(m->density, mesh->vertices, (int64_t)mesh->n_vertices, tri,
                                  (int64_t)mesh->n_triangles, mp);
        free(tri);
        rb->contact_by = SHARD_RIGID_PARTICLES;
        rb->shape.kind = SHARD_COLLIDE_SPHERE; /* unused: its particles touch */
        if (st == SHARD_MASSPROPS_OK) {
            memcpy(centre, mp->com, 3 * sizeof *centre);
            for (size_t v = 0; v < mesh->n_vertices; v++) {
                double r[3] = {mesh->vertices[3 * v] - mp->com[0], mesh->vertices[3 * v + 1] - mp->com[1],
                               mesh->vertices[3 * v + 2] - mp->com[2]};
                rb->bound = fmax(rb->bound, sqrt(shard_rigid_dot(r, r)));
            }
        }
        break;
    }
    }
    if (st != SHARD_MASSPROPS_OK)
        return shard_rigid_massprops_error(sc, bd, st, err);
    return 0;
}

/* Surface particles for the pairs without an exact primitive test (meshes; cylinders against boxes and
 * cylinders), in the body frame (about the centre of mass com, turned by R0t). */
static int shard_rigid_body_surface(const shard_scene *sc, int b, shard_rigid_body *rb, const double com[3],
                                    const double R0t[9], shard_error *err)
{
    const shard_body_def *bd = &sc->bodies[b];
    double *pts = NULL;
    size_t n = 0;
    int rc = shard_sample_body_surface(sc, b, &pts, &n, err);
    if (rc)
        return rc;
    if (n > 65535) {
        free(pts);
        return shard_error_at(err, sc->path, &bd->spacing_loc,
                              "rigid body '%s' has %zu surface particles at this spacing; its contacts are found "
                              "through them, at most 65535: use a coarser spacing",
                              bd->name, n);
    }
    rb->surf = shard_malloc((3 * n + 1) * sizeof *rb->surf);
    for (size_t i = 0; i < n; i++) {
        double r[3] = {pts[3 * i] - com[0], pts[3 * i + 1] - com[1], pts[3 * i + 2] - com[2]};
        shard_mat3_mul_vec(R0t, r, rb->surf + 3 * i);
    }
    rb->n_surf = n;
    free(pts);
    return 0;
}

/* Initial state: at rest pose, with the body's velocity and angular velocity about the centre of mass. */
static void shard_rigid_body_start(shard_rigid_body *rb, const shard_body_def *bd)
{
    memcpy(rb->x, rb->x0, sizeof rb->x);
    memcpy(rb->q, rb->q0, sizeof rb->q);
    memcpy(rb->v, bd->velocity, sizeof rb->v);
    memcpy(rb->w, bd->angular_velocity, sizeof rb->w);
    shard_quat_to_matrix(rb->q, rb->R);
    /* L = R diag(I) R^T w */
    double wb[3];
    shard_mat3_tmul_vec(rb->R, bd->angular_velocity, wb);
    for (int k = 0; k < 3; k++)
        wb[k] *= rb->inertia[k];
    shard_mat3_mul_vec(rb->R, wb, rb->L);
    shard_rigid_derive(rb);
}

int shard_rigid_body_init(const shard_scene *sc, int b, shard_rigid_body *rb, shard_error *err)
{
    const shard_body_def *bd = &sc->bodies[b];
    memset(rb, 0, sizeof *rb);
    rb->rigid = 1;
    rb->kinematic = ((const shard_rigid_body_def *)bd->kind_def)->motion == SHARD_MOTION_KINEMATIC;
    rb->spacing = bd->spacing;
    shard_massprops mp;
    double centre[3] = {0, 0, 0}, axis[3] = {0, 0, 1};
    int rc = shard_rigid_body_shape(sc, bd, rb, &mp, centre, axis, err);
    if (rc)
        return rc;
    double R0[9];
    shard_massprops_principal(mp.inertia, rb->inertia, R0, rb->q0);
    memcpy(rb->x0, mp.com, sizeof rb->x0);
    rb->mass = mp.mass;
    rb->inv_mass = rb->kinematic ? 0.0 : 1.0 / mp.mass;
    for (int k = 0; k < 3; k++)
        rb->inv_inertia[k] = rb->kinematic ? 0.0 : 1.0 / rb->inertia[k];
    /* The primitive's frame in the body frame: its centre (the centre of mass, for these uniform shapes) and
     * its axes (the world axes for a box; z along the axis for a cylinder), turned by R0^T. */
    double S[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    if (rb->shape.kind == SHARD_COLLIDE_CYLINDER)
        shard_rigid_frame_of(axis, S);
    double R0t[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            R0t[3 * i + j] = R0[3 * j + i];
    shard_mat3_mul(R0t, S, rb->shape.R);
    double dc[3] = {centre[0] - mp.com[0], centre[1] - mp.com[1], centre[2] - mp.com[2]};
    shard_mat3_mul_vec(R0t, dc, rb->shape.pos);
    if (bd->shape.kind == SHARD_SHAPE_MESH || bd->shape.kind == SHARD_SHAPE_CYLINDER) {
        rc = shard_rigid_body_surface(sc, b, rb, mp.com, R0t, err);
        if (rc)
            return rc;
    }
    shard_rigid_body_start(rb, bd);
    return 0;
}

void shard_rigid_body_free(shard_rigid_body *rb)
{
    if (!rb)
        return;
    free(rb->surf);
    rb->surf = NULL, rb->n_surf = 0;
}

/* ---- contact points ------------------------------------------------------------------------------------- */

/* The body's primitive in the world. */
static shard_collide_shape shard_rigid_world_shape(const shard_rigid_body *rb)
{
    shard_collide_shape w = rb->shape;
    double off[3];
    shard_mat3_mul_vec(rb->R, rb->shape.pos, off);
    for (int k = 0; k < 3; k++)
        w.pos[k] = rb->x[k] + off[k];
    shard_mat3_mul(rb->R, rb->shape.R, w.R);
    return w;
}

/* An obstacle at time t as a primitive. */
static shard_collide_shape shard_rigid_obstacle_shape(const shard_obstacle_def *o, double t)
{
    shard_collide_shape w;
    memset(&w, 0, sizeof w);
    double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    memcpy(w.R, I, sizeof I);
    switch (o->kind) {
    case SHARD_OBSTACLE_PLANE:
        w.kind = SHARD_COLLIDE_PLANE;
        for (int k = 0; k < 3; k++)
            w.pos[k] = o->point[k] + o->velocity[k] * t, w.normal[k] = o->normal[k];
        break;
    case SHARD_OBSTACLE_SPHERE:
        w.kind = SHARD_COLLIDE_SPHERE;
        w.radius = o->radius;
        for (int k = 0; k < 3; k++)
            w.pos[k] = o->center[k] + o->velocity[k] * t;
        break;
    case SHARD_OBSTACLE_BOX:
        w.kind = SHARD_COLLIDE_BOX;
        for (int k = 0; k < 3; k++)
            w.pos[k] = 0.5 * (o->min[k] + o->max[k]) + o->velocity[k] * t, w.half[k] = 0.5 * (o->max[k] - o->min[k]);
        break;
    }
    return w;
}

/* Whether collide.h has an exact test for the pair. */
static int shard_rigid_exact_pair(shard_collide_kind x, shard_collide_kind y)
{
    if (x == SHARD_COLLIDE_SPHERE || y == SHARD_COLLIDE_SPHERE)
        return 1;
    if (x == SHARD_COLLIDE_PLANE || y == SHARD_COLLIDE_PLANE)
        return 1;
    return x == SHARD_COLLIDE_BOX && y == SHARD_COLLIDE_BOX;
}

static shard_rigid_contact *shard_rigid_push(shard_rigid_contact **out, size_t *n, size_t *cap)
{
    shard_reserve((void **)out, cap, *n + 1, sizeof **out);
    shard_rigid_contact *c = &(*out)[(*n)++];
    memset(c, 0, sizeof *c);
    return c;
}

/* Appends the points pts[0..np) of the pair (ia, ib), normals from the second to the first of the test:
 * flip when the test's first shape is body ib. */
static void shard_rigid_add_points(const shard_collide_point *pts, int np, int ia, int ib, int flip,
                                   uint32_t feature_base, uint32_t feature_shift, shard_rigid_contact **out, size_t *n,
                                   size_t *cap)
{
    for (int q = 0; q < np; q++) {
        shard_rigid_contact *c = shard_rigid_push(out, n, cap);
        c->key = (shard_rigid_key){ia, ib, feature_base | (pts[q].feature << feature_shift)};
        for (int k = 0; k < 3; k++)
            c->p[k] = pts[q].p[k], c->n[k] = flip ? -pts[q].n[k] : pts[q].n[k];
        c->depth = pts[q].depth;
    }
}

/* A surface particle of body rb as a small sphere (radius half its spacing). */
static shard_collide_shape shard_rigid_particle(const shard_rigid_body *rb, size_t k)
{
    shard_collide_shape s;
    memset(&s, 0, sizeof s);
    s.kind = SHARD_COLLIDE_SPHERE;
    s.radius = 0.5 * rb->spacing;
    double off[3];
    shard_mat3_mul_vec(rb->R, rb->surf + 3 * k, off);
    for (int j = 0; j < 3; j++)
        s.pos[j] = rb->x[j] + off[j];
    double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    memcpy(s.R, I, sizeof I);
    return s;
}

size_t shard_rigid_collide(const shard_rigid_body *a, int ia, const shard_rigid_body *b, int ib,
                           const shard_obstacle_def *obs, double t, double margin, shard_rigid_contact **out, size_t *n,
                           size_t *cap)
{
    size_t n0 = *n;
    shard_collide_point pts[SHARD_COLLIDE_MAX_POINTS];
    shard_collide_shape sa = shard_rigid_world_shape(a);
    shard_collide_shape sb = b ? shard_rigid_world_shape(b) : shard_rigid_obstacle_shape(obs, t);
    int a_parts = a->contact_by == SHARD_RIGID_PARTICLES, b_parts = b && b->contact_by == SHARD_RIGID_PARTICLES;
    if (!a_parts && !b_parts && shard_rigid_exact_pair(sa.kind, sb.kind)) {
        int np = shard_collide(&sa, &sb, margin, pts);
        shard_rigid_add_points(pts, np, ia, ib, 0, 0, 0, out, n, cap);
        return *n - n0;
    }
    /* Through surface particles: the side that must use them (a mesh, or a cylinder facing a box or a
     * cylinder) against the other's shape, or its particles when it must use them too. */
    int use_a = a_parts || (!b_parts && a->n_surf > 0);
    const shard_rigid_body *P = use_a ? a : b, *O = use_a ? b : a;
    shard_collide_shape so = use_a ? sb : sa;
    int o_parts = use_a ? b_parts : a_parts;
    int flip = !use_a; /* the test's first shape is then body ib's particle */
    double reach = so.kind == SHARD_COLLIDE_PLANE ? INFINITY : (O ? O->bound : 0.0) + 0.5 * P->spacing + margin;
    const double *oc = O ? O->x : so.pos;
    for (size_t k = 0; k < P->n_surf; k++) {
        shard_collide_shape sp = shard_rigid_particle(P, k);
        double d[3] = {sp.pos[0] - oc[0], sp.pos[1] - oc[1], sp.pos[2] - oc[2]};
        if (so.kind != SHARD_COLLIDE_PLANE && shard_rigid_dot(d, d) > reach * reach)
            continue;
        if (!o_parts) {
            int np = shard_collide(&sp, &so, margin, pts);
            shard_rigid_add_points(pts, np, ia, ib, flip, (uint32_t)k << 4, 0, out, n, cap);
            continue;
        }
        for (size_t j = 0; j < O->n_surf; j++) {
            shard_collide_shape sq = shard_rigid_particle(O, j);
            int np = shard_collide(&sp, &sq, margin, pts);
            /* feature: a's particle in the high half, b's in the low half */
            uint32_t fa = (uint32_t)(use_a ? k : j), fb = (uint32_t)(use_a ? j : k);
            for (int q = 0; q < np; q++)
                pts[q].feature = 0;
            shard_rigid_add_points(pts, np, ia, ib, flip, fa << 16 | fb, 0, out, n, cap);
        }
    }
    return *n - n0;
}

/* ---- one contact ---------------------------------------------------------------------------------------- */

/* The change of body rb's velocity at lever r for a unit impulse along d2, dotted with d1:
 * d1 . d2 / m + (r x d1) . I^-1 (r x d2). */
static double shard_rigid_kpart(const shard_rigid_body *rb, const double Iw[9], const double r[3], const double d1[3],
                                const double d2[3])
{
    double c1[3], c2[3], Ic2[3];
    shard_rigid_cross(r, d1, c1);
    shard_rigid_cross(r, d2, c2);
    shard_mat3_mul_vec(Iw, c2, Ic2);
    return rb->inv_mass * shard_rigid_dot(d1, d2) + shard_rigid_dot(c1, Ic2);
}

/* The relative velocity at the contact point (a's minus b's; pseudo: of the pseudo-velocities). */
static void shard_rigid_relative(const shard_rigid_contact *c, const shard_rigid_body *a, const shard_rigid_body *b,
                                 const double vb_obst[3], int pseudo, double u[3])
{
    double va[3], vb[3] = {0, 0, 0};
    shard_rigid_point_velocity(a, c->p, pseudo, va);
    if (b)
        shard_rigid_point_velocity(b, c->p, pseudo, vb);
    else if (!pseudo)
        memcpy(vb, vb_obst, sizeof vb);
    for (int k = 0; k < 3; k++)
        u[k] = va[k] - vb[k];
}

void shard_rigid_contact_setup(shard_rigid_contact *c, const shard_rigid_body *a, const shard_rigid_body *b,
                               const double vb_obst[3], double e, double mu, double dt, double vthr, double beta,
                               double slop, const shard_rigid_memory *mem)
{
    double F[9];
    shard_rigid_frame_of(c->n, F);
    for (int k = 0; k < 3; k++)
        c->t1[k] = F[3 * k], c->t2[k] = F[3 * k + 1];
    for (int k = 0; k < 3; k++) {
        c->ra[k] = c->p[k] - a->x[k];
        c->rb[k] = b ? c->p[k] - b->x[k] : 0.0;
    }
    c->e = e, c->mu = mu;
    /* The inverse mass matrix at the point in the basis (n, t1, t2), symmetric. */
    const double *d[3] = {c->n, c->t1, c->t2};
    double Ia[9], Ib[9];
    shard_rigid_inv_inertia_world(a, Ia);
    if (b)
        shard_rigid_inv_inertia_world(b, Ib);
    for (int i = 0; i < 3; i++)
        for (int j = i; j < 3; j++) {
            double k = shard_rigid_kpart(a, Ia, c->ra, d[i], d[j]);
            if (b)
                k += shard_rigid_kpart(b, Ib, c->rb, d[i], d[j]);
            c->K[3 * i + j] = c->K[3 * j + i] = k;
        }
    double u[3];
    shard_rigid_relative(c, a, b, vb_obst, 0, u);
    double un = shard_rigid_dot(u, c->n);
    if (c->depth >= 0.0)
        c->target = un < -vthr ? -e * un : 0.0;
    else
        c->target = c->depth / dt; /* a speculative contact may close its gap, no more */
    c->target_pos = beta * fmax(c->depth - slop, 0.0) / dt;
    c->ln = c->lt1 = c->lt2 = c->lp = 0.0;
    if (mem) {
        c->ln = mem->ln;
        c->lt1 = shard_rigid_dot(mem->lt, c->t1), c->lt2 = shard_rigid_dot(mem->lt, c->t2);
        double lt = sqrt(c->lt1 * c->lt1 + c->lt2 * c->lt2), cap = mu * c->ln;
        if (lt > cap) {
            double s = lt > 0.0 ? cap / lt : 0.0;
            c->lt1 *= s, c->lt2 *= s;
        }
    }
    c->dln = c->ln, c->dlt1 = c->lt1, c->dlt2 = c->lt2, c->dlp = 0.0;
}

double shard_rigid_contact_solve(shard_rigid_contact *c, const shard_rigid_body *a, const shard_rigid_body *b,
                                 const double vb_obst[3], int pseudo)
{
    double u[3];
    shard_rigid_relative(c, a, b, vb_obst, pseudo, u);
    double un = shard_rigid_dot(u, c->n);
    if (pseudo) {
        double lp = fmax(0.0, c->lp - (un - c->target_pos) / c->K[0]);
        c->dlp = lp - c->lp;
        c->lp = lp;
        return fabs(c->dlp);
    }
    double ln = fmax(0.0, c->ln - (un - c->target) / c->K[0]);
    double dln = ln - c->ln;
    /* The tangential slip after this contact's own normal change, then a step against it with the largest
     * eigenvalue of the 2x2 tangential block as the effective inverse mass: a step along -slip (not along
     * -K_t^-1 slip, whose radial projection on the cone would settle where the impulse is parallel to K_t^-1
     * slip instead of opposite to the slip: less friction than mu lambda_n along the sliding direction when the
     * lever arms make K_t anisotropic; Coulomb's law, the principle of maximum dissipation, wants it opposite
     * to the slip), and no overshoot. */
    double ut1 = shard_rigid_dot(u, c->t1) + c->K[3] * dln, ut2 = shard_rigid_dot(u, c->t2) + c->K[6] * dln;
    double k11 = c->K[4], k12 = c->K[5], k22 = c->K[8];
    double kt = 0.5 * (k11 + k22) + sqrt(0.25 * (k11 - k22) * (k11 - k22) + k12 * k12);
    double d1 = -ut1 / kt, d2 = -ut2 / kt;
    double lt1 = c->lt1 + d1, lt2 = c->lt2 + d2;
    double lt = sqrt(lt1 * lt1 + lt2 * lt2), cap = c->mu * ln;
    if (lt > cap) { /* sliding: the tangential impulse on the cone's edge (the exact cone) */
        double s = lt > 0.0 ? cap / lt : 0.0;
        lt1 *= s, lt2 *= s;
    }
    c->dln = dln, c->dlt1 = lt1 - c->lt1, c->dlt2 = lt2 - c->lt2;
    c->ln = ln, c->lt1 = lt1, c->lt2 = lt2;
    return fmax(fabs(c->dln), fmax(fabs(c->dlt1), fabs(c->dlt2)));
}

static void shard_rigid_impulse_of(const shard_rigid_contact *c, int which, double ln, double lt1, double lt2,
                                   double dP[3], double dL[3])
{
    double J[3], rJ[3];
    for (int k = 0; k < 3; k++)
        J[k] = ln * c->n[k] + lt1 * c->t1[k] + lt2 * c->t2[k];
    if (which)
        for (int k = 0; k < 3; k++)
            J[k] = -J[k];
    shard_rigid_cross(which ? c->rb : c->ra, J, rJ);
    for (int k = 0; k < 3; k++)
        dP[k] += J[k], dL[k] += rJ[k];
}

void shard_rigid_contact_impulse(const shard_rigid_contact *c, int which, int pseudo, double dP[3], double dL[3])
{
    if (pseudo)
        shard_rigid_impulse_of(c, which, c->dlp, 0.0, 0.0, dP, dL);
    else
        shard_rigid_impulse_of(c, which, c->dln, c->dlt1, c->dlt2, dP, dL);
}

void shard_rigid_contact_total(const shard_rigid_contact *c, int which, double dP[3], double dL[3])
{
    shard_rigid_impulse_of(c, which, c->ln, c->lt1, c->lt2, dP, dL);
}

void shard_rigid_apply(shard_rigid_body *rb, const double dP[3], const double dL[3], int pseudo)
{
    if (rb->kinematic)
        return;
    double *v = pseudo ? rb->vp : rb->v, *L = pseudo ? rb->Lp : rb->L;
    for (int k = 0; k < 3; k++)
        v[k] += rb->inv_mass * dP[k], L[k] += dL[k];
    shard_rigid_omega(rb);
}
