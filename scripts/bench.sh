#!/usr/bin/env bash
# make bench: the default side-by-side sweep (native MPI vs mcoll) on N ranks.
set -euo pipefail
mpi=${1:-openmpi}; build=${2:-build}; np=${3:-2}; shift 3 || true
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [ "$mpi" = openmpi ]; then
  launch=(mpiexec.openmpi --oversubscribe --bind-to none -n "$np")
else
  launch=(mpiexec.mpich -n "$np")
fi
exec "${launch[@]}" "$build/bin/mcoll-bench" "$@"
