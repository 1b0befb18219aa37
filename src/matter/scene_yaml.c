/* The YAML tree of a scene file (scene_keys.h), built from libfyaml's event stream: the document API of libfyaml
 * 0.7 does not expose where a mapping or sequence starts, and every message of the scene reader must name a line
 * and column, so the parser keeps its own nodes with 1-based positions.  libfyaml's diagnostics are collected,
 * never printed; its first error becomes "file:line:col: syntax error: text".  Nesting deeper than
 * SHARD_YAML_MAX_DEPTH is refused, flow collections before libfyaml reads them.
 */
#include "scene_keys.h"

#include <libfyaml.h>

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void shard_scene_ytree_free(shard_scene_tree *t)
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

char *shard_scene_dup_text(const char *s, size_t len)
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

static int shard_scene_syntax_error(shard_scene_ctx *c, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
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

static int shard_scene_too_deep(shard_scene_ctx *c, int line, int col)
{
    return shard_scene_syntax_error(c, line, col, "mappings and sequences nested more than %d deep",
                                    SHARD_YAML_MAX_DEPTH);
}

/* The nesting of flow collections ([...], {...}), before libfyaml sees the text: libfyaml scans a flow
 * collection to its end before its first event (to learn whether it is a key), which for 10^6 nested brackets
 * costs seconds and hundreds of MB.  Brackets in quoted scalars and comments do not count; a quote opens a
 * scalar only where one can start (after white space or an indicator), so the apostrophe of "it's" does not.
 * Columns count characters, as libfyaml's do.  0, or the message at the first bracket past the limit. */
static int shard_scene_flow_depth(shard_scene_ctx *c, const char *text, size_t len)
{
    size_t depth = 0;
    int line = 1, col = 0;
    char quote = 0, prev = '\n';
    bool comment = false, escaped = false;
    for (size_t i = 0; i < len; prev = text[i++]) {
        char ch = text[i];
        if (((unsigned char)ch & 0xC0) != 0x80)
            col++;
        if (ch == '\n')
            line++, col = 0;
        if (comment) {
            comment = ch != '\n';
        } else if (escaped) {
            escaped = false;
        } else if (quote) {
            escaped = quote == '"' && ch == '\\';
            if (ch == quote && !(quote == '\'' && i + 1 < len && text[i + 1] == '\''))
                quote = 0;
            else if (ch == quote) /* '' inside single quotes: one quote, skipped here */
                escaped = true;
        } else if (ch == '#' && prev && strchr(" \t\r\n", prev)) {
            comment = true;
        } else if ((ch == '"' || ch == '\'') && prev && strchr(" \t\r\n[{,:-?", prev)) {
            quote = ch;
        } else if ((ch == '[' || ch == '{') && ++depth > SHARD_YAML_MAX_DEPTH) {
            return shard_scene_too_deep(c, line, col);
        } else if ((ch == ']' || ch == '}') && depth > 0) {
            depth--;
        }
    }
    return 0;
}

/* Builds the tree of the single document in text.  Returns 0 or SHARD_EXIT_INPUT with the error filled. */
int shard_scene_ytree_build(shard_scene_ctx *c, const char *text, size_t len, shard_scene_tree *t)
{
    if (shard_scene_flow_depth(c, text, len))
        return c->err->code;
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
            node = shard_scene_ytree_new(t, SHARD_YAML_SCALAR, last_line, last_col);
            node->text = shard_scene_token_text(e->scalar.value, &node->len);
            node->plain = !e->scalar.value || fy_event_get_node_style(e) == FYNS_PLAIN;
            node->complete = true;
            anchor = e->scalar.anchor;
            break;
        case FYET_MAPPING_START:
            node = shard_scene_ytree_new(t, SHARD_YAML_MAP, last_line, last_col);
            anchor = e->mapping_start.anchor;
            break;
        case FYET_SEQUENCE_START:
            node = shard_scene_ytree_new(t, SHARD_YAML_SEQ, last_line, last_col);
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
                rc = shard_scene_syntax_error(c, last_line, last_col > 1 ? last_col - 1 : 1, "undefined alias '*%s'",
                                              name);
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
            rc = shard_scene_syntax_error(c, node->line, node->col,
                                          "a scene file holds one YAML document, found a second one");
        if (!rc && node) {
            if (depth > 0)
                shard_scene_ynode_append(stack[depth - 1], node);
            else
                t->root = node;
            if (anchor)
                node->anchor = shard_scene_token_text(anchor, NULL);
            bool opens = e->type == FYET_MAPPING_START || e->type == FYET_SEQUENCE_START;
            if (opens && depth >= SHARD_YAML_MAX_DEPTH) /* block nesting: indentation, "- - -" */
                rc = shard_scene_too_deep(c, node->line, node->col);
            else if (opens) {
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
            rc =
                shard_scene_syntax_error(c, first->line, first->column, "%s", first->msg ? first->msg : "invalid YAML");
        else
            rc = shard_scene_syntax_error(c, last_line, last_col, "invalid YAML");
    }
    free(stack);
    fy_parser_destroy(fyp);
    fy_diag_destroy(diag);
    return rc;
}
