/* Scene parser: a full scene with every key, the defaults of a minimal one, exact error messages, the inside
 * tests, and every tests/bad_input case that fails at parse time (its message must match the .expected file,
 * so those files cannot drift from the parser).  Runs with tests/ as the working directory. */
#define _POSIX_C_SOURCE 200809L
#include "shard/scene.h"
#include "solid/solid.h"
#include "test.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char full_scene[] =
    "# every key, most with a non-default value\n"
    "run:\n"
    "  gravity: [0, -1.5, -9.81]\n"
    "  steps: 1000\n"
    "  dt: 1e-6\n"
    "  dt_safety: 0.25\n"
    "  diagnostics_every: 100\n"
    "  output_dir: out/drop\n"
    "  skin: 0.75\n"
    "  svd_threshold: 1e-4\n"
    "materials:\n"
    "  steel:\n"
    "    density: 7800\n"
    "    E: 2.0e11\n"
    "    nu: 0.3\n"
    "    volume_stiffness: 1e9\n"
    "    damping: 1e-5\n"
    "    plasticity: {yield: 0.01, creep: 50, max: 0.2}\n"
    "    contact: {stiffness: 1e8, damping: 0.2, friction: 0.4}\n"
    "  rubber: {density: 1100, E: 1e7, nu: 0.45}\n"
    "bodies:\n"
    "  - name: ball\n"
    "    material: rubber\n"
    "    shape: {sphere: {center: [0, 0, 1], radius: 0.1}}\n"
    "    spacing: 0.01\n"
    "    support: 2.5\n"
    "    velocity: [0, 0, -1]\n"
    "    angular_velocity: [0, 3, 0]\n"
    "  - material: steel\n"
    "    shape:\n"
    "      box: {min: [-1, -1, -0.1], max: [1, 1, 0]}\n"
    "    spacing: 0.02\n"
    "    prescribed:\n"
    "      - {region: {sphere: {center: [0, 0, 0], radius: 0.05}}, velocity: [0, 0, 0.1]}\n"
    "    fixed:\n"
    "      - {box: {min: [-1, -1, -0.1], max: [-0.9, 1, 0]}}\n"
    "      - cylinder: {p0: [0.9, 0, -0.1], p1: [0.9, 0, 0], radius: 0.05}\n"
    "  - name: part\n"
    "    material: steel\n"
    "    shape: {mesh: {file: parts/bracket.stl, scale: 0.001, translate: [0, 0, 2]}}\n"
    "    spacing: 0.005\n"
    "  - material: steel\n"
    "    shape: {mesh: {file: /abs/bracket.obj}}\n"
    "    spacing: 0.005\n"
    "obstacles:\n"
    "  - plane: {point: [0, 0, -0.1], normal: [0, 0, 2]}\n"
    "    name: ground\n"
    "    friction: 0.7\n"
    "    stiffness: 1e9\n"
    "    damping: 0.3\n"
    "  - sphere: {center: [3, 0, 0], radius: 0.5}\n"
    "    velocity: [1, 0, 0]\n"
    "  - box: {min: [5, 5, 5], max: [6, 6, 6]}\n";

static void check_loc(const shard_src_loc *loc, int line, int col, const char *key)
{
    SHARD_ENSURE(loc->line == line);
    SHARD_ENSURE(loc->col == col);
    SHARD_ENSURE(strcmp(loc->key, key) == 0);
    if (loc->line != line || loc->col != col || strcmp(loc->key, key) != 0)
        fprintf(stderr, "  loc is %d:%d '%s', expected %d:%d '%s'\n", loc->line, loc->col, loc->key, line, col, key);
}

static void check_vec(const double v[3], double x, double y, double z)
{
    SHARD_ENSURE_NEAR(v[0], x, 1e-15);
    SHARD_ENSURE_NEAR(v[1], y, 1e-15);
    SHARD_ENSURE_NEAR(v[2], z, 1e-15);
}

