/* Contact forces (model in contact.h).  Loops over owned particles, writes only to them and to their rows of
 * the contact history. */
#include "contact.h"

#include "shard/matter.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Mindlin's ratio of tangential to normal stiffness for the no-slip contact of two elastic spheres,
 * k_t / k_n = 2 (1 - nu) / (2 - nu) (Mindlin 1949; Johnson, Contact Mechanics, 1985, section 7.2). */
static double shard_contact_mindlin(double nu) { return 2.0 * (1.0 - nu) / (2.0 - nu); }

void shard_contact_params_init(const shard_scene *sc, int b, shard_contact_params *cp)
{
    const shard_body_def *bd = &sc->bodies[b];
    const shard_material *m = &sc->materials[bd->material];
    const shard_matter *kind = shard_matter_of(sc, b);
    cp->radius = kind->contact_radius ? kind->contact_radius(sc, b) : 0.5 * bd->spacing;
    cp->k = m->contact_stiffness > 0.0 ? m->contact_stiffness : m->E * bd->spacing;
    cp->kt = shard_contact_mindlin(m->nu) * cp->k;
    shard_contact_side side = shard_contact_body_side(sc, b);
    cp->zeta = side.damping;
    cp->mu = side.friction;
    cp->smooth = m->contact_surface == SHARD_SURFACE_SMOOTH && shard_matter_of_has(sc, b, SHARD_MATTER_SMOOTH);
}

/* The side (friction and damping) a body brings to a contact, from its contact constants. */
static inline shard_contact_side shard_contact_side_of(const shard_contact_params *cp)
{
    return (shard_contact_side){.friction = cp->mu, .damping = cp->zeta};
}

static inline double shard_contact_dot(const double a[3], const double b[3])
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static inline double shard_contact_step(double x, double lo, double hi) /* smoothstep: 0 below lo, 1 above hi */
{
    double t = (x - lo) / (hi - lo);
    t = t < 0.0 ? 0.0 : t > 1.0 ? 1.0 : t;
    return t * t * (3.0 - 2.0 * t);
}

void shard_contact_normals(const shard_particles *p, const shard_csr *bonds, const shard_contact_params *cp,
                           double *nrm)
{
    for (size_t i = 0; i < p->n_owned; i++) {
        double *ni = nrm + 3 * i, s[3] = {0.0, 0.0, 0.0}, den = 0.0;
        const shard_contact_params *ci = &cp[p->body[i]];
        if (ci->smooth) {
            double shell2 = 9.0 * ci->radius * ci->radius; /* 1.5 spacings, squared */
            const double *Xi = p->X + 3 * i, *xi = p->x + 3 * i;
            for (int64_t b = bonds->start[i]; b < bonds->start[i + 1]; b++) {
                size_t j = (size_t)bonds->idx[b];
                double D[3] = {p->X[3 * j] - Xi[0], p->X[3 * j + 1] - Xi[1], p->X[3 * j + 2] - Xi[2]};
                if (shard_contact_dot(D, D) > shell2)
                    continue;
                double d[3] = {p->x[3 * j] - xi[0], p->x[3 * j + 1] - xi[1], p->x[3 * j + 2] - xi[2]};
                s[0] += d[0], s[1] += d[1], s[2] += d[2];
                den += sqrt(shard_contact_dot(d, d));
            }
        }
        for (int c = 0; c < 3; c++)
            ni[c] = den > 0.0 ? -s[c] / den : 0.0;
    }
}

/* The normal of a contact between two smooth surfaces (contact.h): from the particles' surface normals ni, nj
 * and the line of centres n (unit, towards j; replaced by the blend), the blend's share a of the surfaces'
 * normal (0: the line of centres).  Negating n and swapping ni, nj negates the result exactly. */
static inline double shard_contact_surface_normal(const double ni[3], const double nj[3], double n[3])
{
    double li = sqrt(shard_contact_dot(ni, ni)), lj = sqrt(shard_contact_dot(nj, nj));
    if (!(li > 0.0 && lj > 0.0))
        return 0.0;
    /* On a surface (a face gives 0.31, one layer inside 0); flat: a face (0.31) rather than an edge (0.51) */
    double on = shard_contact_step(li, 0.1, 0.25) * shard_contact_step(lj, 0.1, 0.25);
    double fi = 1.0 - shard_contact_step(li, 0.4, 0.48), fj = 1.0 - shard_contact_step(lj, 0.4, 0.48);
    if (!(on > 0.0 && fi + fj > 0.0))
        return 0.0;
    double m[3];
    for (int c = 0; c < 3; c++)
        m[c] = fi * ni[c] / li - fj * nj[c] / lj; /* the flatter one's outward normal, minus the other's */
    double lm = sqrt(shard_contact_dot(m, m));
    if (!(lm > 0.0))
        return 0.0;
    double a = on * (fi > fj ? fi : fj) * shard_contact_step(lm / (fi + fj), 0.7, 0.95) *
               shard_contact_step(shard_contact_dot(m, n) / lm, 0.25, 0.4);
    if (a == 0.0)
        return 0.0;
    for (int c = 0; c < 3; c++)
        m[c] = a * m[c] / lm + (1.0 - a) * n[c];
    double l = sqrt(shard_contact_dot(m, m));
    for (int c = 0; c < 3; c++)
        n[c] = m[c] / l;
    return a;
}

