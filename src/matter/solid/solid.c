/* Solid kernels: the particle loops of the meshless solid (formulation in solid.h; Mueller et al. 2004): the
 * wall rule, the moment matrices and the fracture glue that keeps them (the energy rule of fracture.h, bond
 * breaking), the gradient, the stress and force passes, output and energy.  Kernels take arrays and a per-body
 * parameter table, loop over owned particles, and write only to the particle they visit.  The law at one
 * material point is solid_material.c. */
#include "solid/solid.h"

#include <math.h>
#include <string.h>

shard_solid_arrays shard_solid_view(const shard_block *b)
{
    return (shard_solid_arrays){.B = b->col[SHARD_SOLID_B],
                                .Ainv = b->col[SHARD_SOLID_AINV],
                                .wx = b->col[SHARD_SOLID_WX],
                                .eps_p = b->col[SHARD_SOLID_EPS_P],
                                .sigma = b->col[SHARD_SOLID_SIGMA],
                                .frac = b->col[SHARD_SOLID_FRAC],
                                .mode = b->col[SHARD_SOLID_MODE],
                                .scale = b->col[SHARD_SOLID_SCALE],
                                .wall = b->col[SHARD_SOLID_WALL],
                                .first = b->first,
                                .n_owned = b->n_owned,
                                .ghost_first = b->ghost_first};
}

/* The slot of a partner j of an owned particle: owned partners sit at j - first, ghosts after the owned slots. */
static inline size_t shard_solid_slot(const shard_solid_arrays *a, size_t j)
{
    return j < a->ghost_first ? j - a->first : a->n_owned + (j - a->ghost_first);
}

/* The wall rule (solid.h): whether owned particle i's fit samples its held partners at the clamp's face, and
 * whether i is itself held by it. */
static inline int shard_solid_near_wall(const shard_solid_arrays *a, size_t i)
{
    return a->wall && a->wall[4 * (i - a->first) + 3] == SHARD_SOLID_WALL_NEAR;
}
static inline int shard_solid_held(const shard_solid_arrays *a, size_t i)
{
    return a->wall && a->wall[4 * (i - a->first) + 3] == SHARD_SOLID_WALL_HELD;
}

/* For a particle near a wall (wa != NULL), the bond vector d to partner j moves to j's sample point on the
 * clamp's face when j is held, and its weight w to that point's distance. */
static inline void shard_solid_wall_shift(const shard_solid_arrays *wa, size_t j, double inv_h2, double *d0, double *d1,
                                          double *d2, double *w)
{
    const double *o = wa->wall + 4 * shard_solid_slot(wa, j);
    if (o[3] == SHARD_SOLID_WALL_HELD) {
        *d0 += o[0], *d1 += o[1], *d2 += o[2];
        *w = shard_solid_weight(*d0 * *d0 + *d1 * *d1 + *d2 * *d2, inv_h2);
    }
}

void shard_solid_walls(const shard_particles *p, const shard_csr *bonds, const shard_solid_arrays *a)
{
    for (size_t i = a->first; i < a->first + a->n_owned; i++) {
        double *wi = a->wall + 4 * (i - a->first);
        if (wi[3] == SHARD_SOLID_WALL_HELD)
            continue;
        wi[3] = SHARD_SOLID_WALL_NONE;
        for (int64_t b = bonds->start[i]; b < bonds->start[i + 1]; b++)
            if (a->wall[4 * shard_solid_slot(a, (size_t)bonds->idx[b]) + 3] == SHARD_SOLID_WALL_HELD) {
                wi[3] = SHARD_SOLID_WALL_NEAR;
                break;
            }
    }
}

/* The moment matrix A of owned particle i over `bonds` into A (6), sum_j w_ij x_ij into s (3). */
static void shard_solid_moment_sums(const shard_particles *p, const shard_csr *bonds, const shard_solid_params *sp,
                                    const shard_solid_arrays *a, size_t i, double A[6], double s[3])
{
    const double *Xi = p->X + 3 * i;
    double inv_h2 = sp[p->body[i]].inv_h2;
    const shard_solid_arrays *wa = shard_solid_near_wall(a, i) ? a : NULL;
    for (int k = 0; k < 6; k++)
        A[k] = 0.0;
    s[0] = s[1] = s[2] = 0.0;
    for (int64_t b = bonds->start[i]; b < bonds->start[i + 1]; b++) {
        const double *Xj = p->X + 3 * (size_t)bonds->idx[b];
        double d0 = Xj[0] - Xi[0], d1 = Xj[1] - Xi[1], d2 = Xj[2] - Xi[2];
        double w = shard_solid_weight(d0 * d0 + d1 * d1 + d2 * d2, inv_h2);
        if (wa)
            shard_solid_wall_shift(wa, (size_t)bonds->idx[b], inv_h2, &d0, &d1, &d2, &w);
        A[0] += w * d0 * d0, A[1] += w * d0 * d1, A[2] += w * d0 * d2;
        A[3] += w * d1 * d1, A[4] += w * d1 * d2, A[5] += w * d2 * d2;
        s[0] += w * d0, s[1] += w * d1, s[2] += w * d2;
    }
}

