#!/usr/bin/env bash
# The main job: profile llama3_8b gate_up_proj at TP2 (N=14336, K=4096) on the
# best backend present (CUDA with the study's fairyspeed sweep, else the CPU with
# the small cpu sweep), then look for MFU regressions and split-GEMM plans.
# Extra arguments go to `profile` (e.g. --kernel cpu_bf16, --out DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

summary=$(mktemp)
trap 'rm -f "$summary"' EXIT
build/bin/profile --model llama3_8b --module gate_up_proj --tp 2 "$@" | tee "$summary"
out_dir=$(sed -n 's/^profiles in //p' "$summary")

for csv in "$out_dir"/llama3_8b_gate_up_proj_tp2_N14336_K4096_*.csv; do
  echo "== analyze $csv"
  build/bin/analyze "$csv" --check-split-gemm
done
