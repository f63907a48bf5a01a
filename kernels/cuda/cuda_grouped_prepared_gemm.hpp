// The part every CUDA grouped GEMM shares: the per-group reference check (poison the
// bf16 output, run once, gather the sampled elements of every group with rows from where
// the kernel's own layout puts them, compare with float64) and the fewest bytes.
// A kernel derives from it, fills its operands, calls set_output(), implements run().
#pragma once

#include <cuda_runtime.h>

#include "kernels/cuda/cuda_device.hpp"
#include "kernels/grouped_gemm.hpp"
#include "kernels/reference_gemm.hpp"

namespace shapescope::kernels::cuda {

class CudaGroupedPreparedGemm : public GroupedPreparedGemm {
 public:
  CheckResult check() override;
  double min_bytes() const override { return grouped_min_bytes(shape_, format_); }
  const GroupedShape& shape() const { return shape_; }

 protected:
  CudaGroupedPreparedGemm(CudaDevice& device, OperandFormat format, GroupedShape shape, uint64_t seed_a,
                          uint64_t seed_b);
  // The bf16 output [storage.layout_rows()][n] check() poisons and reads: `storage` is the
  // problem's rows in the layout the kernel keeps them in (its own padding included).
  void set_output(uint16_t* output, GroupedShape storage);
  CudaDevice& device_;
  const OperandFormat format_;
  const GroupedShape shape_;
  const uint64_t seed_a_, seed_b_;

 private:
  uint16_t* output_ = nullptr;
  GroupedShape storage_;
};

}  // namespace shapescope::kernels::cuda