void shard_solid_reference_moments(const shard_particles *p, const shard_csr *ref_bonds, const shard_solid_params *sp,
                                   const shard_solid_arrays *a)
{
    for (size_t i = a->first; i < a->first + a->n_owned; i++) {
        if (sp[p->body[i]].frac.criterion == SHARD_FRACTURE_NONE)
            continue;
        double A[6], s[3], Ainv[6];
        shard_solid_moment_sums(p, ref_bonds, sp, a, i, A, s);
        shard_sym3_pinv_min(A, 0.0, Ainv, &a->frac[3 * (i - a->first) + 2]);
    }
}

/* The bond energy of owned particle i as bond-based at scale 1 (fracture.h): its halves of its unbroken bonds,
 * sum_j 1/4 c_0 w s^2 |x_ij| V_i V_j at the current positions. */
static double shard_solid_bond_energy(const shard_particles *p, const shard_csr *bonds, const shard_solid_params *s,
                                      size_t i)
{
    const double *Xi = p->X + 3 * i, *xi = p->x + 3 * i;
    double e = 0.0;
    for (int64_t b = bonds->start[i]; b < bonds->start[i + 1]; b++) {
        size_t j = (size_t)bonds->idx[b];
        const double *Xj = p->X + 3 * j, *xj = p->x + 3 * j;
        double d[3] = {Xj[0] - Xi[0], Xj[1] - Xi[1], Xj[2] - Xi[2]};
        double y[3] = {xj[0] - xi[0], xj[1] - xi[1], xj[2] - xi[2]};
        double R2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2], R = sqrt(R2);
        double st = sqrt(y[0] * y[0] + y[1] * y[1] + y[2] * y[2]) / R - 1.0;
        e += shard_solid_weight(R2, s->inv_h2) * st * st * R * p->volume[j];
    }
    return 0.25 * s->c0 * p->volume[i] * e;
}

static inline int shard_solid_kinematics(const shard_particles *p, const shard_csr *bonds, const double *Ainv,
                                         double inv_h2, size_t i, int rate, double c2, const shard_solid_arrays *wa,
                                         double J[9], double Jd[9]);
static inline void shard_solid_kinematics_for(const shard_particles *p, const shard_csr *bonds,
                                              const shard_solid_params *s, const shard_solid_arrays *a, size_t i,
                                              double J[9], double Jd[9]);

/* A^+ and sum_j w_ij x_ij of owned particle i; for a breaking body that has just `lost` bonds, the energy rule
 * of fracture.h (the switch to bond-based, or beta).  Returns the rank of A, and 1 in *became when the
 * particle became bond-based. */
static int shard_solid_moments_one(const shard_particles *p, const shard_csr *bonds, const shard_solid_params *sp,
                                   const shard_solid_arrays *a, double svd_threshold, size_t i, int lost, int *became)
{
    double A[6], wx[3];
    shard_solid_moment_sums(p, bonds, sp, a, i, A, wx);
    size_t k = i - a->first;
    memcpy(a->wx + 3 * k, wx, sizeof wx);
    const shard_fracture_params *fp = &sp[p->body[i]].frac;
    if (fp->criterion != SHARD_FRACTURE_NONE) {
        /* the fracture filters: the least threshold over the unbroken bonds, for the stretch rule as
         * (1 + s)^2 */
        double least = fp->threshold;
        if (fp->weibull_m > 0.0) {
            least = INFINITY;
            for (int64_t b = bonds->start[i]; b < bonds->start[i + 1]; b++)
                least = fmin(least, shard_fracture_stretch_of(fp, p->gid[i], p->gid[bonds->idx[b]]));
        }
        a->frac[3 * k] = fp->criterion == SHARD_FRACTURE_STRETCH ? (1.0 + least) * (1.0 + least) : least;
        a->frac[3 * k + 1] = 0.0;
    }
    double lmin;
    int rank = shard_sym3_pinv_min(A, svd_threshold, a->Ainv + 6 * k, &lmin);
    *became = 0;
    if (fp->criterion == SHARD_FRACTURE_NONE || !lost || a->scale[2 * k] != 0.0 || rank < 3)
        return rank;
    /* After a loss (fracture.h): the energy the particle stored before it, beta U with U from
     * shard_solid_energy_before, must not grow.  A only loses terms as bonds break, so its smallest
     * eigenvalue never rises: once bond-based, always. */
    const shard_solid_params *s = &sp[p->body[i]];
    double beta = 1.0 - a->scale[2 * k + 1], before = beta * a->mode[2 * k + 1];
    if (lmin < SHARD_FRACTURE_MIN_MOMENT * a->frac[3 * k + 2]) {
        /* the switch: alpha = min(1, beta U / E), E the bond energy at alpha = 1 */
        double E = shard_solid_bond_energy(p, bonds, s, i);
        a->scale[2 * k] = E > before ? fmax(before / E, SHARD_FRACTURE_MIN_SCALE) : 1.0;
        *became = 1;
        return rank;
    }
    double J[9];
    shard_solid_gradient(p, bonds, sp, a, i, J);
    double U = p->volume[i] * shard_solid_strain_energy(s, J, a->eps_p + 6 * k);
    if (beta * U > before) /* the re-fit raised it: beta <- beta U_before / U_after */
        a->scale[2 * k + 1] = 1.0 - before / U;
    return rank;
}

