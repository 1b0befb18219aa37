/* The benchmark scenes, their command line and their figures (see scene.h).  Engine-independent: it sees only
 * poses and the distances of the contact points each engine reports. */
#define _POSIX_C_SOURCE 200809L
#include "scene.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The pour's rotation axis and angle rule: angle_i = tilt ((7919 i) mod 1000) / 1000 rad about (1, 2, 3)/sqrt(14),
 * and the spin spin ((7919 i) mod 1000) / 1000 rad/s about the same axis; 7919 (a prime) scatters the fractions
 * over [0, 1). */
#define PEER_POUR_ANGLE_PRIME 7919

static void peer_usage(const char *prog, const char *engine_help)
{
    fprintf(stderr,
            "usage: %s SCENE SIZE T DT ITERATIONS [key=value ...]\n"
            "  SCENE       pyramid | pour\n"
            "  SIZE        pyramid: ROWS (default %d); pour: N cubes (default %d)\n"
            "  T           simulated time in s (default: pyramid %g, pour %g)\n"
            "  DT          time step in s (default %g)\n"
            "  ITERATIONS  contact-solver iterations per step (default %d)\n"
            "  '-' keeps a default.  Options:\n"
            "  wall=W      pour: half width of the container in m (default %g)\n"
            "  tilt=A      pour: largest initial tilt of a cube in rad (default %g)\n"
            "  spin=S      pour: largest initial spin of a cube in rad/s (default %g)\n"
            "  sample=K    measure the poses after every K-th step and the last (default 1)\n"
            "%s",
            prog, PEER_PYRAMID_ROWS, PEER_POUR_N, PEER_PYRAMID_T, PEER_POUR_T, PEER_DT, PEER_ITERATIONS,
            PEER_POUR_WALL, PEER_POUR_TILT, PEER_POUR_SPIN, engine_help ? engine_help : "");
}

static int peer_parse_double(const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno != 0 || end == text || *end != '\0' || !isfinite(v))
        return 1;
    *out = v;
    return 0;
}

static int peer_parse_int(const char *text, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < 1 || v > 1000000)
        return 1;
    *out = (int)v;
    return 0;
}

/* The positional argument K (1-based after the program name), or NULL when absent or "-". */
static const char *peer_arg(int argc, char **argv, int k)
{
    if (k >= argc || strchr(argv[k], '=') != NULL || strcmp(argv[k], "-") == 0)
        return NULL;
    return argv[k];
}

static void peer_quat_axis_angle(const double axis[3], double angle, double q[4])
{
    double n = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    double s = sin(0.5 * angle) / n;
    q[0] = cos(0.5 * angle);
    q[1] = axis[0] * s;
    q[2] = axis[1] * s;
    q[3] = axis[2] * s;
}

static void peer_quat_matrix(const double q[4], double R[9])
{
    double w = q[0], x = q[1], y = q[2], z = q[3];
    R[0] = 1 - 2 * (y * y + z * z);
    R[1] = 2 * (x * y - w * z);
    R[2] = 2 * (x * z + w * y);
    R[3] = 2 * (x * y + w * z);
    R[4] = 1 - 2 * (x * x + z * z);
    R[5] = 2 * (y * z - w * x);
    R[6] = 2 * (x * z - w * y);
    R[7] = 2 * (y * z + w * x);
    R[8] = 1 - 2 * (x * x + y * y);
}

/* Half extent along world axis A of a cube with rotation R: h (|R_a0| + |R_a1| + |R_a2|). */
static double peer_extent(const double *R, int a)
{
    return 0.5 * PEER_CUBE_SIDE * (fabs(R[3 * a]) + fabs(R[3 * a + 1]) + fabs(R[3 * a + 2]));
}

