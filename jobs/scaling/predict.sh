#!/usr/bin/env bash
# Strong scaling past this machine: partition blocks for 1 ... 1024 ranks with `shard partition` (no physics),
# then predict the parallel efficiency of a single block and of a fragmenting scene from a measured single-rank
# compute rate, the scene's measured contact work, imbalance, bytes, contact-ghost rebuilds and migrations, and a
# latency-bandwidth network model; plot the predictions next to the measured points of a series
# (jobs/scaling/series.sh).  Nothing is simulated here: the runs that calibrate the model are the series' and
# FRAG_REPORT's (docs/scaling.md: what is measured, what is assumed).
#
#   jobs/scaling/series.sh && SERIES_CSV=/tmp/shard-scaling/strong/series.csv jobs/scaling/predict.sh
#   RATE=1.036e8 TARGET_N="1e7 1e8" RANKS="1 256 1024" jobs/scaling/predict.sh
#   RATE=1.036e8 FRAG_REPORT=/tmp/shard-bench/balance/balanced.log jobs/scaling/predict.sh
#
# The model.  Per time step, for P ranks (L = ceil(log2 P), alpha latency, beta bandwidth per rank):
#   T_P = max over ranks r [ F_r + H_r ] + A L alpha + T_rebuild + T_balance + U_P / S
#   F_r  = (W_r / R) (1 + c) I                   force work: W_r ~ N/P bonds of rank r, c contact work, I imbalance
#   H_r  = X n_r alpha + f h_r / beta            halo: X exchanges to n_r neighbours, f x the bond-ghost bytes
#          - omega [ min(n_r alpha + 0.4 h_r / beta, phi_r W_r / 2R)
#                    + min(n_r alpha + 0.6 h_r / beta, phi_r W_r / 2R) ]
#                                                the bond-halo exchanges hidden behind the inner particles' passes:
#                                                x, v (48 of 120 bytes) behind pass 1, B (72) behind pass 2, each
#                                                pass half the solid's time; phi_r = 1 - ghosts_r / owned_r
#   T_rebuild = rho [ 2 L alpha + P b 56 / beta + n alpha + 1.5 f_c h / beta ]
#                                                rho rebuilds per step: two allgathers of every rank's b cluster
#                                                boxes (56 bytes each), counts to the neighbours, the contact-ghost
#                                                records (72 bytes, 1.5 x their 48-byte forward)
#   T_balance = 2 L alpha / E + m [ t_part + tau_m N/P + mu (N/P) 750 / beta ]
#                                                a check every E steps; m migrations per step, each a partition, a
#                                                rebuild of the rank's particles and the records of those that move
#   t_part = (N/P)(t0 + t1 L) + 30 L^2 alpha     Zoltan RCB in parallel
#   U_P = (N/P)(sigma + delta) + t_part + (N/P) 790 / beta     the distributed start-up, once, over S steps
#   T_1 = (W / R)(1 + c) + N (sigma + delta_1) / S          one rank: no imbalance, message or migration
#   efficiency E_P = T_1 / (P T_P)
#   W_r, n_r, h_r (bond-ghost bytes, 120 per ghost) come from `shard partition --csv`, scaled from PART_N to
#   TARGET_N: work by s = TARGET_N / PART_N, ghosts and bytes by s^(2/3).  R: bonds x steps / loop time of the
#   1-rank run of SERIES_CSV (or RATE).  The block: c = 0 (R holds its contact-free loop), I = 1 (the partition's
#   bond imbalance is in W_r), f and rho from the series.  The fragmenting scene: FRAG_* below.
#
# Every variable below can be overridden from the environment:
#   SERIES_CSV     strong-scaling series CSV; its 1-rank row gives R, its rows the measured points   (required
#                  unless RATE is given)
#   RATE           bond-steps per second of one rank, instead of SERIES_CSV's                        ""
#   TARGET_N       particles of the predicted problems (one or more): cube-shaped blocks          "1e7 1e8"
#   PART_N         particles of the block that is really partitioned (a cube).  When it is smaller   1e6
#                  than a TARGET_N, the figures are scaled to TARGET_N: work by s = TARGET_N / PART_N,
#                  ghosts and halo bytes by s^(2/3) (geometrically similar parts), neighbour ranks
#                  unchanged.  PART_N=TARGET_N partitions the target itself (10^7: ~45 s, 7 GB per P).
#   RANKS          rank counts to predict (list or pow2:MAX)                                         pow2:1024
#   LATENCY        seconds per message: HDR InfiniBand small-message MPI latency (~1 us) plus the   1.5e-6
#                  software cost of a nonblocking message in a neighbourhood collective
#   NIC_BANDWIDTH  bytes/s of one node's network link: HDR InfiniBand, 200 Gb/s = 25 GB/s           25e9
#   RANKS_PER_NODE ranks sharing that link (one per core of a typical 32-core socket / node)          32
#   BANDWIDTH      bytes/s per rank; default NIC_BANDWIDTH / RANKS_PER_NODE: every halo byte         (0.78e9)
#                  crosses the network and all ranks of a node send at once (pessimistic)
#   OVERLAP        omega: share of the bond halos' time hidden behind the inner particles' passes    0
#                  (0: no progress of the transfers while computing; 1: full asynchronous progress)
#   RUN_STEPS      S: steps of the run the start-up is amortised over                                1e4
#   EXCHANGES      halo exchanges per step of the block (X): x, v to bond ghosts; x, v to contact     3
#                  ghosts; B to bond ghosts
#   ALLREDUCES     allreduces per step of the block (A): the skin check                              1
#   BYTES_FACTOR   f of the block: bytes a step really sends / the bond-ghost bytes `shard partition`  auto
#                  counts.  auto: measured, from the end report of the series' run with the most ranks
#                  (bond halos + contact-ghost forwards per step / (120 x its bond ghosts)), or from its
#                  CSV (all bytes per step / the partition's halo bytes for that rank count); 1.01 without
#                  a series (measured: a 201 600-particle block on 2 ranks)
#   REBUILD_RATE   rho of the block: contact-ghost rebuilds per step; auto: from that report, else 0   auto
#   FRAG           1: also predict the fragmenting scene (0: the block alone)                        1
#   FRAG_REPORT    end report (`shard run` log) of a fragmenting run on 2 or more ranks: gives the    ""
#                  FRAG_* figures below that are not set (jobs/bench/balance.sh writes balanced.log)
#   FRAG_CONTACT   c: (Contact + Neigh + Fracture) / Solid time; measured 0.95 (shattering sphere    0.95
#                  beside a block, 1 and 2 ranks)
#   FRAG_IMBALANCE I: largest / average cost of a step over the ranks; measured 1.19, the largest     1.19
#                  cost imbalance with balancing on the measured time (docs/performance.md)
#   FRAG_BYTES_FACTOR   f: 1.54 measured on the shattering sphere (bond halos and the fracture       3.07
#                  pass's rows) + 1.53, the contact ghosts of a pile of bodies in contact (f 2.53)
#   FRAG_CONTACT_BYTES  f_c: the contact ghosts' part of f                                            1.53
#   FRAG_REBUILD_RATE   rho: contact-ghost rebuilds per step; measured 51 in 1742 steps               0.029
#   FRAG_BOXES     b: cluster boxes per rank at a rebuild (a compact part: one per body piece)       8
#   FRAG_BALANCE_EVERY  E: steps between balance checks                                              20
#   FRAG_MIGRATION_RATE m: migrations per step; measured 14 in 1742 steps                              0.008
#   FRAG_MOVED     mu: share of the particles a migration moves; measured 5.8 %                      0.058
#   FRAG_EXCHANGES X of the fragmenting scene: the block's 3 and the fracture pass's exchange of      4
#                  its rule's row (the Rankine rule's stress)
#   FRAG_ALLREDUCES     A: the skin check and the fracture pass's "debris?" round                     2
#   MIGRATION_COST tau_m: s per particle held, per migration (10^6 particles on 2 ranks: 2.3 s)      4.6e-6
#   PARTITION_COST t0 t1: Zoltan RCB, s per particle held and per particle per cut level      "1.7e-7 1e-8"
#                  (10^6 particles in one process: 0.18 s into 2 parts, 0.27 s into 1024)
#   STARTUP_SAMPLE sigma: start-up, s per particle held to sample and bond (10^6 block, 1 rank: 3.7 s) 3.7e-6
#   STARTUP_BUILD  delta_1: start-up on one rank, s per particle to build the store (3.7 s)          3.7e-6
#   STARTUP_MIGRATE     delta: start-up on P > 1 ranks, s per particle held to partition, migrate    12.8e-6
#                  and build (10^6 block on 2 ranks: 6.4 s)
#   LOCAL          1: also partition the series' own scene and predict it (up to N/50 ranks)         1
#   TARGET_P TARGET_E  the target marked on the plot: efficiency TARGET_E % at TARGET_P ranks         256 80
#   SPACING SUPPORT    lattice spacing (m) and support radius (spacings) of the generated blocks    0.001 2.2
#   SHARD          shard executable (default: build/shard, then PATH)
#   OUT            output folder: partitions/, predicted-*.csv, summary.csv,   /tmp/shard-scaling/predict
#                  prediction.png (predicted-target.csv: the block of the first TARGET_N)
#   PYTHON         Python with matplotlib                                                            /usr/bin/python3
set -euo pipefail

