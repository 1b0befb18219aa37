#!/usr/bin/env bash
# A strong- or weak-scaling series of Shard runs: one run per rank count (the fastest of REPEATS kept), every
# run's timing report collected into one CSV, and the plots drawn (speed-up and efficiency against the ideal
# line, stacked time per phase).
#
#   jobs/scaling/series.sh                                   # strong scaling, 1 and 2 ranks, 40^3 block
#   MODE=weak RANKS=pow2:8 NX=30 NY=30 NZ=30 jobs/scaling/series.sh
#   SCENE=jobs/scenes/demo.yaml STEPS=200 RANKS="1 2 4" jobs/scaling/series.sh
#   LAUNCHER="srun -N {NODES} -n {P}" TASKS_PER_NODE=64 RANKS=pow2:1024 jobs/scaling/series.sh   # in a SLURM job
#
# Every variable below can be overridden from the environment:
#   MODE        strong: one problem on every rank count; weak: the block grows with the rank count      strong
#   RANKS       rank counts, space or comma separated, or pow2:MAX (1 2 4 ... MAX)                      "1 2"
#   SCENE       (strong) a scene file to run as it is (STEPS still applies); empty: the generated block  ""
#   NX NY NZ    lattice points of the generated block: strong, the whole block; weak, one rank's share:  40 40 40
#               P ranks run px x py x pz copies of it (px py pz = P, as even as possible, see job_dims in jobs/lib.sh)
#   SPACING     lattice spacing (m)                                                                      0.001
#   SUPPORT     support radius in spacings (2.2: 32 partners inside the block)                           2.2
#   RHO E NU    density (kg/m^3), Young's modulus (Pa), Poisson's ratio                                1000 1e9 0.25
#   VEL         initial velocity along x (m/s), plus a spin of VEL / (NX a) about z                      0.01
#   DT          time step (s) or auto                                                                    auto
#   STEPS       time steps of every run (empty with SCENE: the scene's own)                              100
#   REPEATS     runs per rank count; the fastest is kept                                                 1
#   LAUNCHER    how to start P ranks; {P} becomes the rank count, {NODES} the nodes needed at            mpiexec -n {P}
#               TASKS_PER_NODE ranks per node (e.g. "srun -N {NODES} -n {P} --cpu-bind=cores")
#   TASKS_PER_NODE  ranks per node, for {NODES}                                                          (unset: 1 node)
#   MPIEXEC_FLAGS   extra flags of the default launcher (e.g. --bind-to core)                            ""
#   SHARD       shard executable (default: build/shard, then PATH)
#   SHARD_FLAGS extra flags for `shard run` (--quiet is always given)                                    ""
#   OUT         output folder: OUT/runs/np<P>/rep<k>/ (scene, log, output), series.csv, *.png   /tmp/shard-scaling/<MODE>
#   RESUME      1: keep runs whose log already ends in a complete report (the SLURM series   0
#               templates set it, so that a chained job resumes the series)
#   WAIT_IDLE   seconds to wait, before each run, for the machine to be idle (under 0.25 cores busy with   0
#               other work; then the run starts anyway); the load seen is written beside the log
#   PLOT        1: draw OUT/speedup.png, efficiency.png, phases.png (needs python3-matplotlib)          1
#   PYTHON      Python with matplotlib                                                                  /usr/bin/python3
#
# CSV columns (OUT/series.csv, one row per rank count, in docs/scaling.md): mode, ranks, particles, bonds, steps,
# loop_time_s, wall_time_s, <phase>_{min,avg,max}_s for every phase of the report, comm_bytes_total,
# comm_bytes_per_step_per_rank, particle_steps_per_s, particle_steps_per_s_per_core, speedup,
# parallel_efficiency, imbalance, ghosts_avg, ghosts_max, bond_ghosts_avg, bond_ghosts_max, peak_mem_max_mib,
# bytes_per_particle, state_hash, scene, log.
set -euo pipefail

# Under SLURM (jobs/slurm/strong.sbatch, weak.sbatch) the allocation's own MPI settings stay as they are.
JOB_MPI_ENV=unless-slurm
# shellcheck source=jobs/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
MODE=${MODE:-strong}
RANKS=${RANKS:-"1 2"}
SCENE=${SCENE:-}
NX=${NX:-40}
NY=${NY:-40}
NZ=${NZ:-40}
job_block_defaults
STEPS=${STEPS-100}
REPEATS=${REPEATS:-1}
SHARD_FLAGS=${SHARD_FLAGS:-}
OUT=${OUT:-/tmp/shard-scaling/$MODE}
RESUME=${RESUME:-0}
WAIT_IDLE=${WAIT_IDLE:-0}
PLOT=${PLOT:-1}

