/* The parallel checkpoint reader against the whole-file one: the same rows, the same refusals.
 *
 * usage: mpiexec -n N io_load_range DIR
 * The scene of io_roundtrip, with a weaker slab (a ball hits a slab and breaks bonds: bonds with broken flags, the
 * solid's section, contact memories), runs 60 steps on N ranks and writes a checkpoint into DIR; its rows are in
 * the writer's rank order, not in global-id order.  Every rank then reads it with shard_checkpoint_load_range and
 * with shard_checkpoint_load (the whole file, on every rank, so that each compares its range locally without a
 * gather to trust) and checks:
 *   - the ranges tile 0..N-1 (first = floor(N r / P), first + n_local = floor(N (r + 1) / P));
 *   - bit for bit, for every global id of its range: every STATE row of the particle registry, section_of and
 *     the section's STATE rows, the bond list (partner global ids, broken flags), every pair list row;
 *   - the header (step, time, dt, counts, hashes, scene text and path).
 * Then rank 0 damages copies of the file in single, known ways (asymmetric bonds, invalid bond lists, a global id
 * given twice to one owner or moved to another, section ids given twice, or piled on one particle so that its
 * owner takes them in rounds, bond counts that do not add up, keys out of order in contact memories, one changed
 * velocity bit for the checksum, a path that does not exist), and every rank checks that both readers refuse each
 * with SHARD_EXIT_INPUT and the same message (hence the same on every rank), and that the
 * range reader leaves nothing allocated.  Exit 0 pass, 1 fail, 77 when Shard was built without HDF5. */
#include "shard/checkpoint.h"
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
#include "checkpoint_whole.h"
#include "test.h"

#include <hdf5.h>

static const char scene_fmt[] =
    "run:\n"
    "  steps: %d\n"
    "  output_dir: %s\n"
    "materials:\n"
    "  clay: {density: 1500, E: 2.0e5, nu: 0.3, damping: 0.001, plasticity: {yield: 0.001, creep: 300, max: 0.4}}\n"
    "  rubber: {density: 1100, E: 1.0e6, nu: 0.4, volume_stiffness: 2.0e5, fracture: {critical_stretch: 0.02}}\n"
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

/* Long enough for the ball to press into the slab: particles with two contacts or more (CASE_KEYS). */
#define STEPS 60

/* What both readers are asked for: the solid's section and the two contact memories (as shard_sim_restart). */
typedef struct request {
    shard_block rows;
    shard_checkpoint_section sec;
    shard_pairlist shape[2];
    shard_checkpoint_list lists[2];
} request;

static void request_init(request *q, const shard_block *solid)
{
    shard_block_init(&q->rows, solid->rows, solid->n_rows);
    q->sec = (shard_checkpoint_section){.name = "solid", .block = &q->rows};
    shard_pairlist_init(&q->shape[0], 3), shard_pairlist_init(&q->shape[1], 3);
    q->lists[0] = (shard_checkpoint_list){"contact_memory", &q->shape[0]};
    q->lists[1] = (shard_checkpoint_list){"obstacle_memory", &q->shape[1]};
}

/* floor(n r / p), as the reader promises it (n small here: no overflow). */
static int64_t cut(int64_t n, int r, int p) { return n * r / p; }