static int peer_scene_build_pyramid(peer_scene *s)
{
    int rows = s->size;
    s->count = rows * (rows + 1) / 2;
    s->x0 = malloc(sizeof(double) * 3 * (size_t)s->count);
    s->q0 = malloc(sizeof(double) * 4 * (size_t)s->count);
    s->w0 = calloc(3 * (size_t)s->count, sizeof(double));
    if (!s->x0 || !s->q0 || !s->w0)
        return 1;
    int i = 0;
    for (int k = 0; k < rows; k++) {
        int in_row = rows - k;
        for (int j = 0; j < in_row; j++, i++) {
            s->x0[3 * i] = (j - 0.5 * (in_row - 1)) * PEER_PYRAMID_PITCH;
            s->x0[3 * i + 1] = 0.0;
            s->x0[3 * i + 2] = 0.5 * PEER_CUBE_SIDE + PEER_CUBE_SIDE * k;
            s->q0[4 * i] = 1.0;
            s->q0[4 * i + 1] = s->q0[4 * i + 2] = s->q0[4 * i + 3] = 0.0;
        }
    }
    s->plane_count = 1;
    s->planes[0] = (peer_plane){{0, 0, 1}, 0};
    return 0;
}

static int peer_scene_build_pour(peer_scene *s)
{
    int n = s->size, g = 1;
    while (g * g * g < n)
        g++;
    s->count = n;
    s->x0 = malloc(sizeof(double) * 3 * (size_t)n);
    s->q0 = malloc(sizeof(double) * 4 * (size_t)n);
    s->w0 = malloc(sizeof(double) * 3 * (size_t)n);
    if (!s->x0 || !s->q0 || !s->w0)
        return 1;
    const double axis[3] = {1, 2, 3}, axis_norm = sqrt(14.0);
    for (int i = 0; i < n; i++) {
        int ix = i % g, iy = (i / g) % g, iz = i / (g * g);
        s->x0[3 * i] = (ix - 0.5 * (g - 1)) * PEER_POUR_SPACING;
        s->x0[3 * i + 1] = (iy - 0.5 * (g - 1)) * PEER_POUR_SPACING;
        s->x0[3 * i + 2] = PEER_POUR_Z0 + iz * PEER_POUR_SPACING;
        double frac = (double)(((long)i * PEER_POUR_ANGLE_PRIME) % 1000) / 1000.0;
        peer_quat_axis_angle(axis, s->tilt * frac, s->q0 + 4 * i);
        for (int k = 0; k < 3; k++)
            s->w0[3 * i + k] = s->spin * frac * axis[k] / axis_norm;
    }
    double w = s->wall;
    s->plane_count = 5;
    s->planes[0] = (peer_plane){{0, 0, 1}, 0};
    s->planes[1] = (peer_plane){{1, 0, 0}, -w};
    s->planes[2] = (peer_plane){{-1, 0, 0}, -w};
    s->planes[3] = (peer_plane){{0, 1, 0}, -w};
    s->planes[4] = (peer_plane){{0, -1, 0}, -w};

    /* The layout must start free of contact: no vertex beyond a wall, and neighbours' bounding boxes apart (so the
     * cubes are).  Checked rather than assumed, since SIZE and wall are free. */
    double ext_max = 0, reach = 0;
    for (int i = 0; i < n; i++) {
        double R[9];
        peer_quat_matrix(s->q0 + 4 * i, R);
        for (int a = 0; a < 3; a++) {
            double e = peer_extent(R, a);
            ext_max = fmax(ext_max, e);
            if (a < 2)
                reach = fmax(reach, fabs(s->x0[3 * i + a]) + e);
        }
    }
    if (reach >= w) {
        fprintf(stderr,
                "error: pour: the %d x %d grid at %.4g m reaches +-%.4g m (tilted cubes' corners), beyond the walls at "
                "+-%.4g m; use a smaller N or wall= above %.4g\n",
                g, g, PEER_POUR_SPACING, reach, w, reach);
        return 2;
    }
    if (2 * ext_max >= PEER_POUR_SPACING) {
        fprintf(stderr, "error: pour: tilted cubes (half extent %.4g m) overlap at spacing %.4g m\n", ext_max,
                PEER_POUR_SPACING);
        return 2;
    }
    return 0;
}

