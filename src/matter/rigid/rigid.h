/* Rigid: bodies that move as wholes, with non-penetrating contact (Baraff 1989, "Analytical methods for dynamic
 * simulation of non-penetrating rigid bodies", SIGGRAPH), the physics of the kind `rigid` (rigid_module.c is the
 * module, rigid_contact.c its contact solver over the ranks; this file knows nothing about ranks).
 *
 * A rigid body has its exact mass, centre of mass and inertia (massprops.h: primitives analytically, closed
 * meshes by the divergence theorem); its body frame is its principal frame, and its state is the centre of mass
 * x, the orientation q (unit quaternion, body to world), the momentum P = M v and the angular momentum L, all in
 * the world frame.  Its particles (sampled like a solid's, kept for output, for contact with deformable
 * matter and for fracture later) ride along: x_i = x + R(q) r_i, v_i = v + w x (x_i - x), with r_i fixed in the
 * body frame.
 *
 * One step of length dt (velocity Verlet, the particles' own scheme, so that forces exchanged with deformable
 * matter balance momentum at every step end):
 *   1. half kick: v += dt/2 (F/M + g), L += dt/2 tau, with the force and torque of the last evaluation;
 *   2. contacts at the current positions, among rigid bodies and with obstacles, as points with a normal, a
 *      depth and a stable feature id (collide.h, or through surface particles for shapes without an exact pair);
 *   3. impulses at the velocity level for all contacts at once: the discrete form of Baraff's complementarity
 *      (f >= 0, separation acceleration >= 0, f . a = 0 becomes lambda >= 0, v_n+ >= target,
 *      lambda (v_n+ - target) = 0; Stewart & Trinkle 1996, Anitescu & Potra 1997), with target = -e v_n- for a
 *      collision (approach faster than rigid.restitution_threshold: Newton's restitution), 0 for a resting
 *      contact and -gap/dt for a speculative one (found within rigid.margin, not yet touching), and Coulomb
 *      friction on the exact cone |lambda_t| <= mu lambda_n; a resting contact's force is lambda / dt;
 *   4. split-impulse position correction: pseudo-velocities that remove rigid.position_correction of each
 *      penetration beyond rigid.slop move the positions but are then dropped, so they add no energy;
 *   5. drift: x += dt v; the orientation turns by the free-rotor step of Dullweber, Leimkuhler & McLachlan
 *      (rotation.h: exact rotations about the principal axes, symplectic, |L| kept exactly: the gyroscopic term
 *      is in it);
 *   6. after the force evaluation: F, tau summed exactly over the particles (xsum), second half kick.
 * The module's contact solver (rigid_contact.c) sweeps these kernels as projected Gauss-Seidel over a colouring
 * of the body pairs computed from their keys, so that no result depends on which rank visits a contact; the
 * impulses of the last step start the next one (warm start, by contact key).
 */
#ifndef SHARD_RIGID_H
#define SHARD_RIGID_H

#include "rigid/collide.h"
#include "shard/scene.h"

/* The keys of a rigid body (its shard_body_def.kind_def): how it moves, by its forces and contacts, or with its
 * initial velocity and angular velocity whatever touches it (an infinite mass to its contacts). */
enum { SHARD_MOTION_DYNAMIC = 0, SHARD_MOTION_KINEMATIC = 1 };
typedef struct shard_rigid_body_def {
    int motion; /* SHARD_MOTION_DYNAMIC (default) or SHARD_MOTION_KINEMATIC */
} shard_rigid_body_def;

/* The contact solver's settings: the scene's section `rigid` (the module's own). */
typedef struct shard_rigid_def {
    long iterations;              /* most projected Gauss-Seidel sweeps per step, >= 1 (default 300) */
    double tolerance;             /* stop when no contact impulse changed by more than this fraction of the largest
                                   * one in an iteration, > 0 (default 1e-6) */
    double restitution_threshold; /* m/s, >= 0: a contact approaching faster is a collision and bounces with its
                                   * restitution (default 0.05) */
    double position_correction;   /* fraction of a penetration removed per step (split impulse), in [0, 1]
                                   * (default 0.2) */
    double slop;                  /* penetration left alone, in units of the smaller particle spacing, >= 0 (default
                                   * 0.001) */
    double margin;                /* contacts found this far apart (units of the smaller spacing) are speculative,
                                   * >= 0 (default 0.5) */
} shard_rigid_def;

/* The scene's `rigid` section as read (its defaults when the scene has none). */
const shard_rigid_def *shard_rigid_settings_of(const shard_scene *sc);

/* How a body's contacts are found: by an exact pair of primitives (collide.h), or through its surface
 * particles (small spheres) against the other body's shape (meshes, and cylinders against anything but planes
 * and spheres). */
enum { SHARD_RIGID_PRIMITIVE = 0, SHARD_RIGID_PARTICLES = 1 };

typedef struct shard_rigid_body {
    int rigid;                 /* 1: a rigid body (the slot of a body of another kind stays zero) */
    int kinematic;             /* moves with its initial velocity and angular velocity, an infinite mass */
    int contact_by;            /* SHARD_RIGID_PRIMITIVE or SHARD_RIGID_PARTICLES */
    shard_collide_shape shape; /* its primitive in the shape frame (pos, R of the shape frame in the body frame) */
    double mass, inv_mass;     /* kg; inv_mass 0 for a kinematic body */
    double inertia[3];         /* principal moments, kg m^2 */
    double inv_inertia[3];     /* 0 for a kinematic body */
    double spacing;
    double bound;        /* radius of a sphere about the centre of mass holding the shape, m */
    double x0[3], q0[4]; /* the pose of the rest positions (the particles' X): r_i = R(q0)^T (X_i - x0) */
    double *surf;        /* SHARD_RIGID_PARTICLES: the surface particles' body-frame positions (3 n_surf) */
    size_t n_surf;
    /* State (replicated on every rank, checkpointed): */
    double x[3], q[4], v[3], L[3];
    double F[3], tau[3]; /* force (without gravity) and torque about x of the last evaluation */
    /* Derived at each step: */
    double R[9], w[3];          /* rotation matrix of q, angular velocity (from L, always by shard_rigid_derive) */
    double vp[3], Lp[3], wp[3]; /* pseudo-velocities of the position correction (wp from Lp) */
    double Fc[3], tauc[3];      /* the contacts' force and torque about x over the last step (impulses / dt), for
                                 * output: M dv and dL of the impulses, the same on every rank */
    int owner;                  /* the rank that finds and solves its contacts this step */
} shard_rigid_body;

