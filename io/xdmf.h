/* Private to io/: the XDMF index of the output files (layout in shard/output.h): DIR/particles.xmf, and
 * DIR/<group>.xmf of the points table (the rigid bodies' frames) and of the cells table (the cloth's triangles).
 * Rank 0 only; output.c hands it each complete output file.
 *
 * Constant time per output.  The first output of a run (and of a restart, whose index lists the earlier run's
 * files back: shard_xdmf_list) writes each index whole, through a temporary file and a rename; every later one
 * appends its grid in place: the grid and the closing tags are written over the closing tags (the file's
 * last 29 bytes), in one write, after the space has been reserved (shard_io_splice).  So the index is a valid
 * XDMF document after every output, byte for byte what a whole rewrite would give, and an output costs the
 * same at the ten-thousandth as at the first.  The index is written whole again when the columns or the tables
 * change, when a step is written twice, or when the file on disk is not the one this run last wrote (removed,
 * replaced, edited: its device, inode, size, modification time or closing tags differ).
 *
 * What a crash leaves: a run killed between outputs leaves a complete index of its complete outputs; one killed
 * in the middle of an append (the few microseconds of one write) may leave the index without its closing tags,
 * or with zeros reserved beyond them.  A restart writes the index whole at its first output (the earlier files
 * up to the restart's step, each once, then its own), and so does a new run into the folder. */
#ifndef SHARD_IO_XDMF_H
#define SHARD_IO_XDMF_H

#include "h5io.h"

#include "shard/output.h"

enum { SHARD_XDMF_PARTICLES, SHARD_XDMF_POINTS, SHARD_XDMF_CELLS, SHARD_XDMF_FILES };

typedef struct shard_xdmf {
    char dir[SHARD_PATH_MAX];
    /* the listed output files: step, time and the cells table's triangle count (-1: not known yet, a file of
     * an earlier run that the index reads when it needs it; -2: the file has none) */
    long n_listed, cap_listed;
    long *steps;
    double *times;
    int64_t *cl_count;
    /* what the grids show: the particles' columns, the points table, the cells table's group */
    int64_t n_global;
    int n_cols;
    shard_column cols[32];
    char pt_group[64];
    int pt_n_cols;
    shard_column pt_cols[16];
    int64_t pt_rows;
    char cl_group[64];
    /* each index file as this run last wrote it (mark.at < 0: written whole at the next output) */
    shard_io_mark mark[SHARD_XDMF_FILES];
} shard_xdmf;

/* A new index of the files in dir (nothing is written before the first shard_xdmf_add). */
void shard_xdmf_init(shard_xdmf *x, const char *dir);
void shard_xdmf_free(shard_xdmf *x);

/* Lists the output file of `step` without writing the index: a restart's earlier files (cells: -1). */
void shard_xdmf_list(shard_xdmf *x, long step, double time, int64_t cells);

/* The complete output file of `step`: n_global particles with the columns cols, the points table pt (NULL:
 * none) of pt_rows rows, the cells table named cl_group (NULL: none) with cl_rows triangles.  Lists it and
 * brings every index file up to date (appended, or written whole: see above).  Returns 0, or SHARD_EXIT_IO
 * with err set, after which the listing and every index file are as they were (as far as the disk allows). */
int shard_xdmf_add(shard_xdmf *x, long step, double time, int64_t n_global, int n_cols, const shard_column *cols,
                   const shard_output_table *pt, int64_t pt_rows, const char *cl_group, int64_t cl_rows,
                   shard_error *err);

#endif
