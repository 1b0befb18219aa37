/* Scene parser: YAML text to shard_scene, with every check that needs nothing but the text.
 *
 * This file owns three things.  First, a small YAML tree built from libfyaml's event stream: the document API
 * of libfyaml 0.7 does not expose where a mapping or sequence starts, and every message here must name a line
 * and column, so the parser keeps its own nodes with 1-based positions.  libfyaml's diagnostics are collected,
 * never printed; its first error becomes "file:line:col: syntax error: text".  Second, a table-driven reader:
 * each section of the scene (run, a material, a body, a shape, an obstacle, ...) is a table of rows giving
 * the key, its type, where it lands in the C struct, its range and its default.  A new key is a new row;
 * keys not in the table are errors everywhere.  Third, the inside tests for analytic shapes.  Meshes are read
 * and sampled elsewhere (io/mesh.h); here a mesh's file name is only resolved against the scene's folder.
 */
#include "shard/scene.h"

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

typedef enum ynode_type { YN_SCALAR, YN_SEQ, YN_MAP } ynode_type;

typedef struct ynode {
    ynode_type type;
    int line, col;        /* 1-based */
    bool plain;           /* scalar written without quotes (only plain scalars can mean null) */
    char *text;           /* scalar: NUL-terminated content */
    size_t len;
    char *anchor;         /* "&name" given on this node, for later aliases */
    bool complete;        /* all of the node has been read (its end event seen) */
    struct ynode **kids;  /* sequence: items; mapping: key, value, key, value, ... */
    size_t n, cap;
} ynode;

typedef struct ytree {
    ynode *root;
    ynode **all; /* every node once, for freeing: aliases share nodes */
    size_t n_all, cap_all;
} ytree;

typedef struct parse_ctx {
    const char *file; /* the scene path, first in every message */
    shard_error *err;
    shard_scene *scene;
} parse_ctx;

static void ytree_free(ytree *t)
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

static char *dup_text(const char *s, size_t len)
{
    char *d = shard_malloc(len + 1);
    if (len)
        memcpy(d, s, len);
    d[len] = '\0';
    return d;
}

static ynode *ytree_new(ytree *t, ynode_type type, int line, int col)
{
    ynode *n = shard_calloc(1, sizeof *n);
    n->type = type;
    n->line = line;
    n->col = col;
    shard_reserve((void **)&t->all, &t->cap_all, t->n_all + 1, sizeof *t->all);
    t->all[t->n_all++] = n;
    return n;
}

static void ynode_append(ynode *parent, ynode *kid)
{
    shard_reserve((void **)&parent->kids, &parent->cap, parent->n + 1, sizeof *parent->kids);
    parent->kids[parent->n++] = kid;
}

static char *token_text(struct fy_token *tok, size_t *len)
{
    size_t l = 0;
    const char *s = tok ? fy_token_get_text(tok, &l) : NULL;
    if (!s)
        l = 0;
    if (len)
        *len = l;
    return dup_text(s ? s : "", l);
}

/* Errors are collected rather than printed; this sink swallows whatever else libfyaml might want to say, so the
 * library never writes to the terminal on its own. */
static void diag_sink(struct fy_diag *diag, void *user, const char *buf, size_t len)
{
    (void)diag;
    (void)user;
    (void)buf;
    (void)len;
}