/* Rank's range of `part` against the whole load `whole`; returns the number of rows that differ. */
static long compare_range(const shard_checkpoint_data *part, const shard_checkpoint_data *whole, int me, int size)
{
    long bad = 0;
    int64_t n = whole->n, first = part->first, nl = part->n_local;
    SHARD_ENSURE(part->n == n && part->n_bonds == whole->n_bonds);
    SHARD_ENSURE(first == cut(n, me, size) && first + nl == cut(n, me + 1, size));
    SHARD_ENSURE(whole->first == 0 && whole->n_local == n && whole->partner == NULL);
    SHARD_ENSURE(part->bonds.idx == NULL && part->bonds.n == (size_t)nl && part->p.n_owned == (size_t)nl);
    SHARD_ENSURE(part->step == whole->step && part->time == whole->time && part->dt == whole->dt);
    SHARD_ENSURE(part->contacts == whole->contacts && part->n_ranks == whole->n_ranks);
    SHARD_ENSURE(part->state_hash == whole->state_hash);
    SHARD_ENSURE(part->scene_len == whole->scene_len && part->scene_text &&
                 memcmp(part->scene_text, whole->scene_text, whole->scene_len + 1) == 0);
    SHARD_ENSURE(strcmp(part->scene_path, whole->scene_path) == 0);
    if (first != cut(n, me, size) || first + nl != cut(n, me + 1, size))
        return 1;
    for (int64_t i = 0; i < nl; i++) {
        int64_t g = first + i;
        long was = bad;
        bad += part->p.gid[i] != g;
        for (int f = 0; f < shard_particle_n_fields; f++) {
            const shard_field_desc *d = &shard_particle_fields[f];
            if (!(d->flags & SHARD_FIELD_STATE))
                continue;
            size_t rb = shard_field_row_bytes(d);
            bad += memcmp((const char *)shard_particles_array(&part->p, d) + (size_t)i * rb,
                          (const char *)shard_particles_array(&whole->p, d) + (size_t)g * rb, rb) != 0;
        }
        int sec = part->section_of[i];
        bad += sec != whole->section_of[g];
        if (sec >= 0 && sec == whole->section_of[g]) {
            const shard_block *a = &part->blocks[sec], *b = &whole->blocks[sec];
            for (int r = 0; r < a->n_rows; r++) {
                const shard_field_desc *d = &a->rows[r];
                if (!(d->flags & SHARD_FIELD_STATE))
                    continue;
                size_t rb = shard_field_row_bytes(d);
                bad += memcmp((const char *)shard_field_array(a, d) + (size_t)i * rb,
                              (const char *)shard_field_array(b, d) + (size_t)g * rb, rb) != 0;
            }
        }
        int64_t a0 = part->bonds.start[i], a1 = part->bonds.start[i + 1];
        int64_t b0 = whole->bonds.start[g], b1 = whole->bonds.start[g + 1];
        if (a1 - a0 != b1 - b0) {
            bad++;
        } else {
            for (int64_t e = 0; e < a1 - a0; e++)
                bad += part->partner[a0 + e] != (int64_t)whole->bonds.idx[b0 + e] ||
                       part->broken[a0 + e] != whole->broken[b0 + e];
        }
        for (int q = 0; q < 2; q++) {
            const shard_pairlist *la = &part->lists[q], *lb = &whole->lists[q];
            int64_t c0 = la->start[i], c1 = la->start[i + 1], d0 = lb->start[g], d1 = lb->start[g + 1];
            if (c1 - c0 != d1 - d0) {
                bad++;
                continue;
            }
            for (int64_t e = 0; e < c1 - c0; e++)
                bad += la->key[c0 + e] != lb->key[d0 + e] ||
                       memcmp(la->val + 3 * (c0 + e), lb->val + 3 * (d0 + e), 3 * sizeof(double)) != 0 ||
                       (e > 0 && la->key[c0 + e] <= la->key[c0 + e - 1]);
        }
        if (bad != was && was == 0)
            fprintf(stderr, "FAIL rank %d: particle %lld differs between the range and the whole load\n", me,
                    (long long)g);
    }
    return bad;
}

/* ------------------------------------------------------------------------------------------------------------
 * Damaged copies (rank 0, serial HDF5)
 * ------------------------------------------------------------------------------------------------------------ */

static int copy_file(const char *from, const char *to)
{
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    int ok = a && b;
    char buf[1 << 16];
    size_t n;
    while (ok && (n = fread(buf, 1, sizeof buf, a)) > 0)
        ok = fwrite(buf, 1, n, b) == n;
    if (a)
        fclose(a);
    if (b && fclose(b) != 0)
        ok = 0;
    return ok ? 0 : -1;
}

/* The whole 1-d dataset `name` as int64 (new array, *n rows), or NULL. */
static int64_t *read_i64(hid_t f, const char *name, int64_t *n)
{
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    if (d < 0)
        return NULL;
    hid_t sp = H5Dget_space(d);
    hsize_t dims[1] = {0};
    H5Sget_simple_extent_dims(sp, dims, NULL);
    *n = (int64_t)dims[0];
    int64_t *v = malloc((size_t)dims[0] * sizeof *v + 8);
    if (H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) {
        free(v);
        v = NULL;
    }
    H5Sclose(sp);
    H5Dclose(d);
    return v;
}

/* Element (row, comp) of dataset `name` set to the bytes of *v, of memory type mt. */
static int write_one(hid_t f, const char *name, int64_t row, int comp, hid_t mt, const void *v)
{
    hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    if (d < 0)
        return -1;
    hid_t fs = H5Dget_space(d);
    hsize_t start[2] = {(hsize_t)row, (hsize_t)comp}, one[2] = {1, 1};
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, one, NULL);
    hid_t ms = H5Screate_simple(1, one, NULL);
    herr_t rc = H5Dwrite(d, mt, ms, fs, H5P_DEFAULT, v);
    H5Sclose(ms), H5Sclose(fs), H5Dclose(d);
    return rc < 0 ? -1 : 0;
}

