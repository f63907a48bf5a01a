#!/usr/bin/env bash
# Tiled GPU tests of a candidate build, then main's build (base) and the candidate alternately, twice each, on
# --grouped-preset nvfp4_targets and the dense Llama-3.3-70B-FP4 TP2 shapes, then (unless the second argument is
# 'no') a counter pass on the candidate. Ran as `alternate.sh new` (3c4816d, archive pass2.tar.xz) and
# `alternate.sh final no` (fe6cb53, archive pass3.tar.xz).
set -uo pipefail
C=${1:-new}
COUNTERS=${2:-yes}
ARCHIVE=$([ "$C" = new ] && echo pass2 || echo pass3)
D=/tmp/w4t && rm -rf $D && mkdir -p $D/r
tar xJf .dev/w4tiled2/carry/base.tar.xz -C $D && tar xJf .dev/w4tiled2/carry/$C.tar.xz -C $D
export SHAPESCOPE_MODELS_DIR=$PWD/models
R=$D/r
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $R/gpu.txt 2>&1
echo "== $(date +%T) gputests"
LD_LIBRARY_PATH=$D/$C/lib:${LD_LIBRARY_PATH:-} timeout 120 $D/$C/bin/shapescope_gpu_tests --gtest_filter='A16w4Tiled.*' > $R/gpu_tests.txt 2>&1; echo rc=$?
grep -E "checks|OK|FAIL|PASSED|rel_err" $R/gpu_tests.txt | head -30
grep -q "PASSED" $R/gpu_tests.txt || { tar cJf $OUT/$ARCHIVE.tar.xz -C $D r; exit 1; }
for round in 1 2; do
  for b in base $C; do
    export LD_LIBRARY_PATH=$D/$b/lib
    P=$D/$b/bin/profile
    echo "== $(date +%T) $b round $round preset"
    timeout 60 $P --grouped-preset nvfp4_targets --kernel a16w4_tiled_grouped --timing graph --out $R/$b$round/preset > $R/$b${round}_preset.log 2>&1; echo rc=$?; grep "M=" $R/$b${round}_preset.log
    echo "== $(date +%T) $b round $round dense"
    timeout 90 $P --model llama3_3_70b_nvfp4 --module all --tp 2 --kernel a16w4_tiled --m-list 16,32,64,96,128,192,256,384,512 --timing graph --out $R/$b$round/dense > $R/$b${round}_dense.log 2>&1; echo rc=$?; tail -2 $R/$b${round}_dense.log
  done
done
if [ "$COUNTERS" != no ]; then
export LD_LIBRARY_PATH=$D/$C/lib
P=$D/$C/bin/profile
NCU="ncu --clock-control none --cache-control all --kernel-name-base demangled --launch-skip 3 --launch-count 1 --set full --import-source no --kernel-name regex:a16w4_tiled_kernel"
echo "== $(date +%T) ncu"
timeout 100 $NCU -o $R/ncu_grouped $P --grouped-preset nvfp4_targets --kernel a16w4_tiled_grouped --timing events --no-warm-up --min-samples 5 --max-samples 5 --out $D/p1 > $R/ncu_grouped.log 2>&1; echo rc=$?
timeout 100 $NCU -o $R/ncu_dense $P --shape 8192,14336 --operand-format nvfp4 --kernel a16w4_tiled --m-list 128 --timing events --no-warm-up --min-samples 5 --max-samples 5 --out $D/p2 > $R/ncu_dense.log 2>&1; echo rc=$?
for n in grouped dense; do
  ncu -i $R/ncu_$n.ncu-rep --page details > $R/ncu_${n}_details.txt 2>&1
  ncu -i $R/ncu_$n.ncu-rep --page source --csv --print-source sass > $R/ncu_${n}_sass.csv 2>&1
done
fi
echo "== $(date +%T) end"
tar cJf $OUT/$ARCHIVE.tar.xz -C $D r
ls -la $OUT
