/* Private to src/driver/: the simulation record shared by the driver's files.
 *
 *   setup.c     start-up and restart: shard_sim_build's parts, the hooks' views and timer phases, destroy
 *   modules.c   what the modules and force terms derive from scene data alone (kinds, terms, time step)
 *   startup.c   sampling and the start-up distribution; what is derived after any distribution (masses, prepare)
 *   step.c      one time step as named stages, the force path (shared by start-up and the step), diagnostics
 *   fracture.c  breaking bonds after a step, the unbroken-bond lists, the fragment analysis
 *   balance.c   dynamic load balancing and migration, the traffic counters, decomposition.csv
 *   relax.c     the relax stage before the run
 *   run.c       the run loop: output, checkpoints and in-situ scripts on their intervals, progress
 *   report.c    the end-of-run report and the `shard check` summary
 *   services.c  the collective services handed to the modules' hooks
 *   partition_report.c  `shard partition`'s report
 * Calls between the files run one way (no loop), from the top down: report and partition_report; setup (which
 * calls run for the writers); run; balance and relax; services, startup and step; fracture; modules, which
 * calls no other driver file.  Each part of the record below that has its own header (sim_*.h) is written by
 * its file alone.
 * Nothing here calls MPI: exchanges and reductions go through decomposition/.
 */
#ifndef SHARD_SIM_IMPL_H
#define SHARD_SIM_IMPL_H

#include "shard/balance.h"
#include "shard/checkpoint.h"
#include "shard/forces.h"
#include "shard/fragment_comm.h"
#include "shard/ghosts.h"
#include "shard/halo.h"
#include "shard/insitu.h"
#include "shard/matter.h"
#include "shard/migrate.h"
#include "shard/neighbor.h"
#include "shard/output.h"
#include "shard/run.h"
#include "shard/timer.h"

#include "sim_balance.h"
#include "sim_fracture.h"
#include "sim_output.h"
#include "sim_relax.h"

/* The most force terms a run merges (modules' and common ones). */
#define SHARD_SIM_MAX_TERMS 32

/* One matter module at run time. */
typedef struct shard_sim_module {
    const shard_matter *def;
    shard_block block;      /* its per-particle arrays (owned slots, then its bond ghosts) */
    void *bodies;           /* per-body state: n_bodies entries of def->body_bytes (its own bodies set) */
    void *state;            /* the module's own state (def->state_bytes), or NULL */
    int phase;              /* timer phase of its collective hooks (def->phase), or -1 */
    int used;               /* the scene has a body of its kind (its whole-body hooks run only then) */
    int has_bonds;          /* some body of this kind has bond_radius > 0 (then `halo` exists) */
    shard_halo *halo;       /* its bond ghosts */
    int32_t *inner, *outer; /* its owned particles without / with a bond partner among the ghosts */
    size_t n_inner, n_outer;
} shard_sim_module;

/* One force term of the merged table (module terms and common terms, by order). */
typedef struct shard_sim_term {
    const shard_force_term *def;
    int module;               /* the module it belongs to, or -1 for a common term */
    void *own_bodies;         /* common terms: their per-body state (n_bodies entries of def->body_bytes) */
    shard_matter_ctx ctx;     /* what its hooks see */
    int phase;                /* timer phase index */
    shard_pairlist memory[2]; /* terms with a memory: memory[cur] is the latest, the other the next */
    int cur;
} shard_sim_term;

