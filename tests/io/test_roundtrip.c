/* Round trip of output and checkpoint files: what the HDF5 library reads back equals the in-memory state.
 *
 * usage: mpiexec -n N io_roundtrip DIR
 * A ball hits a slab (contact, plasticity, a prescribed region) for 30 steps; then every rank writes an output
 * file and a checkpoint into DIR, and each rank reads both files back with the plain (serial) HDF5 API and
 * compares its own particles bit for bit: in the output file it finds each particle's row through
 * /particles/index, in the checkpoint through /particles/global_id.  Every state row of the particle registry
 * and every bond list is checked, so a field added to the registry is covered without touching this test.
 * Rank 0 also loads the checkpoint through shard_checkpoint_load (full validation).  Then a cells table
 * (cloth triangles) is written into DIR/cells by shard_output_write itself, before and after the particles move
 * to the next rank and after a restart: every triangle's corners, global ids mostly of other ranks' particles,
 * must come back as rows of /particles holding those particles, and DIR/cells/surfaces.xmf must list one Triangle
 * grid per file with the cloth, with its own count.  Exit 0 pass, 1 fail, 77 when Shard was built without
 * HDF5. */
#include "shard/checkpoint.h"
#include "shard/matter.h"
#include "shard/output.h"
#include "shard/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef SHARD_HAVE_HDF5
int main(void)
{
    printf("SKIPPED: built without parallel HDF5\n");
    return 77;
}
#else
#include "checkpoint_whole.h"
#include "test.h"

#include <hdf5.h>

static const char scene_fmt[] =
    "run:\n"
    "  steps: 30\n"
    "  output_dir: %s\n"
    "materials:\n"
    "  clay: {density: 1500, E: 2.0e5, nu: 0.3, damping: 0.001, plasticity: {yield: 0.001, creep: 300, max: 0.4}}\n"
    "  rubber: {density: 1100, E: 1.0e6, nu: 0.4, volume_stiffness: 2.0e5, fracture: {critical_stretch: 0.5}}\n"
    "bodies:\n"
    "  - name: ball\n"
    "    material: clay\n"
    "    shape: {sphere: {center: [0, 0, 0.086], radius: 0.03}}\n"
    "    spacing: 0.01\n"
    "    velocity: [0.3, 0, -3]\n"
    "  - name: slab\n"
    "    material: rubber\n"
    "    shape: {box: {min: [-0.05, -0.05, 0], max: [0.05, 0.05, 0.05]}}\n"
    "    spacing: 0.01\n"
    "    prescribed:\n"
    "      - {region: {box: {min: [-0.05, -0.05, 0], max: [-0.04, 0.05, 0.05]}}, velocity: [0, 0, 0.1]}\n"
    "obstacles:\n"
    "  - plane: {point: [0, 0, 0], normal: [0, 0, 1]}\n"
    "output:\n"
    "  every: 1000\n"
    "checkpoint:\n"
    "  every: 1000\n";

/* The whole dataset into a new buffer of `bytes` per row (native type of `mem`); NULL if absent or a size
 * differs. */
static void *read_all(hid_t f, const char *name, hid_t mem, size_t row_bytes, int64_t rows)
{
    if (H5Lexists(f, name, H5P_DEFAULT) <= 0) {
        fprintf(stderr, "FAIL: dataset %s missing\n", name);
        return NULL;
    }
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT), sp = H5Dget_space(d);
    hsize_t dims[2] = {0, 1};
    H5Sget_simple_extent_dims(sp, dims, NULL);
    void *buf = NULL;
    if ((int64_t)dims[0] != rows) {
        fprintf(stderr, "FAIL: dataset %s has %llu rows, expected %lld\n", name, (unsigned long long)dims[0],
                (long long)rows);
    } else {
        buf = malloc(row_bytes * (size_t)rows + 1);
        if (H5Dread(d, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
            fprintf(stderr, "FAIL: cannot read %s\n", name);
            free(buf);
            buf = NULL;
        }
    }
    H5Sclose(sp);
    H5Dclose(d);
    return buf;
}

