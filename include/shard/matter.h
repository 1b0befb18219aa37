/* Matter: the kinds of matter a body can be, as modules listed in one table, and the force terms they bring.
 *
 * A body's `kind` in the scene names a matter module (shard_matter).  A module declares everything the driver
 * needs to run its particles, so that a new kind is one module file plus one row of the table (src/matter/matter.c)
 * and no driver code changes (docs/architecture.md, "How to add a kind of matter"):
 *   - its per-particle arrays: the rows of its block (particles.h); particles of other kinds do not carry
 *     them; rows flagged SHARD_FIELD_STATE are distributed, checkpointed (group /<kind>) and restored;
 *   - its per-body state (body_bytes, body_init) and the stable time step it allows (dt_limit);
 *   - the ghosts it needs: reference bonds within bond_radius, which give it a bond-ghost halo;
 *   - what it precomputes after the distribution and after a restart (prepare);
 *   - its force terms (shard_force_term rows: each names its timer phase and its place in the force sum);
 *   - the output fields it fills (outputs, output), its share of the elastic energy (energy) and its part of
 *     the `shard check` line of a body (describe).
 * Force terms of no particular kind (contact between bodies, obstacles) are rows of the common force table
 * (forces.h).  Every hook is MPI-free: it sees one rank's arrays; the driver does the exchanges in between.
 * Any hook may be NULL when the module has nothing to do there.
 *
 * Beyond that core, a kind has optional capabilities, each a table of its own (NULL: none): fracture (bonds that
 * break: shard_matter_fracture), a collision stage before the drift (shard_matter_collision), and motion as
 * wholes (shard_matter_whole).  Kinds whose bodies move as wholes (rigid bodies) declare:
 *   - that the module sets its particles' positions and velocities itself (SHARD_MATTER_SLAVED): the driver's
 *     particle integrator still runs over them, and the module's advance and settle hooks overwrite the result;
 *   - that it resolves the contacts among its bodies and with obstacles itself (SHARD_MATTER_OWN_CONTACT): the
 *     common contact terms skip those pairs, and their time-step limits do not apply to its bodies (its
 *     particles still touch the particles of other kinds through the common terms);
 *   - collective hooks (whole->advance, whole->settle) that get the driver's collective services
 *     (shard_collective: exact sums, gathers, maxima over the ranks), so that they can run their own iterations
 *     while staying MPI-free;
 *   - state of their own that is not per particle (body poses, contact memories): replicated on every rank,
 *     saved to and loaded from checkpoints as one record (state_size, state_save, state_load), released by
 *     finish;
 *   - per-body frames for output (frames) and their share of the diagnostics (body_diag).
 * Any kind may add text to the diagnostics line and the end report (diag_line, report).
 */
#ifndef SHARD_MATTER_H
#define SHARD_MATTER_H

#ifndef SHARD_LAYER_PHYSICS
#error "shard/matter.h is a physics header: only its layer and the layers above it (the driver) include it"
#endif

#include "shard/fields.h"
#include "shard/pairlist.h"
#include "shard/particles.h"
#include "shard/scene.h"
#include "shard/xsum.h"

/* An impulse that a collision stage (collide) gives a particle of a body that moves as a whole
 * (SHARD_MATTER_OWN_CONTACT), which the stage treats as of infinite mass: the reaction to what it did to its
 * own particles.  Each is listed once, by one rank; the body's module adds them to its bodies' momenta in its
 * advance hook of the same step (their exact sum, so the order of the list does not matter). */
typedef struct shard_impulse {
    int32_t body, pad;
    double x[3]; /* where it acts: the particle's position at the start of the step, m */
    double J[3]; /* N s */
} shard_impulse;

typedef struct shard_impulses {
    shard_impulse *at;
    size_t n, cap;
} shard_impulses;

/* What physics hooks see of one rank (no MPI).  The driver fills it; hooks read it and write only the
 * arrays they own (their block, f). */
