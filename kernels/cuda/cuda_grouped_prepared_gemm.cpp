#include "kernels/cuda/cuda_grouped_prepared_gemm.hpp"

#include <stdexcept>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_prepared_gemm.hpp"
#include "kernels/cuda/device_operands.cuh"
#include "kernels/grouped_reference.hpp"

namespace shapescope::kernels::cuda {

CudaGroupedPreparedGemm::CudaGroupedPreparedGemm(CudaDevice& device, OperandFormat format, GroupedShape shape,
                                                 uint64_t seed_a, uint64_t seed_b)
    : device_(device), format_(format), shape_(std::move(shape)), seed_a_(seed_a), seed_b_(seed_b) {}

void CudaGroupedPreparedGemm::set_output(uint16_t* output, GroupedShape storage) {
  output_ = output;
  storage_ = std::move(storage);
}

CheckResult CudaGroupedPreparedGemm::check() {
  if (shape_.useful_rows() == 0) {  // no row on this GPU: nothing to compare (a per-expert loop allocates no output)
    run();
    CUDA_CHECK(cudaStreamSynchronize(device_.stream()));
    return {};
  }
  if (!output_) throw std::logic_error("CudaGroupedPreparedGemm::check before set_output");
  const std::vector<GroupedOutputIndex> sampled = sample_grouped_output(shape_, kCheckSampleElements);
  std::vector<OutputIndex> physical;
  physical.reserve(sampled.size());
  for (const GroupedOutputIndex& index : sampled) physical.push_back({0, layout_row(storage_, index), index.col});
  const std::vector<uint16_t> outputs = run_on_poisoned_output(
      *this, device_.stream(), output_, storage_.layout_rows() * shape_.n, OutputStrides{0, shape_.n, 1}, physical);
  return compare_grouped_with_reference(format_, shape_, seed_a_, seed_b_, sampled, outputs);
}

}  // namespace shapescope::kernels::cuda
