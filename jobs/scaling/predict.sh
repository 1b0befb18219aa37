#!/usr/bin/env bash
# Strong scaling past this machine: partition blocks for 1 ... 1024 ranks with `shard partition` (no physics),
# then predict the parallel efficiency from a measured single-rank compute rate and a latency-bandwidth
# network model, and plot the prediction next to the measured points of a series (jobs/scaling/series.sh).
#
#   jobs/scaling/series.sh && SERIES_CSV=/tmp/shard-scaling/strong/series.csv jobs/scaling/predict.sh
#   RATE=7e7 TARGET_N=1e8 RANKS=pow2:4096 jobs/scaling/predict.sh
#
# The model (docs/scaling.md states its assumptions).  Per time step, for P ranks:
#   T_P = max over ranks r of ( W_r / R  +  X * n_r * LATENCY  +  BYTES_FACTOR * h_r / BANDWIDTH )
#         + A * ceil(log2 P) * LATENCY
#   W_r  work of rank r: the bonds of its owned particles (`shard partition --csv`, column bonds)
#   R    bonds per second of one rank: bonds x steps / loop time of the 1-rank run of SERIES_CSV (or RATE)
#   n_r  neighbour ranks of r;  h_r  bytes of its bond ghosts per step (x, v and B: 120 bytes per ghost)
#   X    halo exchanges per step (3: x and v to bond ghosts, x and v to contact ghosts, B to bond ghosts)
#   A    allreduces per step (1: the skin check)
#   efficiency E_P = T_1 / (P T_P), T_1 = W / R.
#
# Every variable below can be overridden from the environment:
#   SERIES_CSV     strong-scaling series CSV; its 1-rank row gives R, its rows the measured points   (required
#                  unless RATE is given)
#   RATE           bond-steps per second of one rank, instead of SERIES_CSV's                        ""
#   TARGET_N       particles of the predicted problem: a cube-shaped block                           1e7
#   PART_N         particles of the block that is really partitioned (a cube).  When it is smaller   1e6
#                  than TARGET_N, the figures are scaled to TARGET_N: work by s = TARGET_N / PART_N,
#                  ghosts and halo bytes by s^(2/3) (geometrically similar parts), neighbour ranks
#                  unchanged.  PART_N=TARGET_N partitions the target itself (10^7: ~45 s, 7 GB per P).
#   RANKS          rank counts to predict (list or pow2:MAX)                                         pow2:1024
#   LATENCY        seconds per message: HDR InfiniBand small-message MPI latency (~1 us) plus the   1.5e-6
#                  software cost of a nonblocking message in a neighbourhood collective
#   NIC_BANDWIDTH  bytes/s of one node's network link: HDR InfiniBand, 200 Gb/s = 25 GB/s           25e9
#   RANKS_PER_NODE ranks sharing that link (one per core of a typical 32-core socket / node)          32
#   BANDWIDTH      bytes/s per rank; default NIC_BANDWIDTH / RANKS_PER_NODE: every halo byte         (0.78e9)
#                  crosses the network and all ranks of a node send at once (pessimistic)
#   EXCHANGES      halo exchanges per step (X)                                                       3
#   ALLREDUCES     allreduces per step (A)                                                           1
#   BYTES_FACTOR   bytes a step really sends / the bond-ghost bytes `shard partition` counts: contact  auto
#                  ghosts add x and v of every particle near another rank's bounding box.  auto: measured,
#                  from the strong series' run with the most ranks (its 'halo bytes sent' per step / the
#                  partition's halo bytes for that rank count); 1.7 without a series (measured: 1.71 for a
#                  201 600-particle block on 2 ranks)
#   LOCAL          1: also partition the series' own scene and predict it (up to N/50 ranks)         1
#   TARGET_P TARGET_E  the target marked on the plot: efficiency TARGET_E % at TARGET_P ranks         256 80
#   SPACING SUPPORT    lattice spacing (m) and support radius (spacings) of the generated blocks    0.001 2.2
#   SHARD          shard executable (default: build/shard, then PATH)
#   OUT            output folder: partitions/, predicted-*.csv, prediction.png     /tmp/shard-scaling/predict
#   PYTHON         Python with matplotlib                                                            /usr/bin/python3
set -euo pipefail