typedef struct shard_phys {
    const shard_scene *scene;
    shard_particles *p;
    const shard_csr *bonds;     /* the unbroken reference bonds of the owned particles (local indices, rows by
                                 * partner id): what every physics kernel loops over */
    const shard_csr *ref_bonds; /* all reference bonds, broken ones included (the same as bonds while none is) */
    const uint8_t *broken;      /* per entry of ref_bonds: 1 = broken */
    const shard_csr *cand;      /* contact candidates of the owned particles (local indices, by partner id) */
    double t, dt;               /* time of the positions, time step */
    int elastic;                /* the relax stage: materials do not flow (the plastic strain is held as it is) */
    double dt_motion;           /* how far the positions advanced since the last force evaluation: dt in a step,
                                 * 0 at start-up (what contact memory integrates) */
    long step;                  /* steps done (the positions are those after it) */
    const double *f;            /* the force of each owned particle after the force evaluation (3 per particle) */
    const uint8_t *own_contact; /* per body: 1 when its module resolves its contacts (SHARD_MATTER_OWN_CONTACT) */
    const int64_t *body_first;  /* per body: its first global id; body_first[n_bodies]: the particle count */
    double reach_slack;         /* how far a particle may move in one step for the contact ghosts to hold every
                                 * particle within a module's contact_reach of an owned one (half the skin), m */
    shard_impulses *impulses;   /* this step's impulses on bodies that move as wholes (emptied before collide;
                                 * NULL when no kind in the scene has a collision stage) */
} shard_phys;

/* A hook's view: the shared state, its module's block and the per-body state array of the module (or of a
 * common force term), body_bytes per body, indexed by body. */
typedef struct shard_matter_ctx {
    const shard_phys *ph;
    shard_block *block; /* the module's block (NULL for common force terms) */
    void *bodies;
    void *state;                     /* the module's own state (state_bytes, zeroed at start; NULL for common terms) */
    const shard_pairlist *memory_in; /* terms with a memory: last evaluation's (rows = owned particles) */
    shard_pairlist *memory_out;      /* and this evaluation's, to be rewritten */
} shard_matter_ctx;

/* Places in the sum f = sum of terms, in increasing order (equal orders keep table order): every particle's
 * force is summed in this order, whatever the partition. */
enum {
    SHARD_FORCE_ORDER_SOLID = 100,
    SHARD_FORCE_ORDER_CLOTH = 200,
    SHARD_FORCE_ORDER_CONTACT = 300,
    SHARD_FORCE_ORDER_OBSTACLE = 400,
    SHARD_FORCE_ORDER_MASS_DAMPING = 450,
    SHARD_FORCE_ORDER_TRACTION = 460,
    SHARD_FORCE_ORDER_RIGID = 500,
};

/* A force term: one row of the force sum, like a LAMMPS pair style.
 * Two-pass terms (pass1 != NULL: the meshless solid) compute per-particle intermediates that bond partners on
 * other ranks need: pass1 fills them for a list of owned particles, the driver forwards block row
 * `exchange_row` to the module's bond ghosts, then add() gathers the forces.  The driver runs the passes for
 * the particles without a ghost partner while each exchange is in flight.  One-pass terms only have add().
 * add() must add into f (f += ...), never assign, and return the number of active contacts it saw (0 for
 * terms that are not contacts).  list == NULL means every owned particle (one-pass terms of every kind);
 * otherwise list[0..n) are owned particles of the term's kind and `ghosts` says whether their partners may be
 * ghosts. */
