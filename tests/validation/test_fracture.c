/* Validation: fracture of the meshless solid (fracture.h), at two spacings each (case 5: two speeds at one).
 *
 * 1. Critical stretch in tension.  A bar 0.1 x 0.02 x 0.02 m (E = 100 MPa, nu = 0, rho = 1000 kg/m^3,
 *    s_c = 0.01, the default stabilisation of a breaking material) is pulled apart by its end layers at
 *    +-0.05 m/s: the strain between them grows at 1 /s, slowly next to the wave transit (0.3 ms), so the bar
 *    is in uniform tension (nu = 0: the grips hold back no lateral contraction, so no corner concentrates the
 *    strain) and its axial bonds see the full strain.  The rule must be exact: the first bond breaks in the
 *    first step at which some unbroken bond's stretch (measured here from the positions) reaches s_c.  The
 *    nominal strain (end layers' distance) then is 0.72 s_c at both spacings, held in [0.65, 1]: the bonds
 *    between the first free layer and the next stretch 1/0.72 times the nominal strain, because uniform
 *    stress is not in equilibrium at a particle whose stencil is cut by the end face (the surface effect of
 *    the correspondence model, docs/validation.md); without stabilisation an odd-even (hour-glass) pattern of
 *    layers breaks the bar at 0.53 s_c.  The bar must end in pieces.
 * 2. A free-flying body that breaks: a cube spinning at 600 rad/s and moving at (1, 2, 3) m/s, no gravity,
 *    no obstacle (rim stress rho w^2 R^2 = 9 E s_c: it bursts).  Linear momentum must keep its start value to
 *    round-off (relative 1e-12 of m |v|), the fragments must account for every particle and the whole mass,
 *    debris (particles left without a bond) must exist, and every output column must be finite.
 * 4. Breaking takes energy, never gives it: a glass sphere (R = 50 mm, surface-fitted sampling, tensile
 *    strength 50 MPa with a Weibull scatter) hits a plane at 100 m/s and shatters.  Kinetic plus elastic energy
 *    (contact springs included) must never exceed its start value by more than 1 % (checked every 4 steps over
 *    200 steps).  Before two fixes it grew sevenfold: surface-fitted particles sit closer than two contact
 *    radii, so a broken bond between them released a contact spring compressed from the start (now same-body
 *    pairs touch at their rest distance when that is shorter), and particles left with a thin stencil made
 *    the step unstable (now debris below SHARD_FRACTURE_MIN_MOMENT of their intact moment).
 * 3. Crack faces touch.  A block cut through by a flat notch is two halves of one body; their outer layers
 *    push them together at 0.5 m/s each, by 12 mm in all (2.4 and 4.8 spacings).  The halves must not pass through each other (the right half's
 *    smallest x stays above the left half's largest), and the fragment analysis finds exactly two fragments.
 * 5. A sphere that splits (fragment statistics, docs/validation.md): the glass sphere with a fracture energy of
 *    200 J/m^2 (stabilization 1) hits the plane at 16 and 20 m/s at R/15; 0.4 ms after contact 25-65 % of its
 *    bonds are broken, the largest fragment holds less than 80 % of the mass, single particles less than 35 %, at
 *    least 8 fragments of 3 particles or more (the largest left out) enter the fit of tau, and tau lies in
 *    (1.1, 1.8): the band of every run at R/15 from 14 to 24 m/s (8-36 fragments in the fit, tau 1.28-1.58; at R/12 the
 *    fit holds as few as 4).  How the sphere divides into large pieces changes with the speed and the resolution
 *    (the largest holds 0.1-0.73 of the mass, and the breaking is over by 0.4 ms), so no more than that is
 *    asserted.  With the strength criterion (docs/validation.md's first table) the sphere stays one body plus
 *    single particles: no fragment enters the fit.
 */
#include "validation.h"

#include "shard/xsum.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double E = 1.0e8, RHO = 1000.0, SC = 0.01;

