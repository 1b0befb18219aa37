/* Solid material: the constitutive law of the meshless solid at one material point (formulation in solid.h;
 * Mueller et al. 2004, Point based animation of elastic, plastic and melting objects): the Lame constants and
 * the stabilisation stiffness of a body, the inversion barrier, the pseudo-inverse of the moment matrix, the
 * strain energy density, the stress with plastic flow, and the Cauchy stress.  Nothing here reads particles or
 * bonds: the kernels of solid.c call these for the particle they visit. */
#include "solid/solid.h"

#include <math.h>
#include <string.h>

void shard_solid_params_init(shard_solid_params *sp, double E, double nu, double kv, double beta, double yield,
                             double creep, double max_plastic, double h)
{
    sp->inv_h2 = 1.0 / (h * h);
    sp->lambda = E * nu / ((1.0 + nu) * (1.0 - 2.0 * nu));
    sp->mu = E / (2.0 * (1.0 + nu));
    sp->kv = kv;
    sp->beta = beta;
    sp->yield = yield;
    sp->creep = creep;
    sp->max_plastic = max_plastic;
    sp->kb = 0.0;
    sp->ks = 0.0;
    sp->c0 = 0.0;
}

double shard_solid_stabilization_stiffness(double G, double E, double spacing, double h)
{
    if (!(G > 0.0))
        return 0.0;
    /* m = sum over the lattice offsets n != 0 with |n s| < h of w |n s|^2: the weighted second moment tr A of
     * a full stencil of the simple cubic lattice (an integer loop, the same on every rank) */
    double inv_h2 = 1.0 / (h * h), m = 0.0;
    int r = (int)ceil(h / spacing);
    for (int a = -r; a <= r; a++)
        for (int b = -r; b <= r; b++)
            for (int c = -r; c <= r; c++) {
                double d2 = ((double)a * a + (double)b * b + (double)c * c) * spacing * spacing;
                if (d2 > 0.0)
                    m += shard_solid_weight(d2, inv_h2) * d2;
            }
    return m > 0.0 ? G * E * spacing * spacing * spacing / m : 0.0;
}

double shard_solid_barrier(double det, double *slope)
{
    if (det >= 1.0) {
        *slope = 0.0;
        return 0.0;
    }
    double J0 = SHARD_SOLID_BARRIER_J0;
    if (det >= J0) {
        double u = det - 1.0;
        *slope = u * u * u / det;
        return -log(det) + u - 0.5 * u * u + u * u * u / 3.0;
    }
    /* Below J0 (reached only by a particle already crushed or inverted): the quadratic continuation, finite
     * for any det and still pushing towards a positive volume. */
    double u = J0 - 1.0, d = det - J0;
    double h0 = -log(J0) + u - 0.5 * u * u + u * u * u / 3.0, h1 = u * u * u / J0;
    double h2 = u * u * (2.0 * J0 + 1.0) / (J0 * J0);
    *slope = h1 + h2 * d;
    return h0 + h1 * d + 0.5 * h2 * d * d;
}

int shard_sym3_pinv(const double A[6], double threshold, double Ainv[6])
{
    double lmin;
    return shard_sym3_pinv_min(A, threshold, Ainv, &lmin);
}