static void test_full_scene(void)
{
    shard_scene s;
    shard_error err = {0};
    int rc = shard_scene_parse("scenes/drop.yaml", full_scene, strlen(full_scene), &s, &err);
    SHARD_ENSURE(rc == 0);
    if (rc) {
        fprintf(stderr, "  %s\n", err.msg);
        return;
    }
    SHARD_ENSURE(strcmp(s.path, "scenes/drop.yaml") == 0);
    SHARD_ENSURE(strcmp(s.dir, "scenes") == 0);
    SHARD_ENSURE(s.text_len == strlen(full_scene) && memcmp(s.text, full_scene, s.text_len) == 0);

    check_vec(s.run.gravity, 0, -1.5, -9.81);
    SHARD_ENSURE(s.run.steps == 1000);
    SHARD_ENSURE(s.run.end_time == 0);
    SHARD_ENSURE_NEAR(s.run.dt, 1e-6, 0);
    SHARD_ENSURE_NEAR(s.run.dt_safety, 0.25, 0);
    SHARD_ENSURE(s.run.diagnostics_every == 100);
    SHARD_ENSURE(strcmp(s.run.output_dir, "out/drop") == 0);
    SHARD_ENSURE_NEAR(s.run.skin, 0.75, 0);
    SHARD_ENSURE_NEAR(s.run.svd_threshold, 1e-4, 0);
    check_loc(&s.run.steps_loc, 4, 10, "run.steps");
    check_loc(&s.run.dt_loc, 5, 7, "run.dt");
    SHARD_ENSURE(s.run.end_time_loc.line == 0);

    SHARD_ENSURE(s.n_materials == 2);
    const shard_material *steel = &s.materials[0], *rubber = &s.materials[1];
    SHARD_ENSURE(strcmp(steel->name, "steel") == 0 && strcmp(rubber->name, "rubber") == 0);
    SHARD_ENSURE_NEAR(steel->density, 7800, 0);
    SHARD_ENSURE_NEAR(steel->E, 2e11, 0);
    SHARD_ENSURE_NEAR(steel->nu, 0.3, 0);
    SHARD_ENSURE_NEAR(steel->volume_stiffness, 1e9, 0);
    SHARD_ENSURE_NEAR(steel->damping, 1e-5, 0);
    SHARD_ENSURE_NEAR(steel->yield, 0.01, 0);
    SHARD_ENSURE_NEAR(steel->creep, 50, 0);
    SHARD_ENSURE_NEAR(steel->max_plastic, 0.2, 0);
    SHARD_ENSURE_NEAR(steel->contact_stiffness, 1e8, 0);
    SHARD_ENSURE_NEAR(steel->contact_damping, 0.2, 0);
    SHARD_ENSURE_NEAR(steel->friction, 0.4, 0);
    check_loc(&steel->loc, 13, 5, "materials.steel");
    /* rubber: only the required keys, so every optional one is at its default */
    SHARD_ENSURE_NEAR(rubber->density, 1100, 0);
    SHARD_ENSURE_NEAR(rubber->E, 1e7, 0);
    SHARD_ENSURE_NEAR(rubber->nu, 0.45, 0);
    SHARD_ENSURE(rubber->volume_stiffness == 0 && rubber->damping == 0);
    SHARD_ENSURE(rubber->yield == 0 && rubber->creep == 0 && rubber->max_plastic == 0);
    SHARD_ENSURE(rubber->contact_stiffness == 0);
    SHARD_ENSURE_NEAR(rubber->contact_damping, 0.1, 0);
    SHARD_ENSURE_NEAR(rubber->friction, 0.5, 0);
    check_loc(&rubber->loc, 20, 11, "materials.rubber");

    SHARD_ENSURE(s.n_bodies == 4);
    const shard_body_def *ball = &s.bodies[0], *slab = &s.bodies[1], *part = &s.bodies[2], *abs = &s.bodies[3];
    SHARD_ENSURE(strcmp(ball->name, "ball") == 0);
    SHARD_ENSURE(ball->material == 1);
    SHARD_ENSURE(ball->shape.kind == SHARD_SHAPE_SPHERE);
    check_vec(ball->shape.center, 0, 0, 1);
    SHARD_ENSURE_NEAR(ball->shape.radius, 0.1, 0);
    SHARD_ENSURE_NEAR(ball->spacing, 0.01, 0);
    SHARD_ENSURE_NEAR(shard_solid_def_of(ball)->support, 2.5, 0);
    check_vec(ball->velocity, 0, 0, -1);
    check_vec(ball->angular_velocity, 0, 3, 0);
    SHARD_ENSURE(ball->n_constraints == 0 && ball->constraints == NULL);
    check_loc(&ball->loc, 22, 5, "bodies[0]");
    check_loc(&ball->shape.loc, 24, 12, "bodies[0].shape");

    SHARD_ENSURE(strcmp(slab->name, "body1") == 0);
    SHARD_ENSURE(slab->material == 0);
    SHARD_ENSURE(slab->shape.kind == SHARD_SHAPE_BOX);
    check_vec(slab->shape.min, -1, -1, -0.1);
    check_vec(slab->shape.max, 1, 1, 0);
    SHARD_ENSURE_NEAR(shard_solid_def_of(slab)->support, 2.2, 0);
    check_vec(slab->velocity, 0, 0, 0);
    check_vec(slab->angular_velocity, 0, 0, 0);
    check_loc(&slab->shape.loc, 31, 7, "bodies[1].shape");
    /* fixed regions first, then prescribed, although the file gives prescribed first */
    SHARD_ENSURE(slab->n_constraints == 3);
    if (slab->n_constraints == 3) {
        const shard_constraint *c = slab->constraints;
        SHARD_ENSURE(c[0].region.kind == SHARD_SHAPE_BOX);
        check_vec(c[0].region.max, -0.9, 1, 0);
        check_vec(c[0].velocity, 0, 0, 0);
        check_loc(&c[0].loc, 36, 9, "bodies[1].fixed[0]");
        SHARD_ENSURE(c[1].region.kind == SHARD_SHAPE_CYLINDER);
        check_vec(c[1].region.p0, 0.9, 0, -0.1);
        check_vec(c[1].region.p1, 0.9, 0, 0);
        SHARD_ENSURE_NEAR(c[1].region.radius, 0.05, 0);
        check_loc(&c[1].loc, 37, 9, "bodies[1].fixed[1]");
        SHARD_ENSURE(c[2].region.kind == SHARD_SHAPE_SPHERE);
        SHARD_ENSURE_NEAR(c[2].region.radius, 0.05, 0);
        check_vec(c[2].velocity, 0, 0, 0.1);
        check_loc(&c[2].loc, 34, 9, "bodies[1].prescribed[0]");
        check_loc(&c[2].region.loc, 34, 18, "bodies[1].prescribed[0].region");
    }

    SHARD_ENSURE(part->shape.kind == SHARD_SHAPE_MESH);
    SHARD_ENSURE(strcmp(part->shape.file, "scenes/parts/bracket.stl") == 0);
    SHARD_ENSURE_NEAR(part->shape.scale, 0.001, 0);
    check_vec(part->shape.translate, 0, 0, 2);
    check_loc(&part->shape.file_loc, 40, 26, "bodies[2].shape.mesh.file");
    SHARD_ENSURE(strcmp(abs->shape.file, "/abs/bracket.obj") == 0);
    SHARD_ENSURE_NEAR(abs->shape.scale, 1, 0);
    check_vec(abs->shape.translate, 0, 0, 0);
    SHARD_ENSURE(strcmp(abs->name, "body3") == 0);

    SHARD_ENSURE(s.n_obstacles == 3);
    const shard_obstacle_def *ground = &s.obstacles[0], *ball_obs = &s.obstacles[1], *box = &s.obstacles[2];
    SHARD_ENSURE(ground->kind == SHARD_OBSTACLE_PLANE);
    SHARD_ENSURE(strcmp(ground->name, "ground") == 0);
    check_vec(ground->point, 0, 0, -0.1);
    check_vec(ground->normal, 0, 0, 1);
    SHARD_ENSURE_NEAR(ground->friction, 0.7, 0);
    SHARD_ENSURE_NEAR(ground->stiffness, 1e9, 0);
    SHARD_ENSURE_NEAR(ground->damping, 0.3, 0);
    check_loc(&ground->loc, 46, 5, "obstacles[0]");
    SHARD_ENSURE(ball_obs->kind == SHARD_OBSTACLE_SPHERE);
    SHARD_ENSURE(strcmp(ball_obs->name, "obstacles[1]") == 0);
    check_vec(ball_obs->center, 3, 0, 0);
    SHARD_ENSURE_NEAR(ball_obs->radius, 0.5, 0);
    check_vec(ball_obs->velocity, 1, 0, 0);
    SHARD_ENSURE_NEAR(ball_obs->friction, 0.5, 0);
    SHARD_ENSURE(ball_obs->stiffness == 0);
    SHARD_ENSURE_NEAR(ball_obs->damping, 0.1, 0);
    SHARD_ENSURE(box->kind == SHARD_OBSTACLE_BOX);
    check_vec(box->min, 5, 5, 5);
    check_vec(box->max, 6, 6, 6);

    shard_scene_free(&s);
    SHARD_ENSURE(s.text == NULL && s.bodies == NULL && s.n_bodies == 0);
    shard_scene_free(&s);
    shard_scene_free(NULL);
}

