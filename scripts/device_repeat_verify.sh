#!/usr/bin/env bash
# Device check of issue 7's steady-state sweep and issue 6's plan verification, from a
# carried build folder: a llama3_8b gate_up_proj TP2 cudagraph sweep with --repeat
# (warm-up included), analyze's study-rule plans on it, then profile --verify-plans.
# Usage: scripts/device_repeat_verify.sh BUILD_DIR OUT_DIR [passes]
set -uo pipefail
build=${1:?build folder, e.g. build-cuda}
out=${2:?output folder}
passes=${3:-2}
mkdir -p "$out"
if ! ldconfig -p | grep -q libgomp.so.1 && [ -d "$build/devlib" ]; then
  export LD_LIBRARY_PATH="$PWD/$build/devlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
status=0
"$build/bin/profile" --backend cuda --model llama3_8b --module gate_up_proj --tp 2 --kernel cublaslt_bf16 \
  --m-preset cudagraph --repeat "$passes" --out "$out/profiles" 2>&1 | tee "$out/repeat_verify.log" || status=1
"$build/bin/analyze" --rule study --check-split-gemm --json "$out/report.json" --out-dir "$out/analysis" \
  "$out"/profiles/*.csv 2>&1 | tail -n 30 | tee -a "$out/repeat_verify.log" || status=1
"$build/bin/profile" --verify-plans "$out/report.json" --verify-max-plans 4 2>&1 | tee -a "$out/repeat_verify.log" ||
  status=1
exit $status
