#!/usr/bin/env bash
# shellcheck disable=SC2059  # the table format is a variable on purpose
# The cost of in-situ visualisation: the same block run without Catalyst and with jobs/catalyst/extracts.py every
# EVERY steps; the overhead is the difference in Shard's loop time, against the target (< 5 % of the run).
#
#   jobs/bench/catalyst_overhead.sh
#   NX=60 NY=60 NZ=60 STEPS=200 jobs/bench/catalyst_overhead.sh     # a quick look
#
# Every variable below can be overridden from the environment:
#   NX NY NZ    lattice points along x, y, z (the issue's 10^6-particle block)                  100 100 100
#   SPACING     lattice spacing (m)                                                            0.001
#   STEPS       time steps (a multiple of EVERY, so that the last step is written too)         300
#   EVERY       steps between two Catalyst executions                                          100
#   SCRIPT      the Catalyst script                                         jobs/catalyst/extracts.py
#   RANKS       MPI ranks                                                                      2
#   REPEATS     runs of each kind; the fastest is kept                                         2
#   TARGET      largest acceptable overhead, % of the loop time without Catalyst               5
#   STRICT      1: exit with status 3 when the target is missed                                0
#   SHARD MPIEXEC MPIEXEC_FLAGS OUT   as in jobs/bench/speedup.sh (OUT default /tmp/shard-bench/catalyst)
#
# Reported: loop time without and with Catalyst; the in-situ phase of Shard's timing table (everything done for
# Catalyst inside the loop: derived fields, their halo exchange, the script; max over ranks) and its share of the
# loop time without Catalyst, which is the overhead checked against TARGET; the same per execution (the first
# one also imports the script) and the steady-state share it implies at one execution per EVERY steps; the
# difference of the two loop times (which also holds the machine's noise: on a shared machine it can be larger or
# smaller than the in-situ phase); and the bytes written per execution.  Needs shard built with Catalyst
# (shard --version says "Catalyst: on").
set -euo pipefail

# shellcheck source=jobs/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
NX=${NX:-100}
NY=${NY:-100}
NZ=${NZ:-100}
SPACING=${SPACING:-0.001}
STEPS=${STEPS:-300}
EVERY=${EVERY:-100}
RANKS=${RANKS:-2}
REPEATS=${REPEATS:-2}
TARGET=${TARGET:-5}
STRICT=${STRICT:-0}
OUT=${OUT:-/tmp/shard-bench/catalyst}
job_need_mpirun
SCRIPT=${SCRIPT:-$JOB_REPO/jobs/catalyst/extracts.py}

job_need_int NX NY NZ STEPS EVERY RANKS REPEATS
[ $((STEPS % EVERY)) = 0 ] || job_die "STEPS ($STEPS) must be a multiple of EVERY ($EVERY)"
[ -r "$SCRIPT" ] || job_die "SCRIPT=$SCRIPT is not readable"
job_find_shard /tmp/build-bench
"$SHARD" --version 2>/dev/null | grep -q '^Catalyst: on' ||
    job_die "$SHARD is built without Catalyst (shard --version); configure with -DSHARD_WITH_CATALYST=ON"
job_out_dir

N=$((NX * NY * NZ))
SCENE=$OUT/block.yaml
# A block spinning slowly and moving: every particle changes every step, so every extract differs (the generated
# block with Shard's defaults: support 2.2, dt auto; the material of jobs/bench/speedup.sh).
SUPPORT=2.2 RHO=1000 E=1.0e9 NU=0.25 VEL=0.01
job_block_scene "$SCENE" "$NX" "$NY" "$NZ" "$STEPS" auto "$OUT/shard-out" jobs/bench/catalyst_overhead.sh

echo "Shard ${SHARD}: block ${NX} x ${NY} x ${NZ} = ${N} particles, ${STEPS} steps on ${RANKS} rank(s), best of ${REPEATS}"
echo "Catalyst: ${SCRIPT} every ${EVERY} steps (steps 0, ${EVERY}, ..., ${STEPS}: $((STEPS / EVERY + 1)) executions)"
job_load_warning

