/* Checkpoint: the writer's handle and the parallel atomic write of the run's complete state (format in
 * checkpoint.h).
 *
 * This file owns the write protocol: the sections it writes (particles from the registry, the modules'
 * sections, pair lists and state records, bonds), the temporary name, the collective write, flush and close,
 * fsync, rename and pruning, and the point after each dataset where a test program's fault hook runs
 * (faults.h).  The checksum and the checked reads of a file are in checkpoint_format.c, the parallel reader in
 * checkpoint_range.c.  It does not decide when to write (the driver does) nor how the loaded state is
 * distributed (partition.h).
 *
 * Why a crash never damages the latest complete checkpoint: the data goes to NAME.tmp; only after HDF5 has
 * closed it on every rank, and rank 0 has fsynced it, is it renamed to NAME (rename within a folder is atomic on
 * POSIX file systems), and only then are older files deleted.  A reader rejects a file without the `complete`
 * attribute, written last, so even a partial NAME.tmp given by hand is refused.
 */
#include "checkpoint_impl.h"

#include "shard/faults.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

struct shard_checkpoint {
    char dir[1024];
    long keep;
    uint64_t run_id; /* of the run that writes: the files it prunes are those that record it */
    int dir_made;
    long files;
    uint64_t bytes;
    double seconds;
    char last[1100];
};

uint64_t shard_checkpoint_new_run_id(shard_comm *c)
{
    uint64_t id = 0;
    if (shard_comm_rank(c) == 0) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        if (getrandom(&id, sizeof id, 0) != (ssize_t)sizeof id) /* no entropy source: the clock and the process */
            id = shard_hash_add(shard_hash_add((uint64_t)t.tv_sec, (uint64_t)t.tv_nsec), (uint64_t)getpid());
    }
    shard_comm_bcast(c, &id, sizeof id, 0);
    return id;
}

shard_checkpoint *shard_checkpoint_create(const char *dir, long keep, uint64_t run_id)
{
    shard_checkpoint *ck = shard_calloc(1, sizeof *ck);
    snprintf(ck->dir, sizeof ck->dir, "%s", dir);
    ck->keep = keep > 0 ? keep : 1;
    ck->run_id = run_id;
    return ck;
}

void shard_checkpoint_destroy(shard_checkpoint **ck)
{
    if (!ck || !*ck)
        return;
    free(*ck);
    *ck = NULL;
}

void shard_checkpoint_stats(const shard_checkpoint *ck, long *files, uint64_t *bytes, double *seconds)
{
    *files = ck ? ck->files : 0;
    *bytes = ck ? ck->bytes : 0;
    *seconds = ck ? ck->seconds : 0.0;
}

const char *shard_checkpoint_last_path(const shard_checkpoint *ck) { return ck ? ck->last : ""; }

/* ------------------------------------------------------------------------------------------------------------
 * Writing
 * ------------------------------------------------------------------------------------------------------------ */

#ifdef SHARD_HAVE_HDF5

/* Does the checkpoint at path record run `id`?  (A file that cannot be read, or without a run id, does not.) */
static int shard_ckpt_owned(const char *path, uint64_t id)
{
    hid_t f = H5Fis_hdf5(path) > 0 ? H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT) : -1;
    uint64_t got = ~id;
    hid_t a = f >= 0 && H5Aexists(f, "run_id") > 0 ? H5Aopen(f, "run_id", H5P_DEFAULT) : -1;
    if (a >= 0 && H5Aread(a, H5T_NATIVE_UINT64, &got) < 0)
        got = ~id;
    if (a >= 0)
        H5Aclose(a);
    if (f >= 0)
        H5Fclose(f);
    return got == id;
}

/* Rank 0: deletes this run's complete checkpoints of steps <= step beyond its newest `keep`; files of other
 * runs in the folder are neither deleted nor counted. */