void shard_solid_moments(const shard_particles *p, const shard_csr *bonds, const shard_solid_params *sp,
                         const shard_solid_arrays *a, double svd_threshold)
{
    int became;
    for (size_t i = a->first; i < a->first + a->n_owned; i++)
        shard_solid_moments_one(p, bonds, sp, a, svd_threshold, i, 0, &became);
}

size_t shard_solid_moments_list(const shard_particles *p, const shard_csr *bonds, const shard_solid_params *sp,
                                const shard_solid_arrays *a, double svd_threshold, const int32_t *list, size_t n,
                                int32_t *debris, int *mode_changed)
{
    size_t nd = 0;
    for (size_t q = 0; q < n; q++) {
        size_t i = (size_t)list[q];
        int became;
        int rank = shard_solid_moments_one(p, bonds, sp, a, svd_threshold, i, 1, &became);
        if (became)
            *mode_changed = 1;
        if (rank < 3 && bonds->start[i + 1] > bonds->start[i]) {
            if (debris)
                debris[nd] = (int32_t)i;
            nd++;
        }
    }
    return nd;
}

void shard_solid_energy_before(const shard_particles *p, const shard_csr *bonds, const shard_solid_params *sp,
                               const shard_solid_arrays *a, const int32_t *list, size_t n)
{
    for (size_t q = 0; q < n; q++) {
        size_t i = (size_t)list[q], k = i - a->first;
        const shard_solid_params *s = &sp[p->body[i]];
        if (s->frac.criterion == SHARD_FRACTURE_NONE || a->scale[2 * k] != 0.0)
            continue;
        double J[9];
        shard_solid_gradient(p, bonds, sp, a, i, J);
        a->mode[2 * k + 1] = p->volume[i] * shard_solid_strain_energy(s, J, a->eps_p + 6 * k);
    }
}

void shard_solid_mode_sync(const shard_particles *p, const shard_csr *bonds, const shard_solid_arrays *a)
{
    for (size_t i = a->first; i < a->first + a->n_owned; i++) {
        size_t k = i - a->first;
        double touch = a->scale[2 * k];
        for (int64_t b = bonds->start[i]; b < bonds->start[i + 1] && touch == 0.0; b++)
            touch = a->scale[2 * shard_solid_slot(a, (size_t)bonds->idx[b])];
        a->mode[2 * k] = touch != 0.0;
    }
}

size_t shard_solid_break(const shard_particles *p, const shard_csr *ref_bonds, uint8_t *broken,
                         const shard_solid_params *sp, const shard_solid_arrays *a, int32_t *changed)
{
    size_t nc = 0;
    for (size_t i = a->first; i < a->first + a->n_owned; i++) {
        const shard_fracture_params *fp = &sp[p->body[i]].frac;
        if (fp->criterion == SHARD_FRACTURE_NONE)
            continue;
        const double *Xi = p->X + 3 * i, *xi = p->x + 3 * i;
        const double *si = fp->criterion == SHARD_FRACTURE_RANKINE ? a->sigma + 7 * (i - a->first) : NULL;
        double least = a->frac[3 * (i - a->first)];
        if (fp->criterion == SHARD_FRACTURE_STRETCH && a->frac[3 * (i - a->first) + 1] == 0.0)
            continue; /* pass 1 saw no bond of it stretched to the least threshold */
        int lost = 0;
        for (int64_t b = ref_bonds->start[i]; b < ref_bonds->start[i + 1]; b++) {
            if (broken[b])
                continue;
            size_t j = (size_t)ref_bonds->idx[b];
            const double *Xj = p->X + 3 * j, *xj = p->x + 3 * j;
            double X[3] = {Xj[0] - Xi[0], Xj[1] - Xi[1], Xj[2] - Xi[2]};
            double x[3] = {xj[0] - xi[0], xj[1] - xi[1], xj[2] - xi[2]};
            const double *sj = si ? a->sigma + 7 * shard_solid_slot(a, j) : NULL;
            /* n.(s_i + s_j).n / 2 <= (lmax_i + lmax_j) / 2: no need to look closer below the least threshold */
            if (si && si[6] + sj[6] < 2.0 * least)
                continue;
            if (shard_fracture_bond_fails(fp, X, x, si, sj, p->gid[i], p->gid[j], least)) {
                broken[b] = 1;
                lost = 1;
            }
        }
        if (lost)
            changed[nc++] = (int32_t)i;
    }
    return nc;
}

/* J = I + [sum_j w (u_j - u_i) x_ij^T] A^+ and, when `rate` is set, Jdot = [sum_j w (v_j - v_i) x_ij^T] A^+,
 * of owned particle i.  `rate` is a compile-time constant at every call, so the inliner gives two loops: the
 * one without velocities (no damping) does 40 % less work per bond.  The displacement difference is formed as
 * (x_j - x_i) - x_ij, which stays exact under large rigid translations.  With c2 > 0 (the squared least
 * failure stretch 1 + s of the particle's bonds, fracture.h) it also returns whether some bond is stretched that
 * far, |x_j - x_i|^2 >= c2 |x_ij|^2: the fracture pass then checks that particle's bonds (a few flops per bond
 * here instead of a second pass over every bond); c2 is 0 at every call that does not need it, and the inliner
 * drops the test there. */
