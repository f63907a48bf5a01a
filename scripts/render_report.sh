#!/usr/bin/env bash
# Renders an HTML report (or SVG plot) to a PNG in headless Chromium, so a
# person or an agent can look at what `analyze --report/--plot` produced.
# Usage: scripts/render_report.sh report.html [out.png] [WIDTHxHEIGHT]
# Installs Debian's chromium when it is missing (needs root and the package mirror).
set -euo pipefail

input=${1:?usage: scripts/render_report.sh report.html [out.png] [WIDTHxHEIGHT]}
output=${2:-${input%.*}.png}
size=${3:-1400x2000}

if [[ ! -f "$input" ]]; then
  echo "render_report: $input: no such file; pass the HTML or SVG that analyze wrote" >&2
  exit 1
fi
if ! command -v chromium >/dev/null 2>&1; then
  echo "render_report: installing chromium" >&2
  apt-get install -y chromium >/dev/null
fi

profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
# No GPU, no network features, a throwaway profile: the page is self-contained.
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --hide-scrollbars \
  --screenshot="$(realpath -m "$output")" --window-size="${size/x/,}" \
  "file://$(realpath "$input")" 2>/dev/null
echo "render_report: wrote $output"
