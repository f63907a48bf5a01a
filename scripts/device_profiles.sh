#!/usr/bin/env bash
# The issue-4 profile sets, run on the device from a carried build folder (this
# script builds nothing). Each set is one or more `profile` runs into OUT_DIR;
# an interrupted or repeated call resumes (points already in a CSV are skipped),
# so a set too long for one device call can simply be called again.
#
# Usage: scripts/device_profiles.sh BUILD_DIR OUT_DIR SET... [-- extra profile options]
#   SET: llama      llama3_8b gate_up_proj TP2 (N=14336, K=4096), fairyspeed preset, cublaslt_bf16
#        deepseek   DeepSeek-V3 TP8, all modules, cudagraph + large presets,
#                   cublaslt_fp8_blockscale and cublaslt_bf16
#        all        both
# Example (device call): scripts/device_profiles.sh build-cuda $OUT/profiles deepseek -- --repeat 1
set -uo pipefail
build=${1:?build folder, e.g. build-cuda}
out=${2:?output folder, e.g. \$OUT/profiles}
shift 2
sets=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do sets+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
extra=("$@")
[ ${#sets[@]} -gt 0 ] || { echo "name a set: llama, deepseek or all" >&2; exit 2; }
# The device image may lack OpenMP's runtime: fall back on the copy carried in BUILD_DIR/devlib.
if ! ldconfig -p | grep -q libgomp.so.1 && [ -d "$build/devlib" ]; then
  export LD_LIBRARY_PATH="$PWD/$build/devlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
profile="$build/bin/profile"
mkdir -p "$out"
status=0
run() { echo "+ profile $*" >&2; "$profile" --backend cuda --out "$out" "$@" "${extra[@]}" || status=1; }
for set in "${sets[@]}"; do
  case "$set" in
    llama|all)
      run --model llama3_8b --module gate_up_proj --tp 2 --kernel cublaslt_bf16 --m-preset fairyspeed ;;&
    deepseek|all)
      for preset in cudagraph large; do
        run --model deepseek_v3 --module all --tp 8 --kernel cublaslt_fp8_blockscale --kernel cublaslt_bf16 \
          --m-preset "$preset"
      done ;;
    llama) ;;
    *) echo "unknown set '$set': llama, deepseek or all" >&2; exit 2 ;;
  esac
done
exit $status
