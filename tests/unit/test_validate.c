/* Unit: the invariant checks (validate.h) accept a well-formed store and list and name each broken invariant. */
#include "shard/validate.h"
#include "test.h"

#include <string.h>

int main(void)
{
    shard_particles p = {0};
    shard_particles_reserve(&p, 6);
    int64_t gid[6] = {4, 1, 7, 2, 9, 0};
    for (int i = 0; i < 6; i++) {
        p.gid[i] = gid[i];
        p.body[i] = i % 2;
        for (int k = 0; k < 3; k++)
            p.x[3 * i + k] = 0.1 * i + k;
    }
    p.n_owned = 3, p.n_bond_ghost = 2, p.n_local = 6;
    char why[256] = "";
    SHARD_ENSURE(shard_validate_particles(&p, 10, 2, why, sizeof why) == 0);
    p.gid[4] = 1; /* a ghost with an owned id */
    SHARD_ENSURE(shard_validate_particles(&p, 10, 2, why, sizeof why) == 1 && strstr(why, "ghost 4"));
    p.gid[4] = 9, p.gid[2] = 4; /* owned twice */
    SHARD_ENSURE(shard_validate_particles(&p, 10, 2, why, sizeof why) == 1 && strstr(why, "owned twice"));
    p.gid[2] = 7, p.body[5] = 2;
    SHARD_ENSURE(shard_validate_particles(&p, 10, 2, why, sizeof why) == 1 && strstr(why, "body 2"));
    p.body[5] = 1, p.n_local = 4;
    SHARD_ENSURE(shard_validate_particles(&p, 10, 2, why, sizeof why) == 1 && strstr(why, "split"));
    p.n_local = 6, p.gid[3] = 10;
    SHARD_ENSURE(shard_validate_particles(&p, 10, 2, why, sizeof why) == 1 && strstr(why, "out of"));
    p.gid[3] = 2;

    /* rows: 0 -> {3 (gid 2), 2 (gid 7)}, 1 -> {}, 2 -> {1 (gid 1)... } */
    shard_csr c = {0};
    shard_csr_reserve(&c, 3, 4);
    c.n = 3;
    int64_t start[4] = {0, 2, 2, 3};
    int32_t idx[3] = {3, 2, 1};
    memcpy(c.start, start, sizeof start);
    memcpy(c.idx, idx, sizeof idx);
    SHARD_ENSURE(shard_validate_csr(&c, 3, 6, p.gid, 0, why, sizeof why) == 0);
    c.idx[0] = 2, c.idx[1] = 3; /* gid 7 then 2: not sorted */
    SHARD_ENSURE(shard_validate_csr(&c, 3, 6, p.gid, 0, why, sizeof why) == 1 && strstr(why, "increasing"));
    c.idx[0] = 3, c.idx[1] = 0; /* row 0 lists itself */
    SHARD_ENSURE(shard_validate_csr(&c, 3, 6, NULL, 0, why, sizeof why) == 1 && strstr(why, "itself"));
    SHARD_ENSURE(shard_validate_csr(&c, 3, 6, NULL, 1, why, sizeof why) == 0);
    c.idx[2] = 6;
    SHARD_ENSURE(shard_validate_csr(&c, 3, 6, NULL, 1, why, sizeof why) == 1 && strstr(why, "out of"));
    c.idx[2] = 1, c.start[2] = 1;
    SHARD_ENSURE(shard_validate_csr(&c, 3, 6, NULL, 1, why, sizeof why) == 1 && strstr(why, "before it starts"));
    SHARD_ENSURE(shard_validate_csr(&c, 2, 6, NULL, 1, why, sizeof why) == 1 && strstr(why, "rows"));
    shard_csr_free(&c);
    shard_particles_free(&p);
    return SHARD_TEST_RESULT();
}
