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
 * With --cloth the lattice's face y = 0 is also handed over as a cloth (block "surfaces"): its particles are the
 * vertices, each square of the face is split into two triangles, and a square is listed by the owner of its
 * corner of least id, which passes the square's other corners that other ranks own as ghost vertices (the rows
 * of the next z layer).  Every triangle is so listed by exactly one rank, 2 (NX-1)(NZ-1) in all at any rank count,
 * and a rank may list none (it owns only the face's last row) or have no vertex at all, as in the real driver.
 *
 * usage: insitu_driver [--script FILE --every N]... [--steps S] [--lattice NX NY NZ] [--fields all|position]
 *                    [--cloth [--cloth-bad RANK]] [--work SECONDS] [--out DIR]
 *   --steps S     steps 0..S are offered to the scripts (default 20)
 *   --fields      "position" passes only the coordinates (tests optional arrays)
 *   --cloth       adds block "surfaces" (above), with the columns global_id, velocity and body
 *   --cloth-bad R rank R's last triangle points one past its cell points (tests the adaptor's refusal)
 *   --work T      busy-waits T seconds per step, standing in for the physics when measuring overhead
 *   --out DIR     the output folder handed to shard_insitu_create (what the driver passes: <output_dir>/catalyst)
 * Rank 0 prints "particles N" (and "cloth triangles T" with --cloth), then "executed STEP" for every step handed
 * to Catalyst, and the time spent in shard_insitu_execute (max over ranks).
 */
#include "shard/comm.h"
#include "shard/insitu.h"
#include "shard/matter.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


typedef struct test_block {
    size_t n;
    int64_t first;
    int64_t *gid;
    int32_t *body, *material, *inverted;
    double *X, *x, *v, *u, *stress, *vm, *plastic, *damage, *stretch, *contact;
} test_block;

/* Rest position and body of particle g of the lattice. */
static void test_rest(int64_t g, const long dims[3], double X[3], int32_t *body)
{
    int64_t ix = g % dims[0], iy = (g / dims[0]) % dims[1], iz = g / (dims[0] * dims[1]);
    double h = 1.0 / (double)dims[0];
    X[0] = (double)ix * h;
    X[1] = (double)iy * h;
    X[2] = (double)iz * h;
    *body = 2 * ix < dims[0] ? 0 : 1;
}

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
    b->stretch = shard_malloc(n * sizeof *b->stretch + 1);
    b->contact = shard_malloc(n * sizeof *b->contact + 1);
    for (size_t i = 0; i < n; i++) {
        b->gid[i] = b->first + (int64_t)i;
        test_rest(b->gid[i], dims, b->X + 3 * i, &b->body[i]);
        b->material[i] = b->body[i];
        b->inverted[i] = 0;
    }
}

static void test_block_free(test_block *b)
{
    free(b->gid), free(b->body), free(b->material), free(b->inverted), free(b->X), free(b->x), free(b->v), free(b->u);
    free(b->stress), free(b->vm), free(b->plastic), free(b->damage), free(b->stretch), free(b->contact);
}

static const double test_amplitude = 0.05, test_omega = 0.2;

/* The motion at step s of the point at rest at X: a bending wave w = A sin(pi x) cos(omega s) in z, as
 * displacement u, position x and velocity v.  A function of X alone, so that a ghost vertex of the cloth is where
 * its owner has it. */
static void test_wave(const double X[3], long step, double u[3], double x[3], double v[3])
{
    double c = cos(test_omega * (double)step), sdot = -test_omega * sin(test_omega * (double)step);
    double w = test_amplitude * sin(M_PI * X[0]);
    u[0] = 0.0, u[1] = 0.0, u[2] = w * c;
    v[0] = 0.0, v[1] = 0.0, v[2] = w * sdot;
    for (int k = 0; k < 3; k++)
        x[k] = X[k] + u[k];
}

