#!/usr/bin/env bash
# Compiles the HIP backend for gfx90a and gfx940 with the installed hipcc (Debian's HIP 5.2 in CI:
# scripts/setup.sh --hip) and checks that the gfx940 code object holds the FP8 matrix instruction
# v_mfma_f32_32x32x16_fp8_fp8 in the MFMA kernels of hip_fp8_blockscale and hip_fp8_blockscale_bpreshuffle. Compile-only: nothing here runs on an AMD GPU.
# Skips (exit 0, says so) when hipcc is absent. Builds into build-hip/ (or $1) with $HIP_CI_JOBS
# parallel jobs (default: every core).
set -euo pipefail
counts=()
cd "$(dirname "$0")/.."
build=${1:-build-hip}
jobs=${HIP_CI_JOBS:-$(nproc)}

if ! command -v hipcc >/dev/null; then
  echo "hip_ci: SKIPPED: no hipcc on PATH (scripts/setup.sh --hip installs Debian's HIP as root)"
  exit 0
fi
# The LLVM tools of hipcc's own LLVM: Debian keeps them in /usr/lib/llvm-15/bin (its default
# llvm-objdump, LLVM 14, crashes on gfx940 code objects), ROCm in /opt/rocm/llvm/bin.
tool() {
  local found
  for found in /opt/rocm/llvm/bin/"$1" /usr/lib/llvm-15/bin/"$1" "$(command -v "$1" || true)"; do
    [[ -n $found && -x $found ]] && { echo "$found"; return; }
  done
  echo "hip_ci: FAILED: $1 not found (it comes with hipcc's LLVM)" >&2
  exit 1
}
bundler=$(tool clang-offload-bundler)
objcopy=$(tool llvm-objcopy)
objdump=$(tool llvm-objdump)

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSHAPESCOPE_CUDA=OFF -DSHAPESCOPE_TESTS=OFF \
  -DSHAPESCOPE_HIP=ON "-DSHAPESCOPE_HIP_ARCHITECTURES=gfx90a;gfx940" >/dev/null
# Only the HIP code objects: the host C++ around them is what every other build compiles already.
cmake --build "$build" -j"$jobs" --target shapescope_hip_objects

object="$build/kernels/hip/hip_fp8_blockscale.o"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$objcopy" --dump-section=.hip_fatbin="$work/fatbin" "$object" /dev/null
targets=$("$bundler" --list --type=o --input="$work/fatbin")
for arch in gfx90a gfx940; do
  grep -q -- "--$arch\$" <<<"$targets" || { echo "hip_ci: FAILED: no $arch code object in $object" >&2; exit 1; }
done
"$bundler" --unbundle --type=o --input="$work/fatbin" --targets=hipv4-amdgcn-amd-amdhsa--gfx940 \
  --output="$work/gfx940.co"
# MFMA instructions per kernel: both layouts' instantiations of mfma_fp8_blockscale_kernel (hip_fp8_blockscale
# reads B row-major, BLayout 0; hip_fp8_blockscale_bpreshuffle reads it pre-shuffled, BLayout 1) must hold one.
"$objdump" -d --demangle --mcpu=gfx940 "$work/gfx940.co" |
  awk '/^[0-9a-f]+ </ { kernel = $0; next } /v_mfma_f32_32x32x16_fp8_fp8/ { count[kernel]++ }
       END { for (kernel in count) print count[kernel] "\t" kernel }' >"$work/mfma_counts"
for layout in 0 1; do
  count=$(grep -F "mfma_fp8_blockscale_kernel<(shapescope::kernels::portable::(anonymous namespace)::BLayout)$layout>" \
    "$work/mfma_counts" | cut -f1 || true)
  if [[ -z $count ]]; then
    echo "hip_ci: FAILED: no v_mfma_f32_32x32x16_fp8_fp8 in the gfx940 MFMA kernel with BLayout $layout of $object" >&2
    exit 1
  fi
  counts+=("BLayout $layout: $count")
done
echo "hip_ci: OK: hip backend compiled for gfx90a and gfx940; v_mfma_f32_32x32x16_fp8_fp8 in the gfx940 code" \
  "object of hip_fp8_blockscale (${counts[0]}) and hip_fp8_blockscale_bpreshuffle (${counts[1]})"
