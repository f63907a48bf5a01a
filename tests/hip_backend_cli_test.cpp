// --backend hip where no AMD GPU can be used (every machine these tests run on): one line naming why
// and what to use instead, exit 2, before any work; the CPU-only build's HIP hooks say how to build it.
#include <gtest/gtest.h>

#include "kernels/kernel.hpp"
#include "tests/profile_cli_support.hpp"

namespace shapescope::kernels {
namespace {

TEST(HipBackend, WithoutAnAmdGpuNoDeviceOpensAndTheReasonIsNamed) {
  EXPECT_EQ(make_hip_device(), nullptr);
  const std::string reason = hip_unavailable_reason();
  EXPECT_FALSE(reason.empty());
  if (!hip_backend_compiled()) {
    EXPECT_NE(reason.find("-DSHAPESCOPE_HIP"), std::string::npos) << reason;
  }
}

TEST(HipBackend, ProfileBackendHipIsAOneLineUserError) {
  if (!testing_support::profile_binary_built()) GTEST_SKIP() << "profile binary not built";
  testing_support::expect_user_error("--model qwen3_4b --module o_proj --tp 8 --backend hip",
                                     {"--backend hip:", hip_unavailable_reason().c_str(), "--backend cpu or auto"});
}

}  // namespace
}  // namespace shapescope::kernels
