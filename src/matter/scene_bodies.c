/* Scene bodies: the sections of a scene that say what is in it, read with the key-table engine (scene_keys.h):
 * the shapes of bodies and regions (with the checks of analytic shapes and a mesh's file name resolved against
 * the scene's folder), bodies with their constraints, notches and tractions, and obstacles (materials:
 * scene_materials.c).  Meshes are read by io (mesh_io.h) and sampled by sample.h.
 */
#include "scene_bodies.h"

#include "shard/matter.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------------------------
 * Shapes
 * ------------------------------------------------------------------------------------------------------------ */

static int shard_scene_check_box_corners(shard_scene_ctx *c, const shard_scene_node *node, const char *path,
                                         const double min[3], const double max[3])
{
    static const char axis[] = "xyz";
    for (int d = 0; d < 3; d++)
        if (!(min[d] < max[d])) {
            char sub[SHARD_KEY_PATH_MAX], a[32], b[32];
            shard_scene_child_path(sub, path, "max");
            return shard_scene_fail(c, shard_scene_map_get(node, "max", NULL), sub,
                                    "must be greater than min in every component, got %c: max %s <= min %s", axis[d],
                                    shard_scene_fmt_num(a, max[d]), shard_scene_fmt_num(b, min[d]));
        }
    return 0;
}

static int shard_scene_check_shape_box(shard_scene_ctx *c, const shard_scene_node *node, const char *path, void *base)
{
    const shard_shape *s = base;
    return shard_scene_check_box_corners(c, node, path, s->min, s->max);
}

static int shard_scene_check_cylinder(shard_scene_ctx *c, const shard_scene_node *node, const char *path, void *base)
{
    const shard_shape *s = base;
    if (s->p0[0] == s->p1[0] && s->p0[1] == s->p1[1] && s->p0[2] == s->p1[2]) {
        char sub[SHARD_KEY_PATH_MAX];
        shard_scene_child_path(sub, path, "p1");
        return shard_scene_fail(c, shard_scene_map_get(node, "p1", NULL), sub,
                                "must differ from p0 (the cylinder has no axis)");
    }
    return 0;
}

static int shard_scene_check_mesh(shard_scene_ctx *c, const shard_scene_node *node, const char *path, void *base)
{
    shard_shape *s = base;
    return shard_scene_resolve_path(c, shard_scene_map_get(node, "file", NULL), s->file_loc.key, s->file);
}

static const shard_scene_field box_rows[] = {
    {.key = "min", .kind = SHARD_KEY_VEC3, .flags = SHARD_KEY_REQUIRED, .offset = offsetof(shard_shape, min)},
    {.key = "max", .kind = SHARD_KEY_VEC3, .flags = SHARD_KEY_REQUIRED, .offset = offsetof(shard_shape, max)},
};
static const shard_scene_field sphere_rows[] = {
    {.key = "center", .kind = SHARD_KEY_VEC3, .flags = SHARD_KEY_REQUIRED, .offset = offsetof(shard_shape, center)},
    {.key = "radius",
     .kind = SHARD_KEY_NUMBER,
     .flags = SHARD_KEY_REQUIRED,
     .offset = offsetof(shard_shape, radius),
     .r = SHARD_KEY_GT(0)},
};
static const shard_scene_field cylinder_rows[] = {
    {.key = "p0", .kind = SHARD_KEY_VEC3, .flags = SHARD_KEY_REQUIRED, .offset = offsetof(shard_shape, p0)},
    {.key = "p1", .kind = SHARD_KEY_VEC3, .flags = SHARD_KEY_REQUIRED, .offset = offsetof(shard_shape, p1)},
    {.key = "radius",
     .kind = SHARD_KEY_NUMBER,
     .flags = SHARD_KEY_REQUIRED,
     .offset = offsetof(shard_shape, radius),
     .r = SHARD_KEY_GT(0)},
};
static const shard_scene_field mesh_rows[] = {
    {.key = "file",
     .kind = SHARD_KEY_STRING,
     .flags = SHARD_KEY_REQUIRED,
     .offset = offsetof(shard_shape, file),
     .size = SHARD_PATH_MAX,
     .loc_offset = SHARD_KEY_OFF1(shard_shape, file_loc)},
    {.key = "scale",
     .kind = SHARD_KEY_NUMBER,
     .offset = offsetof(shard_shape, scale),
     .r = SHARD_KEY_GT(0),
     .def = {1}},
    {.key = "translate", .kind = SHARD_KEY_VEC3, .offset = offsetof(shard_shape, translate)},
};
/* divisions: [n_u, n_v], integers >= 1. */
static int shard_scene_parse_divisions(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    long *d = target;
    char what[80];
    if (n->type != SHARD_YAML_SEQ || n->n != 2)
        return shard_scene_fail(c, n, path, "expected [n_u, n_v], two integers >= 1, got %s",
                                shard_scene_describe(what, n));
    for (int k = 0; k < 2; k++) {
        double v;
        char sub[SHARD_KEY_PATH_MAX];
        shard_scene_index_path(sub, path, (size_t)k);
        int rc = shard_scene_get_number(c, n->kids[k], sub, false, &v, NULL);
        if (rc)
            return rc;
        if (v != floor(v) || !(v >= 1) || v > 1e9)
            return shard_scene_fail(c, n->kids[k], sub, "expected an integer in [1, 1e9], got %s",
                                    shard_scene_describe(what, n->kids[k]));
        d[k] = (long)v;
    }
    return 0;
}

