#!/usr/bin/env bash
# The issue-4 profile sets, run on the device from a carried build folder (this
# script builds nothing). CSVs and sidecars are written to a scratch folder and
# packed into OUT_DIR/profiles.tar.gz with the log (a device call returns at most
# 8 files). Sweeps stop cleanly (SIGINT: measured points saved) once PROFILES_SECONDS
# (default 540) have passed, so the tarball is written inside a 600 s device call.
# A set too long for one call is resumed: carry the last tarball and name it in
# PROFILES_RESUME; points already in its CSVs are skipped.
#
# Usage: [PROFILES_RESUME=path.tar.gz] [PROFILES_SECONDS=540] scripts/device_profiles.sh BUILD_DIR OUT_DIR SET...
#        [-- profile options]
#   SET: llama      llama3_8b gate_up_proj TP2 (N=14336, K=4096), fairyspeed preset, cublaslt_bf16
#        deepseek   DeepSeek-V3 TP8, all modules, cudagraph + large presets,
#                   cublaslt_fp8_blockscale and cublaslt_bf16
#        all        both
# Example device call: scripts/device_profiles.sh build-cuda $OUT deepseek
#   (carry build-cuda/bin and build-cuda/devlib); here: tar -xzf profiles.tar.gz -C profiles/<device>/
set -uo pipefail
build=${1:?build folder, e.g. build-cuda}
out=${2:?output folder, e.g. \$OUT}
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
work=$(mktemp -d /tmp/shapescope_profiles.XXXXXX)
[ -n "${PROFILES_RESUME:-}" ] && tar -xzf "$PROFILES_RESUME" -C "$work"
mkdir -p "$out"
log="$out/device_profiles.log"
status=0
deadline=$(( $(date +%s) + ${PROFILES_SECONDS:-540} ))
run() {
  local left=$(( deadline - $(date +%s) ))
  if [ "$left" -le 5 ]; then echo "- skipped (time is up): profile $*" | tee -a "$log" >&2; status=1; return; fi
  echo "+ profile $*" | tee -a "$log" >&2
  timeout -s INT -k 30 "$left" "$build/bin/profile" --backend cuda --out "$work" "$@" "${extra[@]}" 2>&1 |
    tee -a "$log" || status=1
}
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
tar -czf "$out/profiles.tar.gz" -C "$work" . || status=1
exit $status
