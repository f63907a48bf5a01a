#include "kernels/cuda/cupti_activity.hpp"

#include <cupti_activity.h>

#include <cstdlib>
#include <stdexcept>

#include "kernels/cuda/cupti_library.hpp"

namespace shapescope::kernels::cuda {

struct CuptiActivity::Api {
  CUptiResult (*enable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*disable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc) = nullptr;
  CUptiResult (*flush_all)(uint32_t) = nullptr;
  CUptiResult (*next_record)(uint8_t*, size_t, CUpti_Activity**) = nullptr;
};

namespace {

constexpr std::size_t kBufferBytes = 1 << 20;
// The kinds a run's GPU work shows up as: kernels (a split-K reduction included) and memsets.
constexpr CUpti_ActivityKind kTracedKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMSET};

template <typename Function>
bool load(const char* name, Function& function) {
  function = cupti_function<Function>(name);
  return function != nullptr;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_bytes) {
  CuptiActivity::instance().read_buffer(buffer, valid_bytes);
  std::free(buffer);
}

}  // namespace

CuptiActivity& CuptiActivity::instance() {
  static CuptiActivity activity;  // a load failure throws again on the next call
  return activity;
}

CuptiActivity::CuptiActivity() {
  try {
    cupti_library();
  } catch (const std::runtime_error& missing) {
    throw std::runtime_error(std::string("kernel timing needs ") + missing.what() + " or use --timing events|graph");
  }
  api_ = std::make_unique<Api>();
  const bool complete = load("cuptiActivityEnable", api_->enable) && load("cuptiActivityDisable", api_->disable) &&
                        load("cuptiActivityRegisterCallbacks", api_->register_callbacks) &&
                        load("cuptiActivityFlushAll", api_->flush_all) &&
                        load("cuptiActivityGetNextRecord", api_->next_record);
  if (!complete) throw std::runtime_error("kernel timing: the libcupti found lacks the activity API");
  const CUptiResult registered = api_->register_callbacks(buffer_requested, buffer_completed);
  if (registered != CUPTI_SUCCESS)
    throw std::runtime_error("kernel timing: cuptiActivityRegisterCallbacks failed: " + cupti_result_text(registered));
}

CuptiActivity::~CuptiActivity() = default;

void CuptiActivity::enable(bool on) {
  for (CUpti_ActivityKind kind : kTracedKinds) {
    const CUptiResult result = on ? api_->enable(kind) : api_->disable(kind);
    if (result != CUPTI_SUCCESS && on) {
      throw std::runtime_error("kernel timing: cuptiActivityEnable failed: " + cupti_result_text(result) +
                               " (is another profiler attached, or are GPU traces not permitted here?)");
    }
  }
}

CuptiActivity::Tracing::Tracing() {
  CuptiActivity& activity = instance();
  std::lock_guard lock(activity.mutex_);
  if (activity.users_++ == 0) {
    try {
      activity.enable(true);
    } catch (...) {
      --activity.users_;
      throw;
    }
  }
}

CuptiActivity::Tracing::~Tracing() {
  CuptiActivity& activity = instance();
  bool last = false;
  {
    std::lock_guard lock(activity.mutex_);
    last = --activity.users_ == 0;
  }
  if (last) {
    activity.api_->flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    activity.enable(false);
    std::lock_guard lock(activity.mutex_);
    activity.records_.clear();
  }
}

void CuptiActivity::read_buffer(uint8_t* buffer, std::size_t valid_bytes) {
  std::vector<KernelActivity> records;
  CUpti_Activity* record = nullptr;
  while (api_->next_record(buffer, valid_bytes, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      records.push_back({kernel->name ? kernel->name : "?", kernel->start, kernel->end});
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
      const auto* memset = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
      records.push_back({"memset", memset->start, memset->end});
    }
  }
  std::lock_guard lock(mutex_);
  for (KernelActivity& record : records) records_.push_back(std::move(record));
}

std::vector<KernelActivity> CuptiActivity::take_finished() {
  api_->flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard lock(mutex_);
  std::vector<KernelActivity> taken;
  taken.swap(records_);
  return taken;
}

}  // namespace shapescope::kernels::cuda
