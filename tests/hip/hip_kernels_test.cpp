// The HIP backend's kernels against the float64 reference on an AMD GPU, with the correctness set of
// our CUDA kernels (tests/gpu/reference_check.hpp) and shapes off every tile edge. Built only with
// -DSHAPESCOPE_HIP; every test skips, naming why, where no AMD GPU can be used (CI, and every machine
// this was written on: none of these checks has run on AMD hardware yet).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "kernels/kernel.hpp"
#include "tests/gpu/reference_check.hpp"

namespace shapescope::kernels {
namespace {

std::unique_ptr<Device> open_hip_device() {
  register_hip_kernels();
  return make_hip_device();
}

#define REQUIRE_AMD_GPU(device) \
  if (!(device)) GTEST_SKIP() << "no AMD GPU: " << ::shapescope::kernels::hip_unavailable_reason()

bool registered(const std::string& name) {
  for (const KernelEntry& entry : kernel_registry())
    if (entry.name == name) return true;
  return false;
}

// N off the 32- and 64-column tiles and the 128-row scale blocks, K off the 128-K blocks (the MFMA path
// needs K % 16 == 0), one column.
const std::vector<WeightCase> kUnalignedShapes = {
    {"unaligned", 200, 336, 1}, {"unaligned", 72, 112, 1}, {"unaligned", 129, 272, 1}, {"one_column", 1, 16, 1}};
const std::vector<int64_t> kUnalignedMs = {1, 2, 31, 33, 63, 64, 65, 130};

void check_hip_fp8_kernel(const std::string& kernel_name, Device& device) {
  check_fp8_kernel_and_unaligned(kernel_name, device, kUnalignedShapes, kUnalignedMs);
}

TEST(HipKernels, Fp8BlockscaleMatchesReferenceOnDeepSeekQwen3AndUnalignedShapes) {
  const auto device = open_hip_device();
  REQUIRE_AMD_GPU(device);
  check_hip_fp8_kernel("hip_fp8_blockscale", *device);
}

// B pre-shuffled on the device into the MFMA layout (kernels/mfma_preshuffled_b.hpp) and read by the MFMA
// path on gfx940..942/gfx950, by the portable kernel elsewhere.
TEST(HipKernels, Fp8BlockscaleBpreshuffleMatchesReferenceOnDeepSeekQwen3AndUnalignedShapes) {
  const auto device = open_hip_device();
  REQUIRE_AMD_GPU(device);
  check_hip_fp8_kernel("hip_fp8_blockscale_bpreshuffle", *device);
}

TEST(HipKernels, HipblasltBf16MatchesReference) {
  const auto device = open_hip_device();
  REQUIRE_AMD_GPU(device);
  if (!registered("hipblaslt_bf16")) GTEST_SKIP() << "built without hipBLASLt (find_package(hipblaslt) found none)";
  CheckTally tally;
  check_shapes("hipblaslt_bf16", *device, deepseek_tp8_shapes(), kEdgeMs, tally);
  check_shapes("hipblaslt_bf16", *device, kUnalignedShapes, kUnalignedMs, tally);
  std::printf("  hipblaslt_bf16: %d checks, worst rel_err %.3e\n", tally.checked, tally.worst);
}

}  // namespace
}  // namespace shapescope::kernels
