/* Intersections: an exact counter of the self-intersections of a triangle mesh (intersections.c), independent
 * of Shard's code.  The zero-intersection checks of the cloth collisions (tests/validation/test_cloth_collide.c)
 * link it as a library of one function (intersections.c compiled with INTERSECTIONS_LIBRARY); the benchmark
 * jobs/bench/cloth_peers.sh builds the same file as a program, which also reads Shard's output files. */
#ifndef SHARD_TESTS_INTERSECTIONS_H
#define SHARD_TESTS_INTERSECTIONS_H

#include <stdint.h>

/* The number of intersecting pairs of vertex-disjoint triangles of the mesh x (3 coordinates per vertex, nv
 * vertices) and tri (3 vertex indices per triangle, from 0, nt triangles); a pair that only touches counts. */
long intersections_count(const double *x, int64_t nv, const int64_t *tri, int64_t nt);

#endif
