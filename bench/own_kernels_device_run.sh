#!/bin/bash
# The device run for our kernels, from a carried build folder (this script builds
# nothing). Steps (default: all): tests (all GPU tests), bench (kernel_bench in every
# timing mode on DeepSeek-V3 TP8, TP1 gate_up/down, the MLA batches), ncu (Nsight
# Compute's gpu__time_duration on a few points), ncu_kernel (kernel timing against ncu, point by point), profiles
# (DeepSeek-V3 TP8 cudagraph list with graph timing, every FP8 kernel and bf16; TP1),
# llama (llama3_8b gate_up TP2, M 16..8192 step 16, our kernel: its own triage), capture_llama
# and capture_dsv3 (every module, M 1..512 step 1, graph timing, into capture/: the grid analyze
# --capture-sizes needs).
#   bench/own_kernels_device_run.sh BUILD_DIR [step,step...]
# Logs and CSVs go to $OUT (at most 8 files come back: profiles travel as one tarball, paths from profiles/).
set -u
build=${1:-build}
steps=${2:-tests,bench,ncu,profiles,llama}
out=${OUT:-/tmp/own_kernels_out}
mkdir -p "$out"
has() { [[ ",$steps," == *",$1,"* ]]; }
if ! ldconfig -p | grep -q libgomp.so.1 && [ -d "$build/devlib" ]; then
  export LD_LIBRARY_PATH="$PWD/$build/devlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
for dir in /usr/local/cuda/extras/CUPTI/lib64 /usr/local/cuda/lib64; do
  [ -e "$dir/libcupti.so" ] && export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" && break
done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
bench="$build/bin/kernel_bench"

if has tests; then
  timeout 150 "$build/bin/shapescope_gpu_tests" > "$out/gpu_tests.txt" 2>&1
  echo "gpu tests rc=$?"; grep -E "^\[  FAILED|checks, worst|PASSED|FAILED|us per launch|kernel .* us, events|hot .* graph" "$out/gpu_tests.txt" | head -40
fi
if has bench; then
  ms=1,2,3,4,8,16,32,64,128,256,512,1024,2048,4096
  timeout 330 "$bench" --shapes deepseek_v3:8 --ms $ms --ours fp8_blockscale --seconds-per-point 0.15 \
    --csv "$out/bench_dsv3_tp8.csv" > "$out/bench_dsv3_tp8.txt" 2>&1
  echo "dsv3 rc=$?"
  timeout 150 "$bench" --shapes deepseek_v3:1:gate_up_proj,deepseek_v3:1:down_proj --ms 1,2,4,16,64,256,1024,4096 \
    --ours fp8_blockscale --seconds-per-point 0.1 --timings events,graph,graph+pdl,kernel \
    --csv "$out/bench_tp1.csv" > "$out/bench_tp1.txt" 2>&1
  echo "tp1 rc=$?"
  timeout 60 "$bench" --shapes deepseek_v3:8:mla_absorb_q,deepseek_v3:8:mla_absorb_out --ours a16w8_blockscale_batched \
    --baselines cublaslt_bf16 --ms 1,2,4,8,16,32,64,128 --timings events,graph,kernel > "$out/bench_mla.txt" 2>&1
  echo "mla rc=$?"
  for f in bench_dsv3_tp8 bench_tp1 bench_mla; do echo "== $f"; sed -n '/pooled over shapes/,$p' "$out/$f.txt"; done
fi
if has ncu; then
  # Nsight Compute's kernel durations (caches flushed, clocks unlocked) on a few points, to set beside kernel timing.
  ncu_profile=("$build/bin/profile" --backend cuda --model deepseek_v3 --tp 8 --m-list 16,64 --timing events
    --warmup 0 --min-samples 1 --max-samples 1 --no-warm-up --out /tmp/ncu_profiles)
  for module in gate_up_proj kv_b_proj; do
    timeout 120 ncu --metrics gpu__time_duration.sum --cache-control all --clock-control none --csv \
      -k regex:'fp8_blockscale_kernel|nvjet|splitK|sm90_xmma|cutlass' "${ncu_profile[@]}" --module $module \
      --kernel fp8_blockscale --kernel cublaslt_fp8_blockscale > "$out/ncu_$module.csv" 2>&1
    echo "ncu $module rc=$?"
  done
fi

