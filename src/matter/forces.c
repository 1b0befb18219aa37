/* Forces: the common force table (see forces.h) -- penalty contact between particles of different bodies and
 * with obstacles, as force-term rows over the kernels of contact.c.  Both rows share the per-body contact
 * constants (contact.h), keep the tangential spring of every contact as their memory (3 doubles) and are
 * charged to the "Contact" phase. */
#include "shard/forces.h"

#include "contact.h"
#include "shard/xsum.h"

#include <math.h>

static int shard_forces_contact_init(const shard_scene *sc, int body, void *state, shard_error *err)
{
    (void)err;
    shard_contact_params_init(sc, body, state);
    return 0;
}

static double shard_forces_contact_radius(const void *state) { return ((const shard_contact_params *)state)->radius; }

/* The candidates' reach: a smooth body's pairs are weighed out to SHARD_CONTACT_SMOOTH_REACH contact radii. */
static double shard_forces_candidate_radius(const void *state)
{
    const shard_contact_params *cp = state;
    return cp->smooth ? SHARD_CONTACT_SMOOTH_REACH * cp->radius : cp->radius;
}

static int shard_forces_contact_uses_normals(const void *state) /* smooth surfaces read normals */
{
    return ((const shard_contact_params *)state)->smooth;
}

static void shard_forces_contact_normals(const shard_matter_ctx *c)
{
    shard_contact_normals(c->ph->p, c->ph->bonds, c->bodies, c->ph->p->nrm);
}

/* The stable step of a damped oscillator of frequency w and damping fraction z under velocity Verlet:
 * dt <= 2/w (sqrt(1 + z^2) - z). */
static double shard_forces_oscillator_dt(double w, double z) { return 2.0 / w * (sqrt(1.0 + z * z) - z); }

static double shard_forces_particle_mass(const shard_scene *sc, int body)
{
    const shard_body_def *bd = &sc->bodies[body];
    return sc->materials[bd->material].density * bd->spacing * bd->spacing * bd->spacing;
}

/* A pair of particles is an oscillator with w^2 = k / m_eff <= max_i k_i / m_i. */
static double shard_forces_contact_dt(const shard_scene *sc, int body, const void *state)
{
    const shard_contact_params *cp = state;
    return shard_forces_oscillator_dt(sqrt(cp->k / shard_forces_particle_mass(sc, body)), cp->zeta);
}

static double shard_forces_obstacle_dt(const shard_scene *sc, int body, const void *state)
{
    const shard_contact_params *cp = state;
    double mass = shard_forces_particle_mass(sc, body), dt = INFINITY;
    for (int o = 0; o < sc->n_obstacles; o++) {
        const shard_obstacle_def *ob = &sc->obstacles[o];
        double k = ob->stiffness > 0.0 ? ob->stiffness : cp->k;
        dt = fmin(dt, shard_forces_oscillator_dt(sqrt(k / mass), ob->damping));
    }
    return dt;
}

static size_t shard_forces_contact_add(const shard_matter_ctx *c, double *f, const int32_t *list, size_t n, int ghosts)
{
    (void)list, (void)n, (void)ghosts;
    return shard_contact_pairs(c->ph->p, c->ph->p->nrm, c->ph->cand, c->ph->ref_bonds, c->ph->broken, c->bodies,
                               c->ph->own_contact, c->ph->dt_motion, c->memory_in, c->memory_out, f);
}

static size_t shard_forces_obstacle_add(const shard_matter_ctx *c, double *f, const int32_t *list, size_t n, int ghosts)
{
    (void)list, (void)n, (void)ghosts;
    const shard_scene *sc = c->ph->scene;
    return shard_contact_obstacles(c->ph->p, c->bodies, c->ph->own_contact, sc->n_obstacles, sc->obstacles, c->ph->t,
                                   c->ph->dt_motion, c->memory_in, c->memory_out, f);
}

static void shard_forces_add_energy(void *acc, double value) { shard_xsum_add(acc, value); }

/* The springs' energy with the latest memory (memory_in: the driver points it there for the energy). */
static void shard_forces_contact_energy(const shard_matter_ctx *c, shard_xsum *acc)
{
    shard_contact_pairs_energy(c->ph->p, c->ph->p->nrm, c->ph->cand, c->ph->ref_bonds, c->ph->broken, c->bodies,
                               c->ph->own_contact, c->memory_in, shard_forces_add_energy, acc);
}

