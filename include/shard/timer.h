/* Timer (core): per-phase wall-clock accounting of the time loop (the driver stamps between phases).
 *
 * Like LAMMPS's Timer::stamp: each stamp credits the time since the previous stamp to one phase, so the phases
 * add up to the loop time.  Phases are named at set-up rather than fixed in an enum: the driver registers its
 * own (Neigh, Comm, Integrate, I/O, In-situ, Other) and every force term of the force table (forces.h) names
 * the phase it is charged to ("Solid", "Contact", ...), so a new kind of matter brings its phase without an edit
 * here.  The clock is passed in (shard_wtime) so that this module needs no MPI.
 */
#ifndef SHARD_TIMER_H
#define SHARD_TIMER_H

#define SHARD_PHASE_MAX 24

typedef struct shard_timer {
    double t[SHARD_PHASE_MAX];
    const char *name[SHARD_PHASE_MAX]; /* static strings */
    int n;
    double last;
} shard_timer;

/* The index of the phase called `name`, registered at the end of the table when new (names are compared as
 * strings, so two terms charged to "Contact" share one row).  Local. */
int shard_timer_phase(shard_timer *tm, const char *name);
/* Zeroes every phase's time, keeping the names. Local. */
void shard_timer_clear(shard_timer *tm);

static inline void shard_timer_start(shard_timer *tm, double now) { tm->last = now; }
static inline void shard_timer_stamp(shard_timer *tm, int phase, double now)
{
    tm->t[phase] += now - tm->last;
    tm->last = now;
}

#endif
