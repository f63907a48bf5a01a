// mxfp8_dequantized_bf16: C (bf16) = A x B^T with A and B MXFP8 (e4m3, an e8m0 scale per 1x32) in memory, both
// dequantized to bf16 inside every run (mxfp8_dequantize.cu) and multiplied by cuBLASLt's bf16 GEMM with fp32
// accumulation (dequantized_bf16_gemm.hpp). Hopper's tensor cores take no block scales, and e4m3 x 2^e is exact
// in bf16 but not in e4m3, so exact MXFP8 on Hopper is bf16 math: this path runs at the bf16 rate plus the
// dequantization's memory traffic, where mxfp8_blockscale's fp8 MMA pays a CUDA-core promotion per 32 K.
// Operands: mxfp8_operands.hpp, the same as mxfp8_blockscale's. Operands whose scale codes could leave
// kMxfp8Bf16LowestCode..kMxfp8Bf16HighestCode are refused with one line at open, from the generator's code range
// (no quantizer of O(1) data makes such codes).
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "common/user_error.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/dequantized_bf16_gemm.hpp"
#include "kernels/cuda/mxfp8_dequantize.hpp"
#include "kernels/cuda/mxfp8_operands.hpp"
#include "kernels/cuda/own_kernel_entries.hpp"
#include "kernels/operand_format.hpp"
#include "kernels/shape_checks.hpp"

namespace shapescope::kernels::cuda {
namespace {

constexpr const char* kName = "mxfp8_dequantized_bf16";

// MXFP8 codes and packed scales of one operand, and the bf16 scratch every run rewrites.
struct Mxfp8Operand {
  Mxfp8Operand(const OperandEncoding& encoding, const synthetic::OperandStreams& streams, uint64_t seed, int64_t rows,
               int64_t k, cudaStream_t stream)
      : rows(rows),
        codes(std::size_t(rows * k)),
        scales(std::size_t(mxfp8_scale_words(rows, k))),
        dequantized(std::size_t(rows * k)) {
    fill_mxfp8_operand(encoding, streams, seed, rows, k, codes.data(), scales.data(), stream);
  }
  Mxfp8DequantizedOperand dequantization() { return {codes.data(), scales.data(), rows, dequantized.data()}; }

  int64_t rows;
  DeviceBuffer<uint8_t> codes;
  DeviceBuffer<uint32_t> scales;
  DeviceBuffer<uint16_t> dequantized;
};

class Mxfp8DequantizedPrepared final : public DequantizedBf16Gemm {
 public:
  Mxfp8DequantizedPrepared(CudaDevice& device, const ReferenceProblem& problem, cublasLtHandle_t handle,
                           Mxfp8Operand& weights)
      : DequantizedBf16Gemm(device, problem, handle, kName, 1.0f),
        weights_(weights),
        activations_(operand_encodings(OperandFormat::mxfp8).a, synthetic::kAStreams, problem.seed_a,
                     problem.shape.m, problem.shape.k, device.stream()) {
    multiply(weights.dequantized.data(), activations_.dequantized.data());
    CUDA_CHECK(cudaStreamSynchronize(device.stream()));
  }

 private:
  void dequantize_operands(cudaStream_t stream) override {
    dequantize_mxfp8(activations_.dequantization(), weights_.dequantization(), problem().shape.k, stream);
  }

  Mxfp8Operand& weights_;
  Mxfp8Operand activations_;
};

class Mxfp8DequantizedSession final : public GemmSession {
 public:
  Mxfp8DequantizedSession(CudaDevice& device, const WeightShape& shape, uint64_t seed)
      : device_(device),
        shape_(shape),
        seed_(seed),
        weights_(operand_encodings(OperandFormat::mxfp8).b, synthetic::kBStreams, seed, shape.n, shape.k,
                 device.stream()) {}
  std::size_t activation_bytes(int64_t m) const override {
    return std::size_t(m * shape_.k * 3 + mxfp8_scale_words(m, shape_.k) * 4 + m * shape_.n * 2) +
           kCublasLtWorkspaceBytes;
  }
  std::unique_ptr<PreparedGemm> prepare(int64_t m, uint64_t seed) override {
    const ReferenceProblem problem{OperandFormat::mxfp8, GemmShape{m, shape_.n, shape_.k, 1}, seed, seed_};
    return std::make_unique<Mxfp8DequantizedPrepared>(device_, problem, handle_.get(), weights_);
  }

 private:
  CudaDevice& device_;
  WeightShape shape_;
  uint64_t seed_;
  CublasLtHandle handle_;
  Mxfp8Operand weights_;
};

// Both operands' scale codes within what bf16 holds exactly, or one line saying which is not.
void require_bf16_exact_scales() {
  const OperandEncodings encodings = operand_encodings(OperandFormat::mxfp8);
  for (const auto& [operand, encoding] : {std::pair{"A", encodings.a}, std::pair{"B", encodings.b}}) {
    const synthetic::ScaleCodeRange codes = synthetic::e8m0_scale_code_range(element_emax(encoding.element));
    if (codes.lowest < kMxfp8Bf16LowestCode || codes.highest > kMxfp8Bf16HighestCode)
      throw UserError(fmt::format("{}: {}'s e8m0 scale codes {}..{} leave {}..{}, where e4m3 x 2^(code - 127) is not "
                                  "exact in bf16; use mxfp8_blockscale for these operands",
                                  kName, operand, codes.lowest, codes.highest, kMxfp8Bf16LowestCode,
                                  kMxfp8Bf16HighestCode));
  }
}

std::optional<std::string> mxfp8_dequantized_unsupported_reason(const GemmShape& shape) {
  if (auto reason = batch_count_problem(shape)) return reason;
  if (auto reason = extent_problem(shape)) return reason;
  if (shape.k % 8 != 0)
    return "K=" + std::to_string(shape.k) + " is not a multiple of 8 (8-code loads, 16-byte bf16 rows for cuBLASLt)";
  if (std::max(shape.m, shape.n) * shape.k >= kMxfp8DequantizedMostElements)
    return "M x K or N x K reaches 2^35 elements (the dequantization indexes runs of 8 in 32 bits)";
  return std::nullopt;
}

}  // namespace

KernelEntry mxfp8_dequantized_bf16_entry() {
  KernelEntry entry({.name = kName, .backend = BackendKind::cuda, .dtype = "bf16",
                     .formats = "A and B e4m3 with e8m0 scales per 1x32 (MXFP8), dequantized to bf16 in the run, "
                                "C bf16",
                     .formats_taken = {BlockFormatId::mxfp8},
                     .description = "ours: both MXFP8 operands dequantized to bf16 (exact) inside every run, then "
                                    "cuBLASLt bf16 with fp32 accumulation"});
  entry.unsupported_reason = mxfp8_dequantized_unsupported_reason;
  describe_dequantized_bf16(entry);
  entry.open = [](Device& device, const WeightShape& shape, uint64_t seed) -> std::unique_ptr<GemmSession> {
    require_supported_weights(kName, shape, mxfp8_dequantized_unsupported_reason(GemmShape{1, shape.n, shape.k, 1}));
    require_bf16_exact_scales();
    return std::make_unique<Mxfp8DequantizedSession>(as_cuda_device(device), shape, seed);
  };
  return entry;
}

}  // namespace shapescope::kernels::cuda