static void shard_forces_obstacle_energy(const shard_matter_ctx *c, shard_xsum *acc)
{
    const shard_scene *sc = c->ph->scene;
    shard_contact_obstacles_energy(c->ph->p, c->bodies, c->ph->own_contact, sc->n_obstacles, sc->obstacles, c->ph->t,
                                   c->memory_in, shard_forces_add_energy, acc);
}

static const shard_force_term shard_forces_contact = {
    .name = "contact",
    .phase = "Contact",
    .order = SHARD_FORCE_ORDER_CONTACT,
    .body_bytes = sizeof(shard_contact_params),
    .body_init = shard_forces_contact_init,
    .dt_limit = shard_forces_contact_dt,
    .dt_name = "contact",
    .contact_radius = shard_forces_contact_radius,
    .candidate_radius = shard_forces_candidate_radius,
    .ghost_row = "surface_normal",
    .ghost_row_used = shard_forces_contact_uses_normals,
    .fill_ghost_row = shard_forces_contact_normals,
    .memory_width = 3,
    .memory_name = "contact_memory",
    .add = shard_forces_contact_add,
    .energy = shard_forces_contact_energy,
};

static const shard_force_term shard_forces_obstacles = {
    .name = "obstacles",
    .phase = "Contact",
    .order = SHARD_FORCE_ORDER_OBSTACLE,
    .body_bytes = sizeof(shard_contact_params),
    .body_init = shard_forces_contact_init,
    .dt_limit = shard_forces_obstacle_dt,
    .dt_name = "contact",
    .memory_width = 3,
    .memory_name = "obstacle_memory",
    .add = shard_forces_obstacle_add,
    .energy = shard_forces_obstacle_energy,
};

/* Mass-proportional (Rayleigh alpha) damping: f_i -= alpha m_i v_i with the material's `mass_damping` alpha
 * (1/s).  It damps every motion, rigid ones too (a free body's velocity decays as exp(-alpha t), a vibration's
 * amplitude as exp(-alpha t / 2)), mostly the slow modes, which stiffness-proportional damping leaves alone;
 * unlike that it costs the time step nothing beyond alpha dt <= 1. */
static int shard_forces_mass_damping_init(const shard_scene *sc, int body, void *state, shard_error *err)
{
    (void)err;
    *(double *)state = sc->materials[sc->bodies[body].material].mass_damping;
    return 0;
}

static double shard_forces_mass_damping_dt(const shard_scene *sc, int body, const void *state)
{
    (void)sc, (void)body;
    double alpha = *(const double *)state;
    return alpha > 0.0 ? 1.0 / alpha : INFINITY;
}

static size_t shard_forces_mass_damping_add(const shard_matter_ctx *c, double *f, const int32_t *list, size_t n,
                                            int ghosts)
{
    (void)list, (void)n, (void)ghosts;
    const shard_particles *p = c->ph->p;
    const double *alpha = c->bodies;
    for (size_t i = 0; i < p->n_owned; i++) {
        double a = alpha[p->body[i]];
        if (a > 0.0)
            for (int k = 0; k < 3; k++)
                f[3 * i + k] -= a * p->mass[i] * p->v[3 * i + k];
    }
    return 0;
}

static const shard_force_term shard_forces_mass_damping = {
    .name = "mass damping",
    .phase = "Integrate",
    .order = SHARD_FORCE_ORDER_MASS_DAMPING,
    .body_bytes = sizeof(double),
    .body_init = shard_forces_mass_damping_init,
    .dt_limit = shard_forces_mass_damping_dt,
    .dt_name = "mass damping",
    .add = shard_forces_mass_damping_add,
};

extern const shard_force_term shard_forces_traction; /* traction.c */
static const shard_force_term *const shard_forces_table[] = {&shard_forces_contact, &shard_forces_obstacles,
                                                             &shard_forces_mass_damping, &shard_forces_traction};

const shard_force_term *const *shard_force_table(int *n)
{
    *n = (int)(sizeof shard_forces_table / sizeof shard_forces_table[0]);
    return shard_forces_table;
}
