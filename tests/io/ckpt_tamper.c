/* Test helper: damages an HDF5 checkpoint in one precise way, for tests/io/bad_checkpoint.sh.
 *
 * usage: io_ckpt_tamper set-i64 FILE ATTRIBUTE VALUE   rewrite an int64 attribute of the root group
 *        io_ckpt_tamper delete FILE PATH               unlink a dataset or group
 *        io_ckpt_tamper offset FILE DATASET            print the byte offset of a contiguous dataset's data
 *        io_ckpt_tamper set-text FILE DATASET TEXTFILE  replace a text dataset (the stored scene) by a file's text
 *        io_ckpt_tamper rehash-scene FILE              rewrite scene_checksum to match the stored scene text (what a
 *                                                      file whose scene was edited with its checksum looks like)
 * Exit 0 on success, 1 on failure, 77 without HDF5. */
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
#include "checkpoint_impl.h"

#include <stdint.h>

/* Replaces the fixed-length string dataset `name` by the text of file `from`, as the writer stores it. */
static int set_text(hid_t f, const char *name, const char *from)
{
    FILE *in = fopen(from, "rb");
    if (!in)
        return 1;
    static char text[1 << 20];
    size_t len = fread(text, 1, sizeof text, in);
    fclose(in);
    if (H5Ldelete(f, name, H5P_DEFAULT) < 0)
        return 1;
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, len > 0 ? len : 1);
    H5Tset_strpad(t, H5T_STR_NULLPAD);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t d = H5Dcreate2(f, name, t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int rc = d >= 0 && H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, text) >= 0 ? 0 : 1;
    if (d >= 0)
        H5Dclose(d);
    H5Sclose(sp);
    H5Tclose(t);
    return rc;
}

/* scene_checksum rewritten from the stored /scene, as the writer computes it. */
static int rehash_scene(const char *file)
{
    hid_t f = H5Fopen(file, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0)
        return 1;
    hid_t d = H5Dopen2(f, "/scene", H5P_DEFAULT), t = d >= 0 ? H5Dget_type(d) : -1;
    size_t len = t >= 0 ? H5Tget_size(t) : 0;
    char *text = calloc(len + 1, 1);
    int rc = t >= 0 && H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, text) >= 0 ? 0 : 1;
    uint64_t sum = shard_ckpt_hash_text(text, len);
    hid_t a = rc == 0 ? H5Aopen(f, "scene_checksum", H5P_DEFAULT) : -1;
    rc = a >= 0 && H5Awrite(a, H5T_NATIVE_UINT64, &sum) >= 0 ? 0 : 1;
    if (a >= 0)
        H5Aclose(a);
    if (t >= 0)
        H5Tclose(t);
    if (d >= 0)
        H5Dclose(d);
    free(text);
    H5Fclose(f);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "rehash-scene"))
        return rehash_scene(argv[2]);
    if (argc < 4) {
        fprintf(stderr, "usage: io_ckpt_tamper set-i64 FILE ATTR VALUE | delete FILE PATH | offset FILE DATASET | "
                        "set-text FILE DATASET TEXTFILE | rehash-scene FILE\n");
        return 1;
    }
    const char *cmd = argv[1], *file = argv[2], *name = argv[3];
    int write = strcmp(cmd, "offset") != 0;
    hid_t f = H5Fopen(file, write ? H5F_ACC_RDWR : H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        return 1;
    int rc = 1;
    if (!strcmp(cmd, "set-i64") && argc > 4) {
        int64_t v = strtoll(argv[4], NULL, 10);
        hid_t a = H5Aopen(f, name, H5P_DEFAULT);
        rc = a >= 0 && H5Awrite(a, H5T_NATIVE_INT64, &v) >= 0 ? 0 : 1;
        if (a >= 0)
            H5Aclose(a);
    } else if (!strcmp(cmd, "delete")) {
        rc = H5Ldelete(f, name, H5P_DEFAULT) >= 0 ? 0 : 1;
    } else if (!strcmp(cmd, "set-text") && argc > 4) {
        rc = set_text(f, name, argv[4]);
    } else if (!strcmp(cmd, "offset")) {
        hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
        haddr_t off = d >= 0 ? H5Dget_offset(d) : HADDR_UNDEF;
        if (off != HADDR_UNDEF) {
            printf("%llu\n", (unsigned long long)off);
            rc = 0;
        }
        if (d >= 0)
            H5Dclose(d);
    }
    H5Fclose(f);
    return rc;
}
#endif
