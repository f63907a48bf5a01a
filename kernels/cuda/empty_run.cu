// The run that launches one empty kernel: timed in each mode, it is the floor that mode
// adds to every GEMM (launch, events, graph node), recorded in the sidecar.
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/empty_run.hpp"

namespace shapescope::kernels::cuda {

namespace {

__global__ void empty_kernel() {}

class EmptyRun final : public PreparedGemm {
 public:
  explicit EmptyRun(CudaDevice& device) : device_(device) {}
  void run() override {
    empty_kernel<<<1, 32, 0, device_.stream()>>>();
    CUDA_CHECK(cudaGetLastError());
  }
  CheckResult check() override { return {}; }
  std::string launch_name() const override { return "empty_kernel<<<1, 32>>>"; }
  double min_bytes() const override { return 0; }

 private:
  CudaDevice& device_;
};

}  // namespace

std::unique_ptr<PreparedGemm> make_empty_run(CudaDevice& device) { return std::make_unique<EmptyRun>(device); }

}  // namespace shapescope::kernels::cuda