static int shard_scene_check_grid(shard_scene_ctx *c, const shard_scene_node *node, const char *path, void *base)
{
    const shard_shape *s = base;
    double n[3] = {s->u[1] * s->v[2] - s->u[2] * s->v[1], s->u[2] * s->v[0] - s->u[0] * s->v[2],
                   s->u[0] * s->v[1] - s->u[1] * s->v[0]};
    double area = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    double lu = sqrt(s->u[0] * s->u[0] + s->u[1] * s->u[1] + s->u[2] * s->u[2]);
    double lv = sqrt(s->v[0] * s->v[0] + s->v[1] * s->v[1] + s->v[2] * s->v[2]);
    char sub[SHARD_KEY_PATH_MAX];
    /* A parallelogram whose angle is below 1e-6 rad has triangles too thin to carry a membrane. */
    if (!(area > 1e-6 * lu * lv) || !isfinite(area)) {
        shard_scene_child_path(sub, path, lu > 0.0 ? "v" : "u");
        return shard_scene_fail(c, shard_scene_map_get(node, lu > 0.0 ? "v" : "u", NULL), sub,
                                "must be a nonzero vector not parallel to %s (the grid has no area)",
                                lu > 0.0 ? "u" : "v");
    }
    return 0;
}

static const shard_scene_field grid_rows[] = {
    {.key = "corner", .kind = SHARD_KEY_VEC3, .flags = SHARD_KEY_REQUIRED, .offset = offsetof(shard_shape, p0)},
    {.key = "u", .kind = SHARD_KEY_VEC3, .flags = SHARD_KEY_REQUIRED, .offset = offsetof(shard_shape, u)},
    {.key = "v", .kind = SHARD_KEY_VEC3, .flags = SHARD_KEY_REQUIRED, .offset = offsetof(shard_shape, v)},
    {.key = "divisions",
     .kind = SHARD_KEY_CUSTOM,
     .flags = SHARD_KEY_REQUIRED,
     .offset = offsetof(shard_shape, divisions),
     .parse = shard_scene_parse_divisions},
};
static const shard_scene_section grid_section = SHARD_KEY_SECTION(grid_rows, 0, shard_scene_check_grid);
static const shard_scene_section box_section = SHARD_KEY_SECTION(box_rows, 0, shard_scene_check_shape_box);
static const shard_scene_section sphere_section = SHARD_KEY_SECTION(sphere_rows, 0, NULL);
static const shard_scene_section cylinder_section = SHARD_KEY_SECTION(cylinder_rows, 0, shard_scene_check_cylinder);
static const shard_scene_section mesh_section = SHARD_KEY_SECTION(mesh_rows, 0, shard_scene_check_mesh);

static const shard_scene_field shape_rows[] = {
    {.key = "box",
     .kind = SHARD_KEY_MAP,
     .flags = SHARD_KEY_REQUIRED,
     .group = 1,
     .sub = &box_section,
     .variant = SHARD_SHAPE_BOX},
    {.key = "sphere",
     .kind = SHARD_KEY_MAP,
     .flags = SHARD_KEY_REQUIRED,
     .group = 1,
     .sub = &sphere_section,
     .variant = SHARD_SHAPE_SPHERE},
    {.key = "cylinder",
     .kind = SHARD_KEY_MAP,
     .flags = SHARD_KEY_REQUIRED,
     .group = 1,
     .sub = &cylinder_section,
     .variant = SHARD_SHAPE_CYLINDER},
    {.key = "mesh",
     .kind = SHARD_KEY_MAP,
     .flags = SHARD_KEY_REQUIRED,
     .group = 1,
     .sub = &mesh_section,
     .variant = SHARD_SHAPE_MESH},
    {.key = "grid",
     .kind = SHARD_KEY_MAP,
     .flags = SHARD_KEY_REQUIRED,
     .group = 1,
     .sub = &grid_section,
     .variant = SHARD_SHAPE_GRID},
};
static const shard_scene_section shape_section = SHARD_KEY_SECTION(shape_rows, SHARD_KEY_OFF1(shard_shape, kind), NULL);

