/* Scene parser: YAML text to shard_scene, with every check that needs nothing but the text.
 *
 * The reading is split in four files.  scene_keys.c owns the YAML tree and the key-table engine (each section
 * of the scene is a table of rows giving the key, its type, where it lands in the C struct, its range and its
 * default; scene_keys.h).  scene_bodies.c and scene_materials.c own the sections of what the scene holds:
 * shapes, bodies and obstacles; materials.  This file owns the sections of the run (run, output, checkpoint,
 * relax, fragments, balance, catalyst), the top-level table, and the entry points.  The kinds of matter own their
 * keys (matter.h, shard_matter_keys): their bodies' keys are read with the common ones (scene_bodies.c), their
 * top-level sections here, each beside the top-level table. */
#include "shard/scene.h"

#include "scene_bodies.h"
#include "shard/matter.h"
#include "scene_keys.h"
#include "shard/mesh.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------------------------
 * Run and the top level
 * ------------------------------------------------------------------------------------------------------------ */

static const shard_scene_field run_rows[] = {
    {.key = "gravity", .kind = SHARD_KEY_VEC3, .offset = offsetof(shard_run_def, gravity), .def = {0, 0, -9.81}},
    {.key = "steps",
     .kind = SHARD_KEY_INT,
     .flags = SHARD_KEY_REQUIRED,
     .group = 1,
     .offset = offsetof(shard_run_def, steps),
     .loc_offset = SHARD_KEY_OFF1(shard_run_def, steps_loc),
     .r = SHARD_KEY_GT(0)},
    {.key = "end_time",
     .kind = SHARD_KEY_NUMBER,
     .flags = SHARD_KEY_REQUIRED,
     .group = 1,
     .offset = offsetof(shard_run_def, end_time),
     .loc_offset = SHARD_KEY_OFF1(shard_run_def, end_time_loc),
     .r = SHARD_KEY_GT(0)},
    {.key = "dt",
     .kind = SHARD_KEY_NUMBER,
     .flags = SHARD_KEY_AUTO,
     .offset = offsetof(shard_run_def, dt),
     .loc_offset = SHARD_KEY_OFF1(shard_run_def, dt_loc),
     .r = SHARD_KEY_GT(0)},
    {.key = "dt_safety",
     .kind = SHARD_KEY_NUMBER,
     .offset = offsetof(shard_run_def, dt_safety),
     .r = SHARD_KEY_IN('(', 0, 1, ']'),
     .def = {0.4}},
    {.key = "diagnostics_every",
     .kind = SHARD_KEY_INT,
     .offset = offsetof(shard_run_def, diagnostics_every),
     .r = SHARD_KEY_GE(0)},
    {.key = "output_dir",
     .kind = SHARD_KEY_STRING,
     .offset = offsetof(shard_run_def, output_dir),
     .size = SHARD_PATH_MAX,
     .def_str = "shard-out"},
    {.key = "skin",
     .kind = SHARD_KEY_NUMBER,
     .offset = offsetof(shard_run_def, skin),
     .r = SHARD_KEY_GT(0),
     .def = {0.5}},
    {.key = "svd_threshold",
     .kind = SHARD_KEY_NUMBER,
     .offset = offsetof(shard_run_def, svd_threshold),
     .r = SHARD_KEY_IN('(', 0, 1, ')'),
     .def = {1e-3}},
};
static const shard_scene_section run_section = SHARD_KEY_SECTION(run_rows, 0, NULL);

/* ------------------------------------------------------------------------------------------------------------
 * Output and checkpoints
 * ------------------------------------------------------------------------------------------------------------ */

/* A sequence of field names, each at most once.  An empty sequence is allowed: position and global_id are
 * always written. */