struct shard_sim {
    shard_comm *comm;
    shard_scene scene;
    shard_particles p;
    shard_csr bonds, cand;
    uint8_t *bond_broken; /* per bond entry of `bonds`: 1 = broken */
    shard_cells cells;
    shard_ghosts *ghosts;    /* contact ghosts */
    shard_phys phys;         /* what physics hooks see (points into this record) */
    shard_impulses impulses; /* phys.impulses */
    int n_modules;
    shard_sim_module *mod;
    int32_t *body_module; /* module of each body */
    int n_terms;
    shard_sim_term *term;
    double *contact_radius; /* per body: the largest contact radius any term gives it */
    double *reach_radius;   /* per body: the largest reach for contact candidates (candidate lists, the
                             * contact ghosts' cutoff): the contact radius, or more (smooth surfaces) */
    const shard_field_desc
        *ghost_rows[SHARD_GHOSTS_MAX_ROWS]; /* x, v, then the rows some term reads at every ghost
                                             * (matter.h, ghost_row): what a forward to the contact ghosts sends */
    int n_ghost_rows;     /* 2 + the terms' rows; the terms' rows are filled and forwarded to every ghost
                           * in each force evaluation */
    uint8_t *own_contact; /* per body: its module resolves its contacts (SHARD_MATTER_OWN_CONTACT) */
    int64_t *body_first;  /* per body: its first global id (n_bodies + 1 entries) */
    uint8_t *timed;       /* per body: 1 when a constraint has a time window (re-applied every step) */
    int any_timed;
    shard_collective svc; /* the collective services handed to modules' collective hooks */
    double *f;            /* force scratch, 3 per owned */
    size_t f_cap;
    double dt, skin, cutoff;
    double domain;        /* m: every coordinate stays within +-domain (2^40 of the smallest spacing) */
    const char *dt_limit; /* which limit set dt ("wave speed", "contact", "given") */
    long step, total_steps;
    int64_t n_global, n_bonds_global, edge_cut;
    int64_t startup_moved;     /* particles the start-up moved from their shares to their parts, all ranks */
    uint64_t startup_bytes;    /* bytes this rank sent doing so */
    double startup_seconds[2]; /* this rank's sampling (or reading) and partition + migration, s */
    double startup_rss;        /* this rank's peak resident memory at the end of the start-up, bytes */
    int64_t *body_count;       /* particles per body */
    int64_t contacts_local;
    long rebuilds;
    shard_timer timer;
    int ph_neigh, ph_comm, ph_integrate, ph_io, ph_insitu, ph_fracture, ph_balance, ph_other; /* its phases */
    double loop_wall;
    long restarted_at;                                 /* step of the checkpoint this run restarted from, or -1 */
    void *restart_blob[SHARD_CHECKPOINT_MAX_SECTIONS]; /* a restart: the modules' own state records, taken from
                                                        * the checkpoint before its particles are handed out */
    size_t restart_blob_bytes[SHARD_CHECKPOINT_MAX_SECTIONS];
    double *restart_mass; /* a restart: each body's total mass as the checkpoint records it, until checked */
    uint64_t run_id;      /* the run's identity in its checkpoints: new at a start, the checkpoint's at a restart */
    shard_sim_term *mem_term[SHARD_CHECKPOINT_MAX_LISTS]; /* the terms with a memory, in checkpoint-list order */
    int n_mem;                /* (shard_sim_memory_descs: what a restart reads back in the same order) */
    uint64_t halo_bytes_past; /* bytes sent through bond plans that migrations replaced */
    /* The parts, each written by its own file alone (sim_*.h): */
    shard_sim_fracture_state frac; /* breaking bonds (fracture.c) */
    shard_sim_fragment_state frag; /* the fragment analysis (fracture.c) */
    shard_sim_balance_state bal;   /* load balancing (balance.c) */
    shard_sim_relax_state relax;   /* the relax stage (relax.c) */
    shard_sim_output_state io;     /* output, checkpoints, in-situ scripts (run.c) */
};

/* startup.c */
/* This process's peak resident memory so far, bytes (getrusage).  Local. */
double shard_sim_peak_rss_bytes(void);
/* startup.c: in debug builds (the sanitizer build), checks the store's invariants (validate.h: the owned / ghost
 * split, id and body ranges, distinct owned ids, the bond and candidate lists well formed and sorted by partner
 * id) and aborts naming the first broken one; nothing in release builds.  Run after the start-up's force
 * evaluation and after every contact-ghost rebuild (so after every migration too). Local. */
void shard_sim_validate(const shard_sim *s);
/* Collective: samples this rank's share of the scene and its bonds (sample.h, partition.h), h[b] the bond radius
 * of body b; body_count[b] (n_bodies entries, the caller's), *n_global and *n_bonds_global get the run's
 * counts.  0, or the same error on every rank.  shard_sim_share_sample: the same for a simulation being built
 * (its modules' bond radii; sets n_global, n_bonds_global and body_count, allocated by the caller). */
int shard_share_sample(shard_comm *c, const shard_scene *sc, const double *h, shard_share *out, int64_t *body_count,
                       int64_t *n_global, int64_t *n_bonds_global, shard_error *err);
