/* Cloth (physics): the internal forces of a cloth body and the topology of its vertex grid.
 *
 * A cloth body is a triangle mesh whose vertices are particles (matter kind `cloth`, cloth_module.c).  Its
 * shape is a triangle mesh from a file (open or closed; vertex k is the body's particle k), or a grid
 * (geometry.h): the parallelogram corner + a u + b v, a, b in [0, 1], cut into n_u x n_v cells,
 * each split along its diagonal (i, j)-(i+1, j+1) into the triangles
 *     T0 = (v(i,j), v(i+1,j), v(i+1,j+1)) and T1 = (v(i,j), v(i+1,j+1), v(i,j+1)),
 * both counter-clockwise about u x v; vertex (i, j) is the body's particle j (n_u + 1) + i (sample.h).
 *
 * Internal forces (energies of the rest state's differences; docs/architecture.md, "Cloth", says why these):
 *   - membrane: a St Venant-Kirchhoff membrane on each triangle (constant strain): with the triangle's
 *     deformation gradient F (3 x 2, from its rest shape in its own plane), the Green strain
 *     G = (F^T F - I)/2 and the plane-stress constants lambda = E nu / (1 - nu^2), mu = E / (2 (1 + nu)),
 *         W = A t (mu G:G + lambda/2 tr(G)^2)        (A: rest area, t: thickness),
 *     the isotropic elastic membrane of Young's modulus E and Poisson ratio nu (it carries no compression
 *     stiffness beyond the geometric one: cloth buckles instead, as it should);
 *   - bending: the discrete-shell hinge energy of Grinspun et al. 2003 on each interior edge e,
 *         W = D/2 |e|^2 / (A_1 + A_2) (theta - theta_0)^2,
 *     theta the signed dihedral angle between the normals of the edge's two triangles, |e|, A_1, A_2 and
 *     theta_0 their rest values, D the bending stiffness (N m; the plate's E t^3 / (12 (1 - nu^2)) unless the
 *     scene gives it).  The coefficient makes a cylindrical bend of curvature k about an axis along u or v
 *     store the plate's D k^2 / 2 per area on this grid (its cells stay flat: only the hinges across the
 *     axis fold).  Hinge energies depend on the mesh: bent about the cells' diagonal, the grid stores 2.95
 *     times the plate's energy (test_cloth); an isotropic energy on flat rest states (the quadratic model of
 *     Bergou et al. 2006) is the known cure.  theta's gradient is Bridson et al. 2003's (their u_1 .. u_4);
 *   - damping: stiffness-proportional (Rayleigh beta, the material's `damping`, s): the membrane stress of the
 *     strain rate beta dG/dt, and the hinge moment 2 k beta dtheta/dt.  Both only ever remove energy.
 * Every kernel is MPI-free and computes one element from its vertices' x and v; the module sums the elements
 * of a vertex in element order, so a vertex's force does not depend on the partition.
 */
#ifndef SHARD_CLOTH_H
#define SHARD_CLOTH_H

#include "shard/geometry.h"

#include <stddef.h>
#include <stdint.h>

/* The most triangles around one vertex of a cloth mesh, and so the most hinges (each triangle's 3 edges). */
#define SHARD_CLOTH_MAX_VALENCE 64
#define SHARD_CLOTH_MAX_HINGES (3 * SHARD_CLOTH_MAX_VALENCE)

/* A cloth's triangle mesh (a surface read from a file), replicated on every rank: its rest vertices, triangles,
 * hinges and the elements of every vertex. */
typedef struct shard_cloth_mesh {
    int64_t n_vertices, n_triangles, n_hinges;
    double *X;              /* 3 per vertex */
    int64_t *tri;           /* 3 per triangle, as in the file */
    int64_t *hinge;         /* 4 per hinge, in the order of shard_cloth_hinge */
    int64_t *vt_start, *vt; /* the triangles of vertex k: vt[vt_start[k] .. vt_start[k+1]), increasing */
    int64_t *vh_start, *vh; /* its hinges */
    int max_tri, max_hinge; /* the most triangles / hinges of one vertex */
    double radius;          /* the largest rest distance between two vertices of one element */
    double h_min;           /* the smallest altitude of a triangle */
} shard_cloth_mesh;

/* Builds the topology of a triangle mesh: every edge in one triangle (a boundary) or two of opposite
 * orientation (a hinge).  Returns 0, or -1 with the reason in why (an edge of more than two triangles, two
 * triangles of the same orientation along an edge, a degenerate triangle, a vertex of no triangle or of more
 * than SHARD_CLOTH_MAX_VALENCE). */
int shard_cloth_mesh_build(const double *X, int64_t n_vertices, const int64_t *tri, int64_t n_triangles,
                           shard_cloth_mesh *cm, char *why, size_t len);
void shard_cloth_mesh_free(shard_cloth_mesh *cm);