static void shard_ckpt_prune(const shard_checkpoint *ck, long step)
{
    size_t n = 0, mine = 0;
    int64_t *steps = shard_io_step_files(ck->dir, "checkpoint", step, &n);
    char path[1100];
    for (size_t k = 0; k < n; k++) { /* ascending: the oldest first */
        snprintf(path, sizeof path, "%s/checkpoint_%06ld.h5", ck->dir, (long)steps[k]);
        if (shard_ckpt_owned(path, ck->run_id))
            steps[mine++] = steps[k];
    }
    for (size_t k = 0; k + (size_t)ck->keep < mine; k++) {
        snprintf(path, sizeof path, "%s/checkpoint_%06ld.h5", ck->dir, (long)steps[k]);
        unlink(path);
    }
    free(steps);
}

/* After dataset `dataset` of the checkpoint of step `step`: a test program's fault hook (faults.h), if any. */
static void shard_ckpt_fault(long step, long dataset)
{
    const shard_io_faults *f = shard_io_faults_installed();
    if (f->checkpoint_dataset)
        f->checkpoint_dataset(step, dataset);
}

/* What a rank writes, gathered before the file is created: its rows' counts and offsets in the file, its bond
 * lists by partner global id, the pair lists' counts, the checksums and the raw size of the file. */
typedef struct shard_ckpt_plan {
    size_t n_own, nb;           /* owned particles, their bond entries */
    int64_t n_global, first;    /* particles in the file, this rank's first row */
    int64_t nb_global, bfirst;  /* bond entries in the file, this rank's first */
    int32_t *count;             /* per owned particle: its bonds */
    int64_t *partner;           /* per bond entry: the partner's global id */
    uint8_t *broken;            /* per bond entry */
    const shard_block **sec_of; /* per owned particle: the block whose owned range holds it (NULL: none) */
    int n_lists, n_sec;         /* pair lists and sections written (at most the format's limits) */
    int32_t *lcount[SHARD_CHECKPOINT_MAX_LISTS];
    int64_t l_n[SHARD_CHECKPOINT_MAX_LISTS], l_first[SHARD_CHECKPOINT_MAX_LISTS];
    int64_t sec_n[SHARD_CHECKPOINT_MAX_SECTIONS], sec_first[SHARD_CHECKPOINT_MAX_SECTIONS];
    void *blob_data[SHARD_CHECKPOINT_MAX_SECTIONS];
    size_t blob_bytes[SHARD_CHECKPOINT_MAX_SECTIONS];
    uint64_t checksum, blob_sum, raw;
} shard_ckpt_plan;

/* Collective: the rows of the plan (counts and offsets over the ranks, bond partners, sections of the owned
 * particles, pair lists' counts) and the two checksums. */
