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

double CudaPreparedGemm::min_bytes() const {
  const GemmShape& s = problem_.shape;
  const double m = double(s.m), n = double(s.n), k = double(s.k), batch = double(s.batch_count);
  const double kblocks = double(synthetic::blocks(s.k));
  const double output = m * n * 2;
  switch (problem_.format) {
    case OperandFormat::fp8_blockscale:
      return batch * (m * k + m * kblocks * 4 + n * k + double(synthetic::blocks(s.n)) * kblocks * 4 + output);
    case OperandFormat::a16w8_blockscale:
      return batch * (m * k * 2 + n * k + double(synthetic::blocks(s.n)) * kblocks * 4 + output);
    case OperandFormat::bf16:
      return batch * (m * k * 2 + n * k * 2 + output);
  }
  throw std::logic_error("unknown operand format");
}

}  // namespace shapescope::kernels::cuda
