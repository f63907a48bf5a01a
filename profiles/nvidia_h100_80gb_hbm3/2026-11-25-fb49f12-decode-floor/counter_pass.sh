#!/usr/bin/env bash
# Counter pass on fp8_blockscale's swap-AB decode kernel and the streaming floor: run from the repository root
# on the device with .dev/counter carried.
set -uo pipefail
D=/tmp/counter && rm -rf $D && mkdir -p $D/b $D/r
tar xJf .dev/counter/bins.tar.xz -C $D/b
export LD_LIBRARY_PATH=$D/b/lib:${LD_LIBRARY_PATH:-}
P=$D/b/bin/profile
R=$D/r
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw,power.limit --format=csv > $R/gpu.txt 2>&1
echo "== stream_floor" ; $D/b/bin/stream_floor --sizes-mib 4,8,15.75,24,31.5,48,64,128,256 2>&1 | tee $R/stream_floor.txt
echo "== profile graph+pdl"
for s in 4608,7168 7168,2304; do
  timeout 120 $P --shape $s --kernel fp8_blockscale --kernel cublaslt_fp8_blockscale --m-list 1,8,32 --timing graph --out $R/profile 2>&1 | tail -3
done
NCU="ncu --clock-control none --cache-control all --kernel-name-base demangled --launch-skip 3 --launch-count 1 --set full"
for s in 4608,7168 7168,2304; do
  timeout 150 $NCU --kernel-name regex:fp8_blockscale_swapab $P --shape $s --kernel fp8_blockscale --m-list 1 --timing events \
    --no-warm-up --min-samples 5 --max-samples 5 --out $D/p > $R/ncu_swapab_${s/,/x}.txt 2>&1
  tail -5 $R/ncu_swapab_${s/,/x}.txt
done
timeout 120 $NCU --kernel-name read_only --launch-skip 40 $D/b/bin/stream_floor --sizes-mib 31.5 > $R/ncu_read_only_31.5MiB.txt 2>&1
tail -5 $R/ncu_read_only_31.5MiB.txt
tar cJf $OUT/counter.tar.xz -C $D r
ls -la $OUT
