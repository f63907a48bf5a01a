#!/usr/bin/env bash
# One device call for the any-kernel examples: a .so plugin and three Python callables profiled by shapescope.
#   examples/python/device_run.sh BUILD_DIR [STEP...]   (BUILD_DIR holds bin/profile, bin/analyze, lib/*.so;
#   steps 0-6 below, all by default; each sweep resumes, so a step cut short can be run again)
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
export SHAPESCOPE_MODELS_DIR="$REPO/models"
PY=${PYTHON:-python3}
PROFILE="$BUILD/bin/profile"
QUICK=(--no-warm-up --max-seconds-per-point 0.3)
DSV3_M=4,8,16,32,64,128,256,512,1024,2048,4096
LLAMA_M=1,2,4,8,16,32,64,128,256,512,1024,2048,4096
FP4_M=1,2,4,8,16,32,64,128,256
DSV3_MODULES=(fused_qkv_a_proj q_b_proj kv_b_proj o_proj gate_up_proj down_proj moe_gate_up_proj moe_down_proj)
step() { echo "== $*" | tee -a "$OUT/logs/steps.log"; }
run() { local log=$1; shift; "$@" >"$OUT/logs/$log.log" 2>&1; local rc=$?; echo "   rc=$rc ($log)" | tee -a "$OUT/logs/steps.log"; }
pyrun() {
  local log=$1; shift
  if [ -n "$TORCH_CUPTI" ]; then SHAPESCOPE_CUPTI=$TORCH_CUPTI run "$log" "$PY" -m shapescope.profile "$@"
  else run "$log" "$PY" -m shapescope.profile "$@"; fi
}
STEPS=("${@:2}")
want() { [ ${#STEPS[@]} -eq 0 ] && return 0; local s; for s in "${STEPS[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }

# Kernel timing from Python: if torch already maps a libcupti, ours must be that same file (one CUPTI per process).
TORCH_CUPTI=$("$PY" -c "import torch
torch.cuda.init()
print(next((l.split()[-1] for l in open('/proc/self/maps') if 'libcupti' in l), ''))" 2>/dev/null)
echo "python: $("$PY" -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__)' 2>&1);" \
     "torch's CUPTI: ${TORCH_CUPTI:-none loaded}" | tee "$OUT/logs/python.log"

want 0 && step "0 GPU tests of the plugin path" && [ -x "$BUILD/bin/shapescope_gpu_tests" ] && run gpu_tests "$BUILD/bin/shapescope_gpu_tests" --gtest_filter='PluginCuda*'

want 1 && step "1 C ABI: the cuBLASLt bf16 example plugin beside the built-in cublaslt_bf16, llama3_8b gate_up TP2, every mode"
want 1 && for timing in events graph kernel; do
  run "plugin_$timing" "$PROFILE" --plugin "$BUILD/lib/libcublaslt_bf16_plugin.so" --kernel example_cublaslt_bf16 \
    --kernel cublaslt_bf16 --model llama3_8b --module gate_up_proj --tp 2 --m-list "$LLAMA_M" --timing "$timing" \
    --out "$P/plugin" "${QUICK[@]}"
done

want 2 && step "2 torch._scaled_mm block-scaled vs cublaslt_fp8_blockscale, DeepSeek-V3 TP8 (kernel timing; events, graph too)"
want 2 && for module in "${DSV3_MODULES[@]}"; do
  run "cublaslt_fp8_$module" "$PROFILE" --kernel cublaslt_fp8_blockscale --model deepseek_v3 --module "$module" --tp 8 \
    --m-list "$DSV3_M" --timing kernel --out "$P/scaled_mm" "${QUICK[@]}"
  for timing in kernel events graph; do
    pyrun "scaled_mm_${module}_$timing" --callable torch_scaled_mm_blockscale:scaled_mm \
      --prepare torch_scaled_mm_blockscale:as_scaled_mm_arguments --name torch_scaled_mm --operand-format fp8_blockscale \
      --a-scales m_major --model deepseek_v3 --module "$module" --tp 8 --m-list "$DSV3_M" --timing "$timing" \
      --out "$P/scaled_mm" "${QUICK[@]}"
  done
done

want 3 && step "3 torch.matmul bf16, llama3_8b gate_up TP2, every mode"
want 3 && for timing in events graph kernel; do
  pyrun "matmul_$timing" --callable torch_matmul_bf16:matmul --name torch_matmul \
    --model llama3_8b --module gate_up_proj --tp 2 --m-list "$LLAMA_M" --timing "$timing" --out "$P/matmul" "${QUICK[@]}"
done

want 4 && step "4 Triton block-FP8 GEMM, DeepSeek-V3 TP8 gate_up and down (kernel, events, graph)"
want 4 && for module in gate_up_proj down_proj; do
  for timing in kernel events graph; do
    pyrun "triton_${module}_$timing" --callable triton_fp8_blockscale:gemm \
      --name triton_fp8_blockscale --operand-format fp8_blockscale --model deepseek_v3 --module "$module" --tp 8 \
      --m-list "$DSV3_M" --timing "$timing" --out "$P/triton" "${QUICK[@]}"
  done
done

want 5 && step "5 Triton tl.dot_scaled MXFP4 x bf16 beside a16w4_blockscale (MXFP4) and cublaslt_bf16, Llama-3.3-70B TP2 (graph)"
want 5 && run "a16w4_mxfp4" "$PROFILE" --kernel a16w4_blockscale --kernel cublaslt_bf16 --operand-format mxfp4 \
  --model llama3_3_70b_nvfp4 --module all --tp 2 --m-list "$FP4_M" --timing graph --out "$P/dot_scaled" "${QUICK[@]}"
want 5 && pyrun "triton_dot_scaled_mxfp4" --callable triton_dot_scaled_mxfp4:gemm \
  --prepare triton_dot_scaled_mxfp4:as_gemm_arguments --name triton_dot_scaled_mxfp4 --operand-format mxfp4 \
  --model llama3_3_70b_nvfp4 --module all --tp 2 --m-list "$FP4_M" --timing graph --out "$P/dot_scaled" "${QUICK[@]}"

want 6 && step "6 summary" && "$PY" "$REPO/examples/python/summarize_device_run.py" "$P" "$BUILD/bin/analyze" | tee "$OUT/summary.txt"
