/* Tractions: surface loads as a common force term (a row of the force table, forces.h).  A body's
 * `tractions` (scene.h) give regions and stresses; each particle of the body whose rest position lies in a
 * region carries the force stress x spacing^2 while the load is on (from `start`, until `end` when end > start).
 * For a region one lattice layer thick along a face, each particle of the face stands for spacing^2 of its area,
 * so the face carries the traction `stress` (Pa).  The region is tested on the rest position, so the load stays
 * with the material it was put on.  The term adds nothing to particles of bodies without tractions (their force
 * sums keep their bits). */
#include "shard/forces.h"

#include "shard/geometry.h"

#include <math.h>

static int shard_traction_init(const shard_scene *sc, int body, void *state, shard_error *err)
{
    (void)err;
    double s = sc->bodies[body].spacing;
    *(double *)state = s * s;
    return 0;
}

static size_t shard_traction_add(const shard_matter_ctx *c, double *f, const int32_t *list, size_t n, int ghosts)
{
    (void)list, (void)n, (void)ghosts;
    const shard_particles *p = c->ph->p;
    const shard_scene *sc = c->ph->scene;
    const double *area = c->bodies, t = c->ph->t;
    for (size_t i = 0; i < p->n_owned; i++) {
        const shard_body_def *bd = &sc->bodies[p->body[i]];
        for (int k = 0; k < bd->n_tractions; k++) {
            const shard_traction *tr = &bd->tractions[k];
            if (t < tr->start || (tr->end > tr->start && t >= tr->end) ||
                !shard_shape_contains(&tr->region, p->X + 3 * i))
                continue;
            double a = area[p->body[i]];
            for (int d = 0; d < 3; d++)
                f[3 * i + d] += tr->stress[d] * a;
        }
    }
    return 0;
}

const shard_force_term shard_forces_traction = {
    .name = "tractions",
    .phase = "Other",
    .order = SHARD_FORCE_ORDER_TRACTION,
    .body_bytes = sizeof(double),
    .body_init = shard_traction_init,
    .add = shard_traction_add,
};