static void test_defaults(void)
{
    const char *text = "run: {end_time: 0.5, dt: auto}\n"
                       "materials: {m: {density: 1, E: 1, nu: 0}}\n"
                       "bodies: [{material: m, shape: {mesh: {file: a.stl}}, spacing: 1}]\n";
    shard_scene s;
    shard_error err = {0};
    int rc = shard_scene_parse("drop.yaml", text, strlen(text), &s, &err);
    SHARD_ENSURE(rc == 0);
    if (rc) {
        fprintf(stderr, "  %s\n", err.msg);
        return;
    }
    SHARD_ENSURE(strcmp(s.dir, ".") == 0);
    check_vec(s.run.gravity, 0, 0, -9.81);
    SHARD_ENSURE(s.run.steps == 0);
    SHARD_ENSURE_NEAR(s.run.end_time, 0.5, 0);
    check_loc(&s.run.end_time_loc, 1, 17, "run.end_time");
    SHARD_ENSURE(s.run.dt == 0);
    SHARD_ENSURE_NEAR(s.run.dt_safety, 0.4, 0);
    SHARD_ENSURE(s.run.diagnostics_every == 0);
    SHARD_ENSURE(strcmp(s.run.output_dir, "shard-out") == 0);
    SHARD_ENSURE_NEAR(s.run.skin, 0.5, 0);
    SHARD_ENSURE_NEAR(s.run.svd_threshold, 1e-3, 0);
    SHARD_ENSURE(s.n_obstacles == 0 && s.obstacles == NULL);
    SHARD_ENSURE(strcmp(s.bodies[0].name, "body0") == 0);
    SHARD_ENSURE(strcmp(s.bodies[0].shape.file, "a.stl") == 0);
    SHARD_ENSURE_NEAR(shard_solid_def_of(&s.bodies[0])->support, 2.2, 0);
    shard_scene_free(&s);

    /* absolute scene path: mesh next to it */
    rc = shard_scene_parse("/drop.yaml", text, strlen(text), &s, &err);
    SHARD_ENSURE(rc == 0);
    if (!rc) {
        SHARD_ENSURE(strcmp(s.bodies[0].shape.file, "/a.stl") == 0);
        shard_scene_free(&s);
    }
}

