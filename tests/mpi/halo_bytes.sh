#!/usr/bin/env bash
# "halo bytes sent" in the end report counts every byte of the halo traffic: the bond and contact exchanges and
# every contact-ghost rebuild (its bounding boxes, counts and records), over the whole run, rebuilds included.
# An independent count from a PMPI interposer (mpi_count.c, loaded with LD_PRELOAD) of the bytes handed to
# MPI_Isend, the neighbourhood all-to-alls and MPI_Allgather must equal it exactly, for scenes with contact
# rebuilds at 2 and 3 ranks.
# usage: halo_bytes.sh SHARD LIBMPI_COUNT   (run in tests/mpi)
set -uo pipefail
shard=$1 lib=$2
fails=0
for scene in scenes/drop_contact.yaml scenes/collide_obstacles.yaml; do
  for n in 2 3; do
    out=$(timeout 300 mpiexec --oversubscribe -n "$n" -x LD_PRELOAD="$lib" "$shard" run "$scene" --steps 300 --quiet 2>&1)
    rc=$?
    reported=$(printf '%s\n' "$out" | sed -n 's/.*halo bytes sent: \([0-9.e+]*\) total.*/\1/p')
    rebuilds=$(printf '%s\n' "$out" | sed -n 's/.*contact rebuilds \([0-9]*\).*/\1/p')
    counted=$(printf '%s\n' "$out" | awk '/^mpi_count rank/ {s += $5 + $7 + $9} END {printf "%.0f", s}')
    lines=$(printf '%s\n' "$out" | grep -c '^mpi_count rank')
    if [ $rc -ne 0 ] || [ "$lines" -ne "$n" ] || [ -z "$reported" ]; then
      printf '%s\n' "$out" | tail -20; echo "FAIL: $scene at $n ranks: exit $rc, $lines count line(s)"; fails=$((fails + 1)); continue
    fi
    same=$([ "$reported" = "$counted" ] && echo 1 || echo 0)
    if [ "$same" = 1 ] && [ "$rebuilds" -gt 0 ]; then
      echo "PASS: $scene at $n ranks: reported $reported bytes, counted $counted ($rebuilds rebuilds)"
    else
      echo "FAIL: $scene at $n ranks: reported $reported bytes, counted $counted ($rebuilds rebuilds)"; fails=$((fails + 1))
    fi
  done
done
exit $((fails > 0))
