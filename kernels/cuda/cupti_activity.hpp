// The GPU's own record of every kernel (and memset) it ran, from the CUDA toolkit's
// CUPTI activity API: libcupti is loaded at run time (cupti_library.hpp), so a build or
// a machine without it still works, and kernel timing then says what is missing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace shapescope::kernels::cuda {

struct KernelActivity {
  std::string name;
  uint64_t start_ns = 0, end_ns = 0;
  double duration_us() const { return double(end_ns - start_ns) / 1000.0; }
};

class CuptiActivity {
 public:
  // The process's one tracer (CUPTI allows one set of activity callbacks); throws
  // std::runtime_error saying why when libcupti cannot be loaded or enabled.
  static CuptiActivity& instance();
  // Records kernels and memsets from now on; stopped when the last user is gone,
  // since tracing adds to every launch's cost in the other timing modes.
  class Tracing {
   public:
    Tracing();
    ~Tracing();
    Tracing(const Tracing&) = delete;
    Tracing& operator=(const Tracing&) = delete;
  };
  // Hands over every record of work that has finished (the caller synchronizes first).
  std::vector<KernelActivity> take_finished();

  // CUPTI's buffer-completed callback: keeps the buffer's kernel and memset records.
  void read_buffer(uint8_t* buffer, std::size_t valid_bytes);

 private:
  struct Api;
  ~CuptiActivity();
  CuptiActivity();
  void enable(bool on);
  std::unique_ptr<Api> api_;
  std::mutex mutex_;
  std::vector<KernelActivity> records_;
  int users_ = 0;
};

}  // namespace shapescope::kernels::cuda
