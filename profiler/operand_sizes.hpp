// Refuses, before anything is allocated, a sweep whose operands cannot be
// addressed or cannot fit: the element counts of A (M×K), B (N×K) and C (M×N),
// times the batch, must stay far from overflowing 64-bit byte counts, and the
// weights alone (one byte per element at the least) must fit in the device's memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/model_catalog.hpp"

namespace shapescope::profiler {

// 2^48 elements (256 Ti): beyond any device's memory, and small enough that the
// byte counts kernels compute (a few buffers of up to 8 bytes per element) fit in 64 bits.
inline constexpr int64_t kMaxOperandElements = int64_t(1) << 48;

// Throws UserError naming the model, the layer and the size that does not fit.
// device_memory_bytes 0: unknown, only the overflow bound applies.
void check_operand_sizes(const std::vector<GemmProblem>& problems, int64_t largest_m, std::size_t device_memory_bytes);

}  // namespace shapescope::profiler
