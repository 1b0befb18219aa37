/* Contact: penalty contact between particles of different bodies and between particles and obstacles.
 *
 * A contact between spheres of radius r_i, r_j (half the bodies' spacings) with overlap
 * delta = r_i + r_j - |x_j - x_i| > 0 pushes them apart with N = max(0, k delta - c_n v_n), where k is the
 * series stiffness k_i k_j / (k_i + k_j), c_n = 2 zeta sqrt(k m_eff) (zeta = the materials' mean damping
 * fraction) and v_n the normal approach velocity; Coulomb friction opposes the tangential slip with magnitude
 * min(mu N, c_t |v_t|), c_t = 2 sqrt(k m_eff) (critically damped regularisation of the stick regime),
 * mu = sqrt(mu_i mu_j).  Every pair formula is symmetric in i and j, so the force i receives is exactly the
 * negative of the one j receives, though each is computed by its own owner.  Obstacles are analytic (plane,
 * sphere, box), move with a prescribed velocity, and use their own friction and damping.  No history is
 * kept between steps, so results do not depend on when candidate lists are rebuilt.
 */
#ifndef SHARD_CONTACT_H
#define SHARD_CONTACT_H

#include "shard/particles.h"
#include "shard/scene.h"

typedef struct shard_contact_params { /* per body */
    double radius;    /* m: half the spacing */
    double k;         /* N/m */
    double zeta;      /* fraction of critical damping */
    double mu;        /* friction coefficient */
} shard_contact_params;

/* The contact constants of body b from its material and spacing: radius = spacing / 2, k = the material's
 * contact stiffness or, when 'auto', E * spacing (the stiffness of a cube of side `spacing` under uniaxial
 * load). Local. */
void shard_contact_params_init(const shard_scene *sc, int b, shard_contact_params *cp);

/* f += forces from particle-particle contacts of owned particles with their candidates; returns the number of
 * active contacts. Local. */
size_t shard_contact_pairs(const shard_particles *p, const shard_csr *cand, const shard_contact_params *cp,
                           double *f);

/* f += obstacle forces on owned particles at time t; returns the number of active contacts. Local. */
size_t shard_contact_obstacles(const shard_particles *p, const shard_contact_params *cp, int n_obstacles,
                               const shard_obstacle_def *obs, double t, double *f);

#endif
