/* Fracture: when the reference bonds of a meshless solid break, and what the broken bond graph is made of.
 *
 * The meshless solid (solid.h) is, in peridynamic terms, a correspondence model: its particles interact
 * through reference bonds (partners within the support radius h at rest).  Fracture breaks bonds; a broken
 * bond stays broken, no longer enters the moment matrix, the gradient or the force of either particle, and its
 * particles then meet only through contact (crack faces touch, contact.h).  This module holds the local
 * physics of it, free of MPI:
 *
 * Criteria, per material (scene key materials.<name>.fracture, exactly one of):
 *   critical_stretch s_c      bond ij fails when its stretch s = |x_j - x_i| / |X_j - X_i| - 1 reaches s_c
 *                             (the criterion of the prototype microelastic brittle material, Silling & Askari
 *                             2005, and of Peridigm's and LAMMPS's critical-stretch damage);
 *   energy_release_rate G_c   the same with the s_c at which breaking every bond across a unit area of a plane
 *                             takes G_c: the energy balance of Silling & Askari 2005 (Comput. Struct. 83, 1526,
 *                             eq. for s_0), for a bond-based material whose micromodulus has the shape of this
 *                             model's weight, c(x) = c_0 w(x) (an influence function, Seleson & Parks 2011,
 *                             Int. J. Multiscale Comput. Eng. 9, 689), with c_0 matched to the bulk modulus
 *                             K = E / (3 (1 - 2 nu)), both sums taken over the model's own lattice stencil
 *                             (spacing s, support h) and the plane between two lattice layers:
 *                               s_c = sqrt(G_c S_1 / (9 K s S_2)),  S_1 = sum_j w_j |n_j|,
 *                               S_2 = sum over the particles of a column above the plane and their partners
 *                                     below it of w |n|          (n: lattice offsets, |n| in spacings).
 *                             For a constant micromodulus in the continuum this is their s_c = sqrt(5 G_c /
 *                             (9 K h)); the model's weight (1 - r^2/h^2)^3 makes it 1.2016 times that in the
 *                             continuum and 1.249 times at h = 2.2 s.  Its assumptions: a bond-based energy
 *                             (nu = 1/4 in 3D), bonds of one material, a plane crack; the solid is a
 *                             correspondence model, whose fracture energy the Griffith job in jobs/validation
 *                             measures against it;
 *   tensile_strength sigma_t  bond ij fails when the normal stress across it reaches sigma_t:
 *                             n . ((sigma_i + sigma_j) / 2) . n >= sigma_t, n = (x_j - x_i) / |x_j - x_i| the
 *                             bond's current direction and sigma the Cauchy stress of its two particles
 *                             (Rankine's maximum principal stress criterion evaluated at the bond: the bond
 *                             along the largest principal direction sees the largest principal stress).
 * Weibull scatter (weibull_modulus m > 0): each bond's threshold is the material's value times
 * w_ij = (-ln(1 - U_ij))^(1/m) / Gamma(1 + 1/m), a Weibull variable of modulus m and mean 1 (weakest-link
 * statistics of brittle strength, Weibull 1951), with U_ij uniform in (0, 1) from a hash of (weibull_seed,
 * min(g_i, g_j), max(g_i, g_j)): the same on every rank and for both particles of the bond.
 * Every decision reads the state before any bond of the check breaks (positions, and the stresses of the
 * last force evaluation), so no result depends on the order in which bonds are visited, and both owners of a
 * bond evaluate the same expression on the same bits (x_i - x_j is exactly -(x_j - x_i), sigma_i + sigma_j
 * is sigma_j + sigma_i): a bond breaks on both sides in the same step, with no message.
 *
 * Debris: a particle whose unbroken bonds no longer span 3D (its moment matrix has rank < 3 after the
 * relative singular-value cut) cannot form a 3D gradient.  All its remaining bonds break, it moves freely
 * with its mass and touches everything through contact; its partners recompute their moments without it.
 *
 * Bond-based particles: a particle whose stencil still spans 3D but has thinned out (the smallest eigenvalue
 * of its moment matrix below SHARD_FRACTURE_MIN_MOMENT of its intact value, solid.h) has a gradient too
 * poorly conditioned to carry a stress: A^+ grows as the inverse eigenvalue, and with it the particle's
 * stiffness and its error.  Such a particle leaves the correspondence model and holds on to its partners
 * as the bond-based material whose micromodulus the G_c conversion above assumes (Silling & Askari 2005):
 * its half of each of its unbroken bonds stores
 *   e_ij = 1/4 c_0 w_ij s_ij^2 |x_ij| V_i V_j,   s_ij = |x_j - x_i| / |x_ij| - 1,
 *   c_0 = 18 K / (s^4 S_1)     (a uniformly stretched full stencil then stores the energy density 9 K s^2 / 2
 *                               of a bulk modulus K, the calibration of the G_c conversion),
 * so bond ij carries the central force theta_ij c_0 w_ij s_ij V_i V_j along x_j - x_i, theta_ij = (t_i + t_j) / 2
 * with t = 1 for a bond-based particle: equal and opposite on the two sides, bit for bit.  The particle keeps
 * its bonds, which break by the body's rule like any other (the Rankine rule reads at a bond-based particle
 * the virial stress of its bonds in the intact bond-based material, alpha = 1: sigma = 1/2 sum_j c_0 w s V_j
 * y y^T / |y|, Lehoucq & Silling 2008), so a crack's faces stay attached to the body instead of peeling off
 * as debris.  Its stabilisation energy goes
 * with its correspondence energy.
 * Energy at a break: bonds only break, and breaking must never supply energy.  A bond-based particle's bonds
 * are scaled by alpha = min(1, U / E) (E: their energy at the switch, U: the correspondence energy it had), so
 * the switch does not raise its energy (alpha >= SHARD_FRACTURE_MIN_SCALE, solid.h).  A correspondence
 * particle's least-squares gradient is re-fitted over its remaining bonds, which can raise its strain energy
 * (the lost bond held the fit back); its stress and energy are then scaled by beta <- beta U_before / U_after,
 * so that they do not rise: beta is the particle's loss of stiffness, a damage variable in the sense of
 * continuum damage mechanics (stiffness (1 - D), Kachanov 1958, Lemaitre 1985), set by the breaks.  Both are
 * state (checkpointed).
 *
 * Fragments (the connected components of the unbroken bond graph) and their statistics: fragment.h (the
 * local part) and fragment_comm.h (across ranks).
 */
