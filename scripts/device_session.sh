#!/usr/bin/env bash
# The measurements committed under profiles/<device>/, in one device call, from a
# carried build folder (this script builds nothing). Steps run in order, each under a
# time cap (profile stops cleanly on SIGINT and resumes next time); after every step
# the results are packed into OUT_DIR/results.tar.gz, so a cut-off call loses nothing.
#   1 llama3_8b gate_up_proj TP2, fairyspeed preset, cublaslt_bf16 (resumes a partial CSV)
#   2 GPU tests
#   3 our kernels on DeepSeek-V3 TP8 (cudagraph preset)
#   4 Qwen3 FP8 MoE models at TP8: ours normal + pre-shuffled vs cuBLASLt block-scaled
#   5 drift: the same llama sweep twice with --repeat 3 (M = 64..8192 step 64)
#   6 plans: analyze the llama profile, verify its plans on the GPU
#   7 kernel_bench: ours vs cuBLASLt (DeepSeek-V3 TP8 and TP1 large, MLA batched)
# Usage: scripts/device_session.sh BUILD_DIR OUT_DIR [STEP...]   (default: all steps)
set -uo pipefail
build=${1:?build folder, e.g. build}
out=${2:?output folder, e.g. \$OUT}
shift 2
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(1 2 3 4 5 6 7)
if ! ldconfig -p | grep -q libgomp.so.1 && [ -d "$build/devlib" ]; then
  export LD_LIBRARY_PATH="$PWD/$build/devlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1 | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]\+/_/g; s/^_//; s/_$//')
dir=profiles/$device
logs=$dir/logs
mkdir -p "$out" "$logs"
profile=("$build/bin/profile" --backend cuda)  # an array: timeout cannot run a function
capped() {  # capped SECONDS LOG command...
  local seconds=$1 log=$2
  shift 2
  echo "+ $* (cap ${seconds}s)" | tee -a "$logs/$log"
  timeout -s INT -k 20 "$seconds" "$@" >>"$logs/$log" 2>&1
  echo "  rc=$?" | tee -a "$logs/$log"
}
pack() { tar -czf "$out/results.tar.gz" "$dir"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv >"$logs/gpu.txt"
qwen=(--cut-scale-block allow --m-preset cudagraph --no-warm-up --max-seconds-per-point 0.1)
for step in "${steps[@]}"; do
  case $step in
    1) capped 170 llama.log "${profile[@]}" --model llama3_8b --module gate_up_proj --tp 2 --kernel cublaslt_bf16 \
         --m-preset fairyspeed --max-seconds-per-point 0.2 --max-samples 300 --out "$dir" ;;
    2) capped 110 gpu_tests.log "$build/bin/shapescope_gpu_tests" ;;
    3) capped 90 own_kernels.log "${profile[@]}" --model deepseek_v3 --module all --tp 8 --kernel fp8_blockscale \
         --kernel fp8_blockscale_bpreshuffle --m-preset cudagraph --no-warm-up --max-seconds-per-point 0.1 --out "$dir"
       for module in mla_absorb_q mla_absorb_out; do
         capped 20 own_kernels.log "${profile[@]}" --model deepseek_v3 --module $module --tp 8 \
           --kernel a16w8_blockscale_batched --m-preset cudagraph --no-warm-up --out "$dir"
       done ;;
    4) for model in qwen3_235b_a22b qwen3_coder_480b_a35b; do
         capped 45 qwen3.log "${profile[@]}" --model $model --module all --tp 8 --kernel fp8_blockscale \
           --kernel fp8_blockscale_bpreshuffle --kernel cublaslt_fp8_blockscale "${qwen[@]}" --out "$dir"
       done ;;
    5) for run in 1 2; do
         capped 45 repeat.log "${profile[@]}" --model llama3_8b --module gate_up_proj --tp 2 --kernel cublaslt_bf16 \
           --m-range 64:8192:64 --repeat 3 --max-seconds-per-point 0.1 --out "$dir/repeat_run$run"
       done ;;
    6) llama=$(ls "$dir"/llama3_8b_gate_up_proj_tp2_N14336_K4096_cublaslt_bf16.csv)
       capped 30 verify.log "$build/bin/analyze" "$llama" --check-split-gemm --json "$dir/llama_gate_up_report.json" \
         --out-dir "$dir/analysis"
       capped 60 verify.log "${profile[@]}" --verify-plans "$dir/llama_gate_up_report.json" --verify-max-plans 6 \
         --verify-out "$dir/llama_gate_up_verify.json" ;;
    7) capped 100 kernel_bench.log "$build/bin/kernel_bench" --shapes deepseek_v3:8,deepseek_v3:1:down_proj,deepseek_v3:1:q_b_proj,deepseek_v3:1:gate_up_proj \
         --ms 1,4,16,64,256,1024,4096 --seconds-per-point 0.1 --csv "$dir/kernel_bench_dsv3_tp8.csv"
       capped 20 kernel_bench.log "$build/bin/kernel_bench" --shapes deepseek_v3:8:mla_absorb_q,deepseek_v3:8:mla_absorb_out --ours a16w8_blockscale_batched \
         --baselines cublaslt_bf16 --ms 1,2,4,8,16,32,64,128 --csv "$dir/kernel_bench_mla.csv" ;;
    *) echo "unknown step $step" >&2 ;;
  esac
  pack
done
