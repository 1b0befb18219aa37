/* Scene keys: the YAML tree of a scene file (built in scene_yaml.c) and the key-table engine that reads a mapping
 * of it into a C struct (scene_keys.c).  A SHARD_KEY_STRING value is printable text (no control character).
 *
 * The engine knows no section of Shard's scene: a caller describes a section as a table of rows (the key, its
 * type, where the value lands in the caller's struct, its range and default) and the engine does the rest:
 * unknown, repeated and missing keys, keys that exclude each other, types, ranges, defaults, and a message for
 * every failure that names the file, line, column and the dotted key path ("bodies[0].shape.box.min[2]").
 *
 * A row (shard_scene_field) holds:
 *   key        the key as written in the file;
 *   kind       SHARD_KEY_NUMBER (a double), SHARD_KEY_INT (a long), SHARD_KEY_VEC3 (double[3]),
 *              SHARD_KEY_STRING (char[size]), SHARD_KEY_CHOICE (one of the words choices[0..n_choices), stored
 *              as its index in an int), SHARD_KEY_MAP (a nested section `sub` whose struct sits at `offset`,
 *              often 0: the same struct) or SHARD_KEY_CUSTOM (the row's `parse` reads the value node into
 *              base + offset);
 *   offset     where the value lands, from the base of the section's struct (offsetof);
 *   flags      SHARD_KEY_REQUIRED (the key must be given; for a group: one of its members) and SHARD_KEY_AUTO
 *              (SHARD_KEY_NUMBER: the word 'auto' is accepted and stored as 0);
 *   r          the allowed range of a number, written SHARD_KEY_GT(a), SHARD_KEY_GE(a) or
 *              SHARD_KEY_IN('(' or '[', a, b, ')' or ']');
 *   def        the value when the key is absent (def[0] for numbers and choices, all three for vectors;
 *              def_str for strings);
 *   loc_offset SHARD_KEY_OFF1 of a shard_src_loc in the struct that receives where the value was written, or 0;
 *   group      nonzero: the keys of one group exclude each other (box, sphere, ...: exactly one); the member
 *              given stores its `variant` in the int at the section's variant_offset.
 * A section (shard_scene_section, written SHARD_KEY_SECTION(rows, variant_offset, check)) is the rows, the
 * SHARD_KEY_OFF1 of its variant field (or 0) and an optional check run once all its keys are read, for rules
 * across keys.  Rows are read in table order, so a row may rely on the rows above it.  shard_scene_parse_section reads
 * a mapping into a struct by its section; every failure goes through shard_scene_fail, which fills the context's error
 * record and returns SHARD_EXIT_INPUT, and every reader returns that code at once, so the first failure is the one
 * reported.  Custom parsers and checks get the context, so they can reach the caller's state (user) and fail
 * with the same messages.
 */
#ifndef SHARD_SCENE_KEYS_H
#define SHARD_SCENE_KEYS_H

#include "shard/base.h"

#include <stdbool.h>
#include <stddef.h>

/* The capacity of a key path: a shard_src_loc's key. */
#define SHARD_KEY_PATH_MAX sizeof(((shard_src_loc *)0)->key)

/* ------------------------------------------------------------------------------------------------------------
 * YAML tree
 * ------------------------------------------------------------------------------------------------------------ */

typedef enum shard_scene_node_type { SHARD_YAML_SCALAR, SHARD_YAML_SEQ, SHARD_YAML_MAP } shard_scene_node_type;

typedef struct shard_scene_node {
    shard_scene_node_type type;
    int line, col; /* 1-based */
    bool plain;    /* scalar written without quotes (only plain scalars can mean null) */
    char *text;    /* scalar: NUL-terminated content */
    size_t len;
    char *anchor;                   /* "&name" given on this node, for later aliases */
    bool complete;                  /* all of the node has been read (its end event seen) */
    struct shard_scene_node **kids; /* sequence: items; mapping: key, value, key, value, ... */
    size_t n, cap;
} shard_scene_node;

typedef struct shard_scene_tree {
    shard_scene_node *root;
    shard_scene_node **all; /* every node once, for freeing: aliases share nodes */
    size_t n_all, cap_all;
} shard_scene_tree;

typedef struct shard_scene_ctx {
    const char *file; /* the scene path, first in every message */
    const char *dir;  /* the scene's folder, against which relative file names are resolved */
    shard_error *err;
    void *user; /* the caller's state, for its custom parsers and checks (the scene reader: the scene) */
} shard_scene_ctx;

/* The deepest nesting of mappings and sequences the tree builder takes (a scene uses about 6 levels): a deeper
 * one is refused at the first node past it, before libfyaml reads further (10^6 nested brackets would otherwise
 * cost seconds and hundreds of MB before any other check). */
