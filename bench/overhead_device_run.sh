#!/bin/bash
# Per-point sweep overhead (issue 17), from a carried build folder (builds nothing): the issue's sweep,
# profile --model llama3_8b --module gate_up_proj --tp 2 --kernel fp8_blockscale --m-range 16:8192:16, once
# per timing mode (events, graph), each into a fresh folder; the end-of-sweep summary (phase table, median
# overhead) of each lands in $OUT/overhead_<mode>.txt and the profiles in $OUT/overhead_profiles.tgz.
#   bench/overhead_device_run.sh BUILD_DIR [MODE ...]     (modes: events graph; default both)
# About 25 s per mode on an H100 (most of it the clock warm-up at M=8192).
set -u
build=${1:-build}
shift
modes=("$@")
[ ${#modes[@]} -eq 0 ] && modes=(events graph)
out=${OUT:-/tmp/overhead_out}
mkdir -p "$out"
if ! ldconfig -p | grep -q libgomp.so.1 && [ -d "$build/devlib" ]; then
  export LD_LIBRARY_PATH="$PWD/$build/devlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
profiles=$(mktemp -d)
for mode in "${modes[@]}"; do
  start=$(date +%s.%N)
  timeout 240 "$build/bin/profile" --backend cuda --model llama3_8b --module gate_up_proj --tp 2 \
    --kernel fp8_blockscale --m-range 16:8192:16 --timing "$mode" --out "$profiles/$mode" \
    > "$out/overhead_$mode.txt" 2>&1
  rc=$?
  echo "wall $(echo "$(date +%s.%N) - $start" | bc) s, rc $rc" >> "$out/overhead_$mode.txt"
  echo "== $mode (rc $rc)"
  grep -E "sweep wall|per measured point|^  [a-z_]+ +[0-9]" "$out/overhead_$mode.txt"
done
tar -czf "$out/overhead_profiles.tgz" -C "$profiles" .
