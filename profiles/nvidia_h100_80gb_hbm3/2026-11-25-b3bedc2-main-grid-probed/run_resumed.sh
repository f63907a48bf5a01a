#!/usr/bin/env bash
set -uo pipefail
S=/tmp/fin; rm -rf $S; mkdir -p $S; tar xJf .dev/final2/final_bins.tar.xz -C $S
export SHAPESCOPE_MODELS_DIR=$PWD/models
echo "build $(cat $S/commit.txt)"; date -u
tar xJf profiles/nvidia_h100_80gb_hbm3/2026-11-25-b3bedc2-main-grid-probed/main_grid_probed.tar.xz -C $OUT
ls -la $OUT/main
start=$(date +%s.%N)
LD_LIBRARY_PATH=$S/lib timeout -s INT -k 20 530 $S/bin/profile --model llama3_8b --module gate_up_proj --tp 2 --out $OUT/main > $OUT/main_job_resumed.log 2>&1; echo "main job rc=$?"
end=$(date +%s.%N); awk -v a=$start -v b=$end "BEGIN{printf \"resumed main job wall %.1f s\\n\", b-a}"
tail -22 $OUT/main_job_resumed.log
cd $OUT && tar cJf main.tar.xz main && rm -rf main
date -u
