#!/usr/bin/env bash
# make bench-node: the intra-node targets of the shared-memory engine, both MPIs, one table.
# For each MPI, mcoll-bench runs native vs mcoll on the same buffers (2 ranks by default) with
# --roofline (the node's copy bandwidth, measured first); then the two CSVs are merged and each
# mcoll time is compared with the FASTER of the two native MPIs, and with its run's DRAM floor.
# Extra arguments go to mcoll-bench (e.g. --heap, --batch 100, --order block for the large
# sizes: no mcoll call right after a native one). MALLOC_HEAP=1 preloads
# libmcoll-malloc.so: the bench's malloc buffers (and the native MPIs' own) from the shared heap.
# SHM_CACHE=32M sets mcoll's adaptive-copy capacity C (MCOLL_SHM_CACHE) instead of the size
# hwloc reports. ADOPT=k sets MCOLL_SHM_ADOPT=k (with --apart: the bench's malloc blocks are
# adopted at their k-th post).
set -euo pipefail
np=${NP:-2}; out=${OUT:-bench-node}; rounds=${ROUNDS:-3}
pre_ompi=(); pre_mpich=()
if [ "${MALLOC_HEAP:-0}" = 1 ]; then
  pre_ompi=(-x "LD_PRELOAD=$PWD/build/lib/libmcoll-malloc.so")
  pre_mpich=(-genv LD_PRELOAD "$PWD/build-mpich/lib/libmcoll-malloc.so")
fi
colls=${COLLS:-allreduce,reduce,reduce_scatter_block,bcast,allgather,barrier}
args=(--coll "$colls" --min "${MIN:-8}" --max "${MAX:-64M}" --roofline --time-limit "${TL:-0.3}" "$@")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$out"
if [ -n "${SHM_CACHE:-}" ]; then
  pre_ompi+=(-x "MCOLL_SHM_CACHE=$SHM_CACHE")
  pre_mpich+=(-genv MCOLL_SHM_CACHE "$SHM_CACHE")
fi
if [ -n "${ADOPT:-}" ]; then
  pre_ompi+=(-x "MCOLL_SHM_ADOPT=$ADOPT")
  pre_mpich+=(-genv MCOLL_SHM_ADOPT "$ADOPT")
fi
# The two MPIs run alternately, ROUNDS times: this shared VM drifts between states that differ
# by 2-3x for minutes at a time, so one run of each would compare two machine states. Every
# cell then takes the median over the rounds of each MPI's native and mcoll times.
for r in $(seq "$rounds"); do
  mpiexec.openmpi --oversubscribe --bind-to core "${pre_ompi[@]}" -n "$np" build/bin/mcoll-bench "${args[@]}" \
    --csv "$out/openmpi.$r.csv" > "$out/openmpi.$r.txt"
  mpiexec.mpich -bind-to core "${pre_mpich[@]}" -n "$np" build-mpich/bin/mcoll-bench "${args[@]}" \
    --csv "$out/mpich.$r.csv" > "$out/mpich.$r.txt"
done
grep -h "roofline" "$out"/openmpi.*.txt "$out"/mpich.*.txt || true
# columns: collective,ranks,bytes,iters,mode,variant,alg,native_us,mcoll_us,...,valid,floor_us
awk -F, '
  function med(f, k, x,   n, i, j, v, t) {
    n = 0
    for (i = 1; (f, k, x, i) in val; i++) v[++n] = val[f, k, x, i]
    for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
    return n == 0 ? "" : n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  FNR == 1 { f = (FILENAME ~ /mpich/) ? 2 : 1; next }
  { k = $1 SUBSEP $3
    if (!(k in seen)) { seen[k] = 1; order[++n] = k }
    for (i = 1; (f, k, "n", i) in val; i++) ;
    val[f, k, "n", i] = $8; val[f, k, "m", i] = $9; val[f, k, "x", i] = $9 > 0 ? $8 / $9 : 0
    if ($16 > 0) val[f, k, "f", i] = $9 / $16
    alg[f, k] = $7 }
  END {
    printf "%-22s %10s %11s %11s %11s %11s %8s %7s %7s %7s %7s  %s\n", "collective", "bytes", "ompi_nat",
           "mpich_nat", "ompi_mcoll", "mpich_mcoll", "vs_best", "ompi_x", "mpich_x", "min_x", "floor_x",
           "alg (ompi/mpich)"
    for (i = 1; i <= n; i++) {
      k = order[i]; split(k, p, SUBSEP)
      n1 = med(1, k, "n"); n2 = med(2, k, "n"); m1 = med(1, k, "m"); m2 = med(2, k, "m")
      best = n1; if (n2 != "" && n2 < best) best = n2
      m = m1; if (m2 != "" && m2 > m) m = m2
      f1 = med(1, k, "f"); f2 = med(2, k, "f"); fm = (f2 != "" && (f1 == "" || f2 > f1)) ? f2 : f1
      fx = (fm != "") ? sprintf("%7.2f", fm) : "      -"
      x1 = med(1, k, "x"); x2 = med(2, k, "x"); bx = (x2 == "" || x1 <= x2) ? x1 : x2
      printf "%-22s %10s %11.2f %11.2f %11.2f %11.2f %7.2fx %6.2fx %6.2fx %6.2fx %s  %s/%s\n", p[1], p[2], n1, n2,
             m1, m2, best / m, x1, x2, bx, fx, alg[1, k], alg[2, k]
    }
  }' "$out"/openmpi.*.csv "$out"/mpich.*.csv | tee "$out/summary.txt"
echo "(medians over $rounds alternating rounds per MPI; vs_best = faster native / slower mcoll; ompi_x, mpich_x ="
echo " that MPI's native / mcoll within each run, the median over its rounds (the VM's state, see the flag exchange"
echo " above: 0.03-0.08 us fast, 0.36-0.41 us slow, changes between runs; within a run both columns see it);"
echo " min_x = the smaller of the two: mcoll against each native in its own runs; floor_x = mcoll / its run's DRAM"
echo " floor (at the copy bandwidth that run measured), the median over each MPI's rounds, the larger of the two)"
