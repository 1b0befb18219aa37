/* The run loop: steps, output, checkpoints and in-situ scripts on their own intervals, progress lines, and the
 * columns that output and in-situ see (see run.h).  The step itself is in step.c, start-up in setup.c, the end
 * report in report.c.  The writers and their buffers are the record's output part (sim_output.h). */
#include "sim_impl.h"

#include "shard/hash.h"
#include "shard/interval.h"
#include "shard/rotation.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const shard_particles *shard_sim_particles(const shard_sim *s) { return &s->p; }
const shard_csr *shard_sim_bonds(const shard_sim *s) { return s->phys.bonds; }
const char *shard_sim_last_checkpoint(const shard_sim *s) { return shard_checkpoint_last_path(s->io.ckpt); }
const shard_scene *shard_sim_scene(const shard_sim *s) { return &s->scene; }
double shard_sim_time(const shard_sim *s) { return shard_sim_now(s); }
double shard_sim_dt(const shard_sim *s) { return s->dt; }
long shard_sim_step_index(const shard_sim *s) { return s->step; }
long shard_sim_total_steps(const shard_sim *s) { return s->total_steps; }
int64_t shard_sim_total_particles(const shard_sim *s) { return s->n_global; }
/* The particles' hash summed over the ranks, plus (from rank 0: it is the same everywhere) a hash of each
 * module's own state record, the one checkpoints hold. */
uint64_t shard_sim_hash(shard_sim *s)
{
    uint64_t h = shard_hash_state_local(&s->p);
    for (int m = 0; m < s->n_modules && shard_comm_rank(s->comm) == 0; m++) {
        const shard_matter_whole *wh = shard_sim_whole(s, m);
        if (wh && wh->state_save) {
            shard_matter_ctx mc = shard_sim_module_ctx(s, m);
            size_t bytes = wh->state_size(&mc);
            unsigned char *buf = shard_calloc(bytes + 8, 1);
            wh->state_save(&mc, buf);
            uint64_t hm = shard_hash_add(0x6d6f64756c65ull, (uint64_t)bytes);
            for (size_t i = 0; i < bytes; i += 8) {
                uint64_t w;
                memcpy(&w, buf + i, 8);
                hm = shard_hash_add(hm, w);
            }
            free(buf);
            h += hm;
        }
    }
    return shard_comm_sum_u64(s->comm, h);
}

/* A zeroed grow-only buffer for output field f of n rows. */
static void *shard_sim_col_buffer(shard_sim *s, int f, size_t n)
{
    const shard_output_field_info *fi = shard_output_info(&s->scene, f);
    size_t bytes = n * (size_t)fi->ncomp * shard_field_type_size(fi->type);
    shard_reserve(&s->io.col_buf[f], &s->io.col_cap[f], bytes + 1, 1);
    memset(s->io.col_buf[f], 0, bytes + 1);
    return s->io.col_buf[f];
}

