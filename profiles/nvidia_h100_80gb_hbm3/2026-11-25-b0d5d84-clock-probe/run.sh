#!/usr/bin/env bash
# One device call: the clock probe's GPU tests, then profile with probes over M 13000-15000 step 4 (cuBLASLt bf16),
# then M 13000-13800 step 4 without probes and with them (perturbation). Everything lands in $OUT/probe.tar.xz.
set -uo pipefail
ROOT=$PWD
C=$ROOT/.dev/clocksampler
S=/tmp/cp
R=$S/out
mkdir -p $S $R && tar xJf $C/bins.tar.xz -C $S
export LD_LIBRARY_PATH=$S/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SHAPESCOPE_MODELS_DIR=$ROOT/models
LOG=$R/device.log
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,enforced.power.limit,power.draw,temperature.gpu --format=csv
  date -u; echo "build $(cat $S/commit.txt)"; } | tee $LOG
echo "== $(date -u +%T) gpu tests" | tee -a $LOG
(cd $S && timeout 90 bin/shapescope_gpu_tests --gtest_filter='ClockProbe.*:CudaMeasure.ConvergesOnALargeBlockScaledGemm' 2>&1) | tee $R/gpu_tests.log | tail -40 >>$LOG
P="$S/bin/profile --model llama3_8b --module gate_up_proj --tp 2 --kernel cublaslt_bf16 --m-search grid --timing events"
for run in "probed 13000:15000:4 on" "unprobed_short 13000:13800:4 off" "probed_short 13000:13800:4 on"; do
  set -- $run
  echo "== $(date -u +%T) profile $1 $2 --clock-probes $3" | tee -a $LOG
  /usr/bin/time -f "wall %e s" timeout -s INT ${CAP:-80} $P --m-range $2 --clock-probes $3 --out $R/$1 >$R/$1.log 2>&1
  echo "rc=$?" | tee -a $LOG; tail -8 $R/$1.log | tee -a $LOG
done
echo "== $(date -u +%T) done" | tee -a $LOG
tar cJf $OUT/probe.tar.xz -C $S out