typedef struct shard_force_term {
    const char *name;  /* "solid", "contact", ... (docs and the timing table) */
    const char *phase; /* timer phase it is charged to ("Solid", "Contact") */
    int order;         /* SHARD_FORCE_ORDER_* */
    /* Common terms only (a module's terms see the module's per-body state): */
    size_t body_bytes;
    int (*body_init)(const shard_scene *sc, int body, void *state, shard_error *err);
    double (*dt_limit)(const shard_scene *sc, int body, const void *state); /* s, INFINITY: none */
    const char *dt_name;                                                    /* what limits dt ("contact") */
    double (*contact_radius)(const void *body_state);   /* contact terms: radius of a particle of the body */
    double (*candidate_radius)(const void *body_state); /* contact terms whose pairs reach farther: how far a
                                                         * particle reaches for contact candidates (NULL: its
                                                         * contact radius) */
    /* A row of the particle store (SHARD_PARTICLE_FIELDS, by its dataset name, e.g. "surface_normal"; doubles)
     * that the term computes for the owned particles and reads at every ghost (NULL: none): ghost_row_used says
     * whether a body needs it; where some body does, fill_ghost_row() fills it for the owned particles once the
     * bond ghosts hold the new positions, and the driver forwards it to every ghost (bond and contact ghosts)
     * before the one-pass terms run.  No exchange code names the row. */
    const char *ghost_row;
    int (*ghost_row_used)(const void *body_state);
    void (*fill_ghost_row)(const shard_matter_ctx *c);
    /* A memory of the term's contacts from one evaluation to the next: a pair list (pairlist.h) of this many
     * doubles per contact, under this name in checkpoints (0 / NULL: none).  The driver keeps two, hands the
     * term last evaluation's and this one's, distributes and checkpoints it with the particles. */
    int memory_width;
    const char *memory_name;
    /* The passes: */
    void (*pass1)(const shard_matter_ctx *c, const int32_t *list, size_t n);
    int exchange_row; /* block row forwarded between the passes (two-pass terms) */
    size_t (*add)(const shard_matter_ctx *c, double *f, const int32_t *list, size_t n, int ghosts);
    /* Elastic energy of the term at the current state into acc (NULL: none); a term with a memory finds the
     * latest one in c->memory_in. */
    void (*energy)(const shard_matter_ctx *c, shard_xsum *acc);
} shard_force_term;

/* The driver's collective services, for the collective hooks of a module (advance, settle).  Every rank must
 * make the same calls in the same order.  Bytes sent are counted for the end report. */
typedef struct shard_collective {
    void *impl;
    int rank, size;
    /* acc[0..n) becomes the exact sum over the ranks (xsum.h). */
    void (*xsum)(void *impl, shard_xsum *acc, int n);
    /* v[0..n) becomes the maximum over the ranks. */
    void (*max_doubles)(void *impl, double *v, int n);
    void (*max_ints)(void *impl, int *v, int n);
    /* Every rank's `bytes` bytes at `mine`, concatenated in rank order in a new array (caller frees) of *total
     * bytes. */
    void *(*allgather)(void *impl, const void *mine, size_t bytes, size_t *total);
    /* Forwards x and v of the owned particles to every ghost (the modules' bond ghosts and the contact
     * ghosts). */
    void (*refresh)(void *impl);
} shard_collective;

/* The frame of a body that moves as a whole, for output (rank 0 writes them: the state is replicated). */
typedef struct shard_frame {
    int32_t body;               /* index into the scene's bodies */
    double x[3];                /* centre of mass, m */
    double q[4];                /* orientation, unit quaternion (w, x, y, z), body frame to world */
    double v[3];                /* velocity of the centre of mass, m/s */
    double w[3];                /* angular velocity, rad/s */
    double force[3], torque[3]; /* the contact impulses of the last step / dt: force (N), torque about x (N m) */
} shard_frame;

/* Module flags. */
enum {
    SHARD_MATTER_SLAVED = 1u << 0,      /* the module sets its particles' x and v (advance, settle) */
    SHARD_MATTER_OWN_CONTACT = 1u << 1, /* it resolves contacts among its bodies and with obstacles */
    SHARD_MATTER_SURFACE = 1u << 2,     /* its bodies are surfaces (a `grid`, or a `mesh` with a thickness), and
                                         * only its bodies are (the driver checks both ways) */
    SHARD_MATTER_SMOOTH = 1u << 3,      /* its bonds give surface normals: smooth contact applies (contact.h) */
};