static int shard_scene_parse_shape(shard_scene_ctx *c, const shard_scene_node *n, const char *path, shard_shape *s,
                                   bool allow_mesh)
{
    memset(s, 0, sizeof *s);
    s->scale = 1;
    shard_scene_make_loc(&s->loc, n, path);
    int rc = shard_scene_parse_section(c, n, path, &shape_section, s);
    if (rc)
        return rc;
    if (!allow_mesh && (s->kind == SHARD_SHAPE_MESH || s->kind == SHARD_SHAPE_GRID)) {
        const char *what = s->kind == SHARD_SHAPE_MESH ? "mesh" : "grid";
        const shard_scene_node *key = NULL;
        char sub[SHARD_KEY_PATH_MAX];
        (void)shard_scene_map_get(n, what, &key);
        shard_scene_child_path(sub, path, what);
        return shard_scene_fail(c, key, sub, "a region must be a box, sphere or cylinder, not a %s", what);
    }
    return 0;
}

static int shard_scene_parse_body_shape(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    return shard_scene_parse_shape(c, n, path, target, true);
}

static int shard_scene_parse_region(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    return shard_scene_parse_shape(c, n, path, target, false);
}

/* ------------------------------------------------------------------------------------------------------------
 * Bodies
 * ------------------------------------------------------------------------------------------------------------ */

static int shard_scene_parse_body_material(shard_scene_ctx *c, const shard_scene_node *n, const char *path,
                                           void *target)
{
    shard_body_def *b = target;
    const shard_scene *s = c->user;
    char what[80];
    if (n->type != SHARD_YAML_SCALAR || shard_scene_is_null(n))
        return shard_scene_fail(c, n, path, "expected a material name, got %s", shard_scene_describe(what, n));
    for (int i = 0; i < s->n_materials; i++)
        if (strcmp(s->materials[i].name, n->text) == 0) {
            b->material = i;
            return 0;
        }
    char defined[512] = "";
    size_t used = 0;
    for (int i = 0; i < s->n_materials; i++)
        shard_list_append(defined, sizeof defined, &used, s->materials[i].name);
    return shard_scene_fail(c, n, path, "unknown material %s (defined: %s)", shard_scene_describe(what, n), defined);
}

static shard_constraint *shard_scene_add_constraints(shard_body_def *b, size_t more)
{
    b->constraints = shard_realloc(b->constraints, (size_t)(b->n_constraints + (int)more) * sizeof *b->constraints);
    memset(b->constraints + b->n_constraints, 0, more * sizeof *b->constraints);
    return b->constraints + b->n_constraints;
}

/* A sequence of constraints, each item read by `item` into a new shard_constraint (after its location). */
static int shard_scene_parse_constraints(shard_scene_ctx *c, const shard_scene_node *n, const char *path,
                                         shard_body_def *b, const char *what_items,
                                         int (*item)(shard_scene_ctx *, const shard_scene_node *, const char *, void *))
{
    if (shard_scene_is_null(n))
        return 0;
    int rc = shard_scene_check_list(c, n, path, what_items);
    if (rc)
        return rc;
    shard_scene_add_constraints(b, n->n);
    for (size_t k = 0; k < n->n; k++) {
        shard_constraint *con = &b->constraints[b->n_constraints++];
        char sub[SHARD_KEY_PATH_MAX];
        shard_scene_index_path(sub, path, k);
        shard_scene_make_loc(&con->loc, n->kids[k], sub);
        if ((rc = item(c, n->kids[k], sub, con)))
            return rc;
    }
    return 0;
}

/* A fixed region: a prescribed velocity of zero. */
static int shard_scene_parse_fixed_item(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    return shard_scene_parse_region(c, n, path, &((shard_constraint *)target)->region);
}

static int shard_scene_parse_fixed(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    return shard_scene_parse_constraints(c, n, path, target, "regions", shard_scene_parse_fixed_item);
}

