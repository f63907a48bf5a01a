#include "kernels/cuda/cuda_prepared_gemm.hpp"

#include <stdexcept>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::cuda {

CudaPreparedGemm::CudaPreparedGemm(CudaDevice& device, const ReferenceProblem& problem)
    : device_(device), problem_(problem) {}

void CudaPreparedGemm::set_output(uint16_t* output, int64_t count, const OutputStrides& layout) {
  output_ = output;
  output_count_ = count;
  output_layout_ = layout;
}

std::vector<uint16_t> run_on_poisoned_output(PreparedGemm& gemm, cudaStream_t stream, uint16_t* output, int64_t count,
                                             const OutputStrides& layout, const std::vector<OutputIndex>& indices) {
  poison_bf16(output, count, stream);
  gemm.run();
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return gather_bf16(output, layout, indices, stream);
}

std::function<CheckResult()> CudaPreparedGemm::begin_check() {
  if (!output_) throw std::logic_error("CudaPreparedGemm::check before set_output");
  std::vector<OutputIndex> indices = sample_output(problem_.shape, kCheckSampleElements);
  std::vector<uint16_t> outputs =
      run_on_poisoned_output(*this, device_.stream(), output_, output_count_, output_layout_, indices);
  return [problem = problem_, indices = std::move(indices), outputs = std::move(outputs)] {
    return compare_with_reference(problem, indices, outputs);
  };
}

double CudaPreparedGemm::min_bytes() const { return gemm_min_bytes(problem_.format, problem_.shape); }

}  // namespace shapescope::kernels::cuda
