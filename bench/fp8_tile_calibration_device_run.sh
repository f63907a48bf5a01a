#!/bin/bash
# Ground truth for the fp8_blockscale cost model: every tile shape forced in turn
# (SHAPESCOPE_FP8_ROW_GROUPS / SHAPESCOPE_FP8_BLOCK_N; the split stays the model's choice
# within the tile), graph timing, on the shapes whose profiles showed tile-switch anomalies.
# One folder per forced tile, as profiles/<device>/calibration/<tile>/ in $OUT/calibration.tgz.
# Step `splits` forces instead the decode tile (64 rows) with every split-K 1..8 on every
# DeepSeek-V3 TP8 module at decode sizes, cuBLASLt alongside (calibration/decode_split<S>/).
#   bench/fp8_tile_calibration_device_run.sh BUILD_DIR [tiles|splits]
set -u
build=${1:-build}
step=${2:-tiles}
out=${OUT:-/tmp/calibration_out}
mkdir -p "$out"
if ! ldconfig -p | grep -q libgomp.so.1 && [ -d "$build/devlib" ]; then
  export LD_LIBRARY_PATH="$PWD/$build/devlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
device=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1 | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9]\+/_/g; s/^_//; s/_$//')
fresh=$(mktemp -d)
root=$fresh/profiles/$device/calibration
mkdir -p "$root/logs"
ms=$( (seq 16 16 1024; seq 1152 128 4096) | paste -sd,)
shapes=("deepseek_v3 1 gate_up_proj" "deepseek_v3 1 down_proj" "deepseek_v3 8 fused_qkv_a_proj"
  "deepseek_v3 8 gate_up_proj" "deepseek_v3 8 down_proj" "llama3_8b 2 gate_up_proj")
if [ "$step" = splits ]; then
  for split in 1 2 3 4 5 6 7 8; do
    SHAPESCOPE_FP8_ROW_GROUPS=1 SHAPESCOPE_FP8_SPLIT_K=$split timeout -s INT -k 10 60 \
      "$build/bin/profile" --backend cuda --no-warm-up --max-seconds-per-point 0.05 --timing graph \
      --model deepseek_v3 --tp 8 --module all --kernel fp8_blockscale --m-list 1,4,16,32,64 \
      --out "$root/decode_split$split" >> "$root/logs/decode_splits.log" 2>&1
    echo "decode split $split rc=$?"
  done
  timeout -s INT -k 10 60 "$build/bin/profile" --backend cuda --no-warm-up --max-seconds-per-point 0.05 \
    --timing graph --model deepseek_v3 --tp 8 --module all --kernel cublaslt_fp8_blockscale --m-list 4,16,32,64 \
    --out "$root/decode_cublaslt" >> "$root/logs/decode_splits.log" 2>&1
  echo "decode cublaslt rc=$?"
fi
[ "$step" = tiles ] && for tile in "1 128" "2 128" "3 128" "2 256"; do
  read -r rows n <<< "$tile"
  dir=$root/rg${rows}_n${n}
  for shape in "${shapes[@]}"; do
    read -r model tp module <<< "$shape"
    SHAPESCOPE_FP8_ROW_GROUPS=$rows SHAPESCOPE_FP8_BLOCK_N=$n timeout -s INT -k 10 ${CALIBRATION_SECONDS:-50} \
      "$build/bin/profile" --backend cuda --no-warm-up --max-seconds-per-point 0.05 --timing graph \
      --model "$model" --tp "$tp" --module "$module" --kernel fp8_blockscale --m-list "$ms" --out "$dir" \
      >> "$root/logs/rg${rows}_n${n}.log" 2>&1
    echo "tile rg$rows n$n $model tp$tp $module rc=$?"
  done
done
tar -czf "$out/calibration.tgz" -C "$fresh" profiles
tar -tzf "$out/calibration.tgz" | wc -l
