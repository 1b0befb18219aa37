#!/usr/bin/env bash
# shellcheck disable=SC2059  # the table format is a variable on purpose
# Shard alone on a block of ~200 000 particles: particle-steps/s/core on 1 and 2 ranks, the parallel speed-up
# and the memory per particle, against the targets (speed-up >= 1.8 on 2 ranks, <= 1500 bytes per particle at
# ~30 neighbours).
#
#   jobs/bench/speedup.sh
#   NX=80 NY=80 NZ=80 STEPS=50 RANKS="1 2 4" jobs/bench/speedup.sh
#
# Every variable below can be overridden from the environment:
#   NX NY NZ    lattice points along x, y, z (block [0, N*SPACING) on each axis)                60 60 56
#   SPACING     lattice spacing (m)                                                            0.001
#   SUPPORT     support radius in spacings (2.2: 32 partners in the interior)                  2.2
#   STEPS       time steps                                                                     100
#   RANKS       rank counts, space separated; the first is the speed-up's reference            "1 2"
#   REPEATS     runs per rank count; the fastest is kept                                       3
#   RHO E NU    material                                                                       1000 1e9 0.25
#   VEL         initial velocity along x (m/s), plus a spin of VEL / (NX a) about z            0.01
#   DT          time step (s), or "auto" (Shard's CFL rule)                                    auto
#   TARGET_SPEEDUP  TARGET_BYTES   the targets checked at the end                              1.8 1500
#   STRICT      1: exit with status 3 when a target is missed                                  0
#   SHARD       shard executable (default: build/shard, /tmp/build-bench/shard, then PATH)
#   MPIEXEC MPIEXEC_FLAGS   MPI launcher and extra flags                                       mpiexec ""
#   OUT         output folder: scene, logs, per-rank time reports, results.csv        /tmp/shard-bench/speedup
#
# The speed-up is (particle-steps/s on P ranks) / (particle-steps/s on the first rank count), i.e. the ratio of
# loop times for the same problem (strong scaling).  Bytes per particle: max RSS of every rank (GNU time) summed
# / particles, and Shard's own 'Peak memory' figure (getrusage, the same quantity seen from inside).
set -euo pipefail

# shellcheck source=jobs/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
NX=${NX:-60}
NY=${NY:-60}
NZ=${NZ:-56}
job_block_defaults
STEPS=${STEPS:-100}
RANKS=${RANKS:-"1 2"}
REPEATS=${REPEATS:-3}
TARGET_SPEEDUP=${TARGET_SPEEDUP:-1.8}
TARGET_BYTES=${TARGET_BYTES:-1500}
STRICT=${STRICT:-0}
OUT=${OUT:-/tmp/shard-bench/speedup}
job_need_mpirun

job_need_int NX NY NZ STEPS REPEATS
job_need_num SPACING SUPPORT RHO E VEL TARGET_SPEEDUP TARGET_BYTES
job_need_nu
job_need_auto_num DT
job_need_rank_list
job_find_shard /tmp/build-bench
job_out_dir

N=$((NX * NY * NZ))
SCENE=$OUT/block.yaml
job_block_scene "$SCENE" "$NX" "$NY" "$NZ" "$STEPS" "$DT" "$OUT/shard-out" jobs/bench/speedup.sh

echo "Shard ${SHARD}: block ${NX} x ${NY} x ${NZ} = ${N} particles, a = ${SPACING} m, support ${SUPPORT}, ${STEPS} steps, dt ${DT}"
echo "Ranks: ${RANKS}; best of ${REPEATS}; scene ${SCENE}"

job_load_warning

# Repetitions outermost, so that every rank count sees the same spells of background load.
declare -A RES BEST
for P in $RANKS; do [ "$P" -le "$N" ] || job_die "RANKS: $P ranks for $N particles"; done
for ((rep = 1; rep <= REPEATS; rep++)); do
    for P in $RANKS; do
        pre=$OUT/shard-np$P-r$rep
        echo "  shard np=$P run $rep/$REPEATS ..." >&2
        job_mpirun "$P" "$pre" "$SHARD" run "$SCENE" --quiet
        t=$(job_shard_loop_time "$pre.log" "$N")
        if job_faster "$t" "${RES[$P]:-}"; then
            BEST[$P]=$pre
            nb=$(job_shard_neigh "$pre.log")
            self=$(job_shard_self "$pre.log")
            rss=$(job_rss_bytes "$pre" "$P")
            wall=$(awk '{ printf "%.2f", $1 }' "$pre.log.wall")
            RES[$P]="$t $nb $rss $self $wall"
        fi
    done
