#!/bin/bash
# Per-point sweep overhead, from a carried build folder (builds nothing): a dense sweep,
# profile --model llama3_8b --module gate_up_proj --tp 2 --kernel fp8_blockscale --m-range 16:8192:16, once
# per timing mode (events, graph), then small shapes: DeepSeek-V3 TP8, every module, the cudagraph M preset,
# graph timing. Each runs into a fresh folder; its end-of-sweep summary (phase table, median overhead) lands in
# $OUT/overhead_<sweep>.txt and the profiles in $OUT/overhead_profiles.tgz.
#   bench/overhead_device_run.sh BUILD_DIR [SWEEP ...]     (sweeps: events graph decode; default all three)
# About 25 s per sweep on an H100 (most of it the clock warm-up).
set -u
build=${1:-build}
shift
modes=("$@")
[ ${#modes[@]} -eq 0 ] && modes=(events graph decode)
out=${OUT:-/tmp/overhead_out}
mkdir -p "$out"
if ! ldconfig -p | grep -q libgomp.so.1 && [ -d "$build/devlib" ]; then
  export LD_LIBRARY_PATH="$PWD/$build/devlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
profiles=$(mktemp -d)
llama=(--model llama3_8b --module gate_up_proj --tp 2 --m-range 16:8192:16)
decode=(--model deepseek_v3 --module all --tp 8 --m-preset cudagraph --timing graph)
for mode in "${modes[@]}"; do
  case $mode in
    events | graph) sweep=("${llama[@]}" --timing "$mode") ;;
    decode) sweep=("${decode[@]}") ;;
    *) echo "unknown sweep $mode (events, graph, decode)"; continue ;;
  esac
  start=$(date +%s.%N)
  timeout 240 "$build/bin/profile" --backend cuda --kernel fp8_blockscale "${sweep[@]}" --out "$profiles/$mode" \
    > "$out/overhead_$mode.txt" 2>&1
  rc=$?
  echo "wall $(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { printf "%.1f", a - b }') s, rc $rc" \
    >> "$out/overhead_$mode.txt"
  echo "== $mode (rc $rc)"
  grep -E "sweep wall|per measured point|^  [a-z_]+ +[0-9]" "$out/overhead_$mode.txt"
done
tar -czf "$out/overhead_profiles.tgz" -C "$profiles" .