if has ncu_kernel; then
  # Kernel timing against Nsight Compute's gpu__time_duration, point by point (small and large kernels):
  # a profile --timing kernel run, then ncu over the same GEMM; bench/ncu_vs_kernel_timing.py sets them side by side.
  nk=/tmp/ncu_vs_kernel; rm -rf "$nk"; mkdir -p "$nk"
  for point in "deepseek_v3 8 kv_b_proj 16" "deepseek_v3 8 kv_b_proj 1024" "deepseek_v3 8 gate_up_proj 16" \
    "deepseek_v3 8 gate_up_proj 2048" "deepseek_v3 1 gate_up_proj 64" "deepseek_v3 1 gate_up_proj 4096" \
    "deepseek_v3 1 down_proj 512"; do
    read -r model tp module m <<< "$point"
    for kernel in fp8_blockscale cublaslt_fp8_blockscale; do
      tag="${model}_tp${tp}_${module}_M${m}_${kernel}"
      point_args=(--backend cuda --model "$model" --tp "$tp" --module "$module" --m-list "$m" --kernel "$kernel")
      timeout 60 "$build/bin/profile" "${point_args[@]}" --timing kernel --no-warm-up --max-seconds-per-point 0.2 \
        --out "$nk/$tag.kernel" > /dev/null 2>&1
      timeout 90 ncu --metrics gpu__time_duration.sum --cache-control all --clock-control none --csv \
        -k regex:'fp8_blockscale_kernel|nvjet|splitK|sm90_xmma|cutlass|gemm' "$build/bin/profile" "${point_args[@]}" \
        --timing events --warmup 0 --min-samples 1 --max-samples 1 --no-warm-up --out "$nk/$tag.ncu_profile" \
        > "$nk/$tag.ncu.csv" 2>&1
    done
  done
  python3 bench/ncu_vs_kernel_timing.py "$nk" | tee "$out/ncu_vs_kernel.txt"
fi

device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1 | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]\+/_/g; s/^_//; s/_$//')
# A fresh folder: files of an earlier build are not resumed (the measurement fingerprint holds the build).
fresh=$(mktemp -d)
dir=$fresh/profiles/$device
mkdir -p "$dir/logs"
base=("$build/bin/profile" --backend cuda --no-warm-up --max-seconds-per-point 0.1)
profile=("${base[@]}" --out "$dir")
if has profiles; then
  timeout -s INT -k 10 150 "${profile[@]}" --m-preset cudagraph --model deepseek_v3 --module all --tp 8 \
    --kernel fp8_blockscale --kernel fp8_blockscale_bpreshuffle --kernel cublaslt_fp8_blockscale --kernel cublaslt_bf16 \
    > "$dir/logs/graph_dsv3_tp8.log" 2>&1
  echo "profile deepseek_v3 tp8 rc=$?"
  for module in mla_absorb_q mla_absorb_out; do
    timeout -s INT -k 20 30 "${profile[@]}" --m-preset cudagraph --model deepseek_v3 --module $module --tp 8 \
      --kernel a16w8_blockscale_batched --kernel cublaslt_bf16 >> "$dir/logs/graph_dsv3_tp8.log" 2>&1
    echo "profile deepseek_v3 tp8 $module rc=$?"
  done
  for module in gate_up_proj down_proj q_b_proj; do
    timeout -s INT -k 20 60 "${profile[@]}" --m-preset cudagraph --model deepseek_v3 --module $module --tp 1 \
      --kernel fp8_blockscale --kernel cublaslt_fp8_blockscale >> "$dir/logs/graph_dsv3_tp1.log" 2>&1
    echo "profile deepseek_v3 tp1 $module rc=$?"
  done
fi
if has llama; then
  timeout -s INT -k 20 150 "${profile[@]}" --timing graph --m-range 16:8192:16 --model llama3_8b --module gate_up_proj \
    --tp 2 --kernel fp8_blockscale > "$dir/logs/graph_llama3_8b.log" 2>&1
  echo "profile llama rc=$?"
fi
if has capture_llama; then
  timeout -s INT -k 20 200 "${base[@]}" --out "$dir/capture" --timing graph --m-range 1:512:1 --model llama3_8b \
    --module all --tp 2 \
    --kernel fp8_blockscale --kernel cublaslt_fp8_blockscale > "$dir/logs/capture_llama3_8b_tp2.log" 2>&1
  echo "profile llama capture grid rc=$?"; tail -3 "$dir/logs/capture_llama3_8b_tp2.log"
fi
if has capture_dsv3; then
  timeout -s INT -k 20 450 "${base[@]}" --out "$dir/capture" --timing graph --m-range 1:512:1 --model deepseek_v3 \
    --module all --tp 8 \
    --kernel fp8_blockscale --kernel cublaslt_fp8_blockscale --kernel a16w8_blockscale_batched \
    > "$dir/logs/capture_dsv3_tp8.log" 2>&1
  echo "profile deepseek_v3 capture grid rc=$?"; tail -3 "$dir/logs/capture_dsv3_tp8.log"
fi
tar -czf "$out/profiles.tgz" -C "$fresh" profiles
tar -tzf "$out/profiles.tgz" | wc -l
