/* Must not compile: physics code including MPI (tests/layering/check.sh): the physics layer does not link it. */
#include <mpi.h>
