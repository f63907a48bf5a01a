#!/usr/bin/env bash
# One device call for issue 13's examples: a .so plugin and three Python callables profiled by shapescope.
#   examples/python/device_run.sh BUILD_DIR        (BUILD_DIR holds bin/profile, bin/analyze, lib/*.so)
# Writes profiles under $OUT/profiles (OUT defaults to ./device_out), logs beside them, and prints a summary.
# Needs Python with torch (and Triton for step 4); nothing is compiled here.
set -uo pipefail
BUILD=$(cd "${1:?usage: device_run.sh BUILD_DIR}" && pwd)
REPO=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$PWD/device_out}
P=$OUT/profiles
mkdir -p "$P" "$OUT/logs"
export LD_LIBRARY_PATH="$BUILD/lib:$BUILD/bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONPATH="$REPO/python:$REPO/examples/python${PYTHONPATH:+:$PYTHONPATH}"
export SHAPESCOPE_LIB="$BUILD/lib/libshapescope_c.so"
export SHAPESCOPE_MODELS_DIR="$REPO/profiles/models"
PY=${PYTHON:-python3}
PROFILE="$BUILD/bin/profile"
QUICK=(--no-warm-up --max-seconds-per-point 0.3)
DSV3_M=4,8,16,32,64,128,256,512,1024,2048,4096
LLAMA_M=1,2,4,8,16,32,64,128,256,512,1024,2048,4096
DSV3_MODULES=(fused_qkv_a_proj q_b_proj kv_b_proj o_proj gate_up_proj down_proj moe_gate_up_proj moe_down_proj)
step() { echo "== $*" | tee -a "$OUT/logs/steps.log"; }
run() { local log=$1; shift; "$@" >"$OUT/logs/$log.log" 2>&1; local rc=$?; echo "   rc=$rc ($log)" | tee -a "$OUT/logs/steps.log"; }

step "0 GPU tests of the plugin path"
[ -x "$BUILD/bin/shapescope_gpu_tests" ] && run gpu_tests "$BUILD/bin/shapescope_gpu_tests" --gtest_filter='PluginCuda*'

step "1 C ABI: the cuBLASLt bf16 example plugin beside the built-in cublaslt_bf16, llama3_8b gate_up TP2, every mode"
for timing in events graph kernel; do
  run "plugin_$timing" "$PROFILE" --plugin "$BUILD/lib/libcublaslt_bf16_plugin.so" --kernel example_cublaslt_bf16 \
    --kernel cublaslt_bf16 --model llama3_8b --module gate_up_proj --tp 2 --m-list "$LLAMA_M" --timing "$timing" \
    --out "$P/plugin" "${QUICK[@]}"
done

step "2 torch._scaled_mm block-scaled vs cublaslt_fp8_blockscale, DeepSeek-V3 TP8 (kernel timing; events, graph too)"
for module in "${DSV3_MODULES[@]}"; do
  run "cublaslt_fp8_$module" "$PROFILE" --kernel cublaslt_fp8_blockscale --model deepseek_v3 --module "$module" --tp 8 \
    --m-list "$DSV3_M" --timing kernel --out "$P/scaled_mm" "${QUICK[@]}"
  for timing in kernel events graph; do
    run "scaled_mm_${module}_$timing" "$PY" -m shapescope.profile --callable torch_scaled_mm_blockscale:scaled_mm \
      --prepare torch_scaled_mm_blockscale:as_scaled_mm_arguments --name torch_scaled_mm --formats fp8_blockscale \
      --a-scales m_major --model deepseek_v3 --module "$module" --tp 8 --m-list "$DSV3_M" --timing "$timing" \
      --out "$P/scaled_mm" "${QUICK[@]}"
  done
done

step "3 torch.matmul bf16, llama3_8b gate_up TP2, every mode"
for timing in events graph kernel; do
  run "matmul_$timing" "$PY" -m shapescope.profile --callable torch_matmul_bf16:matmul --name torch_matmul \
    --model llama3_8b --module gate_up_proj --tp 2 --m-list "$LLAMA_M" --timing "$timing" --out "$P/matmul" "${QUICK[@]}"
done

step "4 Triton block-FP8 GEMM, DeepSeek-V3 TP8 gate_up and down (kernel, events, graph)"
for module in gate_up_proj down_proj; do
  for timing in kernel events graph; do
    run "triton_${module}_$timing" "$PY" -m shapescope.profile --callable triton_fp8_blockscale:gemm \
      --name triton_fp8_blockscale --formats fp8_blockscale --model deepseek_v3 --module "$module" --tp 8 \
      --m-list "$DSV3_M" --timing "$timing" --out "$P/triton" "${QUICK[@]}"
  done
done

step "5 summary"
"$PY" "$REPO/examples/python/summarize_device_run.py" "$P" "$BUILD/bin/analyze" | tee "$OUT/summary.txt"
