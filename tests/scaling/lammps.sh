#!/usr/bin/env bash
# jobs/scaling/lammps_side_by_side.sh on tiny cases (an 8^3 block and LAMMPS's examples/peri cylinder with its
# indenter, a few steps, 1 and 2 ranks): one table with a row per case, rank count and code (Shard, peri/pmb,
# peri/lps), the same particles and bonds in both codes, and a Shard/LAMMPS ratio on every LAMMPS row.
# usage: lammps.sh SHARD WORKDIR
set -uo pipefail
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
test_init "$1" "$2"
need_cmd lmp "no LAMMPS: apt-get install lammps; scripts/setup.sh with SHARD_TEST_DEPS=1"
help=$(lmp -h 2>/dev/null)
grep -qw 'peri/lps' <<<"$help" || skip "this LAMMPS has no PERI package"

NX=8 NY=8 NZ=8 BLOCK_STEPS=5 CYL_STEPS=5 RANKS="1 2" OUT=$WORK/out \
  timeout 600 "$REPO/jobs/scaling/lammps_side_by_side.sh" >"$WORK/table.txt" 2>&1
rc=$?
cat "$WORK/table.txt"
expect_eq "exit status" "$rc" 0
csv=$WORK/out/results.csv
[ -f "$csv" ] || { fail "no $csv"; finish; }
expect_eq "header" "$(head -n 1 "$csv")" \
  "case,ranks,code,model,particles,bonds,steps,loop_time_s,particle_steps_per_s_per_core,ratio_shard_over_lammps,rss_bytes_per_particle,self_bytes_per_particle,marginal_bytes_per_particle"
expect_eq "rows: 2 cases x 2 rank counts x (Shard, pmb, lps)" "$(($(wc -l <"$csv") - 1))" 12
expect_eq "rows per case, ranks, code, model" \
  "$(awk -F, 'NR > 1 { printf "%s/%s/%s/%s ", $1, $2, $3, $4 }' "$csv")" \
  "block/1/shard/mls block/1/lammps/lps block/1/lammps/pmb block/2/shard/mls block/2/lammps/lps block/2/lammps/pmb cylinder/1/shard/mls cylinder/1/lammps/lps cylinder/1/lammps/pmb cylinder/2/shard/mls cylinder/2/lammps/lps cylinder/2/lammps/pmb "
expect_eq "one particle count per case" "$(awk -F, 'NR > 1 { print $1, $5 }' "$csv" | sort -u | awk '{ printf "%s ", $1 }')" "block cylinder "
expect_eq "one bond total per case" "$(awk -F, 'NR > 1 { print $1, $6 }' "$csv" | sort -u | awk '{ printf "%s ", $1 }')" "block cylinder "
expect_eq "block particles" "$(awk -F, 'NR == 2 { print $5 }' "$csv")" 512
expect_eq "a ratio on every LAMMPS row" "$(awk -F, 'NR > 1 && $3 == "lammps" && !($10 > 0) { n++ } END { print n + 0 }' "$csv")" 0
grep -q '^warning: case ' "$WORK/table.txt" && fail "the table warns: $(grep '^warning: case ' "$WORK/table.txt")" || pass "no warning about the problems"
finish
