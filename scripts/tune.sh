#!/usr/bin/env bash
# make tune: the whole tuning chain of issue 6 into one directory (default tune/):
#   profile.json   mcoll-tune params (2 ranks, intra-node path; TUNE_INTER=1 adds the
#                  inter-node path over TCP between virtual nodes)
#   sweep.csv      mcoll-tune sweep at each of TUNE_NP (medians of every algorithm)
#   measured.rules measured-best decisions (MCOLL_RULES format)
#   hockney|loggp|plogp.rules  model-built decisions from profile.json on the same grid
#   penalty.md / penalty.csv / penalty.png  mcoll-tune compare (paper Fig. 7)
# Knobs (environment): TUNE_NP="2 3 4", TUNE_MIN=8, TUNE_MAX=4M, TUNE_STEP=4, TUNE_SEGS=8k,64k,
#   TUNE_TIME=0.03 (seconds per size and pass), TUNE_COLLS=all, TUNE_QUICK=1 (short params),
#   TUNE_INTER=1, MPI=openmpi|mpich (MPICH: 2 ranks only on this machine). MCOLL_SELECT,
#   MCOLL_MODEL, MCOLL_PROFILE are passed to the ranks when set (what the `default` column runs).
set -euo pipefail
build=${1:-build}; out=${2:-tune}
bin=$build/bin/mcoll-tune
np_list=${TUNE_NP:-2 3 4}
mpi=${MPI:-openmpi}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
launch() {   # launch NP [openmpi btl] -- command...
  local np=$1 btl=$2 fwd=() v; shift 2
  for v in MCOLL_SELECT MCOLL_MODEL MCOLL_PROFILE; do [ -n "${!v:-}" ] && fwd+=(-x "$v"); done
  if [ "$mpi" = openmpi ]; then
    mpiexec.openmpi --oversubscribe --bind-to none --mca btl "$btl" --mca mpi_yield_when_idle 1 \
      -x MCOLL_VNODE_SIZE "${fwd[@]}" -n "$np" "$@"
  else
    mpiexec.mpich -n "$np" "$@"
  fi
}
t0=$(date +%s)
quick=(); [ "${TUNE_QUICK:-0}" = 1 ] && quick=(--quick)
rm -f "$out/profile.json" "$out/sweep.csv"
echo "=== params (intra-node: shared memory)"
MCOLL_VNODE_SIZE= launch 2 self,vader "$bin" params --out "$out/profile.json" --level intra "${quick[@]}"
if [ "${TUNE_INTER:-0}" = 1 ] && [ "$mpi" = openmpi ]; then
  echo "=== params (inter-node: virtual nodes of 1 rank, TCP)"
  MCOLL_VNODE_SIZE=1 launch 2 self,tcp "$bin" params --out "$out/profile.json" --level inter "${quick[@]}"
fi
for np in $np_list; do
  echo "=== sweep at $np ranks"
  MCOLL_VNODE_SIZE= launch "$np" self,vader "$bin" sweep --csv "$out/sweep.csv" --rules "$out/measured.rules" \
    --coll "${TUNE_COLLS:-all}" --min "${TUNE_MIN:-8}" --max "${TUNE_MAX:-4M}" --step "${TUNE_STEP:-4}" \
    --segs "${TUNE_SEGS:-8k,64k}" --time "${TUNE_TIME:-0.03}"
done
for m in hockney loggp plogp; do
  "$bin" model --profile "$out/profile.json" --model $m --csv "$out/sweep.csv" --out "$out/$m.rules"
done
echo "=== compare"
"$bin" compare --csv "$out/sweep.csv" --profile "$out/profile.json" --table "$out/penalty.md" \
  --penalty-csv "$out/penalty.csv" --png "$out/penalty.png"
echo "=== tune chain: $(( $(date +%s) - t0 )) s, outputs in $out/"