JOB_MPI_ENV=unless-slurm
# shellcheck source=jobs/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
SERIES_CSV=${SERIES_CSV:-}
RATE=${RATE:-}
TARGET_N=${TARGET_N:-1e7}
PART_N=${PART_N:-1e6}
RANKS=${RANKS:-pow2:1024}
LATENCY=${LATENCY:-1.5e-6}
NIC_BANDWIDTH=${NIC_BANDWIDTH:-25e9}
RANKS_PER_NODE=${RANKS_PER_NODE:-32}
BANDWIDTH=${BANDWIDTH:-$(awk -v b="$NIC_BANDWIDTH" -v r="$RANKS_PER_NODE" 'BEGIN { printf "%.6g", b / r }')}
EXCHANGES=${EXCHANGES:-3}
ALLREDUCES=${ALLREDUCES:-1}
BYTES_FACTOR=${BYTES_FACTOR:-auto}
LOCAL=${LOCAL:-1}
TARGET_P=${TARGET_P:-256}
TARGET_E=${TARGET_E:-80}
job_block_defaults
OUT=${OUT:-/tmp/shard-scaling/predict}
# The block generator's material (irrelevant to partitioning).
RHO=1000 E=1.0e9 NU=0.25 VEL=0

job_need_auto_num BYTES_FACTOR
job_need_num TARGET_N PART_N LATENCY BANDWIDTH SPACING SUPPORT TARGET_P TARGET_E
job_need_int EXCHANGES ALLREDUCES RANKS_PER_NODE
[ -n "$SERIES_CSV" ] || [ -n "$RATE" ] || job_die "give SERIES_CSV (a series.sh CSV with a 1-rank run) or RATE (bond-steps/s of one rank)"
[ -z "$SERIES_CSV" ] || [ -r "$SERIES_CSV" ] || job_die "SERIES_CSV=$SERIES_CSV is not readable"
[ -z "$RATE" ] || job_need_num RATE
if awk -v p="$PART_N" -v t="$TARGET_N" 'BEGIN { exit !(p > t) }'; then PART_N=$TARGET_N; fi
job_need_matplotlib
mapfile -t RANK_LIST < <(job_ranks "$RANKS")
job_find_shard
job_out_dir partitions

# partition_series LABEL SCENE MAXP: part-P.csv for every rank count up to MAXP (kept when already there).
partition_series() {
    local label=$1 scene=$2 maxp=$3 dir=$OUT/partitions/$1 P t0 t1
    mkdir -p "$dir"
    for P in "${RANK_LIST[@]}"; do
        [ "$P" -le "$maxp" ] || continue
        if [ -s "$dir/part-$P.csv" ] && [ "$dir/part-$P.csv" -nt "$scene" ]; then continue; fi
        t0=$(date +%s.%N)
        "$SHARD" partition "$scene" --ranks "$P" --csv "$dir/part-$P.csv.tmp" >"$dir/part-$P.txt" 2>&1 || {
            cat "$dir/part-$P.txt" >&2
            job_die "shard partition $scene --ranks $P failed"
        }
        t1=$(date +%s.%N)
        mv "$dir/part-$P.csv.tmp" "$dir/part-$P.csv"
        printf '  %-8s P=%-5s %s  (%.1f s)\n' "$label" "$P" "$(grep -m1 '^Particles:' "$dir/part-$P.txt" | sed 's/^Particles: //')" \
            "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')"
    done
}

# ---- the measured problem first: it calibrates BYTES_FACTOR ---------------------------------------------------
measured=() local_ok=0
if [ -n "$SERIES_CSV" ]; then
    measured=(--measured "$SERIES_CSV")
    read -r lscene lparticles lmode lmaxp lbytes <<<"$("$PYTHON" -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
r = min(rows, key=lambda r: int(r["ranks"]))
m = max(rows, key=lambda r: int(r["ranks"]))
print(r.get("scene") or "-", r["particles"], r["mode"], m["ranks"], float(m["comm_bytes_total"]) / int(m["steps"]))' "$SERIES_CSV")"
    if [ "$LOCAL" != 1 ]; then
        :
    elif [ "$lmode" != strong ]; then
        echo "note: $SERIES_CSV is a $lmode series: no model curve for it (the model is for strong scaling)"
    elif [ "$lscene" = - ] || [ ! -r "$lscene" ]; then
        echo "note: the scene of $SERIES_CSV is not known or not readable ('$lscene'): no model curve for it"
    else
        echo "Partitioning the measured problem ($lparticles particles, $lscene) ..."
        partition_series measured "$lscene" $((lparticles / 50))
        if [ "$lmaxp" -gt 1 ] && [ ! -s "$OUT/partitions/measured/part-$lmaxp.csv" ]; then
            RANK_LIST_SAVE=("${RANK_LIST[@]}")
            RANK_LIST=("$lmaxp")
            partition_series measured "$lscene" "$lmaxp"
            RANK_LIST=("${RANK_LIST_SAVE[@]}")
        fi
        local_ok=1
        if [ "$BYTES_FACTOR" = auto ] && [ "$lmaxp" -gt 1 ]; then
            halo=$(awk -F, 'NR > 1 { s += $6 } END { print s }' "$OUT/partitions/measured/part-$lmaxp.csv")
            BYTES_FACTOR=$(awk -v b="$lbytes" -v h="$halo" 'BEGIN { printf "%.3g", b / h }')
            echo "BYTES_FACTOR = $BYTES_FACTOR: the $lmaxp-rank run sent $lbytes bytes per step, the bond ghosts need $halo"
        fi
    fi
