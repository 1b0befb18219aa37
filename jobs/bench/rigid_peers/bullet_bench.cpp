/* The benchmark scenes (scene.h) in Bullet (Debian's libbullet-dev; single precision, btScalar = float): a
 * btDiscreteDynamicsWorld with the btSequentialImpulseConstraintSolver, one internal step of exactly DT per call
 * (stepSimulation(DT, 0): no sub-stepping, no interpolation), no CCD, no sleeping.
 *
 *   bullet_bench SCENE SIZE T DT ITERATIONS [friction_dirs=1|2] [wall=W] [tilt=A] [spin=S] [sample=K]
 *
 * Solver: sequential impulses, i.e. projected Gauss-Seidel on velocity-level contact rows, ITERATIONS sweeps per
 * step, warm-started from the previous step's impulses (factor m_warmstartingFactor); each sweep does every normal
 * row, then every friction row.  Penetration is fed back as a velocity bias m_erp2 * depth / DT (Baumgarte), except
 * for penetrations deeper than -m_splitImpulsePenetrationThreshold, which a separate position-only pass ("split
 * impulse") resolves without adding kinetic energy.  Contact points closer than the breaking threshold but not
 * touching are kept (speculative): the solver lets them close their gap within the step.  Bullet's defaults stay for
 * all of these; the values used are printed (bullet_erp2=... etc.).
 *
 * Friction: each contact row's bound is mu times the same contact's normal impulse of the current sweep.  By default
 * (friction_dirs=2, SOLVER_USE_2_FRICTION_DIRECTIONS) a contact has two rows: one along the relative tangential
 * velocity at the start of the step (an arbitrary tangent when that velocity is below about 3e-4 m/s) and one
 * perpendicular to it, bounded independently: a square of half width mu f_n turned to face the sliding direction,
 * so a sliding contact gets exactly mu f_n against its motion, and a resting one up to sqrt(2) mu f_n diagonally.
 * friction_dirs=1 is Bullet's own default: only the first row, no friction across the sliding direction.
 * Bullet multiplies the two bodies' friction coefficients; the combining callback here returns PEER_FRICTION for
 * every pair instead, and 0 for restitution. */
#include "scene.h"

#include <btBulletDynamicsCommon.h>
#include <cstdio>
#include <cstdlib>
#include <vector>

#ifndef PEER_ENGINE_VERSION
#define PEER_ENGINE_VERSION "unknown"
#endif

static const char bullet_bench_help[] =
    "  friction_dirs=D  friction rows per contact point: 2 (default) or 1 (Bullet's own default)\n";

static btScalar bullet_bench_friction(const btCollisionObject *, const btCollisionObject *)
{
    return btScalar(PEER_FRICTION);
}

static btScalar bullet_bench_restitution(const btCollisionObject *, const btCollisionObject *)
{
    return btScalar(0);
}

/* The poses and velocities of every cube into scene.h's arrays. */
static void bullet_bench_gather(const std::vector<btRigidBody *> &bodies, double *x, double *R, double *v, double *w)
{
    for (size_t i = 0; i < bodies.size(); i++) {
        const btTransform &t = bodies[i]->getWorldTransform();
        const btVector3 &p = t.getOrigin();
        const btMatrix3x3 &b = t.getBasis();
        const btVector3 &lv = bodies[i]->getLinearVelocity();
        const btVector3 &av = bodies[i]->getAngularVelocity();
        for (int k = 0; k < 3; k++) {
            x[3 * i + k] = p[k];
            v[3 * i + k] = lv[k];
            w[3 * i + k] = av[k];
            for (int c = 0; c < 3; c++)
                R[9 * i + 3 * k + c] = b[k][c];
        }
    }
}

/* The contact points of the step just done, with their signed distances (negative = penetrating), as the
 * narrow phase left them in the persistent manifolds: what the solver got. */
static void bullet_bench_contacts(btCollisionDispatcher *dispatcher, peer_figures *fig)
{
    int manifolds = dispatcher->getNumManifolds();
    for (int m = 0; m < manifolds; m++) {
        const btPersistentManifold *pm = dispatcher->getManifoldByIndexInternal(m);
        for (int k = 0; k < pm->getNumContacts(); k++) {
            const btManifoldPoint &cp = pm->getContactPoint(k);
            if (cp.getDistance() <= pm->getContactProcessingThreshold())
                peer_figures_contact(fig, cp.getDistance());
        }
    }
}

