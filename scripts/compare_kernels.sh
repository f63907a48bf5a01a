#!/usr/bin/env bash
# Kernel-against-kernel tables for a profile folder: for every shape profiled with both
# kernels A and B, `analyze --compare A.csv B.csv` (B's speedup over A per M), all in one
# file, then the per-model pooling of the per-shape headlines (geometric mean weighted by
# points) appended to a summary file.
# Usage: scripts/compare_kernels.sh PROFILE_DIR KERNEL_A KERNEL_B OUT.txt SUMMARY.txt
#   e.g. scripts/compare_kernels.sh profiles/nvidia_h100_80gb_hbm3 fp8_blockscale fp8_blockscale_bpreshuffle \
#          reports/compare_normal_vs_bpreshuffle.txt reports/compare_summary.txt
set -euo pipefail
cd "$(dirname "$0")/.."
analyze=${ANALYZE:-build/bin/analyze}
[[ $# -eq 5 ]] || { echo "usage: $0 PROFILE_DIR KERNEL_A KERNEL_B OUT.txt SUMMARY.txt" >&2; exit 2; }
dir=$1 a=$2 b=$3 out=$4 summary=$5
[[ -x "$analyze" ]] || { echo "compare_kernels: $analyze not built; run scripts/setup.sh" >&2; exit 1; }
: > "$out"
for csv_a in "$dir"/*_"$a".csv; do
  shape=$(basename "$csv_a" "_$a.csv")
  csv_b="$dir/${shape}_$b.csv"
  [[ -f "$csv_b" ]] || continue
  { echo "### $shape: $a -> $b"; "$analyze" --compare "$csv_a" "$csv_b"; echo; } >> "$out"
done
# Each compare prints a "group" table (points, speedup, faster, slower, ties per model);
# pool those rows per model and over all.
{
  echo "$(basename "$out"): $a -> $b"
  awk '
    /^  group / { in_groups = 1; next }
    /^  shape / { in_groups = 0; next }
    in_groups && $3 ~ /x$/ {
      g = $3; sub(/x$/, "", g)
      for (i = 0; i < 2; ++i) {
        m = i == 0 ? $1 : "all"
        n[m] += $2; f[m] += $4; s[m] += $5; t[m] += $6; l[m] += $2 * log(g)
        if (!(m in lo) || g < lo[m]) lo[m] = g
        if (!(m in hi) || g > hi[m]) hi[m] = g
      }
    }
    END {
      for (m in n)
        printf "  %-22s points %4d faster %4d slower %4d tied %3d pooled geomean x%.3f (per-shape x%.3f..x%.3f)\n",
               m, n[m], f[m], s[m], t[m], exp(l[m] / n[m]), lo[m], hi[m]
    }' "$out" | sort
} >> "$summary"
