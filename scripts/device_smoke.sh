#!/usr/bin/env bash
# One device call's worth of checks for the CUDA backend, from a build folder carried
# to the device (nothing is built here): nvidia-smi, the GPU tests (copy bandwidth,
# timer, flush, graphs, cuBLASLt correctness, the K=2304 scale rule, a large bf16
# GEMM's TFLOP/s), then a small DeepSeek-V3 TP8 profile with both cuBLASLt entries.
# Usage: scripts/device_smoke.sh BUILD_DIR OUT_DIR [gtest filter]
set -uo pipefail
build=${1:?build folder, e.g. build-cuda}
out=${2:?output folder}
filter=${3:-Cuda*}
mkdir -p "$out"
# The device image may lack OpenMP's runtime: fall back on the copy carried in BUILD_DIR/devlib.
if ! ldconfig -p | grep -q libgomp.so.1 && [ -d "$build/devlib" ]; then
  export LD_LIBRARY_PATH="$PWD/$build/devlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv | tee "$out/nvidia_smi.csv"
status=0
"$build/bin/shapescope_gpu_tests" --gtest_filter="$filter" 2>&1 | tee "$out/gpu_tests.log" || status=1
"$build/bin/profile" --backend cuda --model deepseek_v3 --tp 8 --module fused_qkv_a_proj \
  --kernel cublaslt_fp8_blockscale --kernel cublaslt_bf16 --m-list 1,4,64,1024,4096 --out "$out/profiles" \
  2>&1 | tee "$out/profile.log" || status=1
exit $status