/* The cases: each a damaged copy of the good file and a piece of the message both readers must give. */
enum {
    CASE_ASYM,
    CASE_BADLIST,
    CASE_GID_DUP,
    CASE_GID_MOVED,
    CASE_SECTION_DUP,
    CASE_SECTION_PILE,
    CASE_COUNT,
    CASE_KEYS,
    CASE_CHECKSUM,
    N_CASES
};
static const char *const case_name[N_CASES] = {"asymmetric-bond", "invalid-bond-list", "global-id-duplicate",
                                               "global-id-moved", "section-id-duplicate", "section-ids-piled",
                                               "bond-count", "keys-not-increasing", "checksum"};
static const char *const case_want[N_CASES] = {"has no partner bond", "bond list of particle",
                                               "/particles/global_id is not a permutation",
                                               "/particles/global_id is not a permutation",
                                               "/solid/global_id holds an id out of range or given twice (row 7)",
                                               "/solid/global_id holds an id out of range or given twice (row",
                                               "/bonds/count adds up to", "keys not increasing",
                                               "checksum mismatch: the data is corrupt"};

/* Makes damaged copy `k` of good at path; 0, or -1 when this file has nothing to damage that way.  Where a
 * message names the first offender, several rows spread over the file are damaged, so that the one named
 * depends on the order the check goes in (file rows, or global ids), which differ once the writer had more than
 * one rank. */
static int damage(int k, const char *good, const char *path)
{
    if (copy_file(good, path) != 0)
        return -1;
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0)
        return -1;
    int rc = -1;
    int64_t n = 0, nb = 0, ns = 0, ne = 0;
    int64_t *gid = read_i64(f, "/particles/global_id", &n);
    int64_t *partner = read_i64(f, "/bonds/partner", &nb);
    int64_t *sgid = read_i64(f, "/solid/global_id", &ns);
    int64_t *key = read_i64(f, "/contact_memory/key", &ne);
    int32_t *count = calloc((size_t)n + 1, sizeof *count), *lcount = calloc((size_t)n + 1, sizeof *lcount);
    int64_t *bstart = calloc((size_t)n + 1, sizeof *bstart), *lstart = calloc((size_t)n + 1, sizeof *lstart);
    hid_t d = H5Dopen2(f, "/bonds/count", H5P_DEFAULT);
    herr_t r1 = H5Dread(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, count);
    H5Dclose(d);
    d = H5Dopen2(f, "/contact_memory/count", H5P_DEFAULT);
    herr_t r2 = H5Dread(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, lcount);
    H5Dclose(d);
    if (!gid || !partner || !sgid || !key || r1 < 0 || r2 < 0 || n < 8)
        goto done;
    for (int64_t r = 0; r < n; r++) /* where each file row's entries start */
        bstart[r + 1] = bstart[r] + count[r], lstart[r + 1] = lstart[r] + lcount[r];
    int64_t rows[4] = {n / 2, n / 5, (3 * n) / 4, n - 1};
    switch (k) {
    case CASE_ASYM: /* in four file rows, the last partner moved past the end of the list to a particle with no
                     * bond to it: the lists stay valid, bonds lose their reverses */
        for (int t = 0; t < 4; t++) {
            int64_t r = rows[t];
            while (r < n && count[r] < 1)
                r++;
            if (r == n)
                continue;
            int64_t e = bstart[r] + count[r] - 1, j = partner[e] + 1;
            while (j == gid[r])
                j++;
            if (j < n && write_one(f, "/bonds/partner", e, 0, H5T_NATIVE_INT64, &j) == 0)
                rc = 0;
        }
        break;
    case CASE_BADLIST: /* a partner out of range in three file rows; the first in the file is named */
        for (int t = 1; t < 4; t++) {
            int64_t r = rows[t], j = n + 5 + t;
            while (r < n && count[r] < 1)
                r++;
            if (r < n && write_one(f, "/bonds/partner", bstart[r], 0, H5T_NATIVE_INT64, &j) == 0)
                rc = 0;
        }
        break;
    case CASE_GID_DUP: /* the row of particle 1 names particle 0: both ids have the same owner at any rank count
                        * up to n / 2, so each owner still gets as many ids as it owns, one of them twice */
        for (int64_t r = 0, zero = 0; r < n; r++)
            if (gid[r] == 1)
                rc = write_one(f, "/particles/global_id", r, 0, H5T_NATIVE_INT64, &zero);
        break;
    case CASE_GID_MOVED: /* the row of particle n - 1 names particle 0: one owner is sent an id too many */
        for (int64_t r = 0, zero = 0; r < n; r++)
            if (gid[r] == n - 1)
                rc = write_one(f, "/particles/global_id", r, 0, H5T_NATIVE_INT64, &zero);
        break;
    case CASE_SECTION_DUP: /* the last row, and row 7, name row 3's particle: row 7 is the first offender */
        if (ns > 8)
            rc = write_one(f, "/solid/global_id", ns - 1, 0, H5T_NATIVE_INT64, &sgid[3]) ||
                 write_one(f, "/solid/global_id", 7, 0, H5T_NATIVE_INT64, &sgid[3]);
        break;
    case CASE_SECTION_PILE: /* the second half of the rows all name the last row's particle: its owner is sent
                             * more ids than its share (the range reader takes them in rounds at 2 ranks and
                             * more), and the first offender is the second row of the half */
        rc = 0;
        for (int64_t r = ns / 2; r < ns - 1 && rc == 0; r++)
            rc = write_one(f, "/solid/global_id", r, 0, H5T_NATIVE_INT64, &sgid[ns - 1]);
        break;
    case CASE_COUNT: { /* one bond less than n_bonds */
        int64_t r = n / 3;
        while (r < n && count[r] < 1)
            r++;
        int32_t v = r < n ? count[r] - 1 : 0;
        if (r < n)
            rc = write_one(f, "/bonds/count", r, 0, H5T_NATIVE_INT32, &v);
        break;
    }
    case CASE_KEYS: /* the first two keys swapped in every contact memory row of two entries or more: the
                     * particle named is the smallest id among them */
        for (int64_t r = 0; r < n; r++)
            if (lcount[r] >= 2 &&
                write_one(f, "/contact_memory/key", lstart[r], 0, H5T_NATIVE_INT64, &key[lstart[r] + 1]) == 0 &&
                write_one(f, "/contact_memory/key", lstart[r] + 1, 0, H5T_NATIVE_INT64, &key[lstart[r]]) == 0)
                rc = 0;
        break;
    case CASE_CHECKSUM: { /* one bit of one velocity component */
        double v[3];
        hid_t dv = H5Dopen2(f, "/particles/velocity", H5P_DEFAULT), fs = H5Dget_space(dv);
        hsize_t start[2] = {(hsize_t)(n / 2), 0}, cnt[2] = {1, 3};
        H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt, NULL);
        hid_t ms = H5Screate_simple(2, cnt, NULL);
        uint64_t bits;
        if (H5Dread(dv, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, v) >= 0) {
            memcpy(&bits, &v[1], sizeof bits);
            bits ^= 1u;
            memcpy(&v[1], &bits, sizeof bits);
            rc = H5Dwrite(dv, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, v) < 0 ? -1 : 0;
        }
        H5Sclose(ms), H5Sclose(fs), H5Dclose(dv);
        break;
    }
    }
