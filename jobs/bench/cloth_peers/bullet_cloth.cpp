/* The cloth benchmark's scene in Bullet (Debian's libbullet-dev 3.24, BulletSoftBody; single precision,
 * btScalar = float): a square cloth of N x N cells and side L, flat at height R + GAP above the centre of a static
 * sphere of radius R centred at the origin, falls under gravity (-9.81 z) and drapes over it.  One internal step of
 * exactly DT per call (stepSimulation(DT, 0): no sub-stepping, no interpolation), STEPS steps, no sleeping.
 *
 *   bullet_cloth key=value ...      (every key below; the defaults are the script's)
 *     n=250 side=1 radius=0.3 gap=0.02 dt=1e-4 steps=3000 areal=0.2 membrane=20 bending=1.875e-6 beta=1e-5
 *     thickness=0.001 friction=0.3 world=deformable|classic self=1 bend_k=0 piterations=10
 *     out=FILE
 *
 * The mesh is Shard's grid, vertex for vertex: vertex (i, j) at corner + (i L/N, j L/N, 0) is node j (N + 1) + i,
 * each cell cut along the diagonal from (i, j) to (i + 1, j + 1) into the triangles (i, j) (i+1, j) (i+1, j+1) and
 * (i, j) (i+1, j+1) (i, j+1) (not btSoftBodyHelpers::CreatePatch, whose cells alternate their diagonals); one link
 * (spring) per mesh edge: the 2 N (N + 1) grid lines and the N^2 diagonals.  A node's mass is a third of its
 * triangles' area times `areal` (kg/m^2, Shard's density x thickness), as in Shard.
 *
 * Two of Bullet's soft-body solvers (world=):
 *   deformable  btDeformableMultiBodyDynamicsWorld (btDeformableBodySolver): the springs as a
 *               btDeformableMassSpringForce, the spring forces explicit (symplectic Euler), their damping
 *               implicit (a conjugate-gradient solve every step), contacts as velocity projections.  This is
 *               setImplicit(false), as Bullet's own cloth demos use it: with setImplicit(true) a mass-spring
 *               cloth does not move at all in 3.24 (the implicit path applies forces through each node's
 *               m_effectiveMass_inv, which only btDeformableLinearElasticityForce, for tetrahedra, fills in),
 *               so Bullet's cloth here is bound by a stability limit on the step just as Shard's is.
 *               Collisions: SDF_RD | SDF_RDN (nodes against the sphere; SDF_RD alone collides nothing in 3.24)
 *               | VF_DD.  SELF-COLLISION: this is the solver of Bullet 3.24 that has it for a triangle mesh:
 *               VF_DD with setSelfCollision(true) (self=1) makes btSoftBody::defaultCollisionHandler(this) run
 *               CollideFF_DD (face-node proximity within the margins) every step, and the world adds a
 *               repulsion impulse and up to 5 rounds of continuous face-node collision detection
 *               (performGeometricCollisions).  In the benchmark's drape of a 1 mm cloth it never acts: the final
 *               state is the same with self=0 (docs/performance.md, "Cloth against Bullet").
 *               The springs have an SI stiffness, so here the cloth matches Shard's membrane: for this mesh a
 *               spring of stiffness k on every edge gives the in-plane moduli C11 = C22 = 3k/2, C12 = C66 = k/2
 *               (per unit length; the diagonals, all one way, add a shear-normal coupling C16 = C26 = k/2 that
 *               an isotropic sheet lacks), i.e. the plane-stress sheet of E t = 4k/3 and nu = 1/3 along the
 *               grid axes: k = 3/4 `membrane` (E t, N/m) -- the script gives Shard nu = 1/3.  Damping:
 *               d = beta k on every spring (Shard's stiffness-proportional damping time beta).  Bending:
 *               Bullet's mass-spring force has no hinge bending; bend_k > 0 adds springs of stiffness bend_k
 *               between vertices two apart along the grid lines (Bullet's own bending links), whose energy
 *               grows as the fourth power of the fold angle near flat, so no value matches Shard's D
 *               (`bending`, N m, only reported); the default bend_k=0 leaves the Bullet cloth with no bending
 *               stiffness.
 *   classic     btSoftRigidDynamicsWorld (btDefaultSoftBodySolver): position-based links (kLST = 1, the
 *               stiffest setting: each of `piterations` Gauss-Seidel sweeps per step moves every link's ends
 *               towards its rest length), no velocity iterations.  kLST, kDP and the sweeps have no SI meaning:
 *               the cloth stretches less with more sweeps, whatever `membrane` says, which is only reported.
 *               kDP = 0.  SELF-COLLISION: none is possible in this solver for a cloth in Bullet 3.24.  The world
 *               calls psb->defaultCollisionHandler(psb) each step, but for VF_SS that function skips
 *               this == psb ("only self-collision for Cluster, not Vertex-Face yet"), and CL_SS | CL_SELF never
 *               reaches the cluster collider either: the switch is on collisions & SVSmask (0x00f0), which is
 *               then 0x60 and matches no case.  This program sets SDF_RS | VF_SS and reports
 *               self_collision=none.
 * Both: the sphere is a static btRigidBody with a btSphereShape; Bullet finds node-sphere contacts through the
 * world's sparse signed-distance field of the shape, sampled here at voxels of L/N (the default 0.25 m would round
 * a 0.3 m sphere badly).  The soft body's collision margin is thickness/2 (its nodes stay that far from the
 * sphere; two faces of the cloth are pushed apart when closer than a thickness) -- Shard's contact radius.
 * Friction: Bullet multiplies the body's kDF by the sphere's friction; kDF = friction, the sphere's 1.  kCHR =
 * kKHR = 1 (full contact hardness).
 *
 * Printed: key=value lines (the settings, then first_step_s, wall_s: the time of the stepping loop only, less
 * the first step, and steps_per_s = (steps - 1) / wall_s; the final extent of the cloth), one csv= row.
 * out=FILE: the final node positions and the triangles, in the mesh
 * dump read by intersections (intersections.c): "SHCLOTH1", int64 n_vertices, int64 n_triangles, float64 x y z
 * per vertex, int64 a b c per triangle.  Exit status 3 when a position went non-finite (the dump is still
 * written). */
