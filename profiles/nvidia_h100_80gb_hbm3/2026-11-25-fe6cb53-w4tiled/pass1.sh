#!/usr/bin/env bash
# Counter pass and baseline timing of main's a16w4_tiled build; run from the repository root on the device.
set -uo pipefail
D=/tmp/w4t && rm -rf $D && mkdir -p $D/r
tar xJf .dev/w4tiled2/carry/base.tar.xz -C $D
export LD_LIBRARY_PATH=$D/base/lib:${LD_LIBRARY_PATH:-}
P=$D/base/bin/profile; R=$D/r
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $R/gpu.txt 2>&1
echo "== $(date +%T) preset"
timeout 90 $P --grouped-preset nvfp4_targets --kernel a16w4_tiled_grouped --timing graph --out $R/preset > $R/preset.log 2>&1; echo rc=$?; tail -6 $R/preset.log
echo "== $(date +%T) dense"
timeout 90 $P --model llama3_3_70b_nvfp4 --module all --tp 2 --kernel a16w4_tiled --m-list 16,32,64,96,128,192,256,384,512 --timing graph --out $R/dense > $R/dense.log 2>&1; echo rc=$?; tail -6 $R/dense.log
NCU="ncu --clock-control none --cache-control all --kernel-name-base demangled --launch-skip 3 --launch-count 1 --set full --import-source no --kernel-name regex:a16w4_tiled_kernel"
echo "== $(date +%T) ncu grouped"
timeout 120 $NCU -o $R/ncu_grouped $P --grouped-preset nvfp4_targets --kernel a16w4_tiled_grouped --timing events --no-warm-up --min-samples 5 --max-samples 5 --out $D/p1 > $R/ncu_grouped.log 2>&1; echo rc=$?; tail -3 $R/ncu_grouped.log
echo "== $(date +%T) ncu dense"
timeout 120 $NCU -o $R/ncu_dense $P --shape 8192,14336 --operand-format nvfp4 --kernel a16w4_tiled --m-list 128 --timing events --no-warm-up --min-samples 5 --max-samples 5 --out $D/p2 > $R/ncu_dense.log 2>&1; echo rc=$?; tail -3 $R/ncu_dense.log
for n in grouped dense; do
  ncu -i $R/ncu_$n.ncu-rep --page details --print-details all > $R/ncu_${n}_details.txt 2>&1
  ncu -i $R/ncu_$n.ncu-rep --page source --csv --print-source sass > $R/ncu_${n}_sass.csv 2>&1
  wc -l $R/ncu_${n}_details.txt $R/ncu_${n}_sass.csv
done
echo "== $(date +%T) end"
tar cJf $OUT/pass1.tar.xz -C $D r
ls -la $OUT