/* The message for `text` parsed as "s.yaml" must be exactly `expected`. */
static void expect_error(const char *text, const char *expected)
{
    shard_scene s;
    shard_error err = {0};
    int rc = shard_scene_parse("s.yaml", text, strlen(text), &s, &err);
    SHARD_ENSURE(rc == SHARD_EXIT_INPUT);
    SHARD_ENSURE(err.code == SHARD_EXIT_INPUT);
    SHARD_ENSURE(strcmp(err.msg, expected) == 0);
    if (strcmp(err.msg, expected) != 0)
        fprintf(stderr, "  got      '%s'\n  expected '%s'\n", err.msg, expected);
    SHARD_ENSURE(s.text == NULL && s.materials == NULL && s.bodies == NULL && s.obstacles == NULL);
}

#define HEAD "run: {steps: 10}\nmaterials:\n  steel: {density: 7800, E: 2e11, nu: 0.3}\n  rubber: {density: 1100, E: 1e7, nu: 0.45}\n"

static void test_errors(void)
{
    expect_error("run: {steps: 10}\n"
                 "materials:\n"
                 "  steel:\n"
                 "    density: 7800\n"
                 "    E: -2e9\n",
                 "s.yaml:5:8: materials.steel.E: must be > 0, got -2e+09");
    expect_error(HEAD "bodies:\n  - {material: steel, shape: {box: {min: [0, 0, 0], max: [1, 1, 1]}}, spacing: 1}\n"
                      "  - material: steel\n    shape: {sphere: {center: [0, 0, 0], radius: 0}}\n    spacing: 1\n",
                 "s.yaml:8:49: bodies[1].shape.sphere.radius: must be > 0, got 0");
    expect_error("run:\n  steps: 10\n  foo: 1\n",
                 "s.yaml:3:3: run.foo: unknown key (allowed: gravity, steps, end_time, dt, dt_safety, "
                 "diagnostics_every, output_dir, skin, svd_threshold)");
    /* kinds own their keys: the unknown-key message lists the body's kind's own after the common ones, a key of
     * another kind names that kind, and a kind's section is a top-level key */
    expect_error(HEAD "bodies:\n  - {material: steel, shape: {box: {min: [0, 0, 0], max: [1, 1, 1]}}, spacing: 1, "
                      "colour: red}\n",
                 "s.yaml:6:83: bodies[0].colour: unknown key (allowed: name, kind, material, shape, spacing, "
                 "velocity, angular_velocity, fixed, prescribed, notches, tractions; for kind solid: sampling, "
                 "support, clamp)");
    expect_error(HEAD "bodies:\n  - {material: steel, shape: {box: {min: [0, 0, 0], max: [1, 1, 1]}}, spacing: 1, "
                      "thickness: 0.1}\n",
                 "s.yaml:6:83: bodies[0].thickness: is a key of bodies of kind 'cloth', and this body is of kind "
                 "'solid'");
    expect_error(HEAD "bodies:\n  - {kind: rigid, material: steel, shape: {box: {min: [0, 0, 0], max: [1, 1, 1]}}, "
                      "spacing: 1, support: 2}\n",
                 "s.yaml:6:96: bodies[0].support: is a key of bodies of kind 'solid', and this body is of kind "
                 "'rigid'");
    expect_error(HEAD "bodies:\n  - {kind: fluid, material: steel}\n",
                 "s.yaml:6:12: bodies[0].kind: unknown kind of matter 'fluid' (this build has: solid, rigid, cloth)");
    expect_error(HEAD "bodies:\n  - {material: steel, shape: {sphere: {center: [0, 0, 0], radius: 1}}, spacing: 1}\n"
                      "cloth: {collision_passes: -1}\n",
                 "s.yaml:7:27: cloth.collision_passes: must be >= 0, got -1");
    expect_error(HEAD "bodies:\n  - {material: steel, shape: {sphere: {center: [0, 0, 0], radius: 1}}, spacing: 1}\n"
                      "solver: {}\n",
                 "s.yaml:7:1: solver: unknown key (allowed: run, materials, bodies, obstacles, output, checkpoint, "
                 "catalyst, relax, fragments, balance, rigid, cloth)");
    expect_error(HEAD "bodies:\n  - material: stel\n",
                 "s.yaml:6:15: bodies[0].material: unknown material 'stel' (defined: steel, rubber)");
    expect_error("run: {steps: 10}\nmaterials:\n  steel: {density: 7800, E: 2e11, nu: 0.5}\n",
                 "s.yaml:3:39: materials.steel.nu: must be in (-1, 0.5), got 0.5");
    expect_error(HEAD "bodies:\n  - {material: steel, shape: {box: {min: [0, 0, 0], max: [1, 1, 1]}}, spacing: abc}\n",
                 "s.yaml:6:80: bodies[0].spacing: expected a number, got 'abc'");
    expect_error(HEAD "bodies:\n  - material: steel\n    shape: {box: {min: [0, 0, 0], max: [1, 1, 1]}}\n",
                 "s.yaml:6:5: bodies[0]: missing required key 'spacing'");
    expect_error("run:\n  steps: 10\n  end_time: 1\n",
                 "s.yaml:3:3: run.end_time: cannot be combined with 'steps' (give exactly one of 'steps' or 'end_time')");
    expect_error("run:\n  steps: [10\n", "s.yaml:3:1: syntax error: flow sequence without a closing bracket");
    expect_error("", "s.yaml:1:1: scene: the file is empty (expected a mapping with keys run, materials, bodies)");
    expect_error("run: {steps: 1e3, gravity: [0, 0]}\n",
                 "s.yaml:1:28: run.gravity: expected a sequence of 3 numbers, got 2 items");
    /* a mesh is a body shape, never a constraint region */
    expect_error(HEAD "bodies:\n  - material: steel\n    shape: {mesh: {file: a.stl}}\n    spacing: 1\n"
                      "    fixed: [{mesh: {file: b.stl}}]\n",
                 "s.yaml:9:14: bodies[0].fixed[0].mesh: a region must be a box, sphere or cylinder, not a mesh");
}

