// One cuBLASLt matmul, D = op(A) * op(B) in cuBLASLt's column-major terms, with
// the descriptors owned, the algorithm picked by cublasLtMatmulAlgoGetHeuristic,
// and the pick described the way the library names its kernels ("tile=128x64",
// cublaslt_algorithm_info.hpp).
//
// Our row-major C[M,N] = A[M,K] * B[N,K]^T is, column-major, C^T = B^T(op T) * A:
// cuBLASLt's A is our weights B (K x N, ld K, transposed), its B our activations
// (K x M, ld K), its D our output (N x M, ld N). That is the "TN" form FP8 requires.
#pragma once

#include <cublasLt.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/cuda/cublaslt_algorithm_info.hpp"

namespace shapescope::kernels::cuda {

struct CublasLtOperand {
  cudaDataType_t type;
  uint64_t rows = 0, cols = 0;  // column-major extents as stored
  int64_t ld = 0;
  int64_t batch_stride = 0;     // elements between batches (batch_count > 1)
};

// Maximum workspace offered to the heuristic (cuBLASLt's own recommendation for Hopper).
constexpr std::size_t kCublasLtWorkspaceBytes = 32u << 20;

class CublasLtMatmul {
 public:
  CublasLtMatmul(cublasLtHandle_t handle, cublasComputeType_t compute, cublasOperation_t transa,
                 cublasOperation_t transb, const CublasLtOperand& a, const CublasLtOperand& b,
                 const CublasLtOperand& d, int64_t batch_count);
  ~CublasLtMatmul();
  CublasLtMatmul(const CublasLtMatmul&) = delete;
  CublasLtMatmul& operator=(const CublasLtMatmul&) = delete;

  // Extra settings (scale modes and pointers) before choose_algorithm().
  template <typename Value>
  void set(cublasLtMatmulDescAttributes_t attribute, const Value& value) {
    set_attribute(attribute, &value, sizeof value);
  }
  // D = alpha * A * B from then on (1 unless set: the product of per-tensor scales, NVFP4's second level).
  void set_alpha(float alpha) { alpha_ = alpha; }
  // Picks the heuristic's first answer; returns why not when cuBLASLt supports no algorithm.
  std::optional<std::string> choose_algorithm(std::size_t max_workspace_bytes);
  const CublasLtAlgorithmInfo& algorithm() const { return info_; }
  // D = alpha * A * B (beta 0), enqueued on `stream`; workspace of at least algorithm().workspace_bytes.
  void run(const void* a, const void* b, void* d, void* workspace, cudaStream_t stream) const;

 private:
  void set_attribute(cublasLtMatmulDescAttributes_t attribute, const void* value, std::size_t size);
  void release() noexcept;
  cublasLtHandle_t handle_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, d_ = nullptr;
  std::optional<cublasLtMatmulAlgo_t> algo_;
  CublasLtAlgorithmInfo info_;
  float alpha_ = 1.0f;
};

// A cuBLASLt handle owned for a session's lifetime.
class CublasLtHandle {
 public:
  CublasLtHandle();
  ~CublasLtHandle();
  CublasLtHandle(const CublasLtHandle&) = delete;
  CublasLtHandle& operator=(const CublasLtHandle&) = delete;
  cublasLtHandle_t get() const { return handle_; }

 private:
  cublasLtHandle_t handle_ = nullptr;
};

}  // namespace shapescope::kernels::cuda
