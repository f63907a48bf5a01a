#!/usr/bin/env bash
# Device call for branch w4cluster: the W4A16 GPU tests (Fp4Kernels.*) of the branch's build and of main's
# (104f697), then formats_bench of main and of the branch in turn, twice each. The branch's dense kernel is main's
# machine code again for every workspace-summed split and at M <= 16 (no activation prefetch); it sums 2..8 K
# splits in a thread-block cluster only where the clusters resident at once (queried; the GPU test
# ClustersResidentAreQueriedAndDecideTheSum prints them) keep the grid in as many waves. Logs land in $OUT
# (results.tar.xz with everything, stages.log beside it).
#
# Usage (from the repository root on the device, with .dev/w4cluster carried):
#   bash .dev/w4cluster/device_stage.sh [MAIN] [BRANCH]
# Each is a folder or a .tar.xz holding bin/formats_bench, bin/shapescope_gpu_tests and lib/libgomp.so.1 (the
# layout of bins.tar.xz); default: main_bins.tar.xz and bins.tar.xz beside this script. At most 40 + 30 + 4 x 30
# = 190 s (hangs killed), about 30 s in practice: run with carry [".dev/w4cluster"] and timeout_s 300.
set -uo pipefail
D=$(cd "$(dirname "$0")" && pwd)
MAIN=${1:-$D/main_bins.tar.xz}
BRANCH=${2:-$D/bins.tar.xz}
OUT=${OUT:-/tmp/w4cluster_out}
mkdir -p "$OUT"
B=/tmp/w4cluster_builds && rm -rf $B && mkdir -p $B
R=/tmp/w4cluster_results && rm -rf $R && mkdir -p $R

unpack() {  # unpack NAME SOURCE: the build's files under $B/NAME
  mkdir -p $B/$1
  if [ -d "$2" ]; then cp -r "$2"/. $B/$1/; else tar xJf "$2" -C $B/$1; fi
  chmod +x $B/$1/bin/* 2>/dev/null
  echo "$1: $(cat $B/$1/commit.txt 2>/dev/null || echo "$2")" | tee -a $R/builds.txt
}
unpack main "$MAIN"
unpack w4cluster "$BRANCH"

{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv; date -u; } \
  | tee $R/gpu.txt
stage() { echo "== $(date -u +%T) $*" | tee -a $R/stages.log; }
with_libs() { LD_LIBRARY_PATH=$B/$1/lib:${LD_LIBRARY_PATH:-} "${@:2}"; }

for build in w4cluster main; do
  stage tests $build
  limit=30 && [ $build = w4cluster ] && limit=40
  with_libs $build timeout $limit $B/$build/bin/shapescope_gpu_tests --gtest_filter='Fp4Kernels.*' \
    > $R/gpu_tests_$build.log 2>&1
  echo "rc=$?" | tee -a $R/stages.log
  grep -E "checks|clusters resident|FAILED|PASSED|Failure|_cluster|split" $R/gpu_tests_$build.log | head -40 \
    | tee -a $R/stages.log
done

for round in 1 2; do
  for build in main w4cluster; do
    stage formats_bench $build round $round
    with_libs $build timeout 30 $B/$build/bin/formats_bench --sections dense,grouped --ms 1,2,4,8,16 \
      --tokens 1,4,16,64,256 --csv $R/formats_bench_${build}_$round.csv > $R/formats_bench_${build}_$round.log 2>&1
    echo "rc=$?" | tee -a $R/stages.log
    grep -E "geometric means|a16w4 .*(/ ours|roofline)" $R/formats_bench_${build}_$round.log | tee -a $R/stages.log
  done
done
stage done
cd $R && tar cJf $OUT/results.tar.xz . && cp stages.log $OUT/