int peer_scene_parse(int argc, char **argv, const char *engine_help, peer_scene *s)
{
    memset(s, 0, sizeof *s);
    const char *prog = argc > 0 ? argv[0] : "bench";
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        peer_usage(prog, engine_help);
        return 1;
    }
    if (strcmp(argv[1], "pyramid") == 0) {
        s->kind = PEER_SCENE_PYRAMID;
        s->name = "pyramid";
        s->size = PEER_PYRAMID_ROWS;
        s->t_end = PEER_PYRAMID_T;
    } else if (strcmp(argv[1], "pour") == 0) {
        s->kind = PEER_SCENE_POUR;
        s->name = "pour";
        s->size = PEER_POUR_N;
        s->t_end = PEER_POUR_T;
        s->wall = PEER_POUR_WALL;
    } else {
        fprintf(stderr, "error: unknown scene '%s' (pyramid or pour)\n", argv[1]);
        peer_usage(prog, engine_help);
        return 1;
    }
    s->dt = PEER_DT;
    s->iterations = PEER_ITERATIONS;

    const char *a;
    if ((a = peer_arg(argc, argv, 2)) && peer_parse_int(a, &s->size)) {
        fprintf(stderr, "error: SIZE must be a positive integer, got '%s'\n", a);
        return 1;
    }
    if ((a = peer_arg(argc, argv, 3)) && (peer_parse_double(a, &s->t_end) || s->t_end <= 0)) {
        fprintf(stderr, "error: T must be a number > 0, got '%s'\n", a);
        return 1;
    }
    if ((a = peer_arg(argc, argv, 4)) && (peer_parse_double(a, &s->dt) || s->dt <= 0)) {
        fprintf(stderr, "error: DT must be a number > 0, got '%s'\n", a);
        return 1;
    }
    if ((a = peer_arg(argc, argv, 5)) && peer_parse_int(a, &s->iterations)) {
        fprintf(stderr, "error: ITERATIONS must be a positive integer, got '%s'\n", a);
        return 1;
    }
    for (int k = 2; k < argc; k++) {
        const char *eq = strchr(argv[k], '=');
        if (eq == NULL) {
            if (k <= 5)
                continue;
            fprintf(stderr, "error: unexpected argument '%s' (options are key=value)\n", argv[k]);
            return 1;
        }
        if (s->option_count == PEER_MAX_OPTIONS) {
            fprintf(stderr, "error: more than %d options\n", PEER_MAX_OPTIONS);
            return 1;
        }
        argv[k][eq - argv[k]] = '\0';
        s->option_key[s->option_count] = argv[k];
        s->option_value[s->option_count] = eq + 1;
        s->option_count++;
    }
    if (s->kind == PEER_SCENE_POUR) {
        s->wall = peer_scene_option(s, "wall", PEER_POUR_WALL);
        if (s->wall <= 0) {
            fprintf(stderr, "error: wall must be > 0\n");
            return 1;
        }
        s->tilt = peer_scene_option(s, "tilt", PEER_POUR_TILT);
        s->spin = peer_scene_option(s, "spin", PEER_POUR_SPIN);
        if (s->tilt < 0 || s->spin < 0) {
            fprintf(stderr, "error: tilt and spin must be >= 0\n");
            return 1;
        }
    }
    double sample = peer_scene_option(s, "sample", 1);
    if (sample < 1 || sample > 1e9 || sample != floor(sample)) {
        fprintf(stderr, "error: sample must be a positive integer\n");
        return 1;
    }
    s->sample = (int)sample;
    s->steps = lround(s->t_end / s->dt);
    if (s->steps < 1) {
        fprintf(stderr, "error: T / DT gives no step\n");
        return 1;
    }
    int rc = s->kind == PEER_SCENE_PYRAMID ? peer_scene_build_pyramid(s) : peer_scene_build_pour(s);
    if (rc == 1)
        fprintf(stderr, "error: out of memory for %d cubes\n", s->count);
    return rc;
}

void peer_scene_destroy(peer_scene *s)
{
    free(s->x0);
    free(s->q0);
    free(s->w0);
    s->x0 = s->q0 = s->w0 = NULL;
}

