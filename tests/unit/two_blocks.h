/* The particle graph of two lattice bodies (a 12 x 9 x 7 block, spacing 0.1, and a 5 x 5 x 5 block, spacing 0.2,
 * bonded within 2.2 spacings; no bond between them), shared by the partition statistics tests
 * (unit.test_partition, mpi.partition_stats). */
#ifndef SHARD_TEST_TWO_BLOCKS_H
#define SHARD_TEST_TWO_BLOCKS_H

#include "shard/neighbor.h"

#include <stdlib.h>

/* Returns the 3n rest positions (caller frees) and fills *n and the reference bonds g. */
static double *shard_test_two_blocks(size_t *n, shard_csr *g)
{
    *n = 12 * 9 * 7 + 125;
    double *X = malloc(3 * *n * sizeof *X);
    size_t m = 0;
    for (int k = 0; k < 7; k++)
        for (int j = 0; j < 9; j++)
            for (int i = 0; i < 12; i++, m++)
                X[3 * m] = i * 0.1, X[3 * m + 1] = j * 0.1, X[3 * m + 2] = k * 0.1;
    for (int k = 0; k < 5; k++)
        for (int j = 0; j < 5; j++)
            for (int i = 0; i < 5; i++, m++)
                X[3 * m] = 5 + i * 0.2, X[3 * m + 1] = j * 0.2, X[3 * m + 2] = k * 0.2;
    int64_t body_start[3] = {0, 12 * 9 * 7, (int64_t)*n};
    double h[2] = {0.22, 0.44};
    shard_neighbor_bonds(*n, X, 2, body_start, h, g);
    return X;
}

#endif
