#include "kernels/cuda/cublaslt_matmul.hpp"

#include <algorithm>
#include <stdexcept>

#include "kernels/cuda/cuda_check.hpp"

namespace shapescope::kernels::cuda {
namespace {

// The attribute's type must be the library's (it checks the size): see cublasLt.h per attribute.
template <typename Value>
Value algo_config(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attribute) {
  Value value{};
  std::size_t written = 0;
  CUBLAS_CHECK(cublasLtMatmulAlgoConfigGetAttribute(&algo, attribute, &value, sizeof value, &written));
  return value;
}

cublasLtMatrixLayout_t make_layout(const CublasLtOperand& operand, int64_t batch_count) {
  cublasLtMatrixLayout_t layout = nullptr;
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layout, operand.type, operand.rows, operand.cols, operand.ld));
  if (batch_count > 1) {
    const int32_t count = int32_t(batch_count);
    CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count));
    CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                  &operand.batch_stride, sizeof operand.batch_stride));
  }
  return layout;
}

}  // namespace

CublasLtMatmul::CublasLtMatmul(cublasLtHandle_t handle, cublasComputeType_t compute, cublasOperation_t transa,
                               cublasOperation_t transb, const CublasLtOperand& a, const CublasLtOperand& b,
                               const CublasLtOperand& d, int64_t batch_count)
    : handle_(handle) {
  try {
    CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc_, compute, CUDA_R_32F));
    set(CUBLASLT_MATMUL_DESC_TRANSA, transa);
    set(CUBLASLT_MATMUL_DESC_TRANSB, transb);
    a_ = make_layout(a, batch_count);
    b_ = make_layout(b, batch_count);
    d_ = make_layout(d, batch_count);
  } catch (...) {
    release();
    throw;
  }
}

CublasLtMatmul::~CublasLtMatmul() { release(); }

void CublasLtMatmul::release() noexcept {
  if (d_) cublasLtMatrixLayoutDestroy(d_);
  if (b_) cublasLtMatrixLayoutDestroy(b_);
  if (a_) cublasLtMatrixLayoutDestroy(a_);
  if (desc_) cublasLtMatmulDescDestroy(desc_);
  d_ = b_ = a_ = nullptr;
  desc_ = nullptr;
}

void CublasLtMatmul::set_attribute(cublasLtMatmulDescAttributes_t attribute, const void* value, std::size_t size) {
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc_, attribute, value, size));
}

std::optional<std::string> CublasLtMatmul::choose_algorithm(std::size_t max_workspace_bytes) {
  cublasLtMatmulPreference_t preference = nullptr;
  CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
  cublasLtMatmulHeuristicResult_t result{};
  int returned = 0;
  cublasStatus_t status = cublasLtMatmulPreferenceSetAttribute(
      preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_workspace_bytes, sizeof max_workspace_bytes);
  if (status == CUBLAS_STATUS_SUCCESS)
    status = cublasLtMatmulAlgoGetHeuristic(handle_, desc_, a_, b_, d_, d_, preference, 1, &result, &returned);
  cublasLtMatmulPreferenceDestroy(preference);
  // NOT_SUPPORTED (and INVALID_VALUE for layouts a kernel family rejects) mean "no algorithm", not a bug.
  if (status == CUBLAS_STATUS_NOT_SUPPORTED || status == CUBLAS_STATUS_INVALID_VALUE)
    return std::string("cuBLASLt heuristic: ") + cublasGetStatusName(status);
  CUBLAS_CHECK(status);
  if (returned == 0 || result.state != CUBLAS_STATUS_SUCCESS) return std::string("cuBLASLt heuristic: no algorithm");
  algo_ = result.algo;
  info_.id = algo_config<int32_t>(result.algo, CUBLASLT_ALGO_CONFIG_ID);
  info_.tile = int(algo_config<uint32_t>(result.algo, CUBLASLT_ALGO_CONFIG_TILE_ID));
  info_.stages = int(algo_config<uint32_t>(result.algo, CUBLASLT_ALGO_CONFIG_STAGES_ID));
  info_.split_k = std::max(1, int(algo_config<int32_t>(result.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM)));
  info_.reduction_scheme = int(algo_config<uint32_t>(result.algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME));
  info_.cta_swizzling = int(algo_config<uint32_t>(result.algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING));
  info_.custom_option = int(algo_config<uint32_t>(result.algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION));
  info_.inner_shape = int(algo_config<uint16_t>(result.algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID));
  info_.cluster_shape = int(algo_config<uint16_t>(result.algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID));
  info_.set_tile_extents();
  info_.workspace_bytes = result.workspaceSize;
  return std::nullopt;
}

void CublasLtMatmul::run(const void* a, const void* b, void* d, void* workspace, cudaStream_t stream) const {
  if (!algo_) throw std::logic_error("CublasLtMatmul::run before choose_algorithm");
  const float beta = 0.0f;
  CUBLAS_CHECK(cublasLtMatmul(handle_, desc_, &alpha_, a, a_, b, b_, &beta, d, d_, d, d_, &*algo_, workspace,
                              info_.workspace_bytes, stream));
}

CublasLtHandle::CublasLtHandle() { CUBLAS_CHECK(cublasLtCreate(&handle_)); }
CublasLtHandle::~CublasLtHandle() { cublasLtDestroy(handle_); }

}  // namespace shapescope::kernels::cuda
