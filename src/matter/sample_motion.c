/* Sampling: the motion a body's particles start with and the regions that hold them (sample.h): the initial
 * velocity and spin of a body, the `fixed` and `prescribed` regions at a time (the last active one that holds a
 * particle wins), and the wall rule's offsets of regions held for the whole run. */
#include "shard/sample.h"

#include "shard/geometry.h"
#include "shard/particles.h"

#include <string.h>

/* v = u + w x r: a point at r from an axis that moves with u and turns at w. */
static void shard_sample_turning(const double u[3], const double w[3], const double r[3], double v[3])
{
    v[0] = u[0] + w[1] * r[2] - w[2] * r[1];
    v[1] = u[1] + w[2] * r[0] - w[0] * r[2];
    v[2] = u[2] + w[0] * r[1] - w[1] * r[0];
}

void shard_sample_motion(const shard_body_def *b, const double c[3], const double X[3], double v[3], double vpres[3],
                         uint32_t *flags)
{
    double r[3] = {X[0] - c[0], X[1] - c[1], X[2] - c[2]};
    shard_sample_turning(b->velocity, b->angular_velocity, r, v);
    *flags = 0;
    shard_sample_constraints(b, X, X, 0.0, vpres, flags);
    if (*flags & SHARD_PF_PRESCRIBED)
        memcpy(v, vpres, 3 * sizeof *v);
}

static int shard_sample_constraint_active(const shard_constraint *con, double t)
{
    return t >= con->start && (con->end <= con->start || t < con->end);
}

void shard_sample_constraints(const shard_body_def *b, const double X[3], const double x[3], double t, double vpres[3],
                              uint32_t *flags)
{
    *flags &= ~(uint32_t)SHARD_PF_PRESCRIBED;
    vpres[0] = vpres[1] = vpres[2] = 0.0;
    for (int k = 0; k < b->n_constraints; k++) { /* the last one that holds the particle at t wins */
        const shard_constraint *con = &b->constraints[k];
        if (shard_sample_constraint_active(con, t) && shard_shape_contains(&con->region, X)) {
            *flags |= SHARD_PF_PRESCRIBED;
            double r[3];
            for (int c = 0; c < 3; c++)
                r[c] = x[c] - (con->center[c] + con->velocity[c] * (t - con->start));
            shard_sample_turning(con->velocity, con->spin, r, vpres);
        }
    }
}

int shard_sample_holds_at(const shard_body_def *b, double t)
{
    for (int k = 0; k < b->n_constraints; k++)
        if (shard_sample_constraint_active(&b->constraints[k], t))
            return 1;
    return 0;
}

static int shard_sample_constraint_timed(const shard_constraint *con)
{
    return con->start > 0.0 || con->end > con->start || con->spin[0] != 0.0 || con->spin[1] != 0.0 ||
           con->spin[2] != 0.0;
}

int shard_sample_wall(const shard_body_def *b, const double X[3], double o[3])
{
    o[0] = o[1] = o[2] = 0.0;
    for (int k = b->n_constraints - 1; k >= 0; k--) {
        const shard_constraint *con = &b->constraints[k];
        if (!shard_shape_contains(&con->region, X))
            continue;
        if (shard_sample_constraint_timed(con))
            return 0;
        double n[3], d = shard_shape_surface(&con->region, X, n); /* positive inside, n outwards */
        for (int c = 0; c < 3; c++)
            o[c] = d * n[c];
        return 1;
    }
    return 0;
}

int shard_sample_constraints_timed(const shard_body_def *b)
{
    for (int k = 0; k < b->n_constraints; k++)
        if (shard_sample_constraint_timed(&b->constraints[k]))
            return 1;
    return 0;
}
