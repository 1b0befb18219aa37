/* Validation: a cantilever under its own weight, statically (by dynamic relaxation) and in free vibration,
 * undamped and with mass-proportional damping.
 *
 * A 1 x 0.1 x 0.1 m beam (E = 1 GPa, nu = 0.25, rho = 1000 kg/m^3) is clamped at x = 0: the body runs from
 * x = -3 spacings, and the particles at x < 0 are fixed, so the beam's root has a full stencil.  Gravity
 * -9.81 z gives the load q = rho g A.  References (Timoshenko & Gere):
 *   static, Euler-Bernoulli + shear: w(x) = q x^2 (6 L^2 - 4 L x + x^2) / (24 E I) + q (L x - x^2 / 2) / (k G A),
 *     I = h^4 / 12, G = E / (2 (1 + nu)), k = 5/6 (the shear part is 1 % of the tip deflection here);
 *     compared at the tip layer's x = L - s/2 with its mean vertical displacement;
 *   first bending frequency, Euler-Bernoulli: f1 = 1.8751^2 / (2 pi) sqrt(E I / (rho A L^4)) = 16.2 Hz
 *     (Timoshenko's shear and rotary inertia lower it by 0.6 % at h / L = 0.1).
 * At the default settings (support 2.2 spacings, no stabilisation, the held particles as ordinary neighbours)
 * the beam is too soft near its surfaces (the linear MLS fit of a surface particle sees only part of the bending
 * strain): 37 % at 5 layers through the thickness, 15 % at 8; those ratios and the frequency are held to bands
 * around today's figures (so that a change to the solid shows here).  At the settings for thin parts (support
 * 1.5, stabilization 0.5, clamp: face, docs/scenes.md) the tip is within 5 % of the reference at 5 layers
 * (1.7 %) and 8 (0.4 %), and the first frequency within 5 % (1.6 % low); the wall rule keeps the beam from
 * turning at the clamp.  docs/validation.md has the figures before and after.
 * What is checked exactly:
 *   - the relax stage (tolerance 1e-4 of the start's unbalanced force) converges, at 5 and 8 layers, by both
 *     methods: conjugate gradients in fewer than 5000 steps at 5 layers (and half dynamic relaxation's at 8),
 *     to the same deflection (within 0.1 %); the
 *     deflection it reaches is the static one: the centre of the free vibration started undeformed (the mean
 *     deflection over one period) agrees with it within 0.5 %;
 *   - the bond stabilisation (`stabilization` 0.1) cuts the static deflection's layer-to-layer hour-glass wiggle
 *     at least fourfold at 5 layers and moves the tip by less than 3 %;
 *   - at the settings for thin parts: the tip within 5 % at 5 and 8 layers, closer at 8; the layer at
 *     x = 0.1 m within 5 % of the reference; the first frequency within 5 % at 5 layers;
 *   - mass damping (`mass_damping` alpha) damps every mode at the rate alpha / 2: the tip's swing about the
 *     static deflection is the undamped swing times exp(-alpha t / 2) (fit over their extrema), within 5 %.
 * The period is measured between interpolated crossings of the static deflection over about two periods. */
#include "validation.h"

#include "solid/solid.h"

#include <stdlib.h>
#include <string.h>

static const double L = 1.0, H = 0.1, E = 1.0e9, NU = 0.25, RHO = 1000.0, G = 9.81;

