// What the CPU's grouped kernels share: the bf16 output in the problem's layout, the groups with rows, the
// check against the grouped float64 reference, and the bytes and rows of a run (padding rows are skipped).
#pragma once

#include <cstdint>
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

}  // namespace shapescope::kernels::cpu