static const shard_scene_field prescribed_rows[] = {
    {.key = "region",
     .kind = SHARD_KEY_CUSTOM,
     .flags = SHARD_KEY_REQUIRED,
     .offset = offsetof(shard_constraint, region),
     .parse = shard_scene_parse_region},
    {.key = "velocity",
     .kind = SHARD_KEY_VEC3,
     .flags = SHARD_KEY_REQUIRED,
     .offset = offsetof(shard_constraint, velocity)},
    {.key = "spin", .kind = SHARD_KEY_VEC3, .offset = offsetof(shard_constraint, spin)},
    {.key = "center", .kind = SHARD_KEY_VEC3, .offset = offsetof(shard_constraint, center)},
    {.key = "start", .kind = SHARD_KEY_NUMBER, .offset = offsetof(shard_constraint, start), .r = SHARD_KEY_GE(0)},
    {.key = "end", .kind = SHARD_KEY_NUMBER, .offset = offsetof(shard_constraint, end), .r = SHARD_KEY_GE(0)},
};
static const shard_scene_section prescribed_section = SHARD_KEY_SECTION(prescribed_rows, 0, NULL);

static int shard_scene_parse_prescribed_item(shard_scene_ctx *c, const shard_scene_node *n, const char *path,
                                             void *target)
{
    return shard_scene_parse_section(c, n, path, &prescribed_section, target);
}

static int shard_scene_parse_prescribed(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    return shard_scene_parse_constraints(c, n, path, target, "{region, velocity, spin, center, start, end} mappings",
                                         shard_scene_parse_prescribed_item);
}

/* notches: a sequence of boxes {min, max}, each of which may be flat along one axis (a planar pre-crack). */
static int shard_scene_check_notch(shard_scene_ctx *c, const shard_scene_node *node, const char *path, void *base)
{
    const shard_notch *nt = base;
    static const char axis[3] = {'x', 'y', 'z'};
    int flat = 0;
    char flats[16] = "";
    for (int d = 0; d < 3; d++) {
        if (!(nt->min[d] <= nt->max[d])) {
            char sub[SHARD_KEY_PATH_MAX];
            shard_scene_child_path(sub, path, "max");
            return shard_scene_fail(c, shard_scene_map_get(node, "max", NULL), sub,
                                    "must be >= min along every axis, got %c: max %g < min %g (min = max along one "
                                    "axis makes a planar crack)",
                                    axis[d], nt->max[d], nt->min[d]);
        }
        if (nt->min[d] == nt->max[d]) {
            size_t u = strlen(flats);
            snprintf(flats + u, sizeof flats - u, "%s%c", flat ? ", " : "", axis[d]);
            flat++;
        }
    }
    if (flat > 1)
        return shard_scene_fail(c, node, path,
                                "flat along %d axes (%s: min = max), so it is a %s, not a crack: a notch "
                                "may be flat along one axis only",
                                flat, flats, flat == 2 ? "line" : "point");
    return 0;
}

static const shard_scene_field notch_rows[] = {
    {.key = "min", .kind = SHARD_KEY_VEC3, .flags = SHARD_KEY_REQUIRED, .offset = offsetof(shard_notch, min)},
    {.key = "max", .kind = SHARD_KEY_VEC3, .flags = SHARD_KEY_REQUIRED, .offset = offsetof(shard_notch, max)},
};
static const shard_scene_section notch_section = SHARD_KEY_SECTION(notch_rows, 0, shard_scene_check_notch);

static int shard_scene_parse_notches(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    shard_body_def *b = target;
    return shard_scene_parse_list(c, n, path, "{min, max} boxes", &notch_section, sizeof(shard_notch),
                                  offsetof(shard_notch, loc), (void **)&b->notches, &b->n_notches);
}

static const shard_scene_field traction_rows[] = {
    {.key = "region",
     .kind = SHARD_KEY_CUSTOM,
     .flags = SHARD_KEY_REQUIRED,
     .offset = offsetof(shard_traction, region),
     .parse = shard_scene_parse_region},
    {.key = "stress", .kind = SHARD_KEY_VEC3, .flags = SHARD_KEY_REQUIRED, .offset = offsetof(shard_traction, stress)},
    {.key = "start", .kind = SHARD_KEY_NUMBER, .offset = offsetof(shard_traction, start), .r = SHARD_KEY_GE(0)},
    {.key = "end", .kind = SHARD_KEY_NUMBER, .offset = offsetof(shard_traction, end), .r = SHARD_KEY_GE(0)},
};
static const shard_scene_section traction_section = SHARD_KEY_SECTION(traction_rows, 0, NULL);

