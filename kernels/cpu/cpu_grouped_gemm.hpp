// What the CPU's grouped kernels share: the bf16 output in the problem's layout, the groups with rows, the
// check against the grouped float64 reference, and the bytes and rows of a run (padding rows are skipped).
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu/cpu_gemm.hpp"
#include "kernels/grouped_gemm.hpp"

namespace shapescope::kernels::cpu {

class CpuGroupedPreparedGemm : public GroupedPreparedGemm {
 public:
  CpuGroupedPreparedGemm(OperandFormat format, GroupedShape shape, uint64_t seed_a, uint64_t seed_b, int threads);
  CheckResult check() override;
  double min_bytes() const override { return grouped_min_bytes(shape_, format_); }
  int64_t executed_rows() const override { return shape_.useful_rows(); }  // padding rows are skipped

 protected:
  // Rounds group g's tile (its rows x width) to bf16 into output columns [col0, col0 + width).
  void store_group_tile(int64_t group, int64_t col0, const RowMajorMatrix& tile);

  const OperandFormat format_;
  const GroupedShape shape_;
  const uint64_t seed_a_, seed_b_;
  const int threads_;
  std::vector<int64_t> active_;  // groups with rows

 private:
  std::vector<uint16_t> output_;  // [layout rows][n] bf16
};

// The session of a grouped CPU kernel: `Weights(shape, seed, threads)` made once (it keeps the shape as
// `shape`), `Gemm(weights, shape, seed, threads)` for each grouped shape, `Gemm::activation_bytes(shape)` what a
// shape takes beside the weights.
template <typename Weights, typename Gemm>
class CpuGroupedSession final : public GroupedGemmSession {
 public:
  CpuGroupedSession(std::string kernel, const GroupedWeightShape& shape, uint64_t seed, int threads)
      : kernel_(std::move(kernel)), threads_(threads), weights_(shape, seed, threads) {}

  std::size_t activation_bytes(const GroupedShape& shape) const override { return Gemm::activation_bytes(shape); }

  std::unique_ptr<GroupedPreparedGemm> prepare(const GroupedShape& shape, uint64_t seed) override {
    if (shape.groups() != weights_.shape.groups || shape.n != weights_.shape.n || shape.k != weights_.shape.k)
      throw std::logic_error(kernel_ + ": the shape does not match the session's weights");
    return std::make_unique<Gemm>(weights_, shape, seed, threads_);
  }

 private:
  std::string kernel_;
  int threads_;
  Weights weights_;
};

// The entry of a grouped CPU kernel whose session is CpuGroupedSession<Weights, Gemm> on all the device's threads;
// `peak_kernel` is the dense kernel it runs per group (the caller adds how it describes a shape).
template <typename Weights, typename Gemm>
GroupedKernelEntry cpu_grouped_kernel_entry(KernelIdentity identity, std::string peak_kernel) {
  GroupedKernelEntry entry(std::move(identity));
  entry.backend = BackendKind::cpu;
  entry.peak_kernel = std::move(peak_kernel);
  entry.open = [kernel = entry.name](Device& device, const GroupedWeightShape& shape,
                                     uint64_t seed) -> std::unique_ptr<GroupedGemmSession> {
    return std::make_unique<CpuGroupedSession<Weights, Gemm>>(kernel, shape, seed, device.info().multiprocessors);
  };
  return entry;
}

}  // namespace shapescope::kernels::cpu
