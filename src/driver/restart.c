/* Restart checks (see setup.c): whether a checkpoint's particles fit the scene its run is built from.
 *
 * Every checkpoint records each body's identity (shard_sim_body_identities: name, kind, material, particle count,
 * first global id, total mass); a restart compares that record with what it builds from its scene and the
 * checkpoint's data: the bodies of the scene against the record, the record's counts against the data's (and the
 * scene's, for kinds that know them without sampling: a surface's vertices), each such particle's rest position
 * against the scene's, and the masses the scene gives the particles against the record's.  A particle that passes
 * is one the kind's own precomputation can take (the cloth's elements name their vertices by their place in the
 * body, and would not find them otherwise).  The stored scene text itself is covered by its
 * checksum (the reader checks it); these checks refuse what a text that passes it still gets wrong (a scene
 * edited together with its checksum, a cloth's mesh file changed since; a solid's or rigid body's mesh placed its
 * particles, which the checkpoint holds, and a change to it is not checked).  Each check ends in an agreement, so a
 * mismatch is one message, `CHECKPOINT: bodies[i] 'name': what does not fit`, the same on every rank: exit 3 before
 * anything is built from it.
 */
#include "sim_impl.h"

#include "shard/xsum.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Collective: per body, the exact sum of its particles' masses over the ranks (a new array of n_bodies values,
 * the same bits on any number of ranks). */
static double *shard_sim_body_masses(shard_sim *s)
{
    int nb = s->scene.n_bodies;
    shard_xsum *sum = shard_malloc(((size_t)nb + 1) * sizeof *sum);
    for (int b = 0; b < nb; b++)
        shard_xsum_init(&sum[b]);
    for (size_t i = 0; i < s->p.n_owned; i++)
        shard_xsum_add(&sum[s->p.body[i]], s->p.mass[i]);
    shard_comm_xsum(s->comm, sum, nb);
    double *m = shard_malloc(((size_t)nb + 1) * sizeof *m);
    for (int b = 0; b < nb; b++)
        m[b] = shard_xsum_round(&sum[b]);
    free(sum);
    return m;
}

void shard_sim_body_identities(shard_sim *s, shard_checkpoint_body *out)
{
    const shard_scene *sc = &s->scene;
    double *mass = shard_sim_body_masses(s);
    for (int b = 0; b < sc->n_bodies; b++) {
        shard_checkpoint_body *o = &out[b];
        memset(o, 0, sizeof *o);
        snprintf(o->name, sizeof o->name, "%s", sc->bodies[b].name);
        snprintf(o->kind, sizeof o->kind, "%s", sc->bodies[b].kind);
        snprintf(o->material, sizeof o->material, "%s", sc->materials[sc->bodies[b].material].name);
        o->count = s->body_count[b];
        o->first = s->body_first[b];
        o->mass = mass[b];
    }
    free(mass);
}

/* Every rank, the same verdict (the record and the scene are on every rank): as many bodies, each the scene's
 * body of its index by name, kind and material. */
static int shard_sim_check_names(const shard_sim *s, const shard_checkpoint_data *ck, const char *path,
                                 shard_error *err)
{
    const shard_scene *sc = &s->scene;
    if (ck->n_bodies != sc->n_bodies)
        return shard_error_set(err, SHARD_EXIT_INPUT, "%s: bodies: the checkpoint records %d bodies, the scene has %d",
                               path, ck->n_bodies, sc->n_bodies);
    for (int b = 0; b < sc->n_bodies; b++) {
        const shard_checkpoint_body *r = &ck->bodies[b];
        const shard_body_def *bd = &sc->bodies[b];
        const char *mat = sc->materials[bd->material].name;
        if (strcmp(r->name, bd->name) || strcmp(r->kind, bd->kind) || strcmp(r->material, mat))
            return shard_error_set(err, SHARD_EXIT_INPUT,
                                   "%s: bodies[%d] '%s': the scene's body (kind %s, material %s) is not the "
                                   "checkpoint's '%s' (kind %s, material %s)",
                                   path, b, bd->name, bd->kind, mat, r->name, r->kind, r->material);
    }
    return 0;
}

/* Every rank of a restart: its range of the loaded state must fit the scene it is restarted with (the first
 * failure in id order is the lowest failing rank's first, which shard_comm_any_error passes on). */
static int shard_sim_check_particles(const shard_sim *s, const shard_checkpoint_data *ck, const char *ck_path,
                                     shard_error *err)
{
    for (int64_t i = 0; i < ck->n_local; i++) {
        int b = ck->p.body[i];
        if (b < 0 || b >= s->scene.n_bodies)
            return shard_error_set(err, SHARD_EXIT_INPUT,
                                   "%s: particle %lld belongs to body %d, but the scene has "
                                   "%d bodies",
                                   ck_path, (long long)(ck->first + i), b, s->scene.n_bodies);
        /* A module with state rows must hold each of its particles in its section, and no other. */
        int m = s->body_module[b], stateful = 0;
        for (int r = 0; r < s->mod[m].block.n_rows; r++)
            stateful |= (s->mod[m].block.rows[r].flags & SHARD_FIELD_STATE) != 0;
        int want = stateful ? m : -1;
        if (ck->section_of[i] != want)
            return shard_error_set(err, SHARD_EXIT_INPUT,
                                   "%s: particle %lld (body '%s', kind %s) is %s section "
                                   "/%s",
                                   ck_path, (long long)(ck->first + i), s->scene.bodies[b].name,
                                   s->scene.bodies[b].kind, want >= 0 ? "missing from" : "in",
                                   want >= 0                ? s->mod[m].def->kind
                                   : ck->section_of[i] >= 0 ? s->mod[ck->section_of[i]].def->kind
                                                            : "?");
    }
    return 0;
}

