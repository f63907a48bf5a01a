// The CUDA side of the plugin ABI on a GPU: the example cuBLASLt bf16 plugin gets device operands, its output is
// checked against the float64 reference like the built-in cublaslt_bf16, and it runs under all three timing modes'
// machinery (events, a captured graph over several operand sets, CUPTI kernel durations).
#include <filesystem>

#include "gpu_test_support.hpp"
#include "kernels/plugin_kernels.hpp"
#include "profiler/measure.hpp"

namespace shapescope::kernels {
namespace {

// build/lib beside build/bin, found from the test binary, so a carried build folder works anywhere.
std::filesystem::path plugin_path() {
  return std::filesystem::read_symlink("/proc/self/exe").parent_path().parent_path() / "lib" /
         "libcublaslt_bf16_plugin.so";
}

TEST(PluginCuda, CublasltPluginIsCheckedAndTimedInEveryMode) {
  auto device = open_device();
  REQUIRE_GPU(device);
  const std::filesystem::path plugin = plugin_path();
  ASSERT_TRUE(std::filesystem::exists(plugin)) << plugin;
  load_plugin(plugin.string());
  const KernelEntry& entry = find_kernel("example_cublaslt_bf16");
  ASSERT_EQ(entry.backend, BackendKind::cuda);
  auto session = entry.open(*device, WeightShape{7168, 2304, 1}, 11);
  for (int64_t m : {1, 64, 1000}) {
    auto first = session->prepare(m, 100 + uint64_t(m));
    auto second = session->prepare(m, 200 + uint64_t(m));
    const CheckResult check = first->check();
    EXPECT_EQ(check.unwritten, 0) << m;
    EXPECT_LT(check.rel_err, 1e-2) << m;
    EXPECT_NE(first->launch_name().find("plugin cuBLASLt bf16"), std::string::npos);
    for (TimingMode mode : {TimingMode::events, TimingMode::graph, TimingMode::kernel}) {
      profiler::MeasureOptions options;
      options.timing = mode;
      options.min_samples = 3;
      options.max_samples = 20;
      if (mode == TimingMode::kernel) {
        try {
          device->make_kernel_timer();
        } catch (const std::exception& error) {
          GTEST_SKIP() << "no CUPTI: " << error.what();
        }
      }
      std::vector<PreparedGemm*> sets{first.get(), second.get()};
      const profiler::Measurement measured = profiler::measure(*device, sets, options);
      EXPECT_GT(measured.median_us, 0.0) << to_string(mode) << " M=" << m;
    }
  }
}

}  // namespace
}  // namespace shapescope::kernels
