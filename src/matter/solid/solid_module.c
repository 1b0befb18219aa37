/* The meshless solid as a matter module (kind: solid): the glue between the driver's matter table (matter.h)
 * and the kernels of solid.c.  Per body it keeps the material's constants (shard_solid_params); per particle
 * the block of SHARD_SOLID_FIELDS; its force term is the two-pass MLS force (pass 1: B = v P A^+, exchanged to
 * the bond ghosts; pass 2: the gather).  Reference bonds join particles of one body closer than
 * h = support x spacing. */
#include "shard/matter.h"

#include "scene_bodies.h"
#include "scene_keys.h"
#include "shard/sample.h"
#include "solid/solid.h"

#include <math.h>
#include <stdio.h>

static const shard_field_desc shard_matter_solid_rows[] = {SHARD_SOLID_FIELDS(SHARD_BLOCK_ROW)};

static int shard_matter_solid_init(const shard_scene *sc, int b, void *state, shard_error *err)
{
    (void)err;
    const shard_body_def *bd = &sc->bodies[b];
    const shard_material *m = &sc->materials[bd->material];
    double h = shard_solid_def_of(bd)->support * bd->spacing;
    shard_solid_params_init(state, m->E, m->nu, m->volume_stiffness, m->damping, m->yield, m->creep, m->max_plastic, h);
    shard_solid_params *sp = state;
    sp->kb = m->volume_barrier * m->E / (3.0 * (1.0 - 2.0 * m->nu));
    sp->ks = shard_solid_stabilization_stiffness(m->stabilization, m->E, bd->spacing, h);
    shard_fracture_params_init(&sp->frac, &m->fracture, m->E, m->nu, bd->spacing, h);
    if (sp->frac.criterion != SHARD_FRACTURE_NONE)
        sp->c0 = shard_fracture_micromodulus(m->E, m->nu, bd->spacing, h);
    return 0;
}

/* The CFL step from scene data alone (identical on every rank, no reduction needed): dt <= h_lattice / c_p with
 * c_p = sqrt((lambda + 2 mu + k_v) / rho), reduced for stiffness-proportional damping:
 * dt <= 2/w (sqrt(1 + z^2) - z), z = beta w / 2, w = 2 c_p / spacing. */
static double shard_matter_solid_dt(const shard_scene *sc, int b, const void *state)
{
    const shard_solid_params *sp = state;
    const shard_body_def *bd = &sc->bodies[b];
    const shard_material *m = &sc->materials[bd->material];
    double cp = sqrt((sp->lambda + 2.0 * sp->mu + m->volume_stiffness) / m->density);
    double w = 2.0 * cp / bd->spacing, z = 0.5 * m->damping * w;
    return 2.0 / w * (sqrt(1.0 + z * z) - z);
}

static double shard_matter_solid_bond_radius(const shard_scene *sc, int b)
{
    return shard_solid_def_of(&sc->bodies[b])->support * sc->bodies[b].spacing;
}

/* The wall rule (solid.h) of every slot, owned and ghost, from the body's constraints, in the bodies with
 * `clamp: face`. */
static void shard_matter_solid_walls(const shard_matter_ctx *c, const shard_solid_arrays *a)
{
    const shard_particles *p = c->ph->p;
    const shard_block *blk = c->block;
    for (size_t k = 0; k < blk->n_owned + blk->n_ghost; k++) {
        size_t i = k < blk->n_owned ? blk->first + k : blk->ghost_first + (k - blk->n_owned);
        const shard_body_def *bd = &c->ph->scene->bodies[p->body[i]];
        double *w = a->wall + 4 * k;
        w[0] = w[1] = w[2] = 0.0; /* no offset unless held (a slot may have held another particle before) */
        int face = shard_solid_def_of(bd)->clamp == SHARD_CLAMP_FACE;
        w[3] = face && shard_sample_wall(bd, p->X + 3 * i, w) ? SHARD_SOLID_WALL_HELD : SHARD_SOLID_WALL_NONE;
    }
    shard_solid_walls(p, c->ph->bonds, a);
}

static void shard_matter_solid_prepare(const shard_matter_ctx *c)
{
    shard_solid_arrays a = shard_solid_view(c->block);
    shard_matter_solid_walls(c, &a);
    shard_solid_reference_moments(c->ph->p, c->ph->ref_bonds, c->bodies, &a);
    shard_solid_moments(c->ph->p, c->ph->bonds, c->bodies, &a, c->ph->scene->run.svd_threshold);
}

static void shard_matter_solid_pass1(const shard_matter_ctx *c, const int32_t *list, size_t n)
{
    shard_solid_arrays a = shard_solid_view(c->block);
    shard_solid_stress_list(c->ph->p, c->ph->bonds, c->bodies, &a, c->ph->elastic ? 0.0 : c->ph->dt, list, n);
}

static size_t shard_matter_solid_add(const shard_matter_ctx *c, double *f, const int32_t *list, size_t n, int ghosts)
{
    shard_solid_arrays a = shard_solid_view(c->block);
    shard_solid_forces_list(c->ph->p, c->ph->bonds, c->bodies, &a, f, list, n, ghosts);
    return 0;
}