/* relax: 0 none, 1 dynamic relaxation, 2 conjugate gradients, 3 the same to 1e-6 */
static shard_sim *make_with(shard_comm *comm, double s, int relax, double end_time, double alpha, double Gs,
                            double support, const char *clamp)
{
    static const char *const stage[4] = {"", "relax: {tolerance: 1e-4}\n", "relax: {tolerance: 1e-4, method: cg}\n",
                                         "relax: {tolerance: 1e-6, method: cg}\n"};
    char text[2048];
    int len = snprintf(text, sizeof text,
                       "run: {end_time: %.17g}\n"
                       "materials:\n"
                       "  beam: {density: %.17g, E: %.17g, nu: %.17g, mass_damping: %.17g, stabilization: %.17g}\n"
                       "bodies:\n"
                       "  - name: beam\n"
                       "    material: beam\n"
                       "    shape: {box: {min: [%.17g, 0, 0], max: [%.17g, %.17g, %.17g]}}\n"
                       "    spacing: %.17g\n"
                       "    support: %.17g\n"
                       "    fixed: [{box: {min: [-1, -1, -1], max: [0, 1, 1]}}]\n"
                       "    clamp: %s\n"
                       "%s",
                       end_time, RHO, E, NU, alpha, Gs, -3 * s, L, H, H, s, support, clamp, stage[relax]);
    shard_sim *sim = validation_sim(comm, "cantilever.yaml", text, (size_t)len);
    return sim;
}

static shard_sim *make(shard_comm *comm, double s, int relax, double end_time, double alpha)
{
    return make_with(comm, s, relax, end_time, alpha, 0.0, 2.2, "particles");
}

/* Mean z displacement of the layer of particles k spacings from the clamp (X in [k s, (k + 1) s)). */
static double layer_mean(const shard_sim *sim, double s, long k)
{
    const shard_particles *p = shard_sim_particles(sim);
    double sum = 0.0;
    long n = 0;
    for (size_t i = 0; i < p->n_owned; i++)
        if (lround(p->X[3 * i] / s - 0.5) == k)
            sum += p->x[3 * i + 2] - p->X[3 * i + 2], n++;
    return sum / (double)n;
}

/* Mean z displacement of the tip layer (x > L - s). */
static double tip(const shard_sim *sim, double s) { return layer_mean(sim, s, lround(L / s) - 1); }

/* The layer-to-layer wiggle of the static deflection: the largest |u_k - (u_(k-1) + u_(k+1)) / 2| along x of the
 * layers' mean z displacement u, less Euler-Bernoulli's, from the fourth layer on (the clamp shapes the first
 * ones).  An hour-glass (zero-energy) mode shows as an alternation from layer to layer. */
static double wiggle(const shard_sim *sim, double s, double q, double I)
{
    const shard_particles *p = shard_sim_particles(sim);
    int nx = (int)lround(L / s);
    double *w = calloc((size_t)nx, sizeof *w), *n = calloc((size_t)nx, sizeof *n), worst = 0.0;
    for (size_t i = 0; i < p->n_owned; i++) {
        long k = lround(p->X[3 * i] / s - 0.5);
        if (k >= 0 && k < nx)
            w[k] += p->x[3 * i + 2] - p->X[3 * i + 2], n[k] += 1.0;
    }
    for (int k = 3; k + 1 < nx; k++) {
        /* u_k - (u_(k-1) + u_(k+1)) / 2 = -(s^2 / 2) u'' = (s^2 / 2) w'' for u = -w, w'' = q (L - x)^2 / (2 E I) */
        double x = (k + 0.5) * s, eb = 0.5 * s * s * q * (L - x) * (L - x) / (2.0 * E * I);
        worst = fmax(worst, fabs(w[k] / n[k] - 0.5 * (w[k - 1] / n[k - 1] + w[k + 1] / n[k + 1]) - eb));
    }
    free(w), free(n);
    return worst;
}

static void add_each(void *ctx, double v)
{
    double **next = ctx;
    *(*next)++ = v;
}

/* The exact Euler-Bernoulli field imposed on the particles (x > 0; with its Poisson contraction, so that the
 * stress is uniaxial): the solid's elastic energy between x = 0.2 and 0.9 m over the exact one,
 * q^2 ((L - a)^5 - (L - b)^5) / (40 E I).  It measures the solid's bending stiffness without the clamp, the tip
 * or any spurious mode: the particle quadrature and the surface bias of the linear fit. */