/* The geometry of the contact of particle i with candidate j at contact distance rr: its weight (0: no
 * contact), unit normal n towards j and overlap delta.  Spheres (weight 1, n along the line of centres) unless
 * both bodies are smooth (contact.h). */
static inline double shard_contact_geometry(const shard_particles *p, const double *nrm, const shard_contact_params *ci,
                                            const shard_contact_params *cj, size_t i, size_t j, double rr, double n[3],
                                            double *delta)
{
    const double *xi = p->x + 3 * i;
    double d[3] = {p->x[3 * j] - xi[0], p->x[3 * j + 1] - xi[1], p->x[3 * j + 2] - xi[2]};
    double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    int smooth = nrm && ci->smooth && cj->smooth;
    if ((!smooth && r2 >= rr * rr) || r2 == 0.0)
        return 0.0;
    double dist = sqrt(r2);
    n[0] = d[0] / dist, n[1] = d[1] / dist, n[2] = d[2] / dist;
    if (!smooth) {
        *delta = rr - dist;
        return 1.0;
    }
    double a = shard_contact_surface_normal(nrm + 3 * i, nrm + 3 * j, n);
    double gap = shard_contact_dot(d, n);
    if (gap >= rr)
        return 0.0;
    double rho2 = r2 - gap * gap, q = rho2 > 0.0 ? sqrt(rho2) / rr : 0.0; /* M4 of h = rr: radius 2 rr */
    double m4 = q < 1.0   ? 1.0 - 1.5 * q * q + 0.75 * q * q * q
                : q < 2.0 ? 0.25 * (2.0 - q) * (2.0 - q) * (2.0 - q)
                          : 0.0;
    double si_sj = (2.0 * ci->radius) * (2.0 * cj->radius);
    *delta = rr - gap;
    /* The spheres' share pushes with their own overlap (none beyond rr), the surfaces' with the weighed one. */
    double spheres = dist < rr ? (1.0 - a) * (rr - dist) / (rr - gap) : 0.0;
    return spheres + a * m4 * 10.0 * si_sj / (7.0 * M_PI * rr * rr);
}

/* One contact seen from the particle: unit normal n towards the other side, overlap delta, relative velocity
 * vrel = v_other - v_self, the pair constants, and the stored tangential displacement xi (in: last step's or
 * zeros; out: this step's).  Adds the force on the particle to f and returns 1, or returns 0 when the contact
 * is not active (no force, nothing to remember).  Every operation is written so that the other side, which
 * sees -n, -vrel and -xi, computes exactly the negated force: f_ij = -f_ji bit for bit. */
static inline int shard_contact_force(const double n[3], double delta, const double vrel[3], double k, double kt,
                                      double m_eff, double zeta, double mu, double dt, double xi[3], double *f)
{
    double vn = shard_contact_dot(vrel, n);
    double N = k * delta - zeta * (2.0 * sqrt(k * m_eff)) * vn; /* vn = vrel.n < 0 while the gap closes */
    if (N <= 0.0)
        return 0;
    f[0] -= N * n[0], f[1] -= N * n[1], f[2] -= N * n[2];
    if (!(mu > 0.0)) {
        xi[0] = xi[1] = xi[2] = 0.0;
        return 1;
    }
    double vt[3] = {vrel[0] - vn * n[0], vrel[1] - vn * n[1], vrel[2] - vn * n[2]};
    /* The stored displacement, turned into the current tangent plane, plus this step's tangential motion. */
    double xn = shard_contact_dot(xi, n);
    for (int c = 0; c < 3; c++)
        xi[c] = (xi[c] - xn * n[c]) + vt[c] * dt;
    double ct = zeta * (2.0 * sqrt(kt * m_eff));
    double ft[3] = {kt * xi[0] + ct * vt[0], kt * xi[1] + ct * vt[1], kt * xi[2] + ct * vt[2]};
    double mag = sqrt(shard_contact_dot(ft, ft)), cap = mu * N;
    if (mag > cap) {
        /* Slip: the force sits on the Coulomb cone and the spring keeps only what the cone allows. */
        double s = cap / mag;
        for (int c = 0; c < 3; c++) {
            ft[c] *= s;
            xi[c] = ft[c] / kt;
        }
    }
    f[0] += ft[0], f[1] += ft[1], f[2] += ft[2];
    return 1;
}

