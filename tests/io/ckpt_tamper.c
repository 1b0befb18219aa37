/* Test helper: damages an HDF5 checkpoint in one precise way, for tests/io/bad_checkpoint.sh.
 *
 * usage: io_ckpt_tamper set-i64 FILE ATTRIBUTE VALUE   rewrite an int64 attribute of the root group
 *        io_ckpt_tamper delete FILE PATH               unlink a dataset or group
 *        io_ckpt_tamper offset FILE DATASET            print the byte offset of a contiguous dataset's data
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
#include <hdf5.h>
#include <stdint.h>

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: io_ckpt_tamper set-i64 FILE ATTR VALUE | delete FILE PATH | offset FILE DATASET\n");
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
