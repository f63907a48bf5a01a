#!/usr/bin/env bash
# One device call: an exhaustive stretch of llama3_8b gate_up TP2 (N=14336 K=4096) at large M, where the H100
# sits at its power cap, with the power-cap columns; then nvidia-smi's view of the throttle reasons.
set -uo pipefail
ROOT=$PWD
C=$ROOT/.dev/causes/carry
S=/tmp/ss
mkdir -p $S && tar xJf $C/bins.tar.xz -C $S
export LD_LIBRARY_PATH=$S/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SHAPESCOPE_MODELS_DIR=$ROOT/models
LOG=$OUT/device.log
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,enforced.power.limit,power.draw,temperature.gpu --format=csv
  date -u; echo "build $(cat $C/commit.txt)"; } | tee $LOG
echo "== $(date -u +%T) NVML call costs (idle)" | tee -a $LOG
python3 $C/nvml_cost.py 2>&1 | tee -a $LOG
echo "== $(date -u +%T) profile" | tee -a $LOG
/usr/bin/time -f "wall %e s" timeout -s INT ${CAP:-230} $S/bin/profile --model llama3_8b --module gate_up_proj --tp 2 \
  --kernel cublaslt_bf16 --kernel cublaslt_fp8_blockscale --m-search grid --m-range ${RANGE:-13000:15000:4} --timing events \
  --out $OUT/${NAME:-powercap} >$OUT/profile.log 2>&1
echo "rc=$?" | tee -a $LOG
tail -30 $OUT/profile.log | tee -a $LOG
nvidia-smi -q -d PERFORMANCE,POWER | tee -a $LOG
echo "== $(date -u +%T) NVML call costs (after the sweep)" | tee -a $LOG
python3 $C/nvml_cost.py 2>&1 | tee -a $LOG
echo "== $(date -u +%T) done" | tee -a $LOG
