// Shared pieces of the CPU kernels: operand materialisation from the synthetic
// definition, the e4m3 decode table, and the prepared-GEMM base that owns the
// bf16 output and the correctness check.
#pragma once

#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/kernel.hpp"
#include "kernels/reference_gemm.hpp"

namespace shapescope::kernels::cpu {

using RowMajorMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstBlockMap = Eigen::Map<const RowMajorMatrix, 0, Eigen::OuterStride<>>;

// Output columns one task computes: one 128-wide weight-scale block.
constexpr int64_t kTileN = 128;

// All 256 e4m3 codes decoded, so kernels decode with one load per element.
const std::array<float, 256>& e4m3_table();

// Synthetic operand codes or values, [batch][rows][k] row-major, filled on `threads` threads.
std::vector<uint8_t> fp8_codes(uint64_t seed, uint64_t stream, int64_t batch_count, int64_t rows, int64_t k, int threads);
std::vector<uint16_t> bf16_values(uint64_t seed, uint64_t stream, int64_t batch_count, int64_t rows, int64_t k,
                                  int threads);
// Scales laid out like the synthetic indices: [batch][row_blocks][k_blocks] with row_blocks = rows (1x128) or
// ceil(rows/128) (128x128).
std::vector<float> block_scales(uint64_t seed, uint64_t stream, int64_t count);

// Dequantized or decoded operand as float, [batch][rows][k].
std::vector<float> decode_all(const std::vector<uint16_t>& bf16, int threads);
// e4m3 codes decoded to float (unscaled), same order.
std::vector<float> decode_fp8_all(const std::vector<uint8_t>& codes, int threads);

// The CPU's prepared GEMM: output [batch][m][n] bf16, check() against the reference.
class CpuPreparedGemm : public PreparedGemm {
 public:
  CpuPreparedGemm(ReferenceProblem problem, int threads, std::string launch_name);
  CheckResult check() override;
  std::string launch_name() const override { return launch_name_; }
  double min_bytes() const override;

 protected:
  const GemmShape& shape() const { return problem_.shape; }
  uint16_t* output_batch(int64_t batch) { return output_.data() + batch * shape().m * shape().n; }
  // Rounds an m x width float tile to bf16 into output columns [col0, col0 + width).
  void store_tile(int64_t batch, int64_t col0, const RowMajorMatrix& tile);

  ReferenceProblem problem_;
  int threads_;

 private:
  std::string launch_name_;
  std::vector<uint16_t> output_;
};

// The session of a dense CPU kernel: `Weights(shape, seed, threads)` made once (it keeps the shape as
// `shape`), `Gemm(weights, m, seed, threads)` for each M, `Gemm::activation_bytes(shape, m)` what an M
// takes beside the weights.
template <typename Weights, typename Gemm>
class CpuSession final : public GemmSession {
 public:
  CpuSession(const WeightShape& shape, uint64_t seed, int threads) : threads_(threads), weights_(shape, seed, threads) {}

  std::size_t activation_bytes(int64_t m) const override { return Gemm::activation_bytes(weights_.shape, m); }

  std::unique_ptr<PreparedGemm> prepare(int64_t m, uint64_t seed) override {
    return std::make_unique<Gemm>(weights_, m, seed, threads_);
  }

 private:
  int threads_;
  Weights weights_;
};

// The entry of a dense CPU kernel: batched, every shape supported, its session on all the device's threads
// (the caller adds how it describes and configures a shape).
template <typename Weights, typename Gemm>
KernelEntry cpu_kernel_entry(std::string name, std::string dtype, std::string formats, std::string description) {
  KernelEntry entry;
  entry.name = std::move(name);
  entry.backend = BackendKind::cpu;
  entry.dtype = std::move(dtype);
  entry.formats = std::move(formats);
  entry.description = std::move(description);
  entry.batched = true;
  entry.unsupported_reason = [](const GemmShape&) -> std::optional<std::string> { return std::nullopt; };
  entry.open = [](Device& device, const WeightShape& shape, uint64_t seed) -> std::unique_ptr<GemmSession> {
    return std::make_unique<CpuSession<Weights, Gemm>>(shape, seed, device.info().multiprocessors);
  };
  return entry;
}

// Checked elements per point: enough to catch a wrong block, cheap beside the run.
constexpr int64_t kCheckElements = 4096;

}  // namespace shapescope::kernels::cpu