fi
if [ "$BYTES_FACTOR" = auto ]; then
    BYTES_FACTOR=1.7
    echo "BYTES_FACTOR = 1.7 (no multi-rank strong series to measure it from)"
fi

model_args=(--latency "$LATENCY" --bandwidth "$BANDWIDTH" --exchanges "$EXCHANGES" --allreduces "$ALLREDUCES"
    --bytes-factor "$BYTES_FACTOR")
if [ -n "$RATE" ]; then model_args+=(--rate "$RATE"); else model_args+=(--series "$SERIES_CSV"); fi

echo "Network model: latency ${LATENCY} s, bandwidth ${BANDWIDTH} B/s per rank (${NIC_BANDWIDTH} B/s per node / ${RANKS_PER_NODE} ranks), ${EXCHANGES} exchanges + ${ALLREDUCES} allreduce(s) per step, halo bytes x ${BYTES_FACTOR}"
predicted=()
if [ "$local_ok" = 1 ]; then
    "$PYTHON" "$JOB_SCALING_PY" predict --partitions "$OUT/partitions/measured" \
        --label "measured problem, $lparticles particles" --out-csv "$OUT/predicted-measured.csv" "${model_args[@]}"
    predicted+=("$OUT/predicted-measured.csv")
fi

# ---- the target: a cube of PART_N particles, scaled to TARGET_N -----------------------------------------------
side=$(awk -v n="$PART_N" 'BEGIN { s = int(n ^ (1 / 3) + 0.5); print s }')
scene=$OUT/partitions/block-$side.yaml
job_block_scene "$scene.new" "$side" "$side" "$side" 1 "$DT" "$OUT/shard-out" jobs/scaling
if [ -f "$scene" ] && cmp -s "$scene" "$scene.new"; then rm "$scene.new"; else mv "$scene.new" "$scene"; fi
echo "Partitioning a ${side}^3 block ($((side * side * side)) particles) for ${RANK_LIST[*]} ranks ..."
partition_series "block-$side" "$scene" 1000000000
label=$(awk -v n="$TARGET_N" 'BEGIN { printf "%.3g-particle block", n }')
"$PYTHON" "$JOB_SCALING_PY" predict --partitions "$OUT/partitions/block-$side" --target-particles "$TARGET_N" \
    --label "$label" --out-csv "$OUT/predicted-target.csv" "${model_args[@]}"
predicted=("$OUT/predicted-target.csv" "${predicted[@]}")

"$PYTHON" "$JOB_SCALING_PY" plot-predict --predicted "${predicted[@]}" "${measured[@]}" --target "$TARGET_P" "$TARGET_E" \
    --title "$(printf 'Shard strong scaling: model and measurements\nlatency %s s, bandwidth %s B/s per rank, halo bytes x %s' "$LATENCY" "$BANDWIDTH" "$BYTES_FACTOR")" \
    --out "$OUT/prediction.png"
e=$("$PYTHON" -c '
import csv, sys
f = open(sys.argv[1]); f.readline()
for r in csv.DictReader(f):
    if r["ranks"] == sys.argv[2]: print(100 * float(r["efficiency"]))' "$OUT/predicted-target.csv" "$TARGET_P")
if [ -n "$e" ]; then
    verdict=$(awk -v e="$e" -v t="$TARGET_E" 'BEGIN { print (e >= t ? "meets" : "MISSES") }')
    printf 'Predicted efficiency of the %s at %s ranks: %.1f %% (%s the %s %% target)\n' "$label" "$TARGET_P" "$e" "$verdict" "$TARGET_E"
fi