int shard_sim_columns(shard_sim *s, unsigned want, shard_column *cols, int max)
{
    shard_particles *p = &s->p;
    size_t n = p->n_owned;
    want |= SHARD_OUT_ALWAYS;
    /* The modules' fields come after the core's (matter.h).  Gradients need the bond ghosts' current x and v
     * (they hold the half-step values between steps).  The next step overwrites ghosts before reading them, so
     * this exchange never changes the state. */
    int n_fields = shard_output_count(&s->scene);
    unsigned derived = shard_output_all(&s->scene) & ~((1u << SHARD_OUT_COUNT) - 1u);
    if (want & derived)
        shard_sim_forward_xv(s);
    const void *data[SHARD_OUTPUT_MAX] = {0};
    data[SHARD_OUT_POSITION] = p->x;
    data[SHARD_OUT_VELOCITY] = p->v;
    data[SHARD_OUT_BODY] = p->body;
    data[SHARD_OUT_GLOBAL_ID] = p->gid;
    if (want & 1u << SHARD_OUT_DISPLACEMENT) {
        double *disp = shard_sim_col_buffer(s, SHARD_OUT_DISPLACEMENT, n);
        for (size_t i = 0; i < 3 * n; i++)
            disp[i] = p->x[i] - p->X[i];
        data[SHARD_OUT_DISPLACEMENT] = disp;
    }
    if (want & 1u << SHARD_OUT_MATERIAL) {
        int32_t *material = shard_sim_col_buffer(s, SHARD_OUT_MATERIAL, n);
        for (size_t i = 0; i < n; i++)
            material[i] = s->scene.bodies[p->body[i]].material;
        data[SHARD_OUT_MATERIAL] = material;
    }
    if ((want & 1u << SHARD_OUT_FRAGMENT) && s->frac.on) {
        shard_sim_fragments(s);
        data[SHARD_OUT_FRAGMENT] = s->frag.label;
    }
    if (want & 1u << SHARD_OUT_RANK) {
        int32_t *rank = shard_sim_col_buffer(s, SHARD_OUT_RANK, n);
        int me = shard_comm_rank(s->comm);
        for (size_t i = 0; i < n; i++)
            rank[i] = me;
        data[SHARD_OUT_RANK] = rank;
    }
    /* Module fields: zeroed columns (particles of other kinds keep the zeros), filled by each module. */
    for (int m = 0; m < s->n_modules; m++) {
        const shard_matter *def = s->mod[m].def;
        int first = shard_output_first(&s->scene, m);
        unsigned mine_want = 0;
        void *mine[SHARD_OUTPUT_MAX] = {0};
        for (int k = 0; k < def->n_out_fields; k++)
            if (want >> (first + k) & 1u) {
                data[first + k] = mine[k] = shard_sim_col_buffer(s, first + k, n);
                mine_want |= 1u << k;
            }
        shard_matter_ctx mc = shard_sim_module_ctx(s, m);
        if (def->output && mine_want)
            def->output(&mc, mine_want, mine);
    }
    int k = 0;
    for (int f = 0; f < n_fields && k < max; f++) {
        const shard_output_field_info *fi = shard_output_info(&s->scene, f);
        if ((want >> f & 1u) && data[f])
            cols[k++] = (shard_column){fi->name, fi->type, fi->ncomp, data[f]};
    }
    return k;
}

int shard_sim_output_columns(shard_sim *s, shard_column *cols, int max)
{
    unsigned want = s->scene.output.enabled ? s->scene.output.fields : shard_output_all(&s->scene);
    return shard_sim_columns(s, want, cols, max);
}

/* The frames of the bodies that move as wholes (matter.h), as the output table /frames: rank 0 holds every row
 * (the state is the same on every rank). */
typedef struct shard_sim_frame_table {
    size_t n;
    int32_t *body;
    int64_t *index;
    double *x, *q, *v, *w, *fc, *tc, *axis[3];
    shard_column cols[12];
} shard_sim_frame_table;

size_t shard_sim_frames(shard_sim *s, shard_frame *out, size_t max)
{
    size_t n = 0;
    for (int m = 0; m < s->n_modules; m++) {
        const shard_matter_whole *w = shard_sim_whole(s, m);
        if (w && w->frames) {
            shard_matter_ctx mc = shard_sim_module_ctx(s, m);
            if (n + (size_t)s->scene.n_bodies > max)
                shard_fatal(SHARD_EXIT_INTERNAL, "shard_sim_frames: room for %zu frames, not the %d bodies", max,
                            s->scene.n_bodies);
            n += w->frames(&mc, out + n);
        }
    }
    return n;
}

