#!/bin/sh
# Validation of the cost models on this machine (issue 6): mcoll-bench at 2..4 ranks on one node
# (short runs), then mcoll-sim --validate: median |pred - meas| / meas per model and collective.
#   scripts/sim-validate.sh BUILD_DIR [PROFILE] [COLLS]
# PROFILE: a JSON profile (mcoll-tune) or a built-in name (default: the built-in "default").
set -eu
B=${1:?usage: sim-validate.sh BUILD_DIR [PROFILE] [COLLS]}
PROF=${2:-default}
COLLS=${3:-bcast,allgather,allreduce,reduce,scatter,alltoall}
OUT=$(mktemp -d /tmp/mcoll-simval-XXXXXX)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for n in 2 3 4; do
  mpiexec.openmpi --oversubscribe --mca btl self,vader -x OMPI_ALLOW_RUN_AS_ROOT -x OMPI_ALLOW_RUN_AS_ROOT_CONFIRM \
    -x OMPI_MCA_mpi_yield_when_idle=1 -n $n "$B/bin/mcoll-bench" --coll "$COLLS" --alg all \
    --min 64 --max 256k --time-limit 0.02 --csv "$OUT/np$n.csv" >/dev/null
done
head -1 "$OUT/np2.csv" > "$OUT/all.csv"
for n in 2 3 4; do tail -n +2 "$OUT/np$n.csv" >> "$OUT/all.csv"; done
"$B/bin/mcoll-sim" --validate "$OUT/all.csv" --profile "$PROF"
echo "measurements: $OUT/all.csv"