static int syntax_error(parse_ctx *c, int line, int col, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int syntax_error(parse_ctx *c, int line, int col, const char *fmt, ...)
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
static int ytree_build(parse_ctx *c, const char *text, size_t len, ytree *t)
{
    struct fy_diag_cfg dcfg;
    fy_diag_cfg_default(&dcfg);
    dcfg.fp = NULL;
    dcfg.output_fn = diag_sink;
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
    ynode **stack = NULL;
    size_t depth = 0, cap = 0;
    struct fy_event *e;
    while (!rc && (e = fy_parser_parse(fyp)) != NULL) {
        const struct fy_mark *m = fy_event_start_mark(e);
        if (m) {
            last_line = m->line + 1;
            last_col = m->column + 1;
        }
        ynode *node = NULL;
        struct fy_token *anchor = NULL;
        switch (e->type) {
        case FYET_DOCUMENT_START:
            n_docs++;
            break;
        case FYET_SCALAR:
            node = ytree_new(t, YN_SCALAR, last_line, last_col);
            node->text = token_text(e->scalar.value, &node->len);
            node->plain = !e->scalar.value || fy_event_get_node_style(e) == FYNS_PLAIN;
            node->complete = true;
            anchor = e->scalar.anchor;
            break;
        case FYET_MAPPING_START:
            node = ytree_new(t, YN_MAP, last_line, last_col);
            anchor = e->mapping_start.anchor;
            break;
        case FYET_SEQUENCE_START:
            node = ytree_new(t, YN_SEQ, last_line, last_col);
            anchor = e->sequence_start.anchor;
            break;
        case FYET_ALIAS: {
            /* Only complete nodes qualify, so an alias can never make a collection contain itself. */
            char *name = token_text(e->alias.anchor, NULL);
            for (size_t i = t->n_all; i-- > 0 && !node;)
                if (t->all[i]->complete && t->all[i]->anchor && strcmp(t->all[i]->anchor, name) == 0)
                    node = t->all[i];
            /* The event's mark is the anchor name's, one past the '*'. */
            if (!node)
                rc = syntax_error(c, last_line, last_col > 1 ? last_col - 1 : 1, "undefined alias '*%s'", name);
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
            rc = syntax_error(c, node->line, node->col, "a scene file holds one YAML document, found a second one");
        if (!rc && node) {
            if (depth > 0)
                ynode_append(stack[depth - 1], node);
            else
                t->root = node;
            if (anchor)
                node->anchor = token_text(anchor, NULL);
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
            rc = syntax_error(c, first->line, first->column, "%s", first->msg ? first->msg : "invalid YAML");
        else
            rc = syntax_error(c, last_line, last_col, "invalid YAML");
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
static void make_loc(shard_src_loc *loc, const ynode *n, const char *path)
{
    loc->line = n ? n->line : 1;
    loc->col = n ? n->col : 1;
    snprintf(loc->key, sizeof loc->key, "%s", path[0] ? path : "scene");
}

static int fail(parse_ctx *c, const ynode *n, const char *path, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(parse_ctx *c, const ynode *n, const char *path, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    shard_src_loc loc;
    make_loc(&loc, n, path);
    return shard_error_at(c->err, c->file, &loc, "%s", msg);
}

/* Paths longer than a shard_src_loc key are cut short: the message stays readable and line:col stays exact. */
static void child_path(char out[KEY_MAX], const char *parent, const char *key)
{
    int w = parent[0] ? snprintf(out, KEY_MAX, "%s.%s", parent, key) : snprintf(out, KEY_MAX, "%s", key);
    if (w < 0)
        out[0] = '\0';
}

static void index_path(char out[KEY_MAX], const char *parent, size_t i)
{
    if (snprintf(out, KEY_MAX, "%s[%zu]", parent, i) < 0)
        out[0] = '\0';
}

/* The shortest %g form that reads back as the same double, so "got 0.5" is never a rounded 0.50000001. */
static const char *fmt_num(char buf[32], double v)
{
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, 32, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return buf;
}

static bool is_null(const ynode *n)
{
    return n->type == YN_SCALAR && n->plain &&
           (n->len == 0 || strcmp(n->text, "~") == 0 || strcmp(n->text, "null") == 0 ||
            strcmp(n->text, "Null") == 0 || strcmp(n->text, "NULL") == 0);
}

/* "'abc'", "an empty value", "a mapping", "a sequence": what was found where something else was expected. */
static const char *describe(char buf[80], const ynode *n)
{
    if (n->type == YN_MAP)
        return "a mapping";
    if (n->type == YN_SEQ)
        return "a sequence";
    if (is_null(n))
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
static bool looks_decimal(const char *s)
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

static bool looks_nonfinite(const char *s)
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
static int get_number(parse_ctx *c, const ynode *n, const char *path, bool allow_auto, double *out, bool *is_auto)
{
    char what[80];
    const char *expected = allow_auto ? "a number or 'auto'" : "a number";
    if (is_auto)
        *is_auto = false;
    if (n->type != YN_SCALAR || is_null(n))
        return fail(c, n, path, "expected %s, got %s", expected, describe(what, n));
    if (allow_auto && strcmp(n->text, "auto") == 0) {
        *out = 0;
        if (is_auto)
            *is_auto = true;
        return 0;
    }
    if (looks_nonfinite(n->text))
        return fail(c, n, path, "must be a finite number, got %s", describe(what, n));
    if (!looks_decimal(n->text))
        return fail(c, n, path, "expected %s, got %s", expected, describe(what, n));
    /* strtod follows LC_NUMERIC; Shard never calls setlocale, so the C locale's '.' applies. */
    double v = strtod(n->text, NULL);
    if (!isfinite(v))
        return fail(c, n, path, "must be a finite number, got %s", describe(what, n));
    *out = v;
    return 0;
}

static int get_vec3(parse_ctx *c, const ynode *n, const char *path, double out[3])
{
    char what[80];
    if (n->type != YN_SEQ)
        return fail(c, n, path, "expected a sequence of 3 numbers, got %s", describe(what, n));
    if (n->n != 3)
        return fail(c, n, path, "expected a sequence of 3 numbers, got %zu item%s", n->n, n->n == 1 ? "" : "s");
    for (size_t i = 0; i < 3; i++) {
        char sub[KEY_MAX];
        index_path(sub, path, i);
        int rc = get_number(c, n->kids[i], sub, false, &out[i], NULL);
        if (rc)
            return rc;
    }
    return 0;
}

static int get_string(parse_ctx *c, const ynode *n, const char *path, char *out, size_t size)
{
    char what[80];
    if (n->type != YN_SCALAR || is_null(n))
        return fail(c, n, path, "expected a string, got %s", describe(what, n));
    if (n->len == 0)
        return fail(c, n, path, "must not be empty");
    if (n->len >= size || strlen(n->text) != n->len)
        return fail(c, n, path, "must be at most %zu characters without NUL bytes", size - 1);
    memcpy(out, n->text, n->len + 1);
    return 0;
}

/* ------------------------------------------------------------------------------------------------------------
 * Tables
 * ------------------------------------------------------------------------------------------------------------ */

typedef enum field_kind {
    FK_NUMBER, /* double */
    FK_INT,    /* long; the text may be any number with an integral value */
    FK_VEC3,   /* double[3] */
    FK_STRING, /* char[size] */
    FK_MAP,    /* a nested section whose struct sits at offset (often 0: the same struct) */
    FK_CUSTOM, /* parse(ctx, value node, key path, base + offset) */
} field_kind;

enum {
    F_REQUIRED = 1, /* for a group: one member must be given */
    F_AUTO = 2,     /* FK_NUMBER: the word 'auto' is accepted and stored as 0 */
};

/* Allowed values: lo_kind '(' or '[' (0: unbounded below), hi_kind ')' or ']' (0: unbounded above). */
typedef struct range {
    char lo_kind, hi_kind;
    double lo, hi;
} range;

#define GT(a) {.lo_kind = '(', .lo = (a)}
#define GE(a) {.lo_kind = '[', .lo = (a)}
#define IN(lk, a, b, hk) {.lo_kind = (lk), .lo = (a), .hi = (b), .hi_kind = (hk)}

/* offsetof + 1, so that 0 (what a row or section that does not set the field gets) can mean "none". */
#define OFF1(T, m) (offsetof(T, m) + 1)

struct section;
typedef int (*custom_fn)(parse_ctx *c, const ynode *value, const char *path, void *target);
typedef int (*check_fn)(parse_ctx *c, const ynode *node, const char *path, void *base);

typedef struct field {
    const char *key;
    field_kind kind;
    unsigned flags;
    int group;                 /* nonzero: keys of one group exclude each other */
    size_t offset;             /* of the value in the section's struct */
    size_t loc_offset;         /* OFF1 of a shard_src_loc that receives the value's position, or 0 */
    range r;
    double def[3];             /* FK_NUMBER, FK_INT (def[0]), FK_VEC3: value when the key is absent */
    const char *def_str;       /* FK_STRING: value when absent */
    size_t size;               /* FK_STRING: capacity including the NUL */
    const struct section *sub; /* FK_MAP */
    custom_fn parse;           /* FK_CUSTOM */
    int variant;               /* group member: stored in the section's variant field when this key is given */
} field;

typedef struct section {
    const field *fields;
    size_t n;
    size_t variant_offset; /* OFF1 of the enum (an int) set to the given group member's variant, or 0 */
    check_fn check;        /* cross-key validation after all keys are read; NULL for none */
} section;

#define SECTION(rows, variant_off, chk) {(rows), sizeof(rows) / sizeof((rows)[0]), (variant_off), (chk)}

static bool in_range(const range *r, double v)
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

static void describe_range(char buf[96], const range *r)
{
    char a[32], b[32];
    if (r->lo_kind && r->hi_kind)
        snprintf(buf, 96, "must be in %c%s, %s%c", r->lo_kind, fmt_num(a, r->lo), fmt_num(b, r->hi), r->hi_kind);
    else if (r->lo_kind)
        snprintf(buf, 96, "must be %s %s", r->lo_kind == '(' ? ">" : ">=", fmt_num(a, r->lo));
    else
        snprintf(buf, 96, "must be %s %s", r->hi_kind == ')' ? "<" : "<=", fmt_num(a, r->hi));
}

static const ynode *map_get(const ynode *map, const char *key, const ynode **key_node)
{
    for (size_t i = 0; i + 1 < map->n; i += 2)
        if (map->kids[i]->type == YN_SCALAR && strcmp(map->kids[i]->text, key) == 0) {
            if (key_node)
                *key_node = map->kids[i];
            return map->kids[i + 1];
        }
    return NULL;
}

static const field *find_field(const section *sec, const char *key)
{
    for (size_t i = 0; i < sec->n; i++)
        if (strcmp(sec->fields[i].key, key) == 0)
            return &sec->fields[i];
    return NULL;
}

/* "'a', 'b' or 'c'" for the members of a group. */
static void group_keys(char *buf, size_t size, const section *sec, int group)
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
static int check_keys(parse_ctx *c, const ynode *map, const char *path, const section *sec)
{
    for (size_t i = 0; i + 1 < map->n; i += 2) {
        const ynode *k = map->kids[i];
        char sub[KEY_MAX], what[80];
        if (k->type != YN_SCALAR)
            return fail(c, k, path, "keys must be plain words, got %s", describe(what, k));
        child_path(sub, path, k->text);
        const field *f = find_field(sec, k->text);
        if (!f) {
            char allowed[512];
            size_t used = 0;
            allowed[0] = '\0';
            for (size_t j = 0; j < sec->n && used < sizeof allowed; j++) {
                int w = snprintf(allowed + used, sizeof allowed - used, "%s%s", j ? ", " : "", sec->fields[j].key);
                used += w > 0 ? (size_t)w : 0;
            }
            return fail(c, k, sub, "unknown key (allowed: %s)", allowed);
        }
        for (size_t j = 0; j < i; j += 2) {
            const ynode *prev = map->kids[j];
            if (strcmp(prev->text, k->text) == 0)
                return fail(c, k, sub, "duplicate key (first given at line %d)", prev->line);
            const field *pf = find_field(sec, prev->text);
            if (f->group && pf->group == f->group) {
                char keys[256];
                group_keys(keys, sizeof keys, sec, f->group);
                return fail(c, k, sub, "cannot be combined with '%s' (give exactly one of %s)", prev->text, keys);
            }
        }
    }
    return 0;
}

static int parse_section(parse_ctx *c, const ynode *node, const char *path, const section *sec, void *base);

static int parse_field(parse_ctx *c, const ynode *val, const char *path, const field *f, void *base)
{
    void *target = (char *)base + f->offset;
    char what[80], rng[96], num[32];
    double v;
    bool is_auto;
    int rc;
    switch (f->kind) {
    case FK_NUMBER:
        if ((rc = get_number(c, val, path, f->flags & F_AUTO, &v, &is_auto)))
            return rc;
        if (!is_auto && !in_range(&f->r, v)) {
            describe_range(rng, &f->r);
            return fail(c, val, path, "%s%s, got %s", rng, f->flags & F_AUTO ? " or 'auto'" : "", fmt_num(num, v));
        }
        *(double *)target = v;
        return 0;
    case FK_INT:
        if ((rc = get_number(c, val, path, false, &v, NULL)))
            return rc;
        if (v != floor(v) || fabs(v) > 9007199254740992.0)
            return fail(c, val, path, "expected an integer, got %s", describe(what, val));
        if (!in_range(&f->r, v)) {
            describe_range(rng, &f->r);
            return fail(c, val, path, "%s, got %s", rng, fmt_num(num, v));
        }
        *(long *)target = (long)v;
        return 0;
    case FK_VEC3:
        return get_vec3(c, val, path, (double *)target);
    case FK_STRING:
        return get_string(c, val, path, (char *)target, f->size);
    case FK_MAP:
        return parse_section(c, val, path, f->sub, target);
    case FK_CUSTOM:
        return f->parse(c, val, path, target);
    }
    return 0;
}

static void set_default(const field *f, void *base)
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
        (void)parse_section(NULL, NULL, "", f->sub, target);
        break;
    case FK_CUSTOM:
        break;
    }
}

/* Reads the mapping `node` into base by the table.  With node NULL (an absent optional map, c NULL too) it
 * only writes the defaults: such maps have no required keys. */
static int parse_section(parse_ctx *c, const ynode *node, const char *path, const section *sec, void *base)
{
    char what[80];
    int rc;
    if (node && node->type != YN_MAP)
        return fail(c, node, path, "expected a mapping, got %s", describe(what, node));
    if (node && (rc = check_keys(c, node, path, sec)))
        return rc;
    for (size_t i = 0; i < sec->n; i++) {
        const field *f = &sec->fields[i];
        const ynode *val = node ? map_get(node, f->key, NULL) : NULL;
        if (f->group && node) {
            bool first = true, any = false;
            for (size_t j = 0; j < sec->n; j++) {
                if (sec->fields[j].group != f->group)
                    continue;
                if (j < i)
                    first = false;
                if (map_get(node, sec->fields[j].key, NULL))
                    any = true;
            }
            if (first && !any && (f->flags & F_REQUIRED)) {
                char keys[256];
                group_keys(keys, sizeof keys, sec, f->group);
                return fail(c, node, path, "missing required key %s", keys);
            }
        }
        if (!val) {
            /* Group members share storage (sphere and cylinder radius): an absent member writes nothing. */
            if (f->group || (!node && (f->flags & F_REQUIRED)))
                continue;
            if (f->flags & F_REQUIRED)
                return fail(c, node, path, "missing required key '%s'", f->key);
            set_default(f, base);
            continue;
        }
        char sub[KEY_MAX];
        child_path(sub, path, f->key);
        if (f->loc_offset)
            make_loc((shard_src_loc *)((char *)base + f->loc_offset - 1), val, sub);
        if ((rc = parse_field(c, val, sub, f, base)))
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

static int check_box_corners(parse_ctx *c, const ynode *node, const char *path, const double min[3],
                             const double max[3])
{
    static const char axis[] = "xyz";
    for (int d = 0; d < 3; d++)
        if (!(min[d] < max[d])) {
            char sub[KEY_MAX], a[32], b[32];
            child_path(sub, path, "max");
            return fail(c, map_get(node, "max", NULL), sub, "must be greater than min in every component, got %c: max %s <= min %s",
                        axis[d], fmt_num(a, max[d]), fmt_num(b, min[d]));
        }
    return 0;
}

static int check_shape_box(parse_ctx *c, const ynode *node, const char *path, void *base)
{
    const shard_shape *s = base;
    return check_box_corners(c, node, path, s->min, s->max);
}

static int check_cylinder(parse_ctx *c, const ynode *node, const char *path, void *base)
{
    const shard_shape *s = base;
    if (s->p0[0] == s->p1[0] && s->p0[1] == s->p1[1] && s->p0[2] == s->p1[2]) {
        char sub[KEY_MAX];
        child_path(sub, path, "p1");
        return fail(c, map_get(node, "p1", NULL), sub, "must differ from p0 (the cylinder has no axis)");
    }
    return 0;
}

/* Relative file paths (meshes, in-situ scripts) are taken from the scene file's folder, so a scene can be run
 * from anywhere. */
static int resolve_path(parse_ctx *c, const ynode *node, const char *key, char file[SHARD_PATH_MAX])
{
    const char *dir = c->scene->dir;
    if (file[0] == '/' || strcmp(dir, ".") == 0)
        return 0;
    char joined[SHARD_PATH_MAX];
    size_t dl = strlen(dir);
    int w = snprintf(joined, sizeof joined, "%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/", file);
    if (w < 0 || (size_t)w >= sizeof joined)
        return fail(c, node, key, "path too long once joined to the scene's folder '%s'", dir);
    memcpy(file, joined, (size_t)w + 1);
    return 0;
}

static int check_mesh(parse_ctx *c, const ynode *node, const char *path, void *base)
{
    shard_shape *s = base;
    return resolve_path(c, map_get(node, "file", NULL), s->file_loc.key, s->file);
}

static const field box_rows[] = {
    {.key = "min", .kind = FK_VEC3, .flags = F_REQUIRED, .offset = offsetof(shard_shape, min)},
    {.key = "max", .kind = FK_VEC3, .flags = F_REQUIRED, .offset = offsetof(shard_shape, max)},
};
static const field sphere_rows[] = {
    {.key = "center", .kind = FK_VEC3, .flags = F_REQUIRED, .offset = offsetof(shard_shape, center)},
    {.key = "radius", .kind = FK_NUMBER, .flags = F_REQUIRED, .offset = offsetof(shard_shape, radius), .r = GT(0)},
};
static const field cylinder_rows[] = {
    {.key = "p0", .kind = FK_VEC3, .flags = F_REQUIRED, .offset = offsetof(shard_shape, p0)},
    {.key = "p1", .kind = FK_VEC3, .flags = F_REQUIRED, .offset = offsetof(shard_shape, p1)},
    {.key = "radius", .kind = FK_NUMBER, .flags = F_REQUIRED, .offset = offsetof(shard_shape, radius), .r = GT(0)},
};
static const field mesh_rows[] = {
    {.key = "file", .kind = FK_STRING, .flags = F_REQUIRED, .offset = offsetof(shard_shape, file),
     .size = SHARD_PATH_MAX, .loc_offset = OFF1(shard_shape, file_loc)},
    {.key = "scale", .kind = FK_NUMBER, .offset = offsetof(shard_shape, scale), .r = GT(0), .def = {1}},
    {.key = "translate", .kind = FK_VEC3, .offset = offsetof(shard_shape, translate)},
};
static const section box_section = SECTION(box_rows, 0, check_shape_box);
static const section sphere_section = SECTION(sphere_rows, 0, NULL);
static const section cylinder_section = SECTION(cylinder_rows, 0, check_cylinder);
static const section mesh_section = SECTION(mesh_rows, 0, check_mesh);

static const field shape_rows[] = {
    {.key = "box", .kind = FK_MAP, .flags = F_REQUIRED, .group = 1, .sub = &box_section, .variant = SHARD_SHAPE_BOX},
    {.key = "sphere", .kind = FK_MAP, .flags = F_REQUIRED, .group = 1, .sub = &sphere_section,
     .variant = SHARD_SHAPE_SPHERE},
    {.key = "cylinder", .kind = FK_MAP, .flags = F_REQUIRED, .group = 1, .sub = &cylinder_section,
     .variant = SHARD_SHAPE_CYLINDER},
    {.key = "mesh", .kind = FK_MAP, .flags = F_REQUIRED, .group = 1, .sub = &mesh_section, .variant = SHARD_SHAPE_MESH},
};
static const section shape_section = SECTION(shape_rows, OFF1(shard_shape, kind), NULL);

static int parse_shape(parse_ctx *c, const ynode *n, const char *path, shard_shape *s, bool allow_mesh)
{
    memset(s, 0, sizeof *s);
    s->scale = 1;
    make_loc(&s->loc, n, path);
    int rc = parse_section(c, n, path, &shape_section, s);
    if (rc)
        return rc;
    if (!allow_mesh && s->kind == SHARD_SHAPE_MESH) {
        const ynode *key = NULL;
        char sub[KEY_MAX];
        (void)map_get(n, "mesh", &key);
        child_path(sub, path, "mesh");
        return fail(c, key, sub, "a region must be a box, sphere or cylinder, not a mesh");
    }
    return 0;
}

static int parse_body_shape(parse_ctx *c, const ynode *n, const char *path, void *target)
{
    return parse_shape(c, n, path, target, true);
}

static int parse_region(parse_ctx *c, const ynode *n, const char *path, void *target)
{
    return parse_shape(c, n, path, target, false);
}

/* ------------------------------------------------------------------------------------------------------------
 * Materials
 * ------------------------------------------------------------------------------------------------------------ */

static const field plasticity_rows[] = {
    {.key = "yield", .kind = FK_NUMBER, .offset = offsetof(shard_material, yield), .r = GE(0)},
    {.key = "creep", .kind = FK_NUMBER, .offset = offsetof(shard_material, creep), .r = GE(0)},
    {.key = "max", .kind = FK_NUMBER, .offset = offsetof(shard_material, max_plastic), .r = GE(0)},
};
static const section plasticity_section = SECTION(plasticity_rows, 0, NULL);

static const field contact_rows[] = {
    {.key = "stiffness", .kind = FK_NUMBER, .flags = F_AUTO, .offset = offsetof(shard_material, contact_stiffness),
     .r = GT(0)},
    {.key = "damping", .kind = FK_NUMBER, .offset = offsetof(shard_material, contact_damping), .r = IN('[', 0, 1, ']'),
     .def = {0.1}},
    {.key = "friction", .kind = FK_NUMBER, .offset = offsetof(shard_material, friction), .r = GE(0), .def = {0.5}},
};
static const section contact_section = SECTION(contact_rows, 0, NULL);

static const field material_rows[] = {
    {.key = "density", .kind = FK_NUMBER, .flags = F_REQUIRED, .offset = offsetof(shard_material, density), .r = GT(0)},
    {.key = "E", .kind = FK_NUMBER, .flags = F_REQUIRED, .offset = offsetof(shard_material, E), .r = GT(0)},
    {.key = "nu", .kind = FK_NUMBER, .flags = F_REQUIRED, .offset = offsetof(shard_material, nu),
     .r = IN('(', -1, 0.5, ')')},
    {.key = "volume_stiffness", .kind = FK_NUMBER, .offset = offsetof(shard_material, volume_stiffness), .r = GE(0)},
    {.key = "damping", .kind = FK_NUMBER, .offset = offsetof(shard_material, damping), .r = GE(0)},
    {.key = "plasticity", .kind = FK_MAP, .sub = &plasticity_section},
    {.key = "contact", .kind = FK_MAP, .sub = &contact_section},
};
static const section material_section = SECTION(material_rows, 0, NULL);

static int parse_materials(parse_ctx *c, const ynode *n, const char *path, void *target)
{
    shard_scene *s = target;
    char what[80];
    if (n->type != YN_MAP)
        return fail(c, n, path, "expected a mapping of material names to materials, got %s", describe(what, n));
    if (n->n == 0)
        return fail(c, n, path, "at least one material is required");
    s->materials = shard_calloc(n->n / 2, sizeof *s->materials);
    for (size_t i = 0; i + 1 < n->n; i += 2) {
        const ynode *k = n->kids[i], *v = n->kids[i + 1];
        if (k->type != YN_SCALAR || is_null(k))
            return fail(c, k, path, "material names must be words, got %s", describe(what, k));
        char sub[KEY_MAX];
        child_path(sub, path, k->text);
        if (k->len >= SHARD_NAME_MAX || strlen(k->text) != k->len)
            return fail(c, k, sub, "material name must be at most %d characters", SHARD_NAME_MAX - 1);
        for (int j = 0; j < s->n_materials; j++)
            if (strcmp(s->materials[j].name, k->text) == 0)
                return fail(c, k, sub, "duplicate material (first defined at line %d)", s->materials[j].loc.line);
        shard_material *m = &s->materials[s->n_materials++];
        memcpy(m->name, k->text, k->len + 1);
        make_loc(&m->loc, v, sub);
        int rc = parse_section(c, v, sub, &material_section, m);
        if (rc)
            return rc;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------------------------
 * Bodies
 * ------------------------------------------------------------------------------------------------------------ */

static int parse_body_material(parse_ctx *c, const ynode *n, const char *path, void *target)
{
    shard_body_def *b = target;
    const shard_scene *s = c->scene;
    char what[80];
    if (n->type != YN_SCALAR || is_null(n))
        return fail(c, n, path, "expected a material name, got %s", describe(what, n));
    for (int i = 0; i < s->n_materials; i++)
        if (strcmp(s->materials[i].name, n->text) == 0) {
            b->material = i;
            return 0;
        }
    char defined[512];
    size_t used = 0;
    defined[0] = '\0';
    for (int i = 0; i < s->n_materials && used < sizeof defined; i++) {
        int w = snprintf(defined + used, sizeof defined - used, "%s%s", i ? ", " : "", s->materials[i].name);
        used += w > 0 ? (size_t)w : 0;
    }
    return fail(c, n, path, "unknown material %s (defined: %s)", describe(what, n), defined);
}

static shard_constraint *add_constraints(shard_body_def *b, size_t more)
{
    b->constraints = shard_realloc(b->constraints, (size_t)(b->n_constraints + (int)more) * sizeof *b->constraints);
    memset(b->constraints + b->n_constraints, 0, more * sizeof *b->constraints);
    return b->constraints + b->n_constraints;
}

static int check_region_list(parse_ctx *c, const ynode *n, const char *path, const char *what_items)
{
    char what[80];
    if (n->type != YN_SEQ)
        return fail(c, n, path, "expected a sequence of %s, got %s", what_items, describe(what, n));
    return 0;
}

static int parse_fixed(parse_ctx *c, const ynode *n, const char *path, void *target)
{
    shard_body_def *b = target;
    if (is_null(n))
        return 0;
    int rc = check_region_list(c, n, path, "regions");
    if (rc)
        return rc;
    add_constraints(b, n->n);
    for (size_t k = 0; k < n->n; k++) {
        shard_constraint *con = &b->constraints[b->n_constraints++];
        char sub[KEY_MAX];
        index_path(sub, path, k);
        make_loc(&con->loc, n->kids[k], sub);
        if ((rc = parse_region(c, n->kids[k], sub, &con->region)))
            return rc;
    }
    return 0;
}

static const field prescribed_rows[] = {
    {.key = "region", .kind = FK_CUSTOM, .flags = F_REQUIRED, .offset = offsetof(shard_constraint, region),
     .parse = parse_region},
    {.key = "velocity", .kind = FK_VEC3, .flags = F_REQUIRED, .offset = offsetof(shard_constraint, velocity)},
};
static const section prescribed_section = SECTION(prescribed_rows, 0, NULL);

static int parse_prescribed(parse_ctx *c, const ynode *n, const char *path, void *target)
{
    shard_body_def *b = target;
    if (is_null(n))
        return 0;
    int rc = check_region_list(c, n, path, "{region, velocity} mappings");
    if (rc)
        return rc;
    add_constraints(b, n->n);
    for (size_t k = 0; k < n->n; k++) {
        shard_constraint *con = &b->constraints[b->n_constraints++];
        char sub[KEY_MAX];
        index_path(sub, path, k);
        make_loc(&con->loc, n->kids[k], sub);
        if ((rc = parse_section(c, n->kids[k], sub, &prescribed_section, con)))
            return rc;
    }
    return 0;
}

/* fixed before prescribed: rows are read in table order, which fixes the order of constraints[]. */
static const field body_rows[] = {
    {.key = "name", .kind = FK_STRING, .offset = offsetof(shard_body_def, name), .size = SHARD_NAME_MAX},
    {.key = "material", .kind = FK_CUSTOM, .flags = F_REQUIRED, .parse = parse_body_material},
    {.key = "shape", .kind = FK_CUSTOM, .flags = F_REQUIRED, .offset = offsetof(shard_body_def, shape),
     .parse = parse_body_shape},
    {.key = "spacing", .kind = FK_NUMBER, .flags = F_REQUIRED, .offset = offsetof(shard_body_def, spacing), .r = GT(0)},
    {.key = "support", .kind = FK_NUMBER, .offset = offsetof(shard_body_def, support), .r = IN('(', 1, 4, ']'),
     .def = {2.2}},
    {.key = "velocity", .kind = FK_VEC3, .offset = offsetof(shard_body_def, velocity)},
    {.key = "angular_velocity", .kind = FK_VEC3, .offset = offsetof(shard_body_def, angular_velocity)},
    {.key = "fixed", .kind = FK_CUSTOM, .parse = parse_fixed},
    {.key = "prescribed", .kind = FK_CUSTOM, .parse = parse_prescribed},
};
static const section body_section = SECTION(body_rows, 0, NULL);

static int parse_bodies(parse_ctx *c, const ynode *n, const char *path, void *target)
{
    shard_scene *s = target;
    char what[80];
    if (n->type != YN_SEQ)
        return fail(c, n, path, "expected a sequence of bodies, got %s", describe(what, n));
    if (n->n == 0)
        return fail(c, n, path, "at least one body is required");
    s->bodies = shard_calloc(n->n, sizeof *s->bodies);
    for (size_t i = 0; i < n->n; i++) {
        shard_body_def *b = &s->bodies[s->n_bodies++];
        char sub[KEY_MAX];
        index_path(sub, path, i);
        make_loc(&b->loc, n->kids[i], sub);
        int rc = parse_section(c, n->kids[i], sub, &body_section, b);
        if (rc)
            return rc;
        if (!b->name[0])
            snprintf(b->name, sizeof b->name, "body%zu", i);
        for (size_t j = 0; j < i; j++)
            if (strcmp(s->bodies[j].name, b->name) == 0) {
                const ynode *name = map_get(n->kids[i], "name", NULL);
                char key[KEY_MAX];
                child_path(key, sub, "name");
                return fail(c, name ? name : n->kids[i], name ? key : sub, "duplicate body name '%s' (also %s)",
                            b->name, s->bodies[j].loc.key);
            }
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------------------------
 * Obstacles
 * ------------------------------------------------------------------------------------------------------------ */

static int check_plane(parse_ctx *c, const ynode *node, const char *path, void *base)
{
    shard_obstacle_def *o = base;
    double len = sqrt(o->normal[0] * o->normal[0] + o->normal[1] * o->normal[1] + o->normal[2] * o->normal[2]);
    if (!(len > 0) || !isfinite(len)) {
        char sub[KEY_MAX];
        child_path(sub, path, "normal");
        return fail(c, map_get(node, "normal", NULL), sub, "must be a nonzero finite vector");
    }
    for (int d = 0; d < 3; d++)
        o->normal[d] /= len;
    return 0;
}

static int check_obstacle_box(parse_ctx *c, const ynode *node, const char *path, void *base)
{
    const shard_obstacle_def *o = base;
    return check_box_corners(c, node, path, o->min, o->max);
}

static const field plane_rows[] = {
    {.key = "point", .kind = FK_VEC3, .flags = F_REQUIRED, .offset = offsetof(shard_obstacle_def, point)},
    {.key = "normal", .kind = FK_VEC3, .flags = F_REQUIRED, .offset = offsetof(shard_obstacle_def, normal)},
};
static const field obstacle_sphere_rows[] = {
    {.key = "center", .kind = FK_VEC3, .flags = F_REQUIRED, .offset = offsetof(shard_obstacle_def, center)},
    {.key = "radius", .kind = FK_NUMBER, .flags = F_REQUIRED, .offset = offsetof(shard_obstacle_def, radius),
     .r = GT(0)},
};
static const field obstacle_box_rows[] = {
    {.key = "min", .kind = FK_VEC3, .flags = F_REQUIRED, .offset = offsetof(shard_obstacle_def, min)},
    {.key = "max", .kind = FK_VEC3, .flags = F_REQUIRED, .offset = offsetof(shard_obstacle_def, max)},
};
static const section plane_section = SECTION(plane_rows, 0, check_plane);
static const section obstacle_sphere_section = SECTION(obstacle_sphere_rows, 0, NULL);
static const section obstacle_box_section = SECTION(obstacle_box_rows, 0, check_obstacle_box);

static const field obstacle_rows[] = {
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
};
static const section obstacle_section = SECTION(obstacle_rows, OFF1(shard_obstacle_def, kind), NULL);

static int parse_obstacles(parse_ctx *c, const ynode *n, const char *path, void *target)
{
    shard_scene *s = target;
    char what[80];
    if (is_null(n))
        return 0;
    if (n->type != YN_SEQ)
        return fail(c, n, path, "expected a sequence of obstacles, got %s", describe(what, n));
    s->obstacles = shard_calloc(n->n, sizeof *s->obstacles);
    for (size_t i = 0; i < n->n; i++) {
        shard_obstacle_def *o = &s->obstacles[s->n_obstacles++];
        char sub[KEY_MAX];
        index_path(sub, path, i);
        make_loc(&o->loc, n->kids[i], sub);
        int rc = parse_section(c, n->kids[i], sub, &obstacle_section, o);
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

static const field run_rows[] = {
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
};
static const section run_section = SECTION(run_rows, 0, NULL);

/* ------------------------------------------------------------------------------------------------------------
 * Output and checkpoints
 * ------------------------------------------------------------------------------------------------------------ */

const char *const shard_output_field_names[SHARD_OUT_COUNT] = {
    "position", "velocity", "displacement", "stress", "von_mises", "plastic_strain",
    "damage",   "body",     "material",     "rank",   "global_id",
};

/* A sequence of field names, each at most once.  An empty sequence is allowed: position and global_id are
 * always written. */
static int parse_output_fields(parse_ctx *c, const ynode *n, const char *path, void *target)
{
    unsigned *mask = target;
    char what[80];
    if (n->type != YN_SEQ)
        return fail(c, n, path, "expected a sequence of field names, got %s", describe(what, n));
    *mask = 1u << SHARD_OUT_POSITION | 1u << SHARD_OUT_GLOBAL_ID;
    unsigned given = 0;
    for (size_t i = 0; i < n->n; i++) {
        const ynode *k = n->kids[i];
        char sub[KEY_MAX];
        index_path(sub, path, i);
        int f = -1;
        if (k->type == YN_SCALAR && !is_null(k))
            for (int j = 0; j < SHARD_OUT_COUNT && f < 0; j++)
                if (strcmp(k->text, shard_output_field_names[j]) == 0)
                    f = j;
        if (f < 0) {
            char allowed[512];
            size_t used = 0;
            allowed[0] = '\0';
            for (int j = 0; j < SHARD_OUT_COUNT && used < sizeof allowed; j++) {
                int w = snprintf(allowed + used, sizeof allowed - used, "%s%s", j ? ", " : "",
                                 shard_output_field_names[j]);
                used += w > 0 ? (size_t)w : 0;
            }
            return fail(c, k, sub, "unknown field %s (allowed: %s)", describe(what, k), allowed);
        }
        if (given & 1u << f)
            return fail(c, k, sub, "field '%s' is listed twice", shard_output_field_names[f]);
        given |= 1u << f;
        *mask |= 1u << f;
    }
    return 0;
}

static const field output_rows[] = {
    {.key = "every", .kind = FK_INT, .flags = F_REQUIRED, .group = 1,
     .offset = offsetof(shard_output_def, interval.every), .r = GT(0)},
    {.key = "every_time", .kind = FK_NUMBER, .flags = F_REQUIRED, .group = 1,
     .offset = offsetof(shard_output_def, interval.every_time), .r = GT(0)},
    {.key = "fields", .kind = FK_CUSTOM, .offset = offsetof(shard_output_def, fields), .parse = parse_output_fields},
    {.key = "dir", .kind = FK_STRING, .offset = offsetof(shard_output_def, dir), .size = SHARD_PATH_MAX},
};
static const section output_section = SECTION(output_rows, 0, NULL);

static const field checkpoint_rows[] = {
    {.key = "every", .kind = FK_INT, .flags = F_REQUIRED, .group = 1,
     .offset = offsetof(shard_checkpoint_def, interval.every), .r = GT(0)},
    {.key = "every_time", .kind = FK_NUMBER, .flags = F_REQUIRED, .group = 1,
     .offset = offsetof(shard_checkpoint_def, interval.every_time), .r = GT(0)},
    {.key = "keep", .kind = FK_INT, .offset = offsetof(shard_checkpoint_def, keep), .r = GE(1), .def = {2}},
    {.key = "dir", .kind = FK_STRING, .offset = offsetof(shard_checkpoint_def, dir), .size = SHARD_PATH_MAX},
};
static const section checkpoint_section = SECTION(checkpoint_rows, 0, NULL);

/* The sections are optional; giving one switches the feature on. */
static int parse_output(parse_ctx *c, const ynode *n, const char *path, void *target)
{
    shard_output_def *o = target;
    o->enabled = 1;
    o->fields = (1u << SHARD_OUT_COUNT) - 1u;
    make_loc(&o->loc, n, path);
    return parse_section(c, n, path, &output_section, o);
}

static int parse_checkpoint(parse_ctx *c, const ynode *n, const char *path, void *target)
{
    shard_checkpoint_def *o = target;
    o->enabled = 1;
    make_loc(&o->loc, n, path);
    return parse_section(c, n, path, &checkpoint_section, o);
}

/* catalyst: {script: FILE, every: N}, or a sequence of such mappings (at most SHARD_CATALYST_MAX). */
static int check_catalyst(parse_ctx *c, const ynode *node, const char *path, void *base)
{
    shard_catalyst_def *d = base;
    char sub[KEY_MAX];
    child_path(sub, path, "script");
    return resolve_path(c, map_get(node, "script", NULL), sub, d->script);
}

static const field catalyst_rows[] = {
    {.key = "script", .kind = FK_STRING, .flags = F_REQUIRED, .offset = offsetof(shard_catalyst_def, script),
     .size = SHARD_PATH_MAX},
    {.key = "every", .kind = FK_INT, .offset = offsetof(shard_catalyst_def, every), .r = GE(1), .def = {1}},
};
static const section catalyst_section = SECTION(catalyst_rows, 0, check_catalyst);

static int parse_catalyst(parse_ctx *c, const ynode *n, const char *path, void *target)
{
    shard_scene *s = target;
    char what[80];
    if (is_null(n))
        return 0;
    if (n->type == YN_MAP) {
        shard_catalyst_def *d = &s->catalyst[s->n_catalyst++];
        make_loc(&d->loc, n, path);
        return parse_section(c, n, path, &catalyst_section, d);
    }
    if (n->type != YN_SEQ)
        return fail(c, n, path, "expected {script: FILE, every: N} or a sequence of them, got %s", describe(what, n));
    if (n->n > SHARD_CATALYST_MAX)
        return fail(c, n, path, "at most %d scripts, got %zu", SHARD_CATALYST_MAX, n->n);
    for (size_t i = 0; i < n->n; i++) {
        shard_catalyst_def *d = &s->catalyst[s->n_catalyst++];
        char sub[KEY_MAX];
        index_path(sub, path, i);
        make_loc(&d->loc, n->kids[i], sub);
        int rc = parse_section(c, n->kids[i], sub, &catalyst_section, d);
        if (rc)
            return rc;
    }
    return 0;
}

/* Table order is processing order: materials must exist before bodies name them. */
static const field top_rows[] = {
    {.key = "run", .kind = FK_MAP, .flags = F_REQUIRED, .offset = offsetof(shard_scene, run), .sub = &run_section},
    {.key = "materials", .kind = FK_CUSTOM, .flags = F_REQUIRED, .parse = parse_materials},
    {.key = "bodies", .kind = FK_CUSTOM, .flags = F_REQUIRED, .parse = parse_bodies},
    {.key = "obstacles", .kind = FK_CUSTOM, .parse = parse_obstacles},
    {.key = "output", .kind = FK_CUSTOM, .offset = offsetof(shard_scene, output), .parse = parse_output},
    {.key = "checkpoint", .kind = FK_CUSTOM, .offset = offsetof(shard_scene, checkpoint), .parse = parse_checkpoint},
    {.key = "catalyst", .kind = FK_CUSTOM, .parse = parse_catalyst},
};
static const section top_section = SECTION(top_rows, 0, NULL);

/* ------------------------------------------------------------------------------------------------------------
 * Public entry points
 * ------------------------------------------------------------------------------------------------------------ */

static void set_dir(char dir[SHARD_PATH_MAX], const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, SHARD_PATH_MAX, ".");
    else if (slash == path)
        snprintf(dir, SHARD_PATH_MAX, "/");
    else
        snprintf(dir, SHARD_PATH_MAX, "%.*s", (int)(slash - path), path);
}

int shard_scene_parse(const char *path, const char *text, size_t len, shard_scene *scene, shard_error *err)
{
    memset(scene, 0, sizeof *scene);
    snprintf(scene->path, sizeof scene->path, "%s", path);
    set_dir(scene->dir, scene->path);
    scene->text = dup_text(text, len);
    scene->text_len = len;

    parse_ctx ctx = {.file = scene->path, .err = err, .scene = scene};
    ytree tree = {0};
    int rc = ytree_build(&ctx, scene->text, len, &tree);
    if (!rc) {
        const ynode *root = tree.root;
        char what[80];
        if (!root || (root->type == YN_SCALAR && is_null(root)))
            rc = fail(&ctx, root, "", "the file is empty (expected a mapping with keys run, materials, bodies)");
        else if (root->type != YN_MAP)
            rc = fail(&ctx, root, "", "expected a mapping with keys run, materials, bodies at the top level, got %s",
                      describe(what, root));
        else
            rc = parse_section(&ctx, root, "", &top_section, scene);
    }
    ytree_free(&tree);
    if (rc) {
        shard_scene_free(scene);
        return rc;
    }
    return 0;
}

void shard_scene_free(shard_scene *scene)
{
    if (!scene)
        return;
    free(scene->text);
    free(scene->materials);
    for (int i = 0; i < scene->n_bodies; i++)
        free(scene->bodies[i].constraints);
    free(scene->bodies);
    free(scene->obstacles);
    memset(scene, 0, sizeof *scene);
}

int shard_shape_contains(const shard_shape *s, const double p[3])
{
    switch (s->kind) {
    case SHARD_SHAPE_BOX:
        /* Half-open, so a lattice point on a face shared by two boxes belongs to exactly one of them. */
        for (int d = 0; d < 3; d++)
            if (!(p[d] >= s->min[d] && p[d] < s->max[d]))
                return 0;
        return 1;
    case SHARD_SHAPE_SPHERE: {
        double r2 = 0;
        for (int d = 0; d < 3; d++)
            r2 += (p[d] - s->center[d]) * (p[d] - s->center[d]);
        return r2 < s->radius * s->radius;
    }
    case SHARD_SHAPE_CYLINDER: {
        double axis[3], rel[3], len2 = 0, t = 0;
        for (int d = 0; d < 3; d++) {
            axis[d] = s->p1[d] - s->p0[d];
            rel[d] = p[d] - s->p0[d];
            len2 += axis[d] * axis[d];
            t += rel[d] * axis[d];
        }
        if (!(len2 > 0))
            return 0;
        /* t is the position along the axis as a fraction of its length: half-open [0, 1) like the box. */
        t /= len2;
        if (!(t >= 0 && t < 1))
            return 0;
        double r2 = 0;
        for (int d = 0; d < 3; d++) {
            double q = rel[d] - t * axis[d];
            r2 += q * q;
        }
        return r2 < s->radius * s->radius;
    }
    case SHARD_SHAPE_MESH:
        return 0;
    }
    return 0;
}
