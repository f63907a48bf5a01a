#include "kernels/hip/hip_prepared_gemm.hpp"

#include <stdexcept>

#include "kernels/hip/hip_check.hpp"
#include "kernels/hip/hip_operands.hpp"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::rocm {

// Sampled outputs per check: enough to catch a wrong tile or K block, cheap in float64.
constexpr int64_t kCheckSampleElements = 2048;

CheckResult HipPreparedGemm::check() {
  if (!output_) throw std::logic_error("HipPreparedGemm::check before set_output");
  const GemmShape& s = problem_.shape;
  poison_bf16(output_, s.m * s.n, device_.stream());
  run();
  HIP_CHECK(hipStreamSynchronize(device_.stream()));
  const std::vector<OutputIndex> indices = sample_output(s, kCheckSampleElements);
  return compare_with_reference(problem_, indices, gather_bf16(output_, s.n, indices, device_.stream()));
}

double HipPreparedGemm::min_bytes() const {
  const GemmShape& s = problem_.shape;
  const double m = double(s.m), n = double(s.n), k = double(s.k), kblocks = double(synthetic::blocks(s.k));
  switch (problem_.format) {
    case OperandFormat::fp8_blockscale:
      return m * k + m * kblocks * 4 + n * k + double(synthetic::blocks(s.n)) * kblocks * 4 + m * n * 2;
    case OperandFormat::bf16:
      return (m * k + n * k + m * n) * 2;
    case OperandFormat::a16w8_blockscale:
    case OperandFormat::mxfp8:
    case OperandFormat::a16w4_mxfp4:
    case OperandFormat::a16w4_nvfp4:
    case OperandFormat::a16w4_e2m1_e8m0_16:
    case OperandFormat::nvfp4:
      break;
  }
  throw std::logic_error("HipPreparedGemm::min_bytes: the HIP backend has no kernel of this operand format");
}

}  // namespace shapescope::kernels::rocm
