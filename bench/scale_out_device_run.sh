#!/bin/bash
# The scale-out device run (two or more GPUs), from a carried build folder (it builds nothing):
# the cudagraph-preset DeepSeek-V3 TP8 sweep of every CUDA kernel on one GPU, then with --gpus all;
# checks that both hold the same (file, M) points, prints both wall times and the speedup, the shards each
# GPU took from the work queue with the per-worker table (start-up, busy, idle at the end), each GPU's
# copy bandwidth (kernel_bench), peak, clock and UUID (the shards' sidecars), and an analyze --compare
# of GPU 0 against GPU 1 on one identical sweep measured on each at the same time.
#   bench/scale_out_device_run.sh BUILD_DIR        (outputs in $OUT)
# Sampling is lighter than a study profile's (SAMPLE_ARGS) and every step is capped (one GPU 240 s, all GPUs
# 150 s, copy rates 2 x 20 s, GPU compare 40 s: at most 7.8 minutes); a capped sweep stops with its points saved and
# the point sets then differ: narrow the kernels with KERNEL_ARGS (e.g. "--kernel fp8_blockscale").
set -u
build=${1:-build}
out=${OUT:-/tmp/scale_out}
mkdir -p "$out"
export SHAPESCOPE_LOCK_DIR="$out/locks"
if ! ldconfig -p | grep -q libgomp.so.1 && [ -d "$build/devlib" ]; then
  export LD_LIBRARY_PATH="$PWD/$build/devlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
profile="$build/bin/profile"
analyze="$build/bin/analyze"
bench="$build/bin/kernel_bench"
nvidia-smi --query-gpu=index,name,uuid,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
gpus=$(nvidia-smi -L | wc -l)
sample_args=${SAMPLE_ARGS:---no-warm-up --warmup 1 --min-samples 3 --max-samples 30 --max-seconds-per-point 0.05 --target-rel-stderr 0.01}
sweep="--model deepseek_v3 --module all --tp 8 --m-preset cudagraph $sample_args ${KERNEL_ARGS:-}"
now() { date +%s.%N; }
since() { awk -v a="$(now)" -v b="$1" 'BEGIN { printf "%.1f", a - b }'; }

echo "== copy bandwidth per GPU (kernel_bench, 1 GiB device-to-device copies)"
for ((gpu = 0; gpu < gpus; ++gpu)); do
  if [ -x "$bench" ]; then
    CUDA_VISIBLE_DEVICES=$gpu timeout 20 "$bench" --shapes deepseek_v3:8:o_proj --ms 1 --ours fp8_blockscale \
      --baselines cublaslt_fp8_blockscale --timings events --seconds-per-point 0.02 2>&1 | grep -m1 "copy" | sed "s/^/GPU $gpu: /"
  fi
done

echo "== one GPU"
start=$(now)
CUDA_VISIBLE_DEVICES=0 timeout -s INT 240 "$profile" $sweep --out "$out/one_gpu" > "$out/one_gpu.txt" 2>&1
one_rc=$?
one_s=$(since "$start")
echo "rc=$one_rc wall ${one_s} s"; tail -2 "$out/one_gpu.txt"

echo "== --gpus all ($gpus GPUs)"
start=$(now)
timeout -s INT 150 "$profile" $sweep --gpus all --out "$out/all_gpus" > "$out/all_gpus.txt" 2>&1
all_rc=$?
all_s=$(since "$start")
echo "rc=$all_rc wall ${all_s} s"; grep -E "worker process|died|^merge:" "$out/all_gpus.txt" | tail -6
# Where the time went: the shards each GPU measured, then the per-worker table and the run's phases.
grep -E "measured shard" "$out/all_gpus.txt" | tail -80
sed -n '/^worker  /,/^wall /p' "$out/all_gpus.txt"

points() {  # "file M" of every row of the CSVs at the top of $1
  for csv in "$1"/*.csv; do awk -F, -v f="$(basename "$csv")" 'NR > 1 { print f, $1 }' "$csv"; done | sort
}
points "$out/one_gpu" > "$out/one_gpu.points"
points "$out/all_gpus" > "$out/all_gpus.points"
if [ -s "$out/one_gpu.points" ] && cmp -s "$out/one_gpu.points" "$out/all_gpus.points"; then
  echo "point sets: identical ($(wc -l < "$out/one_gpu.points") points)"
else
  echo "point sets: DIFFER ($(wc -l < "$out/one_gpu.points") vs $(wc -l < "$out/all_gpus.points") points)"
  diff "$out/one_gpu.points" "$out/all_gpus.points" | head -10
fi
awk -v one="$one_s" -v all="$all_s" 'BEGIN { s = one / all; printf "wall: one GPU %s s, all GPUs %s s, speedup x%.2f (%s the 1.8x target)\n", one, all, s, (s >= 1.8 ? "meets" : "BELOW") }'

echo "== each shard's GPU (UUID, copy rate measured at open, clock at start, peak) from the sidecars"
for shard in "$out"/all_gpus/shard-*; do
  sidecar=$(ls "$shard"/*.json 2>/dev/null | grep -v shard.json | head -1)
  [ -n "$sidecar" ] || continue
  echo "$(basename "$shard"): $(grep -m1 -o '"uuid": "[^"]*"' "$sidecar") $(grep -m1 -o '"copy_tb_per_s": [0-9.]*' "$sidecar")" \
    "$(grep -m1 -o '"sm_clock_mhz": [0-9.]*' "$sidecar")" \
    "$(grep -A3 '"peak"' "$sidecar" | grep -m1 -o '"tflops": [0-9.]*')"
done

echo "== GPU 0 against GPU 1: one identical sweep on each, measured at the same time"
compare_sweep="--model deepseek_v3 --module gate_up_proj --tp 8 --m-preset cudagraph --kernel cublaslt_fp8_blockscale --no-warm-up --max-seconds-per-point 0.2"
for gpu in 0 1; do
  CUDA_VISIBLE_DEVICES=$gpu timeout -s INT 40 "$profile" $compare_sweep --out "$out/gpu$gpu" > "$out/gpu$gpu.txt" 2>&1 &
done
wait
file=$(basename "$(ls "$out"/gpu0/*.csv | head -1)")
"$analyze" --compare "$out/gpu0/$file" "$out/gpu1/$file" > "$out/compare_gpu0_gpu1.txt" 2>&1
head -8 "$out/compare_gpu0_gpu1.txt"
cd "$out" && tar czf profiles.tgz one_gpu all_gpus gpu0 gpu1 && rm -rf one_gpu all_gpus gpu0 gpu1 locks