JOB_MPI_ENV=unless-slurm
# shellcheck source=jobs/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
SERIES_CSV=${SERIES_CSV:-}
RATE=${RATE:-}
TARGET_N=${TARGET_N:-1e7 1e8}
PART_N=${PART_N:-1e6}
RANKS=${RANKS:-pow2:1024}
LATENCY=${LATENCY:-1.5e-6}
NIC_BANDWIDTH=${NIC_BANDWIDTH:-25e9}
RANKS_PER_NODE=${RANKS_PER_NODE:-32}
BANDWIDTH=${BANDWIDTH:-$(awk -v b="$NIC_BANDWIDTH" -v r="$RANKS_PER_NODE" 'BEGIN { printf "%.6g", b / r }')}
OVERLAP=${OVERLAP:-0}
RUN_STEPS=${RUN_STEPS:-1e4}
EXCHANGES=${EXCHANGES:-3}
ALLREDUCES=${ALLREDUCES:-1}
BYTES_FACTOR=${BYTES_FACTOR:-auto}
REBUILD_RATE=${REBUILD_RATE:-auto}
FRAG=${FRAG:-1}
FRAG_REPORT=${FRAG_REPORT:-}
FRAG_EXCHANGES=${FRAG_EXCHANGES:-4}
FRAG_ALLREDUCES=${FRAG_ALLREDUCES:-2}
MIGRATION_COST=${MIGRATION_COST:-4.6e-6}
PARTITION_COST=${PARTITION_COST:-1.7e-7 1e-8}
STARTUP_SAMPLE=${STARTUP_SAMPLE:-3.7e-6}
STARTUP_BUILD=${STARTUP_BUILD:-3.7e-6}
STARTUP_MIGRATE=${STARTUP_MIGRATE:-12.8e-6}
LOCAL=${LOCAL:-1}
TARGET_P=${TARGET_P:-256}
TARGET_E=${TARGET_E:-80}
job_block_defaults
OUT=${OUT:-/tmp/shard-scaling/predict}
# The block generator's material (irrelevant to partitioning).
RHO=1000 E=1.0e9 NU=0.25 VEL=0

