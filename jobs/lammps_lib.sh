# shellcheck shell=bash
# LAMMPS's side of the comparisons jobs/bench/lammps_vs_shard.sh and jobs/scaling/lammps_side_by_side.sh (sourced
# after jobs/lib.sh; not run on its own): the peridynamic input (PERI package, pair_style peri/pmb or peri/lps) on
# a simple-cubic lattice, its run, and the figures of LAMMPS's timing output.
#
#   lmp_need MODEL...               $LMP (default lmp) runs and has pair_style peri/MODEL; sets LMP_HELP
#   lmp_peri_input FILE STEPS [COMMAND...]   writes an input from the description in the LMP_* variables below
#   lmp_run P PREFIX INPUT [RUNNER] runs INPUT on P ranks (RUNNER, default job_mpirun) in $OUT: PREFIX.log, ...
#   lmp_atoms LOG, lmp_loop_time LOG N, lmp_neigh LOG, lmp_bonds LOG, lmp_self_bytes LOG P N
#                                   figures of a run's log

LMP=${LMP:-lmp}

# lmp_need MODEL...: stops unless $LMP runs and knows pair_style peri/MODEL for every MODEL; LMP_HELP is `$LMP -h`.
lmp_need() {
    command -v "$LMP" >/dev/null 2>&1 || job_die "LAMMPS executable '$LMP' not found (apt-get install lammps, or set LMP)"
    LMP_HELP=$("$LMP" -h 2>/dev/null || true)
    local m
    for m; do
        grep -qw "peri/$m" <<<"$LMP_HELP" || job_die "'$LMP' has no pair_style peri/$m (needs the PERI package)"
    done
}

# lmp_peri_input FILE STEPS [COMMAND...]: a LAMMPS input (SI units, free boundaries) of a peridynamic solid on a
# simple-cubic lattice whose points sit at (i + 1/2) a, exactly where Shard samples its shapes, run for STEPS steps
# with velocity Verlet (fix nve); each COMMAND is a line put in before the fix (computes, fixes, neighbour and
# thermo settings).  The description:
#   LMP_TITLE     the comment at the top (one line or several)
#   LMP_A         lattice spacing a (m)
#   LMP_REGION    the region holding the atoms, in lattice units unless it says "units box" ("block 0 NX 0 NY 0 NZ")
#   LMP_MODEL     pmb: pair_coeff c delta s00 alpha from LMP_C (micromodulus); lps: K G delta s00 alpha from
#                 LMP_K and LMP_G (bulk and shear modulus, Pa)
#   LMP_DELTA LMP_S00 LMP_ALPHA   horizon (m), critical stretch, alpha
#   LMP_RHO       density (kg/m^3); every atom's volume is a^3
#   LMP_VELOCITY  the initial velocity: the arguments of `velocity all` ("set V 0.0 0.0 sum no units box")
#   LMP_SKIN      neighbour skin, in spacings
#   LMP_DT        time step (s)
lmp_peri_input() {
    local file=$1 steps=$2 coeff line
    shift 2
    if [ "$LMP_MODEL" = pmb ]; then
        coeff="${LMP_C} ${LMP_DELTA} ${LMP_S00} ${LMP_ALPHA}"
    else
        coeff="${LMP_K} ${LMP_G} ${LMP_DELTA} ${LMP_S00} ${LMP_ALPHA}"
    fi
    {
        while IFS= read -r line; do echo "# $line"; done <<<"$LMP_TITLE"
        echo "units           si"
        echo "boundary        s s s"
        echo "atom_style      peri"
        echo "atom_modify     map array"
        echo "# origin 0.5: lattice points at (i + 1/2) a, where Shard samples its shapes"
        echo "lattice         sc ${LMP_A} origin 0.5 0.5 0.5"
        echo "region          target ${LMP_REGION}"
        echo "create_box      1 target"
        echo "create_atoms    1 region target"
        echo "pair_style      peri/${LMP_MODEL}"
        echo "pair_coeff      * * ${coeff}"
        echo "set             group all density ${LMP_RHO}"
        echo "set             group all volume $(awk -v a="$LMP_A" 'BEGIN { printf "%.10g", a ^ 3 }')"
        echo "velocity        all ${LMP_VELOCITY}"
        echo "neighbor        $(awk -v s="$LMP_SKIN" -v a="$LMP_A" 'BEGIN { printf "%.10g", s * a }') bin"
        for line; do echo "$line"; done
        echo "fix             1 all nve"
        echo "timestep        ${LMP_DT}"
        echo "thermo          ${steps}"
        echo "run             ${steps}"
    } >"$file"
}

# lmp_run P PREFIX INPUT [RUNNER]: `$LMP -in INPUT` on P ranks through RUNNER (default job_mpirun: PREFIX.log,
# PREFIX.rss.<rank>; stops the script when LAMMPS fails), started in $OUT so that nothing lands elsewhere.
lmp_run() {
    (cd "$OUT" && "${4:-job_mpirun}" "$1" "$2" "$LMP" -in "$3" -log none -echo none)
}

# LAMMPS's report: "Loop time of T on P procs for S steps with N atoms"; peri's "total # of bonds = B" and
# "bonds/atom = X"; "Per MPI rank memory allocation (min/avg/max) = A | B | C Mbytes".
lmp_atoms() { job_field "$1" '^Loop time of' 12; }
# lmp_loop_time LOG N: T, after checking that the run had N atoms.
lmp_loop_time() {
    grep -q '^Loop time of' "$1" || job_die "no 'Loop time' line in $1"
    [ "$(lmp_atoms "$1")" = "$2" ] || job_die "LAMMPS made $(lmp_atoms "$1") atoms, expected $2 ($1)"
    job_field "$1" '^Loop time of' 4
}
lmp_neigh() { job_field "$1" 'bonds\/atom =' 3; }
lmp_bonds() { job_field "$1" 'total # of bonds =' 6; }
# lmp_self_bytes LOG P N: LAMMPS's own memory per particle: the average 'Per MPI rank memory allocation' x P / N.
lmp_self_bytes() {
    awk -v m="$(job_field "$1" '^Per MPI rank memory allocation' 10)" -v p="$2" -v n="$3" \
        'BEGIN { printf "%.0f", m * 1048576 * p / n }'
}
