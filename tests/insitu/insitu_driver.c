/* A stand-in driver for the in-situ module: a synthetic particle block, split among the ranks, handed to Catalyst
 * scripts the way the real driver does (shard/insitu.h), without a scene or physics.
 *
 * It exists so that the adaptor, the example scripts in jobs/catalyst/ and the error paths can be tested (and
 * timed) on their own.  The block is an nx x ny x nz simple-cubic lattice of spacing 1/nx m with global ids in
 * z, y, x order; rank r owns a contiguous range of ids.  Each step moves the particles along a bending wave and
 * fills every field with smooth values (stress from the same wave, von Mises from the stress), so rendered images
 * have structure and extracts can be checked exactly.  Errors follow the driver's rule: rank 0 prints
 * "shard: error: <msg>" once and every rank exits with the error's code.
 *
 * usage: insitu_driver [--script FILE --every N]... [--steps S] [--lattice NX NY NZ] [--fields all|position]
 *                    [--work SECONDS] [--out DIR]
 *   --steps S     steps 0..S are offered to the scripts (default 20)
 *   --fields      "position" passes only the coordinates (tests optional arrays)
 *   --work T      busy-waits T seconds per step, standing in for the physics when measuring overhead
 *   --out DIR     the output folder handed to shard_insitu_create (what the driver passes: <output_dir>/catalyst)
 * Rank 0 prints "particles N", then "executed STEP" for every step handed to Catalyst, and the time spent in
 * shard_insitu_execute (max over ranks).
 */
#include "shard/comm.h"
#include "shard/insitu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


typedef struct test_block {
    size_t n;
    int64_t first;
    int64_t *gid;
    int32_t *body, *material, *inverted;
    double *X, *x, *v, *u, *stress, *vm, *plastic, *damage;
} test_block;

static void test_block_init(test_block *b, int rank, int size, const long dims[3])
{
    int64_t total = (int64_t)dims[0] * dims[1] * dims[2];
    b->first = total * rank / size;
    int64_t last = total * (rank + 1) / size;
    b->n = (size_t)(last - b->first);
    size_t n = b->n;
    b->gid = shard_malloc(n * sizeof *b->gid + 1);
    b->body = shard_malloc(n * sizeof *b->body + 1);
    b->material = shard_malloc(n * sizeof *b->material + 1);
    b->inverted = shard_malloc(n * sizeof *b->inverted + 1);
    b->X = shard_malloc(3 * n * sizeof *b->X + 1);
    b->x = shard_malloc(3 * n * sizeof *b->x + 1);
    b->v = shard_malloc(3 * n * sizeof *b->v + 1);
    b->u = shard_malloc(3 * n * sizeof *b->u + 1);
    b->stress = shard_malloc(9 * n * sizeof *b->stress + 1);
    b->vm = shard_malloc(n * sizeof *b->vm + 1);
    b->plastic = shard_malloc(n * sizeof *b->plastic + 1);
    b->damage = shard_malloc(n * sizeof *b->damage + 1);
    double h = 1.0 / (double)dims[0];
    for (size_t i = 0; i < n; i++) {
        int64_t g = b->first + (int64_t)i;
        int64_t ix = g % dims[0], iy = (g / dims[0]) % dims[1], iz = g / (dims[0] * dims[1]);
        b->gid[i] = g;
        b->X[3 * i + 0] = (double)ix * h;
        b->X[3 * i + 1] = (double)iy * h;
        b->X[3 * i + 2] = (double)iz * h;
        b->body[i] = 2 * ix < dims[0] ? 0 : 1;
        b->material[i] = b->body[i];
        b->inverted[i] = 0;
    }
}

static void test_block_free(test_block *b)
{
    free(b->gid), free(b->body), free(b->material), free(b->inverted), free(b->X), free(b->x), free(b->v), free(b->u);
    free(b->stress), free(b->vm), free(b->plastic), free(b->damage);
}

/* The state at step s: a bending wave w = A sin(pi x) cos(omega s) in z, its velocity, strain-like stress. */
static void test_block_fill(test_block *b, long step)
{
    const double A = 0.05, omega = 0.2, E = 1.0e6;
    double c = cos(omega * (double)step), sdot = -omega * sin(omega * (double)step);
    for (size_t i = 0; i < b->n; i++) {
        const double *X = b->X + 3 * i;
        double w = A * sin(M_PI * X[0]);
        double *u = b->u + 3 * i, *x = b->x + 3 * i, *v = b->v + 3 * i, *s = b->stress + 9 * i;
        u[0] = 0.0, u[1] = 0.0, u[2] = w * c;
        v[0] = 0.0, v[1] = 0.0, v[2] = w * sdot;
        for (int k = 0; k < 3; k++)
            x[k] = X[k] + u[k];
        /* bending stress: linear through the thickness, largest mid-span */
        double sxx = E * A * M_PI * M_PI * sin(M_PI * X[0]) * (X[2] - 0.25) * c;
        double syy = 0.3 * sxx, szz = 0.0, sxy = 0.1 * sxx, syz = 0.0, sxz = 0.0;
        /* the full tensor row by row, as the driver hands it over */
        s[0] = sxx, s[1] = sxy, s[2] = sxz, s[3] = sxy, s[4] = syy, s[5] = syz, s[6] = sxz, s[7] = syz, s[8] = szz;
        b->vm[i] = sqrt(0.5 * ((sxx - syy) * (sxx - syy) + (syy - szz) * (syy - szz) + (szz - sxx) * (szz - sxx)) +
                        3.0 * (sxy * sxy + syz * syz + sxz * sxz));
        b->plastic[i] = 1e-3 * X[0] * (double)step;
        b->damage[i] = fmin(1.0, 0.01 * (double)step * X[1]);
    }
}

