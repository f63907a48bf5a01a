// The part every CUDA PreparedGemm shares: the reference check (poison the bf16
// output, run once, gather a deterministic sample; then compare with float64, which
// the sweep runs on another thread while the device is timed), the
// fewest bytes a run must move.
// A kernel derives from it, fills its operands, calls set_output(), and implements run().
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <vector>

#include "kernels/cuda/cuda_device.hpp"
#include "kernels/cuda/device_operands.cuh"
#include "kernels/reference_gemm.hpp"

namespace shapescope::kernels::cuda {

// Sampled outputs per check (dense, and spread over the groups of a grouped GEMM): enough to catch a
// wrong tile or K block, cheap in float64.
constexpr int64_t kCheckSampleElements = 2048;

// A check's run, dense or grouped: the bf16 output (`count` elements) poisoned, `gemm` run once on `stream`,
// then the elements at `indices` of `layout` read back.
std::vector<uint16_t> run_on_poisoned_output(PreparedGemm& gemm, cudaStream_t stream, uint16_t* output, int64_t count,
                                             const OutputStrides& layout, const std::vector<OutputIndex>& indices);

class CudaPreparedGemm : public PreparedGemm {
 public:
  CheckResult check() final { return begin_check()(); }
  std::function<CheckResult()> begin_check() override;
  double min_bytes() const override;
  const ReferenceProblem& problem() const { return problem_; }

 protected:
  CudaPreparedGemm(CudaDevice& device, const ReferenceProblem& problem);
  // The bf16 output check() poisons and reads (count elements; layout of [batch][m][n]).
  void set_output(uint16_t* output, int64_t count, const OutputStrides& layout);
  CudaDevice& device_;

 private:
  ReferenceProblem problem_;
  uint16_t* output_ = nullptr;
  int64_t output_count_ = 0;
  OutputStrides output_layout_;
};

}  // namespace shapescope::kernels::cuda
