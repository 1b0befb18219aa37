/* Cloth as a matter module (kind: cloth): the glue between the driver's matter table (matter.h) and the
 * kernels of cloth.c.  A cloth body's shape is a grid; its vertices are the particles (mass: a third of their
 * triangles' areas x density x thickness).  Its reference bonds join the vertices of one body closer than the
 * widest hinge, so that every triangle and hinge of an owned vertex has its vertices among the owned
 * particles and the bond ghosts, which the driver keeps current.
 *
 * Each rank lists the elements (triangles, hinges) with an owned vertex, by increasing id (prepare), computes
 * each once and adds its forces into its owned vertices: a vertex's force is the sum of its elements in id
 * order, triangles first, whatever the partition (so results are the same on any number of ranks).  An
 * element with vertices on two ranks is computed on both from the same bits. */
#include "shard/matter.h"

#include "cloth/cloth.h"
#include "shard/mesh.h"

#include "cloth/cloth_impl.h"
#include "scene_keys.h"
#include "shard/sorted.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A surface mesh body's cloth topology: its mesh as loaded with the scene (the vertices are the
 * particles in file order).  0, or SHARD_EXIT_INPUT with *cm empty (nothing to free): also for a mesh that was
 * not loaded (its file could not be read). */
static int shard_matter_cloth_mesh(const shard_scene *sc, const shard_body_def *bd, shard_cloth_mesh *cm,
                                   shard_error *err)
{
    memset(cm, 0, sizeof *cm);
    const shard_mesh *m = bd->shape.mesh; /* loaded with the scene (mesh_io.h) */
    if (!m)
        return shard_error_at(err, sc->path, &bd->shape.file_loc, "'%s': the mesh was not loaded", bd->shape.file);
    char why[256];
    if (shard_cloth_mesh_build(m->vertices, (int64_t)m->n_vertices, m->triangles, (int64_t)m->n_triangles, cm, why,
                               sizeof why))
        return shard_error_at(err, sc->path, &bd->shape.file_loc, "'%s' cannot be a cloth: %s", bd->shape.file, why);
    return 0;
}

static int shard_matter_cloth_init(const shard_scene *sc, int b, void *state, shard_error *err)
{
    const shard_body_def *bd = &sc->bodies[b];
    const shard_material *m = &sc->materials[bd->material];
    if (bd->n_notches > 0)
        return shard_error_at(err, sc->path, &bd->notches[0].loc, "body '%s' is a cloth: it cannot have notches",
                              bd->name);
    if (bd->n_tractions > 0)
        return shard_error_at(err, sc->path, &bd->tractions[0].loc,
                              "body '%s' is a cloth: tractions are for lattice bodies (use prescribed vertices)",
                              bd->name);
    shard_cloth_mesh *cm = NULL;
    if (bd->shape.kind == SHARD_SHAPE_MESH) {
        cm = shard_calloc(1, sizeof *cm);
        int rc = shard_matter_cloth_mesh(sc, bd, cm, err);
        if (rc) {
            free(cm);
            return rc;
        }
    } else if (bd->shape.divisions[0] < 2 || bd->shape.divisions[1] < 2) {
        return shard_error_at(err, sc->path, &bd->shape.loc,
                              "body '%s': a cloth grid needs at least 2 x 2 divisions, got %ld x %ld", bd->name,
                              bd->shape.divisions[0], bd->shape.divisions[1]);
    }
    const shard_cloth_def *cd = bd->kind_def;
    shard_cloth_params_init(state, &bd->shape, cm, m->E, m->nu, m->density, cd->thickness, cd->bending, m->damping);
    return 0;
}

static void shard_matter_cloth_finish(const shard_scene *sc, void *bodies)
{
    for (int b = 0; b < sc->n_bodies; b++) {
        shard_cloth_params *cp = (shard_cloth_params *)((char *)bodies + (size_t)b * sizeof *cp);
        if (cp->mesh) {
            shard_cloth_mesh_free(cp->mesh);
            free(cp->mesh);
            cp->mesh = NULL;
        }
    }
}

