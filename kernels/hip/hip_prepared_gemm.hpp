// The part every HIP PreparedGemm shares: the reference check (poison the bf16 output, run
// once, gather a deterministic sample, compare with float64) and the fewest bytes a run moves
// (FP8 block-scale or bf16 operands, not batched: the kinds the HIP backend has).
#pragma once

#include "kernels/hip/hip_device.hpp"
#include "kernels/reference_gemm.hpp"

namespace shapescope::kernels::rocm {

class HipPreparedGemm : public PreparedGemm {
 public:
  CheckResult check() override;
  double min_bytes() const override;

 protected:
  HipPreparedGemm(HipDevice& device, const ReferenceProblem& problem) : device_(device), problem_(problem) {}
  // The [m][n] bf16 output check() poisons and reads.
  void set_output(uint16_t* output) { output_ = output; }
  const ReferenceProblem& problem() const { return problem_; }
  HipDevice& device_;

 private:
  ReferenceProblem problem_;
  uint16_t* output_ = nullptr;
};

}  // namespace shapescope::kernels::rocm
