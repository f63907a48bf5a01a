// Entries `cublaslt_fp8_blockscale_grouped_loop` and `cublaslt_bf16_grouped_loop`: the
// grouped GEMM as an engine without a grouped kernel runs it, one cuBLASLt matmul per
// expert with rows (the heuristic's algorithm for that expert's M), all enqueued by one
// run() on one stream, so a graph capture records them as one unit.
//
// Block-scaled FP8 in cuBLASLt refuses M % 4 != 0, so each expert's call covers its rows
// rounded up to 4: the activations keep every group's rows padded to a multiple of 4
// (contiguous groups start at multiples of max(align, 4), masked slots hold max_m rounded
// up to 4), the padding rows are zeros and count as executed. Each call has its own 1x128
// activation scales (VEC128: K-group major, M floats apart) and its expert's 128x128 weight
// scales (BLK128x128, K-block rows padded to 4: cublaslt_scale_layout.hpp).
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "kernels/cuda/cublaslt_entries.hpp"
#include "kernels/cuda/cublaslt_matmul.hpp"
#include "kernels/cuda/cublaslt_scale_layout.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_grouped_prepared_gemm.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/grouped_operands.cuh"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::cuda {
namespace {

constexpr int64_t kFp8RowMultiple = 4;  // cuBLASLt block-scaled FP8: M % 4 == 0

// Where the loop keeps each group's rows: the problem's layout, each group padded to
// `row_multiple` rows at least.
GroupedShape storage_layout(const GroupedShape& shape, int64_t row_multiple) {
  GroupedShape storage = shape;
  if (storage.layout == GroupLayout::contiguous) {
    storage.align = std::max(storage.align, row_multiple);  // both powers of two: the larger is a multiple of each
  } else {
    storage.max_m = round_up(storage.max_m, row_multiple);
  }
  return storage;
}

struct ExpertWeights {
  GroupedWeightShape shape;
  uint64_t seed = 0;
  bool fp8 = true;
  DeviceBuffer<uint8_t> weights;     // [groups][n][k] e4m3, or bf16 (2 bytes each)
  DeviceBuffer<float> scales;        // fp8: [groups][cuBLASLt BLK128x128 layout]
  int64_t scale_floats_per_group = 0;
  std::size_t weight_bytes_per_group() const { return std::size_t(shape.n * shape.k * (fp8 ? 1 : 2)); }
};

class GroupedLoopGemm final : public CudaGroupedPreparedGemm {
 public:
  GroupedLoopGemm(CudaDevice& device, cublasLtHandle_t handle, const ExpertWeights& weights, const GroupedShape& shape,
                  uint64_t seed)
      : CudaGroupedPreparedGemm(device, weights.fp8 ? OperandFormat::fp8_blockscale : OperandFormat::bf16, shape, seed,
                                weights.seed),
        weights_(weights),
        storage_(storage_layout(shape, weights.fp8 ? kFp8RowMultiple : 1)) {
    const cudaStream_t stream = device.stream();
    const int64_t n = shape.n, k = shape.k, element_bytes = weights.fp8 ? 1 : 2;
    activations_ = DeviceBuffer<uint8_t>(std::size_t(storage_.layout_rows() * k * element_bytes));
    output_ = DeviceBuffer<uint16_t>(std::size_t(storage_.layout_rows() * n));
    CUDA_CHECK(cudaMemsetAsync(activations_.data(), 0, activations_.bytes(), stream));
    int64_t scale_floats = 0;
    for (int64_t g = 0; g < shape.groups(); ++g) {
      const int64_t rows = shape.rows[std::size_t(g)];
      if (rows == 0) continue;
      const int64_t call_rows = weights.fp8 ? round_up(rows, kFp8RowMultiple) : rows;
      calls_.push_back({g, storage_.first_row(g), call_rows, scale_floats, nullptr});
      if (weights.fp8) scale_floats += cublaslt_vec128_scale_layout(call_rows, k).floats;
    }
    if (weights.fp8) {
      activation_scales_ = DeviceBuffer<float>(std::size_t(std::max<int64_t>(scale_floats, 1)));
      CUDA_CHECK(cudaMemsetAsync(activation_scales_.data(), 0, activation_scales_.bytes(), stream));
    }
    std::size_t workspace_bytes = 0;
    for (Call& call : calls_) {
      const int64_t rows = shape.rows[std::size_t(call.group)], routed = shape.routed_row(call.group);
      uint8_t* rows_start = activations_.data() + call.first_row * k * element_bytes;
      const GemmShape call_shape{call.rows, n, k, 1};
      if (weights.fp8) {
        fill_routed_fp8_rows(rows_start, seed, routed, rows, k, stream);
        float* scales = activation_scales_.data() + call.scale_offset;
        const ScaleTensorLayout layout = cublaslt_vec128_scale_layout(call.rows, k);
        fill_routed_a_scales(scales, seed, routed, rows, k, ScaleStrides{0, layout.outer_stride, layout.kgroup_stride},
                             stream);
        call.matmul = make_cublaslt_fp8_matmul(handle, call_shape,
                                               weights.scales.data() + call.group * weights.scale_floats_per_group, scales);
      } else {
        fill_routed_bf16_rows(reinterpret_cast<uint16_t*>(rows_start), seed, routed, rows, k, stream);
        call.matmul = make_cublaslt_bf16_matmul(handle, call_shape);
      }
      if (auto refused = call.matmul->choose_algorithm(kCublasLtWorkspaceBytes))
        throw UnsupportedShape(*refused + fmt::format(" for expert {} (M={})", call.group, call.rows));
      workspace_bytes = std::max(workspace_bytes, call.matmul->algorithm().workspace_bytes);
      executed_rows_ += call.rows;
    }
    workspace_ = DeviceBuffer<uint8_t>(workspace_bytes);
    set_output(output_.data(), storage_);
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  void run() override {
    const int64_t k = shape().k, n = shape().n, element_bytes = weights_.fp8 ? 1 : 2;
    for (const Call& call : calls_) {  // the calls share the workspace: one stream orders them
      call.matmul->run(weights_.weights.data() + std::size_t(call.group) * weights_.weight_bytes_per_group(),
                       activations_.data() + call.first_row * k * element_bytes, output_.data() + call.first_row * n,
                       workspace_.data(), device_.stream());
    }
  }

  std::string launch_name() const override {
    std::map<std::string, int> algorithms;  // how many experts ran each algorithm
    for (const Call& call : calls_) ++algorithms[call.matmul->algorithm().describe()];
    std::string name = fmt::format("cublasLt x{} experts", calls_.size());
    for (const auto& [algorithm, count] : algorithms) name += fmt::format("; {}x {}", count, algorithm);
    return name;
  }

  int64_t executed_rows() const override { return executed_rows_; }

 private:
  struct Call {
    int64_t group, first_row, rows, scale_offset;
    std::unique_ptr<CublasLtMatmul> matmul;
  };
  const ExpertWeights& weights_;
  GroupedShape storage_;
  std::vector<Call> calls_;
  int64_t executed_rows_ = 0;
  DeviceBuffer<uint8_t> activations_;  // [storage rows][k] e4m3 or bf16, zeros in padding rows
  DeviceBuffer<float> activation_scales_;
  DeviceBuffer<uint16_t> output_;
  DeviceBuffer<uint8_t> workspace_;
};

class GroupedLoopSession final : public GroupedGemmSession {
 public:
  GroupedLoopSession(CudaDevice& device, const GroupedWeightShape& shape, uint64_t seed, bool fp8) : device_(device) {
    weights_.shape = shape;
    weights_.seed = seed;
    weights_.fp8 = fp8;
    const cudaStream_t stream = device.stream();
    weights_.weights = DeviceBuffer<uint8_t>(std::size_t(shape.groups) * weights_.weight_bytes_per_group());
    if (fp8) {
      const ScaleTensorLayout layout = cublaslt_blk128x128_scale_layout(shape.n, shape.k);
      weights_.scale_floats_per_group = layout.floats;
      weights_.scales = DeviceBuffer<float>(std::size_t(shape.groups * layout.floats));
      CUDA_CHECK(cudaMemsetAsync(weights_.scales.data(), 0, weights_.scales.bytes(), stream));
      fill_fp8_codes(weights_.weights.data(), seed, synthetic::b_codes, shape.groups, shape.n, shape.k, stream);
      fill_b_scales(weights_.scales.data(), seed, shape.groups, shape.n, shape.k,
                    ScaleStrides{layout.floats, layout.outer_stride, layout.kgroup_stride}, stream);
    } else {
      fill_bf16_values(reinterpret_cast<uint16_t*>(weights_.weights.data()), seed, synthetic::b_bf16, shape.groups,
                       shape.n, shape.k, stream);
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  std::size_t activation_bytes(const GroupedShape& shape) const override {
    const GroupedShape storage = storage_layout(shape, weights_.fp8 ? kFp8RowMultiple : 1);
    const int64_t rows = storage.layout_rows();
    return std::size_t(rows * shape.k * (weights_.fp8 ? 1 : 2) + rows * synthetic::blocks(shape.k) * 4 +
                       rows * shape.n * 2) +
           kCublasLtWorkspaceBytes;
  }

  std::unique_ptr<GroupedPreparedGemm> prepare(const GroupedShape& shape, uint64_t seed) override {
    return std::make_unique<GroupedLoopGemm>(device_, handle_.get(), weights_, shape, seed);
  }

 private:
  CudaDevice& device_;
  CublasLtHandle handle_;
  ExpertWeights weights_;
};

GroupedKernelEntry loop_entry(bool fp8) {
  GroupedKernelEntry entry(
      {.name = fp8 ? "cublaslt_fp8_blockscale_grouped_loop" : "cublaslt_bf16_grouped_loop",
       .backend = BackendKind::cuda,
       .dtype = fp8 ? "fp8" : "bf16",
       .formats = fp8 ? "A e4m3 1x128 f32 scales (VEC128_32F per expert), B [groups] e4m3 128x128 f32 scales "
                        "(BLK128x128_32F), C bf16; each expert's rows padded to 4"
                      : "A bf16, B [groups] bf16, C bf16, fp32 accumulation",
       .formats_taken = {fp8 ? BlockFormatId::fp8_blockscale : BlockFormatId::bf16},
       .description = fp8 ? "baseline: one cuBLASLt block-scaled FP8 matmul per expert with rows, enqueued back to back"
                          : "baseline: one cuBLASLt dense bf16 matmul per expert with rows, enqueued back to back"});
  entry.peak_kernel = fp8 ? "cublaslt_fp8_blockscale" : "cublaslt_bf16";
  entry.unsupported_reason = [fp8](const GroupedShape& shape) -> std::optional<std::string> {
    if (fp8) return cublaslt_fp8_unsupported_reason(GemmShape{kFp8RowMultiple, shape.n, shape.k, 1});
    return std::nullopt;
  };
  entry.describe_config = [fp8](const GroupedShape& shape) {
    int64_t rows = 0;
    for (const int64_t r : shape.rows) rows += fp8 ? round_up(r, kFp8RowMultiple) : r;
    return fmt::format("{} cuBLASLt calls over {} rows (heuristic algorithm per call)", shape.active_groups(), rows);
  };
  entry.open = [fp8](Device& device, const GroupedWeightShape& shape, uint64_t seed) -> std::unique_ptr<GroupedGemmSession> {
    return std::make_unique<GroupedLoopSession>(as_cuda_device(device), shape, seed, fp8);
  };
  return entry;
}

}  // namespace

void register_cublaslt_grouped_loops() {
  register_grouped_kernel(loop_entry(true));
  register_grouped_kernel(loop_entry(false));
}

}  // namespace shapescope::kernels::cuda
