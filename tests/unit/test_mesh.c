/* Mesh module tests: the three readers agree, the closedness check names the bad edge, sampling gives exact
 * counts when lattice rows run through edges and vertices, and volumes of curved shapes come out right.
 * All meshes are generated here and written to a temporary folder. */
#define _XOPEN_SOURCE 700
#include "shard/mesh_io.h"
#include "shard/sample.h"
#include "test.h"

#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char tmp_dir[256];

static const char *tmp_path(const char *name)
{
    static char buf[8][512];
    static int slot = 0;
    slot = (slot + 1) % 8;
    snprintf(buf[slot], sizeof buf[slot], "%s/%s", tmp_dir, name);
    return buf[slot];
}

/* ---- polygon meshes built in code ---- */

typedef struct face {
    int k;
    int64_t i[4];
} face;

typedef struct pmesh {
    double *v;
    size_t nv, cap_v;
    face *f;
    size_t nf, cap_f;
} pmesh;

static int64_t pm_vertex(pmesh *m, double x, double y, double z)
{
    shard_reserve((void **)&m->v, &m->cap_v, 3 * (m->nv + 1), sizeof(double));
    m->v[3 * m->nv] = x;
    m->v[3 * m->nv + 1] = y;
    m->v[3 * m->nv + 2] = z;
    return (int64_t)m->nv++;
}

/* Adds a polygon, reversed if needed so that its normal (Newell) points away from `ref`. */
static void pm_face(pmesh *m, int k, const int64_t *idx, const double ref[3])
{
    double n[3] = {0, 0, 0}, c[3] = {0, 0, 0};
    for (int a = 0; a < k; a++) {
        const double *p = &m->v[3 * idx[a]], *q = &m->v[3 * idx[(a + 1) % k]];
        n[0] += (p[1] - q[1]) * (p[2] + q[2]);
        n[1] += (p[2] - q[2]) * (p[0] + q[0]);
        n[2] += (p[0] - q[0]) * (p[1] + q[1]);
        for (int d = 0; d < 3; d++)
            c[d] += p[d] / k;
    }
    double dot = 0;
    for (int d = 0; d < 3; d++)
        dot += n[d] * (c[d] - ref[d]);
    face f = {k, {0, 0, 0, 0}};
    for (int a = 0; a < k; a++)
        f.i[a] = dot >= 0 ? idx[a] : idx[k - 1 - a];
    shard_reserve((void **)&m->f, &m->cap_f, m->nf + 1, sizeof(face));
    m->f[m->nf++] = f;
}

static void pm_tri(pmesh *m, int64_t a, int64_t b, int64_t c, const double ref[3])
{
    int64_t idx[3] = {a, b, c};
    pm_face(m, 3, idx, ref);
}

static void pm_quad(pmesh *m, int64_t a, int64_t b, int64_t c, int64_t d, const double ref[3])
{
    int64_t idx[4] = {a, b, c, d};
    pm_face(m, 4, idx, ref);
}

static void pm_free(pmesh *m)
{
    free(m->v);
    free(m->f);
    memset(m, 0, sizeof *m);
}

/* Axis-aligned box [lo, hi] as 6 quads. */
static void pm_box(pmesh *m, const double lo[3], const double hi[3])
{
    int64_t c[8];
    for (int i = 0; i < 8; i++)
        c[i] = pm_vertex(m, i & 1 ? hi[0] : lo[0], i & 2 ? hi[1] : lo[1], i & 4 ? hi[2] : lo[2]);
    double mid[3] = {(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2};
    pm_quad(m, c[0], c[2], c[3], c[1], mid);
    pm_quad(m, c[4], c[5], c[7], c[6], mid);
    pm_quad(m, c[0], c[1], c[5], c[4], mid);
    pm_quad(m, c[2], c[6], c[7], c[3], mid);
    pm_quad(m, c[0], c[4], c[6], c[2], mid);
    pm_quad(m, c[1], c[3], c[7], c[5], mid);
}

/* Cube [0,1]^3 with every face cut into n x n cells, each split into two triangles along alternating
 * diagonals, so that both diagonal directions meet the lattice rows. */
static void pm_grid_cube(pmesh *m, int n)
{
    double mid[3] = {0.5, 0.5, 0.5};
    for (int axis = 0; axis < 3; axis++)
        for (int side = 0; side < 2; side++) {
            int u = (axis + 1) % 3, w = (axis + 2) % 3;
            int64_t *g = malloc(sizeof(int64_t) * (size_t)((n + 1) * (n + 1)));
            for (int a = 0; a <= n; a++)
                for (int b = 0; b <= n; b++) {
                    double p[3];
                    p[axis] = side;
                    p[u] = (double)a / n;
                    p[w] = (double)b / n;
                    g[a * (n + 1) + b] = pm_vertex(m, p[0], p[1], p[2]);
                }
            for (int a = 0; a < n; a++)
                for (int b = 0; b < n; b++) {
                    int64_t p00 = g[a * (n + 1) + b], p10 = g[(a + 1) * (n + 1) + b];
                    int64_t p01 = g[a * (n + 1) + b + 1], p11 = g[(a + 1) * (n + 1) + b + 1];
                    if ((a + b) % 2) {
                        pm_tri(m, p00, p10, p11, mid);
                        pm_tri(m, p00, p11, p01, mid);
                    } else {
                        pm_tri(m, p00, p10, p01, mid);
                        pm_tri(m, p10, p11, p01, mid);
                    }
                }
            free(g);
        }
}

/* Welds a polygon mesh's duplicate vertices (the grid cube repeats its edges' vertices on two faces). */
static void pm_weld(pmesh *m)
{
    int64_t *map = malloc(sizeof(int64_t) * m->nv);
    size_t nv = 0;
    for (size_t i = 0; i < m->nv; i++) {
        map[i] = -1;
        for (size_t j = 0; j < nv && map[i] < 0; j++)
            if (memcmp(&m->v[3 * j], &m->v[3 * i], 3 * sizeof(double)) == 0)
                map[i] = (int64_t)j;
        if (map[i] < 0) {
            memmove(&m->v[3 * nv], &m->v[3 * i], 3 * sizeof(double));
            map[i] = (int64_t)nv++;
        }
    }
    for (size_t f = 0; f < m->nf; f++)
        for (int a = 0; a < m->f[f].k; a++)
            m->f[f].i[a] = map[m->f[f].i[a]];
    m->nv = nv;
    free(map);
}

static void pm_octahedron(pmesh *m)
{
    int64_t px = pm_vertex(m, 1, 0, 0), nx = pm_vertex(m, -1, 0, 0);
    int64_t py = pm_vertex(m, 0, 1, 0), ny = pm_vertex(m, 0, -1, 0);
    int64_t pz = pm_vertex(m, 0, 0, 1), nz = pm_vertex(m, 0, 0, -1);
    const double o[3] = {0, 0, 0};
    int64_t xs[2] = {px, nx}, ys[2] = {py, ny}, zs[2] = {pz, nz};
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++)
            for (int c = 0; c < 2; c++)
                pm_tri(m, xs[a], ys[b], zs[c], o);
}

