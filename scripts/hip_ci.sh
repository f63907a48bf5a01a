#!/usr/bin/env bash
# Compiles the HIP backend for gfx90a and gfx940 with the installed hipcc (Debian's HIP 5.2 in CI:
# scripts/setup.sh --hip) and checks that the gfx940 code object holds the FP8 matrix instruction
# v_mfma_f32_32x32x16_fp8_fp8 in the MFMA kernels of hip_fp8_blockscale and hip_fp8_blockscale_bpreshuffle.
# Then links the HIP-enabled profile and HIP GPU tests against libamdhip64 and runs them on this machine,
# which has no AMD GPU: profile --backend hip must refuse in one line (exit 2) naming the missing AMD GPU,
# and every HIP GPU test must skip. Nothing here runs on an AMD GPU.
# Skips (exit 0, says so) when hipcc is absent. Builds into build-hip/ (or $1) with $HIP_CI_JOBS
# parallel jobs (default: every core), through ccache when it is installed.
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

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSHAPESCOPE_CUDA=OFF -DSHAPESCOPE_TESTS=ON "${launcher[@]}" \
  -DSHAPESCOPE_HIP=ON "-DSHAPESCOPE_HIP_ARCHITECTURES=gfx90a;gfx940" >/dev/null
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

# Link and run on this machine (no AMD GPU): only profile and the HIP GPU tests, the rest of the host C++
# is what every other build compiles and tests already.
cmake --build "$build" -j"$jobs" --target profile shapescope_hip_gpu_tests
status=0
"$build/bin/profile" --backend hip --model qwen3_4b --module o_proj --tp 8 --out "$work/profile" \
  >"$work/profile.out" 2>"$work/profile.err" || status=$?
if ((status != 2)) || [[ $(wc -l <"$work/profile.err") -ne 1 ]] || ! grep -q "AMD GPU" "$work/profile.err"; then
  echo "hip_ci: FAILED: profile --backend hip without an AMD GPU: exit $status (want 2), stderr (want one line" \
    "naming the AMD GPU):" >&2
  cat "$work/profile.err" >&2
  exit 1
fi
echo "hip_ci: OK: linked profile refuses --backend hip: $(cat "$work/profile.err")"
"$build/bin/shapescope_hip_gpu_tests" >"$work/tests.out" 2>&1 || {
  cat "$work/tests.out" >&2
  echo "hip_ci: FAILED: shapescope_hip_gpu_tests" >&2
  exit 1
}
ran=$(sed -n 's/^\[==========\] \([0-9]*\) tests\? from .* ran\..*/\1/p' "$work/tests.out")
skipped=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) tests\?, listed below:/\1/p' "$work/tests.out")
if [[ -z $ran || $ran -eq 0 || $ran != "$skipped" ]]; then
  cat "$work/tests.out" >&2
  echo "hip_ci: FAILED: shapescope_hip_gpu_tests ran ${ran:-no} tests, skipped ${skipped:-none} (want all skipped)" >&2
  exit 1
fi
echo "hip_ci: OK: linked shapescope_hip_gpu_tests: $ran of $ran tests skipped without an AMD GPU"