static int shard_scene_parse_tractions(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    shard_body_def *b = target;
    return shard_scene_parse_list(c, n, path, "{region, stress} mappings", &traction_section, sizeof(shard_traction),
                                  offsetof(shard_traction, loc), (void **)&b->tractions, &b->n_tractions);
}

/* fixed before prescribed: rows are read in table order, which fixes the order of constraints[]. */
static const shard_scene_field body_rows[] = {
    {.key = "name", .kind = SHARD_KEY_STRING, .offset = offsetof(shard_body_def, name), .size = SHARD_NAME_MAX},
    {.key = "kind",
     .kind = SHARD_KEY_STRING,
     .offset = offsetof(shard_body_def, kind),
     .size = SHARD_KIND_MAX,
     .loc_offset = SHARD_KEY_OFF1(shard_body_def, kind_loc)},
    {.key = "material",
     .kind = SHARD_KEY_CUSTOM,
     .flags = SHARD_KEY_REQUIRED,
     .parse = shard_scene_parse_body_material},
    {.key = "shape",
     .kind = SHARD_KEY_CUSTOM,
     .flags = SHARD_KEY_REQUIRED,
     .offset = offsetof(shard_body_def, shape),
     .parse = shard_scene_parse_body_shape},
    {.key = "spacing",
     .kind = SHARD_KEY_NUMBER,
     .offset = offsetof(shard_body_def, spacing),
     .r = SHARD_KEY_GT(0),
     .loc_offset = SHARD_KEY_OFF1(shard_body_def, spacing_loc)},
    {.key = "velocity", .kind = SHARD_KEY_VEC3, .offset = offsetof(shard_body_def, velocity)},
    {.key = "angular_velocity", .kind = SHARD_KEY_VEC3, .offset = offsetof(shard_body_def, angular_velocity)},
    {.key = "fixed", .kind = SHARD_KEY_CUSTOM, .parse = shard_scene_parse_fixed},
    {.key = "prescribed", .kind = SHARD_KEY_CUSTOM, .parse = shard_scene_parse_prescribed},
    {.key = "notches", .kind = SHARD_KEY_CUSTOM, .parse = shard_scene_parse_notches},
    {.key = "tractions", .kind = SHARD_KEY_CUSTOM, .parse = shard_scene_parse_tractions},
};
/* A lattice body gives its spacing.  A surface is a grid, or a mesh whose vertices are the particles: a grid has
 * its spacing from its divisions (the shorter cell edge); a surface mesh gives its spacing (its typical edge
 * length, for the contact skin and stiffness). */
static int shard_scene_check_body(shard_scene_ctx *c, const shard_scene_node *node, const char *path, void *base)
{
    shard_body_def *b = base;
    if (b->shape.kind != SHARD_SHAPE_GRID) {
        if (b->spacing_loc.line == 0)
            return shard_scene_fail(c, node, path, "missing required key 'spacing'");
        return 0;
    }
    if (b->spacing_loc.line > 0) {
        char sub[SHARD_KEY_PATH_MAX];
        shard_scene_child_path(sub, path, "spacing");
        return shard_scene_fail(c, shard_scene_map_get(node, "spacing", NULL), sub,
                                "a grid's spacing comes from its divisions: leave it out");
    }
    const shard_shape *g = &b->shape;
    double lu = sqrt(g->u[0] * g->u[0] + g->u[1] * g->u[1] + g->u[2] * g->u[2]);
    double lv = sqrt(g->v[0] * g->v[0] + g->v[1] * g->v[1] + g->v[2] * g->v[2]);
    b->spacing = fmin(lu / (double)g->divisions[0], lv / (double)g->divisions[1]);
    b->spacing_loc = g->loc;
    return 0;
}
static const shard_scene_section body_section = SHARD_KEY_SECTION(body_rows, 0, shard_scene_check_body);

static const shard_scene_field lattice_rows[] = {
    {.key = "sampling",
     .kind = SHARD_KEY_CHOICE,
     .offset = offsetof(shard_body_def, sampling),
     SHARD_KEY_CHOICES([SHARD_SAMPLING_LATTICE] = "lattice", [SHARD_SAMPLING_SURFACE] = "surface")},
};
const shard_scene_section shard_scene_lattice_keys = SHARD_KEY_SECTION(lattice_rows, 0, NULL);

