/* Contact: penalty contact between particles of different bodies (and of one body whose bonds can break, where
 * no unbroken bond joins them: crack faces and fragments) and between particles and obstacles, with
 * stick-slip Coulomb friction.
 *
 * A contact between spheres of radius r_i, r_j (half the bodies' spacings) with overlap
 * delta = r_i + r_j - |x_j - x_i| > 0 pushes them apart with N = max(0, k delta - c_n v_n), where k is the
 * series stiffness k_i k_j / (k_i + k_j), c_n = 2 zeta sqrt(k m_eff) (zeta = the materials' mean damping
 * fraction) and v_n the normal approach velocity.  Friction is a tangential spring with memory (Cundall &
 * Strack 1979): each contact keeps the elastic tangential displacement xi of the partner relative to the
 * particle, turned into the current tangent plane and advanced by the tangential relative velocity times the
 * step; the friction force is F_t = k_t xi + c_t v_t, k_t = the series tangential stiffness (Mindlin's ratio
 * k_t/k = 2(1 - nu)/(2 - nu) of each material), c_t = 2 zeta sqrt(k_t m_eff).  Where |F_t| > mu N
 * (mu = sqrt(mu_i mu_j)) the contact slips: F_t is scaled onto the Coulomb cone and xi = F_t / k_t.  So a body
 * below its friction angle sticks (it moves only by the spring's elastic give, mu N / k_t), and a sliding one
 * feels exactly mu N.  The memory is a row per owned particle of a pair list (pairlist.h) keyed by the
 * partner's global id (by the obstacle's index for obstacles), read from last step's list and written to this
 * step's; a contact that opens is dropped.  Every pair formula is symmetric in i and j and each side keeps the
 * negated memory of the other, so the force i receives is exactly the negative of the one j receives, though
 * each is computed by its own owner.  Obstacles are analytic (plane, sphere, box), move with a prescribed
 * velocity, and use their own friction, damping and (when given) stiffness.
 *
 * Smooth surfaces (material key contact.surface: smooth, solids only).  The spheres of a lattice make a body's
 * surface bumpy at the scale of a spacing: a block on another body sinks into the hollows between the other's
 * particles and is held there by normals tilted up to 45 degrees, so it does not slide at Coulomb's angle.  For a
 * pair of particles of two smooth bodies the contact is instead taken across the bodies' surfaces:
 *   - Each surface particle has a normal from its nearest neighbours of its own body (unbroken bonds no longer
 *     than 1.5 spacings, current positions): nu_i = -sum_j x_ij / sum_j |x_ij|, of length 0.31 on a face of a
 *     cubic lattice, 0.51 on an edge, 0.72 at a corner and 0 one layer inside (shard_contact_normals).
 *   - The pair's normal is that of the flatter surface (the face's where a face meets an edge or a corner; the
 *     mean where two faces meet), blended smoothly into the line of centres where the two normals disagree, where
 *     neither particle is on a flat face, where it points away from the partner or where a particle is not on a
 *     surface (fragments, single particles: the sphere model).
 *   - The overlap is measured along that normal, delta = r_i + r_j - (x_j - x_i).n, so a particle sliding over
 *     a flat face keeps its gap, and the pair is weighed by the lateral distance rho (across the normal) with
 *     the cubic spline M4 of radius 2 (r_i + r_j), normalised so that the weights of a particle over a square
 *     lattice sum to 1 (within 0.6 % wherever it stands; 10 s_i s_j / (7 pi (r_i + r_j)^2) at rho = 0).  The
 *     pair's normal and tangential stiffness and damping are those of the sphere model times the weight.
 * A flat face on a flat face then feels forces along the common normal only, whatever the lattices' offset,
 * and slides at Coulomb's angle (docs/validation.md).  Every quantity is symmetric in i and j (the normal is
 * negated exactly), so f_ij = -f_ji still holds bit for bit.  The candidates of smooth bodies reach sqrt(5)
 * (r_i + r_j), the corner of the weighed cylinder.
 */
#ifndef SHARD_CONTACT_H
#define SHARD_CONTACT_H

#include "shard/pairlist.h"
#include "shard/particles.h"
#include "shard/scene.h"

#include <math.h>

typedef struct shard_contact_params { /* per body */
    double radius;                    /* m: half the spacing */
    double k;                         /* N/m, normal */
    double kt;                        /* N/m, tangential: Mindlin's ratio 2(1 - nu)/(2 - nu) times k */
    double zeta;                      /* fraction of critical damping */
    double mu;                        /* friction coefficient */
    int smooth; /* 1: a solid whose material has contact.surface: smooth (pairs of two such bodies) */
} shard_contact_params;

/* The contact rule of every kind: what two sides of a contact bring to it and what the contact takes.  A side is
 * a body (its material's friction, restitution and contact damping) or an obstacle (its own).  Two bodies touch
 * with the geometric mean of their friction coefficients, mu = sqrt(mu_a mu_b), the larger restitution,
 * e = max(e_a, e_b), and the mean damping fraction, zeta = (zeta_a + zeta_b) / 2; a body touches an obstacle
 * with the obstacle's friction and damping and the larger restitution.  The solids' penalty contact (this
 * file), the rigid bodies' impulses (rigid/rigid.h) and the cloth's collisions (cloth/cloth_collide.h) all mix
 * through shard_contact_mix, each taking what its model uses. */
