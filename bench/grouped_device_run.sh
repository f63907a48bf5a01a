#!/bin/bash
# The device run for grouped GEMMs (MoE experts), from a carried build folder (this script
# builds nothing). Steps (default: all):
#   tests     the grouped GPU tests and our dense kernels' (the kernel body now takes a schedule)
#   bench     grouped_bench: decode/prefill loads, DeepGEMM's H800 problems, nvfp4_targets (graph timing)
#   profiles  DeepSeek-V3 and Qwen3-235B experts at EP8, cudagraph M list (graph timing): uniform and
#             lognormal:1.0 routing contiguous (align 128), lognormal:1.0 masked; every grouped kernel
#   analyze   analyze --check-split-gemm over the DeepSeek-V3 profiles (layout plans) and --compare
#             uniform vs lognormal
#   bash bench/grouped_device_run.sh BUILD_DIR [step,step...]
# Logs and CSVs go to $OUT (profiles travel as one tarball).
set -u
build=${1:-build}
steps=${2:-tests,bench,profiles,analyze}
out=${OUT:-/tmp/grouped_out}
mkdir -p "$out"
has() { [[ ",$steps," == *",$1,"* ]]; }
if ! ldconfig -p | grep -q libgomp.so.1 && [ -d "$build/devlib" ]; then
  export LD_LIBRARY_PATH="$PWD/$build/devlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv

if has tests; then
  timeout 300 "$build/bin/shapescope_gpu_tests" --gtest_filter='*Grouped*:OwnKernels.*' > "$out/gpu_tests.txt" 2>&1
  echo "gpu tests rc=$?"; grep -E "^\[  FAILED|FAIL |checks, worst|PASSED|FAILED|per run in a graph" "$out/gpu_tests.txt" | head -40
fi
if has bench; then
  timeout 400 "$build/bin/grouped_bench" --csv "$out/grouped_bench.csv" > "$out/grouped_bench.txt" 2>&1
  echo "grouped_bench rc=$?"; cat "$out/grouped_bench.txt"
fi

device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1 | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]\+/_/g; s/^_//; s/_$//')
dir=profiles/$device
mkdir -p "$dir/logs"
marker=$(mktemp)
profile=("$build/bin/profile" --backend cuda --no-warm-up --max-seconds-per-point 0.1 --m-preset cudagraph --out "$dir"
  --module experts --ep 8)
if has profiles; then
  for routing in uniform lognormal:1.0; do
    timeout -s INT -k 10 130 "${profile[@]}" --model deepseek_v3 --routing $routing >> "$dir/logs/grouped_dsv3_ep8.log" 2>&1
    echo "profile deepseek_v3 ep8 $routing contiguous rc=$?"
  done
  timeout -s INT -k 10 130 "${profile[@]}" --model deepseek_v3 --routing lognormal:1.0 --layout masked \
    >> "$dir/logs/grouped_dsv3_ep8.log" 2>&1
  echo "profile deepseek_v3 ep8 lognormal masked rc=$?"
  timeout -s INT -k 10 100 "${profile[@]}" --model qwen3_235b_a22b --routing lognormal:1.0 \
    >> "$dir/logs/grouped_qwen3_235b_ep8.log" 2>&1
  echo "profile qwen3_235b_a22b ep8 lognormal contiguous rc=$?"
  find "$dir" -type f -newer "$marker" | tar -czf "$out/grouped_profiles.tgz" -T -
  tar -tzf "$out/grouped_profiles.tgz" | wc -l
fi
if has analyze; then
  for module in moe_gate_up_proj moe_down_proj; do
    "$build/bin/analyze" "$dir"/deepseek_v3_${module}_ep8_*_fp8_blockscale_grouped_graph.csv --check-split-gemm \
      --out-dir "$out/analysis" > "$out/analyze_$module.txt" 2>&1
    echo "analyze $module rc=$?"; grep -E "grouped:|layout plans|M=" "$out/analyze_$module.txt" | head -20
    "$build/bin/analyze" --compare "$dir"/deepseek_v3_${module}_ep8_*_uniform_contiguous128_fp8_blockscale_grouped_graph.csv \
      "$dir"/deepseek_v3_${module}_ep8_*_lognormal1_contiguous128_fp8_blockscale_grouped_graph.csv \
      > "$out/compare_routing_$module.txt" 2>&1
    echo "compare $module rc=$?"; head -4 "$out/compare_routing_$module.txt"
  done
fi
