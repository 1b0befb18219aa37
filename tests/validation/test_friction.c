/* Validation: static and sliding friction of a block on a slope, on a plane obstacle and on another body.
 *
 * A 0.05 m cube (E = 1e6 Pa, nu = 0.25, rho = 1000 kg/m^3, friction mu = 0.5) rests on a plane obstacle at
 * z = 0 (friction 0.5) under gravity turned by theta about y: g = 9.81 (sin theta, 0, -cos theta), so the slope
 * runs down along +x.  The block starts touching the plane, at rest, with unloaded contacts; while they load
 * (the first SETTLE seconds: the normal force grows from zero under the full tangential pull) it slips a little,
 * which is reported.
 *
 * Below the friction angle (tan theta = 0.9 mu) Coulomb's law says the block stays: it may only move by the
 * elastic give of its contacts (mu N / k_t per bottom particle, a few 1e-4 of a spacing here) and of its own
 * shear.  After SETTLE it must stay within 1 % of a spacing for 1 s.  Above it (tan theta = 1.1 mu) it slides
 * with a = g (sin theta - mu cos theta); the acceleration measured between t = 0.25 s and 1 s from the block's
 * mean velocity must be within 2 %.  Each case runs at two spacings (5 and 10 particles along an edge).
 *
 * On another body: the plane is replaced by a slab (a body of the same material, 3 layers, held by a fixed
 * region), with smooth contact surfaces (contact.surface: smooth, contact.h), its lattice shifted by 0.3 of a
 * spacing along x and y against the block's, at the block's spacing and, at the coarser one, at 0.7 of it.
 * The same bounds apply, after 0.4 s of loading (on the elastic slab the block's first bounce on its unloaded
 * contacts takes longer to die out; it slips until 0.33 s at the finer spacing, then holds).
 * With the default surfaces (spheres) the block sinks into the hollows of the slab's
 * lattice and does not slide at all (docs/validation.md).
 *
 * The material has a little stiffness-proportional damping (3e-5 s, under a time step): without it an
 * elastic block sliding under Coulomb friction at the finer spacing picks up a friction-excited vibration
 * (mode coupling of the bottom layer's normal and tangential motion) that makes its contacts chatter, with the
 * friction of this model and with the viscous friction before it alike (docs/validation.md). */
#include "validation.h"

#include <stdlib.h>
#include <string.h>

static const double G = 9.81, MU = 0.5, EDGE = 0.05, SETTLE = 0.2, SETTLE_SLAB = 0.4;

typedef struct result {
    double settle;     /* m: mean x displacement of the block while its contacts load, until SETTLE */
    double max_disp;   /* m: largest |mean x displacement| of the block after SETTLE */
    double accel;      /* m/s^2: (v(T) - v(T/4)) / (3T/4) of the block's mean x velocity */
    long steps;
} result;

/* The block at slope tan theta for `duration` seconds, on the plane (slab = 0) or on a slab of spacing
 * slab * s (smooth surfaces). */
