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

double shard_integrate_max_move2(const shard_particles *p)
{
    double m = 0.0;
    for (size_t i = 0; i < p->n_owned; i++) {
        double d0 = p->x[3 * i] - p->x_build[3 * i], d1 = p->x[3 * i + 1] - p->x_build[3 * i + 1],
               d2 = p->x[3 * i + 2] - p->x_build[3 * i + 2];
        double d2s = d0 * d0 + d1 * d1 + d2 * d2;
        if (!(d2s <= m)) /* also catches NaN */
            m = isfinite(d2s) ? d2s : INFINITY;
    }
    return m;
}