static void shard_ckpt_plan_rows(shard_ckpt_plan *pl, shard_comm *c, const shard_checkpoint_state *st)
{
    const shard_particles *p = st->p;
    size_t n_own = pl->n_own = p->n_owned;
    pl->n_global = shard_comm_sum_i64(c, (int64_t)n_own), pl->first = shard_comm_exscan_i64(c, (int64_t)n_own);
    size_t nb = pl->nb = (size_t)st->bonds->start[n_own];
    pl->nb_global = shard_comm_sum_i64(c, (int64_t)nb), pl->bfirst = shard_comm_exscan_i64(c, (int64_t)nb);
    pl->count = shard_malloc((n_own + 1) * sizeof *pl->count);
    pl->partner = shard_malloc((nb + 1) * sizeof *pl->partner);
    pl->broken = shard_calloc(nb + 1, 1);
    /* The section of each owned particle: the block whose owned range holds it (NULL: none). */
    pl->sec_of = shard_calloc(n_own + 1, sizeof *pl->sec_of);
    for (int k = 0; k < st->n_sections; k++) {
        const shard_block *b = st->sections[k].block;
        if (shard_ckpt_stateful(b))
            for (size_t i = b->first; i < b->first + b->n_owned; i++)
                pl->sec_of[i] = b;
    }
    /* Pair lists: their rows are those of the owned particles, in order; counts per particle for the file. */
    pl->n_lists = st->n_lists < SHARD_CHECKPOINT_MAX_LISTS ? st->n_lists : SHARD_CHECKPOINT_MAX_LISTS;
    for (int q = 0; q < pl->n_lists; q++) {
        const shard_pairlist *l = st->lists[q].list;
        pl->l_n[q] = shard_comm_sum_i64(c, (int64_t)shard_pairlist_size(l));
        pl->l_first[q] = shard_comm_exscan_i64(c, (int64_t)shard_pairlist_size(l));
        pl->lcount[q] = shard_malloc((n_own + 1) * sizeof *pl->lcount[q]);
        for (size_t i = 0; i < n_own; i++)
            pl->lcount[q][i] = l->n ? (int32_t)(l->start[i + 1] - l->start[i]) : 0;
    }
    uint64_t sum = 0;
    for (size_t i = 0; i < n_own; i++) {
        int64_t b0 = st->bonds->start[i], b1 = st->bonds->start[i + 1];
        pl->count[i] = (int32_t)(b1 - b0);
        uint64_t h = shard_ckpt_hash_fields(p, i, pl->sec_of[i], pl->sec_of[i] ? i - pl->sec_of[i]->first : 0);
        for (int64_t b = b0; b < b1; b++) {
            pl->partner[b] = p->gid[st->bonds->idx[b]];
            pl->broken[b] = st->broken ? st->broken[b] : 0;
            h = shard_ckpt_mix(shard_ckpt_mix(h, (uint64_t)pl->partner[b]), pl->broken[b]);
        }
        for (int q = 0; q < pl->n_lists; q++)
            h = shard_ckpt_hash_list_row(h, st->lists[q].list, i);
        sum += h;
    }
    pl->checksum = shard_comm_sum_u64(c, sum);
    pl->n_sec = st->n_sections < SHARD_CHECKPOINT_MAX_SECTIONS ? st->n_sections : SHARD_CHECKPOINT_MAX_SECTIONS;
    for (int k = 0; k < pl->n_sec; k++)
        pl->blob_data[k] = (void *)st->sections[k].blob, pl->blob_bytes[k] = st->sections[k].blob_bytes;
    pl->blob_sum = shard_ckpt_hash_blobs(pl->n_sec, st->sections, pl->blob_data, pl->blob_bytes);
}

/* Collective: the sections' rows and offsets (the same sums on every rank) and the raw size of the file. */
static void shard_ckpt_plan_bytes(shard_ckpt_plan *pl, shard_comm *c, const shard_checkpoint_state *st)
{
    uint64_t raw = (uint64_t)st->scene_len + (uint64_t)pl->n_global * sizeof(int32_t) + (uint64_t)pl->nb_global * 9u;
    for (int f = 0; f < shard_particle_n_fields; f++)
        if (shard_particle_fields[f].flags & SHARD_FIELD_STATE)
            raw +=
                (uint64_t)pl->n_global * (uint64_t)shard_particle_fields[f].ncomp * shard_particle_fields[f].elem_size;
    /* Sections: rows and offsets of each (collective sums, the same on every rank). */
    memset(pl->sec_n, 0, sizeof pl->sec_n), memset(pl->sec_first, 0, sizeof pl->sec_first);
    for (int k = 0; k < st->n_sections && k < SHARD_CHECKPOINT_MAX_SECTIONS; k++) {
        const shard_block *b = st->sections[k].block;
        if (!shard_ckpt_stateful(b))
            continue;
        pl->sec_n[k] = shard_comm_sum_i64(c, (int64_t)b->n_owned);
        pl->sec_first[k] = shard_comm_exscan_i64(c, (int64_t)b->n_owned);
        raw += (uint64_t)pl->sec_n[k] * sizeof(int64_t);
        for (int r = 0; r < b->n_rows; r++)
            if (b->rows[r].flags & SHARD_FIELD_STATE)
                raw += (uint64_t)pl->sec_n[k] * shard_field_row_bytes(&b->rows[r]);
    }
    for (int q = 0; q < pl->n_lists; q++)
        raw += (uint64_t)pl->n_global * sizeof(int32_t) +
               (uint64_t)pl->l_n[q] * (sizeof(int64_t) + (uint64_t)st->lists[q].list->width * sizeof(double));
    for (int k = 0; k < pl->n_sec; k++)
        raw += pl->blob_data[k] ? (uint64_t)pl->blob_bytes[k] : 0;
    raw += (uint64_t)st->n_bodies * (3 * SHARD_CHECKPOINT_NAME + 3 * sizeof(int64_t));
    pl->raw = raw;
}

