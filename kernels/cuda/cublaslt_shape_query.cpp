#include "kernels/cuda/cublaslt_shape_query.hpp"

#include <exception>
#include <optional>
#include <string>
#include <utility>

#include "kernels/cuda/cuda_device.hpp"

namespace shapescope::kernels::cuda {
namespace {

// One handle for all queries, created on first use and deliberately never destroyed:
// destroying it from a static destructor would race the CUDA runtime's own teardown.
cublasLtHandle_t query_handle() {
  static const cublasLtHandle_t handle = [] {
    cublasLtHandle_t created = nullptr;
    return cublasLtCreate(&created) == CUBLAS_STATUS_SUCCESS ? created : nullptr;
  }();
  return handle;
}

struct CublasLtQuery {
  std::optional<CublasLtAlgorithmInfo> algorithm;
  std::string why_not;  // when no algorithm: no GPU, or the heuristic's refusal
};

CublasLtQuery query_cublaslt_algorithm(
    const std::function<std::unique_ptr<CublasLtMatmul>(cublasLtHandle_t)>& make_matmul) {
  if (auto missing = missing_device_reason()) return {std::nullopt, missing->insert(0, "no GPU to ask: ")};
  const cublasLtHandle_t handle = query_handle();
  if (!handle) return {std::nullopt, "cublasLtCreate failed"};
  try {
    const auto matmul = make_matmul(handle);
    if (auto refused = matmul->choose_algorithm(kCublasLtWorkspaceBytes)) return {std::nullopt, *refused};
    return {matmul->algorithm(), {}};
  } catch (const std::exception& error) {
    return {std::nullopt, error.what()};
  }
}

std::string describe_query(const CublasLtQuery& query) {
  // Built by appending: GCC 12 warns falsely (-Wrestrict) on literal + string here.
  if (!query.algorithm) return std::string("cuBLASLt heuristic (").append(query.why_not).append(")");
  return query.algorithm->describe();
}

// The picked algorithm's configuration in our row-major terms; all 0 when no algorithm was picked.
KernelConfig config_of_query(const CublasLtQuery& query) {
  if (!query.algorithm) return {};
  return query.algorithm->config();
}

}  // namespace

void describe_by_heuristic(
    KernelEntry& entry, std::function<std::unique_ptr<CublasLtMatmul>(cublasLtHandle_t, const GemmShape&)> make_matmul) {
  const auto query = [make_matmul = std::move(make_matmul)](const GemmShape& shape) {
    return query_cublaslt_algorithm([&](cublasLtHandle_t handle) { return make_matmul(handle, shape); });
  };
  entry.describe_config = [query](const GemmShape& shape) { return describe_query(query(shape)); };
  entry.config_for = [query](const GemmShape& shape) { return config_of_query(query(shape)); };
}

}  // namespace shapescope::kernels::cuda