static int shard_sim_frames_make(shard_sim *s, shard_sim_frame_table *fr, shard_output_table *table)
{
    memset(fr, 0, sizeof *fr);
    int any = 0;
    for (int m = 0; m < s->n_modules; m++)
        any |= shard_sim_whole(s, m) && shard_sim_whole(s, m)->frames;
    if (!any)
        return 0;
    size_t cap = (size_t)s->scene.n_bodies + 1;
    shard_frame *f = shard_malloc(cap * sizeof *f);
    if (shard_comm_rank(s->comm) == 0)
        fr->n = shard_sim_frames(s, f, cap);
    fr->body = shard_malloc((fr->n + 1) * sizeof *fr->body);
    fr->index = shard_malloc((fr->n + 1) * sizeof *fr->index);
    fr->x = shard_malloc((3 * fr->n + 1) * sizeof *fr->x);
    fr->q = shard_malloc((4 * fr->n + 1) * sizeof *fr->q);
    fr->v = shard_malloc((3 * fr->n + 1) * sizeof *fr->v);
    fr->w = shard_malloc((3 * fr->n + 1) * sizeof *fr->w);
    fr->fc = shard_malloc((3 * fr->n + 1) * sizeof *fr->fc);
    fr->tc = shard_malloc((3 * fr->n + 1) * sizeof *fr->tc);
    for (int a = 0; a < 3; a++)
        fr->axis[a] = shard_malloc((3 * fr->n + 1) * sizeof *fr->axis[a]);
    for (size_t i = 0; i < fr->n; i++) {
        double R[9];
        shard_quat_to_matrix(f[i].q, R);
        fr->body[i] = f[i].body, fr->index[i] = (int64_t)i;
        for (int k = 0; k < 3; k++) {
            fr->x[3 * i + k] = f[i].x[k], fr->v[3 * i + k] = f[i].v[k], fr->w[3 * i + k] = f[i].w[k];
            fr->fc[3 * i + k] = f[i].force[k], fr->tc[3 * i + k] = f[i].torque[k];
            for (int a = 0; a < 3; a++)
                fr->axis[a][3 * i + k] = R[3 * k + a]; /* column a of R */
        }
        memcpy(fr->q + 4 * i, f[i].q, 4 * sizeof(double));
    }
    free(f);
    int n = 0;
    fr->cols[n++] = (shard_column){"body", SHARD_TYPE_I32, 1, fr->body};
    fr->cols[n++] = (shard_column){"index", SHARD_TYPE_I64, 1, fr->index};
    fr->cols[n++] = (shard_column){"position", SHARD_TYPE_F64, 3, fr->x};
    fr->cols[n++] = (shard_column){"orientation", SHARD_TYPE_F64, 4, fr->q};
    fr->cols[n++] = (shard_column){"velocity", SHARD_TYPE_F64, 3, fr->v};
    fr->cols[n++] = (shard_column){"angular_velocity", SHARD_TYPE_F64, 3, fr->w};
    fr->cols[n++] = (shard_column){"contact_force", SHARD_TYPE_F64, 3, fr->fc};
    fr->cols[n++] = (shard_column){"contact_torque", SHARD_TYPE_F64, 3, fr->tc};
    fr->cols[n++] = (shard_column){"axis_1", SHARD_TYPE_F64, 3, fr->axis[0]};
    fr->cols[n++] = (shard_column){"axis_2", SHARD_TYPE_F64, 3, fr->axis[1]};
    fr->cols[n++] = (shard_column){"axis_3", SHARD_TYPE_F64, 3, fr->axis[2]};
    *table = (shard_output_table){.group = "frames", .n_rows = fr->n, .n_cols = n, .cols = fr->cols, .points = 1};
    return 1;
}

static void shard_sim_frames_free(shard_sim_frame_table *fr)
{
    free(fr->body), free(fr->index), free(fr->x), free(fr->q), free(fr->v), free(fr->w), free(fr->fc), free(fr->tc);
    for (int a = 0; a < 3; a++)
        free(fr->axis[a]);
    memset(fr, 0, sizeof *fr);
}

/* The triangles of the surfaces (matter.h, cells) this rank lists, as local indices (3 per triangle, a new
 * array); -1 when no module of the scene draws any (the same on every rank). */