int shard_sim_share_sample(shard_sim *s, shard_share *out, shard_error *err);
/* Collective: the share becomes the rank's store through the start-up partition and a migration (partition.h);
 * blocks[m] (module m's, rows set) receive its rows, halos[m] and mem_mine[q] the plans and the memories'
 * rows.  release(ctx) frees the share (or the checkpoint range it borrows) as soon as the store holds its rows,
 * before the migration. */
int shard_sim_share_distribute(shard_sim *s, shard_share *in, void (*release)(void *ctx), void *ctx,
                               const shard_partition_kinds *kinds, shard_block *blocks, shard_halo **halos,
                               shard_pairlist *mem_mine, shard_error *err);

/* Masses and volumes of every local particle from its body (after a distribution or migration).  Local. */
void shard_sim_masses(shard_sim *s);
/* After the particles reached their ranks and the unbroken bonds are known (start-up, restart,
 * migration): every module's prepare hook, the sync rows, the split of the owned particles by whether a bond
 * partner is a ghost, the force scratch.  Collective (the sync exchange). */
void shard_sim_prepare_local(shard_sim *s);

/* restart.c */
/* Collective: every body's identity for a checkpoint (out: n_bodies entries): the scene's name, kind and
 * material, the particle count and first global id, the exact sum of the particles' masses. */
void shard_sim_body_identities(shard_sim *s, shard_checkpoint_body *out);
/* Collective, before a restart's particles are distributed: the checkpoint ck (this rank's range, at `path`)
 * against the scene: the time step, the bodies it records (names, kinds, materials) against the scene's, each
 * particle's body and section, and the bodies' counts in the data (summed into s->body_count) against the record.
 * 0, or the same error on every rank; the recorded masses are kept for shard_sim_restart_check_masses. */
int shard_sim_restart_check(shard_sim *s, const shard_checkpoint_data *ck, const char *path, shard_error *err);
/* Collective, once the masses are derived (shard_sim_masses): each body's total mass against the record.  0, or the
 * same error on every rank. */
int shard_sim_restart_check_masses(shard_sim *s, const char *path, shard_error *err);

/* balance.c */
/* After set-up: the repartitioner of the scene's `balance` section (none without one, or on one rank). */
void shard_sim_balance_setup(shard_sim *s);
/* Frees the balancer (shard_sim_destroy).  Local. */
void shard_sim_balance_free(shard_sim *s);
/* Before a step: every balance.every steps, the cost of each rank and, when the largest over the average
 * passes balance.threshold, a new partition and the migration to it.  Collective. */
void shard_sim_balance(shard_sim *s, int quiet);
/* Moves owned particle i to rank dest[i] and rebuilds what is derived, as after a restart: masses, the
 * unbroken bonds, the modules' precomputation, contact ghosts and candidates.  Collective. */
void shard_sim_migrate(shard_sim *s, const int32_t *dest, shard_migrate_stats *st);
/* balance.c: every byte this rank sent through exchanges (bond halos, contact ghosts and their rebuilds,
 * migrations), and those of the bond halos alone (the plans migrations replaced included).  Local. */
uint64_t shard_sim_bytes_sent(const shard_sim *s);
uint64_t shard_sim_bond_halo_bytes(const shard_sim *s);
/* balance.c: appends the row of this output step to decomposition.csv (per-rank owned particles, ghosts and
 * bytes per step: largest and average; the cost imbalance; migrations so far).  Collective. */
int shard_sim_decomposition_csv(shard_sim *s, shard_error *err);

/* The time of the current step, s (shard_sim_time). */
static inline double shard_sim_now(const shard_sim *s) { return (double)s->step * s->dt; }

/* The matter module of body b. */
static inline shard_sim_module *shard_sim_module_of(shard_sim *s, int b) { return &s->mod[s->body_module[b]]; }

/* modules.c: the tables t, with this build's in place of NULL ones (in *buf). */
const shard_sim_tables *shard_sim_default_tables(const shard_sim_tables *t, shard_sim_tables *buf);
/* services.c: s->svc, the collective services of the modules' collective hooks. */
void shard_sim_collective_init(shard_sim *s);
/* modules.c: what a module's hooks see. */
shard_matter_ctx shard_sim_module_ctx(shard_sim *s, int m);
/* modules.c: row `row` of module m's block as its halo sees it (owned slot i - first sent, ghost q into slot
 * n_owned + q). */