/* Candidate j of owned particle i, of the same body, against i's reference bonds (rows in partner-id order, walked
 * by *b alongside the candidates, which come in the same order: one pass over both per row): -1 when an
 * unbroken bond still joins them (the solid holds them: no contact), otherwise the contact distance, rr or,
 * for a pair that was bonded at rest closer than rr, its rest distance (surface-fitted sampling puts surface
 * particles closer than two contact radii; the bond breaking then releases no spring compressed from the
 * start).  Whether j is a bond ghost or a contact ghost does not matter: a reference partner is always a bond
 * ghost, so both owners of a pair see the same. */
static inline double shard_contact_reach(const shard_particles *p, const shard_csr *bonds, const uint8_t *broken,
                                         size_t i, size_t j, int64_t *b, double rr)
{
    if (!bonds || p->body[j] != p->body[i])
        return rr;
    int64_t g = p->gid[j], end = bonds->start[i + 1];
    while (*b < end && p->gid[bonds->idx[*b]] < g)
        (*b)++;
    if (!(*b < end && p->gid[bonds->idx[*b]] == g))
        return rr;
    if (!broken[*b])
        return -1.0;
    double d0 = p->X[3 * j] - p->X[3 * i], d1 = p->X[3 * j + 1] - p->X[3 * i + 1];
    double d2 = p->X[3 * j + 2] - p->X[3 * i + 2];
    double r2 = d0 * d0 + d1 * d1 + d2 * d2;
    return r2 < rr * rr ? sqrt(r2) : rr;
}

/* Both particles belong to bodies whose module resolves their contacts (own: per body, NULL: none). */
static inline int shard_contact_own_pair(const uint8_t *own, const shard_particles *p, size_t i, size_t j)
{
    return own && own[p->body[i]] && own[p->body[j]];
}

/* What the force and the energy loops over the particle pairs share: their inputs, and one candidate's contact. */
typedef struct shard_contact_scan {
    const shard_particles *p;
    const double *nrm;
    const shard_csr *bonds;
    const uint8_t *broken;
    const shard_contact_params *cp;
    const uint8_t *own;
} shard_contact_scan;

typedef struct shard_contact_touch {
    const shard_contact_params *cj; /* the partner's contact constants */
    double w;                       /* the pair's weight (contact.h) */
    double n[3], delta;             /* unit normal towards the partner, overlap */
    double k, kt;                   /* normal and tangential stiffness, times the weight */
} shard_contact_touch;

/* Whether owned particle i touches candidate j (bonds of i walked by *bc alongside the candidates,
 * shard_contact_reach), and if so the contact in *t. */
static inline int shard_contact_touches(const shard_contact_scan *s, size_t i, size_t j, int64_t *bc,
                                        shard_contact_touch *t)
{
    const shard_particles *p = s->p;
    if (shard_contact_own_pair(s->own, p, i, j))
        return 0;
    const shard_contact_params *ci = &s->cp[p->body[i]], *cj = &s->cp[p->body[j]];
    double rr = shard_contact_reach(p, s->bonds, s->broken, i, j, bc, ci->radius + cj->radius);
    if (rr < 0.0)
        return 0;
    double w = shard_contact_geometry(p, s->nrm, ci, cj, i, j, rr, t->n, &t->delta);
    if (!(w > 0.0))
        return 0;
    t->cj = cj, t->w = w;
    t->k = w * (ci->k * cj->k / (ci->k + cj->k)), t->kt = w * (ci->kt * cj->kt / (ci->kt + cj->kt));
    return 1;
}

size_t shard_contact_pairs(const shard_particles *p, const double *nrm, const shard_csr *cand, const shard_csr *bonds,
                           const uint8_t *broken, const shard_contact_params *cp, const uint8_t *own, double dt,
                           const shard_pairlist *hist_in, shard_pairlist *hist_out, double *f)
{
    const shard_contact_scan scan = {p, nrm, bonds, broken, cp, own};
    size_t active = 0;
    shard_pairlist_reset(hist_out, p->n_owned);
    for (size_t i = 0; i < p->n_owned; i++) {
        const double *vi = p->v + 3 * i;
        const shard_contact_params *ci = &cp[p->body[i]];
        double mi = p->mass[i];
        shard_pairlist_cursor old = shard_pairlist_row(hist_in, i);
        int64_t bc = bonds ? bonds->start[i] : 0;
        for (int64_t c = cand->start[i]; c < cand->start[i + 1]; c++) {
            size_t j = (size_t)cand->idx[c];
            shard_contact_touch t;
            if (!shard_contact_touches(&scan, i, j, &bc, &t))
                continue;
            double vrel[3] = {p->v[3 * j] - vi[0], p->v[3 * j + 1] - vi[1], p->v[3 * j + 2] - vi[2]};
            double mj = p->mass[j];
            double m_eff = t.w * (mi * mj / (mi + mj)); /* the damping c = 2 zeta sqrt(k m_eff) scales with w too */
            shard_contact_mixed mix = shard_contact_mix(shard_contact_side_of(ci), shard_contact_side_of(t.cj));
            double xi[3] = {0.0, 0.0, 0.0};
            const double *prev = shard_pairlist_find(&old, p->gid[j]);
            if (prev)
                memcpy(xi, prev, sizeof xi);
            if (shard_contact_force(t.n, t.delta, vrel, t.k, t.kt, m_eff, mix.damping, mix.friction, dt, xi,
                                    f + 3 * i)) {
                shard_pairlist_push(hist_out, i, p->gid[j], xi);
                active++;
            }
        }
    }
    shard_pairlist_finish(hist_out);
    return active;
}