#include <btBulletDynamicsCommon.h>
#include <BulletSoftBody/btDefaultSoftBodySolver.h>
#include <BulletSoftBody/btDeformableBodySolver.h>
#include <BulletSoftBody/btDeformableGravityForce.h>
#include <BulletSoftBody/btDeformableMassSpringForce.h>
#include <BulletSoftBody/btDeformableMultiBodyConstraintSolver.h>
#include <BulletSoftBody/btDeformableMultiBodyDynamicsWorld.h>
#include <BulletSoftBody/btSoftBody.h>
#include <BulletSoftBody/btSoftBodyHelpers.h>
#include <BulletSoftBody/btSoftBodyRigidBodyCollisionConfiguration.h>
#include <BulletSoftBody/btSoftRigidDynamicsWorld.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#ifndef PEER_ENGINE_VERSION
#define PEER_ENGINE_VERSION "unknown"
#endif

static const double GRAVITY_Z = -9.81;

struct options {
    std::map<std::string, std::string> kv;
    std::map<std::string, bool> used;
    double num(const char *key, double def)
    {
        used[key] = true;
        auto it = kv.find(key);
        if (it == kv.end())
            return def;
        char *end = nullptr;
        double v = std::strtod(it->second.c_str(), &end);
        if (end == it->second.c_str() || *end != 0 || !std::isfinite(v)) {
            std::fprintf(stderr, "error: %s=%s is not a number\n", key, it->second.c_str());
            std::exit(1);
        }
        return v;
    }
    std::string str(const char *key, const char *def)
    {
        used[key] = true;
        auto it = kv.find(key);
        return it == kv.end() ? std::string(def) : it->second;
    }
};

