/* Solid: the meshless elastic / plastic solid of Mueller et al. 2004 (Point based animation of elastic,
 * plastic and melting objects, Proc. SCA 2004).
 *
 * The module owns the per-particle continuum mechanics: the moment matrix A and its SVD pseudo-inverse (once,
 * from rest positions), the MLS displacement and velocity gradients, Green strain, plasticity, stress, and the
 * particle forces (solid_material.c: the law at one material point; solid.c: the particle kernels).  It reads
 * owned + ghost arrays prepared by the driver and never communicates.
 *
 * Formulation (all sums over the bond partners j of i, in increasing global id; x_ij = X_j - X_i at rest):
 *   w_ij   = (1 - |x_ij|^2 / h^2)^3                         poly6 shape; its constant cancels everywhere below
 *   A_i    = sum w_ij x_ij x_ij^T,  A_i^+ by SVD (relative singular-value cut)
 *   J_i    = I + [sum w_ij (u_j - u_i) x_ij^T] A_i^+                                    J = I + grad(u)^T
 *   Jdot_i = [sum w_ij (v_j - v_i) x_ij^T] A_i^+
 *   E      = (J^T J - I) / 2          Green-Lagrange strain.  Mueller et al. use J^T J - I without the 1/2
 *                                     together with F = -2 v J sigma, which makes the material 4x stiffer than E says;
 *                                     we keep the textbook strain and the exact energy derivative below.
 *   plastic: Ee = E - Ep; if |Ee| > yield: Ep += (1 - exp(-creep dt)) (1 - yield/|Ee|) Ee; |Ep| capped at max
 *   S      = lambda tr(Ee) I + 2 mu Ee + beta (lambda tr(Edot) I + 2 mu Edot),  Edot = sym(J^T Jdot)
 *   P      = J S + [k_v (det J - 1) + k_b h'(det J)] cof(J)  first Piola-Kirchhoff stress (+ volume terms)
 *            k_v/2 (det J - 1)^2 is the volume term of Mueller et al.; k_b h(det J) is a barrier against
 *            inversion (below), k_b = volume_barrier x the bulk modulus E / (3 (1 - 2 nu))
 *   B_i    = v_i P_i A_i^+  - k_s (J_i - I)
 *   f_i    = sum_j w_ij (B_i + B_j) x_ij + 2 k_s sum_j w_ij u_ij
 *                                      exact -dW/du_i of W = sum v_i U(J_i) + k_s/2 sum_i sum_j w_ij |z_ij|^2
 *   bond-based particles (t_i = 1, fracture.h) have B_i = 0 and no U or z energy of their own, but their
 *   half-bond energies; every particle touching one adds, over its bonds with theta_ij = (t_i + t_j) / 2 > 0,
 *            sum_j theta_ij (c_0 w_ij s_ij V_i V_j e_ij - 2 k_s w_ij u_ij),   e_ij = (x_j - x_i) / |x_j - x_i|,
 *   the bond force less the stabilisation's share that belonged to the bond-based side(s): again -dW/du_i
 * Stabilisation (material key `stabilization` G_s, k_s = G_s E s^3 / sum_full w |x|^2): z_ij = u_ij - (J_i - I)
 * x_ij is the part of bond ij's displacement that particle i's affine fit misses; the correspondence model
 * gives it no energy, so modes made of it (the checkerboard, hour-glassing) are free.  The penalty is of the
 * kind of Littlewood (2011) and Silling (2017, J. Mech. Phys. Solids 105: bond-level stabilisation of
 * correspondence models), written as an energy: J_i is the least-squares minimiser of sum_j w_ij |u_ij -
 * (J - I) x_ij|^2, so J's dependence on the positions drops out of its derivative (envelope theorem) and the
 * force is exactly 2 k_s sum_j w_ij u_ij - k_s sum_j w_ij ((J_i - I) + (J_j - I)) x_ij, folded into B above.
 * z vanishes for any affine deformation, so it never stiffens one; it does stiffen bending (a quadratic field)
 * a little.
 * Barrier: St Venant-Kirchhoff's energy stays bounded as a particle is crushed (uniaxially, its stress peaks
 * at a stretch of 1/sqrt(3) and falls to zero at 0), so nothing stops a particle from turning inside out.
 * h(J) = -ln J + (J - 1) - (J - 1)^2/2 + (J - 1)^3/3 for J < 1, 0 for J >= 1, is the logarithmic volume
 * energy -ln J of compressible neo-Hookean models (Ciarlet 1988; Bonet & Wood 2008) less its Taylor
 * polynomial to third order at J = 1: h'(J) = (J - 1)^3 / J, so h = O((J - 1)^4) and the small-strain response (wave
 * speed, Hooke's law) is St Venant-Kirchhoff's exactly to third order, while h -> infinity as J -> 0.  Below
 * J0 = SHARD_SOLID_BARRIER_J0 h continues as its quadratic Taylor polynomial at J0 (finite for any J, still
 * pushing towards a positive volume), for a particle crushed beyond it within one step.
 * The last line is the gather form of the paper's scatter "f_j += F_e d_j, f_i += F_e d_i" (eq. 6.7-6.8): with
 * symmetric bonds (one support radius per body) every term a particle receives is computed by its owner from
 * its own and its partners' B, so no force is ever scattered to a ghost.  Edot is the rate of Green strain: it
 * vanishes for rigid rotation, so the damping never damps rigid motion.
 */