/* 1 */
static void tension(shard_comm *comm, double s)
{
    const double L = 0.1, v = 0.05;
    char text[2048];
    int len = snprintf(text, sizeof text,
                       "run:\n"
                       "  end_time: 0.0125\n"
                       "  gravity: [0, 0, 0]\n"
                       "materials:\n"
                       "  brittle: {density: %g, E: %g, nu: 0, fracture: {critical_stretch: %g}}\n"
                       "bodies:\n"
                       "  - name: bar\n"
                       "    material: brittle\n"
                       "    shape: {box: {min: [0, 0, 0], max: [%g, 0.02, 0.02]}}\n"
                       "    spacing: %.17g\n"
                       "    prescribed:\n"
                       "      - {region: {box: {min: [-1, -1, -1], max: [%.17g, 1, 1]}}, velocity: [%g, 0, 0]}\n"
                       "      - {region: {box: {min: [%.17g, -1, -1], max: [1, 1, 1]}}, velocity: [%g, 0, 0]}\n",
                       RHO, E, SC, L, s, s, -v, L - s, v);
    shard_sim *sim = validation_sim(comm, "tension.yaml", text, (size_t)len);
    if (!sim)
        return;
    /* the end layers (particles at s/2 and L - s/2) are L - s apart at rest */
    double free_len = L - s;
    long steps = shard_sim_total_steps(sim), reached = -1, broke = -1;
    double first = -1.0;
    const shard_particles *p = shard_sim_particles(sim);
    for (long n = 1; n <= steps && first < 0.0; n++) {
        shard_sim_step(sim);
        /* the largest stretch of an unbroken bond, from the positions (the run's state after the step) */
        const shard_csr *bonds = shard_sim_bonds(sim);
        double smax = 0.0;
        for (size_t i = 0; i < p->n_owned; i++)
            for (int64_t b = bonds->start[i]; b < bonds->start[i + 1]; b++) {
                size_t j = (size_t)bonds->idx[b];
                double X2 = 0.0, x2 = 0.0;
                for (int k = 0; k < 3; k++) {
                    double X = p->X[3 * j + k] - p->X[3 * i + k], x = p->x[3 * j + k] - p->x[3 * i + k];
                    X2 += X * X, x2 += x * x;
                }
                smax = fmax(smax, sqrt(x2 / X2) - 1.0);
            }
        shard_diag d = shard_sim_diagnostics(sim);
        if (d.broken_bonds > 0) {
            first = 2.0 * v * shard_sim_time(sim) / free_len;
            broke = n;
        } else if (smax >= SC * (1.0 + 1e-12) && reached < 0) {
            reached = n; /* a bond beyond the threshold that the run left unbroken */
        }
    }
    for (long n = shard_sim_step_index(sim); n < steps; n++)
        shard_sim_step(sim);
    const shard_fragment *fr = NULL;
    size_t nf = 0;
    const shard_fragment_stats *st = shard_sim_fragment_stats(sim, &fr, &nf);
    (void)fr, (void)nf;
    printf("tension, spacing %g: first bond broken in step %ld at a nominal strain of %.5g (s_c %g, ratio %.4f)%s; "
           "at the end %lld fragments, the largest %.4f of the mass\n",
           s, broke, first, SC, first / SC, reached >= 0 ? " AFTER a step with a bond at the threshold" : "",
           (long long)st->n_fragments, st->largest_mass / st->total_mass);
    SHARD_ENSURE(broke > 0 && reached < 0);
    SHARD_ENSURE(first >= 0.65 * SC && first <= 1.0 * SC);
    SHARD_ENSURE(st->n_fragments >= 2);
    shard_sim_destroy(&sim);
}