static hid_t mem_type(shard_field_type t)
{
    switch (t) {
    case SHARD_TYPE_I32: return H5T_NATIVE_INT32;
    case SHARD_TYPE_U32: return H5T_NATIVE_UINT32;
    case SHARD_TYPE_I64: return H5T_NATIVE_INT64;
    case SHARD_TYPE_U8: return H5T_NATIVE_UINT8;
    case SHARD_TYPE_F64: return H5T_NATIVE_DOUBLE;
    }
    return H5T_NATIVE_DOUBLE;
}

static size_t type_size(shard_field_type t)
{
    return t == SHARD_TYPE_U8 ? 1 : (t == SHARD_TYPE_I64 || t == SHARD_TYPE_F64) ? 8 : 4;
}

static int64_t attr_i64(hid_t f, const char *name)
{
    int64_t v = -1;
    hid_t a = H5Aopen(f, name, H5P_DEFAULT);
    if (a >= 0) {
        H5Aread(a, H5T_NATIVE_INT64, &v);
        H5Aclose(a);
    }
    return v;
}

static void check_output(shard_sim *s, const char *path, int64_t n, int me)
{
    const shard_particles *p = shard_sim_particles(s);
    shard_column cols[SHARD_OUTPUT_MAX];
    int m = shard_sim_output_columns(s, cols, SHARD_OUTPUT_MAX);
    SHARD_ENSURE(m == shard_output_count(shard_sim_scene(s))); /* every field, the kinds' too */
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    SHARD_ENSURE(f >= 0);
    if (f < 0)
        return;
    SHARD_ENSURE(attr_i64(f, "format_version") == SHARD_OUTPUT_FORMAT_VERSION);
    SHARD_ENSURE(attr_i64(f, "step") == 30);
    SHARD_ENSURE(attr_i64(f, "n_particles") == n);
    int64_t *index = read_all(f, "/particles/index", H5T_NATIVE_INT64, 8, n);
    SHARD_ENSURE(index != NULL);
    for (int q = 0; q < m && index; q++) {
        char name[128];
        snprintf(name, sizeof name, "/particles/%s", cols[q].name);
        size_t rb = type_size(cols[q].type) * (size_t)cols[q].ncomp;
        unsigned char *data = read_all(f, name, mem_type(cols[q].type), rb, n);
        SHARD_ENSURE(data != NULL);
        if (!data)
            continue;
        long bad = 0;
        for (size_t i = 0; i < p->n_owned; i++) {
            int64_t row = index[p->gid[i]];
            const unsigned char *want = (const unsigned char *)cols[q].data + i * rb;
            if (row < 0 || row >= n || memcmp(data + (size_t)row * rb, want, rb))
                bad++;
        }
        if (bad)
            fprintf(stderr, "FAIL rank %d: %s: %ld of %zu particles differ from memory\n", me, cols[q].name, bad,
                    p->n_owned);
        SHARD_ENSURE(bad == 0);
        /* The columns that mirror the particle store are checked against it directly as well. */
        if (!strcmp(cols[q].name, "position") || !strcmp(cols[q].name, "velocity") ||
            !strcmp(cols[q].name, "global_id") || !strcmp(cols[q].name, "rank")) {
            for (size_t i = 0; i < p->n_owned && !bad; i++) {
                const unsigned char *got = data + (size_t)index[p->gid[i]] * rb;
                if (!strcmp(cols[q].name, "position"))
                    bad += memcmp(got, p->x + 3 * i, rb) != 0;
                else if (!strcmp(cols[q].name, "velocity"))
                    bad += memcmp(got, p->v + 3 * i, rb) != 0;
                else if (!strcmp(cols[q].name, "global_id"))
                    bad += memcmp(got, p->gid + i, rb) != 0;
                else
                    bad += *(const int32_t *)got != me;
            }
            SHARD_ENSURE(bad == 0);
        }
        free(data);
    }
    free(index);
    /* The slab can break (it does not in 30 steps): one fragment, written as a table of one row. */
    hid_t g = H5Gopen2(f, "/fragments", H5P_DEFAULT);
    SHARD_ENSURE(g >= 0);
    if (g >= 0) {
        SHARD_ENSURE(attr_i64(g, "n_fragments") == 1);
        SHARD_ENSURE(attr_i64(g, "count") == 1);
        SHARD_ENSURE(attr_i64(g, "broken_bonds") == 0);
        H5Gclose(g);
    }
    H5Fclose(f);
}