/* The library must not print: a syntax error's text only reaches err->msg. */
static void test_quiet(void)
{
    fflush(stderr);
    int saved = dup(2);
    FILE *tmp = tmpfile();
    SHARD_ENSURE(saved >= 0 && tmp);
    if (saved < 0 || !tmp)
        return;
    dup2(fileno(tmp), 2);
    shard_scene s;
    shard_error err = {0};
    const char *text = "run:\n  steps: 1\n   dt: [1,\n\tx: {\n";
    int rc = shard_scene_parse("q.yaml", text, strlen(text), &s, &err);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    fseek(tmp, 0, SEEK_END);
    long printed = ftell(tmp);
    fclose(tmp);
    SHARD_ENSURE(rc == SHARD_EXIT_INPUT);
    SHARD_ENSURE(strncmp(err.msg, "q.yaml:", 7) == 0 && strstr(err.msg, ": syntax error: ") != NULL);
    SHARD_ENSURE(printed == 0);
}

static void test_contains(void)
{
    shard_shape box = {.kind = SHARD_SHAPE_BOX, .min = {0, 0, 0}, .max = {1, 2, 3}};
    SHARD_ENSURE(shard_shape_contains(&box, (double[3]){0.5, 1, 1.5}));
    SHARD_ENSURE(shard_shape_contains(&box, (double[3]){0, 0, 0}));
    SHARD_ENSURE(!shard_shape_contains(&box, (double[3]){1, 1, 1}));
    SHARD_ENSURE(!shard_shape_contains(&box, (double[3]){0.5, -1e-12, 1}));

    shard_shape ball = {.kind = SHARD_SHAPE_SPHERE, .center = {1, 1, 1}, .radius = 0.5};
    SHARD_ENSURE(shard_shape_contains(&ball, (double[3]){1, 1, 1.49}));
    SHARD_ENSURE(!shard_shape_contains(&ball, (double[3]){1, 1, 1.5}));
    SHARD_ENSURE(!shard_shape_contains(&ball, (double[3]){1.4, 1.4, 1}));

    shard_shape cyl = {.kind = SHARD_SHAPE_CYLINDER, .p0 = {0, 0, 0}, .p1 = {2, 0, 0}, .radius = 0.5};
    SHARD_ENSURE(shard_shape_contains(&cyl, (double[3]){0, 0, 0}));
    SHARD_ENSURE(shard_shape_contains(&cyl, (double[3]){1.9, 0.3, 0.3}));
    SHARD_ENSURE(!shard_shape_contains(&cyl, (double[3]){2, 0, 0}));
    SHARD_ENSURE(!shard_shape_contains(&cyl, (double[3]){-0.01, 0, 0}));
    SHARD_ENSURE(!shard_shape_contains(&cyl, (double[3]){1, 0.4, 0.4}));
    shard_shape tilted = {.kind = SHARD_SHAPE_CYLINDER, .p0 = {1, 1, 1}, .p1 = {2, 2, 2}, .radius = 0.1};
    SHARD_ENSURE(shard_shape_contains(&tilted, (double[3]){1.5, 1.5, 1.55}));
    SHARD_ENSURE(!shard_shape_contains(&tilted, (double[3]){1.5, 1.5, 1.7}));

    shard_shape mesh = {.kind = SHARD_SHAPE_MESH};
    SHARD_ENSURE(!shard_shape_contains(&mesh, (double[3]){0, 0, 0}));
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap)
            buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    if (buf)
        buf[n < cap ? n : cap - 1] = '\0';
    *len = n;
    return buf;
}

