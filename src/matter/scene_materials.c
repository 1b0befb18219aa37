/* Scene materials: the section `materials` of a scene, read with the key-table engine (scene_keys.h): a mapping of
 * names to materials, each with its elasticity, damping, plasticity, contact and fracture keys. */
#include "scene_bodies.h"
#include "shard/matter.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------------------------
 * Materials
 * ------------------------------------------------------------------------------------------------------------ */

static const shard_scene_field plasticity_rows[] = {
    {.key = "yield", .kind = SHARD_KEY_NUMBER, .offset = offsetof(shard_material, yield), .r = SHARD_KEY_GE(0)},
    {.key = "creep", .kind = SHARD_KEY_NUMBER, .offset = offsetof(shard_material, creep), .r = SHARD_KEY_GE(0)},
    {.key = "max", .kind = SHARD_KEY_NUMBER, .offset = offsetof(shard_material, max_plastic), .r = SHARD_KEY_GE(0)},
};
static const shard_scene_section plasticity_section = SHARD_KEY_SECTION(plasticity_rows, 0, NULL);

static const shard_scene_field contact_rows[] = {
    {.key = "stiffness",
     .kind = SHARD_KEY_NUMBER,
     .flags = SHARD_KEY_AUTO,
     .offset = offsetof(shard_material, contact_stiffness),
     .r = SHARD_KEY_GT(0)},
    {.key = "damping",
     .kind = SHARD_KEY_NUMBER,
     .offset = offsetof(shard_material, contact_damping),
     .r = SHARD_KEY_IN('[', 0, 1, ']'),
     .def = {0.1}},
    {.key = "friction",
     .kind = SHARD_KEY_NUMBER,
     .offset = offsetof(shard_material, friction),
     .r = SHARD_KEY_GE(0),
     .def = {0.5}},
    {.key = "restitution",
     .kind = SHARD_KEY_NUMBER,
     .offset = offsetof(shard_material, restitution),
     .r = SHARD_KEY_IN('[', 0, 1, ']')},
    {.key = "surface",
     .kind = SHARD_KEY_CHOICE,
     .offset = offsetof(shard_material, contact_surface),
     SHARD_KEY_CHOICES([SHARD_SURFACE_PARTICLES] = "particles", [SHARD_SURFACE_SMOOTH] = "smooth")},
};
static const shard_scene_section contact_section = SHARD_KEY_SECTION(contact_rows, 0, NULL);

/* fracture: exactly one criterion, and an optional Weibull scatter of the thresholds (fracture.h). */
static const shard_scene_field fracture_rows[] = {
    {.key = "critical_stretch",
     .kind = SHARD_KEY_NUMBER,
     .flags = SHARD_KEY_REQUIRED,
     .group = 1,
     .offset = offsetof(shard_fracture_def, value),
     .r = SHARD_KEY_GT(0),
     .variant = SHARD_FRACTURE_STRETCH},
    {.key = "energy_release_rate",
     .kind = SHARD_KEY_NUMBER,
     .flags = SHARD_KEY_REQUIRED,
     .group = 1,
     .offset = offsetof(shard_fracture_def, value),
     .r = SHARD_KEY_GT(0),
     .variant = SHARD_FRACTURE_ENERGY},
    {.key = "tensile_strength",
     .kind = SHARD_KEY_NUMBER,
     .flags = SHARD_KEY_REQUIRED,
     .group = 1,
     .offset = offsetof(shard_fracture_def, value),
     .r = SHARD_KEY_GT(0),
     .variant = SHARD_FRACTURE_RANKINE},
    {.key = "weibull_modulus",
     .kind = SHARD_KEY_NUMBER,
     .offset = offsetof(shard_fracture_def, weibull_modulus),
     .r = SHARD_KEY_GE(0)},
    {.key = "weibull_seed",
     .kind = SHARD_KEY_INT,
     .offset = offsetof(shard_fracture_def, weibull_seed),
     .r = SHARD_KEY_GE(0)},
};
static const shard_scene_section fracture_section =
    SHARD_KEY_SECTION(fracture_rows, SHARD_KEY_OFF1(shard_fracture_def, criterion), NULL);

static int shard_scene_parse_fracture(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    shard_fracture_def *f = target;
    shard_scene_make_loc(&f->loc, n, path);
    return shard_scene_parse_section(c, n, path, &fracture_section, f);
}

static const shard_scene_field material_rows[] = {
    {.key = "density",
     .kind = SHARD_KEY_NUMBER,
     .flags = SHARD_KEY_REQUIRED,
     .offset = offsetof(shard_material, density),
     .r = SHARD_KEY_GT(0)},
    {.key = "E",
     .kind = SHARD_KEY_NUMBER,
     .flags = SHARD_KEY_REQUIRED,
     .offset = offsetof(shard_material, E),
     .r = SHARD_KEY_GT(0)},
    {.key = "nu",
     .kind = SHARD_KEY_NUMBER,
     .flags = SHARD_KEY_REQUIRED,
     .offset = offsetof(shard_material, nu),
     .r = SHARD_KEY_IN('(', -1, 0.5, ')')},
    {.key = "volume_stiffness",
     .kind = SHARD_KEY_NUMBER,
     .offset = offsetof(shard_material, volume_stiffness),
     .r = SHARD_KEY_GE(0)},
    {.key = "volume_barrier",
     .kind = SHARD_KEY_NUMBER,
     .offset = offsetof(shard_material, volume_barrier),
     .r = SHARD_KEY_GE(0),
     .def = {1.0}},
    {.key = "stabilization",
     .kind = SHARD_KEY_NUMBER,
     .offset = offsetof(shard_material, stabilization),
     .r = SHARD_KEY_IN('[', 0, 1, ']'),
     .def = {0.0},
     .loc_offset = SHARD_KEY_OFF1(shard_material, stabilization_loc)},
    {.key = "damping", .kind = SHARD_KEY_NUMBER, .offset = offsetof(shard_material, damping), .r = SHARD_KEY_GE(0)},
    {.key = "mass_damping",
     .kind = SHARD_KEY_NUMBER,
     .offset = offsetof(shard_material, mass_damping),
     .r = SHARD_KEY_GE(0)},
    {.key = "plasticity", .kind = SHARD_KEY_MAP, .sub = &plasticity_section},
    {.key = "contact", .kind = SHARD_KEY_MAP, .sub = &contact_section},
    {.key = "fracture",
     .kind = SHARD_KEY_CUSTOM,
     .offset = offsetof(shard_material, fracture),
     .parse = shard_scene_parse_fracture},
};
static const shard_scene_section material_section = SHARD_KEY_SECTION(material_rows, 0, NULL);

