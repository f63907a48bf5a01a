#!/bin/bash
# One device call of the self-check (docs/self_check.md): resumes from the results committed in RESULTS_DIR,
# measures for at most BUDGET seconds, analyzes every profile, and leaves in $OUT
#   self_check.tar   RESULTS_DIR's new content: README.md (one line per call: date, GPU, build, how far),
#                    summary.md, summary.csv, self_check.json, analyses.tar.xz (what analyze wrote) and raw.tar.xz (every raw
#                    profile, compressed); extract it over RESULTS_DIR and commit
#   summary.md       the table, to read at once
#   self_check.log   what the run printed
#   bash scripts/self_check_device.sh RESULTS_DIR [BUDGET_SECONDS] [BIN_DIR]
# BUDGET (default 470) keeps the call under 9 minutes: the budget, then ~30 s of analysis and packing.
# BIN_DIR (default build/bin) holds a CUDA build of self_check; carry the SAME binary to every call of one
# self-check: the rows of another build are refused, never mixed (its git commit is in every sidecar).
# SELF_CHECK_ARGS: more self_check options, word-split (a CPU trial: "--backend cpu --no-catalog --shapes 256,256").
set -u
results=${1:?usage: scripts/self_check_device.sh RESULTS_DIR [BUDGET_SECONDS] [BIN_DIR]}
budget=${2:-470}
bin_dir=$(cd "${3:-build/bin}" && pwd) || exit 2
out=${OUT:-/tmp/self_check_out}
mkdir -p "$out"
if ! ldconfig -p | grep -q libgomp.so.1 && [ -d "$bin_dir/../devlib" ]; then
  export LD_LIBRARY_PATH="$bin_dir/../devlib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
export SHAPESCOPE_MODELS_DIR=$PWD/models
work=$(mktemp -d /tmp/self_check.XXXXXX)
# The raw profiles travel as raw.tar.xz (raw.tar.gz where this machine has no xz).
packed=raw.tar.xz
command -v xz > /dev/null || packed=raw.tar.gz
for earlier in "$results/raw.tar.xz" "$results/raw.tar.gz"; do
  if [ -f "$earlier" ]; then tar -xf "$earlier" -C "$work" || exit 1; fi
done
[ -f "$results/self_check.json" ] && cp "$results/self_check.json" "$work/"
if [ -f "$results/README.md" ]; then
  cp "$results/README.md" "$work/"
else
  printf '%s\n' "# Self-check results" "" \
    "Made by scripts/self_check_device.sh (docs/self_check.md): summary.md is the table, analyses.tar.xz holds what" \
    "analyze printed and wrote for each profile, raw.tar.xz the profiles (tar -xJf raw.tar.xz). One line per device call:" \
    "" > "$work/README.md"
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv \
  > "$out/self_check.log" 2>&1
# SIGINT past the budget (a point that hangs): the run keeps what it measured and still writes the summary.
limit=$(awk -v budget="$budget" 'BEGIN { printf "%d", budget + 90 }')
(cd "$work" && timeout -s INT -k 30 "$limit" "$bin_dir/self_check" --out . --time-budget "$budget" ${SELF_CHECK_ARGS:-}) \
  >> "$out/self_check.log" 2>&1
rc=$?
echo "self_check rc=$rc" >> "$out/self_check.log"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1)
build=$(grep -ho '"git_commit": "[^"]*"' "$work"/raw/*.json 2>/dev/null | sort -u | cut -d'"' -f4 | paste -sd' ')
echo "- $(date -u +%Y-%m-%dT%H:%MZ), ${gpu:-no GPU}, build ${build:-?}, budget ${budget} s: $(grep '^self-check: \(complete\|incomplete\)' "$out/self_check.log" | tail -n1) (rc $rc)" \
  >> "$work/README.md"
if [ -d "$work/raw" ]; then (cd "$work" && tar -caf "$packed" raw && rm -rf raw) || exit 1; fi
analyses_packed=analyses.${packed#raw.}
if [ -d "$work/analyses" ]; then (cd "$work" && tar -caf "$analyses_packed" analyses && rm -rf analyses) || exit 1; fi
tar -cf "$out/self_check.tar" -C "$work" . || exit 1
cp "$work/summary.md" "$out/" 2>/dev/null
grep -E "^self-check|^  (met|missed|n/a) " "$out/self_check.log"
ls -la "$work/$packed" "$out/self_check.tar"
rm -rf "$work"
exit $rc
