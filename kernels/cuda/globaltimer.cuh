// The device's nanosecond timer (%globaltimer), shared by every kernel that measures or bounds its own time.
#pragma once

namespace shapescope::kernels::cuda {

__device__ __forceinline__ unsigned long long globaltimer_ns() {
  unsigned long long ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}

}  // namespace shapescope::kernels::cuda
