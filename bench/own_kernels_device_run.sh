#!/bin/bash
# One device call for our kernels, from a carried build folder (this script builds
# nothing): SASS check, all GPU tests, the benchmark tables (DeepSeek-V3 TP8; TP1 large +
# Qwen3 TP8; MLA batched) and fresh profiles of our kernels (DeepSeek-V3 TP8 and the
# Qwen3 FP8 MoE models at TP8, cudagraph list, beside cuBLASLt). Run from the repo root:
#   bench/own_kernels_device_run.sh BUILD_DIR
# Logs and CSVs go to $OUT (at most 8 files come back: the profiles travel as one tarball
# of the files this run wrote under profiles/<device>/).
set -u
build=${1:-build}
out=${OUT:-/tmp/own_kernels_out}
mkdir -p "$out"
if ! ldconfig -p | grep -q libgomp.so.1 && [ -d "$build/devlib" ]; then
  export LD_LIBRARY_PATH="$PWD/$build/devlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
echo "SASS matrix instructions per kernel instance (ours):"
cuobjdump --dump-sass "$build/bin/kernel_bench" 2>&1 |
  awk '/Function :/{f=$3} /QGMMA|HGMMA|HMMA|QMMA/{match($0,/(QGMMA|HGMMA|HMMA|QMMA)[.A-Z0-9_]*/); c[f" "substr($0,RSTART,RLENGTH)]++} END{for(k in c) print "  " c[k], k}' |
  grep -E "fp8_blockscale|a16w8" | sort | cut -c1-160 > "$out/sass.txt"
cat "$out/sass.txt"

timeout 240 "$build/bin/shapescope_gpu_tests" > "$out/gpu_tests.txt" 2>&1
echo "gpu tests rc=$?"; grep -E "FAIL|checks, worst|PASSED|FAILED" "$out/gpu_tests.txt" | head -20

bench="$build/bin/kernel_bench"
ms=1,2,3,4,8,16,32,64,128,256,512,1024,2048,4096
timeout 200 "$bench" --set dsv3_tp8 --ms $ms --csv "$out/bench_dsv3_tp8.csv" > "$out/bench_dsv3_tp8.txt" 2>&1
echo "dsv3 rc=$?"
timeout 200 "$bench" --set dsv3_tp1_large,qwen3_tp8 --ms 1,4,16,64,256,1024,2048,4096 --seconds-per-point 0.15 \
  --csv "$out/bench_large_qwen.csv" > "$out/bench_large_qwen.txt" 2>&1
echo "large+qwen rc=$?"
timeout 40 "$bench" --set mla_tp8 --ours a16w8_blockscale_batched --baselines cublaslt_bf16 --ms 1,2,4,8,16,32,64,128 \
  > "$out/bench_mla.txt" 2>&1
echo "mla rc=$?"
for f in bench_dsv3_tp8 bench_large_qwen bench_mla; do echo "== $f"; sed -n '/per shape and M band/,$p' "$out/$f.txt"; done

device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1 | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]\+/_/g; s/^_//; s/_$//')
dir=profiles/$device
mkdir -p "$dir/logs"
marker=$(mktemp)
profile=("$build/bin/profile" --backend cuda --m-preset cudagraph --no-warm-up --max-seconds-per-point 0.1 --out "$dir")
timeout -s INT -k 20 120 "${profile[@]}" --model deepseek_v3 --module all --tp 8 --kernel fp8_blockscale \
  --kernel fp8_blockscale_bpreshuffle > "$dir/logs/own_kernels.log" 2>&1
echo "profile deepseek_v3 rc=$?"
: > "$dir/logs/qwen3.log"
for model in qwen3_235b_a22b qwen3_coder_480b_a35b; do
  timeout -s INT -k 20 60 "${profile[@]}" --model $model --module all --tp 8 --cut-scale-block allow \
    --kernel fp8_blockscale --kernel fp8_blockscale_bpreshuffle --kernel cublaslt_fp8_blockscale >> "$dir/logs/qwen3.log" 2>&1
  echo "profile $model rc=$?"
done
find "$dir" -type f -newer "$marker" | tar -czf "$out/profiles.tgz" -T -
tar -tzf "$out/profiles.tgz" | wc -l
