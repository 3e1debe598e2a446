#!/bin/sh
# Native acceptance of mcoll-tune export (ctest env_tune_*): writes a one-row mcoll rules
# file, exports it for the MPI under test, runs tune_accept (plain MPI, no mcoll) with the
# native tuning file, and lets tune_accept check the summation order the native MPI used.
# usage: tune_accept.sh MCOLL_TUNE TUNE_ACCEPT WORKDIR openmpi|mpich COLL ALG EXPECTED LAUNCHER...
set -eu
tune=$1 prog=$2 dir=$3 mpi=$4 coll=$5 alg=$6 want=$7
shift 7
mkdir -p "$dir"
base="$dir/$mpi-$coll-$alg"
echo "$coll * * $alg" > "$base.rules"
if [ "$mpi" = mpich ]; then
  "$tune" export --rules "$base.rules" --mpich "$base.json"
  # ch4 picks a "composition" before the MPIR layer reads the file; none hands it straight over
  MPIR_CVAR_DEVICE_COLLECTIVES=none MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$base.json" \
    "$@" -n 4 "$prog" "$coll" "$want"
else
  "$tune" export --rules "$base.rules" --ompi "$base.ompi"
  "$@" --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename "$base.ompi" \
    -n 4 "$prog" "$coll" "$want"
fi
