/* Private to src/driver/: the fracture parts of the simulation record, both owned by fracture.c and written there
 * alone: breaking bonds (the unbroken-bond lists the physics sees, the scratch of the breaking pass, the
 * particles that lost bonds since the contact candidates were built) and the fragment analysis (labels,
 * fragments, statistics).  Other files read the flags and the labels; the functions below are the parts'
 * interface.
 */
#ifndef SHARD_SIM_FRACTURE_H
#define SHARD_SIM_FRACTURE_H

#include "shard/fragment_comm.h"
#include "shard/insitu.h"
#include "shard/output.h"
#include "shard/particles.h"
#include "shard/run.h"

typedef struct shard_sim_fracture_state {
    int on;                    /* some body can break (scene data): then the physics sees `active` */
    uint8_t *self_contact;     /* per body: its bonds can break, so it touches itself through contact */
    shard_csr active;          /* the unbroken entries of `bonds` (only when `on`) */
    int32_t *changed, *debris; /* scratch, n_owned + 1 each */
    double *flag;              /* scratch, one per owned and bond-ghost particle */
    size_t cap, flag_cap;
    int cand_stale; /* bonds broke here since the contact candidates were built */
    int32_t *lost;  /* the owned particles that lost bonds since then (unsorted, repeats) */
    size_t n_lost, lost_cap;
} shard_sim_fracture_state;

typedef struct shard_sim_fragment_state {
    int64_t *label; /* per owned particle: its fragment (valid at step `step`) */
    size_t label_cap;
    shard_fragment *list; /* the fragments this rank holds, by label */
    size_t n;
    shard_fragment_stats stats;
    long step;      /* step of the analysis above, -1: none yet */
    double seconds; /* time spent in it */
    long runs;      /* how many times it ran */
} shard_sim_fragment_state;

/* After the distribution (start-up and restart): which bodies can break, the unbroken bonds the physics sees
 * (phys.bonds) and the contact flags.  Local. */
void shard_sim_fracture_setup(shard_sim *s);
/* After a migration, the unbroken bonds from the migrated flags.  Local. */
void shard_sim_fracture_redistributed(shard_sim *s);
/* Frees the part (shard_sim_destroy).  Local. */
void shard_sim_fracture_free(shard_sim *s);
/* After a step, with the bond ghosts holding its positions: every module's breaking rule, then debris (all
 * bonds of a particle whose stencil is no longer 3D break, on both sides) until no particle changes.
 * Collective (one allreduce per round; nothing when no body can break). */
void shard_sim_fracture(shard_sim *s);
/* After a contact-ghost rebuild: the candidate lists hold every broken pair again.  Local. */
void shard_sim_fracture_rebuilt(shard_sim *s);
/* When bonds broke here since the candidate lists were built: the rows of the particles that lost bonds
 * reopened to their broken partners within reach [Neigh].  Local. */
void shard_sim_fracture_reopen(shard_sim *s);
/* Every module's sync row (matter.h) forwarded to its bond ghosts, then its synced hook.  Collective. */
void shard_sim_fracture_sync(shard_sim *s);
/* Broken bonds now (each counted once), summed over the ranks.  Collective. */
int64_t shard_sim_broken_bonds(shard_sim *s);
/* The fragment analysis at the current step (made once per step, kept in s->frag).  Collective; only when
 * s->frac.on. */
void shard_sim_fragments(shard_sim *s);
/* The centre and size of the fragment of every owned particle (NaN centre: none).  Collective. */
void shard_sim_fragment_centres(shard_sim *s, double *centre, double *count);
/* The fragment analysis as the output's tables (/fragments, /fragments/histogram) and its CSV lines
 * (fragments.csv, fragments_histogram.csv in the output folder).  _make is collective (it runs the analysis
 * when not done at this step) and returns the number of tables; _csv is collective. */
typedef struct shard_sim_fragment_tables {
    shard_column cols[11], hcols[5];
    shard_output_attr attrs[10];
    void *buf[11 + 5];
} shard_sim_fragment_tables;
int shard_sim_fragment_tables_make(shard_sim *s, shard_sim_fragment_tables *ft, shard_output_table *tables);
int shard_sim_fragment_csv(shard_sim *s, const shard_sim_fragment_tables *ft, shard_error *err);
void shard_sim_fragment_tables_free(shard_sim_fragment_tables *ft);
/* The fragment statistics of this step as the Catalyst scripts' field-data arrays (docs/insitu.md): 5
 * histogram arrays of n_bins values and 5 single figures, pointers into *v in g[0..SHARD_SIM_INSITU_FRAG_GLOBALS);
 * returns their count, 0 without fracture.  The same values on every rank.  Collective (the analysis, once per
 * step). */
#define SHARD_SIM_INSITU_FRAG_GLOBALS 10
typedef struct shard_sim_insitu_frag {
    double bin_min[SHARD_FRAGMENT_BINS], bin_max[SHARD_FRAGMENT_BINS], count[SHARD_FRAGMENT_BINS];
    double mass[SHARD_FRAGMENT_BINS], cumulative[SHARD_FRAGMENT_BINS];
    double n_fragments, largest_fraction, tau, tau_error, n_fit;
} shard_sim_insitu_frag;
int shard_sim_fragment_globals(shard_sim *s, shard_sim_insitu_frag *v, shard_insitu_global *g);

#endif
