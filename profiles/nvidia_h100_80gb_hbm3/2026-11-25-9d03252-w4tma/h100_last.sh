#!/usr/bin/env bash
# The merged build's GPU suite on the H100, then the tiled W4A16 TMA comparison (main 03f6a64's code against
# 9d03252, alternating twice) on the H100.
set -uo pipefail
S=/tmp/fin; rm -rf $S; mkdir -p $S; tar xJf .dev/final2/final_tests.tar.xz -C $S
export SHAPESCOPE_MODELS_DIR=$PWD/models
echo "build $(cat $S/commit.txt)"; date -u
LD_LIBRARY_PATH=$S/lib timeout 300 $S/bin/shapescope_gpu_tests > $OUT/gpu_tests.log 2>&1; echo "rc=$?"
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|tests ran" $OUT/gpu_tests.log | tail -20
bash .dev/w4tma/alternate.sh