/* Per body: the material constants and the grid or mesh. */
typedef struct shard_cloth_params {
    double lambda, mu;         /* plane-stress Lame constants x thickness, N/m */
    double D;                  /* bending stiffness, N m */
    double beta;               /* stiffness-proportional damping time, s */
    double thickness, density; /* m, kg/m^3 (areal density = density x thickness) */
    double dt;                 /* the stable explicit step (shard_cloth_dt) */
    int64_t nu, nv;            /* a grid: cells along u and v */
    shard_shape grid;
    shard_cloth_mesh *mesh; /* a mesh (owned by the module's body state), or NULL for a grid */
    int max_tri, max_hinge; /* the most triangles / hinges of one vertex (a grid: 6, 12) */
} shard_cloth_params;

/* The constants of a body (E, nu, density, thickness t, bending stiffness D < 0: the plate's, damping time), on
 * a grid (mesh NULL) or a mesh. */
void shard_cloth_params_init(shard_cloth_params *cp, const shard_shape *grid, shard_cloth_mesh *mesh, double E,
                             double nu, double density, double t, double D, double beta);

/* ---- the grid's topology (element ids are global: the same on every rank) ---- */
int64_t shard_cloth_n_vertices(const shard_cloth_params *cp);
int64_t shard_cloth_n_triangles(const shard_cloth_params *cp);
int64_t shard_cloth_n_hinges(const shard_cloth_params *cp);
/* The vertices (indices in the body) of triangle t, counter-clockwise about u x v. */
void shard_cloth_triangle(const shard_cloth_params *cp, int64_t t, int64_t v[3]);
/* The vertices of hinge h: v[0] -> v[1] the shared edge, v[2] opposite it in the triangle (v0, v1, v2), v[3]
 * in the other triangle (v1, v0, v3). */
void shard_cloth_hinge(const shard_cloth_params *cp, int64_t h, int64_t v[4]);
/* The triangles (at most cp->max_tri) and the hinges (at most cp->max_hinge) vertex k belongs to, in
 * increasing id. */
int shard_cloth_vertex_triangles(const shard_cloth_params *cp, int64_t k, int64_t *t);
int shard_cloth_vertex_hinges(const shard_cloth_params *cp, int64_t k, int64_t *h);
/* Vertex k's rest position: the grid's vertex (k mod (nu + 1), k div (nu + 1)) or the mesh's k-th, as sampled. */
void shard_cloth_rest_vertex(const shard_cloth_params *cp, int64_t k, double X[3]);
/* Vertex k's rest area: a third of its triangles' areas, m^2 (its mass is that x density x thickness). */
double shard_cloth_vertex_area(const shard_cloth_params *cp, int64_t k);
/* The largest rest distance between two vertices of one hinge, m: the bond radius that puts every element
 * of a vertex among its bond partners. */
double shard_cloth_stencil_radius(const shard_cloth_params *cp);
/* The stable explicit time step, s (membrane: the smallest altitude over the membrane wave speed; bending: a
 * Gershgorin bound on the hinges' highest frequency; both reduced for the damping).  shard_cloth_params_init
 * stores it in cp->dt. */
double shard_cloth_dt(const shard_cloth_params *cp);

/* ---- elements ---- */
/* A triangle's rest data. */
typedef struct shard_cloth_tri {
    double Dinv[4]; /* the inverse of the rest edge matrix in the triangle's plane, row-major */
    double area;    /* rest area, m^2 */
} shard_cloth_tri;
void shard_cloth_tri_rest(const double *X0, const double *X1, const double *X2, shard_cloth_tri *r);
/* Membrane (and its damping): adds the forces on the three vertices into f[0..9) and returns the elastic
 * energy, J. */
double shard_cloth_membrane(const shard_cloth_params *cp, const shard_cloth_tri *r, const double *x0, const double *x1,
                            const double *x2, const double *v0, const double *v1, const double *v2, double f[9]);

/* The largest principal Green strain of a triangle (its membrane stretch; negative in compression). */
double shard_cloth_stretch(const shard_cloth_tri *r, const double *x0, const double *x1, const double *x2);

/* A hinge's rest data. */
typedef struct shard_cloth_hinge_rest {
    double k;      /* D |e|^2 / (A_1 + A_2), N m */
    double theta0; /* rest dihedral angle, rad */
} shard_cloth_hinge_rest;
/* The signed dihedral angle of a hinge (vertex order of shard_cloth_hinge), rad; and, with g non-NULL, its
 * gradient g[0..12) (zero for a degenerate triangle).  0 for a flat hinge. */
double shard_cloth_dihedral(const double *x0, const double *x1, const double *x2, const double *x3, double *g);
void shard_cloth_hinge_rest_init(const shard_cloth_params *cp, const double *X0, const double *X1, const double *X2,
                                 const double *X3, shard_cloth_hinge_rest *r);
/* Bending (and its damping): adds the forces on the four vertices into f[0..12) and returns the energy, J. */
double shard_cloth_bending(const shard_cloth_params *cp, const shard_cloth_hinge_rest *r, const double *const x[4],
                           const double *const v[4], double f[12]);

#endif