/* UV sphere: poles joined by fans of triangles, quads between rings. */
static void pm_uv_sphere(pmesh *m, double r, int n_lat, int n_lon)
{
    const double o[3] = {0, 0, 0};
    int64_t north = pm_vertex(m, 0, 0, r);
    int64_t first = (int64_t)m->nv;
    for (int a = 1; a < n_lat; a++) {
        double th = M_PI * a / n_lat;
        for (int b = 0; b < n_lon; b++) {
            double ph = 2 * M_PI * b / n_lon;
            pm_vertex(m, r * sin(th) * cos(ph), r * sin(th) * sin(ph), r * cos(th));
        }
    }
    int64_t south = pm_vertex(m, 0, 0, -r);
    for (int b = 0; b < n_lon; b++) {
        int b1 = (b + 1) % n_lon;
        pm_tri(m, north, first + b, first + b1, o);
        for (int a = 0; a + 2 < n_lat; a++)
            pm_quad(m, first + a * n_lon + b, first + (a + 1) * n_lon + b, first + (a + 1) * n_lon + b1,
                    first + a * n_lon + b1, o);
        int64_t last = first + (int64_t)(n_lat - 2) * n_lon;
        pm_tri(m, south, last + b, last + b1, o);
    }
}

static void pm_torus(pmesh *m, double big_r, double small_r, int nu, int nv)
{
    int64_t first = (int64_t)m->nv;
    for (int a = 0; a < nu; a++)
        for (int b = 0; b < nv; b++) {
            double u = 2 * M_PI * a / nu, v = 2 * M_PI * b / nv;
            double rho = big_r + small_r * cos(v);
            pm_vertex(m, rho * cos(u), rho * sin(u), small_r * sin(v));
        }
    for (int a = 0; a < nu; a++)
        for (int b = 0; b < nv; b++) {
            int a1 = (a + 1) % nu, b1 = (b + 1) % nv;
            double uc = 2 * M_PI * (a + 0.5) / nu;
            double ref[3] = {big_r * cos(uc), big_r * sin(uc), 0}; /* the tube's axis: outward is away from it */
            pm_quad(m, first + a * nv + b, first + a1 * nv + b, first + a1 * nv + b1, first + a * nv + b1, ref);
        }
}

/* ---- writers ---- */

static void put_le32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

static void put_f32(unsigned char *p, double x)
{
    float f = (float)x;
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    put_le32(p, bits);
}

static size_t pm_n_triangles(const pmesh *m)
{
    size_t n = 0;
    for (size_t f = 0; f < m->nf; f++)
        n += (size_t)m->f[f].k - 2;
    return n;
}

/* The fan triangulation the OBJ reader uses, so that all formats give the same triangles. */
static void pm_triangle(const pmesh *m, size_t f, int t, int64_t out[3])
{
    out[0] = m->f[f].i[0];
    out[1] = m->f[f].i[t + 1];
    out[2] = m->f[f].i[t + 2];
}

static void write_stl_binary(const pmesh *m, const char *path, const char *header)
{
    FILE *fp = fopen(path, "wb");
    unsigned char head[84] = {0};
    memcpy(head, header, strlen(header));
    put_le32(head + 80, (uint32_t)pm_n_triangles(m));
    fwrite(head, 1, 84, fp);
    for (size_t f = 0; f < m->nf; f++)
        for (int t = 0; t + 2 < m->f[f].k; t++) {
            unsigned char rec[50] = {0};
            int64_t c[3];
            pm_triangle(m, f, t, c);
            for (int k = 0; k < 3; k++)
                for (int a = 0; a < 3; a++)
                    put_f32(rec + 12 + 12 * k + 4 * a, m->v[3 * c[k] + a]);
            fwrite(rec, 1, 50, fp);
        }
    fclose(fp);
}

/* Mixed case, tabs, CRLF and blank lines: what the reader must tolerate. */
static void write_stl_ascii(const pmesh *m, const char *path)
{
    FILE *fp = fopen(path, "wb");
    fprintf(fp, "SOLID  test cube\r\n");
    for (size_t f = 0; f < m->nf; f++)
        for (int t = 0; t + 2 < m->f[f].k; t++) {
            int64_t c[3];
            pm_triangle(m, f, t, c);
            fprintf(fp, "%s normal 0 0 0\r\n\t outer   LOOP\n", f % 2 ? "facet" : "Facet");
            for (int k = 0; k < 3; k++)
                fprintf(fp, "  vertex\t%.17g %.17g  %.17g\n", m->v[3 * c[k]], m->v[3 * c[k] + 1], m->v[3 * c[k] + 2]);
            fprintf(fp, "endloop\n\n ENDFACET\n");
        }
    fprintf(fp, "endsolid test cube\n");
    fclose(fp);
}