static long shard_sim_cells(shard_sim *s, int32_t **tri)
{
    size_t n = 0;
    int any = 0;
    for (int m = 0; m < s->n_modules; m++)
        if (s->mod[m].def->cells && s->mod[m].used) {
            shard_matter_ctx mc = shard_sim_module_ctx(s, m);
            n += s->mod[m].def->cells(&mc, NULL);
            any = 1;
        }
    *tri = NULL;
    if (!any)
        return -1;
    *tri = shard_malloc((3 * n + 3) * sizeof **tri);
    size_t at = 0;
    for (int m = 0; m < s->n_modules; m++)
        if (s->mod[m].def->cells && s->mod[m].used) {
            shard_matter_ctx mc = shard_sim_module_ctx(s, m);
            at += s->mod[m].def->cells(&mc, *tri + 3 * at);
        }
    return (long)n;
}

/* The surfaces' triangles as the output table /surfaces: global ids, which the writer turns into rows of
 * /particles.  0 when there is none. */
static int shard_sim_cells_make(shard_sim *s, int64_t **ids, shard_column *col, shard_output_table *table)
{
    int32_t *tri;
    long n = shard_sim_cells(s, &tri);
    *ids = NULL;
    if (n < 0)
        return 0;
    *ids = shard_malloc((3 * (size_t)n + 3) * sizeof **ids);
    for (size_t q = 0; q < 3 * (size_t)n; q++)
        (*ids)[q] = s->p.gid[tri[q]];
    free(tri);
    *col = (shard_column){"triangles", SHARD_TYPE_I64, 3, *ids};
    *table = (shard_output_table){.group = "surfaces", .n_rows = (size_t)n, .n_cols = 1, .cols = col, .cells = 1};
    return 1;
}

long shard_sim_surface_triangles(shard_sim *s, int64_t **gids)
{
    int32_t *tri;
    long n = shard_sim_cells(s, &tri);
    *gids = shard_malloc((3 * (size_t)(n > 0 ? n : 0) + 3) * sizeof **gids);
    for (long q = 0; q < 3 * n; q++)
        (*gids)[q] = s->p.gid[tri[q]];
    free(tri);
    return n < 0 ? 0 : n;
}

/* Catalyst's block "surfaces": the triangles this rank lists over its cell points (the local vertices they use,
 * each once, in local order), with their global ids, velocities and bodies. */
typedef struct shard_sim_cell_block {
    double *x, *v;
    int64_t *gid, *tri;
    int32_t *body;
    size_t n_points, n_cells;
    shard_column cols[3];
} shard_sim_cell_block;

static int shard_sim_cell_block_make(shard_sim *s, shard_sim_cell_block *cb)
{
    memset(cb, 0, sizeof *cb);
    int32_t *tri;
    long n = shard_sim_cells(s, &tri);
    if (n < 0)
        return 0;
    const shard_particles *p = &s->p;
    int64_t *point = shard_malloc((p->n_local + 1) * sizeof *point);
    for (size_t i = 0; i < p->n_local; i++)
        point[i] = -1;
    for (size_t q = 0; q < 3 * (size_t)n; q++)
        point[tri[q]] = 0;
    for (size_t i = 0; i < p->n_local; i++)
        if (point[i] == 0)
            point[i] = (int64_t)cb->n_points++;
    size_t np = cb->n_points;
    cb->x = shard_malloc((3 * np + 3) * sizeof *cb->x), cb->v = shard_malloc((3 * np + 3) * sizeof *cb->v);
    cb->gid = shard_malloc((np + 1) * sizeof *cb->gid), cb->body = shard_malloc((np + 1) * sizeof *cb->body);
    for (size_t i = 0; i < p->n_local; i++)
        if (point[i] >= 0) {
            size_t k = (size_t)point[i];
            memcpy(cb->x + 3 * k, p->x + 3 * i, 3 * sizeof *cb->x);
            memcpy(cb->v + 3 * k, p->v + 3 * i, 3 * sizeof *cb->v);
            cb->gid[k] = p->gid[i], cb->body[k] = p->body[i];
        }
    cb->n_cells = (size_t)n;
    cb->tri = shard_malloc((3 * (size_t)n + 3) * sizeof *cb->tri);
    for (size_t q = 0; q < 3 * (size_t)n; q++)
        cb->tri[q] = point[tri[q]];
    free(point), free(tri);
    cb->cols[0] = (shard_column){"global_id", SHARD_TYPE_I64, 1, cb->gid};
    cb->cols[1] = (shard_column){"velocity", SHARD_TYPE_F64, 3, cb->v};
    cb->cols[2] = (shard_column){"body", SHARD_TYPE_I32, 1, cb->body};
    return 1;
}

