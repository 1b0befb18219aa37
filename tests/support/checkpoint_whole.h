/* The whole-file checkpoint reader (tests only): the reference that the parallel reader
 * (shard_checkpoint_load_range, checkpoint.h) is compared with, row for row and refusal for refusal.
 */
#ifndef SHARD_TEST_CHECKPOINT_WHOLE_H
#define SHARD_TEST_CHECKPOINT_WHOLE_H

#include "shard/checkpoint.h"

/* Local: reads and validates `path` completely (format, version, completeness, every dataset and its size,
 * global ids a permutation, each section's ids distinct and in range, bonds in range, sorted and symmetric,
 * checksum, module state records against their checksum).  sections[0..n_sections) name the sections to read
 * and their rows (block->rows); a section with no STATE row is neither written nor read.  Returns 0, or
 * SHARD_EXIT_INPUT with "PATH: <what is wrong>" in err; nothing is written anywhere.  Every particle of the run
 * is held (first = 0, n_local = n, row = global id; bonds.idx holds the partners' global ids, partner is NULL).
 * n_particles and n_bonds are limited to 2^31 - 1 (rows = global ids in one process, bonds.idx is int32). */
int shard_checkpoint_load(const char *path, int n_sections, const shard_checkpoint_section *sections,
                          int n_lists, const shard_checkpoint_list *lists, shard_checkpoint_data *d,
                          shard_error *err);

#endif
