#!/usr/bin/env bash
# Installs shapescope's Debian packages when missing (as root; otherwise prints
# the apt-get line to run and exits 1), then configures and builds into build/.
# Safe to run again: it installs nothing present and rebuilds only what changed.
# --hip also installs Debian's HIP (hipcc, HIP 5.2, ~350 MB) and ROCm SMI, which scripts/hip_ci.sh compiles
# and links the HIP backend with (the build/ folder stays without it: -DSHAPESCOPE_HIP=OFF). ccache is
# always installed: every build (build/, build-asan/, build-hip/) compiles through it.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ libeigen3-dev nlohmann-json3-dev libfmt-dev libgtest-dev libcli11-dev python3 python3-venv python3-pip
          python3-setuptools ccache)
for argument in "$@"; do
  case $argument in
    --hip) packages+=(hipcc libamdhip64-dev librocm-smi-dev) ;;
    *) echo "setup: unknown option $argument (only --hip)" >&2; exit 2 ;;
  esac
done
# python3-venv, python3-pip and python3-setuptools install the Python package offline (docs/plugins_and_python.md).
# Installed when root, never required: mpirun for the sharded-sweep test (profile never links MPI; the test
# skips without it).
optional=(openmpi-bin)
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
missing=()
for package in "${packages[@]}"; do
  installed "$package" || missing+=("$package")
done
if [[ $(id -u) -eq 0 ]]; then
  for package in "${optional[@]}"; do
    installed "$package" || missing+=("$package")
  done
fi
if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]]; then
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
  else
    echo "setup: missing packages; run: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi

# CUDA is switched on automatically when /usr/local/cuda/bin/nvcc exists.
launchers=()
if command -v ccache > /dev/null; then
  launchers=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "${launchers[@]}"
cmake --build build -j"$(nproc)"