#ifndef SHARD_SOLID_H
#define SHARD_SOLID_H

#include "fracture.h"
#include "shard/particles.h"
#include "shard/scene.h"

#include <math.h>

/* Per-body constants of the solid model (one entry per body, indexed by particles->body). */
typedef struct shard_solid_params {
    double inv_h2;      /* 1 / h^2, h = support radius (m) */
    double lambda, mu;  /* Lame constants (Pa) */
    double kv;          /* volume stiffness (Pa) */
    double beta;        /* stiffness-proportional damping time (s) */
    double yield;       /* plastic yield on |Ee| (Frobenius norm) */
    double creep;       /* 1/s */
    double max_plastic; /* cap on |Ep| */
    double kb;          /* inversion barrier modulus (Pa); 0: none */
    double ks;          /* bond stabilisation stiffness k_s (N/m); 0: none */
    double c0;          /* micromodulus of the bond-based particles (fracture.h, N/m^6); 0: the body never breaks */
    shard_fracture_params frac; /* when the body's bonds break (fracture.h) */
} shard_solid_params;

#define SHARD_SOLID_BARRIER_J0 0.1
/* A breaking particle whose moment matrix's smallest eigenvalue falls below this fraction of its intact value
 * becomes bond-based (fracture.h, shard_solid_moments_list).  A correspondence particle's stiffness grows about
 * as the inverse ratio, its frequency as the square root (at 0.3, 1.8 times, which the CFL factor 0.4 of the
 * default run.dt_safety covers), and its gradient's error with it.  A crack face (half a stencil) keeps 0.5, so
 * it stays a correspondence particle; a crack front's edge keeps 0.25, below the threshold, so that no particle
 * at a crack front takes its stress from a stencil that thin.  (At 0.2 the edges stay correspondence
 * particles; the Kalthoff-Winkler cracks then leave the tips at 78-83 degrees instead of 72-74,
 * docs/validation.md.) */
#define SHARD_FRACTURE_MIN_MOMENT 0.3
/* The least scale alpha of a bond-based particle's bonds (fracture.h). */
#define SHARD_FRACTURE_MIN_SCALE 1e-3

static inline double shard_solid_det(const double J[9])
{
    return J[0] * (J[4] * J[8] - J[5] * J[7]) - J[1] * (J[3] * J[8] - J[5] * J[6]) + J[2] * (J[3] * J[7] - J[4] * J[6]);
}

/* Symmetric 3x3 in 6-component order (xx xy xz yy yz zz) <-> full row-major. */
static inline void shard_solid_sym_to_full(const double s[6], double m[9])
{
    m[0] = s[0], m[1] = s[1], m[2] = s[2];
    m[3] = s[1], m[4] = s[3], m[5] = s[4];
    m[6] = s[2], m[7] = s[4], m[8] = s[5];
}