static void shard_matter_solid_add_energy(void *acc, double value) { shard_xsum_add(acc, value); }

static void shard_matter_solid_energy(const shard_matter_ctx *c, shard_xsum *acc)
{
    shard_solid_arrays a = shard_solid_view(c->block);
    shard_solid_energy(c->ph->p, c->ph->bonds, c->bodies, &a, shard_matter_solid_add_energy, acc);
}

/* The solid's output fields (matter.h: after the core's, in this order). */
enum { SOLID_OUT_STRESS, SOLID_OUT_VON_MISES, SOLID_OUT_PLASTIC_STRAIN, SOLID_OUT_DAMAGE, SOLID_OUT_INVERTED };
static const shard_output_field_info shard_matter_solid_out[] = {
    [SOLID_OUT_STRESS] = {"stress", SHARD_TYPE_F64, 9, "Pa", "solid", "Cauchy stress, full symmetric 3x3, row by row"},
    [SOLID_OUT_VON_MISES] = {"von_mises", SHARD_TYPE_F64, 1, "Pa", "solid", "von Mises equivalent stress"},
    [SOLID_OUT_PLASTIC_STRAIN] = {"plastic_strain", SHARD_TYPE_F64, 1, "1", "solid",
                                  "Frobenius norm of the plastic Green strain"},
    [SOLID_OUT_DAMAGE] = {"damage", SHARD_TYPE_F64, 1, "1", "solid",
                          "broken fraction of the particle's reference bonds"},
    [SOLID_OUT_INVERTED] = {"inverted", SHARD_TYPE_I32, 1, "-", "solid",
                            "1 where det J <= 0 (turned inside out), else 0"},
};

static void shard_matter_solid_output(const shard_matter_ctx *c, unsigned want, void *const *cols)
{
    shard_solid_arrays a = shard_solid_view(c->block);
    const shard_particles *p = c->ph->p;
    if (want & ~(1u << SOLID_OUT_DAMAGE))
        shard_solid_output(p, c->ph->bonds, c->bodies, &a, cols[SOLID_OUT_STRESS], cols[SOLID_OUT_VON_MISES],
                           cols[SOLID_OUT_PLASTIC_STRAIN], cols[SOLID_OUT_INVERTED]);
    double *damage = cols[SOLID_OUT_DAMAGE];
    if (damage) {
        const shard_csr *bonds = c->ph->ref_bonds;
        for (size_t i = a.first; i < a.first + a.n_owned; i++) {
            int64_t b0 = bonds->start[i], b1 = bonds->start[i + 1], broken = 0;
            for (int64_t b = b0; b < b1; b++)
                broken += c->ph->broken[b];
            damage[i] = b1 > b0 ? (double)broken / (double)(b1 - b0) : 0.0;
        }
    }
}

static size_t shard_matter_solid_inverted(const shard_matter_ctx *c, size_t *first)
{
    shard_solid_arrays a = shard_solid_view(c->block);
    return shard_solid_inverted(c->ph->p, c->ph->bonds, c->bodies, &a, first);
}

extern const shard_matter shard_matter_solid;

/* Whether body b is a solid: its kind names this module's row of the matter table. */
static int shard_matter_solid_mine(const shard_scene *sc, int b)
{
    return shard_matter_of(sc, b) == &shard_matter_solid;
}

static int shard_matter_solid_breakable(const shard_scene *sc, int b)
{
    return sc->materials[sc->bodies[b].material].fracture.criterion != SHARD_FRACTURE_NONE;
}

/* The Rankine rule reads the partners' stresses: forwarded when some solid body uses it. */
static int shard_matter_solid_break_row(const shard_scene *sc)
{
    for (int b = 0; b < sc->n_bodies; b++)
        if (shard_matter_solid_mine(sc, b) &&
            sc->materials[sc->bodies[b].material].fracture.criterion == SHARD_FRACTURE_RANKINE)
            return SHARD_SOLID_SIGMA;
    return -1;
}

static size_t shard_matter_solid_break(const shard_matter_ctx *c, uint8_t *broken, int32_t *changed)
{
    shard_solid_arrays a = shard_solid_view(c->block);
    return shard_solid_break(c->ph->p, c->ph->ref_bonds, broken, c->bodies, &a, changed);
}

static void shard_matter_solid_losing(const shard_matter_ctx *c, const int32_t *list, size_t n)
{
    shard_solid_arrays a = shard_solid_view(c->block);
    shard_solid_energy_before(c->ph->p, c->ph->bonds, c->bodies, &a, list, n);
}

static size_t shard_matter_solid_rebond(const shard_matter_ctx *c, const int32_t *list, size_t n, int32_t *debris,
                                        int *row_changed)
{
    shard_solid_arrays a = shard_solid_view(c->block);
    return shard_solid_moments_list(c->ph->p, c->ph->bonds, c->bodies, &a, c->ph->scene->run.svd_threshold, list, n,
                                    debris, row_changed);
}