/* The fracture capability of a kind whose bonds can break (fracture.h).  The driver runs it after every step, once
 * the bond ghosts hold the step's positions:
 *   breakable   can body b's bonds break?  (scene data; such bodies also touch themselves through contact)
 *   break_row   a block row the rule reads at the bond ghosts too, or -1 (scene data, the same on every
 *               rank); the driver forwards it before break_bonds
 *   break_bonds marks in `broken` (per entry of ph->ref_bonds) the unbroken bonds of its owned particles
 *               that fail at the current state, lists in changed[] the owned particles that lost a bond
 *               (each once) and returns their number (the count of broken bonds is derived from the flags)
 *   losing      (may be NULL) the listed owned particles are about to lose bonds (ph->bonds still has
 *               them, and the block what was computed from them): keeps what rebond compares with
 *   rebond      after the listed owned particles lost bonds (ph->bonds already without them): recomputes
 *               what depends on their bonds; lists in debris[] those whose remaining bonds no longer make
 *               a 3D stencil but which still have some, and returns their number (the driver then breaks
 *               all their bonds, on both sides, and calls rebond again for everyone that lost one); sets
 *               *row_changed to 1 when it changed sync_row at one of them
 *   sync_row    a block row that prepare and rebond set at owned particles and the force terms read at the
 *               bond ghosts too, or -1 (scene data): the driver forwards it to the ghosts after prepare and
 *               after every fracture pass in which some rank's rebond changed it, then calls synced (may
 *               be NULL) */
typedef struct shard_matter_fracture {
    int (*breakable)(const shard_scene *sc, int body);
    int (*break_row)(const shard_scene *sc);
    size_t (*break_bonds)(const shard_matter_ctx *c, uint8_t *broken, int32_t *changed);
    void (*losing)(const shard_matter_ctx *c, const int32_t *list, size_t n);
    size_t (*rebond)(const shard_matter_ctx *c, const int32_t *list, size_t n, int32_t *debris, int *row_changed);
    int (*sync_row)(const shard_scene *sc);
    void (*synced)(const shard_matter_ctx *c);
} shard_matter_fracture;

/* The capability of a kind whose bodies move as wholes (rigid bodies; top of this file), with the module's phase
 * and own state (core fields below):
 *   advance     after the particles' first kick and drift of a step (c->ph->t: the time at the start of the
 *               step, dt_motion = dt): advance the module's bodies over the step and set its owned particles' x
 *               and v (collective)
 *   settle      after the force evaluation and the particles' second kick (kick = 1), or after the start-up's
 *               force evaluation (kick = 0): gather what the forces did to the bodies and set the owned
 *               particles' v (and a) (collective)
 *   state_size, state_save, state_load   the module's replicated state for checkpoints (bytes; writes; reads and
 *               checks, 0 or SHARD_EXIT_INPUT with what is wrong in err); state_load is called once the
 *               particles are in place, before prepare
 *   frames      fills out[] with the frames of its bodies and returns their number (out: n_bodies entries)
 *   body_diag   adds its bodies' kinetic energy and momentum (the driver calls it on one rank: the state is
 *               replicated); the driver leaves its particles out of the particle sums */
typedef struct shard_matter_whole {
    void (*advance)(const shard_matter_ctx *c, const shard_collective *svc);
    void (*settle)(const shard_matter_ctx *c, const shard_collective *svc, int kick);
    size_t (*state_size)(const shard_matter_ctx *c);
    void (*state_save)(const shard_matter_ctx *c, void *buf);
    int (*state_load)(const shard_matter_ctx *c, const void *buf, size_t bytes, shard_error *err);
    size_t (*frames)(const shard_matter_ctx *c, shard_frame *out);
    void (*body_diag)(const shard_matter_ctx *c, shard_xsum *kinetic, shard_xsum momentum[3]);
} shard_matter_whole;

/* The collision-stage capability (collective; any kind, not only SLAVED ones): after the particles' first kick,
 * before the drift (c->ph->t: the start of the step; x: the step's start; v: the mean velocity over the step,
 * which the drift applies), collide may change the owned particles' v so that the drift is free of collisions.
 * Returns 0, or SHARD_EXIT_RUNTIME with the same err on every rank to stop the run. */
typedef struct shard_matter_collision {
    int (*collide)(const shard_matter_ctx *c, const shard_collective *svc, shard_error *err);
} shard_matter_collision;

