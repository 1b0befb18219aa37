/* Mesh reading (io): closed triangle meshes from binary and ASCII STL and from OBJ files, checked that they bound
 * a solid, and loaded into a scene's mesh shapes (see mesh_io.h).
 *
 * This file owns the three readers (STL's binary/ASCII choice is made from the content, the STL/OBJ choice
 * from the extension), the welding of STL's per-triangle vertex copies into shared vertices, and the closedness
 * and orientation check.  Every message a user can see is formatted here with the scene file's location of the
 * mesh's `file` value.  The mesh itself and its geometry are core (mesh.h); sampling it is physics (sample.h).
 */
#include "shard/mesh_io.h"

#include "shard/fileio.h"
#include "shard/hash.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------------------------
 * Errors
 * ---------------------------------------------------------------------------------------------------------- */

/* All reader and checker messages go through here so that a caller without a scene (a tool, a test) can pass
 * scene_path = NULL and still get the bare message. */
static int shard_mesh_fail(shard_error *err, const char *scene_path, const shard_src_loc *loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int shard_mesh_fail(shard_error *err, const char *scene_path, const shard_src_loc *loc, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (scene_path)
        return shard_error_at(err, scene_path, loc, "%s", text);
    return shard_error_set(err, SHARD_EXIT_INPUT, "%s", text);
}

/* A token from the file, made printable and short: garbage input must not put control bytes in a message. */
static void shard_mesh_token_text(char out[48], const char *s, size_t len)
{
    size_t n = len > 40 ? 40 : len, k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        out[k++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (len > n) {
        out[k++] = '.';
        out[k++] = '.';
        out[k++] = '.';
    }
    out[k] = '\0';
}

/* ------------------------------------------------------------------------------------------------------------
 * Small helpers
 * ---------------------------------------------------------------------------------------------------------- */

static int shard_mesh_lower(int c) { return (c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c; }

/* Case-insensitive comparison of a (not NUL-terminated) token with a lowercase word. */
static int shard_mesh_ieq(const char *tok, size_t len, const char *word)
{
    size_t n = strlen(word);
    if (len != n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (shard_mesh_lower((unsigned char)tok[i]) != word[i])
            return 0;
    return 1;
}

static int shard_mesh_is_space(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Parses a whole token as a finite double.  The file buffer is NUL-terminated and tokens end at white space
 * or at that NUL, so strtod cannot run past the buffer; an embedded NUL or trailing junk fails the end check. */
static int shard_mesh_parse_double(const char *tok, size_t len, double *out)
{
    char *end;
    if (len == 0 || len > 400)
        return 0;
    double v = strtod(tok, &end);
    if (end != tok + len || !isfinite(v))
        return 0;
    *out = v;
    return 1;
}

static size_t shard_mesh_pow2_at_least(size_t n)
{
    size_t c = 16;
    while (c < n)
        c *= 2;
    return c;
}

/* The message of a failed shard_file_regular or shard_file_slurp (e: its return value, stage: its stage). */
static int shard_mesh_file_fail(int e, const char *stage, const char *path, const char *scene_path,
                                const shard_src_loc *loc, shard_error *err)
{
    if (e == SHARD_FILE_NOT_REGULAR)
        return shard_mesh_fail(err, scene_path, loc, "'%s' is %s, not a regular file", path, stage);
    if (e == EFBIG)
        return shard_mesh_fail(err, scene_path, loc, "'%s' is larger than %zu GiB", path, SHARD_MESH_MAX_BYTES >> 30);
    return shard_mesh_fail(err, scene_path, loc, "cannot %s '%s': %s", stage, path, strerror(e));
}

/* Reads the whole file (a regular file of at most SHARD_MESH_MAX_BYTES). */
static int shard_mesh_slurp(const char *path, const char *scene_path, const shard_src_loc *loc, char **data,
                            size_t *size, shard_error *err)
{
    const char *stage;
    int e = shard_file_slurp(path, SHARD_MESH_MAX_BYTES, data, size, &stage);
    return e ? shard_mesh_file_fail(e, stage, path, scene_path, loc, err) : 0;
}

/* ------------------------------------------------------------------------------------------------------------
 * Building meshes: growable vertex/triangle arrays and STL welding
 * ---------------------------------------------------------------------------------------------------------- */

typedef struct shard_mesh_builder {
    double *v;
    size_t nv, cap_v;
    int64_t *t;
    size_t nt, cap_t;
    /* welding table (STL only): open addressing, slots hold vertex index + 1, 0 = empty */
    size_t *slots;
    size_t cap_slots;
} shard_mesh_builder;

static void shard_mesh_builder_free(shard_mesh_builder *b)
{
    free(b->v);
    free(b->t);
    free(b->slots);
    memset(b, 0, sizeof *b);
}

static size_t shard_mesh_add_vertex(shard_mesh_builder *b, double x, double y, double z)
{
    shard_reserve((void **)&b->v, &b->cap_v, 3 * (b->nv + 1), sizeof(double));
    b->v[3 * b->nv] = x;
    b->v[3 * b->nv + 1] = y;
    b->v[3 * b->nv + 2] = z;
    return b->nv++;
}

static void shard_mesh_add_triangle(shard_mesh_builder *b, int64_t i0, int64_t i1, int64_t i2)
{
    shard_reserve((void **)&b->t, &b->cap_t, 3 * (b->nt + 1), sizeof(int64_t));
    b->t[3 * b->nt] = i0;
    b->t[3 * b->nt + 1] = i1;
    b->t[3 * b->nt + 2] = i2;
    b->nt++;
}

static uint64_t shard_mesh_hash_point(const double *p)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    for (int a = 0; a < 3; a++) {
        uint64_t bits;
        memcpy(&bits, &p[a], sizeof bits);
        h = shard_hash_mix(h ^ bits);
    }
    return h;
}

static void shard_mesh_weld_rehash(shard_mesh_builder *b, size_t cap)
{
    free(b->slots);
    b->slots = shard_calloc(cap, sizeof(size_t));
    b->cap_slots = cap;
    for (size_t i = 0; i < b->nv; i++) {
        size_t s = (size_t)shard_mesh_hash_point(&b->v[3 * i]) & (cap - 1);
        while (b->slots[s])
            s = (s + 1) & (cap - 1);
        b->slots[s] = i + 1;
    }
}

/* STL stores each triangle's corners separately; vertices are merged only when their coordinates are exactly
 * equal, which is what a closed STL's exporter writes for a shared corner (no tolerance: a tolerance could
 * merge distinct nearby vertices and change the topology).  -0.0 is folded into +0.0 since they compare equal
 * but hash differently. */
static size_t shard_mesh_weld(shard_mesh_builder *b, double x, double y, double z)
{
    double p[3] = {x == 0 ? 0.0 : x, y == 0 ? 0.0 : y, z == 0 ? 0.0 : z};
    if (2 * (b->nv + 1) > b->cap_slots)
        shard_mesh_weld_rehash(b, shard_mesh_pow2_at_least(4 * (b->nv + 1)));
    size_t mask = b->cap_slots - 1;
    size_t s = (size_t)shard_mesh_hash_point(p) & mask;
    while (b->slots[s]) {
        const double *q = &b->v[3 * (b->slots[s] - 1)];
        if (q[0] == p[0] && q[1] == p[1] && q[2] == p[2])
            return b->slots[s] - 1;
        s = (s + 1) & mask;
    }
    size_t i = shard_mesh_add_vertex(b, p[0], p[1], p[2]);
    b->slots[s] = i + 1;
    return i;
}

static void shard_mesh_finish(shard_mesh_builder *b, shard_mesh *mesh)
{
    /* callers only finish builders with triangles, hence with vertices */
    mesh->n_vertices = b->nv;
    mesh->vertices = shard_realloc(b->v, 3 * b->nv * sizeof(double));
    mesh->n_triangles = b->nt;
    mesh->triangles = shard_realloc(b->t, 3 * b->nt * sizeof(int64_t));
    b->v = NULL;
    b->t = NULL;
    shard_mesh_builder_free(b);
}

/* ------------------------------------------------------------------------------------------------------------
 * STL
 * ---------------------------------------------------------------------------------------------------------- */

static uint32_t shard_mesh_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static double shard_mesh_lef32(const unsigned char *p)
{
    uint32_t bits = shard_mesh_le32(p);
    float f;
    memcpy(&f, &bits, sizeof f);
    return (double)f;
}

static int shard_mesh_read_stl_binary(const char *path, const char *scene_path, const shard_src_loc *loc,
                                      const unsigned char *data, uint32_t n, shard_mesh_builder *b, shard_error *err)
{
    for (uint32_t t = 0; t < n; t++) {
        const unsigned char *rec = data + 84 + 50 * (size_t)t + 12; /* skip the normal: recomputed when needed */
        int64_t idx[3];
        for (int c = 0; c < 3; c++) {
            double x = shard_mesh_lef32(rec + 12 * c);
            double y = shard_mesh_lef32(rec + 12 * c + 4);
            double z = shard_mesh_lef32(rec + 12 * c + 8);
            if (!isfinite(x) || !isfinite(y) || !isfinite(z))
                return shard_mesh_fail(err, scene_path, loc, "'%s': triangle %u has a non-finite vertex coordinate",
                                       path, t + 1);
            idx[c] = (int64_t)shard_mesh_weld(b, x, y, z);
        }
        shard_mesh_add_triangle(b, idx[0], idx[1], idx[2]);
    }
    return 0;
}

/* Whitespace tokenizer over the NUL-terminated file buffer that tracks line numbers for messages. */
typedef struct shard_mesh_lexer {
    const char *p, *end;
    size_t line;
    const char *tok;
    size_t len, tok_line;
} shard_mesh_lexer;

static int shard_mesh_next(shard_mesh_lexer *lx)
{
    while (lx->p < lx->end && shard_mesh_is_space((unsigned char)*lx->p)) {
        if (*lx->p == '\n')
            lx->line++;
        lx->p++;
    }
    lx->tok = lx->p;
    lx->tok_line = lx->line;
    while (lx->p < lx->end && !shard_mesh_is_space((unsigned char)*lx->p))
        lx->p++;
    lx->len = (size_t)(lx->p - lx->tok);
    /* at the end of the file, report the last line rather than the empty one after the final newline */
    if (lx->len == 0 && lx->line > 1 && lx->end[-1] == '\n')
        lx->tok_line = lx->line - 1;
    return lx->len > 0;
}

/* The solid's name (and endsolid's) runs to the end of the line and may contain anything. */
static void shard_mesh_skip_line(shard_mesh_lexer *lx)
{
    while (lx->p < lx->end && *lx->p != '\n')
        lx->p++;
}

static int shard_mesh_expect(shard_mesh_lexer *lx, const char *word, const char *path, const char *scene_path,
                             const shard_src_loc *loc, shard_error *err)
{
    if (shard_mesh_next(lx) && shard_mesh_ieq(lx->tok, lx->len, word))
        return 0;
    if (lx->len == 0)
        return shard_mesh_fail(err, scene_path, loc, "'%s' line %zu: unexpected end of file, expected '%s'", path,
                               lx->tok_line, word);
    char got[48];
    shard_mesh_token_text(got, lx->tok, lx->len);
    return shard_mesh_fail(err, scene_path, loc, "'%s' line %zu: expected '%s', got '%s'", path, lx->tok_line, word,
                           got);
}

static int shard_mesh_expect_number(shard_mesh_lexer *lx, double *v, int finite_only, const char *path,
                                    const char *scene_path, const shard_src_loc *loc, shard_error *err)
{
    if (!shard_mesh_next(lx))
        return shard_mesh_fail(err, scene_path, loc, "'%s' line %zu: unexpected end of file, expected a number", path,
                               lx->tok_line);
    if (shard_mesh_parse_double(lx->tok, lx->len, v))
        return 0;
    /* Normals are ignored, and some exporters write "nan" for degenerate facets' normals. */
    if (!finite_only) {
        char *end;
        (void)strtod(lx->tok, &end);
        if (end == lx->tok + lx->len) {
            *v = 0;
            return 0;
        }
    }
    char got[48];
    shard_mesh_token_text(got, lx->tok, lx->len);
    return shard_mesh_fail(err, scene_path, loc, "'%s' line %zu: expected a %snumber, got '%s'", path, lx->tok_line,
                           finite_only ? "finite " : "", got);
}

static int shard_mesh_read_stl_ascii(const char *path, const char *scene_path, const shard_src_loc *loc,
                                     const char *data, size_t size, shard_mesh_builder *b, shard_error *err)
{
    shard_mesh_lexer lx = {data, data + size, 1, data, 0, 1};
    int rc;
    if ((rc = shard_mesh_expect(&lx, "solid", path, scene_path, loc, err)))
        return rc;
    shard_mesh_skip_line(&lx);
    for (;;) {
        if (!shard_mesh_next(&lx))
            return shard_mesh_fail(err, scene_path, loc,
                                   "'%s' line %zu: unexpected end of file, expected 'facet' or 'endsolid'", path,
                                   lx.tok_line);
        if (shard_mesh_ieq(lx.tok, lx.len, "endsolid")) {
            shard_mesh_skip_line(&lx);
            /* Some tools concatenate several solids into one file. */
            if (!shard_mesh_next(&lx))
                return 0;
            if (!shard_mesh_ieq(lx.tok, lx.len, "solid")) {
                char got[48];
                shard_mesh_token_text(got, lx.tok, lx.len);
                return shard_mesh_fail(err, scene_path, loc, "'%s' line %zu: expected 'solid' or end of file, got '%s'",
                                       path, lx.tok_line, got);
            }
            shard_mesh_skip_line(&lx);
            continue;
        }
        if (!shard_mesh_ieq(lx.tok, lx.len, "facet")) {
            char got[48];
            shard_mesh_token_text(got, lx.tok, lx.len);
            return shard_mesh_fail(err, scene_path, loc, "'%s' line %zu: expected 'facet' or 'endsolid', got '%s'",
                                   path, lx.tok_line, got);
        }
        double ignored;
        if ((rc = shard_mesh_expect(&lx, "normal", path, scene_path, loc, err)))
            return rc;
        for (int a = 0; a < 3; a++)
            if ((rc = shard_mesh_expect_number(&lx, &ignored, 0, path, scene_path, loc, err)))
                return rc;
        if ((rc = shard_mesh_expect(&lx, "outer", path, scene_path, loc, err)) ||
            (rc = shard_mesh_expect(&lx, "loop", path, scene_path, loc, err)))
            return rc;
        int64_t idx[3];
        for (int c = 0; c < 3; c++) {
            double x[3];
            if ((rc = shard_mesh_expect(&lx, "vertex", path, scene_path, loc, err)))
                return rc;
            for (int a = 0; a < 3; a++)
                if ((rc = shard_mesh_expect_number(&lx, &x[a], 1, path, scene_path, loc, err)))
                    return rc;
            idx[c] = (int64_t)shard_mesh_weld(b, x[0], x[1], x[2]);
        }
        if ((rc = shard_mesh_expect(&lx, "endloop", path, scene_path, loc, err)) ||
            (rc = shard_mesh_expect(&lx, "endfacet", path, scene_path, loc, err)))
            return rc;
        shard_mesh_add_triangle(b, idx[0], idx[1], idx[2]);
    }
}

/* Decides binary vs ASCII.  The size rule comes first because binary exporters often begin the 80-byte header
 * with "solid": a file whose size is exactly 84 + 50 n for the count n it declares is binary.  Otherwise a
 * file that starts with "solid" and contains no control bytes is ASCII; anything else is a damaged binary. */
static int shard_mesh_read_stl(const char *path, const char *scene_path, const shard_src_loc *loc, const char *data,
                               size_t size, shard_mesh_builder *b, shard_error *err)
{
    const unsigned char *u = (const unsigned char *)data;
    uint32_t n = size >= 84 ? shard_mesh_le32(u + 80) : 0;
    uint64_t expected = 84 + 50 * (uint64_t)n;
    if (size >= 84 && expected == size)
        return shard_mesh_read_stl_binary(path, scene_path, loc, u, n, b, err);

    size_t bom = size >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0, s = bom;
    while (s < size && shard_mesh_is_space(u[s]))
        s++;
    int text =
        size - s >= 5 && shard_mesh_ieq(data + s, 5, "solid") && (size - s == 5 || shard_mesh_is_space(u[s + 5]));
    for (size_t i = 0; text && i < size; i++)
        if ((u[i] < 0x20 && !shard_mesh_is_space(u[i])) || u[i] == 0x7f)
            text = 0;
    if (text)
        return shard_mesh_read_stl_ascii(path, scene_path, loc, data + bom, size - bom, b, err);

    if (size == 0)
        return shard_mesh_fail(err, scene_path, loc, "'%s': empty file", path);
    if (size < 84)
        return shard_mesh_fail(err, scene_path, loc, "'%s': truncated binary STL (expected at least 84 bytes, got %zu)",
                               path, size);
    if (size < expected)
        return shard_mesh_fail(err, scene_path, loc, "'%s': truncated binary STL (expected %llu bytes, got %zu)", path,
                               (unsigned long long)expected, size);
    return shard_mesh_fail(err, scene_path, loc,
                           "'%s': binary STL declares %u triangles (%llu bytes) but the file has %zu bytes", path, n,
                           (unsigned long long)expected, size);
}

/* ------------------------------------------------------------------------------------------------------------
 * OBJ
 * ---------------------------------------------------------------------------------------------------------- */

/* One line of an OBJ file, split into tokens on the fly; '#' starts a comment anywhere. */
typedef struct shard_mesh_line {
    const char *p, *end; /* the line without its '\n' and comment */
    const char *tok;
    size_t len;
} shard_mesh_line;

static int shard_mesh_line_next(shard_mesh_line *ln)
{
    while (ln->p < ln->end && shard_mesh_is_space((unsigned char)*ln->p))
        ln->p++;
    ln->tok = ln->p;
    while (ln->p < ln->end && !shard_mesh_is_space((unsigned char)*ln->p))
        ln->p++;
    ln->len = (size_t)(ln->p - ln->tok);
    return ln->len > 0;
}

/* Advances *pos past the next line of data[0..size) and returns it with its first token (the keyword). */
static shard_mesh_line shard_mesh_obj_line(const char *data, size_t size, size_t *pos)
{
    const char *start = data + *pos, *stop = data + size;
    const char *nl = memchr(start, '\n', (size_t)(stop - start));
    const char *line_end = nl ? nl : stop;
    *pos = nl ? (size_t)(nl - data) + 1 : size;
    const char *hash = memchr(start, '#', (size_t)(line_end - start));
    shard_mesh_line ln = {start, hash ? hash : line_end, start, 0};
    shard_mesh_line_next(&ln);
    return ln;
}

static int shard_mesh_obj_ignored(const char *tok, size_t len)
{
    static const char *const words[] = {"vn",       "vt",         "vp",        "g",      "o",     "s",     "usemtl",
                                        "mtllib",   "l",          "p",         "mg",     "lod",   "bevel", "c_interp",
                                        "d_interp", "shadow_obj", "trace_obj", "usemap", "maplib"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (len == strlen(words[i]) && memcmp(tok, words[i], len) == 0)
            return 1;
    return 0;
}

/* Parses "a", "a/b", "a/b/c" or "a//c" and returns a; the texture and normal indices are only syntax-checked. */
static int shard_mesh_obj_index(const char *tok, size_t len, long long *out)
{
    const char *p = tok, *end = tok + len;
    int part = 0;
    while (p <= end) {
        const char *q = p;
        if (q < end && (*q == '-' || *q == '+'))
            q++;
        const char *digits = q;
        long long v = 0;
        while (q < end && *q >= '0' && *q <= '9') {
            if (v > (LLONG_MAX - 9) / 10)
                return 0;
            v = 10 * v + (*q - '0');
            q++;
        }
        if (q == digits) {
            if (part == 0 || q != p)
                return 0; /* the vertex index is required; a lone sign is not an index */
        } else if (part == 0) {
            *out = *p == '-' ? -v : v;
        }
        if (q == end)
            return 1;
        if (*q != '/' || part == 2)
            return 0;
        p = q + 1;
        part++;
    }
    return 0;
}

static int shard_mesh_read_obj(const char *path, const char *scene_path, const shard_src_loc *loc, const char *data,
                               size_t size, shard_mesh_builder *b, shard_error *err)
{
    /* First pass: count the vertices so that positive indices can refer to vertices defined further down and
     * the range check can name the file's vertex count. */
    size_t total = 0;
    for (size_t pos = 0; pos < size;) {
        shard_mesh_line ln = shard_mesh_obj_line(data, size, &pos);
        if (ln.len == 1 && ln.tok[0] == 'v')
            total++;
    }

    int64_t *face = NULL;
    size_t cap_face = 0, line_no = 0;
    char got[48];
    int rc = 0;
    for (size_t pos = 0; pos < size && !rc;) {
        shard_mesh_line ln = shard_mesh_obj_line(data, size, &pos);
        line_no++;
        if (ln.len == 0 || shard_mesh_obj_ignored(ln.tok, ln.len))
            continue;
        if (ln.len == 1 && ln.tok[0] == 'v') {
            double x[3];
            int k = 0;
            while (shard_mesh_line_next(&ln)) {
                double v;
                if (!shard_mesh_parse_double(ln.tok, ln.len, &v)) {
                    shard_mesh_token_text(got, ln.tok, ln.len);
                    rc = shard_mesh_fail(err, scene_path, loc, "'%s' line %zu: expected a finite number, got '%s'",
                                         path, line_no, got);
                    break;
                }
                if (k < 3)
                    x[k] = v;
                k++;
            }
            if (rc)
                break;
            /* x y z, the optional weight w, or the common x y z r g b colour extension */
            if (k < 3 || k > 7) {
                rc = shard_mesh_fail(err, scene_path, loc, "'%s' line %zu: a vertex needs 3 coordinates, got %d", path,
                                     line_no, k);
                break;
            }
            shard_mesh_add_vertex(b, x[0], x[1], x[2]);
        } else if (ln.len == 1 && ln.tok[0] == 'f') {
            size_t k = 0;
            while (shard_mesh_line_next(&ln)) {
                long long v = 0;
                if (!shard_mesh_obj_index(ln.tok, ln.len, &v)) {
                    shard_mesh_token_text(got, ln.tok, ln.len);
                    rc = shard_mesh_fail(err, scene_path, loc, "'%s' line %zu: bad face vertex '%s'", path, line_no,
                                         got);
                    break;
                }
                long long r;
                if (v > 0 && (unsigned long long)v <= total) {
                    r = v - 1;
                } else if (v < 0 && (unsigned long long)(-v) <= b->nv) {
                    r = (long long)b->nv + v; /* relative: -1 is the latest vertex */
                } else {
                    if (v == 0)
                        rc = shard_mesh_fail(err, scene_path, loc,
                                             "'%s' line %zu: face index 0 is invalid (indices start at 1)", path,
                                             line_no);
                    else if (v > 0)
                        rc = shard_mesh_fail(err, scene_path, loc,
                                             "'%s' line %zu: face index %lld out of range (%zu vertices)", path,
                                             line_no, v, total);
                    else
                        rc = shard_mesh_fail(err, scene_path, loc,
                                             "'%s' line %zu: face index %lld out of range (%zu vertices so far)", path,
                                             line_no, v, b->nv);
                    break;
                }
                shard_reserve((void **)&face, &cap_face, k + 1, sizeof(int64_t));
                face[k++] = (int64_t)r;
            }
            if (rc)
                break;
            if (k < 3) {
                rc = shard_mesh_fail(err, scene_path, loc, "'%s' line %zu: a face needs at least 3 vertices, got %zu",
                                     path, line_no, k);
                break;
            }
            /* Polygons become fans around their first vertex, which keeps the polygon's orientation. */
            for (size_t i = 1; i + 1 < k; i++)
                shard_mesh_add_triangle(b, face[0], face[i], face[i + 1]);
        } else {
            shard_mesh_token_text(got, ln.tok, ln.len);
            rc = shard_mesh_fail(err, scene_path, loc, "'%s' line %zu: unknown OBJ statement '%s'", path, line_no, got);
        }
    }
    free(face);
    return rc;
}

/* ------------------------------------------------------------------------------------------------------------
 * Public: read, transform, bounds, free
 * ---------------------------------------------------------------------------------------------------------- */

int shard_mesh_read(const char *path, const char *scene_path, const shard_src_loc *loc, shard_mesh *mesh,
                    shard_error *err)
{
    memset(mesh, 0, sizeof *mesh);
    /* A missing file, a folder, a FIFO or a device is named as such before its name's extension is looked at. */
    const char *stage;
    int e = shard_file_regular(path, &stage);
    if (e)
        return shard_mesh_file_fail(e, stage, path, scene_path, loc, err);
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    size_t elen = dot ? strlen(dot + 1) : 0;
    int is_stl = dot && shard_mesh_ieq(dot + 1, elen, "stl");
    int is_obj = dot && shard_mesh_ieq(dot + 1, elen, "obj");
    if (!is_stl && !is_obj)
        return shard_mesh_fail(err, scene_path, loc, "'%s': unknown mesh format (use .stl or .obj)", path);

    char *data = NULL;
    size_t size = 0;
    int rc = shard_mesh_slurp(path, scene_path, loc, &data, &size, err);
    if (rc)
        return rc;
    shard_mesh_builder b = {0};
    if (is_stl) {
        rc = shard_mesh_read_stl(path, scene_path, loc, data, size, &b, err);
    } else {
        /* some editors start text files with a UTF-8 byte-order mark */
        size_t bom = size >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
        rc = shard_mesh_read_obj(path, scene_path, loc, data + bom, size - bom, &b, err);
    }
    free(data);
    if (!rc && b.nt == 0)
        rc = shard_mesh_fail(err, scene_path, loc, "'%s': no triangles", path);
    if (rc) {
        shard_mesh_builder_free(&b);
        return rc;
    }
    shard_mesh_finish(&b, mesh);
    return 0;
}

/* ------------------------------------------------------------------------------------------------------------
 * Closedness
 * ---------------------------------------------------------------------------------------------------------- */

typedef struct shard_mesh_edge {
    int64_t lo, hi;  /* lo < hi; lo = -1 marks an empty slot */
    int32_t uses;    /* triangles using the edge */
    int32_t forward; /* of which traverse it lo -> hi */
} shard_mesh_edge;

static shard_mesh_edge *shard_mesh_edge_slot(shard_mesh_edge *tab, size_t mask, int64_t lo, int64_t hi)
{
    size_t s = (size_t)shard_hash_mix((uint64_t)lo * 0x9e3779b97f4a7c15ULL ^ (uint64_t)hi) & mask;
    while (tab[s].lo >= 0 && (tab[s].lo != lo || tab[s].hi != hi))
        s = (s + 1) & mask;
    return &tab[s];
}

int shard_mesh_check_closed(const shard_mesh *mesh, const char *mesh_path, const char *scene_path,
                            const shard_src_loc *loc, shard_error *err)
{
    const int64_t *t = mesh->triangles;
    const double *v = mesh->vertices;
    size_t nt = mesh->n_triangles;
    if (nt == 0)
        return shard_mesh_fail(err, scene_path, loc, "mesh '%s' has no triangles", mesh_path);

    for (size_t i = 0; i < nt; i++) {
        const int64_t *c = &t[3 * i];
        for (int k = 0; k < 3; k++)
            if (c[k] < 0 || (uint64_t)c[k] >= mesh->n_vertices)
                return shard_mesh_fail(err, scene_path, loc,
                                       "mesh '%s': triangle %zu uses vertex %lld, but there are %zu vertices",
                                       mesh_path, i, (long long)c[k], mesh->n_vertices);
        if (c[0] == c[1] || c[1] == c[2] || c[2] == c[0])
            return shard_mesh_fail(err, scene_path, loc,
                                   "mesh '%s' has a degenerate triangle %zu: vertices (%lld, %lld, %lld) repeat one",
                                   mesh_path, i, (long long)c[0], (long long)c[1], (long long)c[2]);
        const double *a = &v[3 * c[0]], *b = &v[3 * c[1]], *d = &v[3 * c[2]];
        /* Zero area <=> the cross product vanishes <=> all three coordinate-plane projections are degenerate;
         * tested exactly, so slivers (valid, if ugly) pass and only truly flat triangles are rejected. */
        if (shard_geom_orient2d(a[1], a[2], b[1], b[2], d[1], d[2]) == 0 &&
            shard_geom_orient2d(a[2], a[0], b[2], b[0], d[2], d[0]) == 0 &&
            shard_geom_orient2d(a[0], a[1], b[0], b[1], d[0], d[1]) == 0)
            return shard_mesh_fail(err, scene_path, loc,
                                   "mesh '%s' has a degenerate triangle %zu with zero area at (%g, %g, %g)", mesh_path,
                                   i, a[0], a[1], a[2]);
    }

    /* A closed, consistently oriented surface has 3 nt / 2 edges; the table is at most half full then. */
    size_t cap = shard_mesh_pow2_at_least(3 * nt + 16), mask = cap - 1, used = 0;
    shard_mesh_edge *tab = shard_malloc(cap * sizeof *tab);
    for (size_t s = 0; s < cap; s++)
        tab[s].lo = -1;
    for (size_t c = 0; c < 3 * nt; c++) {
        int64_t a = t[c], b = t[c % 3 == 2 ? c - 2 : c + 1];
        int64_t lo = a < b ? a : b, hi = a < b ? b : a;
        shard_mesh_edge *e = shard_mesh_edge_slot(tab, mask, lo, hi);
        if (e->lo < 0) {
            if (2 * (used + 1) > cap) {
                /* only an open or non-manifold mesh gets here: grow and re-insert */
                size_t ncap = 2 * cap;
                shard_mesh_edge *ntab = shard_malloc(ncap * sizeof *ntab);
                for (size_t s = 0; s < ncap; s++)
                    ntab[s].lo = -1;
                for (size_t s = 0; s < cap; s++)
                    if (tab[s].lo >= 0)
                        *shard_mesh_edge_slot(ntab, ncap - 1, tab[s].lo, tab[s].hi) = tab[s];
                free(tab);
                tab = ntab;
                cap = ncap;
                mask = cap - 1;
                e = shard_mesh_edge_slot(tab, mask, lo, hi);
            }
            e->lo = lo;
            e->hi = hi;
            e->uses = 0;
            e->forward = 0;
            used++;
        }
        if (e->uses < INT32_MAX) {
            e->uses++;
            e->forward += a == lo;
        }
    }

    /* Second pass in file order, so the message names the first offending triangle's edge. */
    int rc = 0;
    for (size_t c = 0; c < 3 * nt && !rc; c++) {
        int64_t a = t[c], b = t[c % 3 == 2 ? c - 2 : c + 1];
        int64_t lo = a < b ? a : b, hi = a < b ? b : a;
        const shard_mesh_edge *e = shard_mesh_edge_slot(tab, mask, lo, hi);
        const double *p = &v[3 * lo], *q = &v[3 * hi];
        if (e->uses != 2)
            rc = shard_mesh_fail(err, scene_path, loc,
                                 "mesh '%s' is not closed: edge (%lld, %lld) at (%g, %g, %g)-(%g, %g, %g) is used by "
                                 "%d triangle(s)",
                                 mesh_path, (long long)lo, (long long)hi, p[0], p[1], p[2], q[0], q[1], q[2], e->uses);
        else if (e->forward != 1)
            rc = shard_mesh_fail(err, scene_path, loc,
                                 "mesh '%s' is not consistently oriented at edge (%lld, %lld) at "
                                 "(%g, %g, %g)-(%g, %g, %g): both triangles run along it in the same direction",
                                 mesh_path, (long long)lo, (long long)hi, p[0], p[1], p[2], q[0], q[1], q[2]);
    }
    free(tab);
    return rc;
}

int shard_mesh_load_shape(shard_shape *s, int closed, const char *scene_path, shard_error *err)
{
    if (s->kind != SHARD_SHAPE_MESH || s->mesh)
        return 0;
    shard_mesh *m = shard_calloc(1, sizeof *m);
    int rc = shard_mesh_read(s->file, scene_path, &s->file_loc, m, err);
    if (!rc && closed)
        rc = shard_mesh_check_closed(m, s->file, scene_path, &s->file_loc, err);
    if (rc) {
        shard_mesh_free(m);
        free(m);
        return rc;
    }
    shard_mesh_transform(m, s->scale, s->translate);
    s->mesh = m;
    return 0;
}