/* The state at step s: the wave's motion and a strain-like stress. */
static void test_block_fill(test_block *b, long step)
{
    const double A = test_amplitude, E = 1.0e6;
    double c = cos(test_omega * (double)step);
    for (size_t i = 0; i < b->n; i++) {
        const double *X = b->X + 3 * i;
        double *u = b->u + 3 * i, *s = b->stress + 9 * i;
        test_wave(X, step, u, b->x + 3 * i, b->v + 3 * i);
        /* bending stress: linear through the thickness, largest mid-span */
        double sxx = E * A * M_PI * M_PI * sin(M_PI * X[0]) * (X[2] - 0.25) * c;
        double syy = 0.3 * sxx, szz = 0.0, sxy = 0.1 * sxx, syz = 0.0, sxz = 0.0;
        /* the full tensor row by row, as the driver hands it over */
        s[0] = sxx, s[1] = sxy, s[2] = sxz, s[3] = sxy, s[4] = syy, s[5] = syz, s[6] = sxz, s[7] = syz, s[8] = szz;
        b->vm[i] = sqrt(0.5 * ((sxx - syy) * (sxx - syy) + (syy - szz) * (syy - szz) + (szz - sxx) * (szz - sxx)) +
                        3.0 * (sxy * sxy + syz * syz + sxz * sxz));
        b->plastic[i] = 1e-3 * X[0] * (double)step;
        b->damage[i] = fmin(1.0, 0.01 * (double)step * X[1]);
        /* the wave's membrane Green strain along x, (dw/dx)^2 / 2 */
        double slope = A * M_PI * cos(M_PI * X[0]) * c;
        b->stretch[i] = 0.5 * slope * slope;
        b->contact[i] = X[2] < 0.01 ? 1.0 + fabs(b->v[3 * i + 2]) : 0.0; /* a force on the bottom layer */
    }
}

/* The cloth of --cloth (see the top of the file): this rank's cell points, owned vertices first in id order,
 * then the ghosts in the order its triangles first use them. */
typedef struct test_cloth {
    size_t n_points, n_cells;
    int64_t *gid, *cells; /* n_points; 3 n_cells, indices into the points */
    int32_t *body;
    double *X, *x, *u, *v; /* 3 n_points */
} test_cloth;

static void test_cloth_init(test_cloth *cl, const test_block *b, const long dims[3])
{
    int64_t nx = dims[0], nxy = dims[0] * dims[1], nz = dims[2], total = nxy * nz;
    int64_t first = b->first, last = b->first + (int64_t)b->n;
    /* A face vertex's point index on this rank, or -1; the lattice is small enough for a map over every id. */
    int64_t *local = shard_malloc((size_t)total * sizeof *local + 1);
    for (int64_t g = 0; g < total; g++)
        local[g] = -1;
    size_t owned = 0, squares = 0;
    for (int64_t g = first; g < last; g++)
        if ((g / nx) % dims[1] == 0) {
            owned++;
            squares += g % nx < nx - 1 && g / nxy < nz - 1;
        }
    /* Each square adds at most 3 ghosts. */
    size_t cap = owned + 3 * squares;
    cl->gid = shard_malloc(cap * sizeof *cl->gid + 1);
    cl->cells = shard_malloc(6 * squares * sizeof *cl->cells + 1);
    cl->n_points = cl->n_cells = 0;
    for (int64_t g = first; g < last; g++)
        if ((g / nx) % dims[1] == 0) {
            local[g] = (int64_t)cl->n_points;
            cl->gid[cl->n_points++] = g;
        }
    for (int64_t g = first; g < last; g++) {
        if ((g / nx) % dims[1] != 0 || g % nx == nx - 1 || g / nxy == nz - 1)
            continue;
        int64_t corner[4] = {g, g + 1, g + nxy, g + nxy + 1}, k[4];
        for (int j = 0; j < 4; j++) {
            if (local[corner[j]] < 0) {
                local[corner[j]] = (int64_t)cl->n_points;
                cl->gid[cl->n_points++] = corner[j];
            }
            k[j] = local[corner[j]];
        }
        /* (g, g+1, top right) and (g, top right, top left): both counter-clockwise seen from -y */
        int64_t *t = cl->cells + 3 * cl->n_cells;
        t[0] = k[0], t[1] = k[1], t[2] = k[3];
        t[3] = k[0], t[4] = k[3], t[5] = k[2];
        cl->n_cells += 2;
    }
    free(local);
    size_t n = cl->n_points;
    cl->body = shard_malloc(n * sizeof *cl->body + 1);
    cl->X = shard_malloc(3 * n * sizeof *cl->X + 1);
    cl->x = shard_malloc(3 * n * sizeof *cl->x + 1);
    cl->u = shard_malloc(3 * n * sizeof *cl->u + 1);
    cl->v = shard_malloc(3 * n * sizeof *cl->v + 1);
    for (size_t i = 0; i < n; i++)
        test_rest(cl->gid[i], dims, cl->X + 3 * i, &cl->body[i]);
}