static void check_checkpoint(shard_sim *s, const char *path, int64_t n, int me)
{
    const shard_particles *p = shard_sim_particles(s);
    const shard_csr *bonds = shard_sim_bonds(s);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    SHARD_ENSURE(f >= 0);
    if (f < 0)
        return;
    SHARD_ENSURE(attr_i64(f, "step") == 30);
    SHARD_ENSURE(attr_i64(f, "n_particles") == n);
    SHARD_ENSURE(attr_i64(f, "complete") == 1);
    int64_t *gid = read_all(f, "/particles/global_id", H5T_NATIVE_INT64, 8, n);
    int64_t *row_of = calloc((size_t)n + 1, sizeof *row_of);
    for (int64_t r = 0; gid && r < n; r++)
        if (gid[r] >= 0 && gid[r] < n)
            row_of[gid[r]] = r;
    int checked = 0;
    for (int k = 0; k < shard_particle_n_fields && gid; k++) {
        const shard_field_desc *d = &shard_particle_fields[k];
        if (!(d->flags & SHARD_FIELD_STATE))
            continue;
        char name[128];
        snprintf(name, sizeof name, "/particles/%s", d->name);
        size_t rb = d->elem_size * (size_t)d->ncomp;
        unsigned char *data = read_all(f, name, mem_type(d->type), rb, n);
        SHARD_ENSURE(data != NULL);
        const unsigned char *mine = shard_particles_array(p, d);
        long bad = 0;
        for (size_t i = 0; data && i < p->n_owned; i++)
            bad += memcmp(data + (size_t)row_of[p->gid[i]] * rb, mine + i * rb, rb) != 0;
        if (bad)
            fprintf(stderr, "FAIL rank %d: checkpoint %s: %ld particles differ\n", me, d->name, bad);
        SHARD_ENSURE(bad == 0);
        checked++;
        free(data);
    }
    SHARD_ENSURE(checked >= 8);
    /* The solid's section: its global ids and every STATE row of its block, row by row. */
    const shard_block *blk = shard_sim_block(s, "solid");
    SHARD_ENSURE(blk != NULL);
    int64_t ns = attr_i64(f, "n_particles"); /* every particle of this scene is a solid */
    int64_t *sgid = blk ? read_all(f, "/solid/global_id", H5T_NATIVE_INT64, 8, ns) : NULL;
    SHARD_ENSURE(sgid != NULL);
    int64_t *srow = calloc((size_t)n + 1, sizeof *srow);
    for (int64_t r = 0; sgid && r < ns; r++)
        if (sgid[r] >= 0 && sgid[r] < n)
            srow[sgid[r]] = r;
    for (int k = 0; blk && sgid && k < blk->n_rows; k++) {
        const shard_field_desc *d = &blk->rows[k];
        if (!(d->flags & SHARD_FIELD_STATE))
            continue;
        char name[128];
        snprintf(name, sizeof name, "/solid/%s", d->name);
        size_t rb = d->elem_size * (size_t)d->ncomp;
        unsigned char *data = read_all(f, name, mem_type(d->type), rb, ns);
        SHARD_ENSURE(data != NULL);
        const unsigned char *mine = shard_field_array(blk, d);
        long bad = 0;
        for (size_t q = 0; data && q < blk->n_owned; q++)
            bad += memcmp(data + (size_t)srow[p->gid[blk->first + q]] * rb, mine + q * rb, rb) != 0;
        if (bad)
            fprintf(stderr, "FAIL rank %d: checkpoint /solid/%s: %ld particles differ\n", me, d->name, bad);
        SHARD_ENSURE(bad == 0);
        free(data);
    }
    free(sgid), free(srow);
    int64_t nb = attr_i64(f, "n_bonds");
    int32_t *count = read_all(f, "/bonds/count", H5T_NATIVE_INT32, 4, n);
    int64_t *partner = read_all(f, "/bonds/partner", H5T_NATIVE_INT64, 8, nb);
    uint8_t *broken = read_all(f, "/bonds/broken", H5T_NATIVE_UINT8, 1, nb);
    if (count && partner && broken && gid) {
        int64_t *first = malloc(((size_t)n + 1) * sizeof *first);
        first[0] = 0;
        for (int64_t r = 0; r < n; r++)
            first[r + 1] = first[r] + count[r];
        SHARD_ENSURE(first[n] == nb);
        long bad = 0;
        for (size_t i = 0; i < p->n_owned; i++) {
            int64_t r = row_of[p->gid[i]], b0 = bonds->start[i], b1 = bonds->start[i + 1];
            if (count[r] != b1 - b0) {
                bad++;
                continue;
            }
            for (int64_t b = b0; b < b1; b++)
                bad += partner[first[r] + b - b0] != p->gid[bonds->idx[b]] || broken[first[r] + b - b0] != 0;
        }
        if (bad)
            fprintf(stderr, "FAIL rank %d: %ld bond lists differ\n", me, bad);
        SHARD_ENSURE(bad == 0);
        free(first);
    }
    free(gid), free(row_of), free(count), free(partner), free(broken);
    H5Fclose(f);
}