static void shard_sim_cell_block_free(shard_sim_cell_block *cb)
{
    free(cb->x), free(cb->v), free(cb->gid), free(cb->tri), free(cb->body);
    memset(cb, 0, sizeof *cb);
}

/* Runs the Catalyst scripts due at this step with every output field (and the fragment statistics as field
 * data when bodies can break). Collective. */
static void shard_sim_insitu(shard_sim *s)
{
    shard_column cols[SHARD_OUTPUT_MAX];
    int n = shard_sim_columns(s, shard_output_all(&s->scene), cols, SHARD_OUTPUT_MAX);
    shard_sim_insitu_frag frag;
    shard_insitu_global globals[SHARD_SIM_INSITU_FRAG_GLOBALS];
    int n_globals = shard_sim_fragment_globals(s, &frag, globals);
    shard_insitu_fields f = {
        .n = s->p.n_owned, .position = s->p.x, .n_cols = n, .cols = cols, .n_globals = n_globals, .globals = globals};
    shard_sim_frame_table fr;
    shard_output_table tb;
    if (shard_sim_frames_make(s, &fr, &tb)) {
        f.has_frames = 1, f.n_frames = fr.n, f.frame_position = fr.x;
        f.n_frame_cols = tb.n_cols, f.frame_cols = tb.cols;
    }
    shard_sim_cell_block cb;
    if (shard_sim_cell_block_make(s, &cb)) {
        f.has_cells = 1, f.n_cell_points = cb.n_points, f.cell_position = cb.x, f.n_cells = cb.n_cells;
        f.cells = cb.tri, f.n_cell_cols = 3, f.cell_cols = cb.cols;
    }
    shard_error e;
    int rc = shard_insitu_execute(s->io.insitu, s->step, shard_sim_time(s), &f, &e);
    shard_sim_frames_free(&fr);
    shard_sim_cell_block_free(&cb);
    if (rc)
        shard_fail_all(s->comm, e.code, e.msg);
}

int shard_sim_write_output(shard_sim *s, shard_error *err)
{
    memset(err, 0, sizeof *err);
    if (!s->io.out)
        return 0;
    shard_column cols[SHARD_OUTPUT_MAX];
    int m = shard_sim_output_columns(s, cols, SHARD_OUTPUT_MAX);
    shard_output_table tables[4];
    shard_sim_fragment_tables ft;
    int n_tables = s->frac.on ? shard_sim_fragment_tables_make(s, &ft, tables) : 0;
    shard_sim_frame_table fr;
    n_tables += shard_sim_frames_make(s, &fr, &tables[n_tables]);
    int64_t *tri;
    shard_column tri_col;
    n_tables += shard_sim_cells_make(s, &tri, &tri_col, &tables[n_tables]);
    int rc = shard_output_write(s->io.out, s->comm, s->step, shard_sim_time(s), s->p.n_owned, m, cols, n_tables, tables,
                                err);
    if (!rc && s->frac.on)
        rc = shard_sim_fragment_csv(s, &ft, err);
    if (!rc)
        rc = shard_sim_decomposition_csv(s, err);
    if (s->frac.on)
        shard_sim_fragment_tables_free(&ft);
    shard_sim_frames_free(&fr);
    free(tri);
    if (!rc)
        s->io.last_output = s->step;
    return rc;
}

/* The sections of the checkpoint: one per module, in module order (the writer skips those without a STATE
 * row; at most SHARD_MATTER_MAX modules, checked at set-up); returns their count. */
static int shard_sim_checkpoint_sections(const shard_sim *s, shard_checkpoint_section *sec)
{
    for (int m = 0; m < s->n_modules; m++)
        sec[m] = (shard_checkpoint_section){.name = s->mod[m].def->kind, .block = &s->mod[m].block};
    return s->n_modules;
}