/* 2 */
static void burst(shard_comm *comm, double s)
{
    char text[2048];
    int len = snprintf(text, sizeof text,
                       "run:\n"
                       "  end_time: 0.004\n"
                       "  gravity: [0, 0, 0]\n"
                       "materials:\n"
                       "  brittle: {density: %g, E: %g, nu: 0.25, fracture: {critical_stretch: %g, "
                       "weibull_modulus: 6}}\n"
                       "bodies:\n"
                       "  - name: cube\n"
                       "    material: brittle\n"
                       "    shape: {box: {min: [-0.05, -0.05, -0.05], max: [0.05, 0.05, 0.05]}}\n"
                       "    spacing: %.17g\n"
                       "    velocity: [1, 2, 3]\n"
                       "    angular_velocity: [0, 0, 600]\n",
                       RHO, E, SC, s);
    shard_sim *sim = validation_sim(comm, "burst.yaml", text, (size_t)len);
    if (!sim)
        return;
    double mass = validation_mass(sim);
    shard_xsum exact;
    shard_xsum_init(&exact);
    for (size_t i = 0; i < shard_sim_particles(sim)->n_owned; i++)
        shard_xsum_add(&exact, shard_sim_particles(sim)->mass[i]);
    shard_diag d0 = shard_sim_diagnostics(sim);
    long steps = shard_sim_total_steps(sim);
    double drift = 0.0;
    for (long n = 1; n <= steps; n++) {
        shard_sim_step(sim);
        if (n % 20 == 0 || n == steps) {
            shard_diag d = shard_sim_diagnostics(sim);
            for (int k = 0; k < 3; k++)
                drift = fmax(drift, fabs(d.momentum[k] - d0.momentum[k]));
        }
    }
    shard_diag d = shard_sim_diagnostics(sim);
    const shard_fragment *fr = NULL;
    size_t nf = 0;
    const shard_fragment_stats *st = shard_sim_fragment_stats(sim, &fr, &nf);
    const shard_particles *p = shard_sim_particles(sim);
    const shard_csr *bonds = shard_sim_bonds(sim);
    int64_t counted = 0, debris = 0;
    for (size_t q = 0; q < nf; q++)
        counted += fr[q].count;
    for (size_t i = 0; i < p->n_owned; i++)
        debris += bonds->start[i + 1] == bonds->start[i];
    shard_column cols[SHARD_OUTPUT_MAX];
    int nc = shard_sim_output_columns(sim, cols, SHARD_OUTPUT_MAX);
    int finite = 1;
    for (int c = 0; c < nc; c++)
        if (cols[c].type == SHARD_TYPE_F64)
            for (size_t k = 0; k < p->n_owned * (size_t)cols[c].ncomp; k++)
                finite &= isfinite(((const double *)cols[c].data)[k]) != 0;
    double scale = mass * sqrt(14.0);
    printf("burst, spacing %g: %lld bonds broken, %lld fragments of %lld particles (largest %.4f of the mass), "
           "%lld debris particles; momentum drift %.3g (relative %.3g); output finite %d\n",
           s, (long long)d.broken_bonds, (long long)st->n_fragments, (long long)shard_sim_total_particles(sim),
           st->largest_mass / st->total_mass, (long long)debris, drift, drift / scale, finite);
    SHARD_ENSURE(d.broken_bonds > 0 && st->n_fragments > 10);
    SHARD_ENSURE(drift <= 1e-12 * scale);
    SHARD_ENSURE(counted == (int64_t)p->n_owned);
    /* the fragments' masses are exact sums, rounded once each; their total is within one rounding per fragment */
    SHARD_ENSURE(fabs(st->total_mass - shard_xsum_round(&exact)) <= 1e-16 * (double)st->n_fragments * mass);
    SHARD_ENSURE(debris > 0);
    SHARD_ENSURE(finite);
    shard_sim_destroy(&sim);
}

/* 3 */
static void crack_faces(shard_comm *comm, double s)
{
    const double v = 0.5;
    char text[2048];
    int len = snprintf(text, sizeof text,
                       "run:\n"
                       "  end_time: 0.012\n"
                       "  gravity: [0, 0, 0]\n"
                       "materials:\n"
                       "  brittle: {density: %g, E: %g, nu: 0.25, fracture: {critical_stretch: 0.5}}\n"
                       "bodies:\n"
                       "  - name: block\n"
                       "    material: brittle\n"
                       "    shape: {box: {min: [0, 0, 0], max: [0.08, 0.04, 0.04]}}\n"
                       "    spacing: %.17g\n"
                       "    notches:\n"
                       "      - {min: [0.04, -1, -1], max: [0.04, 1, 1]}\n"
                       "    prescribed:\n"
                       "      - {region: {box: {min: [-1, -1, -1], max: [%.17g, 1, 1]}}, velocity: [%g, 0, 0]}\n"
                       "      - {region: {box: {min: [%.17g, -1, -1], max: [1, 1, 1]}}, velocity: [%g, 0, 0]}\n",
                       RHO, E, s, s, v, 0.08 - s, -v);
    shard_sim *sim = validation_sim(comm, "crack_faces.yaml", text, (size_t)len);
    if (!sim)
        return;
    const shard_particles *p = shard_sim_particles(sim);
    long steps = shard_sim_total_steps(sim);
    double gap = INFINITY;
    for (long n = 1; n <= steps; n++) {
        shard_sim_step(sim);
        double left = -INFINITY, right = INFINITY;
        for (size_t i = 0; i < p->n_owned; i++) {
            if (p->X[3 * i] < 0.04)
                left = fmax(left, p->x[3 * i]);
            else
                right = fmin(right, p->x[3 * i]);
        }
        gap = fmin(gap, right - left);
    }
    const shard_fragment_stats *st = shard_sim_fragment_stats(sim, NULL, NULL);
    printf("crack faces, spacing %g: the halves pushed together by %g m in all; smallest gap between them "
           "%.4g spacings; %lld fragments\n",
           s, 2.0 * v * 0.012, gap / s, (long long)st->n_fragments);
    SHARD_ENSURE(gap > 0.5 * s);
    SHARD_ENSURE(st->n_fragments == 2);
    shard_sim_destroy(&sim);
}

/* A glass sphere (R = 50 mm, surface-fitted sampling, spacing R / divs) 0.3 spacings above a plane, falling onto
 * it at v m/s, no gravity; `run` and `material` are the run's first key and the rest of the material's mapping. */
