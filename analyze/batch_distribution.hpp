// The batch-size distribution `analyze --capture-sizes` optimizes for (--m-weights):
// a histogram CSV (m,weight), or a named shape over batches 1..B:
//   uniform:B    every batch 1..B equally often
//   geometric:R  w(b) proportional to R^(b-1), 0 < R < 1 (decode: small batches dominate), b <= --max-batch
//   zipf:S       w(b) proportional to b^-S, S > 0, b <= --max-batch
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "analyze/m_weights.hpp"

namespace shapescope::analyze {

// A path that exists is read as a histogram; otherwise `spec` must be a named shape.
// Throws UserError naming the spec and the fix.
MWeights batch_distribution(const std::string& spec, std::optional<int64_t> max_batch);

}  // namespace shapescope::analyze
