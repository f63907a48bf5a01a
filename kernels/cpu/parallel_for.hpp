// Splits CPU kernel work over std::threads (dynamic scheduling, so uneven
// tiles balance out). Our threads own the parallelism: Eigen runs single-threaded
// inside them.
#pragma once

#include <cstdint>
#include <functional>

namespace shapescope::kernels::cpu {

// Calls body(i) for every i in [0, count) on up to `threads` threads; rethrows the first exception.
void parallel_for(int threads, int64_t count, const std::function<void(int64_t)>& body);

}  // namespace shapescope::kernels::cpu