int shard_scene_parse_materials(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    shard_scene *s = target;
    char what[80];
    if (n->type != SHARD_YAML_MAP)
        return shard_scene_fail(c, n, path, "expected a mapping of material names to materials, got %s",
                                shard_scene_describe(what, n));
    if (n->n == 0)
        return shard_scene_fail(c, n, path, "at least one material is required");
    s->materials = shard_calloc(n->n / 2 + 1, sizeof *s->materials);
    for (size_t i = 0; i + 1 < n->n; i += 2) {
        const shard_scene_node *k = n->kids[i], *v = n->kids[i + 1];
        if (k->type != SHARD_YAML_SCALAR || shard_scene_is_null(k))
            return shard_scene_fail(c, k, path, "material names must be words, got %s", shard_scene_describe(what, k));
        char sub[SHARD_KEY_PATH_MAX];
        shard_scene_child_path(sub, path, k->text);
        if (k->len >= SHARD_NAME_MAX || strlen(k->text) != k->len)
            return shard_scene_fail(c, k, sub, "material name must be at most %d characters", SHARD_NAME_MAX - 1);
        if (shard_scene_check_printable(c, k, sub))
            return c->err->code;
        for (int j = 0; j < s->n_materials; j++)
            if (strcmp(s->materials[j].name, k->text) == 0)
                return shard_scene_fail(c, k, sub, "duplicate material (first defined at line %d)",
                                        s->materials[j].loc.line);
        shard_material *m = &s->materials[s->n_materials++];
        memcpy(m->name, k->text, k->len + 1);
        shard_scene_make_loc(&m->loc, v, sub);
        int rc = shard_scene_parse_section(c, v, sub, &material_section, m);
        if (rc)
            return rc;
        if (m->stabilization_loc.line == 0 && m->fracture.criterion != SHARD_FRACTURE_NONE)
            m->stabilization = SHARD_FRACTURE_STABILIZATION;
    }
    return 0;
}

/* The node of the dotted key path ("contact.surface") in the mapping m, or NULL. */
static const shard_scene_node *shard_scene_material_key(const shard_scene_node *m, const char *path,
                                                        const shard_scene_node **key)
{
    char head[64];
    const char *dot = strchr(path, '.');
    if (!dot)
        return shard_scene_map_get(m, path, key);
    snprintf(head, sizeof head, "%.*s", (int)(dot - path), path);
    const shard_scene_node *sub = shard_scene_map_get(m, head, NULL);
    return sub && sub->type == SHARD_YAML_MAP ? shard_scene_material_key(sub, dot + 1, key) : NULL;
}

/* Does some kind of the bodies of material i (a mask of module rows) list `path` among its material keys? */
static bool shard_scene_material_read(const shard_scene *s, unsigned kinds, const char *path)
{
    for (int m = 0; m < s->n_modules; m++) {
        const shard_matter_keys *mk = s->modules[m]->keys;
        for (int k = 0; (kinds >> m & 1u) && mk && mk->material_keys && mk->material_keys[k]; k++)
            if (strcmp(mk->material_keys[k], path) == 0)
                return true;
    }
    return false;
}

int shard_scene_check_material_keys(shard_scene_ctx *c, const shard_scene_node *root)
{
    const shard_scene *s = c->user;
    const shard_scene_node *mats = shard_scene_map_get(root, "materials", NULL);
    for (int i = 0; mats && i < s->n_materials && 2 * (size_t)i + 1 < mats->n; i++) {
        unsigned kinds = 0;
        for (int b = 0; b < s->n_bodies; b++)
            kinds |= s->bodies[b].material == i ? 1u << s->bodies[b].module : 0u;
        for (int m = 0; kinds && m < s->n_modules; m++) {
            const shard_matter_keys *mk = s->modules[m]->keys;
            for (int k = 0; mk && mk->material_keys && mk->material_keys[k]; k++) {
                const char *path = mk->material_keys[k];
                const shard_scene_node *key = NULL;
                if (!shard_scene_material_key(mats->kids[2 * i + 1], path, &key) ||
                    shard_scene_material_read(s, kinds, path))
                    continue;
                char sub[SHARD_KEY_PATH_MAX], full[SHARD_KEY_PATH_MAX], users[256] = "";
                size_t used = 0;
                for (int q = 0; q < s->n_modules; q++)
                    if (kinds >> q & 1u)
                        shard_list_append(users, sizeof users, &used, s->modules[q]->kind);
                shard_scene_child_path(sub, "materials", s->materials[i].name);
                shard_scene_child_path(full, sub, path);
                return shard_scene_fail(c, key, full,
                                        "has no effect: only bodies of kind '%s' read it, and this material's "
                                        "bodies are of kind %s",
                                        s->modules[m]->kind, users);
            }
        }
    }
    return 0;
}
