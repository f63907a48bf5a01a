#!/usr/bin/env bash
# The CPU test suite (CUDA and HIP off) under AddressSanitizer + UndefinedBehaviorSanitizer, in build-asan/:
# a heap overrun, a use after free or undefined behaviour stops the test that hit it. Compiles through ccache
# when it is installed (scripts/setup.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."

launcher=()
if command -v ccache > /dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
sanitize="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g1"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Release -DSHAPESCOPE_CUDA=OFF -DSHAPESCOPE_HIP=OFF \
  "${launcher[@]}" -DCMAKE_CXX_FLAGS="$sanitize" -DCMAKE_EXE_LINKER_FLAGS="$sanitize" \
  -DCMAKE_SHARED_LINKER_FLAGS="$sanitize" -DCMAKE_MODULE_LINKER_FLAGS="$sanitize"
# Only what the cpu-labelled tests run: the test binary, the two CLIs and the example plugins they load.
cmake --build build-asan -j"$(nproc)" --target shapescope_tests profile analyze cpu_example_plugin failing_plugins \
  wrong_abi_plugin
# Left out: the Python entry point's test (python3 is not built with the sanitizers and cannot load an
# instrumented libshapescope_c.so without preloading libasan) and the docs tests (they run the documented
# commands against build/, which scripts/test.sh tests; this folder builds only what the CPU tests need).
export ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:detect_leaks=1:strict_string_checks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
ctest --test-dir build-asan --output-on-failure -L cpu -E 'python_entry_point_cpu|docs_' -j"$(nproc)"
