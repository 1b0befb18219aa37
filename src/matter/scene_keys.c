/* Scene keys: the messages, the readers of scalars and vectors, and the key-table engine (scene_keys.h
 * describes its rows and sections); the YAML tree they read is built in scene_yaml.c.
 *
 * The engine reads a mapping into a struct by a table of rows; a new key is a new row, and keys not in the table
 * are errors everywhere.  Nothing here knows a section of Shard's scene (scene.c, scene_bodies.c).
 */
#include "scene_keys.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------------------------
 * Messages
 * ------------------------------------------------------------------------------------------------------------ */

/* The root has no key of its own; messages about it say "scene". */
void shard_scene_make_loc(shard_src_loc *loc, const shard_scene_node *n, const char *path)
{
    loc->line = n ? n->line : 1;
    loc->col = n ? n->col : 1;
    snprintf(loc->key, sizeof loc->key, "%s", path[0] ? path : "scene");
}

int shard_scene_fail(shard_scene_ctx *c, const shard_scene_node *n, const char *path, const char *fmt, ...)
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
void shard_scene_child_path(char out[SHARD_KEY_PATH_MAX], const char *parent, const char *key)
{
    int w = parent[0] ? snprintf(out, SHARD_KEY_PATH_MAX, "%s.%s", parent, key)
                      : snprintf(out, SHARD_KEY_PATH_MAX, "%s", key);
    if (w < 0)
        out[0] = '\0';
}

void shard_scene_index_path(char out[SHARD_KEY_PATH_MAX], const char *parent, size_t i)
{
    if (snprintf(out, SHARD_KEY_PATH_MAX, "%s[%zu]", parent, i) < 0)
        out[0] = '\0';
}

/* The shortest %g form that reads back as the same double, so "got 0.5" is never a rounded 0.50000001. */
const char *shard_scene_fmt_num(char buf[32], double v)
{
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, 32, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return buf;
}

bool shard_scene_is_null(const shard_scene_node *n)
{
    return n->type == SHARD_YAML_SCALAR && n->plain &&
           (n->len == 0 || strcmp(n->text, "~") == 0 || strcmp(n->text, "null") == 0 || strcmp(n->text, "Null") == 0 ||
            strcmp(n->text, "NULL") == 0);
}

/* "'abc'", "an empty value", "a mapping", "a sequence": what was found where something else was expected. */
const char *shard_scene_describe(char buf[80], const shard_scene_node *n)
{
    if (n->type == SHARD_YAML_MAP)
        return "a mapping";
    if (n->type == SHARD_YAML_SEQ)
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
int shard_scene_get_number(shard_scene_ctx *c, const shard_scene_node *n, const char *path, bool allow_auto,
                           double *out, bool *is_auto)
{
    char what[80];
    const char *expected = allow_auto ? "a number or 'auto'" : "a number";
    if (is_auto)
        *is_auto = false;
    if (n->type != SHARD_YAML_SCALAR || shard_scene_is_null(n))
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
    if (n->type != SHARD_YAML_SEQ)
        return shard_scene_fail(c, n, path, "expected a sequence of 3 numbers, got %s", shard_scene_describe(what, n));
    if (n->n != 3)
        return shard_scene_fail(c, n, path, "expected a sequence of 3 numbers, got %zu item%s", n->n,
                                n->n == 1 ? "" : "s");
    for (size_t i = 0; i < 3; i++) {
        char sub[SHARD_KEY_PATH_MAX];
        shard_scene_index_path(sub, path, i);
        int rc = shard_scene_get_number(c, n->kids[i], sub, false, &out[i], NULL);
        if (rc)
            return rc;
    }
    return 0;
}

int shard_scene_check_printable(shard_scene_ctx *c, const shard_scene_node *n, const char *path)
{
    long at = shard_text_control(n->text, n->len);
    if (at < 0)
        return 0;
    long chars = 1; /* the character's position, counted in characters (UTF-8 lead bytes) */
    for (long i = 0; i < at; i++)
        chars += ((unsigned char)n->text[i] & 0xC0) != 0x80;
    unsigned char b = (unsigned char)n->text[at];
    char code[16];
    if (b == 0xc2) /* a C1 control, U+0080-U+009F */
        snprintf(code, sizeof code, "U+%04X", (unsigned)(unsigned char)n->text[at + 1]);
    else
        snprintf(code, sizeof code, "0x%02x", b);
    return shard_scene_fail(c, n, path, "must be printable text: character %ld is a control character (%s)", chars,
                            code);
}

static int shard_scene_get_string(shard_scene_ctx *c, const shard_scene_node *n, const char *path, char *out,
                                  size_t size)
{
    char what[80];
    if (n->type != SHARD_YAML_SCALAR || shard_scene_is_null(n))
        return shard_scene_fail(c, n, path, "expected a string, got %s", shard_scene_describe(what, n));
    if (n->len == 0)
        return shard_scene_fail(c, n, path, "must not be empty");
    if (n->len >= size || strlen(n->text) != n->len)
        return shard_scene_fail(c, n, path, "must be at most %zu characters without NUL bytes", size - 1);
    if (shard_scene_check_printable(c, n, path))
        return c->err->code;
    memcpy(out, n->text, n->len + 1);
    return 0;
}

/* ------------------------------------------------------------------------------------------------------------
 * Tables
 * ------------------------------------------------------------------------------------------------------------ */

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
        snprintf(buf, 96, "must be in %c%s, %s%c", r->lo_kind, shard_scene_fmt_num(a, r->lo),
                 shard_scene_fmt_num(b, r->hi), r->hi_kind);
    else if (r->lo_kind)
        snprintf(buf, 96, "must be %s %s", r->lo_kind == '(' ? ">" : ">=", shard_scene_fmt_num(a, r->lo));
    else
        snprintf(buf, 96, "must be %s %s", r->hi_kind == ')' ? "<" : "<=", shard_scene_fmt_num(a, r->hi));
}