# need_share VAR...: a number >= 0 (a fraction, a rate), not only > 0 like job_need_num.
need_share() {
    local v
    for v; do
        awk -v x="${!v}" 'BEGIN { exit !(x ~ /^[+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/) }' ||
            job_die "$v must be a number >= 0, got '${!v}'"
    done
}
# The fragmenting scene's figures: those set win, then FRAG_REPORT's, then the measured defaults.
frag_default() { # VAR VALUE
    if [ -z "${!1:-}" ] && [ -z "$FRAG_REPORT" ]; then printf -v "$1" '%s' "$2"; fi
    [ -z "${!1:-}" ] || need_share "$1"
}
frag_default FRAG_CONTACT 0.95
frag_default FRAG_IMBALANCE 1.19
frag_default FRAG_BYTES_FACTOR 3.07
frag_default FRAG_CONTACT_BYTES 1.53
frag_default FRAG_REBUILD_RATE 0.029
frag_default FRAG_BALANCE_EVERY 20
frag_default FRAG_MIGRATION_RATE 0.008
frag_default FRAG_MOVED 0.058
FRAG_BOXES=${FRAG_BOXES:-8}
[ -z "${FRAG_BALANCE_EVERY:-}" ] || job_need_int FRAG_BALANCE_EVERY

job_need_auto_num BYTES_FACTOR
[ "$REBUILD_RATE" = auto ] || need_share REBUILD_RATE
read -r -a targets <<<"$TARGET_N"
[ ${#targets[@]} -gt 0 ] || job_die "TARGET_N is empty"
for t in "${targets[@]}"; do TARGET_N=$t job_need_num TARGET_N; done
read -r PART_T0 PART_T1 <<<"$PARTITION_COST"
job_need_num PART_N LATENCY BANDWIDTH SPACING SUPPORT TARGET_P TARGET_E RUN_STEPS FRAG_BOXES MIGRATION_COST \
    PART_T0 PART_T1 STARTUP_SAMPLE STARTUP_BUILD STARTUP_MIGRATE
need_share OVERLAP
awk -v w="$OVERLAP" 'BEGIN { exit !(w <= 1) }' || job_die "OVERLAP must be between 0 and 1, got '$OVERLAP'"
job_need_int EXCHANGES ALLREDUCES FRAG_EXCHANGES FRAG_ALLREDUCES RANKS_PER_NODE
[ -n "$SERIES_CSV" ] || [ -n "$RATE" ] || job_die "give SERIES_CSV (a series.sh CSV with a 1-rank run) or RATE (bond-steps/s of one rank)"
[ -z "$SERIES_CSV" ] || [ -r "$SERIES_CSV" ] || job_die "SERIES_CSV=$SERIES_CSV is not readable"
[ -z "$FRAG_REPORT" ] || [ -r "$FRAG_REPORT" ] || job_die "FRAG_REPORT=$FRAG_REPORT is not readable"
[ -z "$RATE" ] || job_need_num RATE
smallest=$(printf '%s\n' "${targets[@]}" | sort -g | head -n 1)
if awk -v p="$PART_N" -v t="$smallest" 'BEGIN { exit !(p > t) }'; then PART_N=$smallest; fi
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

# ---- the measured problem first: it calibrates the block's BYTES_FACTOR and REBUILD_RATE ---------------------
measured=() local_ok=0
if [ -n "$SERIES_CSV" ]; then
    measured=(--measured "$SERIES_CSV")
    read -r lscene lparticles lmode lmaxp lbytes llog <<<"$("$PYTHON" -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
r = min(rows, key=lambda r: int(r["ranks"]))
m = max(rows, key=lambda r: int(r["ranks"]))
print(r.get("scene") or "-", r["particles"], r["mode"], m["ranks"], float(m["comm_bytes_total"]) / int(m["steps"]),
      m.get("log") or "-")' "$SERIES_CSV")"
    # The end report of the run with the most ranks: its bytes by kind and its rebuilds.
    if [ "$lmode" = strong ] && [ "$lmaxp" -gt 1 ] && [ -r "$llog" ]; then
        cal=$("$PYTHON" "$JOB_SCALING_PY" calibrate "$llog") || job_die "cannot read the report $llog"
        lf=$(sed -n 's/^bytes_factor=//p' <<<"$cal") lrho=$(sed -n 's/^rebuild_rate=//p' <<<"$cal")
        if [ "$BYTES_FACTOR" = auto ] && [ -n "$lf" ]; then
            BYTES_FACTOR=$(awk -v f="$lf" 'BEGIN { printf "%.3g", f }')
            echo "BYTES_FACTOR = $BYTES_FACTOR: bond halos and contact-ghost forwards per step / (120 bytes x bond ghosts) of the $lmaxp-rank run ($llog)"
        fi
        if [ "$REBUILD_RATE" = auto ] && [ -n "$lrho" ]; then
            REBUILD_RATE=$lrho
            echo "REBUILD_RATE = $REBUILD_RATE contact-ghost rebuilds per step (the $lmaxp-rank run)"
        fi
    fi
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
            # a report without the bytes by kind: all its bytes per step / the partition's bond-halo bytes
            halo=$(awk -F, 'NR > 1 { s += $6 } END { print s }' "$OUT/partitions/measured/part-$lmaxp.csv")
            BYTES_FACTOR=$(awk -v b="$lbytes" -v h="$halo" 'BEGIN { printf "%.3g", b / h }')
            echo "BYTES_FACTOR = $BYTES_FACTOR: the $lmaxp-rank run sent $lbytes bytes per step, the bond ghosts need $halo"
        fi
    fi
fi
if [ "$BYTES_FACTOR" = auto ]; then
    BYTES_FACTOR=1.01
    echo "BYTES_FACTOR = 1.01 (no multi-rank strong series to measure it from)"
fi
[ "$REBUILD_RATE" != auto ] || REBUILD_RATE=0

net_args=(--latency "$LATENCY" --bandwidth "$BANDWIDTH" --overlap "$OVERLAP" --run-steps "$RUN_STEPS"
    --migration-cost "$MIGRATION_COST" --partition-cost "$PART_T0" "$PART_T1" --startup-sample "$STARTUP_SAMPLE"
    --startup-build "$STARTUP_BUILD" --startup-migrate "$STARTUP_MIGRATE")
if [ -n "$RATE" ]; then net_args+=(--rate "$RATE"); else net_args+=(--series "$SERIES_CSV"); fi
block_args=("${net_args[@]}" --exchanges "$EXCHANGES" --allreduces "$ALLREDUCES" --bytes-factor "$BYTES_FACTOR"
    --rebuild-rate "$REBUILD_RATE")
frag_args=("${net_args[@]}" --exchanges "$FRAG_EXCHANGES" --allreduces "$FRAG_ALLREDUCES" --boxes "$FRAG_BOXES")
[ -z "$FRAG_REPORT" ] || frag_args+=(--report "$FRAG_REPORT")
for v in CONTACT:contact-fraction IMBALANCE:imbalance BYTES_FACTOR:bytes-factor CONTACT_BYTES:contact-bytes-factor \
    REBUILD_RATE:rebuild-rate BALANCE_EVERY:balance-every MIGRATION_RATE:migration-rate MOVED:moved-fraction; do
    var=FRAG_${v%%:*}
    [ -z "${!var:-}" ] || frag_args+=("--${v#*:}" "${!var}")
done

echo "Network model: latency ${LATENCY} s, bandwidth ${BANDWIDTH} B/s per rank (${NIC_BANDWIDTH} B/s per node / ${RANKS_PER_NODE} ranks), overlap ${OVERLAP}; block: ${EXCHANGES} exchanges + ${ALLREDUCES} allreduce(s) per step, halo bytes x ${BYTES_FACTOR}, ${REBUILD_RATE} rebuilds per step"
predicted=()
if [ "$local_ok" = 1 ]; then
    "$PYTHON" "$JOB_SCALING_PY" predict --partitions "$OUT/partitions/measured" \
        --label "measured problem, $lparticles particles" --out-csv "$OUT/predicted-measured.csv" "${block_args[@]}"
    predicted+=("$OUT/predicted-measured.csv")
fi

# ---- the targets: a cube of PART_N particles, scaled to each TARGET_N ----------------------------------------
side=$(awk -v n="$PART_N" 'BEGIN { s = int(n ^ (1 / 3) + 0.5); print s }')
scene=$OUT/partitions/block-$side.yaml
job_block_scene "$scene.new" "$side" "$side" "$side" 1 "$DT" "$OUT/shard-out" jobs/scaling
if [ -f "$scene" ] && cmp -s "$scene" "$scene.new"; then rm "$scene.new"; else mv "$scene.new" "$scene"; fi
echo "Partitioning a ${side}^3 block ($((side * side * side)) particles) for ${RANK_LIST[*]} ranks ..."
partition_series "block-$side" "$scene" 1000000000
kinds=(block)
[ "$FRAG" != 1 ] || kinds+=(fragmenting)
targets_out=() headlines=()
for t in "${targets[@]}"; do
    tag=$(awk -v n="$t" 'BEGIN { printf "%.3g", n }')
    for kind in "${kinds[@]}"; do
        if [ "$kind" = block ]; then
            label="$tag-particle block" args=("${block_args[@]}")
        else
            label="$tag-particle fragmenting scene" args=("${frag_args[@]}")
        fi
        csv=$OUT/predicted-$kind-$tag.csv
        "$PYTHON" "$JOB_SCALING_PY" predict --partitions "$OUT/partitions/block-$side" --target-particles "$t" \
            --label "$label" --out-csv "$csv" "${args[@]}"
        targets_out+=("$csv") headlines+=("$label")
    done
done
cp "${targets_out[0]}" "$OUT/predicted-target.csv"
predicted=("${targets_out[@]}" "${predicted[@]}")

"$PYTHON" "$JOB_SCALING_PY" plot-predict --predicted "${predicted[@]}" "${measured[@]}" --target "$TARGET_P" "$TARGET_E" \
    --title "$(printf 'Shard strong scaling: model and measurements\nlatency %s s, bandwidth %s B/s per rank, overlap %s' "$LATENCY" "$BANDWIDTH" "$OVERLAP")" \
    --out "$OUT/prediction.png"

# The summary: every prediction at every rank count, and the headline at TARGET_P.
"$PYTHON" - "$OUT/summary.csv" "$TARGET_P" "${targets_out[@]}" <<'PY'
import csv, sys
out, target_p, files = sys.argv[1], sys.argv[2], sys.argv[3:]
rows = []
for path in files:
    with open(path) as f:
        label = f.readline()[2:].split(":")[0]
        for r in csv.DictReader(f):
            rows.append((label, r))
with open(out, "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["problem", "ranks", "step_ms", "efficiency"])
    for label, r in rows:
        w.writerow([label, r["ranks"], f"{1e3 * float(r['tp_step_s']):.4g}", f"{float(r['efficiency']):.4f}"])
ranks = sorted({int(r["ranks"]) for _, r in rows})
labels = list(dict.fromkeys(label for label, _ in rows))
eff = {(label, int(r["ranks"])): 100 * float(r["efficiency"]) for label, r in rows}
width = max(len(l) for l in labels)
print("\nPredicted strong-scaling efficiency (%):")
print(f"  {'':<{width}} " + " ".join(f"{p:>6}" for p in ranks))
for label in labels:
    print(f"  {label:<{width}} " + " ".join(f"{eff[(label, p)]:>6.1f}" for p in ranks))
print(f"  CSV: {out}")
PY
for k in "${!targets_out[@]}"; do
    e=$("$PYTHON" -c '
import csv, sys
f = open(sys.argv[1]); f.readline()
for r in csv.DictReader(f):
    if r["ranks"] == sys.argv[2]: print(100 * float(r["efficiency"]))' "${targets_out[$k]}" "$TARGET_P")
    if [ -n "$e" ]; then
        verdict=$(awk -v e="$e" -v t="$TARGET_E" 'BEGIN { print (e >= t ? "meets" : "MISSES") }')
        printf 'Predicted efficiency of the %s at %s ranks: %.1f %% (%s the %s %% target)\n' "${headlines[$k]}" "$TARGET_P" "$e" "$verdict" "$TARGET_E"
    fi
done