static int shard_scene_parse_output_fields(shard_scene_ctx *c, const shard_scene_node *n, const char *path,
                                           void *target)
{
    unsigned *mask = target;
    char what[80];
    if (n->type != SHARD_YAML_SEQ)
        return shard_scene_fail(c, n, path, "expected a sequence of field names, got %s",
                                shard_scene_describe(what, n));
    *mask = SHARD_OUT_ALWAYS;
    unsigned given = 0;
    for (size_t i = 0; i < n->n; i++) {
        const shard_scene_node *k = n->kids[i];
        char sub[SHARD_KEY_PATH_MAX];
        shard_scene_index_path(sub, path, i);
        const shard_scene *sc = c->user;
        int f = k->type == SHARD_YAML_SCALAR && !shard_scene_is_null(k) ? shard_output_find(sc, k->text) : -1;
        if (f < 0) {
            char allowed[512] = "";
            size_t used = 0;
            for (int j = 0, n_fields = shard_output_count(sc); j < n_fields; j++)
                shard_list_append(allowed, sizeof allowed, &used, shard_output_info(sc, j)->name);
            return shard_scene_fail(c, k, sub, "unknown field %s (allowed: %s)", shard_scene_describe(what, k),
                                    allowed);
        }
        if (given & 1u << f)
            return shard_scene_fail(c, k, sub, "field '%s' is listed twice", k->text);
        given |= 1u << f;
        *mask |= 1u << f;
    }
    return 0;
}

static const shard_scene_field output_rows[] = {
    {.key = "every",
     .kind = SHARD_KEY_INT,
     .flags = SHARD_KEY_REQUIRED,
     .group = 1,
     .offset = offsetof(shard_output_def, interval.every),
     .r = SHARD_KEY_GT(0)},
    {.key = "every_time",
     .kind = SHARD_KEY_NUMBER,
     .flags = SHARD_KEY_REQUIRED,
     .group = 1,
     .offset = offsetof(shard_output_def, interval.every_time),
     .r = SHARD_KEY_GT(0)},
    {.key = "fields",
     .kind = SHARD_KEY_CUSTOM,
     .offset = offsetof(shard_output_def, fields),
     .parse = shard_scene_parse_output_fields},
    {.key = "dir", .kind = SHARD_KEY_STRING, .offset = offsetof(shard_output_def, dir), .size = SHARD_PATH_MAX},
};
static const shard_scene_section output_section = SHARD_KEY_SECTION(output_rows, 0, NULL);

static const shard_scene_field checkpoint_rows[] = {
    {.key = "every",
     .kind = SHARD_KEY_INT,
     .flags = SHARD_KEY_REQUIRED,
     .group = 1,
     .offset = offsetof(shard_checkpoint_def, interval.every),
     .r = SHARD_KEY_GT(0)},
    {.key = "every_time",
     .kind = SHARD_KEY_NUMBER,
     .flags = SHARD_KEY_REQUIRED,
     .group = 1,
     .offset = offsetof(shard_checkpoint_def, interval.every_time),
     .r = SHARD_KEY_GT(0)},
    {.key = "keep",
     .kind = SHARD_KEY_INT,
     .offset = offsetof(shard_checkpoint_def, keep),
     .r = SHARD_KEY_GE(1),
     .def = {2}},
    {.key = "dir", .kind = SHARD_KEY_STRING, .offset = offsetof(shard_checkpoint_def, dir), .size = SHARD_PATH_MAX},
};
static const shard_scene_section checkpoint_section = SHARD_KEY_SECTION(checkpoint_rows, 0, NULL);

/* The sections are optional; giving one switches the feature on. */
static int shard_scene_parse_output(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    shard_output_def *o = target;
    o->enabled = 1;
    o->fields = shard_output_all(c->user);
    shard_scene_make_loc(&o->loc, n, path);
    return shard_scene_parse_section(c, n, path, &output_section, o);
}

static int shard_scene_parse_checkpoint(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    shard_checkpoint_def *o = target;
    o->enabled = 1;
    shard_scene_make_loc(&o->loc, n, path);
    return shard_scene_parse_section(c, n, path, &checkpoint_section, o);
}

