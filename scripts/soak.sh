#!/usr/bin/env bash
# make soak: mcoll-soak with fresh seeds over a matrix of configurations until the time is up
# (MINUTES, default 30) - the randomized check CI cannot afford. CI's soak_* tests replay fixed
# seeds in a dozen configurations; this draws new seeds (SEED, default from the clock) and
# cycles through the settings that change which algorithm and data path a call takes: rank
# counts 2-8, virtual nodes (tcp between them too), virtual sockets, a far node, a small
# region, no pool, forced data paths, no trials, the other selection and models, a small
# cache capacity and slice, no small-message path, the scalar copy kernel, MCOLL_INT_MAX,
# adoption of malloc blocks (MCOLL_SHM_ADOPT), a node that refuses CMA. With ASAN=1 the
# ASan+UBSan build (build-asan) takes every fourth run, with MPICH=1 the MPICH build
# (build-mpich, 2-3 ranks: it busy-polls) every fourth. Every run is one log line in OUT/log.txt (default soak-out); a
# failure also writes OUT/fail-<seed>.txt with the command that replays it (from the
# repository's top) and the output's tail. Exit status 1 when any run failed.
set -uo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-${MINUTES:-30}}
out=${OUT:-soak-out}
seed=${SEED:-$(date +%s)}
iters=${ITERS:-400}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
mkdir -p "$out"
# per build: "ranks|environment" (space-separated k=v, and --options for mcoll-soak); adoption
# (MCOLL_SHM_ADOPT) takes glibc blocks of 128 KiB and more that are mappings of their own: a
# fixed mmap threshold keeps them so. --no-cma: the ranks forbid themselves CMA (a seccomp
# filter), and the native MPIs are told to do without it (MPICH's UCX to shared memory alone)
adopt_env=GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072
nocma_env="OMPI_MCA_btl_vader_single_copy_mechanism=none UCX_TLS=self,posix,sysv"
ompi=("2|" "3|" "5|" "8|" "4|MCOLL_VNODE_SIZE=2" "7|MCOLL_VNODE_SIZE=3" "8|MCOLL_VNODE_SIZE=3"
      "4|OMPI_MCA_btl=tcp,self OMPI_MCA_pml=ob1 MCOLL_VNODE_SIZE=2" "3|MCOLL_VNODE_SIZE=1"
      "4|MCOLL_VSOCKET_SIZE=2" "3|MCOLL_VSOCKET_SIZE=2" "6|MCOLL_VNODE_SIZE=2 MCOLL_VSOCKET_SIZE=1"
      "3|MCOLL_SHM_FAR_NS=1" "2|MCOLL_SHM_FAR_NS=0" "2|MCOLL_SHM_SIZE=64K"
      "7|MCOLL_SHM_SIZE=64K MCOLL_VNODE_SIZE=4" "5|MCOLL_SHM_POOL=0 MCOLL_SHM_SIZE=256K"
      "3|MCOLL_SHM_PATH=cma" "3|MCOLL_SHM_PATH=copy" "4|MCOLL_SHM_TRIAL=0" "2|MCOLL_SHM_CMA_FAST=1"
      "4|MCOLL_SELECT=table" "4|MCOLL_MODEL=hockney" "3|MCOLL_MODEL=loggp MCOLL_VNODE_SIZE=1"
      "3|MCOLL_SHM_CACHE=1M" "4|MCOLL_SHM_SLICE=4K" "3|MCOLL_SHM_SMALL=0" "3|MCOLL_SHM_NT=scalar"
      "3|MCOLL_INT_MAX=1000" "5|MCOLL_SHM=0" "3|MCOLL_SHM_ADOPT=1 $adopt_env" "4|MCOLL_SHM_ADOPT=2 $adopt_env"
      "3|--no-cma $nocma_env")
asan=("3|" "4|MCOLL_VNODE_SIZE=2" "5|MCOLL_VSOCKET_SIZE=2" "3|MCOLL_SHM_FAR_NS=1"
      "2|MCOLL_SHM_SIZE=64K" "4|MCOLL_SHM_PATH=cma" "3|--no-cma $nocma_env")
mpich=("2|" "3|" "2|MCOLL_VNODE_SIZE=1" "3|MCOLL_SHM_FAR_NS=1" "2|MCOLL_SHM_PATH=cma"
       "2|MCOLL_SHM_ADOPT=1 $adopt_env" "2|--no-cma $nocma_env")
need() { [ -x "$1/bin/mcoll-soak" ] || { echo "soak: no $1/bin/mcoll-soak ($2)"; exit 2; }; }
need build make
[ "${ASAN:-0}" = 1 ] && need build-asan "make check-asan"
[ "${MPICH:-0}" = 1 ] && need build-mpich "make check builds it"

# One run: prints the log line, writes the failure file. $1 build, $2 "ranks|env".
run() {
  local build=$1 np=${2%%|*} envs=${2#*|} n=$iters heap=$((seed % 3 ? 30 : 100)) cmd
  local -a launch args
  local bin
  case $build in
    openmpi|asan)
      launch=(mpiexec.openmpi --oversubscribe -n "$np")
      for e in $envs; do [[ $e == --* ]] && args+=("$e") || launch+=(-x "$e"); done
      bin=build/bin/mcoll-soak
      [ "$build" = asan ] && bin=build-asan/bin/mcoll-soak n=$((iters * 3 / 8)) ;;
    mpich)
      launch=(mpiexec.mpich -n "$np")
      for e in $envs; do [[ $e == --* ]] && args+=("$e") || launch+=(-genv "${e%%=*}" "${e#*=}"); done
      bin=build-mpich/bin/mcoll-soak n=$((iters * 3 / 4)) ;;
  esac
  launch+=("$bin" --iters "$n" --seed "$seed" --heap-share "$heap" "${args[@]}")
  cmd="${launch[*]}"
  [ "$build" = asan ] && cmd="ASAN_OPTIONS=$ASAN_OPTIONS $cmd"
  local t0=$SECONDS text rc
  text=$(timeout 900 "${launch[@]}" 2>&1); rc=$?
  local verdict=ok
  if [ $rc -ne 0 ] || ! grep -q PASSED <<<"$text" ||
     grep -q "AddressSanitizer\|runtime error" <<<"$text"; then
    verdict=FAIL
    { echo "# replay: $cmd"; echo "# exit status $rc"; tail -60 <<<"$text"; } > "$out/fail-$seed.txt"
    failed=$((failed + 1))
  fi
  printf '%s %-4s %-7s seed %s %3ds  %s\n' "$(date +%T)" "$verdict" "$build" "$seed" \
    $((SECONDS - t0)) "$cmd" | tee -a "$out/log.txt"
  seed=$((seed + 1))
}

failed=0 runs=0 i=0 j=0 k=0
end=$((SECONDS + minutes * 60))
while [ $SECONDS -lt $end ]; do
  if [ "${ASAN:-0}" = 1 ] && [ $((runs % 4)) = 1 ]; then run asan "${asan[j++ % ${#asan[@]}]}"
  elif [ "${MPICH:-0}" = 1 ] && [ $((runs % 4)) = 3 ]; then run mpich "${mpich[k++ % ${#mpich[@]}]}"
  else run openmpi "${ompi[i++ % ${#ompi[@]}]}"
  fi
  runs=$((runs + 1))
done
echo "soak: $runs runs, $failed failed (log $out/log.txt)"
[ $failed = 0 ]