static void shard_ckpt_plan_free(shard_ckpt_plan *pl)
{
    free(pl->count), free(pl->partner), free(pl->broken), free(pl->sec_of);
    for (int q = 0; q < pl->n_lists; q++)
        free(pl->lcount[q]);
}

/* Collective: the root attributes and the scene text. */
static void shard_ckpt_write_header(shard_h5w *w, shard_comm *c, const shard_checkpoint *ck,
                                    const shard_checkpoint_state *st, const shard_ckpt_plan *pl)
{
    shard_h5w_attr_str(w, 0, "format", "shard-checkpoint");
    shard_h5w_attr_i64(w, 0, "format_version", SHARD_CHECKPOINT_FORMAT_VERSION);
    shard_h5w_attr_str(w, 0, "shard_version", SHARD_VERSION_STRING);
    shard_h5w_attr_i64(w, 0, "step", st->step);
    shard_h5w_attr_f64(w, 0, "time", (double)st->step * st->dt);
    shard_h5w_attr_f64(w, 0, "dt", st->dt);
    shard_h5w_attr_i64(w, 0, "n_particles", pl->n_global);
    shard_h5w_attr_i64(w, 0, "n_bonds", pl->nb_global);
    shard_h5w_attr_i64(w, 0, "n_ranks", shard_comm_size(c));
    shard_h5w_attr_i64(w, 0, "contacts", st->contacts);
    shard_h5w_attr_u64(w, 0, "state_hash", st->state_hash);
    shard_h5w_attr_u64(w, 0, "checksum", pl->checksum);
    shard_h5w_attr_u64(w, 0, "module_state_checksum", pl->blob_sum);
    shard_h5w_attr_u64(w, 0, "scene_checksum", shard_ckpt_hash_text(st->scene_text, st->scene_len));
    shard_h5w_attr_u64(w, 0, "run_id", ck->run_id);
    shard_h5w_attr_str(w, 0, "scene_path", st->scene_path ? st->scene_path : "");
    shard_h5w_text(w, 0, "scene", st->scene_text, st->scene_len);
}

/* Collective: the bodies' identities, written by rank 0 (the same on every rank). */
static void shard_ckpt_write_bodies(shard_h5w *w, int rank, const shard_checkpoint_state *st)
{
    int64_t nb = st->n_bodies;
    size_t mine = rank == 0 ? (size_t)nb : 0, width = SHARD_CHECKPOINT_NAME;
    char *text = shard_calloc((size_t)nb * width + 1, 1);
    int64_t *count = shard_malloc(((size_t)nb + 1) * sizeof *count),
            *first = shard_malloc(((size_t)nb + 1) * sizeof *first);
    double *mass = shard_malloc(((size_t)nb + 1) * sizeof *mass);
    for (int64_t b = 0; b < nb; b++)
        count[b] = st->bodies[b].count, first[b] = st->bodies[b].first, mass[b] = st->bodies[b].mass;
    static const char *const names[3] = {"name", "kind", "material"};
    hid_t g = shard_h5w_group(w, 0, "bodies");
    for (int k = 0; k < 3 && g >= 0; k++) {
        for (int64_t b = 0; b < nb; b++) {
            const shard_checkpoint_body *o = &st->bodies[b];
            memcpy(text + (size_t)b * width, k == 0 ? o->name : k == 1 ? o->kind : o->material, width);
        }
        shard_h5w_rows(w, g, names[k], SHARD_TYPE_U8, (int)width, nb, 0, mine, text);
    }
    if (g >= 0) {
        shard_h5w_rows(w, g, "count", SHARD_TYPE_I64, 1, nb, 0, mine, count);
        shard_h5w_rows(w, g, "first_id", SHARD_TYPE_I64, 1, nb, 0, mine, first);
        shard_h5w_rows(w, g, "mass", SHARD_TYPE_F64, 1, nb, 0, mine, mass);
        H5Gclose(g);
    }
    free(text), free(count), free(first), free(mass);
}

/* Collective: the particles' state rows and each matter module's section; *ndata counts the datasets for the
 * fault injection. */