#define SHARD_YAML_MAX_DEPTH 64

/* A NUL-terminated copy of s[0..len). */
char *shard_scene_dup_text(const char *s, size_t len);
/* Builds the tree of the single document in text.  Returns 0 or SHARD_EXIT_INPUT with the error filled. */
int shard_scene_ytree_build(shard_scene_ctx *c, const char *text, size_t len, shard_scene_tree *t);
void shard_scene_ytree_free(shard_scene_tree *t);

/* ------------------------------------------------------------------------------------------------------------
 * Messages
 * ------------------------------------------------------------------------------------------------------------ */

/* The location of node n (line 1, column 1 without one) under the key path (the root's path "" says "scene"). */
void shard_scene_make_loc(shard_src_loc *loc, const shard_scene_node *n, const char *path);
/* "file:line:col: path: message" into the context's error; returns SHARD_EXIT_INPUT. */
int shard_scene_fail(shard_scene_ctx *c, const shard_scene_node *n, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* "parent.key" and "parent[i]", cut short at SHARD_KEY_PATH_MAX. */
void shard_scene_child_path(char out[SHARD_KEY_PATH_MAX], const char *parent, const char *key);
void shard_scene_index_path(char out[SHARD_KEY_PATH_MAX], const char *parent, size_t i);
/* The shortest %g form of v that reads back as v. */
const char *shard_scene_fmt_num(char buf[32], double v);
/* Whether n is YAML's null: a plain empty scalar, '~' or null. */
bool shard_scene_is_null(const shard_scene_node *n);
/* 0, or the message "must be printable text: character N is a control character (0x1b)" for a scalar with a
 * control character (shard_text_control): names and paths are printed, and must not drive the terminal. */
int shard_scene_check_printable(shard_scene_ctx *c, const shard_scene_node *n, const char *path);
/* What was found, for "expected X, got Y": "'abc'", "an empty value", "a mapping", "a sequence". */
const char *shard_scene_describe(char buf[80], const shard_scene_node *n);

/* ------------------------------------------------------------------------------------------------------------
 * Values
 * ------------------------------------------------------------------------------------------------------------ */

/* A finite decimal number, or with allow_auto the word 'auto' (*is_auto set, *out = 0). */
int shard_scene_get_number(shard_scene_ctx *c, const shard_scene_node *n, const char *path, bool allow_auto,
                           double *out, bool *is_auto);
/* A scalar that must be one of names[0..count): its index into *out, or a failure listing them. */
int shard_scene_parse_choice(shard_scene_ctx *c, const shard_scene_node *n, const char *path, const char *const *names,
                             int count, int *out);
/* Makes a relative file name relative to the scene's folder (c->dir), in place. */
int shard_scene_resolve_path(shard_scene_ctx *c, const shard_scene_node *node, const char *key,
                             char file[SHARD_PATH_MAX]);

/* ------------------------------------------------------------------------------------------------------------
 * Tables
 * ------------------------------------------------------------------------------------------------------------ */

typedef enum shard_scene_field_kind {
    SHARD_KEY_NUMBER, /* double */
    SHARD_KEY_INT,    /* long; the text may be any number with an integral value, at most SHARD_KEY_INT_MAX in
                       * magnitude (farther out, doubles no longer hold every integer) */
    SHARD_KEY_VEC3,   /* double[3] */
    SHARD_KEY_STRING, /* char[size] */
    SHARD_KEY_MAP,    /* a nested section whose struct sits at offset (often 0: the same struct) */
    SHARD_KEY_CHOICE, /* int: the index of the word given among choices[0..n_choices) */
    SHARD_KEY_CUSTOM, /* parse(ctx, value node, key path, base + offset) */
} shard_scene_field_kind;

/* The largest magnitude of a SHARD_KEY_INT value: 2^53. */
#define SHARD_KEY_INT_MAX 9007199254740992.0

enum {
    SHARD_KEY_REQUIRED = 1, /* for a group: one member must be given */
    SHARD_KEY_AUTO = 2,     /* SHARD_KEY_NUMBER: the word 'auto' is accepted and stored as 0 */
};

/* Allowed values: lo_kind '(' or '[' (0: unbounded below), hi_kind ')' or ']' (0: unbounded above). */
typedef struct shard_scene_range {
    char lo_kind, hi_kind;
    double lo, hi;
} shard_scene_range;

#define SHARD_KEY_GT(a)                                                                                                \
    {                                                                                                                  \
        .lo_kind = '(', .lo = (a)                                                                                      \
    }
#define SHARD_KEY_GE(a)                                                                                                \
    {                                                                                                                  \
        .lo_kind = '[', .lo = (a)                                                                                      \
    }
#define SHARD_KEY_IN(lk, a, b, hk)                                                                                     \
    {                                                                                                                  \
        .lo_kind = (lk), .lo = (a), .hi = (b), .hi_kind = (hk)                                                         \
    }

/* The words of a SHARD_KEY_CHOICE row (designated by their values: [ENUM_A] = "a", ...), and their number. */
#define SHARD_KEY_CHOICES(...)                                                                                         \
    .choices = (const char *const[]){__VA_ARGS__},                                                                     \
    .n_choices = (int)(sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

/* offsetof + 1, so that 0 (what a row or section that does not set the field gets) can mean "none". */
#define SHARD_KEY_OFF1(T, m) (offsetof(T, m) + 1)

struct shard_scene_section;
typedef int (*shard_scene_custom_fn)(shard_scene_ctx *c, const shard_scene_node *value, const char *path, void *target);
typedef int (*shard_scene_check_fn)(shard_scene_ctx *c, const shard_scene_node *node, const char *path, void *base);

typedef struct shard_scene_field {
    const char *key;
    shard_scene_field_kind kind;
    unsigned flags;
    int group;         /* nonzero: keys of one group exclude each other */
    size_t offset;     /* of the value in the section's struct */
    size_t loc_offset; /* SHARD_KEY_OFF1 of a shard_src_loc that receives the value's position, or 0 */
    shard_scene_range r;
    double def[3];       /* SHARD_KEY_NUMBER, SHARD_KEY_INT (def[0]), SHARD_KEY_VEC3: value when the key is absent */
    const char *def_str; /* SHARD_KEY_STRING: value when absent */
    size_t size;         /* SHARD_KEY_STRING: capacity including the NUL */
    const struct shard_scene_section *sub; /* SHARD_KEY_MAP */
    shard_scene_custom_fn parse;           /* SHARD_KEY_CUSTOM */
    const char *const *choices;            /* SHARD_KEY_CHOICE: the words, and how many */
    int n_choices;
    int variant; /* group member: stored in the section's variant field when this key is given */
} shard_scene_field;

typedef struct shard_scene_section {
    const shard_scene_field *fields;
    size_t n;
    size_t variant_offset;      /* SHARD_KEY_OFF1 of the enum (an int) set to the given group member's variant, or 0 */
    shard_scene_check_fn check; /* cross-key validation after all keys are read; NULL for none */
} shard_scene_section;

#define SHARD_KEY_SECTION(rows, variant_off, chk)                                                                      \
    {                                                                                                                  \
        (rows), sizeof(rows) / sizeof((rows)[0]), (variant_off), (chk)                                                 \
    }

/* Whether the section's table has a row for key. */
bool shard_scene_section_has(const shard_scene_section *sec, const char *key);
/* The value of key in the mapping (and the key's own node in *key_node), or NULL when it is not given. */
const shard_scene_node *shard_scene_map_get(const shard_scene_node *map, const char *key,
                                            const shard_scene_node **key_node);
/* One of the tables that read a mapping together (shard_scene_parse_parts): its section, the struct it fills, and
 * what its keys are for in the unknown-key message ("kind cloth": listed after the others as "; for kind cloth:
 * ..."; NULL: listed with the first). */
typedef struct shard_scene_part {
    const shard_scene_section *sec;
    void *base;
    const char *what;
} shard_scene_part;

/* Reads the mapping `node` by several tables at once: every key must be a row of one of them (the first that has
 * it); each part's rows and check run in part order, into its own struct. */
int shard_scene_parse_parts(shard_scene_ctx *c, const shard_scene_node *node, const char *path,
                            const shard_scene_part *parts, int n);
/* Reads the mapping `node` into base by the section's table.  With node NULL (an absent optional map, c NULL too)
 * it only writes the defaults: such maps have no required keys. */
int shard_scene_parse_section(shard_scene_ctx *c, const shard_scene_node *node, const char *path,
                              const shard_scene_section *sec, void *base);
/* Fails unless n is a sequence ("expected a sequence of <what_items>, got ..."). */
int shard_scene_check_list(shard_scene_ctx *c, const shard_scene_node *n, const char *path, const char *what_items);
/* A sequence of mappings, each read with `section` into a new element (elem bytes, its shard_src_loc at
 * loc_offset) of *items, *count of them (an empty or null value: none). */
int shard_scene_parse_list(shard_scene_ctx *c, const shard_scene_node *n, const char *path, const char *what,
                           const shard_scene_section *section, size_t elem, size_t loc_offset, void **items,
                           int *count);

#endif