int shard_sim_write_checkpoint(shard_sim *s, shard_error *err)
{
    memset(err, 0, sizeof *err);
    if (!s->io.ckpt)
        return 0;
    int64_t contacts = shard_comm_sum_i64(s->comm, s->contacts_local);
    shard_checkpoint_section sec[SHARD_CHECKPOINT_MAX_SECTIONS];
    int n_sec = shard_sim_checkpoint_sections(s, sec);
    /* The force terms' memories, each under its name (the latest: memory[cur]), in the order a restart reads
     * them back (its checksum hashes them in that order). */
    shard_checkpoint_list lists[SHARD_CHECKPOINT_MAX_LISTS];
    int n_lists = s->n_mem;
    for (int q = 0; q < n_lists; q++) {
        shard_sim_term *t = s->mem_term[q];
        lists[q] = (shard_checkpoint_list){t->def->memory_name, &t->memory[t->cur]};
    }
    /* Modules' own state (the same on every rank): one record each. */
    void *blob[SHARD_CHECKPOINT_MAX_SECTIONS] = {0};
    for (int m = 0; m < n_sec; m++)
        if (shard_sim_whole(s, m) && shard_sim_whole(s, m)->state_save) {
            shard_matter_ctx mc = shard_sim_module_ctx(s, m);
            sec[m].blob_bytes = shard_sim_whole(s, m)->state_size(&mc);
            sec[m].blob = blob[m] = shard_malloc(sec[m].blob_bytes + 1);
            shard_sim_whole(s, m)->state_save(&mc, blob[m]);
        }
    shard_checkpoint_body *bodies = shard_calloc((size_t)s->scene.n_bodies + 1, sizeof *bodies);
    shard_sim_body_identities(s, bodies);
    shard_checkpoint_state st = {
        .p = &s->p,
        .n_sections = n_sec,
        .sections = sec,
        .n_lists = n_lists,
        .lists = lists,
        .bonds = &s->bonds,
        .broken = s->bond_broken,
        .step = s->step,
        .dt = s->dt,
        .contacts = contacts,
        .state_hash = shard_sim_hash(s),
        .scene_path = s->scene.path,
        .scene_text = s->scene.text,
        .scene_len = s->scene.text_len,
        .n_bodies = s->scene.n_bodies,
        .bodies = bodies,
    };
    int rc = shard_checkpoint_write(s->io.ckpt, s->comm, &st, err);
    for (int m = 0; m < n_sec; m++)
        free(blob[m]);
    free(bodies);
    return rc;
}

/* Output and checkpoint writers for the scene's sections (nothing is created on disk yet). */
static void shard_sim_io_setup(shard_sim *s)
{
    const shard_scene *sc = &s->scene;
    if (!sc->output.enabled && !sc->checkpoint.enabled)
        return;
#ifndef SHARD_HAVE_HDF5
    if (shard_comm_rank(s->comm) == 0) {
        fprintf(stderr,
                "shard: warning: %s asks for %s, but this shard was built without parallel HDF5: output "
                "and checkpoints are disabled\n",
                sc->path, sc->output.enabled ? "output" : "checkpoints");
        fflush(stderr);
    }
    return;
#else
    if (sc->output.enabled) {
        s->io.out = shard_output_create(sc->output.dir[0] ? sc->output.dir : sc->run.output_dir, sc->path, sc->text,
                                        sc->text_len);
        if (s->restarted_at >= 0)
            shard_output_resume(s->io.out, s->comm, &sc->output.interval, s->restarted_at, s->dt);
    }
    if (sc->checkpoint.enabled)
        s->io.ckpt = shard_checkpoint_create(sc->checkpoint.dir[0] ? sc->checkpoint.dir : sc->run.output_dir,
                                             sc->checkpoint.keep, s->run_id);
#endif
}

