#!/usr/bin/env bash
# Start-up: how long a run takes to reach its first step, and the peak memory of each rank, for blocks of
# SIDE^3 particles at each rank count of RANKS.  Each run is `shard run --steps 1` of a generated block (no
# output); its wall time (launch, start-up, one step, report) and, per rank, the maximum resident set size
# measured by GNU time.  With a build that prints it, the report's Start-up line adds the time of each part
# (sampling or reading, partition and migration).  Run it for two builds (SHARD=...) to compare them.
#
#   jobs/bench/startup.sh
#   SIDES="100 159" RANKS="1 2 4 8" SHARD=build/shard jobs/bench/startup.sh
#
# Variables (environment):
#   SIDES          lattice points per axis of the blocks (100: 10^6 particles; 159: 4.02 x 10^6)   "100 159"
#   RANKS          rank counts                                                                     "1 2 4 8"
#   SPACING SUPPORT    lattice spacing (m) and support radius (spacings) of the blocks         0.001 2.2
#   SHARD          shard executable (default: build/shard, then PATH)
#   MPIEXEC MPIEXEC_FLAGS   MPI launcher and extra flags                                           mpiexec ""
#   OUT            folder for scenes, logs and results (results.csv)                  /tmp/shard-bench/startup
set -euo pipefail

# shellcheck source=jobs/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
SIDES=${SIDES:-"100 159"}
RANKS=${RANKS:-"1 2 4 8"}
OUT=${OUT:-/tmp/shard-bench/startup}
job_block_defaults
job_need_num SPACING SUPPORT
job_need_mpirun
job_find_shard
job_out_dir
job_load_warning

csv=$OUT/results.csv
echo "particles,ranks,wall_s,sample_s,partition_migrate_s,rank0_rss_mib,max_rss_mib,avg_rss_mib,moved" >"$csv"
fmt='%10s %5s %8s %9s %12s %11s %11s %11s %9s\n'
job_table_head "$fmt" particles ranks wall_s sample_s part+migr_s rank0_MiB max_MiB avg_MiB moved
for side in $SIDES; do
    job_need_int side
    scene=$OUT/block-$side.yaml
    job_block_scene "$scene" "$side" "$side" "$side" 1 auto "$OUT/out-$side" jobs/bench/startup.sh
    n=$((side * side * side))
    for np in $RANKS; do
        job_need_int np
        prefix=$OUT/run-$side-$np
        job_mpirun "$np" "$prefix" "$SHARD" run "$scene" --steps 1 --quiet
        wall=$(cat "$prefix.log.wall")
        # Per-rank max RSS (GNU time), MiB: rank 0's, the largest and the mean.
        read -r r0 mx avg <<<"$(for ((r = 0; r < np; r++)); do
            awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$prefix.rss.$r"
        done | awk 'NR == 1 { r0 = $1 } { s += $1; if ($1 > m) m = $1 }
                    END { printf "%.1f %.1f %.1f", r0 / 1024, m / 1024, s / NR / 1024 }')"
        # The Start-up line: "sampled on P rank(s) in S s, partitioned and distributed in T s (slowest rank): M
        # particle(s) moved, ..." (absent from builds that start on rank 0).
        line=$(grep -m1 '^Start-up:' "$prefix.log" || true)
        if [ -n "$line" ]; then
            read -r ts tp moved <<<"$(sed -n 's/.* in \([0-9.e+-]*\) s, partitioned and distributed in \([0-9.e+-]*\) s.*: \([0-9]*\) particle(s) moved.*/\1 \2 \3/p' <<<"$line")"
        else
            ts=- tp=- moved=-
        fi
        printf "$fmt" "$n" "$np" "$wall" "$ts" "$tp" "$r0" "$mx" "$avg" "$moved"
        echo "$n,$np,$wall,$ts,$tp,$r0,$mx,$avg,$moved" >>"$csv"
    done
done
echo "Results: $csv"