static inline int shard_solid_kinematics(const shard_particles *p, const shard_csr *bonds, const double *Ainv,
                                         double inv_h2, size_t i, int rate, double c2, const shard_solid_arrays *wa,
                                         double J[9], double Jd[9])
{
    const double *Xi = p->X + 3 * i, *xi = p->x + 3 * i, *vi = p->v + 3 * i;
    double Mu[9] = {0}, Mv[9] = {0};
    int hit = 0;
    for (int64_t b = bonds->start[i]; b < bonds->start[i + 1]; b++) {
        size_t j = (size_t)bonds->idx[b];
        const double *Xj = p->X + 3 * j, *xj = p->x + 3 * j;
        double d0 = Xj[0] - Xi[0], d1 = Xj[1] - Xi[1], d2 = Xj[2] - Xi[2];
        double R2 = d0 * d0 + d1 * d1 + d2 * d2;
        double w = shard_solid_weight(R2, inv_h2);
        double e0 = xj[0] - xi[0], e1 = xj[1] - xi[1], e2 = xj[2] - xi[2];
        if (c2 > 0.0)
            hit |= e0 * e0 + e1 * e1 + e2 * e2 >= c2 * R2;
        double u0 = e0 - d0, u1 = e1 - d1, u2 = e2 - d2;
        if (wa) /* the same displacement difference, sampled at the clamp's face */
            shard_solid_wall_shift(wa, j, inv_h2, &d0, &d1, &d2, &w);
        u0 *= w, u1 *= w, u2 *= w;
        Mu[0] += u0 * d0, Mu[1] += u0 * d1, Mu[2] += u0 * d2;
        Mu[3] += u1 * d0, Mu[4] += u1 * d1, Mu[5] += u1 * d2;
        Mu[6] += u2 * d0, Mu[7] += u2 * d1, Mu[8] += u2 * d2;
        if (rate) {
            const double *vj = p->v + 3 * j;
            double v0 = w * (vj[0] - vi[0]), v1 = w * (vj[1] - vi[1]), v2 = w * (vj[2] - vi[2]);
            Mv[0] += v0 * d0, Mv[1] += v0 * d1, Mv[2] += v0 * d2;
            Mv[3] += v1 * d0, Mv[4] += v1 * d1, Mv[5] += v1 * d2;
            Mv[6] += v2 * d0, Mv[7] += v2 * d1, Mv[8] += v2 * d2;
        }
    }
    shard_solid_mul_sym(Mu, Ainv, J);
    J[0] += 1.0, J[4] += 1.0, J[8] += 1.0;
    if (rate)
        shard_solid_mul_sym(Mv, Ainv, Jd);
    else
        memset(Jd, 0, 9 * sizeof *Jd);
    return hit;
}

/* J and Jdot of owned particle i with the rate only where the material's damping needs it, and with the fracture
 * filter of the stretch rule where c2 > 0 (returns its verdict).  The rare particles near a wall take the
 * loop with the wall rule; the others keep the plain one (each call below has constant flags). */
static inline int shard_solid_kinematics_check(const shard_particles *p, const shard_csr *bonds,
                                               const shard_solid_params *s, const shard_solid_arrays *a, size_t i,
                                               double c2, double J[9], double Jd[9])
{
    const double *Ainv = a->Ainv + 6 * (i - a->first);
    if (shard_solid_near_wall(a, i))
        return shard_solid_kinematics(p, bonds, Ainv, s->inv_h2, i, s->beta > 0.0, c2, a, J, Jd);
    if (s->beta > 0.0)
        return shard_solid_kinematics(p, bonds, Ainv, s->inv_h2, i, 1, c2, NULL, J, Jd);
    return shard_solid_kinematics(p, bonds, Ainv, s->inv_h2, i, 0, c2, NULL, J, Jd);
}

static inline void shard_solid_kinematics_for(const shard_particles *p, const shard_csr *bonds,
                                              const shard_solid_params *s, const shard_solid_arrays *a, size_t i,
                                              double J[9], double Jd[9])
{
    shard_solid_kinematics_check(p, bonds, s, a, i, 0.0, J, Jd);
}

void shard_solid_gradient(const shard_particles *p, const shard_csr *bonds, const shard_solid_params *sp,
                          const shard_solid_arrays *a, size_t i, double J[9])
{
    double Jd[9];
    shard_solid_kinematics(p, bonds, a->Ainv + 6 * (i - a->first), sp[p->body[i]].inv_h2, i, 0, 0.0,
                           shard_solid_near_wall(a, i) ? a : NULL, J, Jd);
}

/* The stress the Rankine rule reads at a bond-based particle (fracture.h): the virial of its bonds' forces in
 * the intact bond-based material (alpha = 1), sigma = 1/2 sum_j c_0 w s V_j y y^T / |y| (y = x_j - x_i;
 * Lehoucq & Silling 2008), which a uniform stretch of a full stencil makes K tr(eps) I.  Its moment matrix is
 * too thin to give a gradient worth reading. */