done:
    free(gid), free(partner), free(sgid), free(key), free(count), free(lcount), free(bstart), free(lstart);
    if (H5Fclose(f) < 0)
        rc = -1;
    return rc;
}

/* Both readers on a bad file: SHARD_EXIT_INPUT, the same message (with `want` in it), nothing left allocated. */
static void check_refused(shard_comm *c, const char *path, const char *what, const char *want, request *q)
{
    int me = shard_comm_rank(c);
    shard_checkpoint_data part, whole;
    shard_error e_part, e_whole;
    int rc = shard_checkpoint_load_range(c, path, 1, &q->sec, 2, q->lists, &part, &e_part);
    int rw = shard_checkpoint_load(path, 1, &q->sec, 2, q->lists, &whole, &e_whole);
    int ok = rc == SHARD_EXIT_INPUT && rw == SHARD_EXIT_INPUT && e_part.code == SHARD_EXIT_INPUT &&
             strcmp(e_part.msg, e_whole.msg) == 0 && strstr(e_part.msg, want) != NULL && part.p.gid == NULL &&
             part.scene_text == NULL && part.partner == NULL && part.section_of == NULL;
    if (!ok)
        fprintf(stderr, "FAIL rank %d: %s: range reader %d '%s', whole-file reader %d '%s' (want '%s')\n", me, what,
                rc, e_part.msg, rw, e_whole.msg, want);
    else if (me == 0)
        printf("  %s: refused: %s\n", what, e_part.msg);
    SHARD_ENSURE(ok);
    shard_checkpoint_data_free(&part);
    shard_checkpoint_data_free(&whole);
}

