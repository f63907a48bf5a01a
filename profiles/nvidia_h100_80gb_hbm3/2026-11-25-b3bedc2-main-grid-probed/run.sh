#!/usr/bin/env bash
set -uo pipefail
S=/tmp/fin; rm -rf $S; mkdir -p $S; tar xJf .dev/final2/final_bins.tar.xz -C $S
export SHAPESCOPE_MODELS_DIR=$PWD/models
echo "build $(cat $S/commit.txt)"; date -u; nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv,noheader
LD_LIBRARY_PATH=$S/lib timeout 300 $S/bin/shapescope_gpu_tests > $OUT/gpu_tests.log 2>&1; echo "gpu_tests rc=$?"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|tests ran" $OUT/gpu_tests.log | tail -20
date -u
mkdir -p $OUT/main
start=$(date +%s.%N)
LD_LIBRARY_PATH=$S/lib timeout 280 $S/bin/profile --model llama3_8b --module gate_up_proj --tp 2 --out $OUT/main > $OUT/main_job.log 2>&1; echo "main job rc=$?"
end=$(date +%s.%N); awk -v a=$start -v b=$end "BEGIN{printf \"main job wall %.1f s\\n\", b-a}"
tail -5 $OUT/main_job.log
cd $OUT && tar cJf main.tar.xz main && rm -rf main
date -u
