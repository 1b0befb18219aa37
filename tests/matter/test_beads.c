/* A kind of matter built here, outside the source tree, with everything a kind may own: "beads", lattice particles
 * joined to their neighbours within `reach` spacings by springs of stiffness `stiffness`, stiffened by the mean
 * stretch of both ends.  In this one file and one row of the test's table it brings
 *   - keys of its own (stiffness, required; reach, default 1.5), which the scene reader reads into its struct;
 *   - a block row (the mean stretch of each bead's springs) that its two-pass force term computes in pass 1 and
 *     reads at the bond ghosts in pass 2, so the driver must forward it to them (exchange_row);
 *   - an output field `mean_stretch`, filled from that row.
 * No other file names the kind.
 *
 * Checks: the keys and their messages (a bead's key given to a solid names the kind; the required one missing;
 * a range); momentum of the spinning cluster conserved (the spring forces are pairwise); the output column is
 * the mean stretch recomputed from the final positions, and zero at the solid's particles; some rank holds
 * bead ghosts when there are several; and the state hash, printed for tests/matter/tracer.sh, which requires
 * the same at 1 and 3 ranks (a ghost that missed the row would change the forces near a rank boundary).
 * usage: mpiexec -n N test_beads
 */
#include "scene_keys.h"
#include "shard/comm.h"
#include "shard/forces.h"
#include "shard/matter.h"
#include "shard/run.h"
#include "test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Its keys, and its per-body state from them. */
typedef struct beads_def {
    double stiffness; /* N/m, > 0 */
    double reach;     /* bond radius in spacings, in (1, 3] */
} beads_def;

typedef struct beads_body {
    double k, radius, mass;
} beads_body;

enum { BEADS_STRETCH = 0, BEADS_N_ROWS };
static const shard_field_desc beads_rows[] = {SHARD_BLOCK_ROW(BEADS_STRETCH, double, 1, 0, "mean_stretch")};

static const shard_scene_field beads_key_rows[] = {
    {.key = "stiffness",
     .kind = SHARD_KEY_NUMBER,
     .flags = SHARD_KEY_REQUIRED,
     .offset = offsetof(beads_def, stiffness),
     .r = SHARD_KEY_GT(0)},
    {.key = "reach",
     .kind = SHARD_KEY_NUMBER,
     .offset = offsetof(beads_def, reach),
     .r = SHARD_KEY_IN('(', 1, 3, ']'),
     .def = {1.5}},
};
static const shard_scene_section beads_body_keys = SHARD_KEY_SECTION(beads_key_rows, 0, NULL);
static const shard_matter_keys beads_keys = {.body = &beads_body_keys, .body_bytes = sizeof(beads_def)};

static int beads_init(const shard_scene *sc, int b, void *state, shard_error *err)
{
    (void)err;
    const shard_body_def *bd = &sc->bodies[b];
    const beads_def *d = bd->kind_def;
    beads_body *bb = state;
    bb->k = d->stiffness;
    bb->radius = d->reach * bd->spacing;
    bb->mass = sc->materials[bd->material].density * bd->spacing * bd->spacing * bd->spacing;
    return 0;
}

/* A spring's period over 2 pi is sqrt(m / k); a bead has up to 18 of them (reach 1.5), 80 at reach 3. */
static double beads_dt(const shard_scene *sc, int b, const void *state)
{
    (void)sc, (void)b;
    const beads_body *bb = state;
    return 0.1 * sqrt(bb->mass / bb->k);
}

static double beads_bond_radius(const shard_scene *sc, int b)
{
    const shard_body_def *bd = &sc->bodies[b];
    return ((const beads_def *)bd->kind_def)->reach * bd->spacing;
}

/* The block slot of local particle i (owned or bond ghost). */
static size_t beads_slot(const shard_block *blk, size_t i)
{
    return i < blk->first + blk->n_owned ? i - blk->first : blk->n_owned + (i - blk->ghost_first);
}