/* style 0: "f a b c"; 1: "f a/t/n" and "a//n" with extra statements; 2: negative (relative) indices. */
static void write_obj(const pmesh *m, const char *path, int style)
{
    FILE *fp = fopen(path, "wb");
    fprintf(fp, "# generated by test_mesh\nmtllib none.mtl\no thing\n");
    if (style != 2)
        for (size_t i = 0; i < m->nv; i++)
            fprintf(fp, "v %.17g %.17g %.17g\n", m->v[3 * i], m->v[3 * i + 1], m->v[3 * i + 2]);
    if (style == 1)
        fprintf(fp, "vt 0 0\nvn 0 0 1\r\ng group\ns off\nusemtl x\n");
    for (size_t f = 0; f < m->nf; f++) {
        if (style == 2) {
            /* every face re-lists its vertices just before it and refers to them relatively */
            for (int a = 0; a < m->f[f].k; a++) {
                const double *p = &m->v[3 * m->f[f].i[a]];
                fprintf(fp, "v %.17g %.17g %.17g 1.0\n", p[0], p[1], p[2]);
            }
            fprintf(fp, "f");
            for (int a = 0; a < m->f[f].k; a++)
                fprintf(fp, " %d", a - m->f[f].k);
            fprintf(fp, "\n");
            continue;
        }
        fprintf(fp, "f");
        for (int a = 0; a < m->f[f].k; a++) {
            long long i = (long long)m->f[f].i[a] + 1;
            if (style == 1)
                fprintf(fp, a % 2 ? " %lld//1" : " %lld/1/1", i);
            else
                fprintf(fp, " %lld", i);
        }
        fprintf(fp, style == 1 ? "  # a face\n" : "\n");
    }
    fclose(fp);
}

static void write_text(const char *path, const char *text, size_t len)
{
    FILE *fp = fopen(path, "wb");
    fwrite(text, 1, len, fp);
    fclose(fp);
}

static void pm_to_mesh(const pmesh *m, shard_mesh *out)
{
    out->n_vertices = m->nv;
    out->vertices = shard_malloc(3 * m->nv * sizeof(double));
    memcpy(out->vertices, m->v, 3 * m->nv * sizeof(double));
    out->n_triangles = pm_n_triangles(m);
    out->triangles = shard_malloc(3 * out->n_triangles * sizeof(int64_t));
    size_t n = 0;
    for (size_t f = 0; f < m->nf; f++)
        for (int t = 0; t + 2 < m->f[f].k; t++)
            pm_triangle(m, f, t, &out->triangles[3 * n++]);
}

/* ---- helpers for the checks ---- */

static shard_error err;

static int read_ok(const char *path, shard_mesh *m)
{
    memset(&err, 0, sizeof err);
    int rc = shard_mesh_read(path, NULL, NULL, m, &err);
    if (rc)
        fprintf(stderr, "unexpected read error: %s\n", err.msg);
    return rc == 0;
}

