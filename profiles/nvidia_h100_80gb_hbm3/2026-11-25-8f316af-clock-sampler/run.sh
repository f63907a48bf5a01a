#!/usr/bin/env bash
# One device call: (1) the NVML clock probe at the power cap (clock_probe.py); (2) profile with the SM clock sampler
# over M 13000-15000 step 4 (cuBLASLt bf16, fp8_blockscale_bpreshuffle), then the same without it (timing
# perturbation), then M 5000-6000 step 4 with it (the bpreshuffle dips near 5400).
set -uo pipefail
ROOT=$PWD
C=$ROOT/.dev/clocksampler
S=/tmp/cs
mkdir -p $S && tar xJf $C/bins.tar.xz -C $S
export LD_LIBRARY_PATH=$S/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SHAPESCOPE_MODELS_DIR=$ROOT/models
LOG=$OUT/device.log
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,enforced.power.limit,power.draw,temperature.gpu --format=csv
  date -u; echo "build $(cat $S/commit.txt)"; } | tee $LOG
echo "== $(date -u +%T) probe" | tee -a $LOG
mkdir -p $OUT/probe && timeout 40 python3 $C/clock_probe.py $OUT/probe >>$LOG 2>&1
timeout 20 python3 $C/probe_summary.py $OUT/probe 2>&1 | tee -a $LOG
xz -9 $OUT/probe/nvml_poll.csv $OUT/probe/matmul_events.csv
P="$S/bin/profile --model llama3_8b --module gate_up_proj --tp 2 --kernel cublaslt_bf16 --kernel fp8_blockscale_bpreshuffle --m-search grid --timing events"
for run in "sampled 13000:15000:4 1" "unsampled 13000:15000:4 0" "sampled_low 5000:6000:4 1"; do
  set -- $run
  echo "== $(date -u +%T) profile $1 $2 --clock-sample-ms $3" | tee -a $LOG
  /usr/bin/time -f "wall %e s" timeout -s INT ${CAP:-90} $P --m-range $2 --clock-sample-ms $3 --out $OUT/$1 >$OUT/$1.log 2>&1
  echo "rc=$?" | tee -a $LOG; tail -6 $OUT/$1.log | tee -a $LOG
done
echo "== $(date -u +%T) done" | tee -a $LOG