double peer_scene_option(peer_scene *s, const char *key, double default_value)
{
    for (int k = 0; k < s->option_count; k++) {
        if (strcmp(s->option_key[k], key) != 0)
            continue;
        double v;
        if (peer_parse_double(s->option_value[k], &v)) {
            fprintf(stderr, "error: option %s must be a number, got '%s'\n", key, s->option_value[k]);
            exit(1);
        }
        s->option_used[k] = 1;
        return v;
    }
    return default_value;
}

int peer_scene_unused_options(const peer_scene *s)
{
    int bad = 0;
    for (int k = 0; k < s->option_count; k++) {
        if (!s->option_used[k]) {
            fprintf(stderr, "error: unknown option '%s' for this engine and scene\n", s->option_key[k]);
            bad = 1;
        }
    }
    return bad;
}

void peer_scene_rotation(const peer_scene *s, int i, double R[9])
{
    peer_quat_matrix(s->q0 + 4 * i, R);
}

void peer_figures_init(peer_figures *fig)
{
    memset(fig, 0, sizeof *fig);
    fig->diverged_step = -1;
}

void peer_figures_step_begin(peer_figures *fig)
{
    fig->contacts = 0;
    fig->contacts_touching = 0;
}

void peer_figures_contact(peer_figures *fig, double distance)
{
    fig->contacts++;
    if (distance <= 0)
        fig->contacts_touching++;
    if (-distance > fig->depth_max)
        fig->depth_max = -distance;
}

int peer_figures_due(const peer_figures *fig, const peer_scene *s)
{
    return fig->steps % s->sample == 0 || fig->steps >= s->steps;
}

/* How deep two cubes overlap, from their centres and rotations: the smallest overlap of their projections on the
 * 15 separating axes (the 3 face normals of each, the 9 cross products of their edges), or 0 when an axis
 * separates them.  This is the depth a box-box contact generator reports for the pair. */
static double peer_box_overlap(const double *ca, const double *Ra, const double *cb, const double *Rb)
{
    const double h = 0.5 * PEER_CUBE_SIDE;
    double a[3][3], b[3][3], T[3] = {cb[0] - ca[0], cb[1] - ca[1], cb[2] - ca[2]};
    for (int k = 0; k < 3; k++)
        for (int r = 0; r < 3; r++) {
            a[k][r] = Ra[3 * r + k]; /* edge direction k of a cube: column k of its rotation */
            b[k][r] = Rb[3 * r + k];
        }
    double axes[15][3];
    int n = 0;
    for (int k = 0; k < 3; k++) {
        for (int r = 0; r < 3; r++) {
            axes[n][r] = a[k][r];
            axes[n + 1][r] = b[k][r];
        }
        n += 2;
    }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double c[3] = {a[i][1] * b[j][2] - a[i][2] * b[j][1], a[i][2] * b[j][0] - a[i][0] * b[j][2],
                           a[i][0] * b[j][1] - a[i][1] * b[j][0]};
            double len = sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
            if (len < 1e-6)
                continue; /* parallel edges: the face normals cover them */
            for (int r = 0; r < 3; r++)
                axes[n][r] = c[r] / len;
            n++;
        }
    double depth = INFINITY;
    for (int m = 0; m < n; m++) {
        const double *L = axes[m];
        double ra = 0, rb = 0;
        for (int k = 0; k < 3; k++) {
            ra += fabs(a[k][0] * L[0] + a[k][1] * L[1] + a[k][2] * L[2]);
            rb += fabs(b[k][0] * L[0] + b[k][1] * L[1] + b[k][2] * L[2]);
        }
        double overlap = h * (ra + rb) - fabs(T[0] * L[0] + T[1] * L[1] + T[2] * L[2]);
        if (overlap <= 0)
            return 0;
        depth = fmin(depth, overlap);
    }
    return depth;
}

typedef struct peer_key {
    double x;
    int i;
} peer_key;

static int peer_key_cmp(const void *p, const void *q)
{
    double a = ((const peer_key *)p)->x, b = ((const peer_key *)q)->x;
    return (a > b) - (a < b);
}

