#!/usr/bin/env bash
# The tiled GPU tests on the TMA build, then main's build (base) and the TMA build (tma) alternately, twice each,
# on --grouped-preset nvfp4_targets and the dense Llama-3.3-70B-FP4 TP2 shapes (graph timing); the SM clock
# warm-up before the first sweep only, the GPU kept busy between the rest.
set -uo pipefail
D=/tmp/w4m && rm -rf $D && mkdir -p $D/r && tar xJf .dev/w4tma/builds.tar.xz -C $D
export SHAPESCOPE_MODELS_DIR=$PWD/models LD_LIBRARY_PATH=$D/lib:${LD_LIBRARY_PATH:-}
R=$D/r
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $R/gpu.txt 2>&1
echo "== $(date +%T) gputests"
timeout 60 $D/tma/bin/shapescope_gpu_tests --gtest_filter='A16w4Tiled.*' > $R/gpu_tests.txt 2>&1; echo rc=$?
grep -E "checks|OK \]|FAIL|PASSED" $R/gpu_tests.txt | head -30
grep -q "PASSED" $R/gpu_tests.txt || { tar cJf $OUT/w4tma.tar.xz -C $D r; exit 1; }
WARM=""
for round in 1 2; do
  for b in base tma; do
    P=$D/$b/bin/profile
    echo "== $(date +%T) $b round $round preset"
    timeout 45 $P --grouped-preset nvfp4_targets --kernel a16w4_tiled_grouped --timing graph $WARM --out $R/$b$round/preset > $R/$b${round}_preset.log 2>&1; echo rc=$?; grep "M=" $R/$b${round}_preset.log
    WARM=--no-warm-up
    echo "== $(date +%T) $b round $round dense"
    timeout 60 $P --model llama3_3_70b_nvfp4 --module all --tp 2 --kernel a16w4_tiled --m-list 16,32,64,96,128,192,256,384,512 --timing graph $WARM --out $R/$b$round/dense > $R/$b${round}_dense.log 2>&1; echo rc=$?; tail -1 $R/$b${round}_dense.log
  done
done
echo "== $(date +%T) end"
tar cJf $OUT/w4tma.tar.xz -C $D r