static double exact_field_energy(const shard_sim *sim, double s, double support, double Gs, double q, double I)
{
    shard_particles *p = (shard_particles *)shard_sim_particles(sim); /* positions set by the test */
    const double c = 0.5 * H, a = 0.2, b = 0.9;
    for (size_t i = 0; i < p->n_owned; i++) {
        double X = p->X[3 * i], Y = p->X[3 * i + 1] - c, Z = p->X[3 * i + 2] - c, u[3] = {0, 0, 0};
        if (X > 0.0) {
            double w = q * X * X * (6 * L * L - 4 * L * X + X * X) / (24 * E * I);
            double w1 = q * X * (12 * L * L - 12 * L * X + 4 * X * X) / (24 * E * I);
            double w2 = q * (L - X) * (L - X) / (2 * E * I);
            u[0] = Z * w1, u[1] = -NU * Y * Z * w2, u[2] = -w - 0.5 * NU * (Z * Z - Y * Y) * w2;
        }
        for (int r = 0; r < 3; r++)
            p->x[3 * i + r] = p->X[3 * i + r] + u[r];
    }
    shard_solid_params sp;
    shard_solid_params_init(&sp, E, NU, 0, 0, 0, 0, 0, support * s);
    sp.kb = E / (3.0 * (1.0 - 2.0 * NU)); /* the default volume_barrier 1 (it does not act at these strains) */
    sp.ks = shard_solid_stabilization_stiffness(Gs, E, s, support * s);
    shard_solid_arrays sa = shard_solid_view(shard_sim_block(sim, "solid"));
    double *U = calloc(p->n_owned + 1, sizeof *U), *next = U, sum = 0.0;
    shard_solid_energy(p, shard_sim_bonds(sim), &sp, &sa, add_each, &next);
    for (size_t i = 0; i < p->n_owned; i++)
        if (p->X[3 * i] > a && p->X[3 * i] < b)
            sum += U[i];
    free(U);
    return sum / (q * q * (pow(L - a, 5) - pow(L - b, 5)) / (40 * E * I));
}

/* A dynamic run from the undeformed beam: the tip's swing y(t) = deflection - w_static, its crossings of 0 and
 * its extrema (time and |y|). */
typedef struct swing {
    int crossings, n_ext;
    double first, last, t_ext[16], a_ext[16];
    double t_cross[8], int_cross[8]; /* the first crossings and the integral of y dt up to them */
} swing;