static result run_case(shard_comm *comm, double s, double tan_theta, double duration, double slab)
{
    double th = atan(tan_theta), gx = G * sin(th), gz = -G * cos(th);
    char text[4096];
    int len = snprintf(text, sizeof text,
                       "run:\n"
                       "  gravity: [%.17g, 0, %.17g]\n"
                       "  end_time: %.17g\n"
                       "materials:\n"
                       "  block: {density: 1000, E: 1.0e6, nu: 0.25, damping: 3.0e-5, contact: {friction: %.17g%s}}\n"
                       "bodies:\n"
                       "  - name: block\n"
                       "    material: block\n"
                       "    shape: {box: {min: [0, 0, 0], max: [%.17g, %.17g, %.17g]}}\n"
                       "    spacing: %.17g\n",
                       gx, gz, duration, MU, slab > 0.0 ? ", surface: smooth" : "", EDGE, EDGE, EDGE, s);
    if (slab > 0.0) {
        /* Long enough for 1 s of sliding (0.22 m), 4 spacings wider than the block on either side. */
        double ss = slab * s, off = 0.3 * s;
        len += snprintf(text + len, sizeof text - (size_t)len,
                        "  - name: slab\n"
                        "    material: block\n"
                        "    shape: {box: {min: [%.17g, %.17g, %.17g], max: [%.17g, %.17g, 0]}}\n"
                        "    spacing: %.17g\n"
                        "    fixed: [{box: {min: [-1, -1, -1], max: [1, 1, 1]}}]\n",
                        off - 4.0 * s, off - 4.0 * s, -3.0 * ss, 0.3 + off, EDGE + off + 4.0 * s, ss);
    } else {
        len += snprintf(text + len, sizeof text - (size_t)len,
                        "obstacles:\n"
                        "  - plane: {point: [0, 0, 0], normal: [0, 0, 1]}\n"
                        "    friction: %.17g\n",
                        MU);
    }
    result r = {0};
    shard_sim *sim = validation_sim(comm, "friction.yaml", text, (size_t)len);
    if (!sim) {
        return r;
    }
    const shard_particles *p = shard_sim_particles(sim);
    size_t nb = 0;
    double x0 = 0.0;
    for (size_t i = 0; i < p->n_owned; i++)
        if (p->body[i] == 0)
            x0 += p->x[3 * i], nb++;
    x0 /= (double)nb;
    long steps = shard_sim_total_steps(sim);
    double v_quarter = 0.0, t_quarter = 0.0, v = 0.0, xs = NAN;
    for (long n = 1; n <= steps; n++) {
        shard_sim_step(sim);
        double x = 0.0, vx = 0.0, t = shard_sim_time(sim);
        for (size_t i = 0; i < p->n_owned; i++)
            if (p->body[i] == 0)
                x += p->x[3 * i], vx += p->v[3 * i];
        x = x / (double)nb - x0, v = vx / (double)nb;
        if (t <= (slab > 0.0 ? SETTLE_SLAB : SETTLE))
            r.settle = x;
        else if (isnan(xs))
            xs = x;
        else
            r.max_disp = fmax(r.max_disp, fabs(x - xs));
        if (n == steps / 4)
            v_quarter = v, t_quarter = t;
    }
    r.accel = (v - v_quarter) / (shard_sim_time(sim) - t_quarter);
    r.steps = steps;
    shard_sim_destroy(&sim);
    return r;
}

/* Both slopes at spacing s on the plane (slab = 0) or on a slab of spacing slab * s. */
static void run_pair(shard_comm *comm, double s, double slab)
{
    char on[64] = "the plane";
    if (slab > 0.0)
        snprintf(on, sizeof on, "a slab of spacing %.3g m", slab * s);
    double settle = slab > 0.0 ? SETTLE_SLAB : SETTLE;
    result st = run_case(comm, s, 0.9 * MU, settle + 1.0, slab);
    printf("spacing %.4g m on %s, tan theta = 0.9 mu: %.3g m (%.3g %% of a spacing) while the contacts load (%g s), "
           "then %.3g m (%.3g %%) in 1 s (%ld steps)\n",
           s, on, st.settle, 100.0 * st.settle / s, settle, st.max_disp, 100.0 * st.max_disp / s, st.steps);
    SHARD_ENSURE(st.max_disp < 0.01 * s);
    double th = atan(1.1 * MU), a0 = G * (sin(th) - MU * cos(th));
    result sl = run_case(comm, s, 1.1 * MU, 1.0, slab);
    printf("spacing %.4g m on %s, tan theta = 1.1 mu: a = %.5g m/s^2, g (sin - mu cos) = %.5g, ratio %.4f\n", s, on,
           sl.accel, a0, sl.accel / a0);
    SHARD_ENSURE(fabs(sl.accel / a0 - 1.0) < 0.02);
}

/* usage: validation_test_friction [case ...]: every case, or the listed ones (0, 1: the plane at 5 and 10 particles per
 * edge; 2, 3: a slab of the block's spacing at 5 and 10; 4: a slab of 0.7 of it at 5) */
int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    shard_comm *comm = shard_comm_init(&argc, &argv);
    const double spacing[5] = {EDGE / 5, EDGE / 10, EDGE / 5, EDGE / 10, EDGE / 5}, slab[5] = {0, 0, 1, 1, 0.7};
    for (int k = 0; k < 5; k++) {
        int run = argc <= 1;
        for (int a = 1; a < argc; a++)
            run |= atoi(argv[a]) == k;
        if (run)
            run_pair(comm, spacing[k], slab[k]);
    }
    shard_comm_finalize(&comm);
    return SHARD_TEST_RESULT();
}