/* The module of a body by its `kind` (before its other keys: they depend on it), or a failure naming the kinds of
 * the scene's table. */
static int shard_scene_body_module(shard_scene_ctx *c, const shard_scene_node *node, const char *path, int *module)
{
    const shard_scene *s = c->user;
    const shard_scene_node *v = node->type == SHARD_YAML_MAP ? shard_scene_map_get(node, "kind", NULL) : NULL;
    const char *kind = s->modules[0]->kind; /* the first row of the table: the default */
    char sub[SHARD_KEY_PATH_MAX], what[80];
    shard_scene_child_path(sub, path, "kind");
    if (v && (v->type != SHARD_YAML_SCALAR || shard_scene_is_null(v)))
        return shard_scene_fail(c, v, sub, "expected a string, got %s", shard_scene_describe(what, v));
    if (v)
        kind = v->text;
    if ((*module = shard_matter_find(s->modules, s->n_modules, kind)) >= 0)
        return 0;
    char known[256] = "";
    size_t used = 0;
    for (int k = 0; k < s->n_modules; k++)
        shard_list_append(known, sizeof known, &used, s->modules[k]->kind);
    return shard_scene_fail(c, v ? v : node, v ? sub : path, "unknown kind of matter '%s' (this build has: %s)", kind,
                            known);
}

/* Whether a kind's bodies take `key` beyond the common keys (its own table or a shared one, matter.h). */
static bool shard_scene_kind_has(const shard_matter *m, const char *key)
{
    const shard_matter_keys *mk = m->keys;
    return mk && ((mk->body && shard_scene_section_has(mk->body, key)) ||
                  (mk->body_shared && shard_scene_section_has(mk->body_shared, key)));
}

/* A key that only other kinds' bodies have: a message that names those kinds ("'solid' or 'rigid'"). */
static int shard_scene_other_kinds_key(shard_scene_ctx *c, const shard_scene_node *node, const char *path, int module)
{
    const shard_scene *s = c->user;
    for (size_t i = 0; i + 1 < node->n; i += 2) {
        const shard_scene_node *k = node->kids[i];
        if (k->type != SHARD_YAML_SCALAR || shard_scene_section_has(&body_section, k->text) ||
            shard_scene_kind_has(s->modules[module], k->text))
            continue;
        int has[SHARD_MATTER_MAX], n = 0;
        for (int m = 0; m < s->n_modules; m++)
            if (m != module && shard_scene_kind_has(s->modules[m], k->text))
                has[n++] = m;
        if (n == 0)
            continue;
        char kinds[256] = "";
        for (int j = 0; j < n; j++) {
            size_t used = strlen(kinds);
            snprintf(kinds + used, sizeof kinds - used, "%s'%s'", j == 0 ? "" : j + 1 == n ? " or " : ", ",
                     s->modules[has[j]]->kind);
        }
        char sub[SHARD_KEY_PATH_MAX];
        shard_scene_child_path(sub, path, k->text);
        return shard_scene_fail(c, k, sub, "is a key of bodies of kind %s, and this body is of kind '%s'", kinds,
                                s->modules[module]->kind);
    }
    return 0;
}

/* A surface kind (SHARD_MATTER_SURFACE) takes a grid or a mesh of its vertices; other kinds take no grid. */
static int shard_scene_check_surface(shard_scene_ctx *c, const shard_body_def *b)
{
    const shard_scene *s = c->user;
    const char *kind = s->modules[b->module]->kind;
    int grid = b->shape.kind == SHARD_SHAPE_GRID, mesh = b->shape.kind == SHARD_SHAPE_MESH;
    if (b->surface && !grid && !mesh)
        return shard_error_at(c->err, c->file, &b->shape.loc,
                              "body '%s' is of kind '%s', a surface: its shape must be a `grid` or a `mesh`", b->name,
                              kind);
    if (b->surface || !grid)
        return 0;
    char surfaces[256] = "";
    size_t used = 0;
    for (int k = 0; k < s->n_modules; k++)
        if (s->modules[k]->flags & SHARD_MATTER_SURFACE)
            shard_list_append(surfaces, sizeof surfaces, &used, s->modules[k]->kind);
    return shard_error_at(c->err, c->file, &b->shape.loc,
                          "body '%s' is of kind '%s', but its shape is a surface (a `grid`): surfaces are of kind %s",
                          b->name, kind, used ? surfaces : "(none in this build)");
}

