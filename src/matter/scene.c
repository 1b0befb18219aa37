/* Scene parser: YAML text to shard_scene, with every check that needs nothing but the text.
 *
 * This file owns three things.  First, a small YAML tree built from libfyaml's event stream: the document API
 * of libfyaml 0.7 does not expose where a mapping or sequence starts, and every message here must name a line
 * and column, so the parser keeps its own nodes with 1-based positions.  libfyaml's diagnostics are collected,
 * never printed; its first error becomes "file:line:col: syntax error: text".  Second, a table-driven reader:
 * each section of the scene (run, a material, a body, a shape, an obstacle, ...) is a table of rows giving
 * the key, its type, where it lands in the C struct, its range and its default.  A new key is a new row;
 * keys not in the table are errors everywhere.  Third, the inside tests for analytic shapes.  Meshes are read
 * by io (mesh_io.h) and sampled by sample.h; here a mesh's file name is only resolved against the scene's folder.
 */
#include "shard/scene.h"

#include "shard/mesh.h"

#include <libfyaml.h>

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_MAX sizeof(((shard_src_loc *)0)->key)

/* ------------------------------------------------------------------------------------------------------------
 * YAML tree
 * ------------------------------------------------------------------------------------------------------------ */

typedef enum shard_scene_node_type { YN_SCALAR, YN_SEQ, YN_MAP } shard_scene_node_type;

typedef struct shard_scene_node {
    shard_scene_node_type type;
    int line, col;        /* 1-based */
    bool plain;           /* scalar written without quotes (only plain scalars can mean null) */
    char *text;           /* scalar: NUL-terminated content */
    size_t len;
    char *anchor;         /* "&name" given on this node, for later aliases */
    bool complete;        /* all of the node has been read (its end event seen) */
    struct shard_scene_node **kids;  /* sequence: items; mapping: key, value, key, value, ... */
    size_t n, cap;
} shard_scene_node;

typedef struct shard_scene_tree {
    shard_scene_node *root;
    shard_scene_node **all; /* every node once, for freeing: aliases share nodes */
    size_t n_all, cap_all;
} shard_scene_tree;

typedef struct shard_scene_ctx {
    const char *file; /* the scene path, first in every message */
    shard_error *err;
    shard_scene *scene;
} shard_scene_ctx;

static void shard_scene_ytree_free(shard_scene_tree *t)
{
    for (size_t i = 0; i < t->n_all; i++) {
        free(t->all[i]->text);
        free(t->all[i]->anchor);
        free(t->all[i]->kids);
        free(t->all[i]);
    }
    free(t->all);
    memset(t, 0, sizeof *t);
}