/* out = M * S for row-major M and symmetric S (6). */
static inline void shard_solid_mul_sym(const double M[9], const double S[6], double out[9])
{
    double s[9];
    shard_solid_sym_to_full(S, s);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            out[3 * r + c] = M[3 * r + 0] * s[0 + c] + M[3 * r + 1] * s[3 + c] + M[3 * r + 2] * s[6 + c];
}

/* The Frobenius norm of a symmetric matrix (6). */
static inline double shard_solid_norm6(const double e[6])
{
    return sqrt(e[0] * e[0] + e[3] * e[3] + e[5] * e[5] + 2.0 * (e[1] * e[1] + e[2] * e[2] + e[4] * e[4]));
}

/* k_s of the bond stabilisation (above) for G_s = G, Young's modulus E, a lattice spacing and support radius h:
 * G E s^3 / m with m = sum w |x|^2 over a full stencil of the lattice; 0 when G is 0. Local. */
double shard_solid_stabilization_stiffness(double G, double E, double spacing, double h);

/* The barrier energy h(det) (above) and its slope h'(det) into *slope. */
double shard_solid_barrier(double det, double *slope);

/* Fills params from a material (E, nu) and support radius h; no barrier (kb = 0). Local. */
void shard_solid_params_init(shard_solid_params *sp, double E, double nu, double kv, double beta, double yield,
                             double creep, double max_plastic, double h);

static inline double shard_solid_weight(double r2, double inv_h2)
{
    double q = 1.0 - r2 * inv_h2;
    return q > 0.0 ? q * q * q : 0.0;
}

/* Moore-Penrose pseudo-inverse of a symmetric positive semi-definite 3x3 matrix (xx xy xz yy yz zz) by a
 * Jacobi eigen-decomposition; eigenvalues below threshold * (largest) are dropped.  Returns the rank kept. */
int shard_sym3_pinv(const double A[6], double threshold, double Ainv[6]);
/* The same, with A's smallest eigenvalue in *lmin. */
int shard_sym3_pinv_min(const double A[6], double threshold, double Ainv[6], double *lmin);

/* Material point update: from J and Jdot (row-major 3x3) and the plastic strain (updated in place) gives the
 * first Piola-Kirchhoff stress P (row-major) and the second one S (symmetric 6).  Local. */
void shard_solid_material(const shard_solid_params *sp, const double J[9], const double Jdot[9], double eps_p[6],
                          double dt, double P[9], double S[6]);
/* The strain energy density U(J) of the material (elastic with the plastic strain eps_p, and the volume
 * terms), the energy whose derivative shard_solid_material's P is. */
double shard_solid_strain_energy(const shard_solid_params *s, const double J[9], const double eps_p[6]);
/* sigma = P J^T / det J (row r of P times row c of J), symmetric: xx xy xz yy yz zz; 0 for an inverted particle
 * (det J <= 0: no current volume).  Returns det J. */
double shard_solid_cauchy(const double P[9], const double J[9], double sg[6]);

/* The solid's per-particle arrays: a block (particles.h) with these rows, X_(index, type, components, flags,
 * "dataset name").  Only the plastic strain is state; the rest is recomputed from it and the rest positions.
 * B exists for the module's ghosts too (their B arrives by halo exchange); the others for owned particles. */
#define SHARD_SOLID_FIELDS(X_)                                                                                         \
    X_(SHARD_SOLID_B, double, 9, 0, "force_matrix")                                                                    \
    X_(SHARD_SOLID_AINV, double, 6, 0, "moment_pinv")                                                                  \
    X_(SHARD_SOLID_WX, double, 3, 0, "bond_weight_sum")                                                                \
    X_(SHARD_SOLID_EPS_P, double, 6, SHARD_FIELD_STATE, "plastic_strain")                                              \
    X_(SHARD_SOLID_SIGMA, double, 7, 0, "bond_stress")                                                                 \
    X_(SHARD_SOLID_FRAC, double, 3, 0, "fracture_filter")                                                              \
    X_(SHARD_SOLID_SCALE, double, 2, SHARD_FIELD_STATE, "fracture_scale")                                              \
    X_(SHARD_SOLID_MODE, double, 2, 0, "bond_mode")                                                                    \
    X_(SHARD_SOLID_WALL, double, 4, 0, "wall")