/* The largest overlap of any two cubes: pairs whose bounding spheres (radius sqrt(3)/2 side) meet, found by a sweep
 * along x. */
static double peer_boxes_overlap(const peer_scene *s, const double *x, const double *R)
{
    peer_key *keys = malloc(sizeof(peer_key) * (size_t)s->count);
    if (!keys)
        return NAN;
    for (int i = 0; i < s->count; i++)
        keys[i] = (peer_key){x[3 * i], i};
    qsort(keys, (size_t)s->count, sizeof(peer_key), peer_key_cmp);
    const double reach = sqrt(3.0) * PEER_CUBE_SIDE;
    double worst = 0;
    for (int p = 0; p < s->count; p++) {
        const double *ci = x + 3 * keys[p].i;
        for (int q = p + 1; q < s->count && keys[q].x - keys[p].x < reach; q++) {
            const double *cj = x + 3 * keys[q].i;
            double d[3] = {cj[0] - ci[0], cj[1] - ci[1], cj[2] - ci[2]};
            if (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] >= reach * reach)
                continue;
            worst = fmax(worst, peer_box_overlap(ci, R + 9 * keys[p].i, cj, R + 9 * keys[q].i));
        }
    }
    free(keys);
    return worst;
}

int peer_figures_observe(peer_figures *fig, const peer_scene *s, const double *x, const double *R)
{
    const double h = 0.5 * PEER_CUBE_SIDE;
    fig->observed++;
    for (int i = 0; i < s->count; i++) {
        const double *c = x + 3 * i, *Ri = R + 9 * i;
        if (!isfinite(c[0]) || !isfinite(c[1]) || !isfinite(c[2])) {
            if (fig->diverged_step < 0)
                fig->diverged_step = fig->steps;
            return 1;
        }
        double ez = peer_extent(Ri, 2);
        double low = c[2] - ez; /* the cube's lowest vertex */
        fig->floor_max = fmax(fig->floor_max, -low);
        if (s->kind == PEER_SCENE_PYRAMID) {
            fig->sink_max = fmax(fig->sink_max, (s->x0[3 * i + 2] - h) - low);
        } else {
            fig->wall_max = fmax(fig->wall_max, fabs(c[0]) + peer_extent(Ri, 0) - s->wall);
            fig->wall_max = fmax(fig->wall_max, fabs(c[1]) + peer_extent(Ri, 1) - s->wall);
        }
    }
    fig->box_max = fmax(fig->box_max, peer_boxes_overlap(s, x, R));
    return 0;
}

double peer_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void peer_report_scene(const peer_scene *s, const char *engine, const char *version)
{
    printf("engine=%s\nversion=%s\nscene=%s\n", engine, version, s->name);
    printf("%s=%d\nbodies=%d\n", s->kind == PEER_SCENE_PYRAMID ? "rows" : "n", s->size, s->count);
    printf("t_end_s=%g\ndt_s=%g\nsteps=%ld\niterations=%d\n", s->t_end, s->dt, s->steps, s->iterations);
    printf("friction=%g\nrestitution=0\ngravity_z=%g\ncube_side_m=%g\ncube_mass_kg=%g\n", PEER_FRICTION,
           PEER_GRAVITY_Z, PEER_CUBE_SIDE, PEER_CUBE_MASS);
    if (s->kind == PEER_SCENE_POUR)
        printf("wall_m=%g\ntilt_rad=%g\nspin_rad_s=%g\n", s->wall, s->tilt, s->spin);
    printf("sample_every=%d\n", s->sample);
    fflush(stdout);
}

/* A CSV field: the number, or empty when the figure does not apply to the scene. */
static void peer_csv_num(char *buf, size_t size, int applies, const char *fmt, double v)
{
    if (applies)
        snprintf(buf, size, fmt, v);
    else
        buf[0] = '\0';
}