/* Body b's per-body state in its module (what the module's hooks take). */
static const void *shard_sim_body_state(shard_sim *s, int b)
{
    const shard_sim_module *md = shard_sim_module_of(s, b);
    return (const char *)md->bodies + (size_t)b * md->def->body_bytes;
}

/* Every rank, the same verdict (from the counts summed over the ranks): each body's particles in the data, their
 * number and first global id (into first[b]), are those the checkpoint records, and as many as the scene makes
 * where its kind knows that without sampling (a surface's vertices). */
static int shard_sim_check_counts(shard_sim *s, const shard_checkpoint_data *ck, const char *path, int64_t *first,
                                  shard_error *err)
{
    const shard_scene *sc = &s->scene;
    int64_t at = 0;
    for (int b = 0; b < sc->n_bodies; b++) {
        const shard_checkpoint_body *r = &ck->bodies[b];
        const shard_matter *def = shard_sim_module_of(s, b)->def;
        first[b] = at;
        if (r->count != s->body_count[b] || r->first != at)
            return shard_error_set(err, SHARD_EXIT_INPUT,
                                   "%s: bodies[%d] '%s': the checkpoint records %lld particles from global id %lld, "
                                   "its data holds %lld from %lld",
                                   path, b, sc->bodies[b].name, (long long)r->count, (long long)r->first,
                                   (long long)s->body_count[b], (long long)at);
        int64_t want = def->particle_count ? def->particle_count(sc, b, shard_sim_body_state(s, b)) : r->count;
        if (want != r->count)
            return shard_error_set(err, SHARD_EXIT_INPUT,
                                   "%s: bodies[%d] '%s': the scene makes %lld particles of it, the checkpoint holds "
                                   "%lld",
                                   path, b, sc->bodies[b].name, (long long)want, (long long)r->count);
        at += s->body_count[b];
    }
    return 0;
}

/* Every rank: each particle of its range whose kind knows rest positions from the scene alone rests where the
 * scene puts particle k of its body (k: its global id minus the body's first[b]); the first failure in id order is
 * the lowest failing rank's first. */
static int shard_sim_check_rest(shard_sim *s, const shard_checkpoint_data *ck, const char *path, const int64_t *first,
                                shard_error *err)
{
    for (int64_t i = 0; i < ck->n_local; i++) {
        int b = ck->p.body[i];
        const shard_matter *def = shard_sim_module_of(s, b)->def;
        if (!def->rest_position)
            continue;
        int64_t k = ck->first + i - first[b];
        double X[3];
        const double *got = ck->p.X + 3 * i;
        def->rest_position(&s->scene, b, k, shard_sim_body_state(s, b), X);
        if (X[0] != got[0] || X[1] != got[1] || X[2] != got[2])
            return shard_error_set(err, SHARD_EXIT_INPUT,
                                   "%s: bodies[%d] '%s': particle %lld rests at (%.9g, %.9g, %.9g), not where the "
                                   "scene puts its particle %lld, (%.9g, %.9g, %.9g)",
                                   path, b, s->scene.bodies[b].name, (long long)(ck->first + i), got[0], got[1], got[2],
                                   (long long)k, X[0], X[1], X[2]);
    }
    return 0;
}

int shard_sim_restart_check(shard_sim *s, const shard_checkpoint_data *ck, const char *path, shard_error *err)
{
    shard_comm *c = s->comm;
    if (ck->dt != s->dt)
        shard_error_set(err, SHARD_EXIT_INPUT,
                        "%s: written with the time step %.17g s, but this run's is %.17g s (a different "
                        "--dt?); a restart continues with the same time step",
                        path, ck->dt, s->dt);
    if (!err->code)
        shard_sim_check_names(s, ck, path, err);
    if (!err->code)
        shard_sim_check_particles(s, ck, path, err);
    int rc = shard_comm_any_error(c, err);
    if (rc)
        return rc;
    for (int64_t i = 0; i < ck->n_local; i++)
        s->body_count[ck->p.body[i]]++;
    shard_comm_sum_i64s(c, s->body_count, (size_t)s->scene.n_bodies);
    int64_t *first = shard_malloc(((size_t)s->scene.n_bodies + 1) * sizeof *first);
    if (!shard_sim_check_counts(s, ck, path, first, err))
        shard_sim_check_rest(s, ck, path, first, err);
    free(first);
    if (shard_comm_any_error(c, err))
        return err->code;
    s->restart_mass = shard_malloc(((size_t)ck->n_bodies + 1) * sizeof *s->restart_mass);
    for (int b = 0; b < ck->n_bodies; b++)
        s->restart_mass[b] = ck->bodies[b].mass;
    return 0;
}

int shard_sim_restart_check_masses(shard_sim *s, const char *path, shard_error *err)
{
    double *mass = shard_sim_body_masses(s);
    for (int b = 0; b < s->scene.n_bodies && !err->code; b++)
        if (mass[b] != s->restart_mass[b])
            shard_error_set(err, SHARD_EXIT_INPUT,
                            "%s: bodies[%d] '%s': the scene gives its %lld particles a mass of %.17g kg, the "
                            "checkpoint records %.17g kg",
                            path, b, s->scene.bodies[b].name, (long long)s->body_count[b], mass[b], s->restart_mass[b]);
    free(mass);
    free(s->restart_mass);
    s->restart_mass = NULL;
    return err->code;
}
