// Asks cuBLASLt's heuristic which algorithm it would pick for a shape, without
// operands, for `profile --list-kernels` and the tile shapes of wave analysis.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/cuda/cublaslt_matmul.hpp"

namespace shapescope::kernels::cuda {

struct CublasLtQuery {
  std::optional<CublasLtAlgorithmInfo> algorithm;
  std::string why_not;  // when no algorithm: no GPU, or the heuristic's refusal
};

// `make_matmul` builds the descriptors (pointer attributes may be placeholders: the heuristic reads no data).
CublasLtQuery query_cublaslt_algorithm(
    const std::function<std::unique_ptr<CublasLtMatmul>(cublasLtHandle_t)>& make_matmul);

std::string describe_query(const CublasLtQuery& query);
// The picked algorithm's configuration in our row-major terms; all 0 when no algorithm was picked.
KernelConfig config_of_query(const CublasLtQuery& query);

}  // namespace shapescope::kernels::cuda
