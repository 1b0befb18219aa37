/* The benchmark scenes (scene.h) in the Open Dynamics Engine (Debian's libode-dev, double precision): one world
 * stepped by dWorldQuickStep, one hash space, one contact joint per contact point, rebuilt every step.
 *
 *   ode_bench SCENE SIZE T DT ITERATIONS [erp=E] [cfm=C] [w=W] [layer=L] [wall=W] [tilt=A] [spin=S] [sample=K]
 *
 * Solver: dWorldQuickStep is ODE's iterative LCP solver: projected successive over-relaxation (Gauss-Seidel on the
 * constraint rows with relaxation factor w, dWorldSetQuickStepW) for ITERATIONS sweeps per step, velocity level,
 * with position errors fed back as a velocity bias of ERP * depth / DT (Baumgarte) and a constraint force mixing
 * CFM that softens every row (a spring of stiffness ERP / (DT CFM) per row).  Without erp=, cfm=, w= or layer= the
 * library's own defaults stay; the values used are printed (ode_erp=... etc.).
 *
 * Friction: every contact has mu = PEER_FRICTION with dContactApprox1, so each of the two friction rows is bounded
 * by mu times the same contact's normal impulse of the current sweep (the "friction pyramid").  Without
 * dContactApprox1 ODE would take mu as a constant force bound in newtons, independent of the normal force, which is
 * not Coulomb friction.  The two rows lie along fixed tangents of the contact normal (dPlaneSpace; no dContactFDir1)
 * and are bounded independently, so the admissible set is a square of half width mu f_n: it contains the Coulomb
 * disc |f_t| <= mu f_n and reaches sqrt(2) mu f_n along its diagonals (up to 41 % more friction, depending on the
 * sliding direction relative to the tangents; exact along them).  No restitution (no dContactBounce), no rolling
 * friction, no auto-disable (every body is stepped every step). */
#include "scene.h"

#include <ode/ode.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef PEER_ENGINE_VERSION
#define PEER_ENGINE_VERSION "unknown"
#endif

/* Contact points kept per geom pair: a face-on-face box pair gives up to 8, a box on a plane up to 4. */
#define ODE_BENCH_MAX_CONTACTS 8
/* Hash-space cell sizes 2^-4 .. 2^2 m: from a fraction of a cube (0.1 m) to the whole container. */
#define ODE_BENCH_HASH_MIN_LEVEL -4
#define ODE_BENCH_HASH_MAX_LEVEL 2

typedef struct ode_bench_run {
    dWorldID world;
    dSpaceID space;
    dJointGroupID contact_group;
    dSurfaceParameters surface;
    peer_figures *fig;
} ode_bench_run;

static const char ode_bench_help[] =
    "  erp=E       ODE world ERP (default: ODE's, 0.2)\n"
    "  cfm=C       ODE world CFM (default: ODE's, 1e-10 in double precision)\n"
    "  w=W         quickstep over-relaxation (default: ODE's, 1.3)\n"
    "  layer=L     contact surface layer in m (default: ODE's, 0)\n";

/* dSpaceCollide's callback: every contact point of a pair becomes a contact joint of this step. */
static void ode_bench_near(void *data, dGeomID g1, dGeomID g2)
{
    ode_bench_run *run = data;
    dBodyID b1 = dGeomGetBody(g1), b2 = dGeomGetBody(g2);
    if (b1 == NULL && b2 == NULL)
        return; /* two planes */
    dContact c[ODE_BENCH_MAX_CONTACTS];
    int n = dCollide(g1, g2, ODE_BENCH_MAX_CONTACTS, &c[0].geom, sizeof(dContact));
    for (int k = 0; k < n; k++) {
        c[k].surface = run->surface;
        dJointID j = dJointCreateContact(run->world, run->contact_group, &c[k]);
        dJointAttach(j, b1, b2);
        peer_figures_contact(run->fig, -c[k].geom.depth);
    }
}

/* The poses and velocities of every cube into scene.h's arrays. */
static void ode_bench_gather(dBodyID *bodies, int count, double *x, double *R, double *v, double *w)
{
    for (int i = 0; i < count; i++) {
        const dReal *p = dBodyGetPosition(bodies[i]);
        const dReal *r = dBodyGetRotation(bodies[i]); /* 3 x 4, row-major */
        const dReal *lv = dBodyGetLinearVel(bodies[i]);
        const dReal *av = dBodyGetAngularVel(bodies[i]);
        for (int k = 0; k < 3; k++) {
            x[3 * i + k] = p[k];
            v[3 * i + k] = lv[k];
            w[3 * i + k] = av[k];
            for (int c = 0; c < 3; c++)
                R[9 * i + 3 * k + c] = r[4 * k + c];
        }
    }
}