static void shard_solid_bond_stress(const shard_particles *p, const shard_csr *bonds, const shard_solid_params *s,
                                    size_t i, double sg[6])
{
    const double *Xi = p->X + 3 * i, *xi = p->x + 3 * i;
    for (int m = 0; m < 6; m++)
        sg[m] = 0.0;
    for (int64_t b = bonds->start[i]; b < bonds->start[i + 1]; b++) {
        size_t j = (size_t)bonds->idx[b];
        const double *Xj = p->X + 3 * j, *xj = p->x + 3 * j;
        double d[3] = {Xj[0] - Xi[0], Xj[1] - Xi[1], Xj[2] - Xi[2]};
        double y[3] = {xj[0] - xi[0], xj[1] - xi[1], xj[2] - xi[2]};
        double R2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2], r = sqrt(y[0] * y[0] + y[1] * y[1] + y[2] * y[2]);
        if (!(r > 0.0))
            continue;
        double g = 0.5 * s->c0 * shard_solid_weight(R2, s->inv_h2) * (r / sqrt(R2) - 1.0) * p->volume[j] / r;
        sg[0] += g * y[0] * y[0], sg[1] += g * y[0] * y[1], sg[2] += g * y[0] * y[2];
        sg[3] += g * y[1] * y[1], sg[4] += g * y[1] * y[2], sg[5] += g * y[2] * y[2];
    }
}

/* Pass 1 for one owned particle. */
static inline void shard_solid_stress_one(const shard_particles *p, const shard_csr *bonds,
                                          const shard_solid_params *sp, const shard_solid_arrays *a, double dt,
                                          size_t i)
{
    const shard_solid_params *s = &sp[p->body[i]];
    size_t k = i - a->first;
    const double *Ainv = a->Ainv + 6 * k;
    double *Bi = a->B + 9 * k;
    if (bonds->start[i + 1] == bonds->start[i]) { /* debris (or a lone particle): no stress, no force */
        memset(Bi, 0, 9 * sizeof *Bi);
        if (s->frac.criterion == SHARD_FRACTURE_RANKINE)
            memset(a->sigma + 7 * k, 0, 7 * sizeof *a->sigma);
        a->frac[3 * k + 1] = 0.0;
        return;
    }
    double J[9], Jd[9], P[9], S[6], PA[9];
    if (s->frac.criterion == SHARD_FRACTURE_STRETCH)
        a->frac[3 * k + 1] = shard_solid_kinematics_check(p, bonds, s, a, i, a->frac[3 * k], J, Jd);
    else
        shard_solid_kinematics_for(p, bonds, s, a, i, J, Jd);
    shard_solid_material(s, J, Jd, a->eps_p + 6 * k, dt, P, S);
    if (s->frac.criterion == SHARD_FRACTURE_RANKINE) {
        /* and a bound of its largest principal stress: max over rows of s_rr + sum |s_rc| (Gershgorin) */
        double *sg = a->sigma + 7 * k;
        if (a->scale[2 * k] != 0.0) {
            shard_solid_bond_stress(p, bonds, s, i, sg);
        } else {
            shard_solid_cauchy(P, J, sg);
            double beta = 1.0 - a->scale[2 * k + 1];
            for (int m = 0; m < 6; m++)
                sg[m] *= beta;
        }
        double r0 = sg[0] + fabs(sg[1]) + fabs(sg[2]), r1 = sg[3] + fabs(sg[1]) + fabs(sg[4]);
        double r2 = sg[5] + fabs(sg[2]) + fabs(sg[4]);
        sg[6] = fmax(r0, fmax(r1, r2));
    }
    shard_solid_mul_sym(P, Ainv, PA);
    double vol = p->volume[i], bvol = vol * (1.0 - a->scale[2 * k + 1]); /* beta v, fracture.h */
    for (int m = 0; m < 9; m++)
        Bi[m] = bvol * PA[m];
    if (s->ks > 0.0) /* the stabilisation's share: -k_s (J - I) */
        for (int m = 0; m < 9; m++)
            Bi[m] -= s->ks * (J[m] - (m % 4 == 0 ? 1.0 : 0.0));
    if (a->scale[2 * k] != 0.0) /* bond-based: no correspondence force */
        memset(Bi, 0, 9 * sizeof *Bi);
}

void shard_solid_stress_list(const shard_particles *p, const shard_csr *bonds, const shard_solid_params *sp,
                             const shard_solid_arrays *a, double dt, const int32_t *list, size_t n)
{
    for (size_t k = 0; k < n; k++)
        shard_solid_stress_one(p, bonds, sp, a, dt, (size_t)list[k]);
}

void shard_solid_stress(const shard_particles *p, const shard_csr *bonds, const shard_solid_params *sp,
                        const shard_solid_arrays *a, double dt)
{
    for (size_t i = a->first; i < a->first + a->n_owned; i++)
        shard_solid_stress_one(p, bonds, sp, a, dt, i);
}

/* f_i += sum_j w_ij (B_i + B_j) x_ij = B_i (sum_j w_ij x_ij) + sum_j B_j w_ij x_ij: the first sum is the
 * constant wx_i (shard_solid_moments), so the loop only gathers the partners' matrices.  `ghosts` is a
 * compile-time constant at each call: without ghost partners the slot of j is j - first. */