static int closed_ok(const shard_mesh *m)
{
    memset(&err, 0, sizeof err);
    int rc = shard_mesh_check_closed(m, "m", NULL, NULL, &err);
    if (rc)
        fprintf(stderr, "unexpected closedness error: %s\n", err.msg);
    return rc == 0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rng_state = 0x243f6a8885a308d3ULL;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* ---- tests ---- */

static void test_cube_formats(void)
{
    pmesh cube = {0};
    const double lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
    pm_box(&cube, lo, hi);
    const char *files[5] = {tmp_path("cube.stl"), tmp_path("cube_solid_header.STL"), tmp_path("cube_ascii.stl"),
                            tmp_path("cube.obj"), tmp_path("cube_slashes.Obj")};
    write_stl_binary(&cube, files[0], "binary cube");
    write_stl_binary(&cube, files[1], "solid cube, but binary"); /* header starting with "solid" */
    write_stl_ascii(&cube, files[2]);
    write_obj(&cube, files[3], 0);
    write_obj(&cube, files[4], 1);

    double *ref = NULL;
    size_t n_ref = 0;
    for (int f = 0; f < 5; f++) {
        shard_mesh m;
        if (!read_ok(files[f], &m)) {
            SHARD_ENSURE(0);
            continue;
        }
        SHARD_ENSURE(m.n_triangles == 12);
        SHARD_ENSURE(m.n_vertices == 8); /* STL corners welded */
        SHARD_ENSURE(closed_ok(&m));
        double bmin[3], bmax[3];
        shard_mesh_bounds(&m, bmin, bmax);
        for (int a = 0; a < 3; a++) {
            SHARD_ENSURE(bmin[a] == 0);
            SHARD_ENSURE(bmax[a] == 1);
        }
        double *p;
        size_t n;
        shard_sample_mesh(&m, 0.1, &p, &n);
        SHARD_ENSURE(n == 1000);
        if (f == 0) {
            ref = p;
            n_ref = n;
            /* k-major, then j, then i: x runs fastest */
            SHARD_ENSURE_NEAR(p[0], 0.05, 1e-12);
            SHARD_ENSURE_NEAR(p[3], 0.15, 1e-12);
            SHARD_ENSURE_NEAR(p[3 * 10 + 1], 0.15, 1e-12);
            SHARD_ENSURE_NEAR(p[3 * 100 + 2], 0.15, 1e-12);
            SHARD_ENSURE_NEAR(p[3 * 999], 0.95, 1e-12);
        } else {
            SHARD_ENSURE(n == n_ref && memcmp(p, ref, 3 * n * sizeof(double)) == 0);
            free(p);
        }
        shard_mesh_free(&m);
        SHARD_ENSURE(m.vertices == NULL && m.triangles == NULL && m.n_triangles == 0);
    }

    /* relative indices and "v x y z w" describe the same solid (unwelded: 4 vertices per face) */
    write_obj(&cube, tmp_path("cube_relative.obj"), 2);
    shard_mesh m;
    if (read_ok(tmp_path("cube_relative.obj"), &m)) {
        SHARD_ENSURE(m.n_vertices == 24 && m.n_triangles == 12);
        double *p;
        size_t n;
        shard_sample_mesh(&m, 0.1, &p, &n);
        SHARD_ENSURE(n == n_ref && memcmp(p, ref, 3 * n * sizeof(double)) == 0);
        free(p);
        shard_mesh_free(&m);
    } else {
        SHARD_ENSURE(0);
    }

    /* transform: scale then translate */
    if (read_ok(files[0], &m)) {
        const double tr[3] = {1, -2, 0.5};
        shard_mesh_transform(&m, 2.0, tr);
        double bmin[3], bmax[3];
        shard_mesh_bounds(&m, bmin, bmax);
        SHARD_ENSURE(bmin[0] == 1 && bmin[1] == -2 && bmin[2] == 0.5);
        SHARD_ENSURE(bmax[0] == 3 && bmax[1] == 0 && bmax[2] == 2.5);
        double *p;
        size_t n;
        shard_sample_mesh(&m, 0.2, &p, &n);
        SHARD_ENSURE(n == 1000);
        free(p);
        shard_mesh_free(&m);
    }
    free(ref);
    pm_free(&cube);
}

/* A tiny cube placed at the bounding box's minimum moves the lattice origin to where we want it without
 * adding lattice points (none of its rows or columns reach inside it). */
static void add_origin_marker(pmesh *m, const double origin[3], double size)
{
    const double hi[3] = {origin[0] + size, origin[1] + size, origin[2] + size};
    pm_box(m, origin, hi);
}

static void test_rows_through_edges_and_vertices(void)
{
    /* Rows at y, z = 0, 1/8, ..., 1 run along the cube's faces and through every vertex and edge of its
     * 8 x 8 grids; lattice x values are odd multiples of 1/16, never on the surface. */
    pmesh m = {0};
    pm_grid_cube(&m, 8);
    pm_weld(&m);
    const double origin[3] = {-0.25, -0.1875, -0.1875};
    add_origin_marker(&m, origin, 0.03125);
    shard_mesh mesh;
    pm_to_mesh(&m, &mesh);
    SHARD_ENSURE(closed_ok(&mesh));
    double *p;
    size_t n;
    shard_sample_mesh(&mesh, 0.125, &p, &n);
    /* The 7 x 7 rows strictly inside the square each hold 8 points, whatever the tie-breaking. */
    size_t interior = 0, bad = 0;
    for (size_t i = 0; i < n; i++) {
        double x = p[3 * i], y = p[3 * i + 1], z = p[3 * i + 2];
        if (!(x > 0 && x < 1 && y >= 0 && y <= 1 && z >= 0 && z <= 1))
            bad++;
        if (y > 0 && y < 1 && z > 0 && z < 1)
            interior++;
    }
    SHARD_ENSURE(bad == 0);
    SHARD_ENSURE(interior == 7 * 7 * 8);
    /* Rows lying in a face are on the surface; the documented half-open rule (shift by (+e, +e^2) in (y, z))
     * keeps the y = 0 and z = 0 rows, drops y = 1 and z = 1, and never counts a row partially. */
    SHARD_ENSURE(n == 512);
    for (size_t i = 0; i < n; i++)
        if (p[3 * i + 1] > 0.875 || p[3 * i + 2] > 0.875)
            bad++;
    SHARD_ENSURE(bad == 0);
    free(p);

    /* The same through a file (binary STL, welded by the reader). */
    write_stl_binary(&m, tmp_path("grid_cube.stl"), "grid");
    shard_mesh r;
    if (read_ok(tmp_path("grid_cube.stl"), &r)) {
        SHARD_ENSURE(r.n_vertices == m.nv);
        SHARD_ENSURE(closed_ok(&r));
        shard_sample_mesh(&r, 0.125, &p, &n);
        SHARD_ENSURE(n == 512);
        free(p);
        shard_mesh_free(&r);
    }
    shard_mesh_free(&mesh);
    pm_free(&m);
}

static void test_octahedron_on_lattice(void)
{
    /* Rows through the octahedron's vertices (0,0,+-1), (0,+-1,0), through (+-1,0,0) seen end-on, along its
     * silhouette edges |y| + |z| = 1 and through the edges in y = 0 and z = 0. */
    pmesh m = {0};
    pm_octahedron(&m);
    const double origin[3] = {-2.1875, -2.125, -2.125};
    add_origin_marker(&m, origin, 0.0625);
    shard_mesh mesh;
    pm_to_mesh(&m, &mesh);
    SHARD_ENSURE(closed_ok(&mesh));
    double *p;
    size_t n;
    const double s = 0.25;
    shard_sample_mesh(&mesh, s, &p, &n);
    size_t expected = 0;
    for (int k = 0; k < 13; k++)
        for (int j = 0; j < 13; j++)
            for (int i = 0; i < 13; i++) {
                double x = origin[0] + (i + 0.5) * s, y = origin[1] + (j + 0.5) * s, z = origin[2] + (k + 0.5) * s;
                expected += fabs(x) + fabs(y) + fabs(z) < 1;
            }
    SHARD_ENSURE(expected > 0);
    SHARD_ENSURE(n == expected);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        if (!(fabs(p[3 * i]) + fabs(p[3 * i + 1]) + fabs(p[3 * i + 2]) < 1))
            bad++;
    SHARD_ENSURE(bad == 0);
    free(p);
    shard_mesh_free(&mesh);
    pm_free(&m);
}

static void test_sphere_and_torus(void)
{
    pmesh sph = {0};
    pm_uv_sphere(&sph, 1.0, 48, 96);
    write_obj(&sph, tmp_path("sphere.obj"), 0);
    shard_mesh m;
    if (read_ok(tmp_path("sphere.obj"), &m)) {
        SHARD_ENSURE(closed_ok(&m));
        double *p;
        size_t n;
        const double s = 0.05;
        shard_sample_mesh(&m, s, &p, &n);
        double expected = 4.0 / 3.0 * M_PI / (s * s * s);
        SHARD_ENSURE_NEAR((double)n / expected, 1.0, 0.01);
        size_t bad = 0;
        for (size_t i = 0; i < n; i++)
            if (!(sqrt(p[3 * i] * p[3 * i] + p[3 * i + 1] * p[3 * i + 1] + p[3 * i + 2] * p[3 * i + 2]) < 1.0 + s))
                bad++;
        SHARD_ENSURE(bad == 0);
        printf("sphere r=1, s=0.05: %zu points, %.4f of 4/3 pi / s^3\n", n, (double)n / expected);
        free(p);
        shard_mesh_free(&m);
    } else {
        SHARD_ENSURE(0);
    }
    pm_free(&sph);

    pmesh tor = {0};
    const double big_r = 1.0, small_r = 0.4, s = 0.05;
    pm_torus(&tor, big_r, small_r, 96, 48);
    write_stl_binary(&tor, tmp_path("torus.stl"), "torus");
    if (read_ok(tmp_path("torus.stl"), &m)) {
        SHARD_ENSURE(closed_ok(&m));
        double *p;
        size_t n;
        shard_sample_mesh(&m, s, &p, &n);
        double expected = 2 * M_PI * M_PI * big_r * small_r * small_r / (s * s * s);
        SHARD_ENSURE_NEAR((double)n / expected, 1.0, 0.02);
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) {
            double rho = hypot(p[3 * i], p[3 * i + 1]);
            if (!(hypot(rho - big_r, p[3 * i + 2]) < small_r + s))
                bad++;
        }
        SHARD_ENSURE(bad == 0);
        printf("torus R=1 r=0.4, s=0.05: %zu points, %.4f of 2 pi^2 R r^2 / s^3\n", n, (double)n / expected);
        free(p);
        shard_mesh_free(&m);
    } else {
        SHARD_ENSURE(0);
    }
    pm_free(&tor);
}

