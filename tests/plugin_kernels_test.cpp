// The plugin loader on in-process tables: what it refuses (one line each), scale layouts, and a CPU plugin
// kernel whose run is checked against the float64 reference through the same session code `--plugin` uses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "common/user_error.hpp"
#include "kernels/fp8_e4m3.hpp"
#include "kernels/plugin_kernels.hpp"
#include "tests/coded_operands_gemm.hpp"
#include "tests/user_error_of.hpp"

namespace shapescope::kernels {
namespace {

// A reference-exact bf16 GEMM in double, rounded once; and one that forgets the last column.
int prepare_nothing(const shapescope_operands*, void** handle, char*, size_t) {
  *handle = nullptr;
  return 0;
}
int run_bf16(void*, const shapescope_operands* op, char*, size_t) {
  const auto* a = static_cast<const uint16_t*>(op->a);
  const auto* b = static_cast<const uint16_t*>(op->b);
  auto* c = static_cast<uint16_t*>(op->c);
  const int64_t m = op->shape.m, n = op->shape.n, k = op->shape.k;
  for (int64_t row = 0; row < m; ++row)
    for (int64_t col = 0; col < n; ++col) {
      double sum = 0;
      for (int64_t i = 0; i < k; ++i) sum += double(decode_bf16(a[row * k + i])) * decode_bf16(b[col * k + i]);
      c[row * n + col] = encode_bf16(float(sum));
    }
  return 0;
}
int run_bf16_but_last_column(void* handle, const shapescope_operands* op, char* error, size_t size) {
  run_bf16(handle, op, error, size);
  auto* c = static_cast<uint16_t*>(op->c);
  for (int64_t row = 0; row < op->shape.m; ++row) c[row * op->shape.n + op->shape.n - 1] = kPoisonBf16;
  return 0;
}
// Records which operand pointers an a16w8 kernel gets.
bool a16w8_a_scales_null = false, a16w8_b_scales_set = false;
int run_a16w8_probe(void*, const shapescope_operands* op, char*, size_t) {
  a16w8_a_scales_null = op->a_scales == nullptr;
  a16w8_b_scales_set = op->b_scales != nullptr;
  return 0;
}

shapescope_kernel kernel(const char* name, int32_t format = SHAPESCOPE_FORMAT_BF16,
                         decltype(shapescope_kernel::run) run = run_bf16) {
  return shapescope_kernel{name, "test", format, SHAPESCOPE_BACKEND_CPU, 0, prepare_nothing, run, nullptr, nullptr};
}

std::string refusal(const shapescope_plugin& plugin) {
  return testing_support::user_error_of([&] { register_in_process_plugin(&plugin, "test table"); });
}

TEST(PluginKernels, InvalidTablesAreRefusedWithOneLine) {
  const shapescope_kernel builtin[] = {kernel("cpu_bf16")};
  EXPECT_NE(refusal({1, 1, builtin}).find("already registered"), std::string::npos);
  const shapescope_kernel spaced[] = {kernel("my gemm")};
  EXPECT_NE(refusal({1, 1, spaced}).find("give a name of 1 to 128 characters"), std::string::npos);
  const shapescope_kernel odd_format[] = {kernel("plugin_test_format", 9)};
  EXPECT_NE(refusal({2, 1, odd_format}).find("format 9 is not a shapescope_format of ABI version 2"),
            std::string::npos);
  // Version 1 tables keep loading, but may not name the formats version 2 added.
  const shapescope_kernel newer_format[] = {kernel("plugin_test_format", SHAPESCOPE_FORMAT_A16W4_MXFP4)};
  const std::string too_new = refusal({1, 1, newer_format});
  EXPECT_NE(too_new.find("format 5 is not a shapescope_format of ABI version 1 (1 bf16, 2 fp8_blockscale, 3 "
                         "a16w8_blockscale)"),
            std::string::npos)
      << too_new;
  const shapescope_kernel twice[] = {kernel("plugin_test_twice"), kernel("plugin_test_twice")};
  EXPECT_NE(refusal({1, 2, twice}).find("already registered"), std::string::npos);
  const shapescope_kernel fine[] = {kernel("plugin_test_version")};
  const std::string version = refusal({3, 1, fine});
  EXPECT_NE(version.find("ABI version 3, this shapescope speaks versions 1 to 2"), std::string::npos) << version;
  EXPECT_EQ(version.find('\n'), std::string::npos);
  EXPECT_NE(refusal({0, 1, fine}).find("ABI version 0"), std::string::npos);
  EXPECT_NE(refusal({1, 0, nullptr}).find("declares no kernels"), std::string::npos);
}

TEST(PluginKernels, InProcessTablesReplaceTheirOwnNamesOnly) {
  const shapescope_kernel table[] = {kernel("plugin_test_again")};
  const shapescope_plugin plugin{1, 1, table};
  EXPECT_EQ(register_in_process_plugin(&plugin, "first"), std::vector<std::string>{"plugin_test_again"});
  EXPECT_NO_THROW(register_in_process_plugin(&plugin, "second"));
  const auto& registry = kernel_registry();
  EXPECT_EQ(std::count_if(registry.begin(), registry.end(),
                          [](const KernelEntry& entry) { return entry.name == "plugin_test_again"; }),
            1);
  EXPECT_NE(find_kernel("plugin_test_again").description.find("plugin second: test"), std::string::npos);
}

TEST(PluginKernels, ScaleLayoutsFollowTheFlags) {
  const GemmShape shape{5, 300, 2304, 2};  // 18 K blocks
  const PluginScaleLayout plain = plugin_a_scale_layout(shape, 0);
  EXPECT_EQ(plain.outer, 18);
  EXPECT_EQ(plain.kgroup, 1);
  const PluginScaleLayout m_major = plugin_a_scale_layout(shape, SHAPESCOPE_A_SCALES_M_MAJOR);
  EXPECT_EQ(m_major.outer, 1);
  EXPECT_EQ(m_major.kgroup, 5);
  EXPECT_EQ(m_major.floats, 2 * 5 * 18);
  const PluginScaleLayout padded = plugin_b_scale_layout(WeightShape{300, 2304, 2}, SHAPESCOPE_B_SCALES_K_PADDED_4);
  EXPECT_EQ(padded.outer, 20);
  EXPECT_EQ(padded.floats, 2 * 3 * 20);
}

TEST(PluginKernels, CpuPluginRunsAreCheckedAgainstTheReference) {
  const shapescope_kernel table[] = {kernel("plugin_test_exact"), kernel("plugin_test_misses", SHAPESCOPE_FORMAT_BF16,
                                                                           run_bf16_but_last_column)};
  const shapescope_plugin plugin{1, 2, table};
  register_in_process_plugin(&plugin, "test table");
  auto device = make_cpu_device(1);
  for (const char* name : {"plugin_test_exact", "plugin_test_misses"}) {
    auto session = find_kernel(name).open(*device, WeightShape{130, 200, 1}, 3);
    auto gemm = session->prepare(3, 4);
    EXPECT_EQ(gemm->launch_name(), name);
    const CheckResult check = gemm->check();
    if (std::strcmp(name, "plugin_test_exact") == 0) {
      EXPECT_TRUE(check.passed(1e-2)) << check.rel_err;
      EXPECT_LT(check.rel_err, 1e-2);
    } else {
      EXPECT_EQ(check.unwritten, 3);  // the last column of 3 rows, all checked at this size
    }
  }
}

TEST(PluginKernels, A16w8KernelsGetWeightScalesOnly) {
  const shapescope_kernel table[] = {kernel("plugin_test_a16w8", SHAPESCOPE_FORMAT_A16W8_BLOCKSCALE, run_a16w8_probe)};
  const shapescope_plugin plugin{1, 1, table};
  register_in_process_plugin(&plugin, "test table");
  auto device = make_cpu_device(1);
  auto gemm = find_kernel("plugin_test_a16w8").open(*device, WeightShape{128, 256, 1}, 3)->prepare(2, 4);
  gemm->run();
  EXPECT_TRUE(a16w8_a_scales_null);
  EXPECT_TRUE(a16w8_b_scales_set);
  EXPECT_EQ(find_kernel("plugin_test_a16w8").dtype, "a16w8");
}

TEST(PluginKernels, VersionTwoFormatsGetTheirScaleCodesAndAreChecked) {
  const shapescope_kernel table[] = {
      kernel("plugin_test_mxfp8", SHAPESCOPE_FORMAT_MXFP8, coded_operands_gemm<kMxfp8Layout>),
      kernel("plugin_test_mxfp4", SHAPESCOPE_FORMAT_A16W4_MXFP4, coded_operands_gemm<kMxfp4Layout>),
      kernel("plugin_test_nvfp4_weights", SHAPESCOPE_FORMAT_A16W4_NVFP4, coded_operands_gemm<kNvfp4WeightLayout>),
      kernel("plugin_test_e2m1_e8m0_16", SHAPESCOPE_FORMAT_A16W4_E2M1_E8M0_16, coded_operands_gemm<kE2m1E8m0Per16Layout>),
      kernel("plugin_test_nvfp4", SHAPESCOPE_FORMAT_NVFP4, coded_operands_gemm<kNvfp4Layout>),
      kernel("plugin_test_nvfp4_no_tensor_scale", SHAPESCOPE_FORMAT_NVFP4, coded_operands_gemm<kNvfp4Layout, true>)};
  const shapescope_plugin plugin{2, 6, table};
  register_in_process_plugin(&plugin, "test table");
  auto device = make_cpu_device(1);
  // K=80: two and a half MX blocks of 32, five NVFP4 blocks of 16; two weight batches.
  for (const shapescope_kernel& entry : table) {
    auto session = find_kernel(entry.name).open(*device, WeightShape{40, 80, 2}, 7);
    auto gemm = session->prepare(3, 11);
    const CheckResult check = gemm->check();
    if (std::strcmp(entry.name, "plugin_test_nvfp4_no_tensor_scale") == 0) {
      EXPECT_FALSE(check.passed(1e-2)) << "a kernel that ignores the per-tensor scales must fail its check";
    } else {
      EXPECT_TRUE(check.passed(1e-2)) << entry.name << " rel_err " << check.rel_err;
    }
  }
  EXPECT_EQ(find_kernel("plugin_test_mxfp8").dtype, "fp8");
  EXPECT_EQ(find_kernel("plugin_test_mxfp4").dtype, "bf16");
  EXPECT_NE(find_kernel("plugin_test_nvfp4_weights").formats.find("ue4m3"), std::string::npos);
  // FP4 packs two elements a byte: an odd K is refused before any work.
  const auto odd_k = find_kernel("plugin_test_mxfp4").unsupported_reason(GemmShape{4, 40, 81, 1});
  ASSERT_TRUE(odd_k.has_value());
  EXPECT_NE(odd_k->find("K must be a multiple of 2"), std::string::npos) << *odd_k;
}

}  // namespace
}  // namespace shapescope::kernels