static inline void shard_solid_force_one(const shard_particles *p, const shard_csr *bonds, const shard_solid_params *sp,
                                         const shard_solid_arrays *a, double *f, size_t i, int ghosts, int stab)
{
    size_t k = i - a->first;
    const double *Xi = p->X + 3 * i, *xi = p->x + 3 * i, *Bi = a->B + 9 * k, *s = a->wx + 3 * k;
    double inv_h2 = sp[p->body[i]].inv_h2, ks2 = 2.0 * sp[p->body[i]].ks;
    double f0 = 0.0, f1 = 0.0, f2 = 0.0, g0 = 0.0, g1 = 0.0, g2 = 0.0;
    const int walls = stab && shard_solid_near_wall(a, i); /* only a particle near a wall has held partners */
    for (int64_t b = bonds->start[i]; b < bonds->start[i + 1]; b++) {
        size_t j = (size_t)bonds->idx[b];
        const double *Xj = p->X + 3 * j, *Bj = a->B + 9 * (ghosts ? shard_solid_slot(a, j) : j - a->first);
        double d0 = Xj[0] - Xi[0], d1 = Xj[1] - Xi[1], d2 = Xj[2] - Xi[2];
        double w = shard_solid_weight(d0 * d0 + d1 * d1 + d2 * d2, inv_h2);
        double wd0 = w * d0, wd1 = w * d1, wd2 = w * d2;
        f0 += Bj[0] * wd0 + Bj[1] * wd1 + Bj[2] * wd2;
        f1 += Bj[3] * wd0 + Bj[4] * wd1 + Bj[5] * wd2;
        f2 += Bj[6] * wd0 + Bj[7] * wd1 + Bj[8] * wd2;
        if (stab) { /* the stabilisation's other share: 2 k_s sum_j w_ij u_ij, u_ij = (x_j - x_i) - x_ij (with a
                     * held partner, i's half weighed at the partner's point on the clamp's face: the wall rule) */
            const double *xj = p->x + 3 * j;
            const double *o = walls ? a->wall + 4 * (ghosts ? shard_solid_slot(a, j) : j - a->first) : NULL;
            if (o && o[3] == SHARD_SOLID_WALL_HELD) {
                double e0 = d0 + o[0], e1 = d1 + o[1], e2 = d2 + o[2];
                w = 0.5 * (w + shard_solid_weight(e0 * e0 + e1 * e1 + e2 * e2, inv_h2));
            }
            g0 += w * ((xj[0] - xi[0]) - d0);
            g1 += w * ((xj[1] - xi[1]) - d1);
            g2 += w * ((xj[2] - xi[2]) - d2);
        }
    }
    if (stab)
        f0 += ks2 * g0, f1 += ks2 * g1, f2 += ks2 * g2;
    f[3 * i + 0] += Bi[0] * s[0] + Bi[1] * s[1] + Bi[2] * s[2] + f0;
    f[3 * i + 1] += Bi[3] * s[0] + Bi[4] * s[1] + Bi[5] * s[2] + f1;
    f[3 * i + 2] += Bi[6] * s[0] + Bi[7] * s[1] + Bi[8] * s[2] + f2;
}

/* The bond-based correction (solid.h) of owned particle i, which is bond-based or has such a partner: over
 * its bonds with theta = (t_i + t_j) / 2 > 0, the bond force theta c_0 w s V_i V_j e less theta 2 k_s w u.
 * Every factor is symmetric in i and j and the vectors change sign exactly, so j's owner adds the negative,
 * bit for bit. */
static void shard_solid_bond_based_one(const shard_particles *p, const shard_csr *bonds, const shard_solid_params *sp,
                                       const shard_solid_arrays *a, double *f, size_t i)
{
    const shard_solid_params *s = &sp[p->body[i]];
    const double *Xi = p->X + 3 * i, *xi = p->x + 3 * i;
    double mi = a->scale[2 * (i - a->first)], ks2 = 2.0 * s->ks, g[3] = {0.0, 0.0, 0.0};
    int any = 0;
    for (int64_t b = bonds->start[i]; b < bonds->start[i + 1]; b++) {
        size_t j = (size_t)bonds->idx[b];
        double mj = a->scale[2 * shard_solid_slot(a, j)];
        if (mi == 0.0 && mj == 0.0)
            continue;
        double theta = 0.5 * (mi + mj), theta_s = 0.5 * ((mi != 0.0) + (mj != 0.0));
        any = 1;
        const double *Xj = p->X + 3 * j, *xj = p->x + 3 * j;
        double d[3] = {Xj[0] - Xi[0], Xj[1] - Xi[1], Xj[2] - Xi[2]};
        double y[3] = {xj[0] - xi[0], xj[1] - xi[1], xj[2] - xi[2]};
        double R2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2], r = sqrt(y[0] * y[0] + y[1] * y[1] + y[2] * y[2]);
        double w = shard_solid_weight(R2, s->inv_h2);
        double tension = r > 0.0 ? theta * s->c0 * w * (r / sqrt(R2) - 1.0) * (p->volume[i] * p->volume[j]) / r : 0.0;
        double stab = theta_s * ks2 * w;
        for (int k = 0; k < 3; k++)
            g[k] += tension * y[k] - stab * (y[k] - d[k]);
    }
    if (any) /* (a flag left over from a partner whose bond broke since adds nothing, not even a zero's sign) */
        f[3 * i + 0] += g[0], f[3 * i + 1] += g[1], f[3 * i + 2] += g[2];
}