static const shard_scene_field relax_rows[] = {
    {.key = "tolerance",
     .kind = SHARD_KEY_NUMBER,
     .offset = offsetof(shard_relax_def, tolerance),
     .r = SHARD_KEY_IN('(', 0, 1, ')'),
     .def = {1e-4}},
    {.key = "max_steps",
     .kind = SHARD_KEY_INT,
     .offset = offsetof(shard_relax_def, max_steps),
     .r = SHARD_KEY_GT(0),
     .def = {100000}},
    {.key = "dt_safety",
     .kind = SHARD_KEY_NUMBER,
     .offset = offsetof(shard_relax_def, dt_safety),
     .r = SHARD_KEY_IN('(', 0, 1, ']'),
     .def = {0.9}},
    {.key = "method",
     .kind = SHARD_KEY_CHOICE,
     .offset = offsetof(shard_relax_def, method),
     SHARD_KEY_CHOICES([SHARD_RELAX_DYNAMIC] = "dynamic", [SHARD_RELAX_CG] = "cg")},
};
static const shard_scene_section relax_section = SHARD_KEY_SECTION(relax_rows, 0, NULL);

static int shard_scene_parse_relax(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    shard_relax_def *o = target;
    o->enabled = 1;
    shard_scene_make_loc(&o->loc, n, path);
    return shard_scene_parse_section(c, n, path, &relax_section, o);
}

static const shard_scene_field fragments_rows[] = {
    {.key = "fit_min",
     .kind = SHARD_KEY_INT,
     .offset = offsetof(shard_fragments_def, fit_min),
     .r = SHARD_KEY_GE(1),
     .def = {3}},
};
static const shard_scene_section fragments_section = SHARD_KEY_SECTION(fragments_rows, 0, NULL);

static int shard_scene_parse_fragments(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    shard_fragments_def *o = target;
    shard_scene_make_loc(&o->loc, n, path);
    return shard_scene_parse_section(c, n, path, &fragments_section, o);
}

static const shard_scene_field balance_rows[] = {
    {.key = "every",
     .kind = SHARD_KEY_INT,
     .offset = offsetof(shard_balance_def, every),
     .r = SHARD_KEY_GE(1),
     .def = {100}},
    {.key = "threshold",
     .kind = SHARD_KEY_NUMBER,
     .offset = offsetof(shard_balance_def, threshold),
     .r = SHARD_KEY_GE(1),
     .def = {1.1}},
    {.key = "method",
     .kind = SHARD_KEY_CHOICE,
     .offset = offsetof(shard_balance_def, method),
     SHARD_KEY_CHOICES([SHARD_BALANCE_RCB] = "rcb", [SHARD_BALANCE_HSFC] = "hsfc", [SHARD_BALANCE_GRAPH] = "graph")},
    {.key = "cost",
     .kind = SHARD_KEY_CHOICE,
     .offset = offsetof(shard_balance_def, cost),
     SHARD_KEY_CHOICES([SHARD_BALANCE_COST_TIME] = "time", [SHARD_BALANCE_COST_COUNTS] = "counts")},
    {.key = "ghost_growth",
     .kind = SHARD_KEY_NUMBER,
     .offset = offsetof(shard_balance_def, ghost_growth),
     .r = SHARD_KEY_GE(0),
     .def = {2.0}},
};
/* ghost_growth: 0 (never) or a factor >= 1 (a factor below 1 would repartition at every check). */
static int shard_scene_check_balance(shard_scene_ctx *c, const shard_scene_node *node, const char *path, void *base)
{
    const shard_balance_def *b = base;
    if (b->ghost_growth > 0.0 && b->ghost_growth < 1.0) {
        char sub[SHARD_KEY_PATH_MAX];
        shard_scene_child_path(sub, path, "ghost_growth");
        return shard_scene_fail(c, shard_scene_map_get(node, "ghost_growth", NULL), sub,
                                "must be 0 (never) or >= 1, got %g", b->ghost_growth);
    }
    return 0;
}
static const shard_scene_section balance_section = SHARD_KEY_SECTION(balance_rows, 0, shard_scene_check_balance);