/* Every rank hands its particles (the rows of every column) to the next rank, as a migration does.  Returns the
 * new owned count; cols[q].data then point into bufs[q] (caller frees). */
static size_t pass_on(shard_comm *c, size_t n_owned, int m, shard_column *cols, void **bufs)
{
    int me = shard_comm_rank(c), size = shard_comm_size(c);
    size_t rb[SHARD_OUTPUT_MAX], row = 0;
    for (int q = 0; q < m; q++)
        rb[q] = type_size(cols[q].type) * (size_t)cols[q].ncomp, row += rb[q];
    size_t words = (row + 7) / 8, *count = calloc((size_t)size, sizeof *count), n_recv = 0;
    int64_t *send = calloc(n_owned * words + 1, sizeof *send);
    for (size_t i = 0; i < n_owned; i++) {
        unsigned char *at = (unsigned char *)(send + i * words);
        for (int q = 0; q < m; at += rb[q], q++)
            memcpy(at, (const unsigned char *)cols[q].data + i * rb[q], rb[q]);
    }
    count[(me + 1) % size] = n_owned * words;
    int64_t *recv = shard_comm_exchange_i64(c, send, count, &n_recv);
    size_t n = n_recv / words;
    for (int q = 0; q < m; q++) {
        bufs[q] = malloc(n * rb[q] + 1);
        cols[q].data = bufs[q];
    }
    for (size_t i = 0; i < n; i++) {
        const unsigned char *at = (const unsigned char *)(recv + i * words);
        for (int q = 0; q < m; at += rb[q], q++)
            memcpy((unsigned char *)bufs[q] + i * rb[q], at, rb[q]);
    }
    free(count), free(send), free(recv);
    return n;
}

/* One file's cloth, on every rank: the table has m rows, this rank's n_tri (tri, global ids) from row `first`;
 * each corner must be a row of /particles whose global id, index entry and position (pos_of: by global id, from
 * memory) are those of the particle it was built from. */
