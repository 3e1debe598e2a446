#!/usr/bin/env bash
# make bench-node: the intra-node targets of the shared-memory engine, both MPIs, one table.
# For each MPI, mcoll-bench runs native vs mcoll on the same buffers (2 ranks by default) with
# --roofline (the node's copy bandwidth, measured first); then the two CSVs are merged and each
# mcoll time is compared with the FASTER of the two native MPIs, and with the DRAM floor.
# Extra arguments go to mcoll-bench (e.g. --heap, --batch 100).
set -euo pipefail
np=${NP:-2}; out=${OUT:-bench-node}
colls=${COLLS:-allreduce,reduce,reduce_scatter_block,bcast,allgather,barrier}
args=(--coll "$colls" --min "${MIN:-8}" --max "${MAX:-64M}" --roofline --time-limit "${TL:-0.3}" "$@")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$out"
mpiexec.openmpi --oversubscribe --bind-to core -n "$np" build/bin/mcoll-bench "${args[@]}" \
  --csv "$out/openmpi.csv" > "$out/openmpi.txt"
mpiexec.mpich -bind-to core -n "$np" build-mpich/bin/mcoll-bench "${args[@]}" \
  --csv "$out/mpich.csv" > "$out/mpich.txt"
grep -h "roofline" "$out"/openmpi.txt "$out"/mpich.txt || true
# columns: collective,ranks,bytes,iters,mode,variant,alg,native_us,mcoll_us,...,valid,floor_us
awk -F, '
  FNR == 1 { f++; next }
  { k = $1 SUBSEP $3
    if (!(k in seen)) { seen[k] = 1; order[++n] = k }
    nat[f, k] = $8; mc[f, k] = $9; alg[f, k] = $7; fl[k] = $16 }
  END {
    printf "%-22s %10s %11s %11s %11s %11s %8s %7s  %s\n", "collective", "bytes", "ompi_nat",
           "mpich_nat", "ompi_mcoll", "mpich_mcoll", "vs_best", "floor_x", "alg (ompi/mpich)"
    for (i = 1; i <= n; i++) {
      k = order[i]; split(k, p, SUBSEP)
      best = nat[1, k]; if (nat[2, k] != "" && nat[2, k] < best) best = nat[2, k]
      m = mc[1, k]; if (mc[2, k] != "" && mc[2, k] > m) m = mc[2, k]
      fx = (fl[k] > 0) ? sprintf("%7.2f", m / fl[k]) : "      -"
      printf "%-22s %10s %11.2f %11.2f %11.2f %11.2f %7.2fx %s  %s/%s\n", p[1], p[2], nat[1, k],
             nat[2, k], mc[1, k], mc[2, k], best / m, fx, alg[1, k], alg[2, k]
    }
  }' "$out/openmpi.csv" "$out/mpich.csv" | tee "$out/summary.txt"
echo "(vs_best = faster native / slower mcoll of the two runs; floor_x = slower mcoll / DRAM floor)"