void peer_report_figures(const peer_scene *s, const peer_figures *fig, const char *engine, const char *version,
                         const double *x, const double *R, const double *v, const double *w)
{
    (void)R;
    double ke = 0, drift = 0;
    int left = 0;
    for (int i = 0; i < s->count; i++) {
        const double *vi = v + 3 * i, *wi = w + 3 * i, *c = x + 3 * i, *c0 = s->x0 + 3 * i;
        ke += 0.5 * PEER_CUBE_MASS * (vi[0] * vi[0] + vi[1] * vi[1] + vi[2] * vi[2]) +
              0.5 * PEER_CUBE_INERTIA * (wi[0] * wi[0] + wi[1] * wi[1] + wi[2] * wi[2]);
        double d[3] = {c[0] - c0[0], c[1] - c0[1], c[2] - c0[2]};
        drift = fmax(drift, sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]));
        if (!(fabs(c[0]) < s->wall && fabs(c[1]) < s->wall && c[2] >= 0))
            left++;
    }
    int pyramid = s->kind == PEER_SCENE_PYRAMID;
    double steps_per_s = fig->engine_s > 0 ? (double)fig->steps / fig->engine_s : 0;
    const char *status = fig->diverged_step >= 0 ? "diverged" : "ok";

    printf("status=%s\n", status);
    if (fig->diverged_step >= 0)
        printf("diverged_at_step=%ld\n", fig->diverged_step);
    printf("steps_done=%ld\n", fig->steps);
    printf("wall_s=%.3f\n", fig->engine_s);
    printf("steps_per_s=%.2f\n", steps_per_s);
    printf("measure_s=%.3f\n", fig->measure_s);
    printf("contacts=%ld\n", fig->contacts);
    printf("contacts_touching=%ld\n", fig->contacts_touching);
    printf("pen_contact_mm=%.4f\n", 1e3 * fig->depth_max);
    printf("pen_floor_mm=%.4f\n", 1e3 * fig->floor_max);
    printf("pen_box_mm=%.4f\n", 1e3 * fig->box_max);
    printf("observed=%ld\n", fig->observed);
    if (pyramid) {
        printf("sink_mm=%.4f\n", 1e3 * fig->sink_max);
        printf("drift_mm=%.4f\n", 1e3 * drift);
    } else {
        printf("pen_wall_mm=%.4f\n", 1e3 * fmax(0.0, fig->wall_max));
        printf("left=%d\n", left);
    }
    printf("ke_j=%.6g\n", ke);

    char sink[32], drift_s[32], wall_s[32], left_s[32];
    peer_csv_num(sink, sizeof sink, pyramid, "%.4f", 1e3 * fig->sink_max);
    peer_csv_num(drift_s, sizeof drift_s, pyramid, "%.4f", 1e3 * drift);
    peer_csv_num(wall_s, sizeof wall_s, !pyramid, "%.4f", 1e3 * fmax(0.0, fig->wall_max));
    peer_csv_num(left_s, sizeof left_s, !pyramid, "%.0f", left);
    /* ranks, iterations_mean and residual are there for codes that have them (Shard's rows of the benchmark); the
     * engines here run on one thread and always do all their iterations */
    printf("csv_columns=engine,version,scene,size,bodies,t_end_s,dt_s,iterations,steps,wall_s,steps_per_s,contacts,"
           "contacts_touching,pen_contact_mm,pen_floor_mm,pen_wall_mm,pen_box_mm,sink_mm,drift_mm,ke_j,left,status,"
           "ranks,iterations_mean,residual,sample_every,tilt_rad,spin_rad_s\n");
    printf("csv=%s,%s,%s,%d,%d,%g,%g,%d,%ld,%.3f,%.2f,%ld,%ld,%.4f,%.4f,%s,%.4f,%s,%s,%.6g,%s,%s,1,%d,,%d,%g,%g\n",
           engine, version, s->name, s->size, s->count, s->t_end, s->dt, s->iterations, fig->steps, fig->engine_s,
           steps_per_s, fig->contacts, fig->contacts_touching, 1e3 * fig->depth_max, 1e3 * fig->floor_max, wall_s,
           1e3 * fig->box_max, sink, drift_s, ke, left_s, status, s->iterations, s->sample, s->tilt, s->spin);
    fflush(stdout);
}