/* Spring ij's stretch (|x_ij| - |X_ij|) / |X_ij| and, in e, the unit vector from i to j. */
static double beads_spring(const shard_particles *p, size_t i, size_t j, double e[3])
{
    double dx[3], dX[3];
    for (int d = 0; d < 3; d++)
        dx[d] = p->x[3 * j + d] - p->x[3 * i + d], dX[d] = p->X[3 * j + d] - p->X[3 * i + d];
    double l = sqrt(dx[0] * dx[0] + dx[1] * dx[1] + dx[2] * dx[2]);
    double L = sqrt(dX[0] * dX[0] + dX[1] * dX[1] + dX[2] * dX[2]);
    for (int d = 0; d < 3; d++)
        e[d] = dx[d] / l;
    return (l - L) / L;
}

/* The mean stretch of bead i's springs. */
static double beads_mean_stretch(const shard_particles *p, const shard_csr *bonds, size_t i)
{
    double sum = 0.0, e[3];
    int64_t b0 = bonds->start[i], b1 = bonds->start[i + 1];
    for (int64_t q = b0; q < b1; q++)
        sum += beads_spring(p, i, (size_t)bonds->idx[q], e);
    return b1 > b0 ? sum / (double)(b1 - b0) : 0.0;
}

static void beads_pass1(const shard_matter_ctx *c, const int32_t *list, size_t n)
{
    double *s = c->block->col[BEADS_STRETCH];
    for (size_t k = 0; k < n; k++)
        s[beads_slot(c->block, (size_t)list[k])] = beads_mean_stretch(c->ph->p, c->ph->bonds, (size_t)list[k]);
}

/* f_i = sum_j k (1 + (s_i + s_j) / 2) (|x_ij| - |X_ij|) e_ij: pairwise, so momentum is kept. */
static size_t beads_add(const shard_matter_ctx *c, double *f, const int32_t *list, size_t n, int ghosts)
{
    (void)ghosts;
    const shard_particles *p = c->ph->p;
    const shard_csr *bonds = c->ph->bonds;
    const double *s = c->block->col[BEADS_STRETCH];
    for (size_t k = 0; k < n; k++) {
        size_t i = (size_t)list[k];
        const beads_body *bb = (const beads_body *)c->bodies + p->body[i];
        double si = s[beads_slot(c->block, i)];
        for (int64_t q = bonds->start[i]; q < bonds->start[i + 1]; q++) {
            size_t j = (size_t)bonds->idx[q];
            double e[3], st = beads_spring(p, i, j, e), sj = s[beads_slot(c->block, j)];
            double L = sqrt(pow(p->X[3 * j] - p->X[3 * i], 2) + pow(p->X[3 * j + 1] - p->X[3 * i + 1], 2) +
                            pow(p->X[3 * j + 2] - p->X[3 * i + 2], 2));
            double mag = bb->k * (1.0 + 0.5 * (si + sj)) * st * L;
            for (int d = 0; d < 3; d++)
                f[3 * i + d] += mag * e[d];
        }
    }
    return 0;
}

static const shard_output_field_info beads_out[] = {
    {"mean_stretch", SHARD_TYPE_F64, 1, "1", "beads", "the mean stretch of the bead's springs"}};

static void beads_output(const shard_matter_ctx *c, unsigned want, void *const *cols)
{
    double *out = cols[0];
    const double *s = c->block->col[BEADS_STRETCH];
    for (size_t k = 0; (want & 1u) && k < c->block->n_owned; k++)
        out[c->block->first + k] = s[k];
}

static void beads_describe(const shard_scene *sc, int b, char *buf, size_t len)
{
    const beads_def *d = sc->bodies[b].kind_def;
    snprintf(buf, len, "beads, springs of %g N/m within %g spacings", d->stiffness, d->reach);
}

static const shard_force_term beads_force = {
    .name = "beads",
    .phase = "Beads",
    .order = SHARD_FORCE_ORDER_SOLID + 50, /* two-pass: before every one-pass term */
    .pass1 = beads_pass1,
    .exchange_row = BEADS_STRETCH,
    .add = beads_add,
};
static const shard_force_term *const beads_terms[] = {&beads_force};