declare -A BEST
for ((rep = 1; rep <= REPEATS; rep++)); do
    for kind in plain catalyst; do
        pre=$OUT/$kind-r$rep
        args=(run "$SCENE" --quiet)
        if [ $kind = catalyst ]; then
            rm -rf "$OUT/extracts"
            args+=(--catalyst "$SCRIPT" --catalyst-every "$EVERY")
        fi
        echo "  $kind run $rep/$REPEATS ..." >&2
        SHARD_CATALYST_OUT=$OUT/extracts job_mpirun "$RANKS" "$pre" "$SHARD" "${args[@]}"
        t=$(job_shard_loop_time "$pre.log")
        if job_faster "$t" "${BEST[$kind]:-}"; then
            BEST[$kind]="$t $pre"
            if [ $kind = catalyst ]; then
                written=$(find "$OUT/extracts" -name 'particles_*.vtpc' | wc -l)
                bytes=$(du -sb "$OUT/extracts" | cut -f1)
            fi
        fi
    done
done

read -r t0 pre0 <<<"${BEST[plain]}"
read -r t1 pre1 <<<"${BEST[catalyst]}"
cp "$pre0.log" "$OUT/plain-best.log"
cp "$pre1.log" "$OUT/catalyst-best.log"
calls=$((STEPS / EVERY + 1))
[ "$written" = "$calls" ] || job_die "$written extract(s) written, expected $calls ($OUT/extracts)"
insitu=$(awk -F'|' '$1 ~ /^In-situ/ {gsub(/ /, "", $4); print $4}' "$pre1.log")
[ -n "$insitu" ] || job_die "no In-situ row in $pre1.log (is the driver wiring in?)"
diff=$(awk -v a="$t1" -v b="$t0" 'BEGIN { printf "%.3f", a - b }')
diff_pct=$(awk -v a="$t1" -v b="$t0" 'BEGIN { printf "%.2f", 100 * (a - b) / b }')
pct=$(awk -v s="$insitu" -v b="$t0" 'BEGIN { printf "%.2f", 100 * s / b }')
per_call=$(awk -v s="$insitu" -v c="$calls" 'BEGIN { printf "%.3f", s / c }')
step=$(awk -v t="$t0" -v s="$STEPS" 'BEGIN { printf "%.4f", t / s }')
steady=$(awk -v s="$insitu" -v c="$calls" -v t="$t0" -v n="$STEPS" -v e="$EVERY" \
    'BEGIN { printf "%.2f", 100 * (s / c) / (e * t / n) }')

CSV=$OUT/results.csv
echo "particles,ranks,steps,every,executions,loop_plain_s,loop_catalyst_s,insitu_phase_s,overhead_pct,per_execution_s,steady_state_pct,loop_difference_s,loop_difference_pct,bytes_per_execution" >"$CSV"
echo "$N,$RANKS,$STEPS,$EVERY,$calls,$t0,$t1,$insitu,$pct,$per_call,$steady,$diff,$diff_pct,$((bytes / calls))" >>"$CSV"
fmt="%-44s %s\n"
echo
printf "$fmt" "particles, ranks, steps:" "$N, $RANKS, $STEPS (a step takes $step s without Catalyst)"
printf "$fmt" "loop time without Catalyst:" "$t0 s"
printf "$fmt" "loop time with $(basename "$SCRIPT") every $EVERY:" "$t1 s ($calls executions, $written extracts, $((bytes / calls)) bytes each)"
printf "$fmt" "in-situ phase (max over ranks):" "$insitu s, $per_call s per execution"
printf "$fmt" "overhead (in-situ phase / loop time):" "$pct % (target < $TARGET %)"
printf "$fmt" "steady state (one execution per $EVERY steps):" "$steady % (in-situ phase per execution / $EVERY steps)"
printf "$fmt" "loop time difference (with machine noise):" "$diff s = $diff_pct %"
echo "CSV: $CSV; logs: $OUT/plain-best.log, $OUT/catalyst-best.log"
if awk -v p="$pct" -v t="$TARGET" 'BEGIN { exit !(p < t) }'; then
    echo "Target met."
else
    echo "Target MISSED."
    [ "$STRICT" != 1 ] || exit 3
fi