/* One body: its kind first, then the common keys and those of its kind together (scene.h, matter.h). */
static int shard_scene_parse_body(shard_scene_ctx *c, const shard_scene_node *node, const char *path, shard_body_def *b)
{
    const shard_scene *s = c->user;
    int rc = shard_scene_body_module(c, node, path, &b->module);
    if (rc || (node->type == SHARD_YAML_MAP && (rc = shard_scene_other_kinds_key(c, node, path, b->module))))
        return rc;
    const shard_matter *m = s->modules[b->module];
    b->surface = (m->flags & SHARD_MATTER_SURFACE) != 0;
    char what[SHARD_KIND_MAX + 8];
    snprintf(what, sizeof what, "kind %s", m->kind);
    shard_scene_part parts[3] = {{.sec = &body_section, .base = b}};
    int n = 1;
    if (m->keys && m->keys->body_shared)
        parts[n++] = (shard_scene_part){.sec = m->keys->body_shared, .base = b, .what = what};
    if (m->keys && m->keys->body) {
        b->kind_def = shard_calloc(1, m->keys->body_bytes);
        parts[n++] = (shard_scene_part){.sec = m->keys->body, .base = b->kind_def, .what = what};
    }
    if ((rc = shard_scene_parse_parts(c, node, path, parts, n)))
        return rc;
    snprintf(b->kind, sizeof b->kind, "%s", m->kind); /* given or the default */
    return 0;
}