/* The whole kind. */
static const shard_matter beads = {
    .kind = "beads",
    .about = "lattice beads joined by springs that stiffen with their ends' mean stretch",
    .keys = &beads_keys,
    .rows = beads_rows,
    .n_rows = BEADS_N_ROWS,
    .body_bytes = sizeof(beads_body),
    .body_init = beads_init,
    .dt_limit = beads_dt,
    .dt_name = "bead springs",
    .bond_radius = beads_bond_radius,
    .terms = beads_terms,
    .n_terms = 1,
    .out_fields = beads_out,
    .n_out_fields = 1,
    .output = beads_output,
    .describe = beads_describe,
};

#define SCENE_HEAD                                                                                                     \
    "run: {steps: 300, gravity: [0, 0, 0]}\n"                                                                          \
    "materials:\n"                                                                                                     \
    "  rubber: {density: 1100, E: 2.0e6, nu: 0.45}\n"                                                                  \
    "bodies:\n"

static const char scene[] = SCENE_HEAD "  - name: cluster\n"
                                       "    kind: beads\n"
                                       "    material: rubber\n"
                                       "    shape: {box: {min: [0, 0, 0], max: [0.16, 0.16, 0.12]}}\n"
                                       "    spacing: 0.02\n"
                                       "    stiffness: 400\n"
                                       "    velocity: [0.1, 0, 0]\n"
                                       "    angular_velocity: [0, 0, 30]\n"
                                       "  - name: slab\n"
                                       "    material: rubber\n"
                                       "    shape: {box: {min: [2, 0, 0], max: [2.1, 0.05, 0.05]}}\n"
                                       "    spacing: 0.0125\n";

/* The scene reader with the test's table: the message of `body` (one body's keys after `- `), or "" if read. */
static void expect_keys(const shard_matter *const *modules, int n, const char *body, const char *expected)
{
    char text[1024];
    snprintf(text, sizeof text, SCENE_HEAD "  - {%s}\n", body);
    shard_scene sc;
    shard_error err = {0};
    int rc = shard_scene_parse_with("beads.yaml", text, strlen(text), modules, n, &sc, &err);
    const char *got = rc ? err.msg : "";
    SHARD_ENSURE(strcmp(got, expected) == 0);
    if (strcmp(got, expected) != 0)
        fprintf(stderr, "  got      '%s'\n  expected '%s'\n", got, expected);
    if (!rc) {
        SHARD_ENSURE(sc.bodies[0].kind_def && ((const beads_def *)sc.bodies[0].kind_def)->reach == 1.5);
        shard_scene_free(&sc);
    }
}

static void test_keys(const shard_matter *const *modules, int n)
{
    const char *box = "material: rubber, shape: {box: {min: [0, 0, 0], max: [1, 1, 1]}}, spacing: 0.5";
    char body[512];
    snprintf(body, sizeof body, "kind: beads, %s, stiffness: 10", box);
    expect_keys(modules, n, body, "");
    snprintf(body, sizeof body, "kind: beads, %s", box);
    expect_keys(modules, n, body, "beads.yaml:5:5: bodies[0]: missing required key 'stiffness'");
    snprintf(body, sizeof body, "kind: beads, %s, stiffness: 10, reach: 4", box);
    expect_keys(modules, n, body, "beads.yaml:5:121: bodies[0].reach: must be in (1, 3], got 4");
    snprintf(body, sizeof body, "%s, stiffness: 10", box);
    expect_keys(modules, n, body,
                "beads.yaml:5:86: bodies[0].stiffness: is a key of bodies of kind 'beads', and this body is of kind "
                "'solid'");
    snprintf(body, sizeof body, "kind: beads, %s, stiffness: 10, colour: red", box);
    expect_keys(modules, n, body,
                "beads.yaml:5:114: bodies[0].colour: unknown key (allowed: name, kind, material, shape, spacing, "
                "velocity, angular_velocity, fixed, prescribed, notches, tractions; for kind beads: stiffness, "
                "reach)");
    /* a key of the body record that only some kinds take (matter.h, body_shared) names all of them */
    snprintf(body, sizeof body, "kind: beads, %s, stiffness: 10, sampling: surface", box);
    expect_keys(modules, n, body,
                "beads.yaml:5:114: bodies[0].sampling: is a key of bodies of kind 'solid' or 'rigid', and this body "
                "is of kind 'beads'");
}

