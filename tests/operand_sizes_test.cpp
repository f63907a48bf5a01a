// Sizes are checked before anything is allocated: overflowing or oversized
// operands are one UserError naming the layer, never a crash.
#include <gtest/gtest.h>

#include "common/user_error.hpp"
#include "profiler/operand_sizes.hpp"
#include "tests/user_error_of.hpp"

namespace shapescope::profiler {
namespace {

GemmProblem layer(int64_t n, int64_t k, int64_t batch = 1) {
  return GemmProblem{"big", "gate_up_proj", 1, n, k, batch};
}

std::string refusal(const std::vector<GemmProblem>& problems, int64_t largest_m, std::size_t memory) {
  return testing_support::user_error_of([&] { check_operand_sizes(problems, largest_m, memory); });
}

TEST(OperandSizes, OrdinaryShapesPass) {
  EXPECT_EQ(refusal({layer(28672, 4096), layer(512, 128, 16)}, 262144, std::size_t(80) << 30), "");
}

TEST(OperandSizes, WeightsWhoseElementCountOverflowsAreRefusedWithTheLayer) {
  const int64_t huge = int64_t(1) << 32;  // N x K = 2^65 wraps to 0 in 64 bits
  const std::string message = refusal({layer(2 * huge, huge)}, 1, 0);
  EXPECT_NE(message.find("big gate_up_proj"), std::string::npos) << message;
  EXPECT_NE(message.find("K=4294967296"), std::string::npos) << message;
  EXPECT_NE(refusal({layer(1 << 20, 1 << 20, int64_t(1) << 30)}, 1, 0), "");  // the batch overflows it
}

TEST(OperandSizes, WeightsLargerThanTheDeviceAreRefused) {
  const std::string message = refusal({layer(1 << 20, 1 << 20)}, 1, std::size_t(16) << 30);  // 1 TiB of weights
  EXPECT_NE(message.find("more than the device's 16.0 GiB"), std::string::npos) << message;
}

TEST(OperandSizes, AnMWhoseActivationsOverflowIsRefused) {
  const std::string message = refusal({layer(4096, 4096)}, int64_t(1) << 62, 0);
  EXPECT_NE(message.find("M=4611686018427387904"), std::string::npos) << message;
}

}  // namespace
}  // namespace shapescope::profiler