typedef struct shard_contact_side {
    double friction;    /* Coulomb coefficient */
    double restitution; /* coefficient of restitution */
    double damping;     /* fraction of critical damping */
    int obstacle;       /* 1: an obstacle, whose friction and damping are the contact's */
} shard_contact_side;

typedef struct shard_contact_mixed {
    double friction, restitution, damping;
} shard_contact_mixed;

/* Body b's side: its material's. Local. */
static inline shard_contact_side shard_contact_body_side(const shard_scene *sc, int b)
{
    const shard_material *m = &sc->materials[sc->bodies[b].material];
    return (shard_contact_side){m->friction, m->restitution, m->contact_damping, 0};
}

/* An obstacle's side. Local. */
static inline shard_contact_side shard_contact_obstacle_side(const shard_obstacle_def *o)
{
    return (shard_contact_side){o->friction, o->restitution, o->damping, 1};
}

/* The contact of side a (a body) with side b (a body or an obstacle). Local. */
static inline shard_contact_mixed shard_contact_mix(shard_contact_side a, shard_contact_side b)
{
    double e = fmax(a.restitution, b.restitution);
    if (b.obstacle)
        return (shard_contact_mixed){b.friction, e, b.damping};
    return (shard_contact_mixed){sqrt(a.friction * b.friction), e, 0.5 * (a.damping + b.damping)};
}

/* Candidates of a smooth body reach this many times its contact radius. */
#define SHARD_CONTACT_SMOOTH_REACH 2.2360679774997896964

/* The contact constants of body b from its material and spacing: radius = spacing / 2, k = the material's
 * contact stiffness or, when 'auto', E * spacing (the stiffness of a cube of side `spacing` under uniaxial
 * load), k_t from k and the material's nu. Local. */
void shard_contact_params_init(const shard_scene *sc, int b, shard_contact_params *cp);

/* The surface normals nu_i of the owned particles of smooth bodies (above) from their unbroken bonds (rows by
 * partner id) at the current positions of the particles and their bond ghosts, into nrm (3 per particle);
 * zero for the particles of other bodies.  Local. */
void shard_contact_normals(const shard_particles *p, const shard_csr *bonds, const shard_contact_params *cp,
                           double *nrm);

/* own (per body; NULL: none) marks the bodies whose matter module resolves their contacts with each other and
 * with obstacles (rigid bodies, matter.h): the functions below skip pairs of two such bodies and their
 * particles' obstacle contacts. */

/* f += forces from particle-particle contacts of owned particles with their candidates (surface normals in nrm
 * for every local particle where a body is smooth; may be NULL otherwise), with the tangential
 * memory of hist_in (may be NULL: none) advanced by the motion of the last dt (0 at start-up) into hist_out
 * (rewritten: one row per owned particle); returns the number of active contacts.  Candidates of the
 * particle's own body (present only for bodies that touch themselves: crack faces, fragments) are skipped
 * while an unbroken bond joins the two (bonds: the reference bonds, rows by partner id, with their flags in
 * broken; NULL: none): the solid holds them; a pair whose bond broke touches at the smaller of r_i + r_j and
 * its rest distance. Local. */
size_t shard_contact_pairs(const shard_particles *p, const double *nrm, const shard_csr *cand, const shard_csr *bonds,
                           const uint8_t *broken, const shard_contact_params *cp, const uint8_t *own, double dt,
                           const shard_pairlist *hist_in, shard_pairlist *hist_out, double *f);

/* The same for obstacles at time t (memory keyed by obstacle index). Local. */
size_t shard_contact_obstacles(const shard_particles *p, const shard_contact_params *cp, const uint8_t *own,
                               int n_obstacles, const shard_obstacle_def *obs, double t, double dt,
                               const shard_pairlist *hist_in, shard_pairlist *hist_out, double *f);

/* The elastic energy of the contact springs at the current positions, 1/2 k delta^2 + 1/2 k_t |xi|^2 (times the
 * pair's weight between smooth bodies) with the
 * tangential displacements xi of `hist` (the latest memory; NULL: none), handed to add(acc, value) per contact
 * side: each particle-particle contact is handed half by either owner, an obstacle contact whole. Local. */
void shard_contact_pairs_energy(const shard_particles *p, const double *nrm, const shard_csr *cand,
                                const shard_csr *bonds, const uint8_t *broken, const shard_contact_params *cp,
                                const uint8_t *own, const shard_pairlist *hist, void (*add)(void *acc, double value),
                                void *acc);
void shard_contact_obstacles_energy(const shard_particles *p, const shard_contact_params *cp, const uint8_t *own,
                                    int n_obstacles, const shard_obstacle_def *obs, double t,
                                    const shard_pairlist *hist, void (*add)(void *acc, double value), void *acc);

#endif