static int count_occurrences(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
        n++;
    return n;
}

/* One bad_input case, bad_input/<section>/<name>.yaml: if the parser rejects it, the message must hold the line
 * of its .expected file exactly once (the runner's rule).  Counts it in *rejected or *later. */
static void test_bad_input_case(const char *section, const char *file, int *rejected, int *later)
{
    size_t nl = strlen(file);
    char yaml[512], expected_path[512];
    snprintf(yaml, sizeof yaml, "bad_input/%s/%s", section, file);
    snprintf(expected_path, sizeof expected_path, "bad_input/%s/%.*s.expected", section, (int)(nl - 5), file);
    size_t len, elen;
    char *text = read_all(yaml, &len);
    char *expected = read_all(expected_path, &elen);
    SHARD_ENSURE(text != NULL && expected != NULL);
    if (!text || !expected) {
        fprintf(stderr, "  %s/%s: cannot read the case or its .expected file\n", section, file);
        free(text);
        free(expected);
        return;
    }
    while (elen > 0 && (expected[elen - 1] == '\n' || expected[elen - 1] == '\r'))
        expected[--elen] = '\0';
    SHARD_ENSURE(elen > 0 && strchr(expected, '\n') == NULL);

    shard_scene s;
    shard_error err = {0};
    if (shard_scene_parse(file, text, len, &s, &err) == 0) {
        (*later)++;
        shard_scene_free(&s);
    } else {
        (*rejected)++;
        int n = count_occurrences(err.msg, expected);
        SHARD_ENSURE(n == 1);
        if (n != 1)
            fprintf(stderr, "  %s/%s:\n    got      '%s'\n    expected '%s'\n", section, file, err.msg, expected);
    }
    free(text);
    free(expected);
}

