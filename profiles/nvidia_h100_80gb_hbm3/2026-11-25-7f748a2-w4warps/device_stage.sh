#!/usr/bin/env bash
# Device call for branch w4warps: the W4A16 GPU tests of the branch and of main, then formats_bench of main's
# build (fb49f12), of the branch's build, and of the branch's build with SHAPESCOPE_A16W4_RUNS=1 (the persistent
# grid forced at every shape), in turn, twice each. Logs land in $OUT (results.tar.xz with everything,
# stages.log beside it).
#
# Usage (from the repository root on the device, with .dev/w4warps carried):
#   bash .dev/w4warps/device_stage.sh
# main_bins.tar.xz and bins.tar.xz beside this script hold bin/formats_bench, bin/shapescope_gpu_tests,
# lib/libgomp.so.1 and commit.txt. Hangs are killed (timeouts 90 s a test run, 75 s a bench run).
set -uo pipefail
D=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/w4warps_out}
mkdir -p "$OUT"
B=/tmp/w4warps_builds && rm -rf $B && mkdir -p $B
R=/tmp/w4warps_results && rm -rf $R && mkdir -p $R

unpack() {  # unpack NAME ARCHIVE: the build's files under $B/NAME
  mkdir -p $B/$1 && tar xJf "$2" -C $B/$1 && chmod +x $B/$1/bin/*
  echo "$1: $(cat $B/$1/commit.txt)" | tee -a $R/builds.txt
}
unpack main $D/main_bins.tar.xz
unpack w4warps $D/bins.tar.xz

{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv; date -u; } \
  | tee $R/gpu.txt
stage() { echo "== $(date -u +%T) $*" | tee -a $R/stages.log; }
with_libs() { LD_LIBRARY_PATH=$B/$1/lib:${LD_LIBRARY_PATH:-} "${@:2}"; }

for build in w4warps main; do
  stage tests $build
  with_libs $build timeout 90 $B/$build/bin/shapescope_gpu_tests --gtest_filter='Fp4Kernels.*' \
    > $R/gpu_tests_$build.log 2>&1
  echo "rc=$?" | tee -a $R/stages.log
  grep -E "checks|FAILED|PASSED|Failure|OK \]" $R/gpu_tests_$build.log | head -60 | tee -a $R/stages.log
done

bench() {  # bench LABEL BUILD [ENV...]
  local label=$1 build=$2; shift 2
  stage formats_bench $label round $round
  env "$@" LD_LIBRARY_PATH=$B/$build/lib:${LD_LIBRARY_PATH:-} timeout 75 $B/$build/bin/formats_bench \
    --sections dense,grouped --ms 1,2,4,8,16 --tokens 1,4,16,64,256 --csv $R/formats_bench_${label}_$round.csv \
    > $R/formats_bench_${label}_$round.log 2>&1
  echo "rc=$?" | tee -a $R/stages.log
  grep -E -A4 "geometric means" $R/formats_bench_${label}_$round.log | tee -a $R/stages.log
}
for round in 1 2; do
  bench main main
  bench w4warps w4warps
  bench forced_runs w4warps SHAPESCOPE_A16W4_RUNS=1
done
stage done
cd $R && tar cJf $OUT/results.tar.xz . && cp stages.log $OUT/
