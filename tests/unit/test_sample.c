/* Distributed sampling (sample.h) against the whole-scene path: for P = 1 .. 40 simulated ranks, every rank's
 * share of the lattice planes, with the plane counts summed as the start-up sums them, gives exactly the
 * particles of shard_sample_scene_bonds: the same global ids, rest positions, bodies, velocities (angular
 * velocity about the exact centre), constraint flags and bond lists, for analytic shapes, surface-fitted
 * sampling, a mesh body, notches and bodies without bonds; ranks with no plane are allowed. */
#include "shard/mesh_io.h"
#include "shard/sample.h"
#include "shard/xsum.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

static const char scene_text[] =
    "run: {steps: 1}\n"
    "materials:\n"
    "  gel: {density: 1000, E: 1.0e5, nu: 0.3}\n"
    "bodies:\n"
    "  - name: plate\n"
    "    material: gel\n"
    "    shape: {box: {min: [-0.05, -0.05, 0.0], max: [0.05, 0.05, 0.03]}}\n"
    "    spacing: 0.005\n"
    "    angular_velocity: [1, 2, 3]\n"
    "    notches:\n"
    "      - {min: [-0.05, 0.0, 0.0], max: [-0.02, 0.0, 0.03]}\n"
    "    prescribed:\n"
    "      - {region: {box: {min: [-1, -1, -1], max: [-0.04, 1, 1]}}, velocity: [-2, 0, 0]}\n"
    "  - name: ball\n"
    "    material: gel\n"
    "    shape: {sphere: {center: [0.0, 0.0, 0.08], radius: 0.03}}\n"
    "    spacing: 0.006\n"
    "    sampling: surface\n"
    "    velocity: [0, 0, -1]\n"
    "    angular_velocity: [0, 10, 0]\n"
    "  - name: pebble\n"
    "    material: gel\n"
    "    shape: {mesh: {file: ../jobs/scenes/meshes/icosphere.obj, scale: 0.05, translate: [0.0, 0.0, 0.2]}}\n"
    "    spacing: 0.007\n"
    "    sampling: surface\n"
    "  - name: rod\n"
    "    material: gel\n"
    "    shape: {cylinder: {p0: [-0.05, 0.1, 0.02], p1: [0.05, 0.1, 0.02], radius: 0.01}}\n"
    "    spacing: 0.004\n";