int shard_scene_parse_bodies(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    shard_scene *s = target;
    char what[80];
    if (n->type != SHARD_YAML_SEQ)
        return shard_scene_fail(c, n, path, "expected a sequence of bodies, got %s", shard_scene_describe(what, n));
    if (n->n == 0)
        return shard_scene_fail(c, n, path, "at least one body is required");
    s->bodies = shard_calloc(n->n, sizeof *s->bodies);
    for (size_t i = 0; i < n->n; i++) {
        shard_body_def *b = &s->bodies[s->n_bodies++];
        char sub[SHARD_KEY_PATH_MAX];
        shard_scene_index_path(sub, path, i);
        shard_scene_make_loc(&b->loc, n->kids[i], sub);
        int rc = shard_scene_parse_body(c, n->kids[i], sub, b);
        if (rc)
            return rc;
        if (!b->name[0])
            snprintf(b->name, sizeof b->name, "body%zu", i);
        for (size_t j = 0; j < i; j++)
            if (strcmp(s->bodies[j].name, b->name) == 0) {
                const shard_scene_node *name = shard_scene_map_get(n->kids[i], "name", NULL);
                char key[SHARD_KEY_PATH_MAX];
                shard_scene_child_path(key, sub, "name");
                return shard_scene_fail(c, name ? name : n->kids[i], name ? key : sub,
                                        "duplicate body name '%s' (also %s)", b->name, s->bodies[j].loc.key);
            }
        if ((rc = shard_scene_check_surface(c, b)))
            return rc;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------------------------
 * Obstacles
 * ------------------------------------------------------------------------------------------------------------ */

static int shard_scene_check_plane(shard_scene_ctx *c, const shard_scene_node *node, const char *path, void *base)
{
    shard_obstacle_def *o = base;
    double len = sqrt(o->normal[0] * o->normal[0] + o->normal[1] * o->normal[1] + o->normal[2] * o->normal[2]);
    if (!(len > 0) || !isfinite(len)) {
        char sub[SHARD_KEY_PATH_MAX];
        shard_scene_child_path(sub, path, "normal");
        return shard_scene_fail(c, shard_scene_map_get(node, "normal", NULL), sub, "must be a nonzero finite vector");
    }
    for (int d = 0; d < 3; d++)
        o->normal[d] /= len;
    return 0;
}

static int shard_scene_check_obstacle_box(shard_scene_ctx *c, const shard_scene_node *node, const char *path,
                                          void *base)
{
    const shard_obstacle_def *o = base;
    return shard_scene_check_box_corners(c, node, path, o->min, o->max);
}

static const shard_scene_field plane_rows[] = {
    {.key = "point",
     .kind = SHARD_KEY_VEC3,
     .flags = SHARD_KEY_REQUIRED,
     .offset = offsetof(shard_obstacle_def, point)},
    {.key = "normal",
     .kind = SHARD_KEY_VEC3,
     .flags = SHARD_KEY_REQUIRED,
     .offset = offsetof(shard_obstacle_def, normal)},
};
static const shard_scene_field obstacle_sphere_rows[] = {
    {.key = "center",
     .kind = SHARD_KEY_VEC3,
     .flags = SHARD_KEY_REQUIRED,
     .offset = offsetof(shard_obstacle_def, center)},
    {.key = "radius",
     .kind = SHARD_KEY_NUMBER,
     .flags = SHARD_KEY_REQUIRED,
     .offset = offsetof(shard_obstacle_def, radius),
     .r = SHARD_KEY_GT(0)},
};
static const shard_scene_field obstacle_box_rows[] = {
    {.key = "min", .kind = SHARD_KEY_VEC3, .flags = SHARD_KEY_REQUIRED, .offset = offsetof(shard_obstacle_def, min)},
    {.key = "max", .kind = SHARD_KEY_VEC3, .flags = SHARD_KEY_REQUIRED, .offset = offsetof(shard_obstacle_def, max)},
};
static const shard_scene_section plane_section = SHARD_KEY_SECTION(plane_rows, 0, shard_scene_check_plane);
static const shard_scene_section obstacle_sphere_section = SHARD_KEY_SECTION(obstacle_sphere_rows, 0, NULL);
static const shard_scene_section obstacle_box_section =
    SHARD_KEY_SECTION(obstacle_box_rows, 0, shard_scene_check_obstacle_box);

static const shard_scene_field obstacle_rows[] = {
    {.key = "plane",
     .kind = SHARD_KEY_MAP,
     .flags = SHARD_KEY_REQUIRED,
     .group = 1,
     .sub = &plane_section,
     .variant = SHARD_OBSTACLE_PLANE},
    {.key = "sphere",
     .kind = SHARD_KEY_MAP,
     .flags = SHARD_KEY_REQUIRED,
     .group = 1,
     .sub = &obstacle_sphere_section,
     .variant = SHARD_OBSTACLE_SPHERE},
    {.key = "box",
     .kind = SHARD_KEY_MAP,
     .flags = SHARD_KEY_REQUIRED,
     .group = 1,
     .sub = &obstacle_box_section,
     .variant = SHARD_OBSTACLE_BOX},
    {.key = "name", .kind = SHARD_KEY_STRING, .offset = offsetof(shard_obstacle_def, name), .size = SHARD_NAME_MAX},
    {.key = "velocity", .kind = SHARD_KEY_VEC3, .offset = offsetof(shard_obstacle_def, velocity)},
    {.key = "friction",
     .kind = SHARD_KEY_NUMBER,
     .offset = offsetof(shard_obstacle_def, friction),
     .r = SHARD_KEY_GE(0),
     .def = {0.5}},
    {.key = "stiffness",
     .kind = SHARD_KEY_NUMBER,
     .flags = SHARD_KEY_AUTO,
     .offset = offsetof(shard_obstacle_def, stiffness),
     .r = SHARD_KEY_GT(0)},
    {.key = "damping",
     .kind = SHARD_KEY_NUMBER,
     .offset = offsetof(shard_obstacle_def, damping),
     .r = SHARD_KEY_IN('[', 0, 1, ']'),
     .def = {0.1}},
    {.key = "restitution",
     .kind = SHARD_KEY_NUMBER,
     .offset = offsetof(shard_obstacle_def, restitution),
     .r = SHARD_KEY_IN('[', 0, 1, ']')},
};
static const shard_scene_section obstacle_section =
    SHARD_KEY_SECTION(obstacle_rows, SHARD_KEY_OFF1(shard_obstacle_def, kind), NULL);

int shard_scene_parse_obstacles(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    shard_scene *s = target;
    char what[80];
    if (shard_scene_is_null(n))
        return 0;
    if (n->type != SHARD_YAML_SEQ)
        return shard_scene_fail(c, n, path, "expected a sequence of obstacles, got %s", shard_scene_describe(what, n));
    s->obstacles = shard_calloc(n->n, sizeof *s->obstacles);
    for (size_t i = 0; i < n->n; i++) {
        shard_obstacle_def *o = &s->obstacles[s->n_obstacles++];
        char sub[SHARD_KEY_PATH_MAX];
        shard_scene_index_path(sub, path, i);
        shard_scene_make_loc(&o->loc, n->kids[i], sub);
        int rc = shard_scene_parse_section(c, n->kids[i], sub, &obstacle_section, o);
        if (rc)
            return rc;
        if (!o->name[0] && snprintf(o->name, sizeof o->name, "%s", sub) < 0)
            o->name[0] = '\0';
    }
    return 0;
}