static void check_cloth(const char *dir, long step, int64_t n, const int64_t *tri, size_t n_tri, int64_t first,
                        int64_t m, const double *pos_of, int me)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/particles_%06ld.h5", dir, step);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    SHARD_ENSURE(f >= 0);
    if (f < 0)
        return;
    hid_t g = H5Lexists(f, "/surfaces", H5P_DEFAULT) > 0 ? H5Gopen2(f, "/surfaces", H5P_DEFAULT) : -1;
    SHARD_ENSURE(g >= 0);
    if (g >= 0) {
        SHARD_ENSURE(attr_i64(g, "count") == m);
        H5Gclose(g);
    }
    int64_t *rows = read_all(f, "/surfaces/triangles", H5T_NATIVE_INT64, 3 * 8, m);
    double *pos = read_all(f, "/particles/position", H5T_NATIVE_DOUBLE, 3 * 8, n);
    int64_t *gid = read_all(f, "/particles/global_id", H5T_NATIVE_INT64, 8, n);
    int64_t *index = read_all(f, "/particles/index", H5T_NATIVE_INT64, 8, n);
    SHARD_ENSURE(rows && pos && gid && index);
    long bad = 0;
    for (size_t k = 0; rows && pos && gid && index && k < 3 * n_tri; k++) {
        int64_t id = tri[k], row = rows[3 * first + (int64_t)k];
        if (row < 0 || row >= n || gid[row] != id || index[id] != row || memcmp(pos + 3 * row, pos_of + 3 * id, 24))
            bad++;
    }
    if (bad)
        fprintf(stderr, "FAIL rank %d: step %ld: %ld of %zu triangle corners are not the rows of their particles\n",
                me, step, bad, 3 * n_tri);
    SHARD_ENSURE(bad == 0);
    free(rows), free(pos), free(gid), free(index);
    H5Fclose(f);
}

/* Rank 0: the triangle counts of the Triangle grids of an .xmf, in order (at most max); -1 if unreadable. */
static int xmf_triangles(const char *path, long long *count, int max)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return -1;
    char line[4096];
    int k = 0;
    while (fgets(line, sizeof line, fp)) {
        const char *t = strstr(line, "TopologyType=\"Triangle\" NumberOfElements=\"");
        if (t && k < max)
            count[k++] = strtoll(t + strlen("TopologyType=\"Triangle\" NumberOfElements=\""), NULL, 10);
    }
    fclose(fp);
    return k;
}

/* Rank 0: how many lines of an .xmf hold `what`. */
static int xmf_lines(const char *path, const char *what)
{
    FILE *fp = fopen(path, "r");
    char line[4096];
    int k = 0;
    while (fp && fgets(line, sizeof line, fp))
        k += strstr(line, what) != NULL;
    if (fp)
        fclose(fp);
    return k;
}

/* Triangles over this rank's particles gid[0..n_owned): for every `every`-th global id g, (g, g + a, g + b)
 * mod n; none on rank `none`.  Returns the count; *tri is a new array (caller frees). */
static size_t make_triangles(const int64_t *gid, size_t n_owned, int64_t n, int64_t every, int64_t a, int64_t b,
                             int none, int me, int64_t **tri)
{
    size_t k = 0;
    *tri = malloc((3 * n_owned + 1) * sizeof **tri);
    for (size_t i = 0; i < n_owned && me != none; i++)
        if (gid[i] % every == 0) {
            (*tri)[3 * k] = gid[i], (*tri)[3 * k + 1] = (gid[i] + a) % n, (*tri)[3 * k + 2] = (gid[i] + b) % n;
            k++;
        }
    return k;
}

/* The cells table through shard_output_write into DIR/cells: step 29 without it, 30 with triangles on every
 * rank, 31 after every particle moved to the next rank (fewer triangles, none on rank 0), then a new writer
 * resumed at step 31 writes 32.  Its index (surfaces.xmf) must list 30, 31 and 32 with their own counts. */