/* A contact point between body a and body b (b >= n_bodies: obstacle b - n_bodies), a < b. */
typedef struct shard_rigid_key {
    int32_t a, b;
    uint32_t feature;
} shard_rigid_key;

typedef struct shard_rigid_contact {
    shard_rigid_key key;
    double p[3], n[3], t1[3], t2[3]; /* point; normal from b to a; tangents */
    double depth;                    /* > 0: overlapping; < 0: apart by -depth (speculative) */
    double ra[3], rb[3];             /* p - x_a, p - x_b */
    double K[9];                     /* the inverse mass matrix at the point in the basis (n, t1, t2) */
    double target, target_pos;       /* normal velocity targets: of the impulses, of the position correction */
    double mu, e;
    double ln, lt1, lt2, lp;     /* impulses: normal, tangential, position correction */
    double dln, dlt1, dlt2, dlp; /* their changes in the last iteration */
} shard_rigid_contact;

/* The warm start of a contact: its key and its impulses of the last step (the tangential one in the world frame,
 * so that it survives a turn of the tangent basis). */
typedef struct shard_rigid_memory {
    shard_rigid_key key;
    double ln, lt[3];
} shard_rigid_memory;

/* Orders keys: a, then b, then feature. */
int shard_rigid_key_cmp(const shard_rigid_key *x, const shard_rigid_key *y);

/* Body b's rigid data from the scene: mass properties of its shape at its material's density (meshes read with
 * shard_mesh_read), its primitive, its initial state (x at the centre of mass, q the principal frame, v and L
 * from the body's velocity and angular velocity about the centre of mass).  0, or SHARD_EXIT_INPUT with
 * file:line:key in err. Local. */
int shard_rigid_body_init(const shard_scene *sc, int b, shard_rigid_body *rb, shard_error *err);
/* Frees what body_init allocated (the surface particles). Local. */
void shard_rigid_body_free(shard_rigid_body *rb);

/* R from q, and w, wp from L, Lp (a kinematic body keeps its w).  Every rank derives them the same way from
 * the same state, so they agree bit for bit. Local. */
void shard_rigid_derive(shard_rigid_body *rb);
/* w and wp from L and Lp at the current R. Local. */
void shard_rigid_omega(shard_rigid_body *rb);
/* The velocity of the body's point p (world), with the pseudo-velocities when pseudo is set. Local. */
void shard_rigid_point_velocity(const shard_rigid_body *rb, const double p[3], int pseudo, double out[3]);
/* Half kick: v += h (F/M + g), L += h tau (nothing for a kinematic body). Local. */
void shard_rigid_kick(shard_rigid_body *rb, const double g[3], double h);
/* Drift over dt: x += dt (v + vp), the free-rotor turn with L, then the pseudo-turn wp dt. Local. */
void shard_rigid_drift(shard_rigid_body *rb, double dt);

/* The contact points of rigid body a with rigid body b (or with obstacle o when b is NULL: obs, at time t),
 * appended to *out (grown as needed), keyed (ia, ib, feature) with ib = n_bodies + o for an obstacle;
 * margin: the speculative distance, m.  Returns how many were appended. Local. */
size_t shard_rigid_collide(const shard_rigid_body *a, int ia, const shard_rigid_body *b, int ib,
                           const shard_obstacle_def *obs, double t, double margin, shard_rigid_contact **out, size_t *n,
                           size_t *cap);

/* Prepares contact c for the iterations: lever arms, tangents, effective masses, the targets (restitution with
 * threshold vthr, speculative, position correction beta over dt beyond slop), and the warm start from mem
 * (NULL: none).  b is NULL for an obstacle, whose
 * velocity at the point is vb_obst. Local. */
void shard_rigid_contact_setup(shard_rigid_contact *c, const shard_rigid_body *a, const shard_rigid_body *b,
                               const double vb_obst[3], double e, double mu, double dt, double vthr, double beta,
                               double slop, const shard_rigid_memory *mem);
/* One projected Jacobi update of contact c from the bodies' current velocities (pseudo = 1: of the position
 * correction's, normal only); sets c->dl* and returns the largest impulse change. Local. */
double shard_rigid_contact_solve(shard_rigid_contact *c, const shard_rigid_body *a, const shard_rigid_body *b,
                                 const double vb_obst[3], int pseudo);
/* Adds the impulse changes of contact c to body `which` (0: a, with the impulse; 1: b, with its reverse) into
 * dP, dL (pseudo: the position correction's). Local. */
void shard_rigid_contact_impulse(const shard_rigid_contact *c, int which, int pseudo, double dP[3], double dL[3]);
/* The same for the whole impulse (the warm start applied once). */
void shard_rigid_contact_total(const shard_rigid_contact *c, int which, double dP[3], double dL[3]);
/* Applies dP, dL to the body's (pseudo-)momenta, then derives its angular velocities. Local. */
void shard_rigid_apply(shard_rigid_body *rb, const double dP[3], const double dL[3], int pseudo);

#endif
