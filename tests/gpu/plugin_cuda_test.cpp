// The CUDA side of the plugin ABI on a GPU: the example cuBLASLt bf16 plugin gets device operands, its output is
// checked against the float64 reference like the built-in cublaslt_bf16, and it runs under all three timing modes'
// machinery (events, a captured graph over several operand sets, CUPTI kernel durations).
#include <cuda_runtime.h>

#include <filesystem>
#include <memory>
#include <vector>

#include "gpu_test_support.hpp"
#include "kernels/plugin_kernels.hpp"
#include "profiler/measure.hpp"
#include "tests/coded_operands_gemm.hpp"

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

// A CUDA-backend plugin of an ABI version 2 format that copies its device operands to the host in prepare and
// computes there: it sees exactly the pointers and bytes the CUDA session hands a plugin.
struct HostMirror {
  std::vector<uint8_t> a, b, a_scale_codes, b_scale_codes;
  std::vector<float> a_tensor_scales, b_tensor_scales;
  std::vector<uint16_t> c;
  shapescope_operands host{};
};

std::size_t element_bytes(const char* element, int64_t rows, int64_t k) {
  if (std::strcmp(element, "bf16") == 0) return std::size_t(2 * rows * k);
  return std::size_t(std::strcmp(element, "e2m1") == 0 ? rows * ((k + 1) / 2) : rows * k);
}

template <typename T>
std::vector<T> to_host(const void* device, std::size_t count) {
  std::vector<T> host(count);
  if (count && cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost) != cudaSuccess) host.clear();
  return host;
}

template <const CodedLayout& Layout>
int prepare_mirror(const shapescope_operands* op, void** handle, char*, size_t) {
  auto mirror = std::make_unique<HostMirror>();
  const int64_t batch = op->shape.batch_count, m = op->shape.m * batch, n = op->shape.n * batch, k = op->shape.k;
  const int64_t blocks = (k + Layout.block - 1) / Layout.block;
  mirror->a = to_host<uint8_t>(op->a, element_bytes(Layout.a_element, m, k));
  mirror->b = to_host<uint8_t>(op->b, element_bytes(Layout.b_element, n, k));
  if (std::strcmp(Layout.a_element, "bf16") != 0) {
    mirror->a_scale_codes = to_host<uint8_t>(op->a_scale_codes, std::size_t(m * blocks));
    if (Layout.tensor_scale) mirror->a_tensor_scales = to_host<float>(op->a_tensor_scales, std::size_t(batch));
  }
  mirror->b_scale_codes = to_host<uint8_t>(op->b_scale_codes, std::size_t(n * blocks));
  if (Layout.tensor_scale) mirror->b_tensor_scales = to_host<float>(op->b_tensor_scales, std::size_t(batch));
  if (op->a_scales || op->b_scales) return 1;  // version 2 formats have no f32 scales
  mirror->c.resize(std::size_t(m * op->shape.n));
  mirror->host = *op;
  mirror->host.a = mirror->a.data();
  mirror->host.b = mirror->b.data();
  mirror->host.a_scale_codes = mirror->a_scale_codes.data();
  mirror->host.b_scale_codes = mirror->b_scale_codes.data();
  mirror->host.a_tensor_scales = mirror->a_tensor_scales.data();
  mirror->host.b_tensor_scales = mirror->b_tensor_scales.data();
  mirror->host.c = mirror->c.data();
  *handle = mirror.release();
  return 0;
}

template <const CodedLayout& Layout>
int run_mirror(void* handle, const shapescope_operands* op, char* error, size_t size) {
  auto& mirror = *static_cast<HostMirror*>(handle);
  coded_operands_gemm<Layout>(nullptr, &mirror.host, error, size);
  return cudaMemcpyAsync(op->c, mirror.c.data(), mirror.c.size() * 2, cudaMemcpyHostToDevice,
                         static_cast<cudaStream_t>(op->stream)) == cudaSuccess
             ? 0
             : 1;
}

void release_mirror(void* handle) { delete static_cast<HostMirror*>(handle); }

TEST(PluginCuda, VersionTwoFormatsGetTheirScaleCodesInDeviceMemory) {
  auto device = open_device();
  REQUIRE_GPU(device);
  const shapescope_kernel table[] = {
      {"plugin_gpu_test_mxfp8", "host mirror", SHAPESCOPE_FORMAT_MXFP8, SHAPESCOPE_BACKEND_CUDA, 0,
       prepare_mirror<kMxfp8Layout>, run_mirror<kMxfp8Layout>, release_mirror, nullptr},
      {"plugin_gpu_test_mxfp4", "host mirror", SHAPESCOPE_FORMAT_A16W4_MXFP4, SHAPESCOPE_BACKEND_CUDA, 0,
       prepare_mirror<kMxfp4Layout>, run_mirror<kMxfp4Layout>, release_mirror, nullptr},
      {"plugin_gpu_test_nvfp4", "host mirror", SHAPESCOPE_FORMAT_NVFP4, SHAPESCOPE_BACKEND_CUDA, 0,
       prepare_mirror<kNvfp4Layout>, run_mirror<kNvfp4Layout>, release_mirror, nullptr}};
  const shapescope_plugin plugin{2, 3, table};
  register_in_process_plugin(&plugin, "gpu test table");
  for (const shapescope_kernel& kernel : table) {
    auto session = find_kernel(kernel.name).open(*device, WeightShape{72, 208, 2}, 5);  // K: 6.5 MX blocks
    auto gemm = session->prepare(5, 9);
    const CheckResult check = gemm->check();
    EXPECT_EQ(check.unwritten, 0) << kernel.name;
    EXPECT_LT(check.rel_err, 1e-2) << kernel.name;
  }
}

}  // namespace
}  // namespace shapescope::kernels