int shard_sim_insitu_check(const shard_scene *sc, shard_error *err)
{
    const char *why = shard_insitu_unavailable();
    if (sc->n_catalyst > 0 && why)
        return shard_error_at(err, sc->path, &sc->catalyst_loc, "%s: cannot run the catalyst script '%s'", why,
                              sc->catalyst[0].script);
    return 0;
}

/* Starts Catalyst with the scene's scripts and the command line's.  Collective; 0 or an error on every rank. */
static int shard_sim_insitu_setup(shard_sim *s, const shard_overrides *ov, shard_error *err)
{
    const shard_scene *sc = &s->scene;
    const char *scripts[SHARD_INSITU_MAX_SCRIPTS];
    long every[SHARD_INSITU_MAX_SCRIPTS];
    int n = 0;
    for (int k = 0; k < sc->n_catalyst && n < SHARD_INSITU_MAX_SCRIPTS; k++, n++)
        scripts[n] = sc->catalyst[k].script, every[n] = sc->catalyst[k].every;
    for (int k = 0; k < ov->n_catalyst; k++, n++) {
        if (n == SHARD_INSITU_MAX_SCRIPTS)
            return shard_error_set(err, SHARD_EXIT_USAGE,
                                   "--catalyst: at most %d scripts in all (scene and command "
                                   "line)",
                                   SHARD_INSITU_MAX_SCRIPTS);
        scripts[n] = ov->catalyst[k], every[n] = ov->catalyst_every > 0 ? ov->catalyst_every : 1;
    }
    memset(err, 0, sizeof *err);
    s->io.insitu = shard_insitu_create(s->comm, n, scripts, every, sc->run.output_dir, err);
    return err->code;
}

int shard_sim_output_setup(shard_sim *s, const shard_overrides *ov, shard_error *err)
{
    s->io.last_output = s->restarted_at; /* a restart's output of its step exists already */
    shard_sim_io_setup(s);
    return shard_sim_insitu_setup(s, ov, err);
}

void shard_sim_output_free(shard_sim *s)
{
    shard_insitu_destroy(&s->io.insitu);
    for (int f = 0; f < SHARD_OUTPUT_MAX; f++)
        free(s->io.col_buf[f]);
    shard_output_destroy(&s->io.out);
    shard_checkpoint_destroy(&s->io.ckpt);
}

/* Output and checkpoint due at the current step, each on its own interval.  Output comes first, so a
 * checkpoint at step k implies that the output of step k (if due) is complete.  Collective. */
static void shard_sim_io(shard_sim *s, int final)
{
    shard_error e;
    const shard_scene *sc = &s->scene;
    shard_timer_stamp(&s->timer, s->ph_other, shard_wtime());
    if (s->io.out && s->io.last_output != s->step &&
        (final || shard_interval_due(&sc->output.interval, s->step, s->dt))) {
        if (shard_sim_write_output(s, &e))
            shard_fail_all(s->comm, e.code, e.msg);
    }
    if (s->io.ckpt && !final && s->step != s->restarted_at &&
        shard_interval_due(&sc->checkpoint.interval, s->step, s->dt) && s->step > 0) {
        if (shard_sim_write_checkpoint(s, &e))
            shard_fail_all(s->comm, e.code, e.msg);
    }
    shard_timer_stamp(&s->timer, s->ph_io, shard_wtime());
    if (!final && shard_insitu_wants(s->io.insitu, s->step)) {
        shard_sim_insitu(s);
        shard_timer_stamp(&s->timer, s->ph_insitu, shard_wtime());
    }
}

static void shard_sim_format_duration(double sec, char *buf, size_t len)
{
    if (sec < 120.0)
        snprintf(buf, len, "%.1f s", sec);
    else if (sec < 7200.0)
        snprintf(buf, len, "%.1f min", sec / 60.0);
    else
        snprintf(buf, len, "%.1f h", sec / 3600.0);
}