/* Every bad_input case (bad_input/<section>/<name>.yaml) that the parser rejects must give the message in its
 * .expected file.  Cases the parser accepts belong to later stages (mesh reading, sampling).  The scene is
 * parsed under its file name, as run_case.sh runs it from its folder. */
static void test_bad_input_files(void)
{
    DIR *top = opendir("bad_input");
    SHARD_ENSURE(top != NULL);
    if (!top)
        return;
    int rejected = 0, later = 0;
    struct dirent *t;
    while ((t = readdir(top)) != NULL) {
        if (t->d_name[0] == '.')
            continue;
        char dir[512];
        snprintf(dir, sizeof dir, "bad_input/%s", t->d_name);
        DIR *d = opendir(dir);
        if (!d)
            continue; /* a file of the top folder (run_case.sh) */
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            size_t nl = strlen(e->d_name);
            if (nl >= 6 && strcmp(e->d_name + nl - 5, ".yaml") == 0)
                test_bad_input_case(t->d_name, e->d_name, &rejected, &later);
        }
        closedir(d);
    }
    closedir(top);
    printf("bad_input: %d cases rejected by the scene parser, %d left to later stages\n", rejected, later);
    SHARD_ENSURE(rejected >= 20);
}

int main(void)
{
    test_full_scene();
    test_defaults();
    test_errors();
    test_quiet();
    test_contains();
    test_bad_input_files();
    return SHARD_TEST_RESULT();
}