static int shard_scene_parse_balance(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    shard_balance_def *o = target;
    o->enabled = 1;
    shard_scene_make_loc(&o->loc, n, path);
    return shard_scene_parse_section(c, n, path, &balance_section, o);
}

/* catalyst: {script: FILE, every: N}, or a sequence of such mappings (at most SHARD_CATALYST_MAX). */
static int shard_scene_check_catalyst(shard_scene_ctx *c, const shard_scene_node *node, const char *path, void *base)
{
    shard_catalyst_def *d = base;
    char sub[SHARD_KEY_PATH_MAX];
    shard_scene_child_path(sub, path, "script");
    return shard_scene_resolve_path(c, shard_scene_map_get(node, "script", NULL), sub, d->script);
}

static const shard_scene_field catalyst_rows[] = {
    {.key = "script",
     .kind = SHARD_KEY_STRING,
     .flags = SHARD_KEY_REQUIRED,
     .offset = offsetof(shard_catalyst_def, script),
     .size = SHARD_PATH_MAX},
    {.key = "every",
     .kind = SHARD_KEY_INT,
     .offset = offsetof(shard_catalyst_def, every),
     .r = SHARD_KEY_GE(1),
     .def = {1}},
};
static const shard_scene_section catalyst_section = SHARD_KEY_SECTION(catalyst_rows, 0, shard_scene_check_catalyst);

static int shard_scene_parse_catalyst(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    shard_scene *s = target;
    char what[80];
    if (shard_scene_is_null(n))
        return 0;
    if (n->type == SHARD_YAML_MAP) {
        shard_catalyst_def *d = &s->catalyst[s->n_catalyst++];
        shard_scene_make_loc(&d->loc, n, path);
        return shard_scene_parse_section(c, n, path, &catalyst_section, d);
    }
    if (n->type != SHARD_YAML_SEQ)
        return shard_scene_fail(c, n, path, "expected {script: FILE, every: N} or a sequence of them, got %s",
                                shard_scene_describe(what, n));
    if (n->n > SHARD_CATALYST_MAX)
        return shard_scene_fail(c, n, path, "at most %d scripts, got %zu", SHARD_CATALYST_MAX, n->n);
    for (size_t i = 0; i < n->n; i++) {
        shard_catalyst_def *d = &s->catalyst[s->n_catalyst++];
        char sub[SHARD_KEY_PATH_MAX];
        shard_scene_index_path(sub, path, i);
        shard_scene_make_loc(&d->loc, n->kids[i], sub);
        int rc = shard_scene_parse_section(c, n->kids[i], sub, &catalyst_section, d);
        if (rc)
            return rc;
    }
    return 0;
}

/* Table order is processing order: materials must exist before bodies name them. */
static const shard_scene_field top_rows[] = {
    {.key = "run",
     .kind = SHARD_KEY_MAP,
     .flags = SHARD_KEY_REQUIRED,
     .offset = offsetof(shard_scene, run),
     .sub = &run_section},
    {.key = "materials", .kind = SHARD_KEY_CUSTOM, .flags = SHARD_KEY_REQUIRED, .parse = shard_scene_parse_materials},
    {.key = "bodies", .kind = SHARD_KEY_CUSTOM, .flags = SHARD_KEY_REQUIRED, .parse = shard_scene_parse_bodies},
    {.key = "obstacles", .kind = SHARD_KEY_CUSTOM, .parse = shard_scene_parse_obstacles},
    {.key = "output",
     .kind = SHARD_KEY_CUSTOM,
     .offset = offsetof(shard_scene, output),
     .parse = shard_scene_parse_output},
    {.key = "checkpoint",
     .kind = SHARD_KEY_CUSTOM,
     .offset = offsetof(shard_scene, checkpoint),
     .parse = shard_scene_parse_checkpoint},
    {.key = "catalyst",
     .kind = SHARD_KEY_CUSTOM,
     .loc_offset = SHARD_KEY_OFF1(shard_scene, catalyst_loc),
     .parse = shard_scene_parse_catalyst},
    {.key = "relax",
     .kind = SHARD_KEY_CUSTOM,
     .offset = offsetof(shard_scene, relax),
     .parse = shard_scene_parse_relax},
    {.key = "fragments",
     .kind = SHARD_KEY_CUSTOM,
     .offset = offsetof(shard_scene, fragments),
     .parse = shard_scene_parse_fragments},
    {.key = "balance",
     .kind = SHARD_KEY_CUSTOM,
     .offset = offsetof(shard_scene, balance),
     .parse = shard_scene_parse_balance},
};
static const shard_scene_section top_section = SHARD_KEY_SECTION(top_rows, 0, NULL);

