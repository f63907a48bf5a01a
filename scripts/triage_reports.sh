#!/usr/bin/env bash
# Triage pages for committed profiles: for every shape in a profile folder
# (files <model>_<module>_tp<T>_N<n>_K<k>_<kernel>.csv, all kernels of a shape
# together) runs analyze with the split search and writes, under reports/<folder>/:
# <shape>.html (self-contained page), <shape>.md, <shape>.svg (MFU over M, log M),
# <shape>.dispatch.json and <shape>.json (the analyzer report profile --verify-plans reads).
# A <shape>*.verify.json beside the profiles is shown in the pages.
# Usage: scripts/triage_reports.sh [--png] [PROFILE_DIR...]   (default: every profiles/<device>/)
#   --png  also renders each page with scripts/render_report.sh, to look at it.
set -euo pipefail
cd "$(dirname "$0")/.."
analyze=${ANALYZE:-build/bin/analyze}
png=0
if [[ "${1:-}" == "--png" ]]; then png=1; shift; fi
dirs=("$@")
if [[ ${#dirs[@]} -eq 0 ]]; then
  for dir in profiles/*/; do dirs+=("${dir%/}"); done
fi
[[ -x "$analyze" ]] || { echo "triage_reports: $analyze not built; run scripts/setup.sh" >&2; exit 1; }

for dir in "${dirs[@]}"; do
  out="reports/$(basename "$dir")"
  mkdir -p "$out"
  shapes=$(for csv in "$dir"/*.csv; do basename "$csv" | sed -n 's/^\(.*_K[0-9][0-9]*\)_.*\.csv$/\1/p'; done | sort -u)
  for shape in $shapes; do
    csvs=("$dir/$shape"_*.csv)
    verify=()
    for file in "$dir/$shape"*.verify.json; do [[ -f "$file" ]] && verify=(--verify-results "$file") && break; done
    common=("${csvs[@]}" --check-split-gemm --out-dir "$out/study_format" --top 20)
    echo "== $shape (${#csvs[@]} kernels)"
    "$analyze" "${common[@]}" --json "$out/$shape.json" --plot "$out/$shape.svg" --log-m \
      --report "$out/$shape.html" --dispatch "$out/$shape.dispatch.json" "${verify[@]}" > "$out/$shape.txt"
    "$analyze" "${common[@]}" --report "$out/$shape.md" "${verify[@]}" > /dev/null
    if [[ $png -eq 1 ]]; then scripts/render_report.sh "$out/$shape.html" "$out/$shape.png"; fi
  done
done