static void check_cells(shard_sim *s, shard_comm *c, const char *dir, int64_t n, int me, int size)
{
    char out[1100];
    snprintf(out, sizeof out, "%s/cells", dir);
    const shard_particles *p = shard_sim_particles(s);
    shard_column cols[SHARD_OUTPUT_MAX];
    int m = shard_sim_output_columns(s, cols, SHARD_OUTPUT_MAX);
    /* every particle's position by global id, from memory, to check the corners against */
    double *mine = malloc((4 * p->n_owned + 1) * sizeof *mine);
    for (size_t i = 0; i < p->n_owned; i++)
        mine[4 * i] = (double)p->gid[i], memcpy(mine + 4 * i + 1, p->x + 3 * i, 24);
    size_t total = 0;
    double *all = shard_comm_allgather_bytes(c, mine, 4 * p->n_owned * sizeof *mine, &total);
    double *pos_of = calloc(3 * (size_t)n + 1, sizeof *pos_of);
    for (size_t k = 0; k < total / (4 * sizeof *all); k++)
        memcpy(pos_of + 3 * (int64_t)all[4 * k], all + 4 * k + 1, 24);
    free(mine), free(all);

    shard_error err;
    shard_output *o = shard_output_create(out, "roundtrip.yaml", "", 0);
    SHARD_ENSURE(shard_output_write(o, c, 29, 0.29, p->n_owned, m, cols, 0, NULL, &err) == 0);
    long step[3] = {30, 31, 32};
    int64_t count[3], first;
    int64_t *tri = NULL;
    size_t n_tri = make_triangles(p->gid, p->n_owned, n, 1, 1, 7, -1, me, &tri);
    shard_column tc = {"triangles", SHARD_TYPE_I64, 3, tri};
    shard_output_table tb = {.group = "surfaces", .n_rows = n_tri, .n_cols = 1, .cols = &tc, .cells = 1};
    SHARD_ENSURE(shard_output_write(o, c, 30, 0.30, p->n_owned, m, cols, 1, &tb, &err) == 0);
    count[0] = shard_comm_sum_i64(c, (int64_t)n_tri), first = shard_comm_exscan_i64(c, (int64_t)n_tri);
    SHARD_ENSURE(count[0] == n);
    check_cloth(out, 30, n, tri, n_tri, first, count[0], pos_of, me);
    free(tri);

    /* the migration: rows and index change; the translation must use the new index */
    void *bufs[SHARD_OUTPUT_MAX];
    size_t n_owned = pass_on(c, p->n_owned, m, cols, bufs);
    const int64_t *gid = NULL;
    for (int q = 0; q < m; q++)
        if (!strcmp(cols[q].name, "global_id"))
            gid = cols[q].data;
    shard_output_owners_changed(o);
    n_tri = make_triangles(gid, n_owned, n, 2, 3, n / 2, size > 1 ? 0 : -1, me, &tri);
    tc.data = tri, tb.n_rows = n_tri;
    SHARD_ENSURE(shard_output_write(o, c, 31, 0.31, n_owned, m, cols, 1, &tb, &err) == 0);
    count[1] = shard_comm_sum_i64(c, (int64_t)n_tri), first = shard_comm_exscan_i64(c, (int64_t)n_tri);
    check_cloth(out, 31, n, tri, n_tri, first, count[1], pos_of, me);
    free(tri);
    shard_output_destroy(&o);

    /* a restart at step 31: the index takes the earlier files back, their triangle counts read from them */
    o = shard_output_create(out, "roundtrip.yaml", "", 0);
    shard_interval iv = {.every = 1};
    shard_output_resume(o, c, &iv, 31, 0.01);
    n_tri = make_triangles(gid, n_owned, n, 3, n - 1, 5, -1, me, &tri);
    tc.data = tri, tb.n_rows = n_tri;
    SHARD_ENSURE(shard_output_write(o, c, 32, 0.32, n_owned, m, cols, 1, &tb, &err) == 0);
    count[2] = shard_comm_sum_i64(c, (int64_t)n_tri), first = shard_comm_exscan_i64(c, (int64_t)n_tri);
    check_cloth(out, 32, n, tri, n_tri, first, count[2], pos_of, me);
    free(tri);
    shard_output_destroy(&o);
    for (int q = 0; q < m; q++)
        free(bufs[q]);
    free(pos_of);

    if (me == 0) {
        char xmf[1200], pxmf[1200];
        snprintf(xmf, sizeof xmf, "%s/surfaces.xmf", out);
        snprintf(pxmf, sizeof pxmf, "%s/particles.xmf", out);
        long long got[8];
        int k = xmf_triangles(xmf, got, 8);
        SHARD_ENSURE(k == 3);
        for (int j = 0; j < 3 && j < k; j++) {
            if (got[j] != count[j])
                fprintf(stderr, "FAIL: surfaces.xmf: step %ld has %lld triangles, expected %lld\n", step[j], got[j],
                        (long long)count[j]);
            SHARD_ENSURE(got[j] == count[j]);
        }
        SHARD_ENSURE(xmf_lines(xmf, "surfaces/triangles</DataItem>") == 3);
        SHARD_ENSURE(xmf_lines(xmf, "particles_000029.h5") == 0);
        /* the same point attributes as particles.xmf (which also lists step 29) */
        SHARD_ENSURE(xmf_lines(pxmf, "TopologyType=\"Polyvertex\"") == 4);
        SHARD_ENSURE(xmf_lines(xmf, "<Attribute ") == 3 * m - 3 && xmf_lines(pxmf, "<Attribute ") == 4 * m - 4);
        SHARD_ENSURE(access(xmf, F_OK) == 0);
    }
}