size_t shard_contact_obstacles(const shard_particles *p, const shard_contact_params *cp, const uint8_t *own,
                               int n_obstacles, const shard_obstacle_def *obs, double t, double dt,
                               const shard_pairlist *hist_in, shard_pairlist *hist_out, double *f)
{
    size_t active = 0;
    shard_pairlist_reset(hist_out, p->n_owned);
    for (size_t i = 0; i < p->n_owned; i++) {
        if (own && own[p->body[i]])
            continue;
        const shard_contact_params *ci = &cp[p->body[i]];
        shard_pairlist_cursor old = shard_pairlist_row(hist_in, i);
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
            double kt = ci->kt / ci->k * k; /* the particle's Mindlin ratio */
            shard_contact_mixed mix =
                shard_contact_mix(shard_contact_side_of(ci), shard_contact_obstacle_side(&obs[o]));
            double xi[3] = {0.0, 0.0, 0.0};
            const double *prev = shard_pairlist_find(&old, o);
            if (prev)
                memcpy(xi, prev, sizeof xi);
            if (shard_contact_force(m, delta, vrel, k, kt, p->mass[i], mix.damping, mix.friction, dt, xi, f + 3 * i)) {
                shard_pairlist_push(hist_out, i, o, xi);
                active++;
            }
        }
    }
    shard_pairlist_finish(hist_out);
    return active;
}

/* The spring energy of one contact (normal 1/2 k delta^2, tangential 1/2 k_t |xi|^2), times `share`. */
static inline double shard_contact_spring_energy(double k, double delta, double kt, const double *xi, double share)
{
    double e = 0.5 * k * delta * delta;
    if (xi)
        e += 0.5 * kt * shard_contact_dot(xi, xi);
    return share * e;
}

void shard_contact_pairs_energy(const shard_particles *p, const double *nrm, const shard_csr *cand,
                                const shard_csr *bonds, const uint8_t *broken, const shard_contact_params *cp,
                                const uint8_t *own, const shard_pairlist *hist, void (*add)(void *acc, double value),
                                void *acc)
{
    const shard_contact_scan scan = {p, nrm, bonds, broken, cp, own};
    for (size_t i = 0; i < p->n_owned; i++) {
        shard_pairlist_cursor row = shard_pairlist_row(hist, i);
        int64_t bc = bonds ? bonds->start[i] : 0;
        for (int64_t c = cand->start[i]; c < cand->start[i + 1]; c++) {
            size_t j = (size_t)cand->idx[c];
            shard_contact_touch t;
            if (!shard_contact_touches(&scan, i, j, &bc, &t))
                continue;
            /* each side holds half of the pair's energy */
            add(acc, shard_contact_spring_energy(t.k, t.delta, t.kt, shard_pairlist_find(&row, p->gid[j]), 0.5));
        }
    }
}

void shard_contact_obstacles_energy(const shard_particles *p, const shard_contact_params *cp, const uint8_t *own,
                                    int n_obstacles, const shard_obstacle_def *obs, double t,
                                    const shard_pairlist *hist, void (*add)(void *acc, double value), void *acc)
{
    for (size_t i = 0; i < p->n_owned; i++) {
        if (own && own[p->body[i]])
            continue;
        const shard_contact_params *ci = &cp[p->body[i]];
        shard_pairlist_cursor row = shard_pairlist_row(hist, i);
        for (int o = 0; o < n_obstacles; o++) {
            double n[3];
            double delta = ci->radius - shard_obstacle_distance(&obs[o], t, p->x + 3 * i, n);
            if (delta <= 0.0)
                continue;
            double k = obs[o].stiffness > 0.0 ? obs[o].stiffness : ci->k;
            add(acc, shard_contact_spring_energy(k, delta, ci->kt / ci->k * k, shard_pairlist_find(&row, o), 1.0));
        }
    }
}