static void shard_ckpt_write_particles(shard_h5w *w, const shard_checkpoint_state *st, const shard_ckpt_plan *pl,
                                       long *ndata)
{
    const shard_particles *p = st->p;
    /* Section: particles, one dataset per state row of the registry. */
    hid_t g = shard_h5w_group(w, 0, "particles");
    for (int f = 0; f < shard_particle_n_fields && g >= 0; f++) {
        const shard_field_desc *d = &shard_particle_fields[f];
        if (!(d->flags & SHARD_FIELD_STATE))
            continue;
        shard_h5w_rows(w, g, d->name, d->type, d->ncomp, pl->n_global, pl->first, pl->n_own,
                       shard_particles_array(p, d));
        shard_ckpt_fault(st->step, ++*ndata);
    }
    if (g >= 0)
        H5Gclose(g);
    /* Sections: each matter module's per-particle state, with the global ids it belongs to. */
    for (int k = 0; k < st->n_sections && k < SHARD_CHECKPOINT_MAX_SECTIONS && !w->failed; k++) {
        const shard_block *b = st->sections[k].block;
        if (!shard_ckpt_stateful(b))
            continue;
        int64_t ns = pl->sec_n[k], sfirst = pl->sec_first[k];
        g = shard_h5w_group(w, 0, st->sections[k].name);
        if (g < 0)
            break;
        shard_h5w_rows(w, g, "global_id", SHARD_TYPE_I64, 1, ns, sfirst, b->n_owned, p->gid + b->first);
        for (int r = 0; r < b->n_rows; r++) {
            const shard_field_desc *d = &b->rows[r];
            if (!(d->flags & SHARD_FIELD_STATE))
                continue;
            shard_h5w_rows(w, g, d->name, d->type, d->ncomp, ns, sfirst, b->n_owned, shard_field_array(b, d));
            shard_ckpt_fault(st->step, ++*ndata);
        }
        H5Gclose(g);
    }
}

/* Collective: the pair lists, the modules' own state records and the bonds. */
static void shard_ckpt_write_links(shard_h5w *w, int rank, const shard_checkpoint_state *st, const shard_ckpt_plan *pl,
                                   long *ndata)
{
    /* Sections: the pair lists (force terms' memories), as bonds: a count per particle, keys, values. */
    hid_t g;
    for (int q = 0; q < pl->n_lists && !w->failed; q++) {
        const shard_pairlist *l = st->lists[q].list;
        size_t ne = shard_pairlist_size(l);
        g = shard_h5w_group(w, 0, st->lists[q].name);
        if (g < 0)
            break;
        shard_h5w_rows(w, g, "count", SHARD_TYPE_I32, 1, pl->n_global, pl->first, pl->n_own, pl->lcount[q]);
        shard_h5w_rows(w, g, "key", SHARD_TYPE_I64, 1, pl->l_n[q], pl->l_first[q], ne, l->key);
        shard_h5w_rows(w, g, "value", SHARD_TYPE_F64, l->width, pl->l_n[q], pl->l_first[q], ne, l->val);
        H5Gclose(g);
    }
    /* Modules' own state records: the same on every rank, so rank 0 writes them. */
    g = w->failed ? -1 : shard_h5w_group(w, 0, "module_state");
    for (int k = 0; k < pl->n_sec && g >= 0; k++)
        if (st->sections[k].blob) {
            size_t nbytes = st->sections[k].blob_bytes;
            shard_h5w_rows(w, g, st->sections[k].name, SHARD_TYPE_U8, 1, (int64_t)nbytes, 0, rank == 0 ? nbytes : 0,
                           st->sections[k].blob);
        }
    if (g >= 0)
        H5Gclose(g);
    /* Section: bonds with their broken flags. */
    g = shard_h5w_group(w, 0, "bonds");
    if (g >= 0) {
        shard_h5w_rows(w, g, "count", SHARD_TYPE_I32, 1, pl->n_global, pl->first, pl->n_own, pl->count);
        shard_ckpt_fault(st->step, ++*ndata);
        shard_h5w_rows(w, g, "partner", SHARD_TYPE_I64, 1, pl->nb_global, pl->bfirst, pl->nb, pl->partner);
        shard_ckpt_fault(st->step, ++*ndata);
        shard_h5w_rows(w, g, "broken", SHARD_TYPE_U8, 1, pl->nb_global, pl->bfirst, pl->nb, pl->broken);
        shard_ckpt_fault(st->step, ++*ndata);
        H5Gclose(g);
    }
}