/* The force on a particle held by the wall rule (solid.h) that has partners near the wall: the same gather as
 * shard_solid_force_one, except that a free partner's energy samples it at its point on the clamp's face
 * (x_ji - o_i there, weighed at that point's distance).  Its velocity is prescribed, so this is its reaction. */
static void shard_solid_force_held(const shard_particles *p, const shard_csr *bonds, const shard_solid_params *sp,
                                   const shard_solid_arrays *a, double *f, size_t i)
{
    size_t k = i - a->first;
    const double *Xi = p->X + 3 * i, *xi = p->x + 3 * i, *Bi = a->B + 9 * k, *s = a->wx + 3 * k;
    const double *o = a->wall + 4 * k;
    double inv_h2 = sp[p->body[i]].inv_h2, ks = sp[p->body[i]].ks, g[3];
    for (int r = 0; r < 3; r++)
        g[r] = Bi[3 * r] * s[0] + Bi[3 * r + 1] * s[1] + Bi[3 * r + 2] * s[2];
    for (int64_t b = bonds->start[i]; b < bonds->start[i + 1]; b++) {
        size_t j = (size_t)bonds->idx[b], sj = shard_solid_slot(a, j);
        const double *Xj = p->X + 3 * j, *xj = p->x + 3 * j, *Bj = a->B + 9 * sj;
        double d[3] = {Xj[0] - Xi[0], Xj[1] - Xi[1], Xj[2] - Xi[2]};
        double w = shard_solid_weight(d[0] * d[0] + d[1] * d[1] + d[2] * d[2], inv_h2), wj = w;
        if (a->wall[4 * sj + 3] != SHARD_SOLID_WALL_HELD) { /* a free partner samples i on the face */
            for (int r = 0; r < 3; r++)
                d[r] -= o[r];
            wj = shard_solid_weight(d[0] * d[0] + d[1] * d[1] + d[2] * d[2], inv_h2);
        }
        for (int r = 0; r < 3; r++)
            g[r] += wj * (Bj[3 * r] * d[0] + Bj[3 * r + 1] * d[1] + Bj[3 * r + 2] * d[2]) +
                    ks * (w + wj) * ((xj[r] - xi[r]) - (Xj[r] - Xi[r]));
    }
    f[3 * i + 0] += g[0], f[3 * i + 1] += g[1], f[3 * i + 2] += g[2];
}

void shard_solid_forces_list(const shard_particles *p, const shard_csr *bonds, const shard_solid_params *sp,
                             const shard_solid_arrays *a, double *f, const int32_t *list, size_t n, int ghosts)
{
    /* `ghosts` and the stabilisation are compile-time constants in each of the four loops */
    for (size_t k = 0; k < n; k++) {
        size_t i = (size_t)list[k];
        int stab = sp[p->body[i]].ks > 0.0;
        if (shard_solid_held(a, i))
            shard_solid_force_held(p, bonds, sp, a, f, i);
        else if (ghosts)
            stab ? shard_solid_force_one(p, bonds, sp, a, f, i, 1, 1)
                 : shard_solid_force_one(p, bonds, sp, a, f, i, 1, 0);
        else
            stab ? shard_solid_force_one(p, bonds, sp, a, f, i, 0, 1)
                 : shard_solid_force_one(p, bonds, sp, a, f, i, 0, 0);
        if (a->mode[2 * (i - a->first)] != 0.0)
            shard_solid_bond_based_one(p, bonds, sp, a, f, i);
    }
}

void shard_solid_forces(const shard_particles *p, const shard_csr *bonds, const shard_solid_params *sp,
                        const shard_solid_arrays *a, double *f)
{
    for (size_t i = a->first; i < a->first + a->n_owned; i++) {
        if (shard_solid_held(a, i))
            shard_solid_force_held(p, bonds, sp, a, f, i);
        else if (sp[p->body[i]].ks > 0.0)
            shard_solid_force_one(p, bonds, sp, a, f, i, 1, 1);
        else
            shard_solid_force_one(p, bonds, sp, a, f, i, 1, 0);
        if (a->mode[2 * (i - a->first)] != 0.0)
            shard_solid_bond_based_one(p, bonds, sp, a, f, i);
    }
}

