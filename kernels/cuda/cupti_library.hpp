// libcupti, loaded once at run time so that a build or a machine without it still works:
// SHAPESCOPE_CUPTI names it when it is elsewhere, then the loader's path, then the CUDA
// toolkit's usual places. The activity tracer and the counter collector share it.
#pragma once

#include <cupti_result.h>

#include <string>

namespace shapescope::kernels::cuda {

// The library's handle; throws std::runtime_error "libcupti (CUDA toolkit) not found as …;
// set SHAPESCOPE_CUPTI to its path" when no candidate loads (and again on every call).
void* cupti_library();

// A symbol of libcupti, or nullptr when this libcupti lacks it (loads the library first).
void* cupti_symbol(const char* name);
template <typename Function>
Function cupti_function(const char* name) {
  return reinterpret_cast<Function>(cupti_symbol(name));
}

// CUPTI's own text for a result code ("CUPTI_ERROR_INSUFFICIENT_PRIVILEGES", …).
std::string cupti_result_text(CUptiResult result);

}  // namespace shapescope::kernels::cuda