/* The scene keys a kind owns, as tables of the scene reader's key engine (src/matter/scene_keys.h), so that no
 * kind key is named outside its module:
 *   body, body_bytes        the keys of its bodies beyond the common ones (name, kind, material, shape, spacing,
 *                           ...), read into a struct of body_bytes (shard_body_def.kind_def; defaults when
 *                           absent); a key of another kind's table gets a message naming that kind
 *   body_shared             keys of the body record itself (shard_body_def) that only some kinds take, as a
 *                           table the scene reader provides (src/matter/scene_bodies.h: shard_scene_lattice_keys,
 *                           `sampling`, for kinds whose bodies are sampled from a lattice); NULL: none.  A body of
 *                           a kind without it gets the message naming the kinds that have it, and the record keeps
 *                           its zero
 *   material_keys           the material keys that only some kinds read, this kind among them ("plasticity",
 *                           "contact.surface"; NULL-terminated; NULL: none): a material that gives one of the keys
 *                           some kind lists, and whose bodies are all of kinds that do not, is refused (the key
 *                           would have no effect)
 *   section, scene_keys, section_bytes   a top-level section of its own (`rigid:`), read into a struct of
 *                           section_bytes that shard_matter_section() returns (defaults when absent) */
struct shard_scene_section;
typedef struct shard_matter_keys {
    const struct shard_scene_section *body;
    size_t body_bytes;
    const struct shard_scene_section *body_shared;
    const char *const *material_keys;
    const char *section;
    const struct shard_scene_section *scene_keys;
    size_t section_bytes;
} shard_matter_keys;

