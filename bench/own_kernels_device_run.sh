#!/bin/bash
# One device call for our kernels: SASS check, correctness tests, the benchmark tables
# (DeepSeek-V3 TP8, MLA batched, TP1 large + Qwen3 TP8) and the DeepSeek-V3 TP8
# cudagraph profiles of our three kernels. Run from the repo root with the build folder
# as $1 (default build-kernels); logs, CSVs and a tarball of the profiles go to $OUT
# (8 files: the device tool returns at most 8). kernel_bench flushes L2 clean by default.
set -u
build=${1:-build-kernels}
out=${OUT:-/tmp/own_kernels_out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
echo "SASS matrix instructions per kernel (ours):"
cuobjdump --dump-sass "$build/bin/kernel_bench" 2>&1 |
  awk '/Function :/{f=$3} /QGMMA|HGMMA|HMMA|QMMA/{match($0,/(QGMMA|HGMMA|HMMA|QMMA)[.A-Z0-9_]*/); c[f" "substr($0,RSTART,RLENGTH)]++} END{for(k in c) print "  " c[k], k}' |
  grep -E "fp8_blockscale|a16w8" | cut -c1-150
timeout 150 "$build/bin/shapescope_gpu_tests" --gtest_filter='OwnKernels.*' > "$out/tests.txt" 2>&1
echo "tests rc=$?"; grep -E "FAIL|checks, worst|PASSED|FAILED" "$out/tests.txt" | head -30
bench="$build/bin/kernel_bench"
timeout 100 "$bench" --set dsv3_tp8 --ms 1,2,3,4,8,16,32,64,128,256,512,1024,2048,4096 \
  --csv "$out/bench_dsv3_tp8.csv" > "$out/bench_dsv3_tp8.txt" 2>&1
echo "dsv3 rc=$?"
timeout 30 "$bench" --set mla_tp8 --ours a16w8_blockscale_batched --baselines cublaslt_bf16 --ms 1,2,4,8,16,32,64,128 \
  --csv "$out/bench_mla.csv" > "$out/bench_mla.txt" 2>&1
echo "mla rc=$?"
timeout 60 "$bench" --set dsv3_tp1_large,qwen3_tp8 --ms 1,4,16,64,1024,4096 --seconds-per-point 0.15 \
  --csv "$out/bench_large_qwen.csv" > "$out/bench_large_qwen.txt" 2>&1
echo "large rc=$?"
# The same points with the device's own (dirty, memset) flush: what profile measures.
timeout 40 "$bench" --set dsv3_tp8 --flush memset --ms 1,4,16,64 > "$out/bench_memset_flush.txt" 2>&1
echo "memset-flush rc=$?"
for f in bench_dsv3_tp8 bench_mla bench_large_qwen bench_memset_flush; do echo "== $f"; sed -n '/per shape and M band/,$p' "$out/$f.txt"; done
if [ "${PROFILES:-1}" = 1 ]; then
  prof="$out/prof"
  common=(--backend cuda --model deepseek_v3 --tp 8 --m-preset cudagraph --max-seconds-per-point 0.05 --out "$prof")
  timeout 150 "$build/bin/profile" "${common[@]}" --module all --kernel fp8_blockscale --kernel fp8_blockscale_bpreshuffle \
    > "$out/profile_log.txt" 2>&1
  echo "profile fp8 rc=$?"
  for module in mla_absorb_q mla_absorb_out; do
    timeout 40 "$build/bin/profile" "${common[@]}" --module $module --kernel a16w8_blockscale_batched \
      >> "$out/profile_log.txt" 2>&1
    echo "profile $module rc=$?"
  done
  mv "$out/profile_log.txt" "$prof/" 2>/dev/null
  tar czf "$out/profiles.tgz" -C "$prof" . && rm -rf "$prof"
  tar tzf "$out/profiles.tgz" | wc -l
fi
