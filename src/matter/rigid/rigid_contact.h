/* The rigid bodies' contact solver (rigid_contact.c), private to the rigid module: the module's state on one
 * rank, which the module's glue (rigid_module.c) sets up, saves and reports, and the solver's steps that the
 * module's advance hook runs. */
#ifndef SHARD_MATTER_RIGID_CONTACT_H
#define SHARD_MATTER_RIGID_CONTACT_H

#include "rigid/rigid.h"
#include "shard/matter.h"

/* The module's state on one rank. */
typedef struct shard_rigid_world {
    int init; /* the lists below are set up */
    int n_rigid;
    int32_t *rigid;         /* the scene indices of the rigid bodies, increasing */
    int32_t *slot;          /* per scene body: its position in rigid[], or -1 */
    int *own;               /* per rigid body: scratch of the ownership reduction */
    shard_rigid_contact *c; /* this rank's contacts (those of its bodies), in key order */
    size_t nc, cc;
    int32_t *cstart, *clist; /* per rigid body: its contacts (indices into c) in key order, owned bodies only */
    size_t clist_cap;
    shard_rigid_memory *mem; /* every contact's impulses of the last step (replicated), in key order */
    size_t n_mem, mem_cap;
    int32_t *pair_at;            /* per local contact: the index of its pair's first contact (scratch) */
    int32_t *colour;             /* per local contact: its pair's colour */
    int n_colours;               /* colours of this step (the same on every rank) */
    int32_t *cc_start, *cc_list; /* per colour: its local contacts' first indices of pairs, in key order */
    size_t cc_cap;
    uint64_t *used;              /* per rigid body: the colours of its pairs so far (SHARD_RIGID_COLOUR_WORDS) */
    struct shard_rigid_vel *vel; /* scratch of shard_rigid_share (the owned bodies' records) */
    size_t vel_cap;
    double *sort_x; /* broad-phase scratch */
    int32_t *sort_i;
    /* Statistics: */
    long steps, iterations, iterations_max, iterations_pos;
    long last_it, last_it_pos; /* the last step's iterations (velocities, positions) */
    double residual;
    int64_t contacts, contacts_max;
    uint64_t bytes;
} shard_rigid_world;

/* Steps 3 to 5 of a step (rigid.h), once the owners are set: this rank's contacts of its bodies, their
 * colouring and set-up, the impulses and the position correction (collective); the contacts' force and torque on
 * every body over the step into Fc, tauc.  Returns the iterations of the impulses, those of the position
 * correction in *it_pos and the impulses' last relative change in *res. */
long shard_rigid_solve_contacts(const shard_matter_ctx *c, shard_rigid_world *W, const shard_collective *svc,
                                long *it_pos, double *res);

/* Every contact's impulses, gathered from the rank that owns its first body, for the next step's warm start
 * (collective). */
void shard_rigid_remember(const shard_matter_ctx *c, shard_rigid_world *W, const shard_collective *svc);

#endif