int main(int argc, char **argv)
{
    shard_comm *c = shard_comm_init(&argc, &argv);
    int me = shard_comm_rank(c), size = shard_comm_size(c);
    if (argc < 2) {
        fprintf(stderr, "usage: io_roundtrip DIR\n");
        return 2;
    }
    char text[sizeof scene_fmt + 1100];
    snprintf(text, sizeof text, scene_fmt, argv[1]);
    shard_overrides ov = shard_default_overrides();
    shard_error err;
    shard_sim *s = shard_sim_create(c, "roundtrip.yaml", text, strlen(text), &ov, &err);
    if (!s) {
        fprintf(stderr, "FAIL: %s\n", err.msg);
        return 1;
    }
    for (int k = 0; k < 30; k++)
        shard_sim_step(s);
    SHARD_ENSURE(shard_sim_write_output(s, &err) == 0);
    SHARD_ENSURE(shard_sim_write_checkpoint(s, &err) == 0);
    if (err.code)
        fprintf(stderr, "FAIL: %s\n", err.msg);
    uint64_t hash = shard_sim_hash(s);
    int64_t n = shard_sim_total_particles(s);
    char out[1200], ck[1200];
    snprintf(out, sizeof out, "%s/particles_000030.h5", argv[1]);
    snprintf(ck, sizeof ck, "%s/checkpoint_000030.h5", argv[1]);
    shard_comm_barrier(c);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    check_output(s, out, n, me);
    check_checkpoint(s, ck, n, me);
    check_cells(s, c, argv[1], n, me, size);
    if (me == 0) {
        shard_checkpoint_data d;
        shard_block rows;
        const shard_block *blk = shard_sim_block(s, "solid");
        shard_block_init(&rows, blk->rows, blk->n_rows);
        shard_checkpoint_section sec = {.name = "solid", .block = &rows};
        /* the force terms' memories (forces.c): the checksum covers them, so they are read too */
        shard_pairlist shape[2];
        shard_pairlist_init(&shape[0], 3), shard_pairlist_init(&shape[1], 3);
        shard_checkpoint_list lists[2] = {{"contact_memory", &shape[0]}, {"obstacle_memory", &shape[1]}};
        int rc = shard_checkpoint_load(ck, 1, &sec, 2, lists, &d, &err);
        if (rc)
            fprintf(stderr, "FAIL: load: %s\n", err.msg);
        SHARD_ENSURE(rc == 0);
        SHARD_ENSURE(d.step == 30 && d.n == n && d.state_hash == hash && d.n_ranks == size);
        long outside = 0;
        for (int64_t g = 0; rc == 0 && g < n; g++)
            outside += d.section_of[g] != 0;
        SHARD_ENSURE(rc == 0 && outside == 0);
        SHARD_ENSURE(rc != 0 || (d.lists[0].n == (size_t)n && d.lists[1].n == (size_t)n));
        shard_checkpoint_data_free(&d);
    }
    int fails = shard_test_failures;
    shard_comm_max_ints(c, &fails, 1);
    if (me == 0)
        printf("%s: output and checkpoint round trip on %d rank(s), %lld particles\n", fails ? "FAIL" : "PASS", size,
               (long long)n);
    shard_sim_destroy(&s);
    shard_comm_finalize(&c);
    return fails ? 1 : 0;
}
#endif