static double now_s()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static int write_dump(const char *path, const btSoftBody *psb, const std::vector<int64_t> &tri)
{
    FILE *f = std::fopen(path, "wb");
    if (!f) {
        std::fprintf(stderr, "error: cannot write %s\n", path);
        return 1;
    }
    int64_t n[2] = {(int64_t)psb->m_nodes.size(), (int64_t)(tri.size() / 3)};
    std::fwrite("SHCLOTH1", 1, 8, f);
    std::fwrite(n, sizeof *n, 2, f);
    for (int i = 0; i < psb->m_nodes.size(); i++) {
        double x[3] = {psb->m_nodes[i].m_x.x(), psb->m_nodes[i].m_x.y(), psb->m_nodes[i].m_x.z()};
        std::fwrite(x, sizeof *x, 3, f);
    }
    std::fwrite(tri.data(), sizeof(int64_t), tri.size(), f);
    int bad = std::ferror(f);
    if (std::fclose(f) != 0 || bad) {
        std::fprintf(stderr, "error: writing %s failed\n", path);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    options o;
    for (int i = 1; i < argc; i++) {
        const char *eq = std::strchr(argv[i], '=');
        if (!eq || eq == argv[i]) {
            std::fprintf(stderr, "usage: %s key=value ... (see the comment at the top of bullet_cloth.cpp)\n", argv[0]);
            return 1;
        }
        o.kv[std::string(argv[i], eq - argv[i])] = eq + 1;
    }
    const int n = (int)o.num("n", 250);
    const double side = o.num("side", 1.0), radius = o.num("radius", 0.3), gap = o.num("gap", 0.02);
    const double dt = o.num("dt", 1e-4);
    const long steps = (long)o.num("steps", 3000);
    const double areal = o.num("areal", 0.2), membrane = o.num("membrane", 20), bending = o.num("bending", 1.875e-6);
    const double beta = o.num("beta", 1e-5), thickness = o.num("thickness", 0.001), friction = o.num("friction", 0.3);
    const std::string world_kind = o.str("world", "deformable");
    const int self = (int)o.num("self", 1);
    const double bend_k = o.num("bend_k", 0);
    const int piterations = (int)o.num("piterations", 10);
    const std::string out = o.str("out", "");
    for (auto &kv : o.kv)
        if (!o.used.count(kv.first)) {
            std::fprintf(stderr, "error: unknown option %s\n", kv.first.c_str());
            return 1;
        }
    if (n < 2 || steps < 1 || !(dt > 0) || !(side > 0) || !(radius > 0) || !(areal > 0) || !(thickness > 0) ||
        (world_kind != "deformable" && world_kind != "classic")) {
        std::fprintf(stderr, "error: bad options (n >= 2, steps >= 1, positive sizes, world=deformable|classic)\n");
        return 1;
    }
    const bool deformable = world_kind == "deformable";

    /* ---- the mesh (Shard's grid) ---- */
    const int nv = (n + 1) * (n + 1);
    const double a = side / n, z0 = radius + gap;
    auto vid = [n](int i, int j) { return j * (n + 1) + i; };
    std::vector<btVector3> x(nv);
    std::vector<btScalar> mass(nv, 0);
    for (int j = 0; j <= n; j++)
        for (int i = 0; i <= n; i++)
            x[vid(i, j)] = btVector3(btScalar(-0.5 * side + i * a), btScalar(-0.5 * side + j * a), btScalar(z0));
    std::vector<int64_t> tri;
    tri.reserve(6 * (size_t)n * n);
    std::vector<double> m(nv, 0);
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            int v00 = vid(i, j), v10 = vid(i + 1, j), v11 = vid(i + 1, j + 1), v01 = vid(i, j + 1);
            int64_t t[6] = {v00, v10, v11, v00, v11, v01};
            tri.insert(tri.end(), t, t + 6);
            for (int k = 0; k < 6; k++)
                m[t[k]] += areal * 0.5 * a * a / 3; /* a third of each right triangle of area a^2 / 2 */
        }
    for (int v = 0; v < nv; v++)
        mass[v] = btScalar(m[v]);

    /* ---- the world ---- */
    const btVector3 gravity(0, 0, btScalar(GRAVITY_Z));
    btSoftBodyRigidBodyCollisionConfiguration config;
    btCollisionDispatcher dispatcher(&config);
    btDbvtBroadphase broadphase;
    btDeformableBodySolver *dsolver = nullptr;
    btDeformableMultiBodyConstraintSolver *csolver = nullptr;
    btSequentialImpulseConstraintSolver *rsolver = nullptr;
    btSoftRigidDynamicsWorld *cworld = nullptr;
    btDeformableMultiBodyDynamicsWorld *dworld = nullptr;
    btDiscreteDynamicsWorld *world;
    btSoftBodyWorldInfo *info;
    if (deformable) {
        dsolver = new btDeformableBodySolver();
        csolver = new btDeformableMultiBodyConstraintSolver();
        csolver->setDeformableSolver(dsolver);
        dworld = new btDeformableMultiBodyDynamicsWorld(&dispatcher, &broadphase, csolver, &config, dsolver);
        dworld->setImplicit(false);
        dworld->setLineSearch(false);
        world = dworld;
        info = &dworld->getWorldInfo();
    } else {
        rsolver = new btSequentialImpulseConstraintSolver();
        cworld = new btSoftRigidDynamicsWorld(&dispatcher, &broadphase, rsolver, &config);
        world = cworld;
        info = &cworld->getWorldInfo();
    }
    world->setGravity(gravity);
    info->m_gravity = gravity;
    info->m_sparsesdf.setDefaultVoxelsz(btScalar(a));
    info->m_sparsesdf.Reset();

    btSphereShape sphere_shape((btScalar)radius);
    btRigidBody::btRigidBodyConstructionInfo sci(0, nullptr, &sphere_shape);
    sci.m_friction = 1;
    btRigidBody sphere(sci);
    world->addRigidBody(&sphere);

    btSoftBody *psb = new btSoftBody(info, nv, x.data(), mass.data());
    for (int j = 0; j <= n; j++)
        for (int i = 0; i <= n; i++) {
            if (i < n)
                psb->appendLink(vid(i, j), vid(i + 1, j));
            if (j < n)
                psb->appendLink(vid(i, j), vid(i, j + 1));
            if (i < n && j < n)
                psb->appendLink(vid(i, j), vid(i + 1, j + 1));
        }
    const int membrane_links = psb->m_links.size();
    int bend_links = 0;
    if (bend_k > 0 && deformable) {
        for (int j = 0; j <= n; j++)
            for (int i = 0; i <= n; i++) {
                if (i + 2 <= n)
                    psb->appendLink(vid(i, j), vid(i + 2, j)), psb->m_links[psb->m_links.size() - 1].m_bbending = 1;
                if (j + 2 <= n)
                    psb->appendLink(vid(i, j), vid(i, j + 2)), psb->m_links[psb->m_links.size() - 1].m_bbending = 1;
            }
        bend_links = psb->m_links.size() - membrane_links;
    }
    for (size_t t = 0; t < tri.size(); t += 3)
        psb->appendFace((int)tri[t], (int)tri[t + 1], (int)tri[t + 2]);
    psb->getCollisionShape()->setMargin(btScalar(0.5 * thickness));
    psb->m_cfg.kDF = btScalar(friction);
    psb->m_cfg.kCHR = 1;
    psb->m_cfg.kKHR = 1;
    btDeformableMassSpringForce *springs = nullptr;
    btDeformableGravityForce *gforce = nullptr;
    const double k = 0.75 * membrane;
    double t_setup = now_s();
    if (deformable) {
        psb->m_cfg.collisions =
            btSoftBody::fCollision::SDF_RD | btSoftBody::fCollision::SDF_RDN | btSoftBody::fCollision::VF_DD;
        dworld->addSoftBody(psb);
        psb->setSelfCollision(self != 0);
        springs = new btDeformableMassSpringForce(btScalar(k), btScalar(beta * k), true, btScalar(bend_k));
        dworld->addForce(psb, springs);
        gforce = new btDeformableGravityForce(gravity);
        dworld->addForce(psb, gforce);
    } else {
        psb->m_cfg.collisions = btSoftBody::fCollision::SDF_RS | btSoftBody::fCollision::VF_SS;
        psb->m_materials[0]->m_kLST = 1;
        psb->m_cfg.piterations = piterations;
        psb->m_cfg.viterations = 0;
        psb->m_cfg.kDP = 0;
        cworld->addSoftBody(psb);
    }
    psb->setActivationState(DISABLE_DEACTIVATION);
    t_setup = now_s() - t_setup;

    std::printf("engine=bullet\nbullet_version=%s\nbullet_header_version=%d\nbullet_scalar_bytes=%d\n",
                PEER_ENGINE_VERSION, btGetVersion(), (int)sizeof(btScalar));
    std::printf("n=%d\nside_m=%g\nradius_m=%g\ngap_m=%g\ndt_s=%g\nsteps=%ld\n", n, side, radius, gap, dt, steps);
    std::printf("vertices=%d\ntriangles=%d\nlinks=%d\nbending_links=%d\n", nv, (int)(tri.size() / 3), membrane_links,
                bend_links);
    std::printf("areal_kg_m2=%g\nmass_kg=%.6g\nmembrane_N_m=%g\nshard_bending_N_m=%g\nthickness_m=%g\nfriction=%g\n",
                areal, (double)psb->getTotalMass(), membrane, bending, thickness, friction);
    if (deformable) {
        std::printf("bullet_world=btDeformableMultiBodyDynamicsWorld (btDeformableBodySolver: explicit springs, "
                    "implicit damping by conjugate gradients, contacts projected)\n");
        std::printf("bullet_spring_k_N_m=%g\nbullet_spring_damping_N_s_m=%g\nbullet_bend_k_N_m=%g\n", k, beta * k,
                    bend_k);
        std::printf("self_collision=%s\n", self ? "VF_DD + setSelfCollision (CollideFF_DD, repulsion, CCD)" : "off");
    } else {
        std::printf("bullet_world=btSoftRigidDynamicsWorld (btDefaultSoftBodySolver, position-based)\n");
        std::printf("bullet_kLST=1\nbullet_piterations=%d\nbullet_viterations=0\nbullet_kDP=0\n", piterations);
        std::printf("self_collision=none (VF_SS skips self-pairs; CL_SELF is unreachable in 3.24)\n");
    }
    std::printf("bullet_margin_m=%g\nbullet_sdf_voxel_m=%g\nsetup_s=%.3f\n",
                (double)psb->getCollisionShape()->getMargin(), a, t_setup);
    std::fflush(stdout);

    /* ---- the run ---- */
    /* The first step also builds Bullet's bounding-volume tree of the faces (btSoftBody::initializeFaceTree, once,
     * which in 3.24 finds the faces' neighbours by comparing every pair of faces: O(F^2), 40 s or more for
     * 125 000 faces); it is timed on its own, and steps/s is of the steps after it. */
    int status = 0;
    long done = 0;
    double wall = 0, first = 0;
    const long check_every = steps / 10 > 0 ? steps / 10 : 1;
    for (long s = 0; s < steps; s++) {
        double t0 = now_s();
        world->stepSimulation(btScalar(dt), 0);
        if (s == 0)
            first = now_s() - t0;
        else
            wall += now_s() - t0;
        done++;
        if (done % check_every == 0 || done == steps) {
            bool finite = true;
            double zmin = 1e300;
            for (int v = 0; v < nv; v++) {
                const btVector3 &p = psb->m_nodes[v].m_x;
                if (!std::isfinite(p.x()) || !std::isfinite(p.y()) || !std::isfinite(p.z()))
                    finite = false;
                zmin = std::fmin(zmin, p.z());
            }
            std::printf("progress step=%ld t=%.5g wall_s=%.2f z_min=%.4g\n", done, done * dt, first + wall, zmin);
            std::fflush(stdout);
            if (!finite) {
                std::printf("diverged_step=%ld\n", done);
                status = 3;
                break;
            }
        }
    }
    double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
    for (int v = 0; v < nv; v++)
        for (int c = 0; c < 3; c++)
            lo[c] = std::fmin(lo[c], psb->m_nodes[v].m_x[c]), hi[c] = std::fmax(hi[c], psb->m_nodes[v].m_x[c]);
    const double sps = wall > 0 ? (done - 1) / wall : 0;
    std::printf("steps_done=%ld\nfirst_step_s=%.3f\nwall_s=%.3f\nsteps_per_s=%.4g\n", done, first, wall, sps);
    std::printf("extent_m=%.4g %.4g %.4g\nz_min=%.5g\nz_max=%.5g\nstatus=%s\n", hi[0] - lo[0], hi[1] - lo[1],
                hi[2] - lo[2], lo[2], hi[2], status ? "diverged" : "ok");
    std::printf("csv=bullet,%s,%s,%d,%d,%g,%ld,%ld,%.3f,%.3f,%.4g,%s\n", PEER_ENGINE_VERSION, world_kind.c_str(), n, nv,
                dt, steps, done, first, wall, sps, status ? "diverged" : "ok");
    if (!out.empty() && write_dump(out.c_str(), psb, tri) != 0)
        status = 1;

    if (dworld)
        dworld->removeSoftBody(psb);
    else
        cworld->removeSoftBody(psb);
    world->removeRigidBody(&sphere);
    delete psb;
    delete springs;
    delete gforce;
    delete dworld;
    delete cworld;
    delete csolver;
    delete dsolver;
    delete rsolver;
    return status;
}