static shard_sim *sphere_on_plane(shard_comm *comm, const char *file, const char *run, const char *material, int divs,
                                  double v)
{
    double s = 0.05 / divs;
    char text[2048];
    int len = snprintf(text, sizeof text,
                       "run:\n"
                       "  %s\n"
                       "  gravity: [0, 0, 0]\n"
                       "materials:\n"
                       "  glass: {density: 2440, E: 72e9, nu: 0.22, %s}\n"
                       "bodies:\n"
                       "  - name: sphere\n"
                       "    material: glass\n"
                       "    shape: {sphere: {center: [0, 0, %.17g], radius: 0.05}}\n"
                       "    spacing: %.17g\n"
                       "    sampling: surface\n"
                       "    velocity: [0, 0, %.17g]\n"
                       "obstacles:\n"
                       "  - plane: {point: [0, 0, 0], normal: [0, 0, 1]}\n",
                       run, material, 0.05 + 0.3 * s, s, -v);
    return validation_sim(comm, file, text, (size_t)len);
}

/* 4 */
static void shatter(shard_comm *comm, int divs)
{
    shard_sim *sim = sphere_on_plane(comm, "shatter.yaml", "steps: 200",
                                     "fracture: {tensile_strength: 50e6, weibull_modulus: 8, weibull_seed: 1}", divs,
                                     100.0);
    if (!sim)
        return;
    shard_diag d0 = shard_sim_diagnostics(sim);
    double e0 = d0.kinetic + d0.elastic, emax = e0;
    for (long n = 1; n <= shard_sim_total_steps(sim); n++) {
        shard_sim_step(sim);
        if (n % 4 == 0) {
            shard_diag d = shard_sim_diagnostics(sim);
            emax = fmax(emax, d.kinetic + d.elastic);
        }
    }
    shard_diag d = shard_sim_diagnostics(sim);
    printf("shatter, R/%d: %lld bonds broken; energy at most %.4f of its start (%.4g J), %.4f at the end\n", divs,
           (long long)d.broken_bonds, emax / e0, e0, (d.kinetic + d.elastic) / e0);
    SHARD_ENSURE(d.broken_bonds > 1000);
    SHARD_ENSURE(emax <= 1.01 * e0);
    shard_sim_destroy(&sim);
}

/* 5: the break-up of a glass sphere with a fracture energy (jobs/validation/fragmentation.sh's scene with
 * energy_release_rate 200 and stabilization 1; docs/validation.md) at R/15 and v m/s, 0.4 ms after contact. */
static void split(shard_comm *comm, double v)
{
    const int divs = 15;
    shard_sim *sim = sphere_on_plane(comm, "split.yaml", "end_time: 4e-4",
                                     "stabilization: 1, fracture: {energy_release_rate: 200}", divs, v);
    if (!sim)
        return;
    /* the bonds (pairs: one rank holds both directions of each) before any breaks */
    double pairs = 0.5 * (double)shard_sim_bonds(sim)->start[shard_sim_particles(sim)->n_owned];
    for (long n = 1; n <= shard_sim_total_steps(sim); n++)
        shard_sim_step(sim);
    const shard_fragment *fr = NULL;
    size_t nf = 0;
    const shard_fragment_stats *st = shard_sim_fragment_stats(sim, &fr, &nf);
    shard_diag d = shard_sim_diagnostics(sim);
    double singles = 0.0;
    for (size_t q = 0; q < nf; q++)
        if (fr[q].count == 1)
            singles += fr[q].mass;
    double broken = (double)d.broken_bonds / pairs;
    printf("split, R/%d at %.4g m/s: %.1f %% of the bonds broken, %lld fragments, the largest %.4f of the mass, "
           "single particles %.4f; tau %.3f +- %.3f from %lld fragments of >= 3 particles\n",
           divs, v, 100.0 * broken, (long long)st->n_fragments, st->largest_mass / st->total_mass,
           singles / st->total_mass, st->tau, st->tau_error, (long long)st->n_fit);
    SHARD_ENSURE(broken > 0.25 && broken < 0.65);
    SHARD_ENSURE(st->n_fit >= 8);
    SHARD_ENSURE(st->largest_mass < 0.8 * st->total_mass);
    SHARD_ENSURE(singles < 0.35 * st->total_mass);
    SHARD_ENSURE(st->tau > 1.1 && st->tau < 1.8);
    shard_sim_destroy(&sim);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    shard_comm *comm = shard_comm_init(&argc, &argv);
    const double spacing[2] = {0.005, 0.0025};
    for (int k = 0; k < 2; k++) {
        tension(comm, spacing[k]);
        burst(comm, 2.0 * spacing[k]);
        crack_faces(comm, spacing[k]);
        shatter(comm, 6 + 2 * k);
        split(comm, k ? 20.0 : 16.0);
    }
    shard_comm_finalize(&comm);
    return SHARD_TEST_RESULT();
}