int main(int argc, char **argv)
{
    shard_comm *c = shard_comm_init(&argc, &argv);
    int n_default = 0;
    const shard_matter *const *def = shard_matter_table(&n_default);
    static const shard_matter *modules[SHARD_MATTER_MAX];
    for (int k = 0; k < n_default; k++)
        modules[k] = def[k];
    modules[n_default] = &beads; /* the kind's one row */
    int n_modules = n_default + 1;
    test_keys(modules, n_modules);

    shard_sim_tables tables = {.modules = modules, .n_modules = n_modules};
    shard_overrides ov = shard_default_overrides();
    shard_error err;
    shard_sim *s = shard_sim_create_with(c, "beads.yaml", scene, strlen(scene), &ov, &tables, &err);
    if (!s)
        shard_fail_all(c, err.code ? err.code : 1, err.msg);
    const shard_particles *p = shard_sim_particles(s);
    /* The momentum (the exact sum over every particle; the solid far away keeps none). */
    shard_diag d0 = shard_sim_diagnostics(s);
    long steps = shard_sim_total_steps(s);
    for (long k = 0; k < steps; k++)
        shard_sim_step(s);
    shard_diag d = shard_sim_diagnostics(s);
    double p0[3], p1[3];
    for (int k = 0; k < 3; k++) { /* 0.1 m/s x 3.4 kg: round-off, never a missing or one-sided force */
        p0[k] = d0.momentum[k], p1[k] = d.momentum[k];
        SHARD_ENSURE(fabs(p1[k] - p0[k]) < 1e-12);
    }

    /* The output field, against the mean stretch recomputed from the final positions (output forwards them to
     * the ghosts first). */
    shard_column cols[SHARD_OUTPUT_MAX];
    int nc = shard_sim_output_columns(s, cols, SHARD_OUTPUT_MAX);
    const double *col = NULL;
    for (int k = 0; k < nc; k++)
        if (strcmp(cols[k].name, "mean_stretch") == 0)
            col = cols[k].data;
    SHARD_ENSURE(col != NULL);
    const shard_csr *bonds = shard_sim_bonds(s);
    double worst = 0.0, largest = 0.0;
    for (size_t i = 0; col && i < p->n_owned; i++) {
        double want = p->body[i] == 0 ? beads_mean_stretch(p, bonds, i) : 0.0;
        worst = fmax(worst, fabs(col[i] - want));
        largest = fmax(largest, fabs(col[i]));
    }
    worst = shard_comm_max(c, worst), largest = shard_comm_max(c, largest);
    SHARD_ENSURE(worst < 1e-15);
    SHARD_ENSURE(largest > 1e-3); /* the spin stretches the springs */
    const shard_block *blk = shard_sim_block(s, "beads");
    int64_t ghosts = shard_comm_sum_i64(c, blk ? (int64_t)blk->n_ghost : -1);
    SHARD_ENSURE(shard_comm_size(c) == 1 || ghosts > 0);

    uint64_t hash = shard_sim_hash(s);
    int fails = shard_test_failures;
    shard_comm_max_ints(c, &fails, 1);
    if (shard_comm_rank(c) == 0) {
        printf("beads: momentum change %.3g %.3g %.3g kg m/s, largest mean stretch %.4g, output error %.3g, bead "
               "ghosts %lld\n",
               p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2], largest, worst, (long long)ghosts);
        printf("kinetic %.17g J, momentum %.17g %.17g %.17g\n", d.kinetic, d.momentum[0], d.momentum[1],
               d.momentum[2]);
        printf("State hash: %016llx\n", (unsigned long long)hash);
        printf("%s: beads kind (keys, a ghost row, an output field) through the module table on %d rank(s)\n",
               fails ? "FAIL" : "PASS", shard_comm_size(c));
    }
    shard_sim_destroy(&s);
    shard_comm_finalize(&c);
    return fails ? 1 : 0;
}