/* Rank 0, once every rank has closed the file: the temporary file fsynced and renamed to its name, then the
 * folder fsynced and the oldest checkpoints pruned.  After a failure (err set) nothing: shard_h5w_close has
 * removed the file it made, and only that one (not what another party put at the name). */
static void shard_ckpt_commit(const shard_checkpoint *ck, long step, const char *path, const char *tmp,
                              shard_error *err)
{
    if (err->code) {
        return;
    } else if (shard_io_fsync_path(tmp, 0) != 0) {
        shard_error_set(err, SHARD_EXIT_IO, "checkpoint '%s': fsync failed: %s", tmp, strerror(errno));
        unlink(tmp);
    } else if (rename(tmp, path) != 0) {
        shard_error_set(err, SHARD_EXIT_IO, "checkpoint '%s': cannot rename from '%s': %s", path, tmp, strerror(errno));
        unlink(tmp);
    } else {
        shard_io_fsync_path(ck->dir, 1);
        shard_ckpt_prune(ck, step);
    }
}

int shard_checkpoint_write(shard_checkpoint *ck, shard_comm *c, const shard_checkpoint_state *st, shard_error *err)
{
    double t0 = shard_wtime();
    memset(err, 0, sizeof *err);
    int rank = shard_comm_rank(c);
    if (shard_io_mkdirs_once(c, ck->dir, &ck->dir_made, err))
        return err->code;
    char path[1100], tmp[1110];
    snprintf(path, sizeof path, "%s/checkpoint_%06ld.h5", ck->dir, st->step);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);

    shard_ckpt_plan pl;
    shard_ckpt_plan_rows(&pl, c, st);
    shard_ckpt_plan_bytes(&pl, c, st);
    shard_h5w w;
    long ndata = 0;
    shard_h5w_create(&w, c, tmp, pl.raw);
    shard_ckpt_write_header(&w, c, ck, st, &pl);
    shard_ckpt_write_bodies(&w, rank, st);
    shard_ckpt_write_particles(&w, st, &pl, &ndata);
    shard_ckpt_write_links(&w, rank, st, &pl, &ndata);
    shard_h5w_attr_i64(&w, 0, "complete", 1);
    shard_h5w_close(&w);
    shard_ckpt_plan_free(&pl);

    /* A failed write has been agreed on by every rank, with the same message, and its file removed. */
    if (w.failed)
        shard_error_set(err, SHARD_EXIT_IO, "checkpoint '%s': %s", path, w.what);
    shard_comm_any_error(c, err);
    if (rank == 0)
        shard_ckpt_commit(ck, st->step, path, tmp, err);
    if (shard_comm_agree(c, err, 0))
        return err->code;
    ck->files++;
    ck->bytes += w.bytes;
    snprintf(ck->last, sizeof ck->last, "%s", path);
    ck->seconds += shard_wtime() - t0;
    return 0;
}

#else

int shard_checkpoint_write(shard_checkpoint *ck, shard_comm *c, const shard_checkpoint_state *st, shard_error *err)
{
    (void)ck, (void)c, (void)st;
    return shard_error_set(err, SHARD_EXIT_IO, "this shard was built without parallel HDF5: no checkpoints");
}

#endif

void shard_checkpoint_data_free(shard_checkpoint_data *d)
{
    if (!d)
        return;
    free(d->scene_text);
    free(d->bodies);
    shard_particles_free(&d->p);
    for (int k = 0; k < SHARD_CHECKPOINT_MAX_SECTIONS; k++)
        if (d->blocks[k].rows)
            shard_block_free(&d->blocks[k]);
    free(d->section_of);
    for (int q = 0; q < SHARD_CHECKPOINT_MAX_LISTS; q++)
        shard_pairlist_free(&d->lists[q]);
    shard_csr_free(&d->bonds);
    free(d->partner);
    free(d->broken);
    for (int k = 0; k < SHARD_CHECKPOINT_MAX_SECTIONS; k++)
        free(d->blob[k]);
    memset(d, 0, sizeof *d);
}