static void test_cloth_fill(test_cloth *cl, long step)
{
    for (size_t i = 0; i < cl->n_points; i++)
        test_wave(cl->X + 3 * i, step, cl->u + 3 * i, cl->x + 3 * i, cl->v + 3 * i);
}

static void test_cloth_free(test_cloth *cl)
{
    free(cl->gid), free(cl->cells), free(cl->body), free(cl->X), free(cl->x), free(cl->u), free(cl->v);
}

static void test_spin(double seconds)
{
    double t0 = shard_wtime();
    while (shard_wtime() - t0 < seconds)
        ;
}

/* The column of output field `name` (its type and components as a run of this build has them) over data. */
static shard_column test_column(const char *name, const void *data)
{
    shard_scene sc = {0};
    sc.modules = shard_matter_table(&sc.n_modules);
    const shard_output_field_info *fi = shard_output_info(&sc, shard_output_find(&sc, name));
    return (shard_column){fi->name, fi->type, fi->ncomp, data};
}

int main(int argc, char **argv)
{
    shard_comm *c = shard_comm_init(&argc, &argv);
    int rank = shard_comm_rank(c), size = shard_comm_size(c);
    const char *scripts[SHARD_INSITU_MAX_SCRIPTS];
    long every[SHARD_INSITU_MAX_SCRIPTS];
    int n_scripts = 0, only_position = 0, cloth = 0, cloth_bad = -1;
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
        } else if (!strcmp(a, "--cloth")) {
            cloth = 1;
        } else if (!strcmp(a, "--cloth-bad") && left >= 1) {
            cloth_bad = atoi(argv[++i]);
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
    test_cloth cl = {0};
    if (cloth)
        test_cloth_init(&cl, &b, dims);
    if (rank == cloth_bad && cl.n_cells > 0)
        cl.cells[3 * cl.n_cells - 1] = (int64_t)cl.n_points;
    if (rank == 0)
        printf("particles %lld\n", (long long)dims[0] * dims[1] * dims[2]);
    if (rank == 0 && cloth)
        printf("cloth triangles %lld\n", 2LL * (dims[0] - 1) * (dims[2] - 1));
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
        /* The columns the driver hands over, by the output fields of this build (rank: the adaptor's own). */
        const struct {
            const char *name;
            const void *data;
        } given[] = {{"global_id", b.gid}, {"velocity", b.v},        {"displacement", b.u}, {"stress", b.stress},
                     {"von_mises", b.vm},  {"plastic_strain", b.plastic}, {"damage", b.damage}, {"stretch", b.stretch},
                     {"contact", b.contact}, {"body", b.body},       {"material", b.material}, {"inverted", b.inverted}};
        shard_column cols[SHARD_OUTPUT_MAX];
        int n_cols = 0;
        for (size_t k = 0; k < sizeof given / sizeof given[0] && !only_position; k++)
            cols[n_cols++] = test_column(given[k].name, given[k].data);
        shard_insitu_fields f = {.n = b.n, .position = b.x, .n_cols = n_cols, .cols = cols};
        shard_column cell_cols[3];
        if (cloth) {
            test_cloth_fill(&cl, step);
            cell_cols[0] = test_column("global_id", cl.gid);
            cell_cols[1] = test_column("velocity", cl.v);
            cell_cols[2] = test_column("body", cl.body);
            f.has_cells = 1;
            f.n_cell_points = cl.n_points, f.cell_position = cl.x;
            f.n_cells = cl.n_cells, f.cells = cl.cells;
            f.n_cell_cols = 3, f.cell_cols = cell_cols;
        }
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
    test_cloth_free(&cl);
    shard_comm_finalize(&c);
    return 0;
}