int main(int argc, char **argv)
{
    shard_comm *c = shard_comm_init(&argc, &argv);
    int me = shard_comm_rank(c), size = shard_comm_size(c);
    if (argc < 2) {
        fprintf(stderr, "usage: io_load_range DIR\n");
        return 2;
    }
    char text[sizeof scene_fmt + 1200];
    snprintf(text, sizeof text, scene_fmt, STEPS, argv[1]);
    shard_overrides ov = shard_default_overrides();
    shard_error err;
    shard_sim *s = shard_sim_create(c, "load_range.yaml", text, strlen(text), &ov, &err);
    if (!s) {
        fprintf(stderr, "FAIL: %s\n", err.msg);
        return 1;
    }
    for (int k = 0; k < STEPS; k++)
        shard_sim_step(s);
    SHARD_ENSURE(shard_sim_write_checkpoint(s, &err) == 0);
    if (err.code)
        fprintf(stderr, "FAIL: %s\n", err.msg);
    int64_t n = shard_sim_total_particles(s);
    uint64_t hash = shard_sim_hash(s);
    request q;
    request_init(&q, shard_sim_block(s, "solid"));
    char ck[1200];
    snprintf(ck, sizeof ck, "%s/checkpoint_%06d.h5", argv[1], STEPS);
    shard_comm_barrier(c);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);

    /* The good file: each range against the whole load, and the ranges tile 0..n-1. */
    shard_checkpoint_data part, whole;
    shard_error e_part, e_whole;
    int rc = shard_checkpoint_load_range(c, ck, 1, &q.sec, 2, q.lists, &part, &e_part);
    int rw = shard_checkpoint_load(ck, 1, &q.sec, 2, q.lists, &whole, &e_whole);
    if (rc || rw)
        fprintf(stderr, "FAIL rank %d: range load: %s; whole load: %s\n", me, e_part.msg, e_whole.msg);
    SHARD_ENSURE(rc == 0 && rw == 0);
    int64_t bonds_here = 0, entries_here = 0;
    if (rc == 0 && rw == 0) {
        SHARD_ENSURE(whole.n == n && whole.state_hash == hash && whole.n_ranks == size);
        long bad = compare_range(&part, &whole, me, size);
        if (bad)
            fprintf(stderr, "FAIL rank %d: %ld rows of ids %lld..%lld differ\n", me, bad, (long long)part.first,
                    (long long)(part.first + part.n_local - 1));
        SHARD_ENSURE(bad == 0);
        SHARD_ENSURE(shard_comm_exscan_i64(c, part.n_local) == part.first);
        SHARD_ENSURE(shard_comm_sum_i64(c, part.n_local) == n);
        bonds_here = part.bonds.start[part.n_local];
        entries_here = (int64_t)shard_pairlist_size(&part.lists[0]);
        SHARD_ENSURE(shard_comm_sum_i64(c, bonds_here) == whole.n_bonds);
        SHARD_ENSURE(shard_comm_sum_i64(c, entries_here) == (int64_t)shard_pairlist_size(&whole.lists[0]));
    }
    /* The scene must be one where the comparison and the cases below have something to see: bonds, broken ones,
     * contact memories. */
    int64_t n_broken = 0;
    for (int64_t e = 0; rw == 0 && e < whole.n_bonds; e++)
        n_broken += whole.broken[e];
    SHARD_ENSURE(rw != 0 || (whole.n_bonds > 0 && n_broken > 0 && shard_pairlist_size(&whole.lists[0]) > 0));
    shard_checkpoint_data_free(&part);
    shard_checkpoint_data_free(&whole);

    /* Damaged copies, one defect each. */
    for (int k = 0; k < N_CASES; k++) {
        char bad[1300];
        snprintf(bad, sizeof bad, "%s/%s.h5", argv[1], case_name[k]);
        int made = me == 0 ? damage(k, ck, bad) == 0 : 0;
        shard_comm_bcast(c, &made, sizeof made, 0);
        if (!made) {
            if (me == 0)
                fprintf(stderr, "FAIL: could not make the damaged copy %s\n", bad);
            SHARD_ENSURE(made);
            continue;
        }
        check_refused(c, bad, case_name[k], case_want[k], &q);
    }
    char none[1300];
    snprintf(none, sizeof none, "%s/none.h5", argv[1]);
    check_refused(c, none, "missing", "cannot open checkpoint", &q);

    int fails = shard_test_failures;
    shard_comm_max_ints(c, &fails, 1);
    if (me == 0)
        printf("%s: range load of a checkpoint on %d rank(s), %lld particles, same refusals as the whole load\n",
               fails ? "FAIL" : "PASS", size, (long long)n);
    shard_sim_destroy(&s);
    shard_comm_finalize(&c);
    return fails ? 1 : 0;
}
#endif
