/* Velocity Verlet (see integrate.h). */
#include "shard/integrate.h"

#include <math.h>
#include <string.h>

void shard_integrate_kick(shard_particles *p, double h)
{
    for (size_t i = 0; i < p->n_owned; i++) {
        double *v = p->v + 3 * i;
        if (p->flags[i] & SHARD_PF_PRESCRIBED) {
            memcpy(v, p->vpres + 3 * i, 3 * sizeof *v);
            continue;
        }
        const double *a = p->a + 3 * i;
        v[0] += h * a[0], v[1] += h * a[1], v[2] += h * a[2];
    }
}

void shard_integrate_drift(shard_particles *p, double dt)
{
    for (size_t i = 0; i < 3 * p->n_owned; i++)
        p->x[i] += dt * p->v[i];
}

void shard_integrate_accel(shard_particles *p, const double *f, const double g[3])
{
    for (size_t i = 0; i < p->n_owned; i++) {
        double inv_m = 1.0 / p->mass[i];
        for (int k = 0; k < 3; k++)
            p->a[3 * i + k] = f[3 * i + k] * inv_m + g[k];
    }
}

long shard_integrate_scan(const shard_particles *p, double limit, double *move2)
{
    double m = 0.0;
    long bad = -1;
    for (size_t i = 0; i < p->n_owned; i++) {
        const double *x = p->x + 3 * i, *b = p->x_build + 3 * i;
        double d0 = x[0] - b[0], d1 = x[1] - b[1], d2 = x[2] - b[2];
        double d2s = d0 * d0 + d1 * d1 + d2 * d2;
        if (d2s > m)
            m = d2s;
        /* Written so that NaN fails it too. */
        if (!(fabs(x[0]) <= limit && fabs(x[1]) <= limit && fabs(x[2]) <= limit) && bad < 0)
            bad = (long)i;
    }
    *move2 = m;
    return bad;
}
