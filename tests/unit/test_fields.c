/* The output fields of this build, the core's (SHARD_OUTPUT_FIELDS, include/shard/fields.h) and then each kind's
 * (its module's out_fields, matter.h), against what is derived from them: the run-time list, name lookup, and the
 * field table of docs/scenes.md, which must be exactly the markdown this test generates from the list (between
 * the <!-- output-fields --> markers).  `test_fields --print` prints that markdown, to paste into the docs after
 * a change of the list. */
#include "shard/fields.h"
#include "shard/matter.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *test_type_name(shard_field_type t)
{
    switch (t) {
    case SHARD_TYPE_I32: return "int32";
    case SHARD_TYPE_U32: return "uint32";
    case SHARD_TYPE_I64: return "int64";
    case SHARD_TYPE_U8: return "uint8";
    case SHARD_TYPE_F64: return "float64";
    }
    return "?";
}

/* The docs table, one line per field. */
static size_t test_markdown(const shard_scene *sc, char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "| field | components | type | unit | filled by | what it is |\n"
                                          "|---|---|---|---|---|---|\n");
    for (int f = 0; f < shard_output_count(sc) && n < len; f++) {
        const shard_output_field_info *fi = shard_output_info(sc, f);
        n += (size_t)snprintf(buf + n, len - n, "| `%s` | %d | %s | %s | %s | %s |\n", fi->name, fi->ncomp,
                              test_type_name(fi->type), fi->unit, fi->from, fi->what);
    }
    return n;
}

int main(int argc, char **argv)
{
    shard_scene sc = {0}; /* the output fields of a scene are those of its table: this build's */
    sc.modules = shard_matter_table(&sc.n_modules);
    char table[8192];
    test_markdown(&sc, table, sizeof table);
    if (argc > 1 && strcmp(argv[1], "--print") == 0) {
        fputs(table, stdout);
        return 0;
    }
    /* The run-time list: the core's first, then each module's filled by it, unique names that lookup finds, sizes
     * and counts sane. */
    int n = shard_output_count(&sc);
    SHARD_ENSURE(n > SHARD_OUT_COUNT && n <= SHARD_OUTPUT_MAX && shard_output_all(&sc) == (1u << n) - 1u);
    for (int f = 0; f < n; f++) {
        const shard_output_field_info *fi = shard_output_info(&sc, f);
        SHARD_ENSURE(fi->name && shard_output_find(&sc, fi->name) == f);
        SHARD_ENSURE(fi->ncomp == 1 || fi->ncomp == 3 || fi->ncomp == 9);
        SHARD_ENSURE(shard_field_type_size(fi->type) > 0);
        SHARD_ENSURE(f < SHARD_OUT_COUNT ? fi == &shard_output_fields[f] && strcmp(fi->from, "core") == 0 : 1);
    }
    for (int m = 0; m < sc.n_modules; m++)
        for (int k = 0; k < sc.modules[m]->n_out_fields; k++)
            SHARD_ENSURE(strcmp(shard_output_info(&sc, shard_output_first(&sc, m) + k)->from, sc.modules[m]->kind) ==
                         0);
    SHARD_ENSURE(shard_output_info(&sc, n) == NULL);
    SHARD_ENSURE(shard_output_find(&sc, "no_such_field") == -1);
    SHARD_ENSURE(strcmp(shard_output_fields[SHARD_OUT_POSITION].name, "position") == 0);
    SHARD_ENSURE(SHARD_OUT_ALWAYS == (1u << SHARD_OUT_POSITION | 1u << SHARD_OUT_GLOBAL_ID));

    /* docs/scenes.md (the test runs in tests/) holds the generated table between its markers. */
    FILE *fp = fopen("../docs/scenes.md", "rb");
    SHARD_ENSURE(fp != NULL);
    if (fp) {
        static char doc[1 << 20];
        size_t len = fread(doc, 1, sizeof doc - 1, fp);
        fclose(fp);
        doc[len] = '\0';
        const char *begin_mark = "<!-- output-fields -->\n", *end_mark = "<!-- /output-fields -->";
        char *b = strstr(doc, begin_mark), *e = b ? strstr(b, end_mark) : NULL;
        SHARD_ENSURE(b && e);
        if (b && e) {
            b += strlen(begin_mark);
            *e = '\0';
            if (strcmp(b, table) != 0) {
                fprintf(stderr, "FAIL: the field table of docs/scenes.md differs from the output fields; "
                                "`build/tests/test_fields --print` prints the right one:\n%s", table);
                shard_test_failures++;
            }
        }
    }
    return SHARD_TEST_RESULT();
}