static swing vibrate(shard_comm *comm, double s, double w_static, double end_time, double alpha, double Gs,
                     double support, const char *clamp)
{
    swing r = {0};
    shard_sim *sim = make_with(comm, s, 0, end_time, alpha, Gs, support, clamp);
    if (!sim)
        return r;
    long steps = shard_sim_total_steps(sim);
    double prev = 0.0, prev2 = 0.0, t_prev = 0.0, integral = 0.0;
    r.first = r.last = -1.0;
    for (long n = 1; n <= steps; n++) {
        shard_sim_step(sim);
        double t = shard_sim_time(sim), y = -tip(sim, s) - w_static;
        integral += 0.5 * (prev + y) * (t - t_prev);
        if (n > 1 && (prev > 0.0) != (y > 0.0)) {
            double tc = t_prev + (t - t_prev) * prev / (prev - y);
            if (r.first < 0.0)
                r.first = tc;
            r.last = tc;
            if (r.crossings < 8) /* the integral up to tc: less the part of the last step after it */
                r.t_cross[r.crossings] = tc, r.int_cross[r.crossings] = integral - 0.5 * y * (t - tc);
            r.crossings++;
        }
        /* an extremum of |y| at the previous step (away from the start) */
        if (n > 2 && fabs(prev) > fabs(prev2) && fabs(prev) >= fabs(y) && r.n_ext < 16 && r.crossings > 0) {
            if (r.n_ext == 0 || (r.t_ext[r.n_ext - 1] < t_prev - 0.01)) {
                r.t_ext[r.n_ext] = t_prev;
                r.a_ext[r.n_ext] = fabs(prev);
                r.n_ext++;
            }
        }
        prev2 = prev, prev = y, t_prev = t;
    }
    shard_sim_destroy(&sim);
    return r;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    shard_comm *comm = shard_comm_init(&argc, &argv);
    const double A = H * H, I = H * H * H * H / 12.0, q = RHO * G * A, Gs = E / (2.0 * (1.0 + NU));
    const int layers[2] = {5, 8};
    /* today's ratios to Euler-Bernoulli + shear (docs/validation.md): bands of +-3 % around them */
    const double band[2] = {1.3665, 1.1466};
    double w_static5 = 0.0, err_prev = 0.0;
    for (int k = 0; k < 2; k++) {
        double s = H / layers[k], x = L - 0.5 * s;
        double w_eb = q * x * x * (6 * L * L - 4 * L * x + x * x) / (24 * E * I);
        double w_ref = w_eb + q * (L * x - 0.5 * x * x) / (5.0 / 6.0 * Gs * A);
        shard_sim *sim = make(comm, s, 1, 1e-3, 0.0);
        if (!sim)
            break;
        shard_error err;
        int rc = shard_sim_relax(sim, 1, &err);
        SHARD_ENSURE(rc == 0);
        double ratio;
        long steps = shard_sim_relax_steps(sim, &ratio);
        double w = -tip(sim, s);
        if (k == 0)
            w_static5 = w;
        printf("%d layers: relaxed in %ld steps (residual %.3g of the start); tip deflection %.6g m, "
               "Euler-Bernoulli + shear %.6g m (EB alone %.6g m): ratio %.4f\n",
               layers[k], steps, ratio, w, w_ref, w_eb, w / w_ref);
        SHARD_ENSURE(ratio <= 1e-4);
        SHARD_ENSURE(fabs(w / w_ref / band[k] - 1.0) < 0.03);
        if (k > 0)
            SHARD_ENSURE(fabs(w / w_ref - 1.0) < 0.5 * err_prev); /* converges with resolution */
        err_prev = fabs(w / w_ref - 1.0);
        shard_sim_destroy(&sim);

        /* The same by conjugate gradients: the same deflection, in fewer than 5000 steps at 5 layers. */
        sim = make(comm, s, 2, 1e-3, 0.0);
        if (!sim)
            break;
        rc = shard_sim_relax(sim, 1, &err);
        SHARD_ENSURE(rc == 0);
        long cg_steps = shard_sim_relax_steps(sim, &ratio);
        double w_cg = -tip(sim, s);
        printf("%d layers, method cg: relaxed in %ld steps (residual %.3g of the start); tip deflection %.6g m, "
               "dynamic relaxation's %.6g m: off by %.3g\n",
               layers[k], cg_steps, ratio, w_cg, w, w_cg / w - 1.0);
        SHARD_ENSURE(ratio <= 1e-4);
        SHARD_ENSURE(fabs(w_cg / w - 1.0) < 1e-3);
        SHARD_ENSURE(cg_steps < (k == 0 ? 5000 : steps / 2));
        shard_sim_destroy(&sim);
    }

    /* The bond stabilisation (material key `stabilization`) at 5 layers: the static deflection's hour-glass
     * wiggle shrinks, the deflection itself barely moves (an affine field it does not touch at all:
     * tests/unit/test_solid.c). */
    {
        double s = H / layers[0], wig[2] = {0, 0}, w[2] = {0, 0};
        const double stab[2] = {0.0, 0.1};
        for (int k = 0; k < 2; k++) {
            shard_sim *sim = make_with(comm, s, 3, 1e-3, 0.0, stab[k], 2.2, "particles");
            if (!sim)
                break;
            shard_error err;
            SHARD_ENSURE(shard_sim_relax(sim, 1, &err) == 0);
            wig[k] = wiggle(sim, s, q, I);
            w[k] = -tip(sim, s);
            printf("5 layers, stabilization %g: tip deflection %.6g m, layer-to-layer wiggle %.3g m (%.3g of the "
                   "tip)\n",
                   stab[k], w[k], wig[k], wig[k] / w[k]);
            shard_sim_destroy(&sim);
        }
        SHARD_ENSURE(wig[1] < 0.25 * wig[0]);
        SHARD_ENSURE(w[1] < w[0] && w[1] > 0.97 * w[0]);
    }

    /* Bending near surfaces at the settings for thin parts (docs/scenes.md): support 1.5 spacings (the surface
     * bias of the linear fit falls with the kernel's reach) with the bond stabilisation at 0.5 (the
     * hour-glass modes, and a bending stiffness of its own that makes up for the particle quadrature), and the
     * wall rule at the clamp (`clamp: face`, solid.h).  The static tip within 5 % of Euler-Bernoulli + shear at 5 layers and
     * 8, closer at 8; the deflection of the layer at x = 0.1 m within 5 % (without the wall rule the beam
     * turned at the clamp: 28 % too far there at 5 layers). */
    double w_thin5 = 0.0, err_thin5 = 0.0;
    for (int k = 0; k < 2; k++) {
        double s = H / layers[k], x = L - 0.5 * s;
        long k1 = lround(0.1 / s - 0.5);
        double x1 = (k1 + 0.5) * s;
        double w_ref = q * x * x * (6 * L * L - 4 * L * x + x * x) / (24 * E * I) +
                       q * (L * x - 0.5 * x * x) / (5.0 / 6.0 * Gs * A);
        double w_ref1 = q * x1 * x1 * (6 * L * L - 4 * L * x1 + x1 * x1) / (24 * E * I) +
                        q * (L * x1 - 0.5 * x1 * x1) / (5.0 / 6.0 * Gs * A);
        shard_sim *sim = make_with(comm, s, 3, 1e-3, 0.0, 0.5, 1.5, "face");
        if (!sim)
            break;
        shard_error err;
        SHARD_ENSURE(shard_sim_relax(sim, 1, &err) == 0);
        double w = -tip(sim, s), w1 = -layer_mean(sim, s, k1);
        if (k == 0)
            w_thin5 = w, err_thin5 = fabs(w / w_ref - 1.0);
        printf("%d layers, support 1.5, stabilization 0.5: tip deflection %.6g m, Euler-Bernoulli + shear %.6g m: "
               "ratio %.4f; at x = %.4g m %.4g m, reference %.4g m: ratio %.4f\n",
               layers[k], w, w_ref, w / w_ref, x1, w1, w_ref1, w1 / w_ref1);
        SHARD_ENSURE(fabs(w / w_ref - 1.0) < 0.05);
        SHARD_ENSURE(fabs(w1 / w_ref1 - 1.0) < 0.05);
        if (k > 0)
            SHARD_ENSURE(fabs(w / w_ref - 1.0) < err_thin5);
        shard_sim_destroy(&sim);
    }

    /* The exact field's energy: the surface bias of the linear fit at the default support (today's figures,
     * +-1 %, so that a surface correction shows here); at support 1.5 only the quadrature is left (the
     * midpoint second moment of the cross-section, 1 - 1 / n^2 for n layers), within 0.5 %; the stabilisation
     * at G_s = 1 adds its own bending stiffness, 4-6 % at 5 layers. */
    {
        const double today[2] = {0.7918, 0.9101};
        for (int k = 0; k < 4; k++) {
            int n = layers[k == 1 ? 1 : 0];
            double support = k < 2 ? 2.2 : 1.5, stab = k == 3 ? 1.0 : 0.0, s = H / n;
            double quad = 1.0 - 1.0 / (double)(n * n);
            shard_sim *sim = make_with(comm, s, 0, 1e-3, 0.0, stab, support, "particles");
            if (!sim)
                break;
            double r = exact_field_energy(sim, s, support, stab, q, I);
            printf("%d layers, support %g, stabilization %g: the exact field's energy is %.4f of the exact one "
                   "(the quadrature's share %.4f)\n",
                   n, support, stab, r, quad);
            if (k < 2)
                SHARD_ENSURE(fabs(r / today[k] - 1.0) < 0.01);
            else if (k == 2)
                SHARD_ENSURE(fabs(r / quad - 1.0) < 0.005);
            else
                SHARD_ENSURE(r / quad > 1.04 && r / quad < 1.06);
            shard_sim_destroy(&sim);
        }
    }

    /* Free vibration at 5 layers about the static deflection: frequency, and the centre of the swing. */
    double s = H / layers[0];
    double f1 = 1.8751040687 * 1.8751040687 / (2.0 * M_PI) * sqrt(E * I / (RHO * A * L * L * L * L));
    swing u = vibrate(comm, s, w_static5, 2.3 / f1, 0.0, 0.0, 2.2, "particles");
    SHARD_ENSURE(u.crossings >= 3);
    if (u.crossings >= 3) {
        double period = 2.0 * (u.last - u.first) / (u.crossings - 1), f = 1.0 / period;
        /* the swing's centre: the mean of y over one period (first to third crossing) */
        double centre = (u.int_cross[2] - u.int_cross[0]) / (u.t_cross[2] - u.t_cross[0]);
        printf("5 layers: first bending frequency %.5g Hz (%d crossings of the static deflection), Euler-Bernoulli "
               "%.5g Hz: ratio %.4f; mean deflection over a period %.6g m, relaxed %.6g m: off by %.3g\n",
               f, u.crossings, f1, f / f1, w_static5 + centre, w_static5, centre / w_static5);
        SHARD_ENSURE(fabs(f / f1 / 0.8518 - 1.0) < 0.03);
        SHARD_ENSURE(fabs(centre / w_static5) < 0.005);
    }

    /* The first bending frequency at the settings for thin parts, within 5 % of Euler-Bernoulli's (Timoshenko's
     * correction lowers it by 0.6 %). */
    swing t = vibrate(comm, s, w_thin5, 1.3 / f1, 0.0, 0.5, 1.5, "face");
    SHARD_ENSURE(t.crossings >= 2);
    if (t.crossings >= 2) {
        double f = 1.0 / (2.0 * (t.last - t.first) / (t.crossings - 1));
        printf("5 layers, support 1.5, stabilization 0.5: first bending frequency %.5g Hz (%d crossings), "
               "Euler-Bernoulli %.5g Hz: ratio %.4f\n",
               f, t.crossings, f1, f / f1);
        SHARD_ENSURE(fabs(f / f1 - 1.0) < 0.05);
    }

    /* The same with mass damping alpha: every mode decays at alpha / 2, so the damped swing is the undamped one
     * times exp(-alpha t / 2) (its frequencies shift by (alpha / 2w)^2 / 2 < 10^-3).  The decay rate is fitted to
     * the ratio of the two swings' extrema, which the higher modes' ripple on the swing does not bias. */
    const double alpha = 4.0;
    swing d = vibrate(comm, s, w_static5, 2.3 / f1, alpha, 0.0, 2.2, "particles");
    SHARD_ENSURE(d.n_ext >= 3 && d.n_ext == u.n_ext);
    if (d.n_ext >= 3 && d.n_ext == u.n_ext) {
        /* least-squares slope of ln (|y_damped| / |y_undamped|) over the extrema */
        double st = 0, sl = 0, stt = 0, stl = 0;
        for (int k = 0; k < d.n_ext; k++) {
            double l = log(d.a_ext[k] / u.a_ext[k]);
            st += d.t_ext[k], sl += l, stt += d.t_ext[k] * d.t_ext[k], stl += d.t_ext[k] * l;
        }
        double slope = (d.n_ext * stl - st * sl) / (d.n_ext * stt - st * st);
        printf("5 layers, mass_damping %g 1/s: %d extrema, decay rate of the damped swing over the undamped %.4g "
               "1/s, alpha / 2 = %.4g 1/s: ratio %.4f\n",
               alpha, d.n_ext, -slope, 0.5 * alpha, -slope / (0.5 * alpha));
        SHARD_ENSURE(fabs(-slope / (0.5 * alpha) - 1.0) < 0.05);
    }
    shard_comm_finalize(&comm);
    return SHARD_TEST_RESULT();
}
