// Shared pieces of the CPU kernels: operand materialisation from the synthetic
// definition, the e4m3 decode table, and the prepared-GEMM base that owns the
// bf16 output and the correctness check.
#pragma once

#include <Eigen/Core>
#include <array>
#include <cstdint>
#include <functional>
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
// A task computes its tile in panels of at most this many rows and looks for SIGINT/SIGTERM between them, so
// that an interrupt during a large GEMM (one M x 128 x K product takes seconds under the sanitizers) is seen
// within one panel's time.
constexpr int64_t kRowPanel = 256;

// decode(code) of each of the `Codes` codes of an element type, so kernels decode with one load per element.
template <std::size_t Codes, typename Decode>
std::array<float, Codes> decode_table(Decode decode) {
  std::array<float, Codes> values{};
  for (std::size_t code = 0; code < Codes; ++code) values[code] = decode(uint8_t(code));
  return values;
}

// All 256 e4m3 codes decoded.
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
  // The output's tiles of M rows x kTileN columns (the last one narrower), one task each on the threads: stores
  // tile(batch, row0, rows, col0, width), the rows x width product of output rows [row0, row0 + rows) and
  // columns [col0, col0 + width) of `batch`, as bf16, for the tile's panels of at most kRowPanel rows in turn.
  // After an interrupt the panels left are skipped (the sweep drops the point).
  void compute_output_tiles(
      const std::function<RowMajorMatrix(int64_t batch, int64_t row0, int64_t rows, int64_t col0, int64_t width)>&
          tile);

  ReferenceProblem problem_;
  int threads_;

 private:
  std::string launch_name_;
  std::vector<uint16_t> output_;
};

// A CPU GEMM whose activations are bf16 values [batch][m][k], widened to float inside every run (the kernel
// reads bf16, as on the GPU).
class CpuBf16ActivationGemm : public CpuPreparedGemm {
 public:
  CpuBf16ActivationGemm(ReferenceProblem problem, int threads, std::string launch_name);
  // bf16 values + widened floats + bf16 output
  static std::size_t activation_bytes(const WeightShape& s, int64_t m);

 protected:
  // a_decoded_ = the activations as float.
  void widen_activations();

  std::vector<uint16_t> a_values_;
  std::vector<float> a_decoded_;  // scratch, rewritten by every run
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

// The entry of a dense CPU kernel: batched, one task per output tile of M x kTileN, every shape supported
// unless the caller says otherwise (the caller adds how it describes a shape and opens a session).
KernelEntry cpu_entry(KernelIdentity identity);

// cpu_entry() whose session is CpuSession<Weights, Gemm> on all the device's threads.
template <typename Weights, typename Gemm>
KernelEntry cpu_kernel_entry(KernelIdentity identity) {
  KernelEntry entry = cpu_entry(std::move(identity));
  entry.open = [](Device& device, const WeightShape& shape, uint64_t seed) -> std::unique_ptr<GemmSession> {
    return std::make_unique<CpuSession<Weights, Gemm>>(shape, seed, device.info().multiprocessors);
  };
  return entry;
}

// Checked elements per point: enough to catch a wrong block, cheap beside the run.
constexpr int64_t kCheckElements = 4096;

}  // namespace shapescope::kernels::cpu
