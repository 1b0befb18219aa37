/* Round trip of output and checkpoint files: what the HDF5 library reads back equals the in-memory state.
 *
 * usage: mpiexec -n N io_roundtrip DIR
 * A ball hits a slab (contact, plasticity, a prescribed region) for 30 steps; then every rank writes an output
 * file and a checkpoint into DIR, and each rank reads both files back with the plain (serial) HDF5 API and
 * compares its own particles bit for bit: in the output file it finds each particle's row through
 * /particles/index, in the checkpoint through /particles/global_id.  Every state row of the particle registry
 * and every bond list is checked, so a field added to the registry is covered without touching this test.
 * Rank 0 also loads the checkpoint through shard_checkpoint_load (full validation).  Exit 0 pass, 1 fail, 77
 * when Shard was built without HDF5. */
#include "shard/checkpoint.h"
#include "shard/output.h"
#include "shard/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SHARD_HAVE_HDF5
int main(void)
{
    printf("SKIPPED: built without parallel HDF5\n");
    return 77;
}
#else
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
    shard_column cols[SHARD_OUT_COUNT];
    int m = shard_sim_output_columns(s, cols, SHARD_OUT_COUNT);
    SHARD_ENSURE(m == SHARD_OUT_COUNT);
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
