#!/usr/bin/env bash
# env_tune_chain_smoke: scripts/tune.sh on a tiny grid, then the outputs must parse.
set -euo pipefail
build=$1; out=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$out"
TUNE_QUICK=1 TUNE_NP=2 TUNE_COLLS=bcast,allreduce TUNE_MIN=8 TUNE_MAX=4k TUNE_STEP=8 TUNE_SEGS=1k \
  TUNE_TIME=0.01 "$src/scripts/tune.sh" "$build" "$out"
for f in profile.json sweep.csv measured.rules hockney.rules loggp.rules plogp.rules penalty.md penalty.csv; do
  test -s "$out/$f" || { echo "FAIL: $out/$f missing"; exit 1; }
done
# the library's parser (mc_rules_load) through the exporter, and the profile through mc_profile_load
for r in measured hockney loggp plogp; do
  "$build/bin/mcoll-tune" export --rules "$out/$r.rules" --ompi "$out/$r.ompi" >/dev/null 2>&1 \
    || { echo "FAIL: $r.rules does not load"; exit 1; }
done
"$build/bin/mcoll-tune" model --profile "$out/profile.json" --model plogp --csv "$out/sweep.csv" \
  --out "$out/again.rules" >/dev/null || { echo "FAIL: profile does not load"; exit 1; }
grep -q '^| \*\*all\*\*' "$out/penalty.md" || { echo "FAIL: no penalty table"; exit 1; }
# the library decides by the measured rules file
line=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 MCOLL_RULES="$out/measured.rules" MCOLL_VERBOSE=1 \
  mpiexec.openmpi --oversubscribe --bind-to none --mca btl self,vader -x MCOLL_RULES -x MCOLL_VERBOSE -n 2 \
  "$build/bin/mcoll-bench" --coll bcast --min 64 --max 64 --iters 2 2>&1 | grep -m1 'rules file line' || true)
[ -n "$line" ] || { echo "FAIL: MCOLL_RULES not used"; exit 1; }
echo "$line"
echo "tune smoke: ok"