enum {
    SHARD_SOLID_B = 0,
    SHARD_SOLID_AINV,
    SHARD_SOLID_WX,
    SHARD_SOLID_EPS_P,
    SHARD_SOLID_SIGMA,
    SHARD_SOLID_FRAC,
    SHARD_SOLID_SCALE,
    SHARD_SOLID_MODE,
    SHARD_SOLID_WALL,
    SHARD_SOLID_N_ROWS
};

/* The wall rule (a body's `clamp: face`, scene.h).  A particle held for the whole run by a region that does not
 * turn (a `fixed` region, or an untimed `prescribed` one without spin) belongs to a clamp whose face is the
 * region's surface.  A free particle's fit samples such a held partner j at the point of that surface nearest j,
 * X_j + o_j (moving with it: x_j + o_j), instead of at X_j: the displacement difference u_ij is the same, the bond
 * vector becomes x_ij + o_j and its weight w(|x_ij + o_j|).  The linear fit then spans the smooth field on the
 * free side up to the face, not the kink of the displacement's slope at the face, which a stencil reaching into
 * the held layer averages away (a clamped beam's first layer saw 0.74 of its bending strain and the beam turned
 * at the clamp).  The held particles themselves are unchanged: material whose motion is prescribed, with their
 * own fits and energy (making them rigid and energy-free exposes the correspondence model's zero-energy modes at
 * the face); a held particle's force, its reaction, takes its free partners' energies as they sample it.  This
 * is the boundary-point treatment of essential conditions (the face carries the prescribed displacement, as the
 * boundary nodes of a finite-element mesh do), rather than a fictitious layer whose displacements mirror the
 * free ones through the face (Madenci & Oterkus, Peridynamic Theory and Its Applications, 2014), which needs
 * each held particle's mirror partner, however far.  It is for clamps in bending, not the default: a grip pulled
 * along the body loads the first free layer less and the next more.  docs/validation.md ("Thin parts").
 * The row holds per slot (owned and ghosts) o (3) and its kind: */
enum {
    SHARD_SOLID_WALL_NONE = 0, /* free, with no held partner */
    SHARD_SOLID_WALL_HELD = 1, /* held by the wall rule: o is its offset to the region's surface */
    SHARD_SOLID_WALL_NEAR = 2, /* owned, not held, with a held partner: its fit uses the offsets */
};

/* The kernels' view of the block: slot s of every array belongs to local particle first + s (owned, s <
 * n_owned) or ghost_first + s - n_owned (ghost).  Filled by shard_solid_view. */
typedef struct shard_solid_arrays {
    double *B;     /* 9 per slot, row-major: v P A^+ (owned and ghosts) */
    double *Ainv;  /* 6 per slot: pseudo-inverse of the moment matrix, xx xy xz yy yz zz */
    double *wx;    /* 3 per slot: sum_j w_ij x_ij, the constant part of the force gather */
    double *eps_p; /* 6 per slot: plastic Green strain */
    double *sigma; /* 7 per slot: Cauchy stress of the last pass 1 (xx xy xz yy yz zz) and a bound of its
                    * largest eigenvalue (Gershgorin), kept only for the bodies whose bonds break by the
                    * Rankine rule (read at the bond ghosts too) */
    double *frac;  /* 3 per slot (bodies that break): the least threshold of the particle's unbroken bonds
                    * (stretch rule: (1 + s)^2), 1 where the last pass 1 found a bond stretched that far,
                    * and the smallest eigenvalue of its moment matrix over all its reference bonds */
    double *scale; /* 2 per slot (bodies that break; state, checkpointed): alpha > 0 of a bond-based
                    * particle, 0 for a correspondence one (at the owned slots and the bond ghosts, which
                    * the driver forwards), and 1 - beta, the loss of a correspondence particle's
                    * stiffness at its breaks (fracture.h) */
    double *mode;  /* 2 per owned slot (bodies that break): 1 where the particle or one of its partners is
                    * bond-based, and the particle's correspondence energy v U(J) before its last loss */
    double *wall;  /* 4 per slot (owned and ghosts): the wall rule's offset and kind (above) */
    size_t first, n_owned, ghost_first;
} shard_solid_arrays;

