// A heuristic's device spec, queried once per CUDA device ordinal and kept for the process.
#pragma once

#include <map>
#include <mutex>

namespace shapescope::kernels::cuda {

// One cache per spec type: the first call for an ordinal runs `query`, later calls return its result. The map's
// nodes never move, so the references stay valid.
template <class Spec>
const Spec& cached_device_spec(int ordinal, Spec (*query)(int)) {
  static std::mutex mutex;
  static std::map<int, Spec> specs;
  const std::lock_guard<std::mutex> lock(mutex);
  auto found = specs.find(ordinal);
  if (found == specs.end()) found = specs.emplace(ordinal, query(ordinal)).first;
  return found->second;
}

}  // namespace shapescope::kernels::cuda