int main(void)
{
    shard_scene sc;
    shard_error err = {0};
    SHARD_ENSURE(shard_scene_parse("sample.yaml", scene_text, sizeof scene_text - 1, &sc, &err) == 0);
    for (int b = 0; b < sc.n_bodies && !err.code; b++) /* as the driver does before sampling */
        shard_mesh_load_shape(&sc.bodies[b].shape, 1, sc.path, &err);
    if (err.code) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    int nb = sc.n_bodies;
    double h[4] = {0.0151, 0.0181, 0.0211, 0.0}; /* the rod has no bonds */
    shard_sampled all;
    shard_csr bonds = {0};
    SHARD_ENSURE(shard_sample_scene_bonds(&sc, h, &all, &bonds, &err) == 0);
    size_t n = all.n;
    SHARD_ENSURE(n > 1000);
    int ranks_list[] = {1, 2, 3, 5, 8, 13, 40};
    for (size_t t = 0; t < sizeof ranks_list / sizeof *ranks_list; t++) {
        int P = ranks_list[t];
        shard_sample_plan plan;
        SHARD_ENSURE(shard_sample_plan_make(&sc, P, &plan, &err) == 0);
        int64_t T = plan.plane0[nb];
        shard_sample_share *sh = calloc((size_t)P, sizeof *sh);
        int64_t *count = calloc((size_t)T + 1, sizeof *count);
        for (int r = 0; r < P; r++) {
            shard_sample_share_points(&sc, &plan, h, r, P, &sh[r]);
            for (int64_t g = sh[r].first_plane; g < sh[r].end_plane; g++)
                count[g] += sh[r].count[g - sh[r].first_plane];
        }
        /* The centre of each body from every rank's own points, summed exactly. */
        shard_xsum acc[12];
        for (int k = 0; k < 3 * nb; k++)
            shard_xsum_init(&acc[k]);
        int64_t *seen = calloc(n + 1, sizeof *seen);
        int empty = 0, bad = 0;
        for (int r = 0; r < P; r++) {
            shard_sample_share_ids(&plan, count, &sh[r]);
            shard_csr b = {0};
            int64_t cut[2] = {0, 0};
            shard_sample_share_bonds(&sc, h, &sh[r], &b, cut);
            size_t own = 0;
            for (size_t i = 0; i < sh[r].n; i++) {
                if (!shard_sample_share_own(&sh[r], i))
                    continue;
                own++;
                int64_t g = sh[r].gid[i];
                if (g < 0 || (size_t)g >= n || seen[g]++) {
                    bad++;
                    continue;
                }
                bad += memcmp(sh[r].X + 3 * i, all.X + 3 * g, 3 * sizeof(double)) != 0;
                bad += sh[r].body[i] != all.body[g];
                for (int k = 0; k < 3; k++)
                    shard_xsum_add_n(&acc[3 * sh[r].body[i] + k], sh[r].X + 3 * i + k, 1, 1);
                int64_t nbr = b.start[i + 1] - b.start[i];
                bad += nbr != bonds.start[g + 1] - bonds.start[g];
                for (int64_t e = 0; e < nbr && nbr == bonds.start[g + 1] - bonds.start[g]; e++)
                    bad += sh[r].gid[b.idx[b.start[i] + e]] != bonds.idx[bonds.start[g] + e];
            }
            empty += own == 0;
            /* the notch of the plate cuts bonds only on the ranks that hold some of its planes */
            SHARD_ENSURE(cut[1] == 0);
            shard_csr_free(&b);
        }
        for (size_t g = 0; g < n; g++)
            bad += seen[g] != 1;
        if (bad)
            fprintf(stderr, "P = %d: %d mismatches\n", P, bad);
        SHARD_ENSURE(bad == 0);
        if (P == 40)
            SHARD_ENSURE(empty > 0); /* more ranks than some bodies have planes: ranks without a plane */
        /* Velocities and flags from the summed centre equal the whole-scene path's. */
        for (int r = 0; r < P; r++)
            for (size_t i = 0; i < sh[r].n; i++) {
                if (!shard_sample_share_own(&sh[r], i))
                    continue;
                int bb = sh[r].body[i];
                int64_t g = sh[r].gid[i], m = all.body_start[bb + 1] - all.body_start[bb];
                double c[3], v[3], vp[3];
                uint32_t fl;
                for (int k = 0; k < 3; k++)
                    c[k] = shard_xsum_round(&acc[3 * bb + k]) / (double)m;
                shard_sample_motion(&sc.bodies[bb], c, sh[r].X + 3 * i, v, vp, &fl);
                bad += memcmp(v, all.v + 3 * g, sizeof v) != 0 || memcmp(vp, all.vpres + 3 * g, sizeof vp) != 0 ||
                       fl != all.flags[g];
            }
        SHARD_ENSURE(bad == 0);
        for (int r = 0; r < P; r++)
            shard_sample_share_free(&sh[r]);
        free(sh), free(count), free(seen);
        shard_sample_plan_free(&plan);
    }
    /* The plate's prescribed region and angular velocity are exercised. */
    int prescribed = 0;
    for (size_t i = 0; i < n; i++)
        prescribed += (all.flags[i] & SHARD_PF_PRESCRIBED) != 0;
    SHARD_ENSURE(prescribed > 0);
    /* The wall rule's offsets (solid.h): a held particle's to the nearest face of its region (the plate's
     * untimed, translating grip ends at x = -0.04); none for a free particle, nor where the region turns. */
    {
        const double held[3] = {-0.0425, 0.01, 0.02}, loose[3] = {0.0, 0.01, 0.02};
        double o[3];
        SHARD_ENSURE(shard_sample_wall(&sc.bodies[0], held, o) == 1);
        SHARD_ENSURE_NEAR(o[0], 0.0025, 1e-15);
        SHARD_ENSURE(o[1] == 0.0 && o[2] == 0.0);
        SHARD_ENSURE(shard_sample_wall(&sc.bodies[0], loose, o) == 0 && o[0] == 0.0);
        sc.bodies[0].constraints[0].spin[2] = 1.0;
        SHARD_ENSURE(shard_sample_wall(&sc.bodies[0], held, o) == 0);
        sc.bodies[0].constraints[0].spin[2] = 0.0, sc.bodies[0].constraints[0].start = 0.1;
        SHARD_ENSURE(shard_sample_wall(&sc.bodies[0], held, o) == 0);
        sc.bodies[0].constraints[0].start = 0.0;
    }
    shard_csr_free(&bonds);
    shard_sampled_free(&all);
    shard_scene_free(&sc);
    if (shard_test_failures == 0)
        printf("PASS: distributed sampling equals the whole-scene path on 1 to 40 ranks (%zu particles)\n", n);
    return shard_test_failures != 0;
}
