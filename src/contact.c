/* Contact forces (model in contact.h).  Loops over owned particles and writes only to them. */
#include "shard/contact.h"

#include <math.h>
#include <stdlib.h>

void shard_contact_params_init(const shard_scene *sc, int b, shard_contact_params *cp)
{
    const shard_body_def *bd = &sc->bodies[b];
    const shard_material *m = &sc->materials[bd->material];
    cp->radius = 0.5 * bd->spacing;
    cp->k = m->contact_stiffness > 0.0 ? m->contact_stiffness : m->E * bd->spacing;
    cp->zeta = m->contact_damping;
    cp->mu = m->friction;
}

/* Normal + friction force on a particle, given the contact normal n (pointing from the particle towards the
 * other side), overlap delta, relative velocity vrel = v_other - v_self, and the pair constants. Adds to f. */
static inline void shard_contact_force(const double n[3], double delta, const double vrel[3], double k, double m_eff,
                                       double zeta, double mu, double *f)
{
    double crit = 2.0 * sqrt(k * m_eff);
    double vn = vrel[0] * n[0] + vrel[1] * n[1] + vrel[2] * n[2];
    double N = k * delta - zeta * crit * vn; /* vn = vrel.n < 0 while the gap closes */
    if (N <= 0.0)
        return;
    f[0] -= N * n[0], f[1] -= N * n[1], f[2] -= N * n[2];
    double vt[3] = {vrel[0] - vn * n[0], vrel[1] - vn * n[1], vrel[2] - vn * n[2]};
    double s = sqrt(vt[0] * vt[0] + vt[1] * vt[1] + vt[2] * vt[2]);
    if (s > 0.0 && mu > 0.0) {
        double ft = fmin(mu * N, crit * s) / s;
        f[0] += ft * vt[0], f[1] += ft * vt[1], f[2] += ft * vt[2];
    }
}

size_t shard_contact_pairs(const shard_particles *p, const shard_csr *cand, const shard_contact_params *cp,
                           double *f)
{
    size_t active = 0;
    for (size_t i = 0; i < p->n_owned; i++) {
        const double *xi = p->x + 3 * i, *vi = p->v + 3 * i;
        const shard_contact_params *ci = &cp[p->body[i]];
        double mi = p->mass[i];
        for (int64_t c = cand->start[i]; c < cand->start[i + 1]; c++) {
            size_t j = (size_t)cand->idx[c];
            const shard_contact_params *cj = &cp[p->body[j]];
            double d[3] = {p->x[3 * j] - xi[0], p->x[3 * j + 1] - xi[1], p->x[3 * j + 2] - xi[2]};
            double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2], rr = ci->radius + cj->radius;
            if (r2 >= rr * rr || r2 == 0.0)
                continue;
            double dist = sqrt(r2);
            double n[3] = {d[0] / dist, d[1] / dist, d[2] / dist};
            double vrel[3] = {p->v[3 * j] - vi[0], p->v[3 * j + 1] - vi[1], p->v[3 * j + 2] - vi[2]};
            double mj = p->mass[j];
            double k = ci->k * cj->k / (ci->k + cj->k);
            double m_eff = mi * mj / (mi + mj);
            double zeta = 0.5 * (ci->zeta + cj->zeta);
            double mu = sqrt(ci->mu * cj->mu);
            shard_contact_force(n, rr - dist, vrel, k, m_eff, zeta, mu, f + 3 * i);
            active++;
        }
    }
    return active;
}

size_t shard_contact_obstacles(const shard_particles *p, const shard_contact_params *cp, int n_obstacles,
                               const shard_obstacle_def *obs, double t, double *f)
{
    size_t active = 0;
    for (size_t i = 0; i < p->n_owned; i++) {
        const shard_contact_params *ci = &cp[p->body[i]];
        for (int o = 0; o < n_obstacles; o++) {
            double n[3];
            double dist = shard_obstacle_distance(&obs[o], t, p->x + 3 * i, n);
            double delta = ci->radius - dist;
            if (delta <= 0.0)
                continue;
            /* The obstacle lies along -n from the particle. */
            double m[3] = {-n[0], -n[1], -n[2]};
            double vrel[3] = {obs[o].velocity[0] - p->v[3 * i], obs[o].velocity[1] - p->v[3 * i + 1],
                              obs[o].velocity[2] - p->v[3 * i + 2]};
            double k = obs[o].stiffness > 0.0 ? obs[o].stiffness : ci->k;
            shard_contact_force(m, delta, vrel, k, p->mass[i], obs[o].damping, obs[o].friction, f + 3 * i);
            active++;
        }
    }
    return active;
}