int shard_sym3_pinv_min(const double A[6], double threshold, double Ainv[6], double *lmin)
{
    /* Cyclic Jacobi: a fixed sweep order and a fixed stopping rule keep the result identical on every rank. */
    double a[9], V[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    shard_solid_sym_to_full(A, a);
    for (int sweep = 0; sweep < 50; sweep++) {
        double off = a[1] * a[1] + a[2] * a[2] + a[5] * a[5];
        double diag = a[0] * a[0] + a[4] * a[4] + a[8] * a[8];
        if (off <= 1e-30 * diag || off == 0.0)
            break;
        static const int pq[3][2] = {{0, 1}, {0, 2}, {1, 2}};
        for (int r = 0; r < 3; r++) {
            int p = pq[r][0], q = pq[r][1];
            double apq = a[3 * p + q];
            if (apq == 0.0)
                continue;
            double theta = (a[3 * q + q] - a[3 * p + p]) / (2.0 * apq);
            double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
            double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
            for (int k = 0; k < 3; k++) { /* a = a G */
                double akp = a[3 * k + p], akq = a[3 * k + q];
                a[3 * k + p] = c * akp - s * akq;
                a[3 * k + q] = s * akp + c * akq;
            }
            for (int k = 0; k < 3; k++) { /* a = G^T a */
                double apk = a[3 * p + k], aqk = a[3 * q + k];
                a[3 * p + k] = c * apk - s * aqk;
                a[3 * q + k] = s * apk + c * aqk;
            }
            for (int k = 0; k < 3; k++) { /* V = V G */
                double vkp = V[3 * k + p], vkq = V[3 * k + q];
                V[3 * k + p] = c * vkp - s * vkq;
                V[3 * k + q] = s * vkp + c * vkq;
            }
        }
    }
    double ev[3] = {a[0], a[4], a[8]};
    double emax = fmax(fabs(ev[0]), fmax(fabs(ev[1]), fabs(ev[2])));
    *lmin = fmin(ev[0], fmin(ev[1], ev[2]));
    double inv[3];
    int rank = 0;
    for (int k = 0; k < 3; k++) {
        /* A is positive semi-definite: a negative eigenvalue is round-off and is dropped like a small one. */
        if (emax > 0.0 && ev[k] > threshold * emax) {
            inv[k] = 1.0 / ev[k];
            rank++;
        } else {
            inv[k] = 0.0;
        }
    }
    /* Ainv = V diag(inv) V^T */
    static const int idx[6][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}};
    for (int m = 0; m < 6; m++) {
        int r = idx[m][0], c = idx[m][1];
        Ainv[m] = V[3 * r + 0] * inv[0] * V[3 * c + 0] + V[3 * r + 1] * inv[1] * V[3 * c + 1] +
                  V[3 * r + 2] * inv[2] * V[3 * c + 2];
    }
    return rank;
}

/* The strain energy density U(J) of the material (elastic with the plastic strain eps_p, and the volume
 * terms), the energy whose derivative shard_solid_material's P is. */
double shard_solid_strain_energy(const shard_solid_params *s, const double J[9], const double eps_p[6])
{
    static const int idx[6][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}};
    double Ee[6];
    for (int m = 0; m < 6; m++) {
        int r = idx[m][0], c = idx[m][1];
        Ee[m] = 0.5 * (J[r] * J[c] + J[3 + r] * J[3 + c] + J[6 + r] * J[6 + c] - (r == c ? 1.0 : 0.0)) - eps_p[m];
    }
    double tr = Ee[0] + Ee[3] + Ee[5];
    double ee = Ee[0] * Ee[0] + Ee[3] * Ee[3] + Ee[5] * Ee[5] + 2.0 * (Ee[1] * Ee[1] + Ee[2] * Ee[2] + Ee[4] * Ee[4]);
    double U = 0.5 * s->lambda * tr * tr + s->mu * ee;
    if (s->kv > 0.0 || s->kb > 0.0) {
        double det = shard_solid_det(J), slope;
        U += 0.5 * s->kv * (det - 1.0) * (det - 1.0);
        if (s->kb > 0.0)
            U += s->kb * shard_solid_barrier(det, &slope);
    }
    return U;
}

