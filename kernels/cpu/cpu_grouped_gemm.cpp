#include "kernels/cpu/cpu_grouped_gemm.hpp"

#include <algorithm>

#include "kernels/fp8_e4m3.hpp"
#include "kernels/grouped_reference.hpp"

namespace shapescope::kernels::cpu {

CpuGroupedPreparedGemm::CpuGroupedPreparedGemm(OperandFormat format, GroupedShape shape, uint64_t seed_a,
                                               uint64_t seed_b, int threads)
    : format_(format),
      shape_(std::move(shape)),
      seed_a_(seed_a),
      seed_b_(seed_b),
      threads_(threads),
      output_(std::size_t(shape_.layout_rows() * shape_.n), kPoisonBf16) {
  for (int64_t g = 0; g < shape_.groups(); ++g)
    if (shape_.rows[std::size_t(g)] > 0) active_.push_back(g);
}

void CpuGroupedPreparedGemm::store_group_tile(int64_t group, int64_t col0, const RowMajorMatrix& tile) {
  const int64_t first = shape_.first_row(group);
  for (int64_t row = 0; row < tile.rows(); ++row)
    for (int64_t col = 0; col < tile.cols(); ++col)
      output_[std::size_t((first + row) * shape_.n + col0 + col)] = encode_bf16(tile(row, col));
}

CheckResult CpuGroupedPreparedGemm::check() {
  std::fill(output_.begin(), output_.end(), kPoisonBf16);
  run();
  const std::vector<GroupedOutputIndex> indices = sample_grouped_output(shape_, kCheckElements);
  std::vector<uint16_t> sampled;
  sampled.reserve(indices.size());
  for (const GroupedOutputIndex& index : indices)
    sampled.push_back(output_[std::size_t(layout_row(shape_, index) * shape_.n + index.col)]);
  return compare_grouped_with_reference(format_, shape_, seed_a_, seed_b_, indices, sampled);
}

}  // namespace shapescope::kernels::cpu
