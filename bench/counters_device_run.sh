#!/bin/bash
# Hardware counters as evidence, from a carried build folder (builds nothing):
#  0. the collector's GPU tests (CudaCounters.*): a cold count writes back no more than its run
#     writes and lasts as long as a cold kernel-timed run; every metric exposed on this chip;
#  1. profile --counters: llama3_8b gate_up TP2 (N=14336, K=4096), M 16..8192 step 16, graph
#     timing, cuBLASLt block-scaled FP8 and our fp8_blockscale; the counter pass collects every
#     good point, so each anomaly and its reference M have counters;
#  2. analyze with and without --explain-with-counters: the explained fraction before and after;
#  3. Nsight Compute on two anomaly M of each kernel with the same metrics, and
#     counters_crosscheck against our counters (agreement within 10%).
#   bench/counters_device_run.sh BUILD_DIR
# Everything lands in $OUT; about 5-7 minutes on an H100.
set -u
build=${1:-build}
out=${OUT:-/tmp/counters_out}
mkdir -p "$out"
if ! ldconfig -p | grep -q libgomp.so.1 && [ -d "$build/devlib" ]; then
  export LD_LIBRARY_PATH="$PWD/$build/devlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
for dir in /usr/local/cuda/extras/CUPTI/lib64 /usr/local/cuda/lib64; do
  [ -e "$dir/libcupti.so" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" && break
done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv

# 0. The collector's own checks.
if [ -x "$build/bin/shapescope_gpu_tests" ]; then
  timeout 120 "$build/bin/shapescope_gpu_tests" --gtest_filter='CudaCounters.*' > "$out/gpu_tests.txt" 2>&1
  echo "CudaCounters rc=$?"; grep -E '^  [a-z0-9_]+ M=|cold kernel-timed|missing:|Failure|Expected|Which is|difference|OK \]|FAILED' \
    "$out/gpu_tests.txt" | cut -c1-300
else
  echo "no $build/bin/shapescope_gpu_tests: the CudaCounters tests did not run"
fi
profiles="$out/profiles"
shape=(--backend cuda --model llama3_8b --module gate_up_proj --tp 2)
kernels=(cublaslt_fp8_blockscale fp8_blockscale)

# 1. The sweep and its counter pass.
start=$(date +%s)
timeout 330 "$build/bin/profile" "${shape[@]}" --kernel cublaslt_fp8_blockscale --kernel fp8_blockscale \
  --m-range 16:8192:16 --timing graph --no-warm-up --max-seconds-per-point 0.05 --counters --out "$profiles" \
  > "$out/profile.txt" 2>&1
echo "profile --counters rc=$? in $(( $(date +%s) - start )) s"; tail -n 8 "$out/profile.txt"

# 2. Explained fraction without and with counters.
for kernel in "${kernels[@]}"; do
  csv="$profiles/llama3_8b_gate_up_proj_tp2_N14336_K4096_${kernel}_graph.csv"
  [ -e "$csv" ] || { echo "no $csv"; continue; }
  "$build/bin/analyze" "$csv" --explain 40 --out-dir "$out/analysis" > "$out/explain_${kernel}.txt" 2>&1
  "$build/bin/analyze" "$csv" --explain 40 --explain-with-counters --out-dir "$out/analysis" \
    > "$out/explain_counters_${kernel}.txt" 2>&1
  echo "== $kernel: $(grep -o 'causes ([0-9]* of [0-9]*' "$out/explain_${kernel}.txt") without counters," \
       "$(grep -o 'causes ([0-9]* of [0-9]*' "$out/explain_counters_${kernel}.txt") with"
  sed -n '/causes (/,$p' "$out/explain_counters_${kernel}.txt" | head -n 14 | cut -c1-400
done

# 3. Nsight Compute on two anomaly M per kernel, same metrics, caches flushed as ours.
metrics=$("$build/bin/counters_crosscheck" --ncu-metrics)  # the collector's own list (common/kernel_counters.cpp)
for kernel in "${kernels[@]}"; do
  csv="$profiles/llama3_8b_gate_up_proj_tp2_N14336_K4096_${kernel}_graph.csv"
  counters="${csv%.csv}.counters.csv"
  [ -e "$counters" ] || { echo "no $counters"; continue; }
  ms=$(grep -oE '^ +M=[0-9]+' "$out/explain_${kernel}.txt" | head -n 2 | tr -dc '0-9\n')
  [ -n "$ms" ] || ms="144 240"
  specs=()
  for m in $ms; do
    timeout 60 ncu --metrics "$metrics" --csv --print-units base --cache-control all --clock-control none \
      -k regex:'fp8_blockscale_kernel|nvjet|splitK|sm90_xmma|cutlass|gemm|educe' --log-file "$out/ncu_${kernel}_M$m.csv" \
      "$build/bin/profile" "${shape[@]}" --kernel "$kernel" --m-list "$m" --timing events --warmup 0 \
      --min-samples 1 --max-samples 1 --no-warm-up --out /tmp/ncu_profiles > /dev/null 2>&1
    echo "ncu $kernel M=$m rc=$?"
    specs+=("$m=$out/ncu_${kernel}_M$m.csv")
  done
  "$build/bin/counters_crosscheck" "$counters" "${specs[@]}" 2>&1 | tee "$out/crosscheck_${kernel}.txt"
done
cp "$profiles"/*.counters.csv "$out/" 2>/dev/null
tar -C "$out" -czf "$out/profiles.tar.gz" profiles && rm -rf "$profiles"
