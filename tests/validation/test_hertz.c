/* Validation: Hertz impact of an elastic ball on a rigid plane, with the simple lattice and with surface-fitted
 * sampling.
 *
 * A ball of radius R = 0.1 m (E = 1 MPa, nu = 0.3, rho = 1000 kg/m^3, no gravity, contact damping and friction
 * 0) drops onto a plane obstacle at the speed v that squashes it by about one spacing:
 *   delta_max = (15 m v^2 / (16 E* sqrt(R)))^(2/5),  E* = E / (1 - nu^2)  (Hertz; Johnson 1985, §11.4),
 * with m the particles' mass.  Reference: the contact lasts t_c = 2 I delta_max / v, I = int_0^1 dx /
 * sqrt(1 - x^(5/2)) = 1.47167 (t_c = 2.94 delta_max / v; v / c0 = 0.03 here, so the impact is quasi-static as
 * Hertz assumes).  Measured: the time from the first step with a contact to the first step without one after
 * it.  With the lattice the ball's bottom is a flat facet about sqrt(R s) wide, so the contact is too stiff
 * and too short; `sampling: surface` moves the surface particles onto the true sphere (half a spacing inside
 * it), which must bring t_c within 10 %.  Two spacings, R / 10 and R / 7, each with v for delta_max = 1
 * spacing. */
#include "validation.h"

#include <string.h>

static const double R = 0.1, E = 1.0e6, NU = 0.3, RHO = 1000.0;

/* Contact time of the ball at spacing s and speed v; *mass its mass. */
static double contact_time(shard_comm *comm, double s, const char *sampling, double *mass)
{
    /* v from delta_max = s with the mass of the lattice ball, which sampling does not change */
    char text[2048];
    double v = 0.0, t_first = -1.0, t_end = -1.0;
    for (int pass = 0; pass < 2; pass++) {
        int len = snprintf(text, sizeof text,
                           "run: {end_time: %.17g, gravity: [0, 0, 0]}\n"
                           "materials:\n"
                           "  soft: {density: %.17g, E: %.17g, nu: %.17g, contact: {damping: 0, friction: 0}}\n"
                           "bodies:\n"
                           "  - {name: ball, material: soft, spacing: %.17g, velocity: [0, 0, %.17g],\n"
                           "     sampling: %s, shape: {sphere: {center: [0, 0, %.17g], radius: %.17g}}}\n"
                           "obstacles:\n"
                           "  - {plane: {point: [0, 0, 0], normal: [0, 0, 1]}, damping: 0, friction: 0}\n",
                           pass == 0 ? 1.0 : 4.0 * 3.0 * s / v, RHO, E, NU, s, -v, sampling,
                           R + 1e-3 * s, R);
        shard_sim *sim = validation_sim(comm, "hertz.yaml", text, (size_t)len);
        if (!sim)
            return 0.0;
        if (pass == 0) {
            *mass = validation_mass(sim);
            /* the sampled ball: its outermost particles (surface fitting: exactly half a spacing inside the
             * sphere) and its closest pair */
            const shard_particles *p = shard_sim_particles(sim);
            double rmax = 0.0, dmin = INFINITY;
            for (size_t i = 0; i < p->n_owned; i++) {
                const double *X = p->X + 3 * i;
                rmax = fmax(rmax, sqrt(X[0] * X[0] + X[1] * X[1] + (X[2] - R - 1e-3 * s) * (X[2] - R - 1e-3 * s)));
                for (size_t j = i + 1; j < p->n_owned; j++) {
                    const double *Y = p->X + 3 * j;
                    double dd = (X[0] - Y[0]) * (X[0] - Y[0]) + (X[1] - Y[1]) * (X[1] - Y[1]) +
                                (X[2] - Y[2]) * (X[2] - Y[2]);
                    dmin = fmin(dmin, dd);
                }
            }
            dmin = sqrt(dmin);
            printf("spacing R/%.0f, %s sampling: %zu particles, outermost at R - %.4f s, closest pair %.4f s\n", R / s,
                   sampling, p->n_owned, (R - rmax) / s, dmin / s);
            if (strcmp(sampling, "surface") == 0) {
                SHARD_ENSURE_NEAR((R - rmax) / s, 0.5, 1e-9);
                SHARD_ENSURE(dmin > 0.4 * s);
            }
            double Es = E / (1.0 - NU * NU);
            v = sqrt(pow(s, 2.5) * 16.0 * Es * sqrt(R) / (15.0 * *mass));
            shard_sim_destroy(&sim);
            continue;
        }
        long steps = shard_sim_total_steps(sim);
        for (long n = 1; n <= steps && t_end < 0.0; n++) {
            shard_sim_step(sim);
            shard_diag d = shard_sim_diagnostics(sim);
            if (d.contacts > 0 && t_first < 0.0)
                t_first = shard_sim_time(sim);
            else if (d.contacts == 0 && t_first >= 0.0)
                t_end = shard_sim_time(sim);
        }
        shard_sim_destroy(&sim);
    }
    SHARD_ENSURE(t_first >= 0.0 && t_end > t_first);
    double tc = 2.0 * 1.47167 * s / v;
    printf("spacing R/%.0f, %s sampling: v = %.5g m/s (delta_max = 1 spacing), contact time %.5g s, Hertz %.5g s: "
           "ratio %.4f\n",
           R / s, sampling, v, t_end - t_first, tc, (t_end - t_first) / tc);
    return (t_end - t_first) / tc;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    shard_comm *comm = shard_comm_init(&argc, &argv);
    const double spacings[2] = {R / 10, R / 7};
    for (int k = 0; k < 2; k++) {
        double m;
        double lattice = contact_time(comm, spacings[k], "lattice", &m);
        double surface = contact_time(comm, spacings[k], "surface", &m);
        SHARD_ENSURE(fabs(surface - 1.0) < 0.10);
        SHARD_ENSURE(fabs(surface - 1.0) < fabs(lattice - 1.0));
    }
    shard_comm_finalize(&comm);
    return SHARD_TEST_RESULT();
}