void shard_sim_warn_inverted(shard_sim *s, const shard_diag *d)
{
    if (d->inverted == 0 || s->io.warned_inverted)
        return;
    s->io.warned_inverted = 1;
    if (shard_comm_rank(s->comm) != 0)
        return;
    const shard_scene *sc = &s->scene;
    int b = d->inverted_body >= 0 && d->inverted_body < sc->n_bodies ? d->inverted_body : 0;
    fflush(stdout); /* after the diagnostics lines already printed, in a log that merges both streams */
    fprintf(stderr,
            "shard: warning: step %ld: %lld particle(s) turned inside out (det J <= 0); the first, particle %lld "
            "of body '%s', is at (%.6g, %.6g, %.6g) m.  Their stress is written as 0 and flagged in the output "
            "field 'inverted'; a stronger volume_barrier, a smaller dt_safety or a finer spacing prevents it.  "
            "(Printed once per run; the diagnostics count them.)\n",
            s->step, (long long)d->inverted, (long long)d->inverted_first, sc->bodies[b].name, d->inverted_x[0],
            d->inverted_x[1], d->inverted_x[2]);
}

void shard_sim_run(shard_sim *s, int quiet)
{
    int rank = shard_comm_rank(s->comm);
    long every = s->scene.run.diagnostics_every;
    shard_error e;
    if (shard_sim_relax(s, quiet, &e))
        shard_fail_all(s->comm, e.code, e.msg);
    shard_timer_clear(&s->timer); /* the table is the dynamic run's */
    double t0 = shard_wtime(), last_print = t0;
    shard_timer_start(&s->timer, t0);
    if (rank == 0 && !quiet)
        printf("Running %ld steps of %.6g s (%lld particles, %d ranks)\n", s->total_steps - s->step, s->dt,
               (long long)s->n_global, shard_comm_size(s->comm));
    long first = s->step;
    shard_sim_io(s, 0);
    while (s->step < s->total_steps) {
        shard_sim_balance(s, quiet);
        shard_sim_step(s);
        shard_sim_io(s, 0);
        if (every > 0 && s->step % every == 0) {
            shard_diag d = shard_sim_diagnostics(s);
            if (rank == 0 && !quiet)
                if (rank == 0 && !quiet) {
                    printf("diag step %ld t %.6e  kinetic %.6e J  elastic %.6e J  momentum %.3e %.3e %.3e  "
                           "max|v| %.3e  contacts %lld  inverted %lld",
                           s->step, shard_sim_time(s), d.kinetic, d.elastic, d.momentum[0], d.momentum[1],
                           d.momentum[2], d.max_speed, (long long)d.contacts, (long long)d.inverted);
                    if (s->frac.on)
                        printf("  broken %lld", (long long)d.broken_bonds);
                    for (int m = 0; m < s->n_modules; m++)
                        if (s->mod[m].used && s->mod[m].def->diag_line) {
                            char line[256];
                            shard_matter_ctx mc = shard_sim_module_ctx(s, m);
                            s->mod[m].def->diag_line(&mc, line, sizeof line);
                            if (line[0])
                                printf("  %s", line);
                        }
                    printf("\n");
                }
            shard_sim_warn_inverted(s, &d);
            shard_timer_stamp(&s->timer, s->ph_other, shard_wtime());
        }
        if (rank == 0 && !quiet) {
            double now = shard_wtime();
            if (now - last_print >= 1.0 || s->step == s->total_steps) {
                last_print = now;
                double done = (double)(s->step - first), left = (double)(s->total_steps - s->step);
                char wall[32], eta[32];
                shard_sim_format_duration(now - t0, wall, sizeof wall);
                shard_sim_format_duration(done > 0 ? (now - t0) / done * left : 0.0, eta, sizeof eta);
                printf("step %ld/%ld  t = %.4e s  wall %s  ETA %s\n", s->step, s->total_steps, shard_sim_time(s), wall,
                       eta);
                fflush(stdout);
            }
            shard_timer_stamp(&s->timer, s->ph_other, shard_wtime());
        }
    }
    shard_sim_io(s, 1);
    shard_timer_stamp(&s->timer, s->ph_other, shard_wtime());
    s->loop_wall += shard_wtime() - t0;
}
