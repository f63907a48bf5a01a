// Asks cuBLASLt's heuristic which algorithm it would pick for a shape, without
// operands, for `profile --list-kernels` and the configuration columns of every profile row.
#pragma once

#include <functional>
#include <memory>

#include "kernels/cuda/cublaslt_matmul.hpp"

namespace shapescope::kernels::cuda {

// Sets a cuBLASLt entry's describe_config and config_for from the algorithm its heuristic picks for a shape.
// `make_matmul` builds the descriptors (pointer attributes may be placeholders: the heuristic reads no data).
void describe_by_heuristic(
    KernelEntry& entry, std::function<std::unique_ptr<CublasLtMatmul>(cublasLtHandle_t, const GemmShape&)> make_matmul);

}  // namespace shapescope::kernels::cuda