/* Rotated coarse spheres (convex, large facets, rows in general position): each lattice point's verdict must
 * match the half-space test against every facet, except within 1e-9 of the surface. */
static void test_convex_point_by_point(void)
{
    for (int trial = 0; trial < 6; trial++) {
        pmesh sph = {0};
        pm_uv_sphere(&sph, 1.0, 5 + trial, 7 + 2 * trial);
        double q[4], len = 0;
        for (int a = 0; a < 4; a++) {
            q[a] = (double)(rng() % 2000001) / 1e6 - 1.0;
            len += q[a] * q[a];
        }
        for (int a = 0; a < 4; a++)
            q[a] /= sqrt(len);
        const double w = q[0], x = q[1], y = q[2], z = q[3];
        const double r[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)},
                                {2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)},
                                {2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)}};
        for (size_t i = 0; i < sph.nv; i++) {
            double *v = &sph.v[3 * i], o[3];
            for (int a = 0; a < 3; a++)
                o[a] = r[a][0] * v[0] + r[a][1] * v[1] + r[a][2] * v[2] + 0.1 * trial;
            memcpy(v, o, sizeof o);
        }
        shard_mesh m;
        pm_to_mesh(&sph, &m);
        SHARD_ENSURE(closed_ok(&m));
        const double s = 0.05;
        double *p;
        size_t n;
        shard_sample_mesh(&m, s, &p, &n);
        double lo[3], hi[3];
        shard_mesh_bounds(&m, lo, hi);
        long cnt[3];
        for (int a = 0; a < 3; a++)
            cnt[a] = (long)ceil((hi[a] - lo[a]) / s);
        size_t next = 0, wrong = 0, ambiguous = 0;
        for (long k = 0; k < cnt[2]; k++)
            for (long j = 0; j < cnt[1]; j++)
                for (long i = 0; i < cnt[0]; i++) {
                    double pt[3] = {lo[0] + ((double)i + 0.5) * s, lo[1] + ((double)j + 0.5) * s,
                                    lo[2] + ((double)k + 0.5) * s};
                    int returned = next < n && memcmp(&p[3 * next], pt, sizeof pt) == 0;
                    next += returned;
                    double worst = -INFINITY;
                    for (size_t t = 0; t < m.n_triangles; t++) {
                        const double *a = &m.vertices[3 * m.triangles[3 * t]];
                        const double *b = &m.vertices[3 * m.triangles[3 * t + 1]];
                        const double *c = &m.vertices[3 * m.triangles[3 * t + 2]];
                        double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
                        double v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
                        double nn[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2],
                                        u[0] * v[1] - u[1] * v[0]};
                        double d = (nn[0] * (pt[0] - a[0]) + nn[1] * (pt[1] - a[1]) + nn[2] * (pt[2] - a[2])) /
                                   sqrt(nn[0] * nn[0] + nn[1] * nn[1] + nn[2] * nn[2]);
                        worst = d > worst ? d : worst;
                    }
                    if (fabs(worst) < 1e-9)
                        ambiguous++;
                    else if ((worst < 0) != returned)
                        wrong++;
                }
        SHARD_ENSURE(next == n); /* every returned point is a lattice point, in lattice order */
        SHARD_ENSURE(wrong == 0);
        SHARD_ENSURE(n > 1000);
        if (wrong)
            fprintf(stderr, "trial %d: %zu of %zu points misclassified (%zu ambiguous)\n", trial, wrong, n, ambiguous);
        free(p);
        shard_mesh_free(&m);
        pm_free(&sph);
    }
}