/* Which particles are bond-based (fracture.h) is read at the bond ghosts: the mode row, when a body breaks. */
static int shard_matter_solid_sync_row(const shard_scene *sc)
{
    for (int b = 0; b < sc->n_bodies; b++)
        if (shard_matter_solid_mine(sc, b) && shard_matter_solid_breakable(sc, b))
            return SHARD_SOLID_SCALE;
    return -1;
}

static void shard_matter_solid_synced(const shard_matter_ctx *c)
{
    shard_solid_arrays a = shard_solid_view(c->block);
    shard_solid_mode_sync(c->ph->p, c->ph->bonds, &a);
}

static void shard_matter_solid_describe(const shard_scene *sc, int b, char *buf, size_t len)
{
    const shard_body_def *bd = &sc->bodies[b];
    double support = shard_solid_def_of(bd)->support;
    int used = snprintf(buf, len, "support %g (h = %g m)", support, support * bd->spacing);
    shard_fracture_params fp;
    const shard_material *m = &sc->materials[bd->material];
    shard_fracture_params_init(&fp, &m->fracture, m->E, m->nu, bd->spacing, support * bd->spacing);
    if (fp.criterion != SHARD_FRACTURE_NONE && used > 0 && (size_t)used < len)
        snprintf(buf + used, len - (size_t)used, ", breaks at %s %g%s%s",
                 fp.criterion == SHARD_FRACTURE_RANKINE ? "a bond-normal stress of" : "a stretch of", fp.threshold,
                 fp.criterion == SHARD_FRACTURE_RANKINE ? " Pa" : "", fp.weibull_m > 0.0 ? " (Weibull scatter)" : "");
}

/* The keys of a solid body (shard_solid_def). */
static const shard_scene_field shard_matter_solid_key_rows[] = {
    {.key = "support",
     .kind = SHARD_KEY_NUMBER,
     .offset = offsetof(shard_solid_def, support),
     .r = SHARD_KEY_IN('(', 1, 4, ']'),
     .def = {2.2}},
    {.key = "clamp",
     .kind = SHARD_KEY_CHOICE,
     .offset = offsetof(shard_solid_def, clamp),
     SHARD_KEY_CHOICES([SHARD_CLAMP_PARTICLES] = "particles", [SHARD_CLAMP_FACE] = "face")},
};
static const shard_scene_section shard_matter_solid_body_keys = SHARD_KEY_SECTION(shard_matter_solid_key_rows, 0, NULL);
/* The material keys only the solid reads: its constitutive model's. */
static const char *const shard_matter_solid_material_keys[] = {"volume_stiffness", "volume_barrier", "stabilization",
                                                               "plasticity", "contact.surface", NULL};
static const shard_matter_keys shard_matter_solid_keys = {.body = &shard_matter_solid_body_keys,
                                                          .body_bytes = sizeof(shard_solid_def),
                                                          .body_shared = &shard_scene_lattice_keys,
                                                          .material_keys = shard_matter_solid_material_keys};

static const shard_force_term shard_matter_solid_force = {
    .name = "solid",
    .phase = "Solid",
    .order = SHARD_FORCE_ORDER_SOLID,
    .pass1 = shard_matter_solid_pass1,
    .exchange_row = SHARD_SOLID_B,
    .add = shard_matter_solid_add,
    .energy = shard_matter_solid_energy,
};
static const shard_force_term *const shard_matter_solid_terms[] = {&shard_matter_solid_force};

static const shard_matter_fracture shard_matter_solid_fracture = {
    .breakable = shard_matter_solid_breakable,
    .break_row = shard_matter_solid_break_row,
    .break_bonds = shard_matter_solid_break,
    .losing = shard_matter_solid_losing,
    .rebond = shard_matter_solid_rebond,
    .sync_row = shard_matter_solid_sync_row,
    .synced = shard_matter_solid_synced,
};

const shard_matter shard_matter_solid = {
    .kind = "solid",
    .about = "meshless elastic/plastic solid (Mueller et al. 2004)",
    .keys = &shard_matter_solid_keys,
    .rows = shard_matter_solid_rows,
    .n_rows = SHARD_SOLID_N_ROWS,
    .body_bytes = sizeof(shard_solid_params),
    .body_init = shard_matter_solid_init,
    .dt_limit = shard_matter_solid_dt,
    .dt_name = "wave speed",
    .bond_radius = shard_matter_solid_bond_radius,
    .prepare = shard_matter_solid_prepare,
    .terms = shard_matter_solid_terms,
    .n_terms = 1,
    .out_fields = shard_matter_solid_out,
    .n_out_fields = sizeof shard_matter_solid_out / sizeof shard_matter_solid_out[0],
    .output = shard_matter_solid_output,
    .inverted = shard_matter_solid_inverted,
    .describe = shard_matter_solid_describe,
    .flags = SHARD_MATTER_SMOOTH,
    .fracture = &shard_matter_solid_fracture,
};