done
for P in $RANKS; do cp "${BEST[$P]}.log" "$OUT/shard-np$P-best.log"; done

CSV=$OUT/results.csv
echo "ranks,particles,neighbours_per_particle,steps,loop_time_s,wall_time_s,particle_steps_per_s,particle_steps_per_s_per_core,speedup,parallel_efficiency,rss_bytes_per_particle,self_reported_bytes_per_particle" >"$CSV"
fmt="%5s | %9s | %10s | %10s | %10s | %13s | %17s | %8s | %10s | %10s | %11s\n"
echo
echo "Shard, block ${NX}x${NY}x${NZ}, ${STEPS} steps, best of ${REPEATS}"
job_table_head "$fmt" ranks particles neigh/part "loop (s)" "wall (s)" "part-steps/s" "part-steps/s/core" speed-up efficiency "RSS B/part" "self B/part"
ref=
refP=
miss=0
declare -A LAST_SP LAST_B
for P in $RANKS; do
    read -r t nb rss self wall <<<"${RES[$P]}"
    ps=$(awk -v n="$N" -v s="$STEPS" -v t="$t" 'BEGIN { printf "%.4g", n * s / t }')
    psc=$(awk -v x="$ps" -v p="$P" 'BEGIN { printf "%.4g", x / p }')
    [ -n "$ref" ] || { ref=$ps; refP=$P; }
    sp=$(awk -v x="$ps" -v r="$ref" 'BEGIN { printf "%.3f", x / r }')
    eff=$(awk -v s="$sp" -v p="$P" -v q="$refP" 'BEGIN { printf "%.3f", s * q / p }')
    bpp=$(job_per_particle "$rss" "$N")
    printf "$fmt" "$P" "$N" "$nb" "$t" "$wall" "$ps" "$psc" "$sp" "$eff" "$bpp" "$self"
    echo "$P,$N,$nb,$STEPS,$t,$wall,$ps,$psc,$sp,$eff,$bpp,$self" >>"$CSV"
    LAST_SP[$P]=$sp
    LAST_B[$P]=${bpp/n\/a/$self}
done
echo "(loop: Shard's 'Loop time' (max over ranks); wall: the whole mpiexec including start-up and set-up)"
echo

echo "Targets:"
for P in $RANKS; do
    [ "$P" != "$refP" ] || continue
    # TARGET_SPEEDUP is for 2 ranks against 1; other rank counts get the same parallel efficiency.
    want=$(awk -v t="$TARGET_SPEEDUP" -v p="$P" -v q="$refP" 'BEGIN { printf "%.2f", t / 2 * p / q }')
    if awk -v s="${LAST_SP[$P]}" -v w="$want" 'BEGIN { exit !(s >= w) }'; then
        v=met
    else
        v="MISSED by $(awk -v s="${LAST_SP[$P]}" -v w="$want" 'BEGIN { printf "%.3f", w - s }')"
        miss=1
    fi
    echo "  speed-up on $P ranks (vs $refP): ${LAST_SP[$P]} (target >= $want): $v"
done
for P in $RANKS; do
    b=${LAST_B[$P]}
    if awk -v b="$b" -v t="$TARGET_BYTES" 'BEGIN { exit !(b <= t) }'; then v=met; else v="MISSED by $(awk -v b="$b" -v t="$TARGET_BYTES" 'BEGIN { printf "%.0f bytes (%.0f%%)", b - t, 100 * (b - t) / t }')"; miss=1; fi
    echo "  memory on $P rank(s): $b bytes per particle (target <= $TARGET_BYTES): $v"
done
echo
for P in $RANKS; do
    echo "Per-phase times, best run on $P rank(s) ($OUT/shard-np$P-best.log):"
    sed -n '/^Phase /,/^$/p' "$OUT/shard-np$P-best.log"
done
echo "CSV: $CSV; logs and per-rank time reports: $OUT"
if [ "$miss" = 1 ] && [ "$STRICT" = 1 ]; then
    exit 3
fi