/* ------------------------------------------------------------------------------------------------------------
 * Public entry points
 * ------------------------------------------------------------------------------------------------------------ */

static void shard_scene_set_dir(char dir[SHARD_PATH_MAX], const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, SHARD_PATH_MAX, ".");
    else if (slash == path)
        snprintf(dir, SHARD_PATH_MAX, "/");
    else
        snprintf(dir, SHARD_PATH_MAX, "%.*s", (int)(slash - path), path);
}

/* A scene is UTF-8 text: the first NUL byte or invalid UTF-8 sequence is named by line and column (a UTF-16
 * or binary file would otherwise reach the YAML parser as an "empty" document). */
static int shard_scene_check_text(const char *path, const char *text, size_t len, shard_error *err)
{
    const unsigned char *u = (const unsigned char *)text;
    if (len >= 2 && ((u[0] == 0xff && u[1] == 0xfe) || (u[0] == 0xfe && u[1] == 0xff)))
        return shard_error_set(err, SHARD_EXIT_INPUT, "%s:1:1: the file is UTF-16 text; save the scene as UTF-8", path);
    int line = 1, col = 1;
    for (size_t i = 0; i < len;) {
        unsigned c = u[i];
        size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
        int ok = n > 0 && i + n <= len && !(n == 2 && c < 0xc2);
        for (size_t k = 1; ok && k < n; k++)
            ok = (u[i + k] & 0xc0) == 0x80;
        if (c == 0)
            return shard_error_set(err, SHARD_EXIT_INPUT,
                                   "%s:%d:%d: the file holds a NUL byte: a scene is a text "
                                   "file (is this the right file?)",
                                   path, line, col);
        if (!ok)
            return shard_error_set(err, SHARD_EXIT_INPUT,
                                   "%s:%d:%d: not UTF-8 text (byte 0x%02x): save the scene "
                                   "as UTF-8",
                                   path, line, col, c);
        if (c == '\n')
            line++, col = 1;
        else
            col++;
        i += n;
    }
    return 0;
}

/* The top level: the common sections, then a part per module with a section of its own (a table of one row: the
 * section's key, read into the module's struct). */
static int shard_scene_parse_top(shard_scene_ctx *c, const shard_scene_node *root, shard_scene *scene)
{
    /* Keys that moved to a kind's section: said so, rather than "unknown key". */
    const shard_scene_node *run = shard_scene_map_get(root, "run", NULL), *key = NULL;
    if (run && run->type == SHARD_YAML_MAP && shard_scene_map_get(run, "collision_passes", &key))
        return shard_scene_fail(c, key, "run.collision_passes",
                                "moved to the cloth's section: write `cloth: {collision_passes: N}`");
    shard_scene_field rows[SHARD_MATTER_MAX];
    shard_scene_section secs[SHARD_MATTER_MAX];
    shard_scene_part parts[SHARD_MATTER_MAX + 1] = {{.sec = &top_section, .base = scene}};
    int n = 1;
    for (int k = 0; k < scene->n_modules; k++) {
        const shard_matter_keys *mk = scene->modules[k]->keys;
        if (!mk || !mk->section)
            continue;
        scene->sections[k] = shard_calloc(1, mk->section_bytes);
        rows[n - 1] = (shard_scene_field){.key = mk->section, .kind = SHARD_KEY_MAP, .sub = mk->scene_keys};
        secs[n - 1] = (shard_scene_section){.fields = &rows[n - 1], .n = 1};
        parts[n] = (shard_scene_part){.sec = &secs[n - 1], .base = scene->sections[k]};
        n++;
    }
    int rc = shard_scene_parse_parts(c, root, "", parts, n);
    return rc ? rc : shard_scene_check_material_keys(c, root);
}

