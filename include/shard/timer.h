/* Timer: per-phase wall-clock accounting of the time loop (the driver stamps between phases).
 *
 * Like LAMMPS's Timer::stamp: each stamp credits the time since the previous stamp to one phase, so the phases
 * add up to the loop time.  The clock is passed in (shard_wtime) so that this module needs no MPI.
 */
#ifndef SHARD_TIMER_H
#define SHARD_TIMER_H

typedef enum shard_phase {
    SHARD_PHASE_NEIGH = 0, /* contact candidate lists and contact-ghost rebuilds */
    SHARD_PHASE_SOLID,     /* meshless solid: gradients, stress, forces */
    SHARD_PHASE_CONTACT,   /* particle-particle and particle-obstacle contact */
    SHARD_PHASE_COMM,      /* halo exchanges and the per-step reductions (including waiting) */
    SHARD_PHASE_INTEGRATE, /* velocity Verlet kicks and drift */
    SHARD_PHASE_IO,        /* output and checkpoints */
    SHARD_PHASE_INSITU,    /* Catalyst scripts and the derived fields they are given */
    SHARD_PHASE_OTHER,     /* diagnostics, progress */
    SHARD_PHASE_COUNT
} shard_phase;

extern const char *const shard_phase_names[SHARD_PHASE_COUNT];

typedef struct shard_timer {
    double t[SHARD_PHASE_COUNT];
    double last;
} shard_timer;

static inline void shard_timer_start(shard_timer *tm, double now) { tm->last = now; }
static inline void shard_timer_stamp(shard_timer *tm, shard_phase ph, double now)
{
    tm->t[ph] += now - tm->last;
    tm->last = now;
}

#endif