static void test_spin(double seconds)
{
    double t0 = shard_wtime();
    while (shard_wtime() - t0 < seconds)
        ;
}

int main(int argc, char **argv)
{
    shard_comm *c = shard_comm_init(&argc, &argv);
    int rank = shard_comm_rank(c), size = shard_comm_size(c);
    const char *scripts[SHARD_INSITU_MAX_SCRIPTS];
    long every[SHARD_INSITU_MAX_SCRIPTS];
    int n_scripts = 0, only_position = 0;
    long steps = 20, dims[3] = {16, 8, 4};
    double work = 0.0;
    const char *out_dir = NULL;
    char msg[512] = "";
    for (int i = 1; i < argc && !msg[0]; i++) {
        const char *a = argv[i];
        int left = argc - 1 - i;
        if (!strcmp(a, "--script") && left >= 1 && n_scripts < SHARD_INSITU_MAX_SCRIPTS) {
            scripts[n_scripts] = argv[++i];
            every[n_scripts++] = 1;
        } else if (!strcmp(a, "--every") && left >= 1 && n_scripts > 0) {
            every[n_scripts - 1] = atol(argv[++i]);
        } else if (!strcmp(a, "--steps") && left >= 1) {
            steps = atol(argv[++i]);
        } else if (!strcmp(a, "--lattice") && left >= 3) {
            for (int k = 0; k < 3; k++)
                dims[k] = atol(argv[++i]);
        } else if (!strcmp(a, "--fields") && left >= 1) {
            only_position = !strcmp(argv[++i], "position");
        } else if (!strcmp(a, "--work") && left >= 1) {
            work = atof(argv[++i]);
        } else if (!strcmp(a, "--out") && left >= 1) {
            out_dir = argv[++i];
        } else {
            snprintf(msg, sizeof msg, "insitu_driver: bad argument '%s' (see the comment at the top of the source)", a);
        }
    }
    if (!msg[0] && (dims[0] < 1 || dims[1] < 1 || dims[2] < 1 || steps < 0))
        snprintf(msg, sizeof msg, "insitu_driver: --lattice needs three positive sizes, --steps S >= 0");
    if (msg[0])
        shard_fail_all(c, SHARD_EXIT_USAGE, msg);

    shard_error err;
    shard_insitu *insitu = shard_insitu_create(c, n_scripts, scripts, every, out_dir, &err);
    if (err.code)
        shard_fail_all(c, err.code, err.msg);

    test_block b = {0};
    test_block_init(&b, rank, size, dims);
    if (rank == 0)
        printf("particles %lld\n", (long long)dims[0] * dims[1] * dims[2]);
    double t_insitu = 0.0, t_work = 0.0;
    long executed = 0;
    for (long step = 0; step <= steps; step++) {
        double t0 = shard_wtime();
        if (step > 0 && work > 0.0)
            test_spin(work);
        double t1 = shard_wtime();
        t_work += t1 - t0;
        if (!shard_insitu_wants(insitu, step))
            continue;
        test_block_fill(&b, step);
        /* The columns the driver hands over, by the output field table (rank: the adaptor's own). */
        const void *data[SHARD_OUT_COUNT] = {
            [SHARD_OUT_GLOBAL_ID] = b.gid, [SHARD_OUT_VELOCITY] = b.v, [SHARD_OUT_DISPLACEMENT] = b.u,
            [SHARD_OUT_STRESS] = b.stress, [SHARD_OUT_VON_MISES] = b.vm, [SHARD_OUT_PLASTIC_STRAIN] = b.plastic,
            [SHARD_OUT_DAMAGE] = b.damage, [SHARD_OUT_BODY] = b.body, [SHARD_OUT_MATERIAL] = b.material,
            [SHARD_OUT_INVERTED] = b.inverted,
        };
        shard_column cols[SHARD_OUT_COUNT];
        int n_cols = 0;
        for (int k = 0; k < SHARD_OUT_COUNT && !only_position; k++)
            if (data[k])
                cols[n_cols++] = (shard_column){shard_output_fields[k].name, shard_output_fields[k].type,
                                                shard_output_fields[k].ncomp, data[k]};
        shard_insitu_fields f = {.n = b.n, .position = b.x, .n_cols = n_cols, .cols = cols};
        if (shard_insitu_execute(insitu, step, 1e-3 * (double)step, &f, &err))
            shard_fail_all(c, err.code, err.msg);
        t_insitu += shard_wtime() - t1;
        executed++;
        if (rank == 0)
            printf("executed %ld\n", step);
        fflush(stdout);
    }
    shard_insitu_destroy(&insitu);
    double t_max = shard_comm_max(c, t_insitu), w_max = shard_comm_max(c, t_work);
    if (rank == 0)
        printf("insitu %ld calls, %.6f s in execute (max over ranks), %.6f s of stand-in work\n", executed, t_max,
               w_max);
    test_block_free(&b);
    shard_comm_finalize(&c);
    return 0;
}