typedef struct shard_matter {
    const char *kind;              /* the scene's bodies[i].kind */
    const char *about;             /* one line for `shard check` and the docs */
    const shard_matter_keys *keys; /* its scene keys (NULL: none) */
    const shard_field_desc *rows;  /* its block's registry (SHARD_BLOCK_ROW) */
    int n_rows;
    size_t body_bytes; /* per-body state, zeroed, one per body of the scene (used for its own) */
    int (*body_init)(const shard_scene *sc, int body, void *state, shard_error *err);
    double (*dt_limit)(const shard_scene *sc, int body, const void *state); /* s, INFINITY: none */
    const char *dt_name;                                                    /* what limits dt ("wave speed") */
    /* Radius of the reference bonds of body b (m), or 0 for none: its particles then have no bond partner and
     * the module no halo. */
    double (*bond_radius)(const shard_scene *sc, int body);
    /* The radius of its particles in contact with other bodies and obstacles, m (NULL: half the spacing). */
    double (*contact_radius)(const shard_scene *sc, int body);
    /* The volume of particle k (its global id minus the body's first) of body b, m^3, from scene data and the
     * per-body state (NULL: one lattice cell, spacing^3); its mass is the material's density times it. */
    double (*particle_volume)(const shard_scene *sc, int body, int64_t k, const void *body_state);
    /* Kinds whose particles the scene alone fixes, without sampling (a surface's vertices: a grid's or a mesh's;
     * NULL: only sampling tells): body b's particle count, and the rest position of its particle k (0 <= k < the
     * count), bit for bit what the start-up gives it.  A restart checks a checkpoint's particles against them
     * before anything is built from them (the kind's elements name its particles by k). */
    int64_t (*particle_count)(const shard_scene *sc, int body, const void *body_state);
    void (*rest_position)(const shard_scene *sc, int body, int64_t k, const void *body_state, double X[3]);
    /* The distance within which the module needs, at the start of every step, every particle of its bodies
     * (of body b and of every other body of its kind, itself included) near an owned particle as a contact
     * ghost, m (NULL: the contact distance).  The driver widens the contact ghosts' cutoff to it plus the skin
     * twice (the ghosts' age, and one step's motion up to phys.reach_slack) and makes such bodies touch
     * themselves. */
    double (*contact_reach)(const shard_scene *sc, int body, const void *body_state);
    /* After the distribution (start-up and restart): derived per-particle data of the block. */
    void (*prepare)(const shard_matter_ctx *c);
    const shard_force_term *const *terms;
    int n_terms;
    /* Its output fields (`from`: its kind; particles of other kinds get zeros in them), listed after the core's
     * (fields.h) in every file and in-situ view, and output() that fills them: cols[k] (n_owned rows of its
     * field k's type, zeroed; NULL where not wanted: bit k of want clear) for its owned particles at their local
     * index.  The bond ghosts' x and v are current. */
    const shard_output_field_info *out_fields;
    int n_out_fields;
    void (*output)(const shard_matter_ctx *c, unsigned want, void *const *cols);
    /* Particles the model cannot represent at the current positions (the solid: turned inside out, det J <= 0):
     * their number among the owned ones, and in *first, when there are any, the local index of the one with the
     * smallest global id (NULL: the kind has no such state).  The bond ghosts' x are current. */
    size_t (*inverted)(const shard_matter_ctx *c, size_t *first);
    /* Surfaces (SHARD_MATTER_SURFACE): the triangles to draw, as local indices of their vertices (owned
     * particles and bond ghosts), 3 per triangle, each triangle listed by exactly one rank; returns their
     * number (tri NULL: only counts).  The driver writes them as the output table /surfaces (output.h) and hands
     * them to Catalyst (block "surfaces", insitu.h). */
    size_t (*cells)(const shard_matter_ctx *c, int32_t *tri);
    /* Appends the kind-specific part of body b's `shard check` line ("support 2.2 (h = 0.0275 m)"). */
    void (*describe)(const shard_scene *sc, int body, char *buf, size_t len);
    /* Flags (SHARD_MATTER_*); the timer phase its collective hooks are charged to ("Rigid", "Collide"); a state of
     * its own per rank (ctx->state, zeroed at start; state_free frees what it allocated there); finish frees what
     * it allocated in its per-body state (NULL-safe; may be NULL); report: text for the end report (may be
     * empty). */
    unsigned flags;
    const char *phase;
    size_t state_bytes;
    void (*state_free)(void *state);
    void (*finish)(const shard_scene *sc, void *bodies);
    void (*report)(const shard_matter_ctx *c, char *buf, size_t len);
    /* Text for the diagnostics line of a run with bodies of the kind (may be empty; rank 0's is printed, so it
     * must come from state that is the same on every rank). */
    void (*diag_line)(const shard_matter_ctx *c, char *buf, size_t len);
    /* Optional capabilities (NULL: the kind has none): */
    const shard_matter_fracture *fracture;   /* bonds that break */
    const shard_matter_whole *whole;         /* bodies that move as wholes */
    const shard_matter_collision *collision; /* a collision stage before the drift */
} shard_matter;

/* The matter table of this build (the solid first).  Static storage. */
const shard_matter *const *shard_matter_table(int *n);

/* The row of `kind` in a table, or -1. Local. */
int shard_matter_find(const shard_matter *const *table, int n, const char *kind);

/* The module of body b (the row of the scene's table that its kind names), and whether it has all of `flags`
 * (SHARD_MATTER_*).  A body's kind is tested by its module's row and flags, never by the kind's name.  Local. */
const shard_matter *shard_matter_of(const shard_scene *sc, int b);
int shard_matter_of_has(const shard_scene *sc, int b, unsigned flags);
/* The output fields of a scene: the core's (fields.h: indices 0 to SHARD_OUT_COUNT - 1), then each module's of
 * its table in table order, at most SHARD_OUTPUT_MAX in all: their number, field f, the index of the field named
 * `name` (or -1), the index of module row m's first field, and the mask of all of them.  Local. */
int shard_output_count(const shard_scene *sc);
const shard_output_field_info *shard_output_info(const shard_scene *sc, int f);
int shard_output_find(const shard_scene *sc, const char *name);
int shard_output_first(const shard_scene *sc, int m);
unsigned shard_output_all(const shard_scene *sc);

/* Module m's top-level section as read (keys->section_bytes; its defaults when the file has none), or NULL when
 * the module has none or is not in the scene's table.  Local. */
const void *shard_matter_section(const shard_scene *sc, const shard_matter *m);

#endif