/* The integers a row allows, "[lo, hi]": its range rounded inwards to integers, within +-SHARD_KEY_INT_MAX. */
static void shard_scene_describe_int_range(char buf[96], const shard_scene_range *r)
{
    double lo = -SHARD_KEY_INT_MAX, hi = SHARD_KEY_INT_MAX;
    if (r->lo_kind)
        lo = fmax(lo, r->lo_kind == '(' ? floor(r->lo) + 1.0 : ceil(r->lo));
    if (r->hi_kind)
        hi = fmin(hi, r->hi_kind == ')' ? ceil(r->hi) - 1.0 : floor(r->hi));
    snprintf(buf, 96, "[%.0f, %.0f]", lo, hi);
}

const shard_scene_node *shard_scene_map_get(const shard_scene_node *map, const char *key,
                                            const shard_scene_node **key_node)
{
    for (size_t i = 0; i + 1 < map->n; i += 2)
        if (map->kids[i]->type == SHARD_YAML_SCALAR && strcmp(map->kids[i]->text, key) == 0) {
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

bool shard_scene_section_has(const shard_scene_section *sec, const char *key)
{
    return shard_scene_find_field(sec, key) != NULL;
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

/* The row of `key` among the parts' tables (and in *part the index of the part that has it), or NULL. */
static const shard_scene_field *shard_scene_find_part(const shard_scene_part *parts, int n, const char *key, int *part)
{
    for (int p = 0; p < n; p++) {
        const shard_scene_field *f = shard_scene_find_field(parts[p].sec, key);
        if (f) {
            *part = p;
            return f;
        }
    }
    return NULL;
}

/* "unknown key (allowed: a, b; for kind cloth: c, d)": the keys of every part, those of parts with a `what`
 * after the others (consecutive parts of the same `what` in one list). */
static int shard_scene_unknown_key(shard_scene_ctx *c, const shard_scene_node *k, const char *path,
                                   const shard_scene_part *parts, int n)
{
    char allowed[768] = "", own[256];
    size_t used = 0, own_used = 0;
    for (int p = 0; p < n; p++)
        for (size_t j = 0; j < parts[p].sec->n && !parts[p].what; j++)
            shard_list_append(allowed, sizeof allowed, &used, parts[p].sec->fields[j].key);
    for (int p = 0; p < n; p++) {
        for (size_t j = 0; j < parts[p].sec->n && parts[p].what; j++)
            shard_list_append(own, sizeof own, &own_used, parts[p].sec->fields[j].key);
        if (p + 1 < n && parts[p].what && parts[p + 1].what && strcmp(parts[p].what, parts[p + 1].what) == 0)
            continue;
        if (own_used > 0 && used < sizeof allowed) {
            int w = snprintf(allowed + used, sizeof allowed - used, "; for %s: %s", parts[p].what, own);
            used += w > 0 ? (size_t)w : 0;
        }
        own_used = 0;
    }
    return shard_scene_fail(c, k, path, "unknown key (allowed: %s)", allowed);
}

/* File-order checks of a mapping's keys: scalars, known to one of the parts, not repeated, at most one per
 * group. */
static int shard_scene_check_keys(shard_scene_ctx *c, const shard_scene_node *map, const char *path,
                                  const shard_scene_part *parts, int n)
{
    for (size_t i = 0; i + 1 < map->n; i += 2) {
        const shard_scene_node *k = map->kids[i];
        char sub[SHARD_KEY_PATH_MAX], what[80];
        if (k->type != SHARD_YAML_SCALAR)
            return shard_scene_fail(c, k, path, "keys must be plain words, got %s", shard_scene_describe(what, k));
        shard_scene_child_path(sub, path, k->text);
        int part = 0, prev_part = 0;
        const shard_scene_field *f = shard_scene_find_part(parts, n, k->text, &part);
        if (!f)
            return shard_scene_unknown_key(c, k, sub, parts, n);
        for (size_t j = 0; j < i; j += 2) {
            const shard_scene_node *prev = map->kids[j];
            if (strcmp(prev->text, k->text) == 0)
                return shard_scene_fail(c, k, sub, "duplicate key (first given at line %d)", prev->line);
            const shard_scene_field *pf = shard_scene_find_part(parts, n, prev->text, &prev_part);
            if (f->group && prev_part == part && pf->group == f->group) {
                char keys[256];
                shard_scene_group_keys(keys, sizeof keys, parts[part].sec, f->group);
                return shard_scene_fail(c, k, sub, "cannot be combined with '%s' (give exactly one of %s)", prev->text,
                                        keys);
            }
        }
    }
    return 0;
}

static int shard_scene_parse_field(shard_scene_ctx *c, const shard_scene_node *val, const char *path,
                                   const shard_scene_field *f, void *base)
{
    void *target = (char *)base + f->offset;
    char what[80], rng[96], num[32];
    double v;
    bool is_auto;
    int rc;
    switch (f->kind) {
    case SHARD_KEY_NUMBER:
        if ((rc = shard_scene_get_number(c, val, path, f->flags & SHARD_KEY_AUTO, &v, &is_auto)))
            return rc;
        if (!is_auto && !shard_scene_in_range(&f->r, v)) {
            shard_scene_describe_range(rng, &f->r);
            return shard_scene_fail(c, val, path, "%s%s, got %s", rng, f->flags & SHARD_KEY_AUTO ? " or 'auto'" : "",
                                    shard_scene_fmt_num(num, v));
        }
        *(double *)target = v;
        return 0;
    case SHARD_KEY_INT:
        if ((rc = shard_scene_get_number(c, val, path, false, &v, NULL)))
            return rc;
        if (v != floor(v))
            return shard_scene_fail(c, val, path, "expected an integer, got %s", shard_scene_describe(what, val));
        if (fabs(v) > SHARD_KEY_INT_MAX) {
            shard_scene_describe_int_range(rng, &f->r);
            return shard_scene_fail(c, val, path, "out of range: must be an integer in %s, got %s", rng,
                                    shard_scene_describe(what, val));
        }
        if (!shard_scene_in_range(&f->r, v)) {
            shard_scene_describe_range(rng, &f->r);
            return shard_scene_fail(c, val, path, "%s, got %s", rng, shard_scene_fmt_num(num, v));
        }
        *(long *)target = (long)v;
        return 0;
    case SHARD_KEY_VEC3:
        return shard_scene_get_vec3(c, val, path, (double *)target);
    case SHARD_KEY_STRING:
        return shard_scene_get_string(c, val, path, (char *)target, f->size);
    case SHARD_KEY_MAP:
        return shard_scene_parse_section(c, val, path, f->sub, target);
    case SHARD_KEY_CHOICE:
        return shard_scene_parse_choice(c, val, path, f->choices, f->n_choices, (int *)target);
    case SHARD_KEY_CUSTOM:
        return f->parse(c, val, path, target);
    }
    return 0;
}

static void shard_scene_set_default(const shard_scene_field *f, void *base)
{
    void *target = (char *)base + f->offset;
    switch (f->kind) {
    case SHARD_KEY_NUMBER:
        *(double *)target = f->def[0];
        break;
    case SHARD_KEY_INT:
        *(long *)target = (long)f->def[0];
        break;
    case SHARD_KEY_VEC3:
        memcpy(target, f->def, sizeof f->def);
        break;
    case SHARD_KEY_STRING:
        snprintf((char *)target, f->size, "%s", f->def_str ? f->def_str : "");
        break;
    case SHARD_KEY_CHOICE:
        *(int *)target = (int)f->def[0];
        break;
    case SHARD_KEY_MAP:
        /* An absent optional map still gets its keys' defaults. */
        (void)shard_scene_parse_section(NULL, NULL, "", f->sub, target);
        break;
    case SHARD_KEY_CUSTOM:
        break;
    }
}

/* Reads the keys of one section's table from the mapping `node` (whose keys are checked) into base, then runs
 * its check. */
static int shard_scene_read_rows(shard_scene_ctx *c, const shard_scene_node *node, const char *path,
                                 const shard_scene_section *sec, void *base)
{
    int rc;
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
            if (first && !any && (f->flags & SHARD_KEY_REQUIRED)) {
                char keys[256];
                shard_scene_group_keys(keys, sizeof keys, sec, f->group);
                return shard_scene_fail(c, node, path, "missing required key %s", keys);
            }
        }
        if (!val) {
            /* Group members share storage (sphere and cylinder radius): an absent member writes nothing. */
            if (f->group || (!node && (f->flags & SHARD_KEY_REQUIRED)))
                continue;
            if (f->flags & SHARD_KEY_REQUIRED)
                return shard_scene_fail(c, node, path, "missing required key '%s'", f->key);
            shard_scene_set_default(f, base);
            continue;
        }
        char sub[SHARD_KEY_PATH_MAX];
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

int shard_scene_parse_parts(shard_scene_ctx *c, const shard_scene_node *node, const char *path,
                            const shard_scene_part *parts, int n)
{
    char what[80];
    int rc;
    if (node && node->type != SHARD_YAML_MAP)
        return shard_scene_fail(c, node, path, "expected a mapping, got %s", shard_scene_describe(what, node));
    if (node && (rc = shard_scene_check_keys(c, node, path, parts, n)))
        return rc;
    for (int p = 0; p < n; p++)
        if ((rc = shard_scene_read_rows(c, node, path, parts[p].sec, parts[p].base)))
            return rc;
    return 0;
}

int shard_scene_parse_section(shard_scene_ctx *c, const shard_scene_node *node, const char *path,
                              const shard_scene_section *sec, void *base)
{
    const shard_scene_part part = {.sec = sec, .base = base};
    return shard_scene_parse_parts(c, node, path, &part, 1);
}

/* A scalar that must be one of names[0..n): its index into *out, or a failure listing them. */
int shard_scene_parse_choice(shard_scene_ctx *c, const shard_scene_node *n, const char *path, const char *const *names,
                             int count, int *out)
{
    char what[80], list[160] = "";
    if (n->type == SHARD_YAML_SCALAR && !shard_scene_is_null(n))
        for (int k = 0; k < count; k++)
            if (strcmp(n->text, names[k]) == 0) {
                *out = k;
                return 0;
            }
    size_t used = 0;
    for (int k = 0; k < count; k++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s'%s'",
                                 k == 0           ? ""
                                 : k + 1 == count ? " or "
                                                  : ", ",
                                 names[k]);
    return shard_scene_fail(c, n, path, "expected %s, got %s", list, shard_scene_describe(what, n));
}

/* A list must be a sequence. */
int shard_scene_check_list(shard_scene_ctx *c, const shard_scene_node *n, const char *path, const char *what_items)
{
    char what[80];
    if (n->type != SHARD_YAML_SEQ)
        return shard_scene_fail(c, n, path, "expected a sequence of %s, got %s", what_items,
                                shard_scene_describe(what, n));
    return 0;
}

/* A sequence of mappings, each read with `section` into a new element (elem bytes, its shard_src_loc at
 * loc_offset) of *items, *count of them (an empty or null value: none). */
int shard_scene_parse_list(shard_scene_ctx *c, const shard_scene_node *n, const char *path, const char *what,
                           const shard_scene_section *section, size_t elem, size_t loc_offset, void **items, int *count)
{
    if (shard_scene_is_null(n))
        return 0;
    int rc = shard_scene_check_list(c, n, path, what);
    if (rc)
        return rc;
    char *base = shard_calloc(n->n + 1, elem);
    *items = base;
    for (size_t k = 0; k < n->n; k++) {
        char *item = base + elem * (size_t)(*count)++;
        char sub[SHARD_KEY_PATH_MAX];
        shard_scene_index_path(sub, path, k);
        shard_scene_make_loc((shard_src_loc *)(item + loc_offset), n->kids[k], sub);
        if ((rc = shard_scene_parse_section(c, n->kids[k], sub, section, item)))
            return rc;
    }
    return 0;
}

/* Relative file paths (meshes, in-situ scripts) are taken from the scene file's folder, so a scene can be run
 * from anywhere. */
int shard_scene_resolve_path(shard_scene_ctx *c, const shard_scene_node *node, const char *key,
                             char file[SHARD_PATH_MAX])
{
    const char *dir = c->dir;
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
