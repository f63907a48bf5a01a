#!/usr/bin/env bash
# Decode A/B of the swap-AB kernel with room for two CTAs per SM (swap2cta) against main (before): GPU tests of
# the swap-AB kernel, then DeepSeek-V3 TP8 every dense module, M 1..64, graph timing with PDL, twice alternating,
# then the streaming floor. Run from the repository root with .dev/swap2cta and .dev/counter carried.
set -uo pipefail
ROOT=$PWD; W=/tmp/w; rm -rf /tmp/bef /tmp/aft $W; mkdir -p /tmp/bef /tmp/aft $W
tar xJf .dev/counter/bins.tar.xz -C /tmp/bef; tar xJf .dev/swap2cta/bins.tar.xz -C /tmp/aft
export SHAPESCOPE_MODELS_DIR=$ROOT/models
LOG=$W/run.log
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu --format=csv
  date -u; echo "after $(cat /tmp/aft/commit.txt), before $(cat /tmp/bef/commit.txt)"; } | tee $LOG
stage() { echo "== $(date -u +%T) $*" | tee -a $LOG; }
run_in() { local d=$1; shift; LD_LIBRARY_PATH=$d/lib:${LD_LIBRARY_PATH:-} "$@"; }
stage gputests
run_in /tmp/aft timeout 200 /tmp/aft/bin/shapescope_gpu_tests --gtest_filter='Fp8SwapAb*:OwnKernels.*' > $W/gpu_tests.log 2>&1
echo "rc=$?" | tee -a $LOG; grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|tests ran" $W/gpu_tests.log | tail -20 | tee -a $LOG
for round in 1 2; do for b in before after; do
  d=/tmp/bef; [ $b = after ] && d=/tmp/aft
  stage decode $b $round
  run_in $d timeout 100 $d/bin/profile --backend cuda --model deepseek_v3 --tp 8 --module all --m-list 1,4,8,16,32,64 \
    --timing graph --no-warm-up --min-samples 20 --max-samples 40 --max-seconds-per-point 0.3 \
    --kernel fp8_blockscale --kernel cublaslt_fp8_blockscale --out $W/decode_${b}_$round > $W/decode_${b}_$round.log 2>&1
  echo "rc=$?" | tee -a $LOG
done; done
stage floor
/tmp/aft/bin/stream_floor --sizes-mib 4,8,15.75,24,31.5,48,64 > $W/stream_floor.txt 2>&1; cat $W/stream_floor.txt | tee -a $LOG
python3 .dev/final/summarize.py $W 2>&1 | tee -a $LOG
stage done
cd $W && tar cJf $OUT/work.tar.xz . && ls -la $OUT