static void test_check_closed(void)
{
    const shard_src_loc loc = {3, 11, "bodies[0].shape.mesh.file"};
    /* a lone triangle: the message in full */
    {
        double v[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
        int64_t t[3] = {0, 1, 2};
        shard_mesh m = {3, v, 1, t};
        memset(&err, 0, sizeof err);
        SHARD_ENSURE(shard_mesh_check_closed(&m, "tri.stl", "s.yaml", &loc, &err) == SHARD_EXIT_INPUT);
        SHARD_ENSURE(strcmp(err.msg, "s.yaml:3:11: bodies[0].shape.mesh.file: mesh 'tri.stl' is not closed: edge "
                                     "(0, 1) at (0, 0, 0)-(1, 0, 0) is used by 1 triangle(s)") == 0);
        SHARD_ENSURE(err.code == SHARD_EXIT_INPUT);
    }
    pmesh cube = {0};
    const double lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
    pm_box(&cube, lo, hi);
    shard_mesh m;
    pm_to_mesh(&cube, &m);
    SHARD_ENSURE(closed_ok(&m));

    /* open: the last face missing */
    m.n_triangles -= 2;
    memset(&err, 0, sizeof err);
    SHARD_ENSURE(shard_mesh_check_closed(&m, "open.stl", "s.yaml", &loc, &err) == SHARD_EXIT_INPUT);
    SHARD_ENSURE(strstr(err.msg, "s.yaml:3:11: bodies[0].shape.mesh.file: mesh 'open.stl' is not closed: edge (") ==
                 err.msg);
    SHARD_ENSURE(strstr(err.msg, "is used by 1 triangle(s)") != NULL);
    m.n_triangles += 2;

    /* one triangle turned over */
    int64_t keep = m.triangles[4];
    m.triangles[4] = m.triangles[5];
    m.triangles[5] = keep;
    memset(&err, 0, sizeof err);
    SHARD_ENSURE(shard_mesh_check_closed(&m, "flip.stl", NULL, NULL, &err) == SHARD_EXIT_INPUT);
    SHARD_ENSURE(strstr(err.msg, "mesh 'flip.stl' is not consistently oriented at edge (") == err.msg);
    m.triangles[5] = m.triangles[4];
    m.triangles[4] = keep;
    SHARD_ENSURE(closed_ok(&m));

    /* a face used three times: non-manifold */
    shard_mesh extra = m;
    extra.triangles = shard_malloc(3 * 14 * sizeof(int64_t));
    memcpy(extra.triangles, m.triangles, 3 * 12 * sizeof(int64_t));
    memcpy(extra.triangles + 36, m.triangles, 6 * sizeof(int64_t));
    extra.n_triangles = 14;
    memset(&err, 0, sizeof err);
    SHARD_ENSURE(shard_mesh_check_closed(&extra, "x.obj", NULL, NULL, &err) == SHARD_EXIT_INPUT);
    SHARD_ENSURE(strstr(err.msg, "is used by 3 triangle(s)") || strstr(err.msg, "is used by 4 triangle(s)"));
    free(extra.triangles);

    /* degenerate: repeated index, and three collinear vertices */
    keep = m.triangles[1];
    m.triangles[1] = m.triangles[0];
    memset(&err, 0, sizeof err);
    SHARD_ENSURE(shard_mesh_check_closed(&m, "d.stl", NULL, NULL, &err) == SHARD_EXIT_INPUT);
    SHARD_ENSURE(strstr(err.msg, "mesh 'd.stl' has a degenerate triangle 0") == err.msg);
    m.triangles[1] = keep;
    {
        double v[9] = {0.1, 0.2, 0.3, 0.2, 0.4, 0.6, 0.30000000000000004, 0.6000000000000001, 0.8999999999999999};
        int64_t t[3] = {0, 1, 2};
        shard_mesh line = {3, v, 1, t};
        /* nearly collinear but not exactly: passes the zero-area check, fails on the open edge */
        memset(&err, 0, sizeof err);
        SHARD_ENSURE(shard_mesh_check_closed(&line, "l.stl", NULL, NULL, &err) == SHARD_EXIT_INPUT);
        SHARD_ENSURE(strstr(err.msg, "is not closed") != NULL);
        v[6] = 0.4;
        v[7] = 0.8;
        v[8] = 1.2;
        memset(&err, 0, sizeof err);
        SHARD_ENSURE(shard_mesh_check_closed(&line, "l.stl", NULL, NULL, &err) == SHARD_EXIT_INPUT);
        SHARD_ENSURE(strstr(err.msg, "mesh 'l.stl' has a degenerate triangle 0 with zero area") == err.msg);
    }
    shard_mesh_free(&m);
    pm_free(&cube);
}

static void expect_read_error(const char *path, const char *expected_tail)
{
    const shard_src_loc loc = {12, 9, "bodies[1].shape.mesh.file"};
    shard_mesh m;
    char expected[1536];
    snprintf(expected, sizeof expected, "scene.yaml:12:9: bodies[1].shape.mesh.file: %s", expected_tail);
    memset(&err, 0, sizeof err);
    int rc = shard_mesh_read(path, "scene.yaml", &loc, &m, &err);
    SHARD_ENSURE(rc == SHARD_EXIT_INPUT && err.code == SHARD_EXIT_INPUT);
    SHARD_ENSURE(m.vertices == NULL && m.triangles == NULL);
    if (strcmp(err.msg, expected) != 0) {
        fprintf(stderr, "FAIL message\n  got:      %s\n  expected: %s\n", err.msg, expected);
        shard_test_failures++;
    }
}

static void test_read_errors(void)
{
    char msg[1024];
    const char *missing = tmp_path("part.stl");
    snprintf(msg, sizeof msg, "cannot open '%s': No such file or directory", missing);
    expect_read_error(missing, msg);

    /* declares 100 triangles (5084 bytes) but has 400 */
    unsigned char head[400] = {0};
    memcpy(head, "solid but binary", 16);
    head[20] = 0x01; /* a control byte: not text */
    put_le32(head + 80, 100);
    const char *trunc = tmp_path("trunc.stl");
    write_text(trunc, (const char *)head, sizeof head);
    snprintf(msg, sizeof msg, "'%s': truncated binary STL (expected 5084 bytes, got 400)", trunc);
    expect_read_error(trunc, msg);

    const char *tiny = tmp_path("tiny.stl");
    write_text(tiny, "\x01\x02", 2);
    snprintf(msg, sizeof msg, "'%s': truncated binary STL (expected at least 84 bytes, got 2)", tiny);
    expect_read_error(tiny, msg);

    /* face index 9 on line 17 of a file with 8 vertices */
    const char *obj = "# cube\n# with a bad index\n"
                      "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nv 0 0 1\nv 1 0 1\nv 0 1 1\nv 1 1 1\n"
                      "f 1 3 4 2\nf 5 6 8 7\nf 1 2 6 5\n"
                      "\n"
                      "f 3 7 8 4\n"
                      "f 1 5 7 3\n"
                      "f 2 4 8 9\n";
    const char *bad_obj = tmp_path("part.obj");
    write_text(bad_obj, obj, strlen(obj));
    snprintf(msg, sizeof msg, "'%s' line 17: face index 9 out of range (8 vertices)", bad_obj);
    expect_read_error(bad_obj, msg);

    const char *rel = "v 0 0 0\nv 1 0 0\nf 1 2 -3\n";
    const char *rel_obj = tmp_path("rel.obj");
    write_text(rel_obj, rel, strlen(rel));
    snprintf(msg, sizeof msg, "'%s' line 3: face index -3 out of range (2 vertices so far)", rel_obj);
    expect_read_error(rel_obj, msg);

    const char *zero = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 0\n";
    write_text(rel_obj, zero, strlen(zero));
    snprintf(msg, sizeof msg, "'%s' line 4: face index 0 is invalid (indices start at 1)", rel_obj);
    expect_read_error(rel_obj, msg);

    const char *junk = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3/x\n";
    write_text(rel_obj, junk, strlen(junk));
    snprintf(msg, sizeof msg, "'%s' line 4: bad face vertex '3/x'", rel_obj);
    expect_read_error(rel_obj, msg);

    const char *unknown = "v 0 0 0\nbogus 1\n";
    write_text(rel_obj, unknown, strlen(unknown));
    snprintf(msg, sizeof msg, "'%s' line 2: unknown OBJ statement 'bogus'", rel_obj);
    expect_read_error(rel_obj, msg);

    const char *notri = "v 0 0 0\nv 1 0 0\nv 0 1 0\n";
    write_text(rel_obj, notri, strlen(notri));
    snprintf(msg, sizeof msg, "'%s': no triangles", rel_obj);
    expect_read_error(rel_obj, msg);

    const char *ply = tmp_path("x.ply");
    write_text(ply, notri, strlen(notri));
    snprintf(msg, sizeof msg, "'%s': unknown mesh format (use .stl or .obj)", ply);
    expect_read_error(ply, msg);
    const char *noext = tmp_path("x");
    write_text(noext, notri, strlen(notri));
    snprintf(msg, sizeof msg, "'%s': unknown mesh format (use .stl or .obj)", noext);
    expect_read_error(noext, msg);

    const char *ascii = "solid s\n facet normal 0 0 1\n  outer loop\n   vertex 0 0 0\n   vertex 1 0 zero\n";
    const char *bad_ascii = tmp_path("ascii.stl");
    write_text(bad_ascii, ascii, strlen(ascii));
    snprintf(msg, sizeof msg, "'%s' line 5: expected a finite number, got 'zero'", bad_ascii);
    expect_read_error(bad_ascii, msg);

    const char *cut = "solid s\n facet normal 0 0 1\n  outer loop\n   vertex 0 0 0\n";
    write_text(bad_ascii, cut, strlen(cut));
    snprintf(msg, sizeof msg, "'%s' line 4: unexpected end of file, expected 'vertex'", bad_ascii);
    expect_read_error(bad_ascii, msg);

    const char *empty_solid = "solid empty\nendsolid empty\n";
    write_text(bad_ascii, empty_solid, strlen(empty_solid));
    snprintf(msg, sizeof msg, "'%s': no triangles", bad_ascii);
    expect_read_error(bad_ascii, msg);

    unsigned char zero_tris[84] = {0};
    write_text(tiny, (const char *)zero_tris, sizeof zero_tris);
    snprintf(msg, sizeof msg, "'%s': no triangles", tiny);
    expect_read_error(tiny, msg);

    /* a folder is not a mesh */
    const char *dir_stl = tmp_path("dir.stl");
    SHARD_ENSURE(mkdir(dir_stl, 0700) == 0);
    snprintf(msg, sizeof msg, "'%s' is a folder, not a regular file", dir_stl);
    expect_read_error(dir_stl, msg);
    /* nor is a device (it would never end), whatever its name's extension; a missing file is named first */
    snprintf(msg, sizeof msg, "'/dev/zero' is a character device, not a regular file");
    expect_read_error("/dev/zero", msg);
    const char *gone = tmp_path("gone.ply");
    snprintf(msg, sizeof msg, "cannot open '%s': No such file or directory", gone);
    expect_read_error(gone, msg);
}

/* Random bytes and damaged copies of valid files: every read must either succeed or fail with a message. */
static void fuzz_one(const char *path, const unsigned char *data, size_t len)
{
    write_text(path, (const char *)data, len);
    shard_mesh m;
    memset(&err, 0, sizeof err);
    int rc = shard_mesh_read(path, "f.yaml", NULL, &m, &err);
    if (rc) {
        SHARD_ENSURE(rc == SHARD_EXIT_INPUT && err.msg[0] != 0);
        return;
    }
    memset(&err, 0, sizeof err);
    if (shard_mesh_check_closed(&m, path, NULL, NULL, &err) == 0) {
        double lo[3], hi[3];
        shard_mesh_bounds(&m, lo, hi);
        double ext = fmax(hi[0] - lo[0], fmax(hi[1] - lo[1], hi[2] - lo[2]));
        if (ext > 0 && ext < 1e30) {
            double *p;
            size_t n;
            shard_sample_mesh(&m, ext / 8, &p, &n);
            SHARD_ENSURE(n <= 9 * 9 * 9);
            free(p);
        }
    }
    shard_mesh_free(&m);
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    fseek(fp, 0, SEEK_END);
    *len = (size_t)ftell(fp);
    fseek(fp, 0, SEEK_SET);
    unsigned char *d = malloc(*len + 1);
    *len = fread(d, 1, *len, fp);
    fclose(fp);
    return d;
}

static void test_fuzz(void)
{
    static const char alphabet[] = "0123456789-+./ \n\tevfsolidfacetnormalvertexendloop#eE";
    const char *sources[4] = {tmp_path("cube.stl"), tmp_path("cube_ascii.stl"), tmp_path("cube.obj"),
                              tmp_path("cube_slashes.Obj")};
    const char *targets[4] = {tmp_path("fuzz.stl"), tmp_path("fuzz_a.stl"), tmp_path("fuzz.obj"),
                              tmp_path("fuzz2.obj")};
    unsigned char buf[4096];
    for (int it = 0; it < 400; it++) {
        size_t len = rng() % sizeof buf;
        for (size_t i = 0; i < len; i++)
            buf[i] = (unsigned char)rng();
        if (it % 4 == 1 && len > 6)
            memcpy(buf, "solid ", 6);
        if (it % 4 == 2 && len > 84)
            put_le32(buf + 80, (uint32_t)((len - 84) / 50)); /* right size, random contents */
        fuzz_one(targets[it % 2 ? 2 : 0], buf, len);
    }
    for (int src = 0; src < 4; src++) {
        size_t len;
        unsigned char *orig = slurp(sources[src], &len);
        unsigned char *d = malloc(len + 1);
        for (int it = 0; it < 300; it++) {
            memcpy(d, orig, len);
            size_t n = len;
            int edits = 1 + (int)(rng() % 6);
            for (int e = 0; e < edits; e++) {
                size_t at = rng() % n;
                d[at] = rng() % 3 ? (unsigned char)alphabet[rng() % (sizeof alphabet - 1)] : (unsigned char)rng();
            }
            if (rng() % 4 == 0)
                n = rng() % n;
            fuzz_one(targets[src], d, n);
        }
        free(d);
        free(orig);
    }
}

/* The figures quoted in the module's documentation: about 1e5 triangles, 1e6 points. */
static void test_large_sphere(void)
{
    pmesh sph = {0};
    pm_uv_sphere(&sph, 1.0, 224, 224);
    const char *path = tmp_path("big_sphere.stl");
    write_stl_binary(&sph, path, "big sphere");
    double t0 = now();
    shard_mesh m;
    if (!read_ok(path, &m)) {
        SHARD_ENSURE(0);
        pm_free(&sph);
        return;
    }
    double t1 = now();
    SHARD_ENSURE(m.n_vertices == sph.nv);
    SHARD_ENSURE(closed_ok(&m));
    double t2 = now();
    const double s = cbrt(4.0 / 3.0 * M_PI / 1e6);
    double *p;
    size_t n;
    shard_sample_mesh(&m, s, &p, &n);
    double t3 = now();
    SHARD_ENSURE_NEAR((double)n / 1e6, 1.0, 0.01);
    printf("sphere with %zu triangles: read %.3f s, check %.3f s, sample %zu points %.3f s\n", m.n_triangles,
           t1 - t0, t2 - t1, n, t3 - t2);
    free(p);
    shard_mesh_free(&m);
    pm_free(&sph);
}

/* Units other than metres: a mesh written in micrometres' or kilometres' worth of coordinates (scale 1e-6 and
 * 1e6 of the same sphere), sampled at the same spacing relative to its size, is closed, has the same volume
 * relative to its size and gives the same particles as at scale 1. */
static void test_scales(void)
{
    const double scales[3] = {1.0, 1e-6, 1e6};
    size_t counts[3] = {0, 0, 0};
    double vols[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++) {
        pmesh sph = {0};
        pm_uv_sphere(&sph, scales[k], 24, 24);
        const char *path = tmp_path(k == 0 ? "unit.stl" : k == 1 ? "micro.stl" : "mega.stl");
        write_stl_ascii(&sph, path);
        shard_mesh m;
        if (read_ok(path, &m)) {
            SHARD_ENSURE(closed_ok(&m));
            vols[k] = shard_mesh_volume(&m) / (scales[k] * scales[k] * scales[k]);
            double *p;
            shard_sample_mesh(&m, 0.05 * scales[k], &p, &counts[k]);
            free(p);
            shard_mesh_free(&m);
        } else {
            SHARD_ENSURE(0);
        }
        pm_free(&sph);
    }
    printf("scaled sphere: %zu / %zu / %zu particles at scale 1 / 1e-6 / 1e6, volume %.6f / %.6f / %.6f\n",
           counts[0], counts[1], counts[2], vols[0], vols[1], vols[2]);
    SHARD_ENSURE(counts[0] > 1000 && counts[1] == counts[0] && counts[2] == counts[0]);
    SHARD_ENSURE_NEAR(vols[1], vols[0], 1e-9 * vols[0]);
    SHARD_ENSURE_NEAR(vols[2], vols[0], 1e-9 * vols[0]);
    SHARD_ENSURE(vols[0] > 4.0 && vols[0] < 4.0 / 3.0 * M_PI);
}

static void remove_tmp_dir(void)
{
    DIR *d = opendir(tmp_dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        const char *p = tmp_path(e->d_name);
        if (unlink(p) != 0)
            rmdir(p);
    }
    if (d)
        closedir(d);
    rmdir(tmp_dir);
}

/* The nearest surface point of a closed mesh (shard_mesh_surface): for points inside and outside a box mesh the
 * distance to the box and the direction towards its nearest point, against the closed form (face, edge and
 * corner regions all occur). */
static void test_surface_distance(void)
{
    pmesh box = {0};
    const double lo[3] = {-1, 0, 2}, hi[3] = {1, 3, 5};
    pm_box(&box, lo, hi);
    const char *file = tmp_path("surface_box.stl");
    write_stl_binary(&box, file, "box");
    shard_mesh m;
    if (!read_ok(file, &m)) {
        SHARD_ENSURE(0);
        return;
    }
    uint64_t st = 99;
    double worst_d = 0.0, worst_n = 0.0;
    for (int k = 0; k < 4000; k++) {
        double p[3], q[3], n[3];
        for (int a = 0; a < 3; a++)
            p[a] = lo[a] - 1.0 + (hi[a] - lo[a] + 2.0) * (0.5 + 0.5 * shard_test_rnd(&st));
        /* reference: inside, the nearest face; outside, the clamp onto the box */
        int inside = 1;
        for (int a = 0; a < 3; a++)
            inside &= p[a] > lo[a] && p[a] < hi[a];
        double d_ref;
        if (inside) {
            int best_a = 0;
            double best = INFINITY, sgn = 1.0;
            for (int a = 0; a < 3; a++) {
                if (p[a] - lo[a] < best)
                    best = p[a] - lo[a], best_a = a, sgn = -1.0;
                if (hi[a] - p[a] < best)
                    best = hi[a] - p[a], best_a = a, sgn = 1.0;
            }
            d_ref = best;
            memcpy(q, p, sizeof q);
            q[best_a] += sgn * best;
        } else {
            double s2 = 0.0;
            for (int a = 0; a < 3; a++) {
                q[a] = fmin(fmax(p[a], lo[a]), hi[a]);
                s2 += (q[a] - p[a]) * (q[a] - p[a]);
            }
            d_ref = sqrt(s2);
        }
        double d = shard_mesh_surface(&m, p, n), nerr = 0.0;
        for (int a = 0; a < 3; a++)
            nerr = fmax(nerr, fabs(p[a] + d * n[a] - q[a]));
        worst_d = fmax(worst_d, fabs(d - d_ref));
        worst_n = fmax(worst_n, nerr);
    }
    SHARD_ENSURE(worst_d < 1e-12 && worst_n < 1e-12);
    printf("surface distance of a box mesh, 4000 points in and around it: max |d - d_ref| %.3g, max |p + d n - q| "
           "%.3g\n",
           worst_d, worst_n);
    shard_mesh_free(&m);
    pm_free(&box);
}

int main(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmp_dir, sizeof tmp_dir, "%s/shard-test-mesh-XXXXXX", base && base[0] ? base : "/tmp");
    if (!mkdtemp(tmp_dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_cube_formats();
    test_rows_through_edges_and_vertices();
    test_octahedron_on_lattice();
    test_sphere_and_torus();
    test_convex_point_by_point();
    test_check_closed();
    test_read_errors();
    test_fuzz();
    test_large_sphere();
    test_scales();
    test_surface_distance();
    remove_tmp_dir();
    return SHARD_TEST_RESULT();
}