#ifndef SHARD_FRACTURE_H
#define SHARD_FRACTURE_H

#include "shard/particles.h"
#include "shard/scene.h"

#include <stdint.h>

/* The breaking rule of one body (per-body state of the solid module). */
typedef struct shard_fracture_params {
    int criterion;       /* SHARD_FRACTURE_NONE, SHARD_FRACTURE_STRETCH (also for G_c), SHARD_FRACTURE_RANKINE */
    double threshold;    /* s_c (1) or sigma_t (Pa) */
    double weibull_m;    /* 0: no scatter */
    double weibull_norm; /* 1 / Gamma(1 + 1/m) */
    uint64_t seed;
} shard_fracture_params;

/* s_c for G_c on the lattice of spacing s with support radius h (above). Local. */
double shard_fracture_stretch_from_energy(double G_c, double E, double nu, double spacing, double horizon);

/* c_0 of the bond-based particles (above, N/m^6) for Young's modulus E, Poisson's ratio nu, on the lattice of
 * spacing s with support radius h. Local. */
double shard_fracture_micromodulus(double E, double nu, double spacing, double horizon);

/* The rule of a material's `fracture` section for a body of lattice spacing s and support radius `horizon`.
 * Local. */
void shard_fracture_params_init(shard_fracture_params *fp, const shard_fracture_def *d, double E, double nu,
                                double spacing, double horizon);

/* w_ij (above) for the bond between global ids a and b (symmetric in a, b); 1 without scatter. Local. */
double shard_fracture_scatter(const shard_fracture_params *fp, int64_t a, int64_t b);

/* The failure stretch s_c w_ij of the bond between global ids a and b under the stretch rule. Local. */
static inline double shard_fracture_stretch_of(const shard_fracture_params *fp, int64_t a, int64_t b)
{
    return fp->threshold * shard_fracture_scatter(fp, a, b);
}

/* Does the bond between particles of global ids gi, gj with rest vector X (X_j - X_i) and current vector x
 * (x_j - x_i) fail?  si, sj: the two particles' Cauchy stresses (xx xy xz yy yz zz; read by the Rankine rule
 * only, may be NULL otherwise).  least: a lower bound of the bond's Rankine threshold (sigma_t w_ij), below
 * which the scatter is not evaluated (0: none).  The same answer, bit for bit, with i and j exchanged (and
 * whatever the bound). Local. */
int shard_fracture_bond_fails(const shard_fracture_params *fp, const double X[3], const double x[3], const double *si,
                              const double *sj, int64_t gi, int64_t gj, double least);

/* Does the segment a-b meet the closed axis-aligned box [lo, hi]?  Symmetric in a, b (the caller passes the
 * endpoints in a fixed order to be sure of the bits). Local. */
int shard_fracture_segment_meets_box(const double a[3], const double b[3], const double lo[3], const double hi[3]);

#endif
