/* Integrate: velocity Verlet (kick-drift-kick) for owned particles, prescribed velocities, the accelerations
 * and the Verlet-skin check.
 *
 *   v(n+1/2) = v(n) + dt/2 a(n);  x(n+1) = x(n) + dt v(n+1/2);  a(n+1) = f(x(n+1), v(n+1/2)) / m + g;
 *   v(n+1) = v(n+1/2) + dt/2 a(n+1)
 * (velocity Verlet, as in Müller et al. 2004).  Velocity-dependent forces (damping, contact damping and friction) see
 * the half-step velocity.  Particles with a prescribed velocity move with it exactly.
 */
#ifndef SHARD_INTEGRATE_H
#define SHARD_INTEGRATE_H

#ifndef SHARD_LAYER_PHYSICS
#error "shard/integrate.h is a physics header: only its layer and the layers above it (the driver) include it"
#endif

#include "shard/particles.h"

/* v += h a for owned particles; prescribed ones get v = vpres. Local. */
void shard_integrate_kick(shard_particles *p, double h);
/* x += dt v for owned particles. Local. */
void shard_integrate_drift(shard_particles *p, double dt);
/* a = f / m + g for owned particles. Local. */
void shard_integrate_accel(shard_particles *p, const double *f, const double g[3]);
/* The skin check and the domain check in one pass over the owned particles: *move2 = the largest squared
 * displacement since the last contact build; returns the index of the first particle whose position is not
 * finite or has a coordinate beyond +-limit (m), or -1 when every position is sane.  Local. */
long shard_integrate_scan(const shard_particles *p, double limit, double *move2);

#endif