int main(int argc, char **argv)
{
    peer_scene scene;
    int rc = peer_scene_parse(argc, argv, bullet_bench_help, &scene);
    if (rc != 0)
        return rc;
    double dirs = peer_scene_option(&scene, "friction_dirs", 2);
    if (dirs != 1 && dirs != 2) {
        std::fprintf(stderr, "error: friction_dirs must be 1 or 2\n");
        return 1;
    }
    if (peer_scene_unused_options(&scene))
        return 1;

    gCalculateCombinedFrictionCallback = bullet_bench_friction;
    gCalculateCombinedRestitutionCallback = bullet_bench_restitution;
    btDefaultCollisionConfiguration config;
    btCollisionDispatcher dispatcher(&config);
    btDbvtBroadphase broadphase;
    btSequentialImpulseConstraintSolver solver;
    btDiscreteDynamicsWorld world(&dispatcher, &broadphase, &solver, &config);
    world.setGravity(btVector3(0, 0, btScalar(PEER_GRAVITY_Z)));
    btContactSolverInfo &info = world.getSolverInfo();
    info.m_numIterations = scene.iterations;
    info.m_restitution = 0;
    if (dirs == 2)
        info.m_solverMode |= SOLVER_USE_2_FRICTION_DIRECTIONS;

    std::vector<btCollisionShape *> shapes;
    std::vector<btRigidBody *> planes;
    for (int p = 0; p < scene.plane_count; p++) {
        const peer_plane *pl = &scene.planes[p];
        btCollisionShape *shape = new btStaticPlaneShape(btVector3(btScalar(pl->n[0]), btScalar(pl->n[1]),
                                                                   btScalar(pl->n[2])), btScalar(pl->d));
        btRigidBody::btRigidBodyConstructionInfo ci(0, nullptr, shape);
        ci.m_friction = btScalar(PEER_FRICTION);
        ci.m_restitution = 0;
        btRigidBody *body = new btRigidBody(ci);
        world.addRigidBody(body);
        shapes.push_back(shape);
        planes.push_back(body);
    }
    const btScalar h = btScalar(0.5 * PEER_CUBE_SIDE);
    btBoxShape *box = new btBoxShape(btVector3(h, h, h));
    shapes.push_back(box);
    const btScalar inertia = btScalar(PEER_CUBE_INERTIA);
    std::vector<btRigidBody *> bodies;
    bodies.reserve(scene.count);
    for (int i = 0; i < scene.count; i++) {
        btRigidBody::btRigidBodyConstructionInfo ci(btScalar(PEER_CUBE_MASS), nullptr, box,
                                                    btVector3(inertia, inertia, inertia));
        const double *q = scene.q0 + 4 * i, *c = scene.x0 + 3 * i;
        ci.m_startWorldTransform =
            btTransform(btQuaternion(btScalar(q[1]), btScalar(q[2]), btScalar(q[3]), btScalar(q[0])),
                        btVector3(btScalar(c[0]), btScalar(c[1]), btScalar(c[2])));
        ci.m_friction = btScalar(PEER_FRICTION);
        ci.m_restitution = 0;
        btRigidBody *body = new btRigidBody(ci);
        body->setActivationState(DISABLE_DEACTIVATION);
        body->setAngularVelocity(btVector3(btScalar(scene.w0[3 * i]), btScalar(scene.w0[3 * i + 1]),
                                           btScalar(scene.w0[3 * i + 2])));
        world.addRigidBody(body);
        bodies.push_back(body);
    }

    peer_report_scene(&scene, "bullet", PEER_ENGINE_VERSION);
    std::printf("bullet_header_version=%d\nbullet_scalar_bytes=%d\n", btGetVersion(), (int)sizeof(btScalar));
    std::printf("bullet_solver=btSequentialImpulseConstraintSolver (%d iterations, solver mode %d)\n",
                info.m_numIterations, info.m_solverMode);
    std::printf("bullet_friction_dirs=%d\n", (int)dirs);
    std::printf("bullet_erp2=%g\nbullet_global_cfm=%g\nbullet_split_impulse=%d\nbullet_split_threshold_m=%g\n",
                (double)info.m_erp2, (double)info.m_globalCfm, info.m_splitImpulse,
                (double)info.m_splitImpulsePenetrationThreshold);
    std::printf("bullet_warmstarting_factor=%g\nbullet_box_margin_m=%g\nbullet_contact_breaking_m=%g\n",
                (double)info.m_warmstartingFactor, (double)box->getMargin(),
                (double)box->getContactBreakingThreshold(gContactBreakingThreshold));
    std::fflush(stdout);

    std::vector<double> x(3 * scene.count), R(9 * scene.count), v(3 * scene.count), w(3 * scene.count);
    peer_figures fig;
    peer_figures_init(&fig);
    const btScalar dt = btScalar(scene.dt);
    for (long step = 0; step < scene.steps; step++) {
        double t0 = peer_clock();
        world.stepSimulation(dt, 0);
        double t1 = peer_clock();
        fig.engine_s += t1 - t0;
        fig.steps++;
        peer_figures_step_begin(&fig);
        bullet_bench_contacts(&dispatcher, &fig);
        int bad = 0;
        if (peer_figures_due(&fig, &scene)) {
            bullet_bench_gather(bodies, x.data(), R.data(), v.data(), w.data());
            bad = peer_figures_observe(&fig, &scene, x.data(), R.data());
        }
        fig.measure_s += peer_clock() - t1;
        if (bad)
            break;
    }
    bullet_bench_gather(bodies, x.data(), R.data(), v.data(), w.data());
    peer_report_figures(&scene, &fig, "bullet", PEER_ENGINE_VERSION, x.data(), R.data(), v.data(), w.data());

    for (btRigidBody *b : bodies) {
        world.removeRigidBody(b);
        delete b;
    }
    for (btRigidBody *b : planes) {
        world.removeRigidBody(b);
        delete b;
    }
    for (btCollisionShape *s : shapes)
        delete s;
    peer_scene_destroy(&scene);
    return fig.diverged_step >= 0 ? 3 : 0;
}