/* The view of a solid block. Local. */
shard_solid_arrays shard_solid_view(const shard_block *b);

/* After the wall rows of every slot hold their offset and SHARD_SOLID_WALL_HELD or NONE: marks the owned free
 * particles with a held partner SHARD_SOLID_WALL_NEAR.  Call before the moments.  Local. */
void shard_solid_walls(const shard_particles *p, const shard_csr *bonds, const shard_solid_arrays *a);

/* A^+ and sum_j w_ij x_ij of every owned particle of the block from its bonds (rest positions of owned and
 * bond-ghost particles). Local. */
void shard_solid_moments(const shard_particles *p, const shard_csr *bonds, const shard_solid_params *sp,
                         const shard_solid_arrays *a, double svd_threshold);

/* The same for the listed owned particles only (after some of their bonds broke); those whose bonds no longer
 * span 3D (A has rank < 3) but which still have bonds are listed in debris[] (may be NULL), and their number
 * returned.  A breaking particle whose A's smallest eigenvalue fell below SHARD_FRACTURE_MIN_MOMENT times the
 * one over all its reference bonds becomes bond-based (t = 1, fracture.h: a stencil thinned out along one
 * direction makes A^+ large there, and the particle's stiffness with it, beyond what the time step allows);
 * *mode_changed is set to 1 when one did (left alone otherwise).  Both also happen in shard_solid_moments.
 * Local. */
size_t shard_solid_moments_list(const shard_particles *p, const shard_csr *bonds, const shard_solid_params *sp,
                                const shard_solid_arrays *a, double svd_threshold, const int32_t *list, size_t n,
                                int32_t *debris, int *mode_changed);

/* Before the listed owned particles of a breaking body lose bonds (`bonds` and A^+ still with them): their
 * correspondence energy v U(J), which the energy rule of the loss (fracture.h) compares with. Local. */
void shard_solid_energy_before(const shard_particles *p, const shard_csr *bonds, const shard_solid_params *sp,
                               const shard_solid_arrays *a, const int32_t *list, size_t n);

/* After t of the owned particles and bond ghosts is current: the owned flag "this particle or one of its
 * partners is bond-based" (mode[1]), which sends the particle's force through the bond-based correction.
 * Local. */
void shard_solid_mode_sync(const shard_particles *p, const shard_csr *bonds, const shard_solid_arrays *a);

/* The smallest eigenvalue of each owned particle's moment matrix over all its reference bonds (ref_bonds, broken
 * or not), for the bodies that break: the reference of the debris rule above. Local. */
void shard_solid_reference_moments(const shard_particles *p, const shard_csr *ref_bonds, const shard_solid_params *sp,
                                   const shard_solid_arrays *a);

/* The breaking rule of each owned particle's body (fracture.h) on its unbroken reference bonds (ref_bonds with
 * their flags in broken, set here for the bonds that fail); the particles that lost a bond are listed in
 * changed[] (each once) and their number returned.  Needs current x
 * of the partners, and sigma of the owned and ghost slots for the Rankine rule. Local. */
size_t shard_solid_break(const shard_particles *p, const shard_csr *ref_bonds, uint8_t *broken,
                         const shard_solid_params *sp, const shard_solid_arrays *a, int32_t *changed);

/* Pass 1 over list[0..n) (owned particles of the block): gradients, strain, plasticity (advances eps_p by dt),
 * B.  Needs current x, v of the particles and their bond partners.  Each particle's result does not depend on
 * the list, so particles with no ghost partner can be computed while a halo exchange is in flight. Local. */
void shard_solid_stress_list(const shard_particles *p, const shard_csr *bonds, const shard_solid_params *sp,
                             const shard_solid_arrays *a, double dt, const int32_t *list, size_t n);