void shard_solid_material(const shard_solid_params *sp, const double J[9], const double Jd[9], double eps_p[6],
                          double dt, double P[9], double S[6])
{
    /* Green strain E = (J^T J - I)/2 and its rate sym(J^T Jdot), both symmetric. */
    double E[6], Ed[6];
    static const int idx[6][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}};
    for (int m = 0; m < 6; m++) {
        int r = idx[m][0], c = idx[m][1];
        double jtj = J[r] * J[c] + J[3 + r] * J[3 + c] + J[6 + r] * J[6 + c];
        double jtjd = J[r] * Jd[c] + J[3 + r] * Jd[3 + c] + J[6 + r] * Jd[6 + c];
        double jdtj = Jd[r] * J[c] + Jd[3 + r] * J[3 + c] + Jd[6 + r] * J[6 + c];
        E[m] = 0.5 * (jtj - (r == c ? 1.0 : 0.0));
        Ed[m] = 0.5 * (jtjd + jdtj);
    }
    double Ee[6];
    for (int m = 0; m < 6; m++)
        Ee[m] = E[m] - eps_p[m];
    if (sp->max_plastic > 0.0 && sp->creep > 0.0) {
        /* Plastic flow towards the yield surface.  dEp/dt = creep * (1 - yield/|Ee|) Ee, integrated exactly over
         * the step with E held fixed, so the result does not depend on dt the way the per-step update
         * "Ep += creep * Ee" of Mueller et al. 2004 does. */
        double n = shard_solid_norm6(Ee);
        if (n > sp->yield) {
            double g = -expm1(-sp->creep * dt) * (1.0 - sp->yield / n);
            for (int m = 0; m < 6; m++)
                eps_p[m] += g * Ee[m];
        }
        double np = shard_solid_norm6(eps_p);
        if (np > sp->max_plastic) {
            double s = sp->max_plastic / np;
            for (int m = 0; m < 6; m++)
                eps_p[m] *= s;
        }
        for (int m = 0; m < 6; m++)
            Ee[m] = E[m] - eps_p[m];
    }
    double tr = Ee[0] + Ee[3] + Ee[5], trd = Ed[0] + Ed[3] + Ed[5];
    double lam = sp->lambda, mu2 = 2.0 * sp->mu, beta = sp->beta;
    for (int m = 0; m < 6; m++) {
        int diag = (m == 0 || m == 3 || m == 5);
        S[m] = mu2 * Ee[m] + (diag ? lam * tr : 0.0);
        if (beta > 0.0)
            S[m] += beta * (mu2 * Ed[m] + (diag ? lam * trd : 0.0));
    }
    shard_solid_mul_sym(J, S, P);
    if (sp->kv > 0.0 || sp->kb > 0.0) {
        /* Volume terms k_v/2 (det J - 1)^2 (Mueller et al. 2004) and k_b h(det J): derivative (dU/d det) cof(J). */
        double cof[9];
        cof[0] = J[4] * J[8] - J[5] * J[7];
        cof[1] = J[5] * J[6] - J[3] * J[8];
        cof[2] = J[3] * J[7] - J[4] * J[6];
        cof[3] = J[2] * J[7] - J[1] * J[8];
        cof[4] = J[0] * J[8] - J[2] * J[6];
        cof[5] = J[1] * J[6] - J[0] * J[7];
        cof[6] = J[1] * J[5] - J[2] * J[4];
        cof[7] = J[2] * J[3] - J[0] * J[5];
        cof[8] = J[0] * J[4] - J[1] * J[3];
        double det = J[0] * cof[0] + J[1] * cof[1] + J[2] * cof[2];
        double s = sp->kv * (det - 1.0);
        if (sp->kb > 0.0) {
            double slope;
            shard_solid_barrier(det, &slope);
            s += sp->kb * slope;
        }
        for (int m = 0; m < 9; m++)
            P[m] += s * cof[m];
    }
}

/* sigma = P J^T / det J (row r of P times row c of J), symmetric: xx xy xz yy yz zz; 0 for an inverted particle
 * (det J <= 0: no current volume).  Returns det J. */
double shard_solid_cauchy(const double P[9], const double J[9], double sg[6])
{
    static const int idx[6][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}};
    double det = shard_solid_det(J);
    for (int m = 0; m < 6; m++) {
        int r = idx[m][0], c = idx[m][1];
        double t = P[3 * r] * J[3 * c] + P[3 * r + 1] * J[3 * c + 1] + P[3 * r + 2] * J[3 * c + 2];
        sg[m] = det > 0.0 ? t / det : 0.0;
    }
    return det;
}