# ---- checks -------------------------------------------------------------------------------------------------
case $MODE in strong | weak) ;; *) job_die "MODE must be strong or weak, got '$MODE'" ;; esac
mapfile -t RANK_LIST < <(job_ranks "$RANKS")
[ ${#RANK_LIST[@]} -gt 0 ] || job_die "RANKS gave no rank count"
job_need_seconds WAIT_IDLE
job_need_int NX NY NZ REPEATS
job_need_num SPACING SUPPORT RHO E
job_need_auto_num DT
if [ -n "$STEPS" ]; then job_is_int "$STEPS" || job_die "STEPS must be a positive integer, got '$STEPS'"; fi
if [ -n "$SCENE" ]; then
    [ "$MODE" = strong ] || job_die "SCENE is for strong scaling; weak scaling generates a block per rank count"
    [ -r "$SCENE" ] || job_die "SCENE=$SCENE is not a readable file"
    SCENE=$(cd "$(dirname "$SCENE")" && pwd)/$(basename "$SCENE")
else
    [ -n "$STEPS" ] || job_die "STEPS must be given for the generated block"
fi
[ "$PLOT" != 1 ] || job_need_matplotlib "or PLOT=0 for the CSV alone"
job_find_shard
job_out_dir runs

# ---- runs ---------------------------------------------------------------------------------------------------
steps_text=${STEPS:-"the scene's"}
echo "Shard ${MODE} scaling: ranks ${RANK_LIST[*]}, ${steps_text} steps, best of ${REPEATS}; $SHARD"
if [ -n "$SCENE" ]; then
    echo "Scene: $SCENE"
else
    per=""
    [ "$MODE" = strong ] || per=" per rank"
    echo "Block: ${NX} x ${NY} x ${NZ} lattice points${per}, a = ${SPACING} m, support ${SUPPORT}"
fi
echo "Launcher: $(job_launcher_text)"
echo "Output: $OUT"
LOGS=()
for ((rep = 1; rep <= REPEATS; rep++)); do
    for P in "${RANK_LIST[@]}"; do
        dir=$OUT/runs/np$P/rep$rep
        log=$dir/shard.log
        LOGS+=("$log")
        if [ "$RESUME" = 1 ] && [ -f "$log" ] && grep -q '^State hash: ' "$log"; then
            echo "  np=$P run $rep/$REPEATS: already complete ($log)"
            continue
        fi
        mkdir -p "$dir"
        args=()
        if [ -n "$SCENE" ]; then
            scene=$SCENE
            [ -z "$STEPS" ] || args+=(--steps "$STEPS")
        else
            scene=$dir/scene.yaml
            if [ "$MODE" = weak ]; then
                read -r px py pz <<<"$(job_dims "$P")"
                job_block_scene "$scene" $((NX * px)) $((NY * py)) $((NZ * pz)) "$STEPS" "$DT" "$dir/out" jobs/scaling
            else
                job_block_scene "$scene" "$NX" "$NY" "$NZ" "$STEPS" "$DT" "$dir/out" jobs/scaling
            fi
        fi
        load=""
        if [ "$WAIT_IDLE" -gt 0 ]; then
            load=$(job_wait_idle "$WAIT_IDLE")
            echo "$load" >"$log.load"
            load=" (other work: $load cores busy)"
        fi
        echo "  np=$P run $rep/$REPEATS ...$load"
        echo "$scene" >"$log.scene"
        # shellcheck disable=SC2086  # SHARD_FLAGS is a list of words
        job_launch "$P" "$log" "$SHARD" run "$scene" --out "$dir/out" --quiet $SHARD_FLAGS "${args[@]}" ||
            job_log_die "$log" "shard on $P rank(s) failed"
        grep '^Loop time of' "$log" | sed 's/^/    /'
    done
done

# ---- CSV and plots ------------------------------------------------------------------------------------------
echo
"$PYTHON" "$JOB_SCALING_PY" collect --mode "$MODE" --out "$OUT/series.csv" "${LOGS[@]}"
if [ "$PLOT" = 1 ]; then
    "$PYTHON" "$JOB_SCALING_PY" plot "$OUT/series.csv" --out-dir "$OUT"
fi