int shard_scene_parse(const char *path, const char *text, size_t len, shard_scene *scene, shard_error *err)
{
    int n = 0;
    const shard_matter *const *table = shard_matter_table(&n);
    return shard_scene_parse_with(path, text, len, table, n, scene, err);
}

int shard_scene_parse_with(const char *path, const char *text, size_t len, const shard_matter *const *modules, int n,
                           shard_scene *scene, shard_error *err)
{
    memset(scene, 0, sizeof *scene);
    if (n > SHARD_MATTER_MAX)
        shard_fatal(SHARD_EXIT_INTERNAL, "%d matter modules: a scene's table holds at most %d (SHARD_MATTER_MAX)", n,
                    SHARD_MATTER_MAX);
    scene->modules = modules;
    scene->n_modules = n;
    if (shard_output_count(scene) > SHARD_OUTPUT_MAX)
        shard_fatal(SHARD_EXIT_INTERNAL, "%d output fields: a run has at most %d (SHARD_OUTPUT_MAX)",
                    shard_output_count(scene), SHARD_OUTPUT_MAX);
    snprintf(scene->path, sizeof scene->path, "%s", path);
    shard_scene_set_dir(scene->dir, scene->path);
    scene->text = shard_scene_dup_text(text, len);
    scene->text_len = len;

    shard_scene_ctx ctx = {.file = scene->path, .dir = scene->dir, .err = err, .user = scene};
    shard_scene_tree tree = {0};
    int rc = shard_scene_check_text(scene->path, scene->text, len, err);
    if (!rc)
        rc = shard_scene_ytree_build(&ctx, scene->text, len, &tree);
    if (!rc) {
        const shard_scene_node *root = tree.root;
        char what[80];
        if (!root || (root->type == SHARD_YAML_SCALAR && shard_scene_is_null(root)))
            rc = shard_scene_fail(&ctx, root, "",
                                  "the file is empty (expected a mapping with keys run, materials, bodies)");
        else if (root->type != SHARD_YAML_MAP)
            rc = shard_scene_fail(&ctx, root, "",
                                  "expected a mapping with keys run, materials, bodies at the top level, got %s",
                                  shard_scene_describe(what, root));
        else
            rc = shard_scene_parse_top(&ctx, root, scene);
    }
    shard_scene_ytree_free(&tree);
    if (rc) {
        shard_scene_free(scene);
        return rc;
    }
    if (scene->fragments.fit_min == 0) /* no `fragments` section: its defaults */
        scene->fragments.fit_min = 3;
    return 0;
}

void shard_scene_free(shard_scene *scene)
{
    if (!scene)
        return;
    free(scene->text);
    free(scene->materials);
    for (int i = 0; i < scene->n_bodies; i++) {
        if (scene->bodies[i].shape.mesh) {
            shard_mesh_free(scene->bodies[i].shape.mesh);
            free(scene->bodies[i].shape.mesh);
        }
        free(scene->bodies[i].constraints);
        free(scene->bodies[i].notches);
        free(scene->bodies[i].tractions);
        free(scene->bodies[i].kind_def);
    }
    for (int k = 0; k < SHARD_MATTER_MAX; k++)
        free(scene->sections[k]);
    free(scene->bodies);
    free(scene->obstacles);
    memset(scene, 0, sizeof *scene);
}