static char *shard_scene_dup_text(const char *s, size_t len)
{
    char *d = shard_malloc(len + 1);
    if (len)
        memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

static shard_scene_node *shard_scene_ytree_new(shard_scene_tree *t, shard_scene_node_type type, int line, int col)
{
    shard_scene_node *n = shard_calloc(1, sizeof *n);
    n->type = type;
    n->line = line;
    n->col = col;
    shard_reserve((void **)&t->all, &t->cap_all, t->n_all + 1, sizeof *t->all);
    t->all[t->n_all++] = n;
    return n;
}

static void shard_scene_ynode_append(shard_scene_node *parent, shard_scene_node *kid)
{
    shard_reserve((void **)&parent->kids, &parent->cap, parent->n + 1, sizeof *parent->kids);
    parent->kids[parent->n++] = kid;
}

static char *shard_scene_token_text(struct fy_token *tok, size_t *len)
{
    size_t l = 0;
    const char *s = tok ? fy_token_get_text(tok, &l) : NULL;
    if (!s)
        l = 0;
    if (len)
        *len = l;
    return shard_scene_dup_text(s ? s : "", l);
}

/* Errors are collected rather than printed; this sink swallows whatever else libfyaml might want to say, so the
 * library never writes to the terminal on its own. */
static void shard_scene_diag_sink(struct fy_diag *diag, void *user, const char *buf, size_t len)
{
    (void)diag;
    (void)user;
    (void)buf;
    (void)len;
}

static int shard_scene_syntax_error(shard_scene_ctx *c, int line, int col, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int shard_scene_syntax_error(shard_scene_ctx *c, int line, int col, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    shard_src_loc loc = {.line = line > 0 ? line : 1, .col = col > 0 ? col : 1};
    snprintf(loc.key, sizeof loc.key, "syntax error");
    return shard_error_at(c->err, c->file, &loc, "%s", msg);
}

/* Builds the tree of the single document in text.  Returns 0 or SHARD_EXIT_INPUT with the error filled. */
static int shard_scene_ytree_build(shard_scene_ctx *c, const char *text, size_t len, shard_scene_tree *t)
{
    struct fy_diag_cfg dcfg;
    fy_diag_cfg_default(&dcfg);
    dcfg.fp = NULL;
    dcfg.output_fn = shard_scene_diag_sink;
    dcfg.colorize = false;
    struct fy_diag *diag = fy_diag_create(&dcfg);
    if (!diag)
        return shard_error_set(c->err, SHARD_EXIT_INTERNAL, "%s: cannot create the YAML diagnostics", c->file);
    fy_diag_set_collect_errors(diag, true);

    struct fy_parse_cfg pcfg = {.flags = FYPCF_QUIET | FYPCF_COLLECT_DIAG, .diag = diag};
    struct fy_parser *fyp = fy_parser_create(&pcfg);
    if (!fyp || fy_parser_set_string(fyp, text, len) != 0) {
        if (fyp)
            fy_parser_destroy(fyp);
        fy_diag_destroy(diag);
        return shard_error_set(c->err, SHARD_EXIT_INTERNAL, "%s: cannot create the YAML parser", c->file);
    }

    int rc = 0, n_docs = 0, last_line = 1, last_col = 1;
    shard_scene_node **stack = NULL;
    size_t depth = 0, cap = 0;
    struct fy_event *e;
    while (!rc && (e = fy_parser_parse(fyp)) != NULL) {
        const struct fy_mark *m = fy_event_start_mark(e);
        if (m) {
            last_line = m->line + 1;
            last_col = m->column + 1;
        }
        shard_scene_node *node = NULL;
        struct fy_token *anchor = NULL;
        switch (e->type) {
        case FYET_DOCUMENT_START:
            n_docs++;
            break;
        case FYET_SCALAR:
            node = shard_scene_ytree_new(t, YN_SCALAR, last_line, last_col);
            node->text = shard_scene_token_text(e->scalar.value, &node->len);
            node->plain = !e->scalar.value || fy_event_get_node_style(e) == FYNS_PLAIN;
            node->complete = true;
            anchor = e->scalar.anchor;
            break;
        case FYET_MAPPING_START:
            node = shard_scene_ytree_new(t, YN_MAP, last_line, last_col);
            anchor = e->mapping_start.anchor;
            break;
        case FYET_SEQUENCE_START:
            node = shard_scene_ytree_new(t, YN_SEQ, last_line, last_col);
            anchor = e->sequence_start.anchor;
            break;
        case FYET_ALIAS: {
            /* Only complete nodes qualify, so an alias can never make a collection contain itself. */
            char *name = shard_scene_token_text(e->alias.anchor, NULL);
            for (size_t i = t->n_all; i-- > 0 && !node;)
                if (t->all[i]->complete && t->all[i]->anchor && strcmp(t->all[i]->anchor, name) == 0)
                    node = t->all[i];
            /* The event's mark is the anchor name's, one past the '*'. */
            if (!node)
                rc = shard_scene_syntax_error(c, last_line, last_col > 1 ? last_col - 1 : 1, "undefined alias '*%s'", name);
            free(name);
            break;
        }
        case FYET_MAPPING_END:
        case FYET_SEQUENCE_END:
            if (depth > 0)
                stack[--depth]->complete = true;
            break;
        default:
            break;
        }
        if (!rc && node && n_docs > 1)
            rc = shard_scene_syntax_error(c, node->line, node->col, "a scene file holds one YAML document, found a second one");
        if (!rc && node) {
            if (depth > 0)
                shard_scene_ynode_append(stack[depth - 1], node);
            else
                t->root = node;
            if (anchor)
                node->anchor = shard_scene_token_text(anchor, NULL);
            if (e->type == FYET_MAPPING_START || e->type == FYET_SEQUENCE_START) {
                shard_reserve((void **)&stack, &cap, depth + 1, sizeof *stack);
                stack[depth++] = node;
            }
        }
        fy_parser_event_free(fyp, e);
    }

    if (!rc && (fy_parser_get_stream_error(fyp) || fy_diag_got_error(diag))) {
        void *iter = NULL;
        struct fy_diag_error *de, *first = NULL;
        while ((de = fy_diag_errors_iterate(diag, &iter)) != NULL)
            if (de->type >= FYET_ERROR && !first)
                first = de;
        if (first)
            rc = shard_scene_syntax_error(c, first->line, first->column, "%s", first->msg ? first->msg : "invalid YAML");
        else
            rc = shard_scene_syntax_error(c, last_line, last_col, "invalid YAML");
    }
    free(stack);
    fy_parser_destroy(fyp);
    fy_diag_destroy(diag);
    return rc;
}

/* ------------------------------------------------------------------------------------------------------------
 * Messages
 * ------------------------------------------------------------------------------------------------------------ */

/* The root has no key of its own; messages about it say "scene". */
static void shard_scene_make_loc(shard_src_loc *loc, const shard_scene_node *n, const char *path)
{
    loc->line = n ? n->line : 1;
    loc->col = n ? n->col : 1;
    snprintf(loc->key, sizeof loc->key, "%s", path[0] ? path : "scene");
}

static int shard_scene_fail(shard_scene_ctx *c, const shard_scene_node *n, const char *path, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int shard_scene_fail(shard_scene_ctx *c, const shard_scene_node *n, const char *path, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    shard_src_loc loc;
    shard_scene_make_loc(&loc, n, path);
    return shard_error_at(c->err, c->file, &loc, "%s", msg);
}

/* Paths longer than a shard_src_loc key are cut short: the message stays readable and line:col stays exact. */
static void shard_scene_child_path(char out[KEY_MAX], const char *parent, const char *key)
{
    int w = parent[0] ? snprintf(out, KEY_MAX, "%s.%s", parent, key) : snprintf(out, KEY_MAX, "%s", key);
    if (w < 0)
        out[0] = '\0';
}

static void shard_scene_index_path(char out[KEY_MAX], const char *parent, size_t i)
{
    if (snprintf(out, KEY_MAX, "%s[%zu]", parent, i) < 0)
        out[0] = '\0';
}

/* The shortest %g form that reads back as the same double, so "got 0.5" is never a rounded 0.50000001. */
static const char *shard_scene_fmt_num(char buf[32], double v)
{
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, 32, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return buf;
}

static bool shard_scene_is_null(const shard_scene_node *n)
{
    return n->type == YN_SCALAR && n->plain &&
           (n->len == 0 || strcmp(n->text, "~") == 0 || strcmp(n->text, "null") == 0 ||
            strcmp(n->text, "Null") == 0 || strcmp(n->text, "NULL") == 0);
}

/* "'abc'", "an empty value", "a mapping", "a sequence": what was found where something else was expected. */
static const char *shard_scene_describe(char buf[80], const shard_scene_node *n)
{
    if (n->type == YN_MAP)
        return "a mapping";
    if (n->type == YN_SEQ)
        return "a sequence";
    if (shard_scene_is_null(n))
        return "an empty value";
    if (n->len > 40)
        snprintf(buf, 80, "'%.40s...'", n->text);
    else
        snprintf(buf, 80, "'%s'", n->text);
    return buf;
}

/* ------------------------------------------------------------------------------------------------------------
 * Scalars and vectors
 * ------------------------------------------------------------------------------------------------------------ */

/* YAML's decimal numbers only: [+-] digits [. digits] [e [+-] digits].  strtod alone would also take hex,
 * "infinity" and trailing junk. */
static bool shard_scene_looks_decimal(const char *s)
{
    if (*s == '+' || *s == '-')
        s++;
    size_t digits = 0;
    while (*s >= '0' && *s <= '9')
        s++, digits++;
    if (*s == '.') {
        s++;
        while (*s >= '0' && *s <= '9')
            s++, digits++;
    }
    if (digits == 0)
        return false;
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-')
            s++;
        if (!(*s >= '0' && *s <= '9'))
            return false;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    return *s == '\0';
}

static bool shard_scene_looks_nonfinite(const char *s)
{
    if (*s == '+' || *s == '-')
        s++;
    if (*s == '.')
        s++;
    char low[16];
    size_t i = 0;
    for (; s[i] && i + 1 < sizeof low; i++)
        low[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] - 'A' + 'a' : s[i]);
    low[i] = '\0';
    return !s[i] && (strcmp(low, "inf") == 0 || strcmp(low, "infinity") == 0 || strcmp(low, "nan") == 0);
}

/* A finite number, or with allow_auto the word 'auto' (*is_auto set, *out = 0). */
static int shard_scene_get_number(shard_scene_ctx *c, const shard_scene_node *n, const char *path, bool allow_auto, double *out, bool *is_auto)
{
    char what[80];
    const char *expected = allow_auto ? "a number or 'auto'" : "a number";
    if (is_auto)
        *is_auto = false;
    if (n->type != YN_SCALAR || shard_scene_is_null(n))
        return shard_scene_fail(c, n, path, "expected %s, got %s", expected, shard_scene_describe(what, n));
    if (allow_auto && strcmp(n->text, "auto") == 0) {
        *out = 0;
        if (is_auto)
            *is_auto = true;
        return 0;
    }
    if (shard_scene_looks_nonfinite(n->text))
        return shard_scene_fail(c, n, path, "must be a finite number, got %s", shard_scene_describe(what, n));
    if (!shard_scene_looks_decimal(n->text))
        return shard_scene_fail(c, n, path, "expected %s, got %s", expected, shard_scene_describe(what, n));
    /* strtod follows LC_NUMERIC; Shard never calls setlocale, so the C locale's '.' applies. */
    double v = strtod(n->text, NULL);
    if (!isfinite(v))
        return shard_scene_fail(c, n, path, "must be a finite number, got %s", shard_scene_describe(what, n));
    *out = v;
    return 0;
}

static int shard_scene_get_vec3(shard_scene_ctx *c, const shard_scene_node *n, const char *path, double out[3])
{
    char what[80];
    if (n->type != YN_SEQ)
        return shard_scene_fail(c, n, path, "expected a sequence of 3 numbers, got %s", shard_scene_describe(what, n));
    if (n->n != 3)
        return shard_scene_fail(c, n, path, "expected a sequence of 3 numbers, got %zu item%s", n->n, n->n == 1 ? "" : "s");
    for (size_t i = 0; i < 3; i++) {
        char sub[KEY_MAX];
        shard_scene_index_path(sub, path, i);
        int rc = shard_scene_get_number(c, n->kids[i], sub, false, &out[i], NULL);
        if (rc)
            return rc;
    }
    return 0;
}

static int shard_scene_get_string(shard_scene_ctx *c, const shard_scene_node *n, const char *path, char *out, size_t size)
{
    char what[80];
    if (n->type != YN_SCALAR || shard_scene_is_null(n))
        return shard_scene_fail(c, n, path, "expected a string, got %s", shard_scene_describe(what, n));
    if (n->len == 0)
        return shard_scene_fail(c, n, path, "must not be empty");
    if (n->len >= size || strlen(n->text) != n->len)
        return shard_scene_fail(c, n, path, "must be at most %zu characters without NUL bytes", size - 1);
    memcpy(out, n->text, n->len + 1);
    return 0;
}

/* ------------------------------------------------------------------------------------------------------------
 * Tables
 * ------------------------------------------------------------------------------------------------------------ */

typedef enum shard_scene_field_kind {
    FK_NUMBER, /* double */
    FK_INT,    /* long; the text may be any number with an integral value */
    FK_VEC3,   /* double[3] */
    FK_STRING, /* char[size] */
    FK_MAP,    /* a nested section whose struct sits at offset (often 0: the same struct) */
    FK_CUSTOM, /* parse(ctx, value node, key path, base + offset) */
} shard_scene_field_kind;

enum {
    F_REQUIRED = 1, /* for a group: one member must be given */
    F_AUTO = 2,     /* FK_NUMBER: the word 'auto' is accepted and stored as 0 */
};

/* Allowed values: lo_kind '(' or '[' (0: unbounded below), hi_kind ')' or ']' (0: unbounded above). */
typedef struct shard_scene_range {
    char lo_kind, hi_kind;
    double lo, hi;
} shard_scene_range;

#define GT(a) {.lo_kind = '(', .lo = (a)}
#define GE(a) {.lo_kind = '[', .lo = (a)}
#define IN(lk, a, b, hk) {.lo_kind = (lk), .lo = (a), .hi = (b), .hi_kind = (hk)}

/* offsetof + 1, so that 0 (what a row or section that does not set the field gets) can mean "none". */
#define OFF1(T, m) (offsetof(T, m) + 1)

struct shard_scene_section;
typedef int (*shard_scene_custom_fn)(shard_scene_ctx *c, const shard_scene_node *value, const char *path, void *target);
typedef int (*shard_scene_check_fn)(shard_scene_ctx *c, const shard_scene_node *node, const char *path, void *base);

typedef struct shard_scene_field {
    const char *key;
    shard_scene_field_kind kind;
    unsigned flags;
    int group;                 /* nonzero: keys of one group exclude each other */
    size_t offset;             /* of the value in the section's struct */
    size_t loc_offset;         /* OFF1 of a shard_src_loc that receives the value's position, or 0 */
    shard_scene_range r;
    double def[3];             /* FK_NUMBER, FK_INT (def[0]), FK_VEC3: value when the key is absent */
    const char *def_str;       /* FK_STRING: value when absent */
    size_t size;               /* FK_STRING: capacity including the NUL */
    const struct shard_scene_section *sub; /* FK_MAP */
    shard_scene_custom_fn parse;           /* FK_CUSTOM */
    int variant;               /* group member: stored in the section's variant field when this key is given */
} shard_scene_field;

typedef struct shard_scene_section {
    const shard_scene_field *fields;
    size_t n;
    size_t variant_offset; /* OFF1 of the enum (an int) set to the given group member's variant, or 0 */
    shard_scene_check_fn check;        /* cross-key validation after all keys are read; NULL for none */
} shard_scene_section;

#define SECTION(rows, variant_off, chk) {(rows), sizeof(rows) / sizeof((rows)[0]), (variant_off), (chk)}

static bool shard_scene_in_range(const shard_scene_range *r, double v)
{
    if (r->lo_kind == '(' && !(v > r->lo))
        return false;
    if (r->lo_kind == '[' && !(v >= r->lo))
        return false;
    if (r->hi_kind == ')' && !(v < r->hi))
        return false;
    if (r->hi_kind == ']' && !(v <= r->hi))
        return false;
    return true;
}

static void shard_scene_describe_range(char buf[96], const shard_scene_range *r)
{
    char a[32], b[32];
    if (r->lo_kind && r->hi_kind)
        snprintf(buf, 96, "must be in %c%s, %s%c", r->lo_kind, shard_scene_fmt_num(a, r->lo), shard_scene_fmt_num(b, r->hi), r->hi_kind);
    else if (r->lo_kind)
        snprintf(buf, 96, "must be %s %s", r->lo_kind == '(' ? ">" : ">=", shard_scene_fmt_num(a, r->lo));
    else
        snprintf(buf, 96, "must be %s %s", r->hi_kind == ')' ? "<" : "<=", shard_scene_fmt_num(a, r->hi));
}

static const shard_scene_node *shard_scene_map_get(const shard_scene_node *map, const char *key, const shard_scene_node **key_node)
{
    for (size_t i = 0; i + 1 < map->n; i += 2)
        if (map->kids[i]->type == YN_SCALAR && strcmp(map->kids[i]->text, key) == 0) {
            if (key_node)
                *key_node = map->kids[i];
            return map->kids[i + 1];
        }
    return NULL;
}

static const shard_scene_field *shard_scene_find_field(const shard_scene_section *sec, const char *key)
{
    for (size_t i = 0; i < sec->n; i++)
        if (strcmp(sec->fields[i].key, key) == 0)
            return &sec->fields[i];
    return NULL;
}

/* "'a', 'b' or 'c'" for the members of a group. */
static void shard_scene_group_keys(char *buf, size_t size, const shard_scene_section *sec, int group)
{
    size_t count = 0, seen = 0, used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sec->n; i++)
        count += sec->fields[i].group == group;
    for (size_t i = 0; i < sec->n && used < size; i++) {
        if (sec->fields[i].group != group)
            continue;
        const char *sep = seen == 0 ? "" : seen + 1 == count ? " or " : ", ";
        int w = snprintf(buf + used, size - used, "%s'%s'", sep, sec->fields[i].key);
        used += w > 0 ? (size_t)w : 0;
        seen++;
    }
}

/* File-order checks of a mapping's keys: scalars, known, not repeated, at most one per group. */
static int shard_scene_check_keys(shard_scene_ctx *c, const shard_scene_node *map, const char *path, const shard_scene_section *sec)
{
    for (size_t i = 0; i + 1 < map->n; i += 2) {
        const shard_scene_node *k = map->kids[i];
        char sub[KEY_MAX], what[80];
        if (k->type != YN_SCALAR)
            return shard_scene_fail(c, k, path, "keys must be plain words, got %s", shard_scene_describe(what, k));
        shard_scene_child_path(sub, path, k->text);
        const shard_scene_field *f = shard_scene_find_field(sec, k->text);
        if (!f) {
            char allowed[512] = "";
            size_t used = 0;
            for (size_t j = 0; j < sec->n; j++)
                shard_list_append(allowed, sizeof allowed, &used, sec->fields[j].key);
            return shard_scene_fail(c, k, sub, "unknown key (allowed: %s)", allowed);
        }
        for (size_t j = 0; j < i; j += 2) {
            const shard_scene_node *prev = map->kids[j];
            if (strcmp(prev->text, k->text) == 0)
                return shard_scene_fail(c, k, sub, "duplicate key (first given at line %d)", prev->line);
            const shard_scene_field *pf = shard_scene_find_field(sec, prev->text);
            if (f->group && pf->group == f->group) {
                char keys[256];
                shard_scene_group_keys(keys, sizeof keys, sec, f->group);
                return shard_scene_fail(c, k, sub, "cannot be combined with '%s' (give exactly one of %s)", prev->text, keys);
            }
        }
    }
    return 0;
}

static int shard_scene_parse_section(shard_scene_ctx *c, const shard_scene_node *node, const char *path, const shard_scene_section *sec, void *base);

static int shard_scene_parse_field(shard_scene_ctx *c, const shard_scene_node *val, const char *path, const shard_scene_field *f, void *base)
{
    void *target = (char *)base + f->offset;
    char what[80], rng[96], num[32];
    double v;
    bool is_auto;
    int rc;
    switch (f->kind) {
    case FK_NUMBER:
        if ((rc = shard_scene_get_number(c, val, path, f->flags & F_AUTO, &v, &is_auto)))
            return rc;
        if (!is_auto && !shard_scene_in_range(&f->r, v)) {
            shard_scene_describe_range(rng, &f->r);
            return shard_scene_fail(c, val, path, "%s%s, got %s", rng, f->flags & F_AUTO ? " or 'auto'" : "", shard_scene_fmt_num(num, v));
        }
        *(double *)target = v;
        return 0;
    case FK_INT:
        if ((rc = shard_scene_get_number(c, val, path, false, &v, NULL)))
            return rc;
        if (v != floor(v) || fabs(v) > 9007199254740992.0)
            return shard_scene_fail(c, val, path, "expected an integer, got %s", shard_scene_describe(what, val));
        if (!shard_scene_in_range(&f->r, v)) {
            shard_scene_describe_range(rng, &f->r);
            return shard_scene_fail(c, val, path, "%s, got %s", rng, shard_scene_fmt_num(num, v));
        }
        *(long *)target = (long)v;
        return 0;
    case FK_VEC3:
        return shard_scene_get_vec3(c, val, path, (double *)target);
    case FK_STRING:
        return shard_scene_get_string(c, val, path, (char *)target, f->size);
    case FK_MAP:
        return shard_scene_parse_section(c, val, path, f->sub, target);
    case FK_CUSTOM:
        return f->parse(c, val, path, target);
    }
    return 0;
}

static void shard_scene_set_default(const shard_scene_field *f, void *base)
{
    void *target = (char *)base + f->offset;
    switch (f->kind) {
    case FK_NUMBER:
        *(double *)target = f->def[0];
        break;
    case FK_INT:
        *(long *)target = (long)f->def[0];
        break;
    case FK_VEC3:
        memcpy(target, f->def, sizeof f->def);
        break;
    case FK_STRING:
        snprintf((char *)target, f->size, "%s", f->def_str ? f->def_str : "");
        break;
    case FK_MAP:
        /* An absent optional map still gets its keys' defaults. */
        (void)shard_scene_parse_section(NULL, NULL, "", f->sub, target);
        break;
    case FK_CUSTOM:
        break;
    }
}

/* Reads the mapping `node` into base by the table.  With node NULL (an absent optional map, c NULL too) it
 * only writes the defaults: such maps have no required keys. */
static int shard_scene_parse_section(shard_scene_ctx *c, const shard_scene_node *node, const char *path, const shard_scene_section *sec, void *base)
{
    char what[80];
    int rc;
    if (node && node->type != YN_MAP)
        return shard_scene_fail(c, node, path, "expected a mapping, got %s", shard_scene_describe(what, node));
    if (node && (rc = shard_scene_check_keys(c, node, path, sec)))
        return rc;
    for (size_t i = 0; i < sec->n; i++) {
        const shard_scene_field *f = &sec->fields[i];
        const shard_scene_node *val = node ? shard_scene_map_get(node, f->key, NULL) : NULL;
        if (f->group && node) {
            bool first = true, any = false;
            for (size_t j = 0; j < sec->n; j++) {
                if (sec->fields[j].group != f->group)
                    continue;
                if (j < i)
                    first = false;
                if (shard_scene_map_get(node, sec->fields[j].key, NULL))
                    any = true;
            }
            if (first && !any && (f->flags & F_REQUIRED)) {
                char keys[256];
                shard_scene_group_keys(keys, sizeof keys, sec, f->group);
                return shard_scene_fail(c, node, path, "missing required key %s", keys);
            }
        }
        if (!val) {
            /* Group members share storage (sphere and cylinder radius): an absent member writes nothing. */
            if (f->group || (!node && (f->flags & F_REQUIRED)))
                continue;
            if (f->flags & F_REQUIRED)
                return shard_scene_fail(c, node, path, "missing required key '%s'", f->key);
            shard_scene_set_default(f, base);
            continue;
        }
        char sub[KEY_MAX];
        shard_scene_child_path(sub, path, f->key);
        if (f->loc_offset)
            shard_scene_make_loc((shard_src_loc *)((char *)base + f->loc_offset - 1), val, sub);
        if ((rc = shard_scene_parse_field(c, val, sub, f, base)))
            return rc;
        if (f->group && sec->variant_offset)
            *(int *)((char *)base + sec->variant_offset - 1) = f->variant;
    }
    if (node && sec->check)
        return sec->check(c, node, path, base);
    return 0;
}

/* ------------------------------------------------------------------------------------------------------------
 * Shapes
 * ------------------------------------------------------------------------------------------------------------ */

static int shard_scene_check_box_corners(shard_scene_ctx *c, const shard_scene_node *node, const char *path, const double min[3],
                             const double max[3])
{
    static const char axis[] = "xyz";
    for (int d = 0; d < 3; d++)
        if (!(min[d] < max[d])) {
            char sub[KEY_MAX], a[32], b[32];
            shard_scene_child_path(sub, path, "max");
            return shard_scene_fail(c, shard_scene_map_get(node, "max", NULL), sub, "must be greater than min in every component, got %c: max %s <= min %s",
                        axis[d], shard_scene_fmt_num(a, max[d]), shard_scene_fmt_num(b, min[d]));
        }
    return 0;
}

static int shard_scene_check_shape_box(shard_scene_ctx *c, const shard_scene_node *node, const char *path, void *base)
{
    const shard_shape *s = base;
    return shard_scene_check_box_corners(c, node, path, s->min, s->max);
}

static int shard_scene_check_cylinder(shard_scene_ctx *c, const shard_scene_node *node, const char *path, void *base)
{
    const shard_shape *s = base;
    if (s->p0[0] == s->p1[0] && s->p0[1] == s->p1[1] && s->p0[2] == s->p1[2]) {
        char sub[KEY_MAX];
        shard_scene_child_path(sub, path, "p1");
        return shard_scene_fail(c, shard_scene_map_get(node, "p1", NULL), sub, "must differ from p0 (the cylinder has no axis)");
    }
    return 0;
}

/* Relative file paths (meshes, in-situ scripts) are taken from the scene file's folder, so a scene can be run
 * from anywhere. */
static int shard_scene_resolve_path(shard_scene_ctx *c, const shard_scene_node *node, const char *key, char file[SHARD_PATH_MAX])
{
    const char *dir = c->scene->dir;
    if (file[0] == '/' || strcmp(dir, ".") == 0)
        return 0;
    char joined[SHARD_PATH_MAX];
    size_t dl = strlen(dir);
    int w = snprintf(joined, sizeof joined, "%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/", file);
    if (w < 0 || (size_t)w >= sizeof joined)
        return shard_scene_fail(c, node, key, "path too long once joined to the scene's folder '%s'", dir);
    memcpy(file, joined, (size_t)w + 1);
    return 0;
}

static int shard_scene_check_mesh(shard_scene_ctx *c, const shard_scene_node *node, const char *path, void *base)
{
    shard_shape *s = base;
    return shard_scene_resolve_path(c, shard_scene_map_get(node, "file", NULL), s->file_loc.key, s->file);
}

static const shard_scene_field box_rows[] = {
    {.key = "min", .kind = FK_VEC3, .flags = F_REQUIRED, .offset = offsetof(shard_shape, min)},
    {.key = "max", .kind = FK_VEC3, .flags = F_REQUIRED, .offset = offsetof(shard_shape, max)},
};
static const shard_scene_field sphere_rows[] = {
    {.key = "center", .kind = FK_VEC3, .flags = F_REQUIRED, .offset = offsetof(shard_shape, center)},
    {.key = "radius", .kind = FK_NUMBER, .flags = F_REQUIRED, .offset = offsetof(shard_shape, radius), .r = GT(0)},
};
static const shard_scene_field cylinder_rows[] = {
    {.key = "p0", .kind = FK_VEC3, .flags = F_REQUIRED, .offset = offsetof(shard_shape, p0)},
    {.key = "p1", .kind = FK_VEC3, .flags = F_REQUIRED, .offset = offsetof(shard_shape, p1)},
    {.key = "radius", .kind = FK_NUMBER, .flags = F_REQUIRED, .offset = offsetof(shard_shape, radius), .r = GT(0)},
};
static const shard_scene_field mesh_rows[] = {
    {.key = "file", .kind = FK_STRING, .flags = F_REQUIRED, .offset = offsetof(shard_shape, file),
     .size = SHARD_PATH_MAX, .loc_offset = OFF1(shard_shape, file_loc)},
    {.key = "scale", .kind = FK_NUMBER, .offset = offsetof(shard_shape, scale), .r = GT(0), .def = {1}},
    {.key = "translate", .kind = FK_VEC3, .offset = offsetof(shard_shape, translate)},
};
/* divisions: [n_u, n_v], integers >= 1. */
static int shard_scene_parse_divisions(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    long *d = target;
    char what[80];
    if (n->type != YN_SEQ || n->n != 2)
        return shard_scene_fail(c, n, path, "expected [n_u, n_v], two integers >= 1, got %s",
                                shard_scene_describe(what, n));
    for (int k = 0; k < 2; k++) {
        double v;
        char sub[KEY_MAX];
        shard_scene_index_path(sub, path, (size_t)k);
        int rc = shard_scene_get_number(c, n->kids[k], sub, false, &v, NULL);
        if (rc)
            return rc;
        if (v != floor(v) || !(v >= 1) || v > 1e9)
            return shard_scene_fail(c, n->kids[k], sub, "expected an integer in [1, 1e9], got %s",
                                    shard_scene_describe(what, n->kids[k]));
        d[k] = (long)v;
    }
    return 0;
}

static int shard_scene_check_grid(shard_scene_ctx *c, const shard_scene_node *node, const char *path, void *base)
{
    const shard_shape *s = base;
    double n[3] = {s->u[1] * s->v[2] - s->u[2] * s->v[1], s->u[2] * s->v[0] - s->u[0] * s->v[2],
                   s->u[0] * s->v[1] - s->u[1] * s->v[0]};
    double area = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    double lu = sqrt(s->u[0] * s->u[0] + s->u[1] * s->u[1] + s->u[2] * s->u[2]);
    double lv = sqrt(s->v[0] * s->v[0] + s->v[1] * s->v[1] + s->v[2] * s->v[2]);
    char sub[KEY_MAX];
    /* A parallelogram whose angle is below 1e-6 rad has triangles too thin to carry a membrane. */
    if (!(area > 1e-6 * lu * lv) || !isfinite(area)) {
        shard_scene_child_path(sub, path, lu > 0.0 ? "v" : "u");
        return shard_scene_fail(c, shard_scene_map_get(node, lu > 0.0 ? "v" : "u", NULL), sub,
                                "must be a nonzero vector not parallel to %s (the grid has no area)",
                                lu > 0.0 ? "u" : "v");
    }
    return 0;
}

static const shard_scene_field grid_rows[] = {
    {.key = "corner", .kind = FK_VEC3, .flags = F_REQUIRED, .offset = offsetof(shard_shape, p0)},
    {.key = "u", .kind = FK_VEC3, .flags = F_REQUIRED, .offset = offsetof(shard_shape, u)},
    {.key = "v", .kind = FK_VEC3, .flags = F_REQUIRED, .offset = offsetof(shard_shape, v)},
    {.key = "divisions", .kind = FK_CUSTOM, .flags = F_REQUIRED, .offset = offsetof(shard_shape, divisions),
     .parse = shard_scene_parse_divisions},
};
static const shard_scene_section grid_section = SECTION(grid_rows, 0, shard_scene_check_grid);
static const shard_scene_section box_section = SECTION(box_rows, 0, shard_scene_check_shape_box);
static const shard_scene_section sphere_section = SECTION(sphere_rows, 0, NULL);
static const shard_scene_section cylinder_section = SECTION(cylinder_rows, 0, shard_scene_check_cylinder);
static const shard_scene_section mesh_section = SECTION(mesh_rows, 0, shard_scene_check_mesh);

static const shard_scene_field shape_rows[] = {
    {.key = "box", .kind = FK_MAP, .flags = F_REQUIRED, .group = 1, .sub = &box_section, .variant = SHARD_SHAPE_BOX},
    {.key = "sphere", .kind = FK_MAP, .flags = F_REQUIRED, .group = 1, .sub = &sphere_section,
     .variant = SHARD_SHAPE_SPHERE},
    {.key = "cylinder", .kind = FK_MAP, .flags = F_REQUIRED, .group = 1, .sub = &cylinder_section,
     .variant = SHARD_SHAPE_CYLINDER},
    {.key = "mesh", .kind = FK_MAP, .flags = F_REQUIRED, .group = 1, .sub = &mesh_section, .variant = SHARD_SHAPE_MESH},
    {.key = "grid", .kind = FK_MAP, .flags = F_REQUIRED, .group = 1, .sub = &grid_section, .variant = SHARD_SHAPE_GRID},
};
static const shard_scene_section shape_section = SECTION(shape_rows, OFF1(shard_shape, kind), NULL);

static int shard_scene_parse_shape(shard_scene_ctx *c, const shard_scene_node *n, const char *path, shard_shape *s, bool allow_mesh)
{
    memset(s, 0, sizeof *s);
    s->scale = 1;
    shard_scene_make_loc(&s->loc, n, path);
    int rc = shard_scene_parse_section(c, n, path, &shape_section, s);
    if (rc)
        return rc;
    if (!allow_mesh && (s->kind == SHARD_SHAPE_MESH || s->kind == SHARD_SHAPE_GRID)) {
        const char *what = s->kind == SHARD_SHAPE_MESH ? "mesh" : "grid";
        const shard_scene_node *key = NULL;
        char sub[KEY_MAX];
        (void)shard_scene_map_get(n, what, &key);
        shard_scene_child_path(sub, path, what);
        return shard_scene_fail(c, key, sub, "a region must be a box, sphere or cylinder, not a %s", what);
    }
    return 0;
}

static int shard_scene_parse_body_shape(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    return shard_scene_parse_shape(c, n, path, target, true);
}

static int shard_scene_parse_region(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    return shard_scene_parse_shape(c, n, path, target, false);
}

/* ------------------------------------------------------------------------------------------------------------
 * Materials
 * ------------------------------------------------------------------------------------------------------------ */

static const shard_scene_field plasticity_rows[] = {
    {.key = "yield", .kind = FK_NUMBER, .offset = offsetof(shard_material, yield), .r = GE(0)},
    {.key = "creep", .kind = FK_NUMBER, .offset = offsetof(shard_material, creep), .r = GE(0)},
    {.key = "max", .kind = FK_NUMBER, .offset = offsetof(shard_material, max_plastic), .r = GE(0)},
};
static const shard_scene_section plasticity_section = SECTION(plasticity_rows, 0, NULL);

static int shard_scene_parse_choice(shard_scene_ctx *c, const shard_scene_node *n, const char *path,
                                    const char *const *names, int count, int *out);

static int shard_scene_parse_surface(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    static const char *const names[] = {[SHARD_SURFACE_PARTICLES] = "particles", [SHARD_SURFACE_SMOOTH] = "smooth"};
    return shard_scene_parse_choice(c, n, path, names, 2, &((shard_material *)target)->contact_surface);
}

static const shard_scene_field contact_rows[] = {
    {.key = "stiffness", .kind = FK_NUMBER, .flags = F_AUTO, .offset = offsetof(shard_material, contact_stiffness),
     .r = GT(0)},
    {.key = "damping", .kind = FK_NUMBER, .offset = offsetof(shard_material, contact_damping), .r = IN('[', 0, 1, ']'),
     .def = {0.1}},
    {.key = "friction", .kind = FK_NUMBER, .offset = offsetof(shard_material, friction), .r = GE(0), .def = {0.5}},
    {.key = "restitution", .kind = FK_NUMBER, .offset = offsetof(shard_material, restitution),
     .r = IN('[', 0, 1, ']')},
    {.key = "surface", .kind = FK_CUSTOM, .parse = shard_scene_parse_surface},
};
static const shard_scene_section contact_section = SECTION(contact_rows, 0, NULL);

/* fracture: exactly one criterion, and an optional Weibull scatter of the thresholds (fracture.h). */
static const shard_scene_field fracture_rows[] = {
    {.key = "critical_stretch", .kind = FK_NUMBER, .flags = F_REQUIRED, .group = 1,
     .offset = offsetof(shard_fracture_def, value), .r = GT(0), .variant = SHARD_FRACTURE_STRETCH},
    {.key = "energy_release_rate", .kind = FK_NUMBER, .flags = F_REQUIRED, .group = 1,
     .offset = offsetof(shard_fracture_def, value), .r = GT(0), .variant = SHARD_FRACTURE_ENERGY},
    {.key = "tensile_strength", .kind = FK_NUMBER, .flags = F_REQUIRED, .group = 1,
     .offset = offsetof(shard_fracture_def, value), .r = GT(0), .variant = SHARD_FRACTURE_RANKINE},
    {.key = "weibull_modulus", .kind = FK_NUMBER, .offset = offsetof(shard_fracture_def, weibull_modulus),
     .r = GE(0)},
    {.key = "weibull_seed", .kind = FK_INT, .offset = offsetof(shard_fracture_def, weibull_seed), .r = GE(0)},
};
static const shard_scene_section fracture_section = SECTION(fracture_rows, OFF1(shard_fracture_def, criterion), NULL);

static int shard_scene_parse_fracture(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    shard_fracture_def *f = target;
    shard_scene_make_loc(&f->loc, n, path);
    return shard_scene_parse_section(c, n, path, &fracture_section, f);
}

static const shard_scene_field material_rows[] = {
    {.key = "density", .kind = FK_NUMBER, .flags = F_REQUIRED, .offset = offsetof(shard_material, density), .r = GT(0)},
    {.key = "E", .kind = FK_NUMBER, .flags = F_REQUIRED, .offset = offsetof(shard_material, E), .r = GT(0)},
    {.key = "nu", .kind = FK_NUMBER, .flags = F_REQUIRED, .offset = offsetof(shard_material, nu),
     .r = IN('(', -1, 0.5, ')')},
    {.key = "volume_stiffness", .kind = FK_NUMBER, .offset = offsetof(shard_material, volume_stiffness), .r = GE(0)},
    {.key = "volume_barrier", .kind = FK_NUMBER, .offset = offsetof(shard_material, volume_barrier), .r = GE(0),
     .def = {1.0}},
    {.key = "stabilization", .kind = FK_NUMBER, .offset = offsetof(shard_material, stabilization), .r = IN('[', 0, 1, ']'),
     .def = {0.0}, .loc_offset = OFF1(shard_material, stabilization_loc)},
    {.key = "damping", .kind = FK_NUMBER, .offset = offsetof(shard_material, damping), .r = GE(0)},
    {.key = "mass_damping", .kind = FK_NUMBER, .offset = offsetof(shard_material, mass_damping), .r = GE(0)},
    {.key = "plasticity", .kind = FK_MAP, .sub = &plasticity_section},
    {.key = "contact", .kind = FK_MAP, .sub = &contact_section},
    {.key = "fracture", .kind = FK_CUSTOM, .offset = offsetof(shard_material, fracture),
     .parse = shard_scene_parse_fracture},
};
static const shard_scene_section material_section = SECTION(material_rows, 0, NULL);

static int shard_scene_parse_materials(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    shard_scene *s = target;
    char what[80];
    if (n->type != YN_MAP)
        return shard_scene_fail(c, n, path, "expected a mapping of material names to materials, got %s", shard_scene_describe(what, n));
    if (n->n == 0)
        return shard_scene_fail(c, n, path, "at least one material is required");
    s->materials = shard_calloc(n->n / 2 + 1, sizeof *s->materials);
    for (size_t i = 0; i + 1 < n->n; i += 2) {
        const shard_scene_node *k = n->kids[i], *v = n->kids[i + 1];
        if (k->type != YN_SCALAR || shard_scene_is_null(k))
            return shard_scene_fail(c, k, path, "material names must be words, got %s", shard_scene_describe(what, k));
        char sub[KEY_MAX];
        shard_scene_child_path(sub, path, k->text);
        if (k->len >= SHARD_NAME_MAX || strlen(k->text) != k->len)
            return shard_scene_fail(c, k, sub, "material name must be at most %d characters", SHARD_NAME_MAX - 1);
        for (int j = 0; j < s->n_materials; j++)
            if (strcmp(s->materials[j].name, k->text) == 0)
                return shard_scene_fail(c, k, sub, "duplicate material (first defined at line %d)", s->materials[j].loc.line);
        shard_material *m = &s->materials[s->n_materials++];
        memcpy(m->name, k->text, k->len + 1);
        shard_scene_make_loc(&m->loc, v, sub);
        int rc = shard_scene_parse_section(c, v, sub, &material_section, m);
        if (rc)
            return rc;
        if (m->stabilization_loc.line == 0 && m->fracture.criterion != SHARD_FRACTURE_NONE)
            m->stabilization = SHARD_FRACTURE_STABILIZATION;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------------------------
 * Bodies
 * ------------------------------------------------------------------------------------------------------------ */

static int shard_scene_parse_body_material(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    shard_body_def *b = target;
    const shard_scene *s = c->scene;
    char what[80];
    if (n->type != YN_SCALAR || shard_scene_is_null(n))
        return shard_scene_fail(c, n, path, "expected a material name, got %s", shard_scene_describe(what, n));
    for (int i = 0; i < s->n_materials; i++)
        if (strcmp(s->materials[i].name, n->text) == 0) {
            b->material = i;
            return 0;
        }
    char defined[512] = "";
    size_t used = 0;
    for (int i = 0; i < s->n_materials; i++)
        shard_list_append(defined, sizeof defined, &used, s->materials[i].name);
    return shard_scene_fail(c, n, path, "unknown material %s (defined: %s)", shard_scene_describe(what, n), defined);
}

/* A scalar that must be one of names[0..n): its index into *out, or a failure listing them. */
static int shard_scene_parse_choice(shard_scene_ctx *c, const shard_scene_node *n, const char *path,
                                    const char *const *names, int count, int *out)
{
    char what[80], list[160] = "";
    if (n->type == YN_SCALAR && !shard_scene_is_null(n))
        for (int k = 0; k < count; k++)
            if (strcmp(n->text, names[k]) == 0) {
                *out = k;
                return 0;
            }
    size_t used = 0;
    for (int k = 0; k < count; k++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s'%s'", k == 0 ? "" : k + 1 == count ? " or " : ", ",
                                 names[k]);
    return shard_scene_fail(c, n, path, "expected %s, got %s", list, shard_scene_describe(what, n));
}

static int shard_scene_parse_sampling(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    static const char *const names[] = {[SHARD_SAMPLING_LATTICE] = "lattice", [SHARD_SAMPLING_SURFACE] = "surface"};
    return shard_scene_parse_choice(c, n, path, names, 2, &((shard_body_def *)target)->sampling);
}

static int shard_scene_parse_clamp(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    static const char *const names[] = {[SHARD_CLAMP_PARTICLES] = "particles", [SHARD_CLAMP_FACE] = "face"};
    shard_scene_make_loc(&((shard_body_def *)target)->clamp_loc, n, path);
    return shard_scene_parse_choice(c, n, path, names, 2, &((shard_body_def *)target)->clamp);
}

static int shard_scene_parse_motion(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    static const char *const names[] = {[SHARD_MOTION_DYNAMIC] = "dynamic", [SHARD_MOTION_KINEMATIC] = "kinematic"};
    shard_body_def *b = target;
    shard_scene_make_loc(&b->motion_loc, n, path);
    return shard_scene_parse_choice(c, n, path, names, 2, &b->motion);
}

static shard_constraint *shard_scene_add_constraints(shard_body_def *b, size_t more)
{
    b->constraints = shard_realloc(b->constraints, (size_t)(b->n_constraints + (int)more) * sizeof *b->constraints);
    memset(b->constraints + b->n_constraints, 0, more * sizeof *b->constraints);
    return b->constraints + b->n_constraints;
}

static int shard_scene_check_region_list(shard_scene_ctx *c, const shard_scene_node *n, const char *path, const char *what_items)
{
    char what[80];
    if (n->type != YN_SEQ)
        return shard_scene_fail(c, n, path, "expected a sequence of %s, got %s", what_items, shard_scene_describe(what, n));
    return 0;
}

/* A sequence of constraints, each item read by `item` into a new shard_constraint (after its location). */
static int shard_scene_parse_constraints(shard_scene_ctx *c, const shard_scene_node *n, const char *path, shard_body_def *b,
                             const char *what_items, int (*item)(shard_scene_ctx *, const shard_scene_node *, const char *, void *))
{
    if (shard_scene_is_null(n))
        return 0;
    int rc = shard_scene_check_region_list(c, n, path, what_items);
    if (rc)
        return rc;
    shard_scene_add_constraints(b, n->n);
    for (size_t k = 0; k < n->n; k++) {
        shard_constraint *con = &b->constraints[b->n_constraints++];
        char sub[KEY_MAX];
        shard_scene_index_path(sub, path, k);
        shard_scene_make_loc(&con->loc, n->kids[k], sub);
        if ((rc = item(c, n->kids[k], sub, con)))
            return rc;
    }
    return 0;
}

/* A fixed region: a prescribed velocity of zero. */
static int shard_scene_parse_fixed_item(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    return shard_scene_parse_region(c, n, path, &((shard_constraint *)target)->region);
}

static int shard_scene_parse_fixed(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    return shard_scene_parse_constraints(c, n, path, target, "regions", shard_scene_parse_fixed_item);
}

static const shard_scene_field prescribed_rows[] = {
    {.key = "region", .kind = FK_CUSTOM, .flags = F_REQUIRED, .offset = offsetof(shard_constraint, region),
     .parse = shard_scene_parse_region},
    {.key = "velocity", .kind = FK_VEC3, .flags = F_REQUIRED, .offset = offsetof(shard_constraint, velocity)},
    {.key = "spin", .kind = FK_VEC3, .offset = offsetof(shard_constraint, spin)},
    {.key = "center", .kind = FK_VEC3, .offset = offsetof(shard_constraint, center)},
    {.key = "start", .kind = FK_NUMBER, .offset = offsetof(shard_constraint, start), .r = GE(0)},
    {.key = "end", .kind = FK_NUMBER, .offset = offsetof(shard_constraint, end), .r = GE(0)},
};
static const shard_scene_section prescribed_section = SECTION(prescribed_rows, 0, NULL);

static int shard_scene_parse_prescribed_item(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    return shard_scene_parse_section(c, n, path, &prescribed_section, target);
}

static int shard_scene_parse_prescribed(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    return shard_scene_parse_constraints(c, n, path, target, "{region, velocity, spin, center, start, end} mappings",
                                        shard_scene_parse_prescribed_item);
}

/* notches: a sequence of boxes {min, max}, each of which may be flat along one axis (a planar pre-crack). */
static int shard_scene_check_notch(shard_scene_ctx *c, const shard_scene_node *node, const char *path, void *base)
{
    const shard_notch *nt = base;
    static const char axis[3] = {'x', 'y', 'z'};
    int flat = 0;
    char flats[16] = "";
    for (int d = 0; d < 3; d++) {
        if (!(nt->min[d] <= nt->max[d])) {
            char sub[KEY_MAX];
            shard_scene_child_path(sub, path, "max");
            return shard_scene_fail(c, shard_scene_map_get(node, "max", NULL), sub,
                                    "must be >= min along every axis, got %c: max %g < min %g (min = max along one "
                                    "axis makes a planar crack)", axis[d], nt->max[d], nt->min[d]);
        }
        if (nt->min[d] == nt->max[d]) {
            size_t u = strlen(flats);
            snprintf(flats + u, sizeof flats - u, "%s%c", flat ? ", " : "", axis[d]);
            flat++;
        }
    }
    if (flat > 1)
        return shard_scene_fail(c, node, path, "flat along %d axes (%s: min = max), so it is a %s, not a crack: a notch "
                                "may be flat along one axis only", flat, flats, flat == 2 ? "line" : "point");
    return 0;
}

static const shard_scene_field notch_rows[] = {
    {.key = "min", .kind = FK_VEC3, .flags = F_REQUIRED, .offset = offsetof(shard_notch, min)},
    {.key = "max", .kind = FK_VEC3, .flags = F_REQUIRED, .offset = offsetof(shard_notch, max)},
};
static const shard_scene_section notch_section = SECTION(notch_rows, 0, shard_scene_check_notch);

/* A sequence of mappings, each read with `section` into a new element (elem bytes, its shard_src_loc at
 * loc_offset) of *items, *count of them (an empty or null value: none). */
static int shard_scene_parse_list(shard_scene_ctx *c, const shard_scene_node *n, const char *path, const char *what,
                                  const shard_scene_section *section, size_t elem, size_t loc_offset, void **items,
                                  int *count)
{
    if (shard_scene_is_null(n))
        return 0;
    int rc = shard_scene_check_region_list(c, n, path, what);
    if (rc)
        return rc;
    char *base = shard_calloc(n->n + 1, elem);
    *items = base;
    for (size_t k = 0; k < n->n; k++) {
        char *item = base + elem * (size_t)(*count)++;
        char sub[KEY_MAX];
        shard_scene_index_path(sub, path, k);
        shard_scene_make_loc((shard_src_loc *)(item + loc_offset), n->kids[k], sub);
        if ((rc = shard_scene_parse_section(c, n->kids[k], sub, section, item)))
            return rc;
    }
    return 0;
}

static int shard_scene_parse_notches(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    shard_body_def *b = target;
    return shard_scene_parse_list(c, n, path, "{min, max} boxes", &notch_section, sizeof(shard_notch),
                                  offsetof(shard_notch, loc), (void **)&b->notches, &b->n_notches);
}

static const shard_scene_field traction_rows[] = {
    {.key = "region", .kind = FK_CUSTOM, .flags = F_REQUIRED, .offset = offsetof(shard_traction, region),
     .parse = shard_scene_parse_region},
    {.key = "stress", .kind = FK_VEC3, .flags = F_REQUIRED, .offset = offsetof(shard_traction, stress)},
    {.key = "start", .kind = FK_NUMBER, .offset = offsetof(shard_traction, start), .r = GE(0)},
    {.key = "end", .kind = FK_NUMBER, .offset = offsetof(shard_traction, end), .r = GE(0)},
};
static const shard_scene_section traction_section = SECTION(traction_rows, 0, NULL);

static int shard_scene_parse_tractions(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    shard_body_def *b = target;
    return shard_scene_parse_list(c, n, path, "{region, stress} mappings", &traction_section,
                                  sizeof(shard_traction), offsetof(shard_traction, loc), (void **)&b->tractions,
                                  &b->n_tractions);
}

/* fixed before prescribed: rows are read in table order, which fixes the order of constraints[]. */
static const shard_scene_field body_rows[] = {
    {.key = "name", .kind = FK_STRING, .offset = offsetof(shard_body_def, name), .size = SHARD_NAME_MAX},
    {.key = "kind", .kind = FK_STRING, .offset = offsetof(shard_body_def, kind), .size = SHARD_KIND_MAX,
     .def_str = "solid", .loc_offset = OFF1(shard_body_def, kind_loc)},
    {.key = "material", .kind = FK_CUSTOM, .flags = F_REQUIRED, .parse = shard_scene_parse_body_material},
    {.key = "shape", .kind = FK_CUSTOM, .flags = F_REQUIRED, .offset = offsetof(shard_body_def, shape),
     .parse = shard_scene_parse_body_shape},
    {.key = "spacing", .kind = FK_NUMBER, .offset = offsetof(shard_body_def, spacing), .r = GT(0),
     .loc_offset = OFF1(shard_body_def, spacing_loc)},
    {.key = "thickness", .kind = FK_NUMBER, .offset = offsetof(shard_body_def, thickness), .r = GT(0),
     .loc_offset = OFF1(shard_body_def, thickness_loc)},
    {.key = "bending_stiffness", .kind = FK_NUMBER, .offset = offsetof(shard_body_def, bending),
     .r = GE(0), .def = {-1}, .loc_offset = OFF1(shard_body_def, bending_loc)},
    {.key = "support", .kind = FK_NUMBER, .offset = offsetof(shard_body_def, support), .r = IN('(', 1, 4, ']'),
     .def = {2.2}},
    {.key = "sampling", .kind = FK_CUSTOM, .parse = shard_scene_parse_sampling},
    {.key = "velocity", .kind = FK_VEC3, .offset = offsetof(shard_body_def, velocity)},
    {.key = "angular_velocity", .kind = FK_VEC3, .offset = offsetof(shard_body_def, angular_velocity)},
    {.key = "motion", .kind = FK_CUSTOM, .parse = shard_scene_parse_motion},
    {.key = "fixed", .kind = FK_CUSTOM, .parse = shard_scene_parse_fixed},
    {.key = "prescribed", .kind = FK_CUSTOM, .parse = shard_scene_parse_prescribed},
    {.key = "clamp", .kind = FK_CUSTOM, .parse = shard_scene_parse_clamp},
    {.key = "notches", .kind = FK_CUSTOM, .parse = shard_scene_parse_notches},
    {.key = "tractions", .kind = FK_CUSTOM, .parse = shard_scene_parse_tractions},
};
/* A lattice body gives its spacing.  A surface (cloth) is a grid, or a mesh with a thickness: a grid has its
 * spacing from its divisions (the shorter cell edge); a surface mesh gives its spacing (its typical edge length,
 * for the contact skin and stiffness).  Surfaces have a thickness and may give their bending stiffness. */
static int shard_scene_check_body(shard_scene_ctx *c, const shard_scene_node *node, const char *path, void *base)
{
    shard_body_def *b = base;
    char sub[KEY_MAX];
    int grid = b->shape.kind == SHARD_SHAPE_GRID, mesh = b->shape.kind == SHARD_SHAPE_MESH;
    if (!grid) {
        if (b->spacing_loc.line == 0)
            return shard_scene_fail(c, node, path, "missing required key 'spacing'");
        static const char *const surface_keys[] = {"bending_stiffness", "thickness"};
        for (int k = 0; k < 2 && !(mesh && b->thickness_loc.line > 0); k++) { /* a mesh with a thickness: a surface */
            const shard_scene_node *v = shard_scene_map_get(node, surface_keys[k], NULL);
            if (v) {
                shard_scene_child_path(sub, path, surface_keys[k]);
                return shard_scene_fail(c, v, sub, "is for surfaces (a shape `grid`, or a `mesh` with a thickness), "
                                                   "not for a body of this shape");
            }
        }
        return 0;
    }
    if (b->spacing_loc.line > 0) {
        shard_scene_child_path(sub, path, "spacing");
        return shard_scene_fail(c, shard_scene_map_get(node, "spacing", NULL), sub,
                                "a grid's spacing comes from its divisions: leave it out");
    }
    if (b->thickness_loc.line == 0)
        return shard_scene_fail(c, node, path, "missing required key 'thickness' (a surface's thickness, m)");
    const shard_shape *g = &b->shape;
    double lu = sqrt(g->u[0] * g->u[0] + g->u[1] * g->u[1] + g->u[2] * g->u[2]);
    double lv = sqrt(g->v[0] * g->v[0] + g->v[1] * g->v[1] + g->v[2] * g->v[2]);
    b->spacing = fmin(lu / (double)g->divisions[0], lv / (double)g->divisions[1]);
    b->spacing_loc = g->loc;
    return 0;
}
static const shard_scene_section body_section = SECTION(body_rows, 0, shard_scene_check_body);

static int shard_scene_parse_bodies(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    shard_scene *s = target;
    char what[80];
    if (n->type != YN_SEQ)
        return shard_scene_fail(c, n, path, "expected a sequence of bodies, got %s", shard_scene_describe(what, n));
    if (n->n == 0)
        return shard_scene_fail(c, n, path, "at least one body is required");
    s->bodies = shard_calloc(n->n, sizeof *s->bodies);
    for (size_t i = 0; i < n->n; i++) {
        shard_body_def *b = &s->bodies[s->n_bodies++];
        char sub[KEY_MAX];
        shard_scene_index_path(sub, path, i);
        shard_scene_make_loc(&b->loc, n->kids[i], sub);
        int rc = shard_scene_parse_section(c, n->kids[i], sub, &body_section, b);
        if (rc)
            return rc;
        if (!b->name[0])
            snprintf(b->name, sizeof b->name, "body%zu", i);
        for (size_t j = 0; j < i; j++)
            if (strcmp(s->bodies[j].name, b->name) == 0) {
                const shard_scene_node *name = shard_scene_map_get(n->kids[i], "name", NULL);
                char key[KEY_MAX];
                shard_scene_child_path(key, sub, "name");
                return shard_scene_fail(c, name ? name : n->kids[i], name ? key : sub, "duplicate body name '%s' (also %s)",
                            b->name, s->bodies[j].loc.key);
            }
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------------------------
 * Obstacles
 * ------------------------------------------------------------------------------------------------------------ */

static int shard_scene_check_plane(shard_scene_ctx *c, const shard_scene_node *node, const char *path, void *base)
{
    shard_obstacle_def *o = base;
    double len = sqrt(o->normal[0] * o->normal[0] + o->normal[1] * o->normal[1] + o->normal[2] * o->normal[2]);
    if (!(len > 0) || !isfinite(len)) {
        char sub[KEY_MAX];
        shard_scene_child_path(sub, path, "normal");
        return shard_scene_fail(c, shard_scene_map_get(node, "normal", NULL), sub, "must be a nonzero finite vector");
    }
    for (int d = 0; d < 3; d++)
        o->normal[d] /= len;
    return 0;
}

static int shard_scene_check_obstacle_box(shard_scene_ctx *c, const shard_scene_node *node, const char *path, void *base)
{
    const shard_obstacle_def *o = base;
    return shard_scene_check_box_corners(c, node, path, o->min, o->max);
}

static const shard_scene_field plane_rows[] = {
    {.key = "point", .kind = FK_VEC3, .flags = F_REQUIRED, .offset = offsetof(shard_obstacle_def, point)},
    {.key = "normal", .kind = FK_VEC3, .flags = F_REQUIRED, .offset = offsetof(shard_obstacle_def, normal)},
};
static const shard_scene_field obstacle_sphere_rows[] = {
    {.key = "center", .kind = FK_VEC3, .flags = F_REQUIRED, .offset = offsetof(shard_obstacle_def, center)},
    {.key = "radius", .kind = FK_NUMBER, .flags = F_REQUIRED, .offset = offsetof(shard_obstacle_def, radius),
     .r = GT(0)},
};
static const shard_scene_field obstacle_box_rows[] = {
    {.key = "min", .kind = FK_VEC3, .flags = F_REQUIRED, .offset = offsetof(shard_obstacle_def, min)},
    {.key = "max", .kind = FK_VEC3, .flags = F_REQUIRED, .offset = offsetof(shard_obstacle_def, max)},
};
static const shard_scene_section plane_section = SECTION(plane_rows, 0, shard_scene_check_plane);
static const shard_scene_section obstacle_sphere_section = SECTION(obstacle_sphere_rows, 0, NULL);
static const shard_scene_section obstacle_box_section = SECTION(obstacle_box_rows, 0, shard_scene_check_obstacle_box);

static const shard_scene_field obstacle_rows[] = {
    {.key = "plane", .kind = FK_MAP, .flags = F_REQUIRED, .group = 1, .sub = &plane_section,
     .variant = SHARD_OBSTACLE_PLANE},
    {.key = "sphere", .kind = FK_MAP, .flags = F_REQUIRED, .group = 1, .sub = &obstacle_sphere_section,
     .variant = SHARD_OBSTACLE_SPHERE},
    {.key = "box", .kind = FK_MAP, .flags = F_REQUIRED, .group = 1, .sub = &obstacle_box_section,
     .variant = SHARD_OBSTACLE_BOX},
    {.key = "name", .kind = FK_STRING, .offset = offsetof(shard_obstacle_def, name), .size = SHARD_NAME_MAX},
    {.key = "velocity", .kind = FK_VEC3, .offset = offsetof(shard_obstacle_def, velocity)},
    {.key = "friction", .kind = FK_NUMBER, .offset = offsetof(shard_obstacle_def, friction), .r = GE(0), .def = {0.5}},
    {.key = "stiffness", .kind = FK_NUMBER, .flags = F_AUTO, .offset = offsetof(shard_obstacle_def, stiffness),
     .r = GT(0)},
    {.key = "damping", .kind = FK_NUMBER, .offset = offsetof(shard_obstacle_def, damping), .r = IN('[', 0, 1, ']'),
     .def = {0.1}},
    {.key = "restitution", .kind = FK_NUMBER, .offset = offsetof(shard_obstacle_def, restitution),
     .r = IN('[', 0, 1, ']')},
};
static const shard_scene_section obstacle_section = SECTION(obstacle_rows, OFF1(shard_obstacle_def, kind), NULL);

static int shard_scene_parse_obstacles(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    shard_scene *s = target;
    char what[80];
    if (shard_scene_is_null(n))
        return 0;
    if (n->type != YN_SEQ)
        return shard_scene_fail(c, n, path, "expected a sequence of obstacles, got %s", shard_scene_describe(what, n));
    s->obstacles = shard_calloc(n->n, sizeof *s->obstacles);
    for (size_t i = 0; i < n->n; i++) {
        shard_obstacle_def *o = &s->obstacles[s->n_obstacles++];
        char sub[KEY_MAX];
        shard_scene_index_path(sub, path, i);
        shard_scene_make_loc(&o->loc, n->kids[i], sub);
        int rc = shard_scene_parse_section(c, n->kids[i], sub, &obstacle_section, o);
        if (rc)
            return rc;
        if (!o->name[0] && snprintf(o->name, sizeof o->name, "%s", sub) < 0)
            o->name[0] = '\0';
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------------------------
 * Run and the top level
 * ------------------------------------------------------------------------------------------------------------ */

static const shard_scene_field run_rows[] = {
    {.key = "gravity", .kind = FK_VEC3, .offset = offsetof(shard_run_def, gravity), .def = {0, 0, -9.81}},
    {.key = "steps", .kind = FK_INT, .flags = F_REQUIRED, .group = 1, .offset = offsetof(shard_run_def, steps),
     .loc_offset = OFF1(shard_run_def, steps_loc), .r = GT(0)},
    {.key = "end_time", .kind = FK_NUMBER, .flags = F_REQUIRED, .group = 1, .offset = offsetof(shard_run_def, end_time),
     .loc_offset = OFF1(shard_run_def, end_time_loc), .r = GT(0)},
    {.key = "dt", .kind = FK_NUMBER, .flags = F_AUTO, .offset = offsetof(shard_run_def, dt),
     .loc_offset = OFF1(shard_run_def, dt_loc), .r = GT(0)},
    {.key = "dt_safety", .kind = FK_NUMBER, .offset = offsetof(shard_run_def, dt_safety), .r = IN('(', 0, 1, ']'),
     .def = {0.4}},
    {.key = "diagnostics_every", .kind = FK_INT, .offset = offsetof(shard_run_def, diagnostics_every), .r = GE(0)},
    {.key = "output_dir", .kind = FK_STRING, .offset = offsetof(shard_run_def, output_dir), .size = SHARD_PATH_MAX,
     .def_str = "shard-out"},
    {.key = "skin", .kind = FK_NUMBER, .offset = offsetof(shard_run_def, skin), .r = GT(0), .def = {0.5}},
    {.key = "svd_threshold", .kind = FK_NUMBER, .offset = offsetof(shard_run_def, svd_threshold),
     .r = IN('(', 0, 1, ')'), .def = {1e-3}},
    {.key = "collision_passes", .kind = FK_INT, .offset = offsetof(shard_run_def, collision_passes), .r = GE(0),
     .def = {8}},
};
static const shard_scene_section run_section = SECTION(run_rows, 0, NULL);

/* ------------------------------------------------------------------------------------------------------------
 * Output and checkpoints
 * ------------------------------------------------------------------------------------------------------------ */

/* A sequence of field names, each at most once.  An empty sequence is allowed: position and global_id are
 * always written. */
static int shard_scene_parse_output_fields(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    unsigned *mask = target;
    char what[80];
    if (n->type != YN_SEQ)
        return shard_scene_fail(c, n, path, "expected a sequence of field names, got %s", shard_scene_describe(what, n));
    *mask = SHARD_OUT_ALWAYS;
    unsigned given = 0;
    for (size_t i = 0; i < n->n; i++) {
        const shard_scene_node *k = n->kids[i];
        char sub[KEY_MAX];
        shard_scene_index_path(sub, path, i);
        int f = k->type == YN_SCALAR && !shard_scene_is_null(k) ? shard_output_field_find(k->text) : -1;
        if (f < 0) {
            char allowed[512] = "";
            size_t used = 0;
            for (int j = 0; j < SHARD_OUT_COUNT; j++)
                shard_list_append(allowed, sizeof allowed, &used, shard_output_fields[j].name);
            return shard_scene_fail(c, k, sub, "unknown field %s (allowed: %s)", shard_scene_describe(what, k), allowed);
        }
        if (given & 1u << f)
            return shard_scene_fail(c, k, sub, "field '%s' is listed twice", shard_output_fields[f].name);
        given |= 1u << f;
        *mask |= 1u << f;
    }
    return 0;
}

static const shard_scene_field output_rows[] = {
    {.key = "every", .kind = FK_INT, .flags = F_REQUIRED, .group = 1,
     .offset = offsetof(shard_output_def, interval.every), .r = GT(0)},
    {.key = "every_time", .kind = FK_NUMBER, .flags = F_REQUIRED, .group = 1,
     .offset = offsetof(shard_output_def, interval.every_time), .r = GT(0)},
    {.key = "fields", .kind = FK_CUSTOM, .offset = offsetof(shard_output_def, fields), .parse = shard_scene_parse_output_fields},
    {.key = "dir", .kind = FK_STRING, .offset = offsetof(shard_output_def, dir), .size = SHARD_PATH_MAX},
};
static const shard_scene_section output_section = SECTION(output_rows, 0, NULL);

static const shard_scene_field checkpoint_rows[] = {
    {.key = "every", .kind = FK_INT, .flags = F_REQUIRED, .group = 1,
     .offset = offsetof(shard_checkpoint_def, interval.every), .r = GT(0)},
    {.key = "every_time", .kind = FK_NUMBER, .flags = F_REQUIRED, .group = 1,
     .offset = offsetof(shard_checkpoint_def, interval.every_time), .r = GT(0)},
    {.key = "keep", .kind = FK_INT, .offset = offsetof(shard_checkpoint_def, keep), .r = GE(1), .def = {2}},
    {.key = "dir", .kind = FK_STRING, .offset = offsetof(shard_checkpoint_def, dir), .size = SHARD_PATH_MAX},
};
static const shard_scene_section checkpoint_section = SECTION(checkpoint_rows, 0, NULL);

/* The sections are optional; giving one switches the feature on. */
static int shard_scene_parse_output(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    shard_output_def *o = target;
    o->enabled = 1;
    o->fields = SHARD_OUT_ALL;
    shard_scene_make_loc(&o->loc, n, path);
    return shard_scene_parse_section(c, n, path, &output_section, o);
}

static int shard_scene_parse_checkpoint(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    shard_checkpoint_def *o = target;
    o->enabled = 1;
    shard_scene_make_loc(&o->loc, n, path);
    return shard_scene_parse_section(c, n, path, &checkpoint_section, o);
}

static int shard_scene_parse_relax_method(shard_scene_ctx *c, const shard_scene_node *n, const char *path,
                                          void *target)
{
    static const char *const names[] = {[SHARD_RELAX_DYNAMIC] = "dynamic", [SHARD_RELAX_CG] = "cg"};
    return shard_scene_parse_choice(c, n, path, names, 2, &((shard_relax_def *)target)->method);
}

static const shard_scene_field relax_rows[] = {
    {.key = "tolerance", .kind = FK_NUMBER, .offset = offsetof(shard_relax_def, tolerance), .r = IN('(', 0, 1, ')'),
     .def = {1e-4}},
    {.key = "max_steps", .kind = FK_INT, .offset = offsetof(shard_relax_def, max_steps), .r = GT(0), .def = {100000}},
    {.key = "dt_safety", .kind = FK_NUMBER, .offset = offsetof(shard_relax_def, dt_safety), .r = IN('(', 0, 1, ']'),
     .def = {0.9}},
    {.key = "method", .kind = FK_CUSTOM, .parse = shard_scene_parse_relax_method},
};
static const shard_scene_section relax_section = SECTION(relax_rows, 0, NULL);

static int shard_scene_parse_relax(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    shard_relax_def *o = target;
    o->enabled = 1;
    shard_scene_make_loc(&o->loc, n, path);
    return shard_scene_parse_section(c, n, path, &relax_section, o);
}

static const shard_scene_field fragments_rows[] = {
    {.key = "fit_min", .kind = FK_INT, .offset = offsetof(shard_fragments_def, fit_min), .r = GE(1), .def = {3}},
};
static const shard_scene_section fragments_section = SECTION(fragments_rows, 0, NULL);

static int shard_scene_parse_fragments(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    shard_fragments_def *o = target;
    shard_scene_make_loc(&o->loc, n, path);
    return shard_scene_parse_section(c, n, path, &fragments_section, o);
}

static int shard_scene_parse_balance_method(shard_scene_ctx *c, const shard_scene_node *n, const char *path,
                                            void *target)
{
    static const char *const names[] = {[SHARD_BALANCE_RCB] = "rcb", [SHARD_BALANCE_HSFC] = "hsfc",
                                        [SHARD_BALANCE_GRAPH] = "graph"};
    return shard_scene_parse_choice(c, n, path, names, 3, &((shard_balance_def *)target)->method);
}

static int shard_scene_parse_balance_cost(shard_scene_ctx *c, const shard_scene_node *n, const char *path,
                                          void *target)
{
    static const char *const names[] = {[SHARD_BALANCE_COST_TIME] = "time", [SHARD_BALANCE_COST_COUNTS] = "counts"};
    return shard_scene_parse_choice(c, n, path, names, 2, &((shard_balance_def *)target)->cost);
}

static const shard_scene_field balance_rows[] = {
    {.key = "every", .kind = FK_INT, .offset = offsetof(shard_balance_def, every), .r = GE(1), .def = {100}},
    {.key = "threshold", .kind = FK_NUMBER, .offset = offsetof(shard_balance_def, threshold), .r = GE(1),
     .def = {1.1}},
    {.key = "method", .kind = FK_CUSTOM, .parse = shard_scene_parse_balance_method},
    {.key = "cost", .kind = FK_CUSTOM, .parse = shard_scene_parse_balance_cost},
    {.key = "ghost_growth", .kind = FK_NUMBER, .offset = offsetof(shard_balance_def, ghost_growth), .r = GE(0),
     .def = {2.0}},
};
/* ghost_growth: 0 (never) or a factor >= 1 (a factor below 1 would repartition at every check). */
static int shard_scene_check_balance(shard_scene_ctx *c, const shard_scene_node *node, const char *path, void *base)
{
    const shard_balance_def *b = base;
    if (b->ghost_growth > 0.0 && b->ghost_growth < 1.0) {
        char sub[KEY_MAX];
        shard_scene_child_path(sub, path, "ghost_growth");
        return shard_scene_fail(c, shard_scene_map_get(node, "ghost_growth", NULL), sub,
                                "must be 0 (never) or >= 1, got %g", b->ghost_growth);
    }
    return 0;
}
static const shard_scene_section balance_section = SECTION(balance_rows, 0, shard_scene_check_balance);

static int shard_scene_parse_balance(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    shard_balance_def *o = target;
    o->enabled = 1;
    shard_scene_make_loc(&o->loc, n, path);
    return shard_scene_parse_section(c, n, path, &balance_section, o);
}

static const shard_scene_field rigid_rows[] = {
    {.key = "iterations", .kind = FK_INT, .offset = offsetof(shard_rigid_def, iterations), .r = GE(1), .def = {300}},
    {.key = "tolerance", .kind = FK_NUMBER, .offset = offsetof(shard_rigid_def, tolerance), .r = GT(0),
     .def = {1e-6}},
    {.key = "restitution_threshold", .kind = FK_NUMBER, .offset = offsetof(shard_rigid_def, restitution_threshold),
     .r = GE(0), .def = {0.05}},
    {.key = "position_correction", .kind = FK_NUMBER, .offset = offsetof(shard_rigid_def, position_correction),
     .r = IN('[', 0, 1, ']'), .def = {0.2}},
    {.key = "slop", .kind = FK_NUMBER, .offset = offsetof(shard_rigid_def, slop), .r = GE(0), .def = {0.001}},
    {.key = "margin", .kind = FK_NUMBER, .offset = offsetof(shard_rigid_def, margin), .r = GE(0), .def = {0.5}},
};
static const shard_scene_section rigid_section = SECTION(rigid_rows, 0, NULL);

/* catalyst: {script: FILE, every: N}, or a sequence of such mappings (at most SHARD_CATALYST_MAX). */
static int shard_scene_check_catalyst(shard_scene_ctx *c, const shard_scene_node *node, const char *path, void *base)
{
    shard_catalyst_def *d = base;
    char sub[KEY_MAX];
    shard_scene_child_path(sub, path, "script");
    return shard_scene_resolve_path(c, shard_scene_map_get(node, "script", NULL), sub, d->script);
}

static const shard_scene_field catalyst_rows[] = {
    {.key = "script", .kind = FK_STRING, .flags = F_REQUIRED, .offset = offsetof(shard_catalyst_def, script),
     .size = SHARD_PATH_MAX},
    {.key = "every", .kind = FK_INT, .offset = offsetof(shard_catalyst_def, every), .r = GE(1), .def = {1}},
};
static const shard_scene_section catalyst_section = SECTION(catalyst_rows, 0, shard_scene_check_catalyst);

static int shard_scene_parse_catalyst(shard_scene_ctx *c, const shard_scene_node *n, const char *path, void *target)
{
    shard_scene *s = target;
    char what[80];
    if (shard_scene_is_null(n))
        return 0;
    if (n->type == YN_MAP) {
        shard_catalyst_def *d = &s->catalyst[s->n_catalyst++];
        shard_scene_make_loc(&d->loc, n, path);
        return shard_scene_parse_section(c, n, path, &catalyst_section, d);
    }
    if (n->type != YN_SEQ)
        return shard_scene_fail(c, n, path, "expected {script: FILE, every: N} or a sequence of them, got %s", shard_scene_describe(what, n));
    if (n->n > SHARD_CATALYST_MAX)
        return shard_scene_fail(c, n, path, "at most %d scripts, got %zu", SHARD_CATALYST_MAX, n->n);
    for (size_t i = 0; i < n->n; i++) {
        shard_catalyst_def *d = &s->catalyst[s->n_catalyst++];
        char sub[KEY_MAX];
        shard_scene_index_path(sub, path, i);
        shard_scene_make_loc(&d->loc, n->kids[i], sub);
        int rc = shard_scene_parse_section(c, n->kids[i], sub, &catalyst_section, d);
        if (rc)
            return rc;
    }
    return 0;
}

/* Table order is processing order: materials must exist before bodies name them. */
static const shard_scene_field top_rows[] = {
    {.key = "run", .kind = FK_MAP, .flags = F_REQUIRED, .offset = offsetof(shard_scene, run), .sub = &run_section},
    {.key = "materials", .kind = FK_CUSTOM, .flags = F_REQUIRED, .parse = shard_scene_parse_materials},
    {.key = "bodies", .kind = FK_CUSTOM, .flags = F_REQUIRED, .parse = shard_scene_parse_bodies},
    {.key = "obstacles", .kind = FK_CUSTOM, .parse = shard_scene_parse_obstacles},
    {.key = "output", .kind = FK_CUSTOM, .offset = offsetof(shard_scene, output), .parse = shard_scene_parse_output},
    {.key = "checkpoint", .kind = FK_CUSTOM, .offset = offsetof(shard_scene, checkpoint), .parse = shard_scene_parse_checkpoint},
    {.key = "catalyst", .kind = FK_CUSTOM, .parse = shard_scene_parse_catalyst},
    {.key = "relax", .kind = FK_CUSTOM, .offset = offsetof(shard_scene, relax), .parse = shard_scene_parse_relax},
    {.key = "fragments", .kind = FK_CUSTOM, .offset = offsetof(shard_scene, fragments),
     .parse = shard_scene_parse_fragments},
    {.key = "balance", .kind = FK_CUSTOM, .offset = offsetof(shard_scene, balance), .parse = shard_scene_parse_balance},
    {.key = "rigid", .kind = FK_MAP, .offset = offsetof(shard_scene, rigid), .sub = &rigid_section},
};
static const shard_scene_section top_section = SECTION(top_rows, 0, NULL);

/* ------------------------------------------------------------------------------------------------------------
 * Public entry points
 * ------------------------------------------------------------------------------------------------------------ */

static void shard_scene_set_dir(char dir[SHARD_PATH_MAX], const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, SHARD_PATH_MAX, ".");
    else if (slash == path)
        snprintf(dir, SHARD_PATH_MAX, "/");
    else
        snprintf(dir, SHARD_PATH_MAX, "%.*s", (int)(slash - path), path);
}

/* A scene is UTF-8 text: the first NUL byte or invalid UTF-8 sequence is named by line and column (a UTF-16
 * or binary file would otherwise reach the YAML parser as an "empty" document). */
static int shard_scene_check_text(const char *path, const char *text, size_t len, shard_error *err)
{
    const unsigned char *u = (const unsigned char *)text;
    if (len >= 2 && ((u[0] == 0xff && u[1] == 0xfe) || (u[0] == 0xfe && u[1] == 0xff)))
        return shard_error_set(err, SHARD_EXIT_INPUT, "%s:1:1: the file is UTF-16 text; save the scene as UTF-8",
                               path);
    int line = 1, col = 1;
    for (size_t i = 0; i < len;) {
        unsigned c = u[i];
        size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
        int ok = n > 0 && i + n <= len && !(n == 2 && c < 0xc2);
        for (size_t k = 1; ok && k < n; k++)
            ok = (u[i + k] & 0xc0) == 0x80;
        if (c == 0)
            return shard_error_set(err, SHARD_EXIT_INPUT, "%s:%d:%d: the file holds a NUL byte: a scene is a text "
                                   "file (is this the right file?)", path, line, col);
        if (!ok)
            return shard_error_set(err, SHARD_EXIT_INPUT, "%s:%d:%d: not UTF-8 text (byte 0x%02x): save the scene "
                                   "as UTF-8", path, line, col, c);
        if (c == '\n')
            line++, col = 1;
        else
            col++;
        i += n;
    }
    return 0;
}

int shard_scene_parse(const char *path, const char *text, size_t len, shard_scene *scene, shard_error *err)
{
    memset(scene, 0, sizeof *scene);
    snprintf(scene->path, sizeof scene->path, "%s", path);
    shard_scene_set_dir(scene->dir, scene->path);
    scene->text = shard_scene_dup_text(text, len);
    scene->text_len = len;

    shard_scene_ctx ctx = {.file = scene->path, .err = err, .scene = scene};
    shard_scene_tree tree = {0};
    int rc = shard_scene_check_text(scene->path, scene->text, len, err);
    if (!rc)
        rc = shard_scene_ytree_build(&ctx, scene->text, len, &tree);
    if (!rc) {
        const shard_scene_node *root = tree.root;
        char what[80];
        if (!root || (root->type == YN_SCALAR && shard_scene_is_null(root)))
            rc = shard_scene_fail(&ctx, root, "", "the file is empty (expected a mapping with keys run, materials, bodies)");
        else if (root->type != YN_MAP)
            rc = shard_scene_fail(&ctx, root, "", "expected a mapping with keys run, materials, bodies at the top level, got %s",
                      shard_scene_describe(what, root));
        else
            rc = shard_scene_parse_section(&ctx, root, "", &top_section, scene);
    }
    shard_scene_ytree_free(&tree);
    if (rc) {
        shard_scene_free(scene);
        return rc;
    }
    if (scene->fragments.fit_min == 0) /* no `fragments` section: its defaults */
        scene->fragments.fit_min = 3;
    return 0;
}

void shard_scene_free(shard_scene *scene)
{
    if (!scene)
        return;
    free(scene->text);
    free(scene->materials);
    for (int i = 0; i < scene->n_bodies; i++) {
        if (scene->bodies[i].shape.mesh) {
            shard_mesh_free(scene->bodies[i].shape.mesh);
            free(scene->bodies[i].shape.mesh);
        }
        free(scene->bodies[i].constraints);
        free(scene->bodies[i].notches);
        free(scene->bodies[i].tractions);
    }
    free(scene->bodies);
    free(scene->obstacles);
    memset(scene, 0, sizeof *scene);
}