static double shard_matter_cloth_dt(const shard_scene *sc, int b, const void *state)
{
    (void)sc, (void)b;
    return ((const shard_cloth_params *)state)->dt;
}

/* A mesh's widest element needs its file (every rank reads it: meshes are small next to the particles). */
static double shard_matter_cloth_bond_radius(const shard_scene *sc, int b)
{
    shard_cloth_params cp;
    const shard_body_def *bd = &sc->bodies[b];
    memset(&cp, 0, sizeof cp);
    double r = 0.0;
    if (bd->shape.kind == SHARD_SHAPE_GRID) {
        cp.grid = bd->shape, cp.nu = bd->shape.divisions[0], cp.nv = bd->shape.divisions[1];
        r = shard_cloth_stencil_radius(&cp);
    } else if (bd->shape.kind == SHARD_SHAPE_MESH) {
        shard_cloth_mesh cm;
        shard_error err;
        if (shard_matter_cloth_mesh(sc, bd, &cm, &err) == 0) { /* errors: body_init reports them */
            r = cm.radius;
            shard_cloth_mesh_free(&cm);
        }
    }
    return 1.01 * r; /* bonds are strictly shorter than the radius */
}

/* Cloth collisions (cloth_collide_stage.c) pair a point or an edge with an element within 1.5 times the
 * thickness (a particle of another kind: its radius and half the thickness), whose far vertex is at most an
 * element's span from its near one: every particle within that plus two spans of an owned vertex must be at
 * hand. */
static double shard_matter_cloth_reach(const shard_scene *sc, int b, const void *state)
{
    const shard_cloth_params *cp = state;
    (void)b;
    double r = 0.0; /* the particles of other kinds touch its triangles too, with their contact radius */
    for (int q = 0; q < sc->n_bodies; q++)
        if (!sc->bodies[q].surface)
            r = fmax(r, 0.5 * sc->bodies[q].spacing);
    return 1.5 * (cp->thickness + r) + 2.0 * (cp->mesh ? cp->mesh->radius : shard_cloth_stencil_radius(cp));
}

/* A surface touches with half its thickness. */
static double shard_matter_cloth_contact_radius(const shard_scene *sc, int b)
{
    return 0.5 * ((const shard_cloth_def *)sc->bodies[b].kind_def)->thickness;
}

static double shard_matter_cloth_volume(const shard_scene *sc, int b, int64_t k, const void *state)
{
    const shard_cloth_params *cp = state;
    (void)sc, (void)b;
    return shard_cloth_vertex_area(cp, k) * cp->thickness;
}

/* A restart's checks: the vertices the scene makes, and where each rests. */
static int64_t shard_matter_cloth_count(const shard_scene *sc, int b, const void *state)
{
    (void)sc, (void)b;
    return shard_cloth_n_vertices(state);
}

static void shard_matter_cloth_rest(const shard_scene *sc, int b, int64_t k, const void *state, double X[3])
{
    (void)sc, (void)b;
    shard_cloth_rest_vertex(state, k, X);
}

/* The local index of the vertex of global id g among owned particle i and its bond partners (rows are sorted
 * by partner id), or -1. */
static int32_t shard_matter_cloth_find(const shard_phys *ph, size_t i, int64_t g)
{
    const shard_particles *p = ph->p;
    if (p->gid[i] == g)
        return (int32_t)i;
    int64_t s = ph->ref_bonds->start[i];
    const int32_t *row = ph->ref_bonds->idx + s;
    int64_t k = shard_sorted_find_i64_via(p->gid, row, (size_t)(ph->ref_bonds->start[i + 1] - s), g);
    return k >= 0 ? row[k] : -1;
}