int main(int argc, char **argv)
{
    peer_scene scene;
    int rc = peer_scene_parse(argc, argv, ode_bench_help, &scene);
    if (rc != 0)
        return rc;

    dInitODE2(0);
    dAllocateODEDataForThread(dAllocateMaskAll);
    ode_bench_run run = {0};
    run.world = dWorldCreate();
    run.space = dHashSpaceCreate(0);
    run.contact_group = dJointGroupCreate(0);
    dHashSpaceSetLevels(run.space, ODE_BENCH_HASH_MIN_LEVEL, ODE_BENCH_HASH_MAX_LEVEL);
    dWorldSetGravity(run.world, 0, 0, PEER_GRAVITY_Z);
    dWorldSetQuickStepNumIterations(run.world, scene.iterations);
    dWorldSetERP(run.world, peer_scene_option(&scene, "erp", dWorldGetERP(run.world)));
    dWorldSetCFM(run.world, peer_scene_option(&scene, "cfm", dWorldGetCFM(run.world)));
    dWorldSetQuickStepW(run.world, peer_scene_option(&scene, "w", dWorldGetQuickStepW(run.world)));
    dWorldSetContactSurfaceLayer(run.world,
                                 peer_scene_option(&scene, "layer", dWorldGetContactSurfaceLayer(run.world)));
    dWorldSetAutoDisableFlag(run.world, 0);
    if (peer_scene_unused_options(&scene))
        return 1;

    run.surface.mode = dContactApprox1;
    run.surface.mu = PEER_FRICTION;

    for (int p = 0; p < scene.plane_count; p++) {
        const peer_plane *pl = &scene.planes[p];
        dCreatePlane(run.space, pl->n[0], pl->n[1], pl->n[2], pl->d);
    }
    dBodyID *bodies = malloc(sizeof(dBodyID) * (size_t)scene.count);
    double *x = malloc(sizeof(double) * 3 * (size_t)scene.count);
    double *R = malloc(sizeof(double) * 9 * (size_t)scene.count);
    double *v = malloc(sizeof(double) * 3 * (size_t)scene.count);
    double *w = malloc(sizeof(double) * 3 * (size_t)scene.count);
    if (!bodies || !x || !R || !v || !w) {
        fprintf(stderr, "error: out of memory for %d bodies\n", scene.count);
        return 1;
    }
    for (int i = 0; i < scene.count; i++) {
        dBodyID b = dBodyCreate(run.world);
        dMass m;
        dMassSetBox(&m, PEER_DENSITY, PEER_CUBE_SIDE, PEER_CUBE_SIDE, PEER_CUBE_SIDE);
        dBodySetMass(b, &m);
        dBodySetPosition(b, scene.x0[3 * i], scene.x0[3 * i + 1], scene.x0[3 * i + 2]);
        dQuaternion q = {scene.q0[4 * i], scene.q0[4 * i + 1], scene.q0[4 * i + 2], scene.q0[4 * i + 3]};
        dBodySetQuaternion(b, q);
        dBodySetAngularVel(b, scene.w0[3 * i], scene.w0[3 * i + 1], scene.w0[3 * i + 2]);
        dBodySetAutoDisableFlag(b, 0);
        dGeomID g = dCreateBox(run.space, PEER_CUBE_SIDE, PEER_CUBE_SIDE, PEER_CUBE_SIDE);
        dGeomSetBody(g, b);
        bodies[i] = b;
    }

    peer_report_scene(&scene, "ode", PEER_ENGINE_VERSION);
    printf("ode_config=%s\n", dGetConfiguration());
    printf("ode_solver=dWorldQuickStep (projected SOR, %d iterations)\n", dWorldGetQuickStepNumIterations(run.world));
    printf("ode_erp=%g\node_cfm=%g\node_w=%g\node_surface_layer=%g\n", dWorldGetERP(run.world),
           dWorldGetCFM(run.world), dWorldGetQuickStepW(run.world), dWorldGetContactSurfaceLayer(run.world));
    printf("ode_friction=dContactApprox1 (pyramid: two fixed tangent rows, each |f| <= mu f_n)\n");
    fflush(stdout);

    peer_figures fig;
    peer_figures_init(&fig);
    run.fig = &fig;
    for (long step = 0; step < scene.steps; step++) {
        double t0 = peer_clock();
        peer_figures_step_begin(&fig);
        dSpaceCollide(run.space, &run, ode_bench_near);
        dWorldQuickStep(run.world, scene.dt);
        dJointGroupEmpty(run.contact_group);
        double t1 = peer_clock();
        fig.engine_s += t1 - t0;
        fig.steps++;
        int bad = 0;
        if (peer_figures_due(&fig, &scene)) {
            ode_bench_gather(bodies, scene.count, x, R, v, w);
            bad = peer_figures_observe(&fig, &scene, x, R);
        }
        fig.measure_s += peer_clock() - t1;
        if (bad)
            break;
    }
    ode_bench_gather(bodies, scene.count, x, R, v, w);
    peer_report_figures(&scene, &fig, "ode", PEER_ENGINE_VERSION, x, R, v, w);

    dJointGroupDestroy(run.contact_group);
    dSpaceDestroy(run.space);
    dWorldDestroy(run.world);
    dCloseODE();
    free(bodies);
    free(x);
    free(R);
    free(v);
    free(w);
    peer_scene_destroy(&scene);
    return fig.diverged_step >= 0 ? 3 : 0;
}
