#include "kernels/cuda/cupti_library.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace shapescope::kernels::cuda {

namespace {

void* open_cupti(std::string& tried) {
  std::vector<std::string> candidates;
  if (const char* path = std::getenv("SHAPESCOPE_CUPTI")) candidates.push_back(path);
  for (const char* name : {"libcupti.so", "libcupti.so.13", "/usr/local/cuda/lib64/libcupti.so",
                           "/usr/local/cuda/lib/libcupti.so", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so"})
    candidates.push_back(name);
  for (const std::string& candidate : candidates) {
    if (void* library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)) return library;
    tried += (tried.empty() ? "" : ", ") + candidate;
  }
  return nullptr;
}

}  // namespace

void* cupti_library() {
  static std::mutex mutex;
  static void* library = nullptr;  // kept for the process: CUPTI hooks stay installed in the driver
  std::lock_guard lock(mutex);
  if (!library) {
    std::string tried;
    library = open_cupti(tried);
    if (!library)
      throw std::runtime_error("libcupti (CUDA toolkit) not found as " + tried + "; set SHAPESCOPE_CUPTI to its path");
  }
  return library;
}

void* cupti_symbol(const char* name) { return dlsym(cupti_library(), name); }

std::string cupti_result_text(CUptiResult result) {
  using ResultString = CUptiResult (*)(CUptiResult, const char**);
  const auto result_string = cupti_function<ResultString>("cuptiGetResultString");
  const char* text = nullptr;
  if (result_string && result_string(result, &text) == CUPTI_SUCCESS && text) return text;
  return "CUPTI error " + std::to_string(int(result));
}

}  // namespace shapescope::kernels::cuda
