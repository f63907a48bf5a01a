#!/usr/bin/env bash
# Sampling criteria on the main job's shape: stderr, pooled-ci95 (weighted-mean pool) and pooled-ci95 with the
# median pool, alternating, four rounds; three kernels, M 32..4096 step 32, event timing.
set -uo pipefail
ROOT=$PWD; S=/tmp/rp; W=/tmp/rpw; rm -rf $S $W; mkdir -p $S $W
tar xJf .dev/robustpool/bins.tar.xz -C $S
export SHAPESCOPE_MODELS_DIR=$ROOT/models LD_LIBRARY_PATH=$S/lib:${LD_LIBRARY_PATH:-}
LOG=$W/run.log
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.limit,temperature.gpu --format=csv; date -u; echo "build $(cat $S/commit.txt)"; } | tee $LOG
for round in 1 2 3 4; do for v in stderr pooled-ci95 pooled-median; do
  crit=$v; extra=""; [ $v = pooled-median ] && { crit=pooled-ci95; extra="--criterion-param median-pool=1"; }
  /usr/bin/time -f "$v round $round wall %e s" $S/bin/profile --model llama3_8b --module gate_up_proj --tp 2 \
    --kernel fp8_blockscale --kernel cublaslt_bf16 --kernel cublaslt_fp8_blockscale --m-range 32:4096:32 \
    --timing events --stopping-criterion $crit $extra --out $W/sampling${round}_$v > $W/sampling${round}_$v.log 2>&1
  echo "rc=$?" | tee -a $LOG; tail -1 $W/sampling${round}_$v.log | tee -a $LOG
done; done
python3 .dev/robustpool/compare.py $W stderr,pooled-ci95,pooled-median 4 2>&1 | tee -a $LOG
cd $W && tar cJf $OUT/work.tar.xz . && ls -la $OUT
