// mxfp8_dequantized_bf16's registry entry without a GPU (CUDA builds): what it takes and names, the shapes it
// refuses with one line, and `profile`'s listing of it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/kernel.hpp"
#include "tests/profile_cli_support.hpp"

namespace shapescope::kernels {
namespace {

constexpr const char* kName = "mxfp8_dequantized_bf16";

TEST(Mxfp8DequantizedEntry, TakesMxfp8AndRunsBf16Math) {
  if (!cuda_backend_compiled()) GTEST_SKIP() << "CPU-only build";
  register_cuda_kernels();
  const KernelEntry& entry = find_kernel(kName);
  EXPECT_EQ(entry.dtype, "bf16");  // the MFU peak is the bf16 math it runs
  EXPECT_EQ(entry.formats_taken, std::vector<BlockFormatId>{BlockFormatId::mxfp8});
  EXPECT_EQ(find_kernel("mxfp8_blockscale").formats_taken, entry.formats_taken);
  EXPECT_NE(entry.description.find("cuBLASLt bf16"), std::string::npos) << entry.description;
  // The configuration is cuBLASLt's pick for the bf16 GEMM, or without a GPU why it could not ask.
  const std::string config = entry.describe_config(GemmShape{1024, 2560, 8192, 1});
  EXPECT_EQ(config.rfind("dequantize to bf16, then ", 0), 0u) << config;
  if (make_cuda_device() == nullptr) {
    EXPECT_NE(config.find("no GPU to ask"), std::string::npos) << config;
  }
}

TEST(Mxfp8DequantizedEntry, RefusesKOffEightWithOneLine) {
  if (!cuda_backend_compiled()) GTEST_SKIP() << "CPU-only build";
  register_cuda_kernels();
  const KernelEntry& entry = find_kernel(kName);
  const auto reason = entry.unsupported_reason(GemmShape{7, 201, 100, 1});
  ASSERT_TRUE(reason.has_value());
  EXPECT_NE(reason->find("K=100"), std::string::npos) << *reason;
  EXPECT_NE(reason->find("multiple of 8"), std::string::npos) << *reason;
  EXPECT_EQ(reason->find('\n'), std::string::npos) << *reason;
  EXPECT_FALSE(entry.unsupported_reason(GemmShape{7, 201, 200, 1}).has_value());  // a partial last 32-block runs
  EXPECT_TRUE(entry.unsupported_reason(GemmShape{7, 201, 200, 2}).has_value());   // no batches
}

TEST(Mxfp8DequantizedEntry, ProfileListsItWithItsFormatAndMath) {
  if (!cuda_backend_compiled()) GTEST_SKIP() << "CPU-only build";
  if (!testing_support::profile_binary_built()) GTEST_SKIP() << "profile not built";
  const testing_support::Outcome listing = testing_support::run_profile("--list-kernels");
  ASSERT_EQ(listing.exit_code, 0) << listing.stderr_text;
  EXPECT_NE(listing.stdout_text.find(std::string(kName) + "  [cuda, bf16, takes mxfp8]"), std::string::npos)
      << listing.stdout_text;
}

}  // namespace
}  // namespace shapescope::kernels
