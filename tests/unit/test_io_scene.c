/* The scene's output and checkpoint sections (every key, the defaults, absence) and the interval rule that
 * decides when they fall due; the particle registry's invariants that checkpoints rely on. */
#include "shard/matter.h"
#include "shard/output.h"
#include "shard/particles.h"
#include "shard/scene.h"
#include "solid/solid.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

static const char base[] =
    "run: {steps: 100, output_dir: runs/a}\n"
    "materials: {steel: {density: 7800, E: 2.0e11, nu: 0.3}}\n"
    "bodies:\n"
    "  - {material: steel, shape: {sphere: {center: [0, 0, 1], radius: 0.1}}, spacing: 0.01}\n";

static int parse(const char *extra, shard_scene *sc, shard_error *err)
{
    char text[4096];
    snprintf(text, sizeof text, "%s%s", base, extra);
    return shard_scene_parse("io.yaml", text, strlen(text), sc, err);
}

static void test_absent(void)
{
    shard_scene sc;
    shard_error err = {0};
    SHARD_ENSURE(parse("", &sc, &err) == 0);
    SHARD_ENSURE(!sc.output.enabled && !sc.checkpoint.enabled);
    shard_scene_free(&sc);
}

static void test_every_key(void)
{
    shard_scene sc;
    shard_error err = {0};
    int rc = parse("output: {every_time: 0.01, fields: [velocity, stress, damage], dir: fields}\n"
                   "checkpoint: {every: 500, keep: 3, dir: ckpt}\n",
                   &sc, &err);
    if (rc)
        fprintf(stderr, "%s\n", err.msg);
    SHARD_ENSURE(rc == 0);
    SHARD_ENSURE(sc.output.enabled && sc.output.interval.every == 0);
    SHARD_ENSURE_NEAR(sc.output.interval.every_time, 0.01, 0.0);
    int stress = shard_output_find(&sc, "stress"), damage = shard_output_find(&sc, "damage");
    SHARD_ENSURE(stress >= SHARD_OUT_COUNT && damage > stress); /* the solid's fields come after the core's */
    unsigned want = 1u << SHARD_OUT_POSITION | 1u << SHARD_OUT_GLOBAL_ID | 1u << SHARD_OUT_VELOCITY | 1u << stress |
                    1u << damage;
    SHARD_ENSURE(sc.output.fields == want);
    SHARD_ENSURE(strcmp(sc.output.dir, "fields") == 0);
    SHARD_ENSURE(sc.checkpoint.enabled && sc.checkpoint.interval.every == 500 && sc.checkpoint.keep == 3);
    SHARD_ENSURE(strcmp(sc.checkpoint.dir, "ckpt") == 0);
    shard_scene_free(&sc);
}

static void test_defaults(void)
{
    shard_scene sc;
    shard_error err = {0};
    SHARD_ENSURE(parse("output: {every: 10}\ncheckpoint: {every: 100}\n", &sc, &err) == 0);
    SHARD_ENSURE(sc.output.fields == shard_output_all(&sc) && shard_output_count(&sc) > SHARD_OUT_COUNT);
    SHARD_ENSURE(sc.output.dir[0] == '\0' && sc.checkpoint.dir[0] == '\0');
    SHARD_ENSURE(sc.checkpoint.keep == 2);
    shard_scene_free(&sc);
    SHARD_ENSURE(parse("output: {every: 10, fields: []}\n", &sc, &err) == 0);
    SHARD_ENSURE(sc.output.fields == (1u << SHARD_OUT_POSITION | 1u << SHARD_OUT_GLOBAL_ID));
    shard_scene_free(&sc);
}

static void test_interval(void)
{
    shard_interval steps = {.every = 100};
    SHARD_ENSURE(shard_interval_due(&steps, 0, 1e-3));
    SHARD_ENSURE(!shard_interval_due(&steps, 99, 1e-3));
    SHARD_ENSURE(shard_interval_due(&steps, 200, 1e-3));
    /* 0.01 s with dt = 1e-4: steps 0, 100, 200, ... even though 100 * 1e-4 is not exactly 0.01 */
    shard_interval t = {.every_time = 0.01};
    int hits = 0;
    for (long s = 0; s <= 1000; s++)
        if (shard_interval_due(&t, s, 1e-4)) {
            SHARD_ENSURE(s % 100 == 0);
            hits++;
        }
    SHARD_ENSURE(hits == 11);
    /* dt not dividing the interval: the first step at or past each multiple */
    shard_interval t3 = {.every_time = 0.001};
    SHARD_ENSURE(shard_interval_due(&t3, 0, 3e-4));
    SHARD_ENSURE(!shard_interval_due(&t3, 3, 3e-4));
    SHARD_ENSURE(shard_interval_due(&t3, 4, 3e-4));
    SHARD_ENSURE(shard_interval_due(&t3, 7, 3e-4));
    shard_interval none = {0};
    SHARD_ENSURE(!shard_interval_due(&none, 0, 1e-3));
}

static void test_registry(void)
{
    int state = 0, names_ok = 1;
    for (int f = 0; f < shard_particle_n_fields; f++) {
        const shard_field_desc *d = &shard_particle_fields[f];
        state += (d->flags & SHARD_FIELD_STATE) != 0;
        /* ghost rows are a subset of the state rows: the distribution only carries state */
        SHARD_ENSURE(!(d->flags & SHARD_FIELD_GHOST) || (d->flags & SHARD_FIELD_STATE));
        for (int g = 0; g < f; g++)
            names_ok &= strcmp(d->name, shard_particle_fields[g].name) != 0;
    }
    SHARD_ENSURE(names_ok);
    /* the state every kind needs for a bit-identical restart: gid, body, flags, X, x, v, a, vpres */
    SHARD_ENSURE(state == 8);
    shard_particles p;
    shard_particles_alloc_rows(&p, 10, SHARD_FIELD_STATE);
    SHARD_ENSURE(p.x && p.a && p.vpres && !p.mass && !p.x_build && p.n_owned == 10);
    shard_particles_free(&p);
    /* the solid's block adds its plastic strain and its fracture scales (fracture.h), and only those, to the
     * state */
    static const shard_field_desc solid[] = {SHARD_SOLID_FIELDS(SHARD_BLOCK_ROW)};
    int solid_state = 0;
    for (int r = 0; r < SHARD_SOLID_N_ROWS; r++)
        solid_state += (solid[r].flags & SHARD_FIELD_STATE) != 0;
    SHARD_ENSURE(solid_state == 2 && solid[SHARD_SOLID_EPS_P].flags == SHARD_FIELD_STATE);
    SHARD_ENSURE(solid[SHARD_SOLID_SCALE].flags == SHARD_FIELD_STATE && solid[SHARD_SOLID_SCALE].ncomp == 2);
    SHARD_ENSURE(strcmp(solid[SHARD_SOLID_EPS_P].name, "plastic_strain") == 0 && solid[SHARD_SOLID_B].ncomp == 9);
}

int main(void)
{
    test_absent();
    test_every_key();
    test_defaults();
    test_interval();
    test_registry();
    return SHARD_TEST_RESULT();
}
