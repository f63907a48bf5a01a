// The largest sizes an input file may name (HF configs, capture reports): far above any real model, low
// enough that products of two stay inside int64 and no buffer is sized past memory by a typo.
#pragma once

#include <cstdint>

namespace shapescope {

inline constexpr int64_t kMaxModelDimension = int64_t(1) << 20;  // hidden size, N, K, heads, experts, batch count
inline constexpr int64_t kMaxModelLayers = int64_t(1) << 12;     // decoder layers (DeepSeek-V3: 61)
inline constexpr int64_t kMaxBatchTokens = int64_t(1) << 24;     // tokens in one batch (M)

}  // namespace shapescope