typedef struct shard_cloth_key {
    int32_t body;
    int64_t id;
    int32_t from; /* an owned vertex of the element */
} shard_cloth_key;

static int shard_cloth_key_cmp(const void *pa, const void *pb)
{
    const shard_cloth_key *a = pa, *b = pb;
    if (a->body != b->body)
        return a->body < b->body ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

/* Sorted, without repeats (keeps the first `from`). */
static size_t shard_cloth_keys_unique(shard_cloth_key *k, size_t n)
{
    if (n > 1)
        qsort(k, n, sizeof *k, shard_cloth_key_cmp);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (m == 0 || shard_cloth_key_cmp(&k[m - 1], &k[i]) != 0)
            k[m++] = k[i];
    return m;
}

/* The local indices out[0..n) of an element's vertices (indices v in body key->body), found among the bond
 * partners of the owned vertex that listed it. */
static void shard_cloth_resolve(const shard_phys *ph, const shard_cloth_key *key, const int64_t *v, int n, int32_t *out)
{
    for (int q = 0; q < n; q++) {
        int64_t g = ph->body_first[key->body] + v[q];
        if ((out[q] = shard_matter_cloth_find(ph, (size_t)key->from, g)) < 0)
            shard_fatal(SHARD_EXIT_INTERNAL, "cloth: vertex %lld is not a bond partner of vertex %lld", (long long)g,
                        (long long)ph->p->gid[key->from]);
    }
}

static const shard_cloth_params *shard_cloth_body(const shard_matter_ctx *c, int32_t b)
{
    return (const shard_cloth_params *)((const char *)c->bodies + (size_t)b * sizeof(shard_cloth_params));
}

static void shard_matter_cloth_prepare(const shard_matter_ctx *c)
{
    shard_cloth_state *st = c->state;
    const shard_phys *ph = c->ph;
    const shard_particles *p = ph->p;
    const shard_block *blk = c->block;
    size_t cap_t = 1, cap_h = 1, nt = 0, nh = 0;
    for (size_t i = blk->first; i < blk->first + blk->n_owned; i++) {
        cap_t += (size_t)shard_cloth_body(c, p->body[i])->max_tri;
        cap_h += (size_t)shard_cloth_body(c, p->body[i])->max_hinge;
    }
    shard_cloth_key *tk = shard_malloc(cap_t * sizeof *tk), *hk = shard_malloc(cap_h * sizeof *hk);
    for (size_t i = blk->first; i < blk->first + blk->n_owned; i++) {
        int32_t b = p->body[i];
        const shard_cloth_params *cp = shard_cloth_body(c, b);
        int64_t k = p->gid[i] - ph->body_first[b], ids[SHARD_CLOTH_MAX_HINGES];
        int n = shard_cloth_vertex_triangles(cp, k, ids);
        for (int q = 0; q < n; q++)
            tk[nt++] = (shard_cloth_key){b, ids[q], (int32_t)i};
        n = shard_cloth_vertex_hinges(cp, k, ids);
        for (int q = 0; q < n; q++)
            hk[nh++] = (shard_cloth_key){b, ids[q], (int32_t)i};
    }
    nt = shard_cloth_keys_unique(tk, nt);
    nh = shard_cloth_keys_unique(hk, nh);
    shard_reserve((void **)&st->tri, &st->cap_tri, nt + 1, sizeof *st->tri);
    shard_reserve((void **)&st->hinge, &st->cap_hinge, nh + 1, sizeof *st->hinge);
    shard_reserve((void **)&st->first_owned, &st->cap_first, nt + nh + 1, sizeof *st->first_owned);
    for (size_t e = 0; e < nt; e++) {
        int64_t v[3];
        shard_cloth_triangle(shard_cloth_body(c, tk[e].body), tk[e].id, v);
        shard_cloth_tri_el *el = &st->tri[e];
        el->body = tk[e].body;
        shard_cloth_resolve(ph, &tk[e], v, 3, el->v);
        shard_cloth_tri_rest(p->X + 3 * el->v[0], p->X + 3 * el->v[1], p->X + 3 * el->v[2], &el->rest);
        st->first_owned[e] = (size_t)el->v[0] < p->n_owned;
    }
    for (size_t e = 0; e < nh; e++) {
        const shard_cloth_params *cp = shard_cloth_body(c, hk[e].body);
        int64_t v[4];
        shard_cloth_hinge(cp, hk[e].id, v);
        shard_cloth_hinge_el *el = &st->hinge[e];
        el->body = hk[e].body;
        shard_cloth_resolve(ph, &hk[e], v, 4, el->v);
        shard_cloth_hinge_rest_init(cp, p->X + 3 * el->v[0], p->X + 3 * el->v[1], p->X + 3 * el->v[2],
                                    p->X + 3 * el->v[3], &el->rest);
        st->first_owned[nt + e] = (size_t)el->v[0] < p->n_owned;
    }
    st->n_tri = nt, st->n_hinge = nh;
    free(tk), free(hk);
}

static void shard_matter_cloth_free(void *state)
{
    shard_cloth_state *st = state;
    free(st->tri), free(st->hinge), free(st->first_owned);
    shard_cloth_collide_free(&st->collide);
    memset(st, 0, sizeof *st);
}

/* The elements' forces into f (owned vertices only) and, with energy non-NULL, the energy of the elements
 * counted here. */
static void shard_matter_cloth_run(const shard_matter_ctx *c, double *f, shard_xsum *energy)
{
    const shard_cloth_state *st = c->state;
    const shard_particles *p = c->ph->p;
    size_t n_owned = p->n_owned;
    for (size_t e = 0; e < st->n_tri; e++) {
        const shard_cloth_tri_el *el = &st->tri[e];
        const shard_cloth_params *cp = shard_cloth_body(c, el->body);
        double fe[9] = {0};
        double W = shard_cloth_membrane(cp, &el->rest, p->x + 3 * el->v[0], p->x + 3 * el->v[1], p->x + 3 * el->v[2],
                                        p->v + 3 * el->v[0], p->v + 3 * el->v[1], p->v + 3 * el->v[2], fe);
        if (energy && st->first_owned[e])
            shard_xsum_add(energy, W);
        for (int q = 0; q < 3 && f; q++)
            if ((size_t)el->v[q] < n_owned)
                for (int k = 0; k < 3; k++)
                    f[3 * el->v[q] + k] += fe[3 * q + k];
    }
    for (size_t e = 0; e < st->n_hinge; e++) {
        const shard_cloth_hinge_el *el = &st->hinge[e];
        const shard_cloth_params *cp = shard_cloth_body(c, el->body);
        const double *x[4], *v[4];
        for (int q = 0; q < 4; q++)
            x[q] = p->x + 3 * el->v[q], v[q] = p->v + 3 * el->v[q];
        double fe[12] = {0};
        double W = shard_cloth_bending(cp, &el->rest, x, v, fe);
        if (energy && st->first_owned[st->n_tri + e])
            shard_xsum_add(energy, W);
        for (int q = 0; q < 4 && f; q++)
            if ((size_t)el->v[q] < n_owned)
                for (int k = 0; k < 3; k++)
                    f[3 * el->v[q] + k] += fe[3 * q + k];
    }
}

static size_t shard_matter_cloth_add(const shard_matter_ctx *c, double *f, const int32_t *list, size_t n, int ghosts)
{
    (void)list, (void)n, (void)ghosts; /* one-pass: every owned vertex (list is NULL) */
    shard_matter_cloth_run(c, f, NULL);
    return 0;
}

static void shard_matter_cloth_energy(const shard_matter_ctx *c, shard_xsum *acc)
{
    shard_matter_cloth_run(c, NULL, acc);
}

/* Output: each owned vertex's stretch, the largest over its triangles, and the collision stage's force. */
enum { CLOTH_OUT_STRETCH, CLOTH_OUT_CONTACT };
static const shard_output_field_info shard_matter_cloth_out[] = {
    [CLOTH_OUT_STRETCH] = {"stretch", SHARD_TYPE_F64, 1, "1", "cloth",
                           "the largest principal Green strain of the vertex's triangles (membrane stretch)"},
    [CLOTH_OUT_CONTACT] = {"contact", SHARD_TYPE_F64, 1, "N", "cloth",
                           "the force of the collision stage's impulses on the vertex over the last step, |m dv| / dt "
                           "(self-collision, other bodies, obstacles)"},
};

static void shard_matter_cloth_output(const shard_matter_ctx *c, unsigned want, void *const *cols)
{
    const shard_block *blk = c->block;
    double *contact = cols[CLOTH_OUT_CONTACT];
    if (want & 1u << CLOTH_OUT_CONTACT && contact && blk->n_owned)
        memcpy(contact + blk->first, blk->col[SHARD_CLOTH_CONTACT], blk->n_owned * sizeof *contact);
    double *stretch = cols[CLOTH_OUT_STRETCH];
    if (!(want & 1u << CLOTH_OUT_STRETCH) || !stretch)
        return;
    const shard_cloth_state *st = c->state;
    const shard_particles *p = c->ph->p;
    for (size_t i = blk->first; i < blk->first + blk->n_owned; i++)
        stretch[i] = -INFINITY;
    for (size_t e = 0; e < st->n_tri; e++) {
        const shard_cloth_tri_el *el = &st->tri[e];
        double g = shard_cloth_stretch(&el->rest, p->x + 3 * el->v[0], p->x + 3 * el->v[1], p->x + 3 * el->v[2]);
        for (int q = 0; q < 3; q++)
            if ((size_t)el->v[q] < p->n_owned)
                stretch[el->v[q]] = fmax(stretch[el->v[q]], g);
    }
}

static size_t shard_matter_cloth_cells(const shard_matter_ctx *c, int32_t *tri)
{
    const shard_cloth_state *st = c->state;
    size_t n = 0;
    for (size_t e = 0; e < st->n_tri; e++)
        if (st->first_owned[e]) {
            if (tri)
                memcpy(tri + 3 * n, st->tri[e].v, 3 * sizeof *tri);
            n++;
        }
    return n;
}

static void shard_matter_cloth_describe(const shard_scene *sc, int b, char *buf, size_t len)
{
    const shard_body_def *bd = &sc->bodies[b];
    const shard_material *m = &sc->materials[bd->material];
    const shard_cloth_def *cd = bd->kind_def;
    double t = cd->thickness, D = cd->bending >= 0.0 ? cd->bending : m->E * t * t * t / (12.0 * (1.0 - m->nu * m->nu));
    char what[64];
    if (bd->shape.kind == SHARD_SHAPE_GRID)
        snprintf(what, sizeof what, "%ld x %ld cells", bd->shape.divisions[0], bd->shape.divisions[1]);
    else
        snprintf(what, sizeof what, "a mesh");
    snprintf(buf, len, "cloth, %s, thickness %g m, %g kg/m^2, bending stiffness %g N m", what, t, m->density * t, D);
}

static const shard_field_desc shard_matter_cloth_rows[] = {
    SHARD_BLOCK_ROW(SHARD_CLOTH_CONTACT, double, 1, SHARD_FIELD_STATE, "contact_force")};

static const shard_force_term shard_matter_cloth_force = {
    .name = "cloth",
    .phase = "Cloth",
    .order = SHARD_FORCE_ORDER_CLOTH,
    .add = shard_matter_cloth_add,
    .energy = shard_matter_cloth_energy,
};
static const shard_force_term *const shard_matter_cloth_terms[] = {&shard_matter_cloth_force};

static const shard_matter_collision shard_matter_cloth_collision = {.collide = shard_cloth_collide_step};

/* The keys of a cloth body (shard_cloth_def) and the section `cloth` (shard_cloth_settings). */
static const shard_scene_field shard_matter_cloth_body_rows[] = {
    {.key = "thickness",
     .kind = SHARD_KEY_NUMBER,
     .flags = SHARD_KEY_REQUIRED,
     .offset = offsetof(shard_cloth_def, thickness),
     .r = SHARD_KEY_GT(0)},
    {.key = "bending_stiffness",
     .kind = SHARD_KEY_NUMBER,
     .offset = offsetof(shard_cloth_def, bending),
     .r = SHARD_KEY_GE(0),
     .def = {-1}},
};
static const shard_scene_section shard_matter_cloth_body_keys =
    SHARD_KEY_SECTION(shard_matter_cloth_body_rows, 0, NULL);
static const shard_scene_field shard_matter_cloth_section_rows[] = {
    {.key = "collision_passes",
     .kind = SHARD_KEY_INT,
     .offset = offsetof(shard_cloth_settings, collision_passes),
     .r = SHARD_KEY_GE(0),
     .def = {8}},
    {.key = "unresolved",
     .kind = SHARD_KEY_CHOICE,
     .offset = offsetof(shard_cloth_settings, unresolved),
     SHARD_KEY_CHOICES([SHARD_CLOTH_UNRESOLVED_STOP] = "stop", [SHARD_CLOTH_UNRESOLVED_CONTINUE] = "continue")},
};
static const shard_scene_section shard_matter_cloth_section_keys =
    SHARD_KEY_SECTION(shard_matter_cloth_section_rows, 0, NULL);
static const shard_matter_keys shard_matter_cloth_keys = {.body = &shard_matter_cloth_body_keys,
                                                          .body_bytes = sizeof(shard_cloth_def),
                                                          .section = "cloth",
                                                          .scene_keys = &shard_matter_cloth_section_keys,
                                                          .section_bytes = sizeof(shard_cloth_settings)};

extern const shard_matter shard_matter_cloth;

const shard_cloth_settings *shard_cloth_settings_of(const shard_scene *sc)
{
    return shard_matter_section(sc, &shard_matter_cloth);
}

const shard_matter shard_matter_cloth = {
    .kind = "cloth",
    .about = "cloth: St Venant-Kirchhoff membrane and discrete-shell bending on a vertex grid",
    .keys = &shard_matter_cloth_keys,
    .rows = shard_matter_cloth_rows,
    .n_rows = SHARD_CLOTH_N_ROWS,
    .body_bytes = sizeof(shard_cloth_params),
    .body_init = shard_matter_cloth_init,
    .dt_limit = shard_matter_cloth_dt,
    .dt_name = "cloth wave speed",
    .bond_radius = shard_matter_cloth_bond_radius,
    .particle_volume = shard_matter_cloth_volume,
    .particle_count = shard_matter_cloth_count,
    .rest_position = shard_matter_cloth_rest,
    .contact_radius = shard_matter_cloth_contact_radius,
    .contact_reach = shard_matter_cloth_reach,
    .prepare = shard_matter_cloth_prepare,
    .terms = shard_matter_cloth_terms,
    .n_terms = 1,
    .out_fields = shard_matter_cloth_out,
    .n_out_fields = sizeof shard_matter_cloth_out / sizeof shard_matter_cloth_out[0],
    .output = shard_matter_cloth_output,
    .describe = shard_matter_cloth_describe,
    .cells = shard_matter_cloth_cells,
    .flags = SHARD_MATTER_SURFACE,
    .phase = "Collide",
    .collision = &shard_matter_cloth_collision,
    .report = shard_cloth_collide_report,
    .diag_line = shard_cloth_collide_diag_line,
    .state_bytes = sizeof(shard_cloth_state),
    .state_free = shard_matter_cloth_free,
    .finish = shard_matter_cloth_finish,
};
