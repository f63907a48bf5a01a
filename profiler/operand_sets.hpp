// How many distinct operand sets graph timing rotates over: enough that one set's
// bytes are evicted by the others' before its turn comes again (the sets together at
// least twice the L2), as in a model's step where every layer has its own weights;
// never more than fit in a share of free memory, nor than a graph reasonably holds.
#pragma once

#include <cstddef>
#include <cstdint>

namespace shapescope::profiler {

constexpr int kMaxOperandSets = 256;
constexpr double kRotationL2Multiple = 2.0;
constexpr double kRotationMemoryShare = 0.5;  // of the memory free before the extra sets

struct OperandSetPlan {
  int sets = 1;
  bool cold = true;  // false: the cap or memory kept the rotation below kRotationL2Multiple x L2
};

// `set_bytes`: the fewest bytes one run touches (weights, activations, output).
OperandSetPlan plan_operand_sets(double set_bytes, std::size_t l2_bytes, std::size_t free_bytes);

}  // namespace shapescope::profiler