shard_halo_field shard_sim_block_field(shard_sim_module *md, int row);
/* whether module m has a body in the scene */
static inline int shard_sim_module_used(const shard_sim *s, int m) { return s->mod[m].used; }
/* module m's capabilities (matter.h) when it has a body in the scene, else NULL */
static inline const shard_matter_whole *shard_sim_whole(const shard_sim *s, int m)
{
    return s->mod[m].used ? s->mod[m].def->whole : NULL;
}
static inline const shard_matter_collision *shard_sim_collision(const shard_sim *s, int m)
{
    return s->mod[m].used ? s->mod[m].def->collision : NULL;
}
/* step.c: every module's settle hook (matter.h), after a force evaluation (kick: and the second half kick).
 * Collective. */
void shard_sim_settle(shard_sim *s, int kick);

/* modules.c: each body's module from its kind (refusing what the kind cannot hold: fracture or notches without
 * bonds, `motion`, the wrong shape, the relax stage for a kind that moves itself), the merged force table and the
 * per-body state of the modules and the common terms, from scene data alone.  0 or the same error on every
 * rank.  Local. */
int shard_sim_modules_build(shard_sim *s, const shard_sim_tables *t, shard_error *err);
/* modules.c: the time step and the number of steps (s->dt, s->dt_limit, s->total_steps), refused with a
 * message naming the key or option that caused it when they cannot make a run.  Local. */
int shard_sim_plan_steps(shard_sim *s, const shard_overrides *ov, shard_error *err);
/* modules.c: each body's contact radius and candidate reach, the skin, the contact-ghost cutoff and the
 * domain.  Local. */
void shard_sim_contact_range(shard_sim *s);

/* setup.c: reads every mesh shape of the scene's bodies (io, mesh_io.h), as every rank does after parsing the
 * scene: sampling and the modules see them loaded. 0 or SHARD_EXIT_INPUT. Local. */
int shard_sim_load_meshes(shard_scene *sc, shard_error *err);

/* modules.c: the smallest time-step limit (before run.dt_safety) from scene data alone, identical on every rank:
 * of the modules (for their bodies, when `modules` is set) and of the common force terms (for every body); the
 * first limit of the tables wins a tie, so *why (its dt_name) is deterministic, and *limit_body is the body
 * whose limit it is (-1: none). */
double shard_sim_step_limit(const shard_sim *s, int modules, const char **why, int *limit_body);

/* run.c: rank 0 prints, once per run, a warning naming the first inverted particle of diagnostics d. */
void shard_sim_warn_inverted(shard_sim *s, const shard_diag *d);

/* modules.c: the force terms with a memory in the tables t (module terms in module order, then common terms):
 * their checkpoint names, with shapes[q] (an empty list of the right width) as lists[q].list; returns how many.
 * shard_sim_memory_terms finds them in a run's merged table, in the same order. */
int shard_sim_memory_descs(const shard_sim_tables *t, shard_checkpoint_list *lists, shard_pairlist *shapes);
int shard_sim_memory_terms(shard_sim *s, const shard_checkpoint_list *lists, int n, shard_sim_term **out);

/* step.c */
/* The force path: forward x, v to every bond ghost, the skin check (and a contact-ghost rebuild when it says so
 * or when force_rebuild), every force term in order into f, then a = f/m + g.  Start-up and the step both
 * call it.  Collective. */
void shard_sim_forces(shard_sim *s, int force_rebuild);
/* Contact ghosts and candidate lists from the current positions.  Collective. */
void shard_sim_rebuild(shard_sim *s);
/* A restart's start-up, which evaluates no force: the rows terms read at ghosts (the surface normals of smooth
 * contact), the contact ghosts and candidate lists, and those rows of the contact ghosts.  Collective. */
void shard_sim_restart_ghosts(shard_sim *s);
/* Forwards x and v of the owned particles to every module's bond ghosts (not timed).  Collective. */
void shard_sim_forward_xv(shard_sim *s);

/* run.c: the columns of the fields in `want` (a mask of shard_output_field) for the owned particles. */
int shard_sim_columns(shard_sim *s, unsigned want, shard_column *cols, int max);

#endif