/* Pass 2: f[3*i..] += solid force of each listed particle.  Needs B of the particles and their partners.
 * `ghosts` says whether a partner may be a ghost (0 only for lists whose partners are all owned, which then
 * skip the slot lookup of a ghost). Local. */
void shard_solid_forces_list(const shard_particles *p, const shard_csr *bonds, const shard_solid_params *sp,
                             const shard_solid_arrays *a, double *f, const int32_t *list, size_t n, int ghosts);
/* Both passes over every owned particle of the block, for tests and tools without a halo. Local. */
void shard_solid_stress(const shard_particles *p, const shard_csr *bonds, const shard_solid_params *sp,
                        const shard_solid_arrays *a, double dt);
void shard_solid_forces(const shard_particles *p, const shard_csr *bonds, const shard_solid_params *sp,
                        const shard_solid_arrays *a, double *f);

/* Deformation gradient J of owned particle i from the current positions (used by tests and output). */
void shard_solid_gradient(const shard_particles *p, const shard_csr *bonds, const shard_solid_params *sp,
                          const shard_solid_arrays *a, size_t i, double J[9]);

/* What the output shows of the solid, for the block's owned particles at the current x, v (owned and bond
 * ghosts must be current), written at their local index i (columns over all owned particles): the Cauchy
 * stress sigma = P J^T / det J (9 per particle, Pa, the full symmetric 3x3 tensor row by row, so that every
 * reader sees the same components; 0 where det J <= 0, an inverted particle, flagged 1 in `inverted`), its
 * von Mises equivalent sqrt(((s_xx - s_yy)^2 + (s_yy - s_zz)^2 + (s_zz - s_xx)^2) / 2 + 3 (s_xy^2 + s_yz^2 + s_xz^2)),
 * and the Frobenius norm of the plastic Green strain.  P is the stress the forces use (elastic, damping and volume
 * terms), times beta for a particle that lost stiffness at its breaks; a bond-based particle shows alpha times
 * its bonds' virial stress and is never inverted (fracture.h).  The plastic strain is read, never advanced, so
 * calling this never changes the state.  Any output pointer may be NULL.  Local. */
void shard_solid_output(const shard_particles *p, const shard_csr *bonds, const shard_solid_params *sp,
                        const shard_solid_arrays *a, double *sigma, double *von_mises, double *plastic,
                        int32_t *inverted);

/* The number of owned correspondence particles of the block with det J <= 0 (inverted) at the current
 * positions (a bond-based one has no J, fracture.h), and in *first (when there is one) the local index of the
 * one with the smallest global id. Local. */
size_t shard_solid_inverted(const shard_particles *p, const shard_csr *bonds, const shard_solid_params *sp,
                            const shard_solid_arrays *a, size_t *first);

/* Elastic energy v_i U_i of each owned particle of the block at the current positions (plastic strain held
 * fixed; U = lambda/2 tr(Ee)^2 + mu Ee:Ee + k_v/2 (det J - 1)^2 + k_b h(det J); plus the particle's bond
 * stabilisation energy k_s/2 sum_j w_ij |z_ij|^2), handed to add(ctx, value)
 * one particle at a time in local order (the caller sums them exactly, so the order does not matter).  Local. */
void shard_solid_energy(const shard_particles *p, const shard_csr *bonds, const shard_solid_params *sp,
                        const shard_solid_arrays *a, void (*add)(void *ctx, double value), void *ctx);

/* The keys of a solid body (its shard_body_def.kind_def, read by the scene reader from the module's table). */
enum { SHARD_CLAMP_PARTICLES = 0, SHARD_CLAMP_FACE = 1 };
typedef struct shard_solid_def {
    double support; /* support radius h in units of spacing, in (1, 4] (default 2.2: 32 neighbours) */
    int clamp;      /* how held regions meet the free particles: SHARD_CLAMP_PARTICLES (default) or SHARD_CLAMP_FACE
                     * (the wall rule above) */
} shard_solid_def;

static inline const shard_solid_def *shard_solid_def_of(const shard_body_def *bd) { return bd->kind_def; }

#endif