void shard_solid_output(const shard_particles *p, const shard_csr *bonds, const shard_solid_params *sp,
                        const shard_solid_arrays *a, double *sigma, double *von_mises, double *plastic,
                        int32_t *inverted)
{
    for (size_t i = a->first; i < a->first + a->n_owned; i++) {
        const shard_solid_params *s = &sp[p->body[i]];
        size_t k = i - a->first;
        double J[9], Jd[9], P[9], S[6], ep[6];
        shard_solid_kinematics_for(p, bonds, s, a, i, J, Jd);
        /* A copy and dt = 0: the material update then leaves the plastic strain exactly as it is. */
        memcpy(ep, a->eps_p + 6 * k, sizeof ep);
        shard_solid_material(s, J, Jd, ep, 0.0, P, S);
        /* an inverted particle has no Cauchy stress: it is written as 0 and flagged instead; debris (no
         * bond left) carries none; a bond-based particle (fracture.h) carries alpha times its bonds' virial
         * stress and has no J to invert, a correspondence particle beta times its stress */
        double sg[6];
        double det = shard_solid_cauchy(P, J, sg), alpha = a->scale[2 * k], beta = 1.0 - a->scale[2 * k + 1];
        if (alpha != 0.0) {
            shard_solid_bond_stress(p, bonds, s, i, sg);
            det = 1.0;
        }
        for (int m = 0; m < 6; m++)
            sg[m] *= alpha != 0.0 ? alpha : beta;
        if (bonds->start[i + 1] == bonds->start[i])
            memset(sg, 0, sizeof sg);
        if (inverted)
            inverted[i] = !(det > 0.0);
        if (sigma) {
            static const int full[9] = {0, 1, 2, 1, 3, 4, 2, 4, 5};
            for (int m = 0; m < 9; m++)
                sigma[9 * i + m] = sg[full[m]];
        }
        if (von_mises) {
            double d0 = sg[0] - sg[3], d1 = sg[3] - sg[5], d2 = sg[5] - sg[0];
            von_mises[i] =
                sqrt(0.5 * (d0 * d0 + d1 * d1 + d2 * d2) + 3.0 * (sg[1] * sg[1] + sg[4] * sg[4] + sg[2] * sg[2]));
        }
        if (plastic)
            plastic[i] = shard_solid_norm6(a->eps_p + 6 * k);
    }
}

size_t shard_solid_inverted(const shard_particles *p, const shard_csr *bonds, const shard_solid_params *sp,
                            const shard_solid_arrays *a, size_t *first)
{
    size_t n = 0;
    for (size_t i = a->first; i < a->first + a->n_owned; i++) {
        if (a->scale[2 * (i - a->first)] != 0.0) /* bond-based (fracture.h): no J, nothing to invert */
            continue;
        double J[9];
        shard_solid_gradient(p, bonds, sp, a, i, J);
        if (!(shard_solid_det(J) > 0.0)) {
            if (n == 0 || p->gid[i] < p->gid[*first])
                *first = i;
            n++;
        }
    }
    return n;
}

/* k_s / 2 sum_j w_ij |z_ij|^2, z_ij = u_ij - (J_i - I) x_ij: the part of the bonds' displacement that the
 * particle's affine fit misses. */
static double shard_solid_stabilization_energy(const shard_particles *p, const shard_csr *bonds,
                                               const shard_solid_params *s, const shard_solid_arrays *a,
                                               const double J[9], size_t i)
{
    const double *Xi = p->X + 3 * i, *xi = p->x + 3 * i;
    const shard_solid_arrays *wa = shard_solid_near_wall(a, i) ? a : NULL;
    double sum = 0.0;
    for (int64_t b = bonds->start[i]; b < bonds->start[i + 1]; b++) {
        size_t j = (size_t)bonds->idx[b];
        const double *Xj = p->X + 3 * j, *xj = p->x + 3 * j;
        double d[3] = {Xj[0] - Xi[0], Xj[1] - Xi[1], Xj[2] - Xi[2]}, u[3];
        double w = shard_solid_weight(d[0] * d[0] + d[1] * d[1] + d[2] * d[2], s->inv_h2);
        for (int r = 0; r < 3; r++)
            u[r] = (xj[r] - xi[r]) - d[r];
        if (wa)
            shard_solid_wall_shift(wa, j, s->inv_h2, &d[0], &d[1], &d[2], &w);
        for (int r = 0; r < 3; r++) {
            double z = u[r];
            for (int c = 0; c < 3; c++)
                z -= (J[3 * r + c] - (r == c ? 1.0 : 0.0)) * d[c];
            sum += w * z * z;
        }
    }
    return 0.5 * s->ks * sum;
}

void shard_solid_energy(const shard_particles *p, const shard_csr *bonds, const shard_solid_params *sp,
                        const shard_solid_arrays *a, void (*add)(void *ctx, double value), void *ctx)
{
    for (size_t i = a->first; i < a->first + a->n_owned; i++) {
        const shard_solid_params *s = &sp[p->body[i]];
        size_t k = i - a->first;
        if (bonds->start[i + 1] == bonds->start[i]) /* debris: no strain energy */
            continue;
        if (a->scale[2 * k] != 0.0) { /* bond-based: alpha times its halves of its bonds */
            add(ctx, a->scale[2 * k] * shard_solid_bond_energy(p, bonds, s, i));
            continue;
        }
        double J[9];
        shard_solid_gradient(p, bonds, sp, a, i, J);
        double U = (1.0 - a->scale[2 * k + 1]) * shard_solid_strain_energy(s, J, a->eps_p + 6 * k);
        /* the bond stabilisation's energy is the particle's, not per volume */
        add(ctx, p->volume[i] * U + (s->ks > 0.0 ? shard_solid_stabilization_energy(p, bonds, s, a, J, i) : 0.0));
    }
}
