#include "kernels/cuda/cupti_range_counters.hpp"

#include <cuda_runtime.h>
#include <cupti_target.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "kernels/cuda/cupti_library.hpp"

namespace shapescope::kernels::cuda {

// The CUPTI functions used here, looked up in the one loaded libcupti.
struct CuptiRangeCounters::Api {
  decltype(&cuptiProfilerInitialize) initialize = nullptr;
  decltype(&cuptiDeviceGetChipName) chip_name = nullptr;
  decltype(&cuptiProfilerGetCounterAvailability) counter_availability = nullptr;
  decltype(&cuptiProfilerHostInitialize) host_initialize = nullptr;
  decltype(&cuptiProfilerHostDeinitialize) host_deinitialize = nullptr;
  decltype(&cuptiProfilerHostGetMetricProperties) metric_properties = nullptr;
  decltype(&cuptiProfilerHostConfigAddMetrics) add_metrics = nullptr;
  decltype(&cuptiProfilerHostGetConfigImageSize) config_image_size = nullptr;
  decltype(&cuptiProfilerHostGetConfigImage) config_image = nullptr;
  decltype(&cuptiProfilerHostEvaluateToGpuValues) evaluate = nullptr;
  decltype(&cuptiRangeProfilerEnable) enable = nullptr;
  decltype(&cuptiRangeProfilerDisable) disable = nullptr;
  decltype(&cuptiRangeProfilerGetCounterDataSize) counter_data_size = nullptr;
  decltype(&cuptiRangeProfilerCounterDataImageInitialize) counter_data_initialize = nullptr;
  decltype(&cuptiRangeProfilerSetConfig) set_config = nullptr;
  decltype(&cuptiRangeProfilerStart) start = nullptr;
  decltype(&cuptiRangeProfilerStop) stop = nullptr;
  decltype(&cuptiRangeProfilerDecodeData) decode = nullptr;
  decltype(&cuptiRangeProfilerGetCounterDataInfo) counter_data_info = nullptr;
};

namespace {

// Kernels one run may launch (a GEMM and a reduction, a memset-free library call: a few).
constexpr std::size_t kMaxRanges = 16;
// Passes a metric set may need; beyond it something is wrong.
constexpr int kMaxPasses = 64;

template <typename Function>
void load(const char* name, Function& function) {
  function = cupti_function<Function>(name);
  if (!function)
    throw std::runtime_error(fmt::format("hardware counters need CUPTI's range profiler (CUDA 12.6 or newer); the "
                                         "libcupti loaded lacks {}",
                                         name));
}

void check(CUptiResult result, const char* call) {
  if (result == CUPTI_SUCCESS) return;
  if (result == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES || result == CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES)
    throw std::runtime_error(fmt::format("GPU performance counters are not permitted for this user ({} in {}): run as "
                                         "root or load the driver with NVreg_RestrictProfilingToAdminUsers=0",
                                         cupti_result_text(result), call));
  throw std::runtime_error(fmt::format("hardware counters: {} failed: {}", call, cupti_result_text(result)));
}

template <typename Params>
Params params(std::size_t struct_size) {
  Params value{};
  value.structSize = struct_size;
  return value;
}

}  // namespace

CuptiRangeCounters::CuptiRangeCounters(int ordinal) : api_(std::make_unique<Api>()) {
  load("cuptiProfilerInitialize", api_->initialize);
  load("cuptiDeviceGetChipName", api_->chip_name);
  load("cuptiProfilerGetCounterAvailability", api_->counter_availability);
  load("cuptiProfilerHostInitialize", api_->host_initialize);
  load("cuptiProfilerHostDeinitialize", api_->host_deinitialize);
  load("cuptiProfilerHostGetMetricProperties", api_->metric_properties);
  load("cuptiProfilerHostConfigAddMetrics", api_->add_metrics);
  load("cuptiProfilerHostGetConfigImageSize", api_->config_image_size);
  load("cuptiProfilerHostGetConfigImage", api_->config_image);
  load("cuptiProfilerHostEvaluateToGpuValues", api_->evaluate);
  load("cuptiRangeProfilerEnable", api_->enable);
  load("cuptiRangeProfilerDisable", api_->disable);
  load("cuptiRangeProfilerGetCounterDataSize", api_->counter_data_size);
  load("cuptiRangeProfilerCounterDataImageInitialize", api_->counter_data_initialize);
  load("cuptiRangeProfilerSetConfig", api_->set_config);
  load("cuptiRangeProfilerStart", api_->start);
  load("cuptiRangeProfilerStop", api_->stop);
  load("cuptiRangeProfilerDecodeData", api_->decode);
  load("cuptiRangeProfilerGetCounterDataInfo", api_->counter_data_info);

  // The driver's cuCtxGetCurrent through the runtime, so no binary links libcuda (absent without a GPU driver).
  void* get_current = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaSetDevice(ordinal) != cudaSuccess || cudaFree(nullptr) != cudaSuccess ||
      cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &get_current, 12000, cudaEnableDefault, &found) !=
          cudaSuccess ||
      found != cudaDriverEntryPointSuccess || !get_current ||
      reinterpret_cast<CUresult (*)(CUcontext*)>(get_current)(&context_) != CUDA_SUCCESS || !context_)
    throw std::runtime_error(fmt::format("hardware counters: no CUDA context on device {}", ordinal));

  auto initialize = params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
  check(api_->initialize(&initialize), "cuptiProfilerInitialize");

  auto chip = params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  chip.deviceIndex = std::size_t(ordinal);
  check(api_->chip_name(&chip), "cuptiDeviceGetChipName");

  // Reading the availability image is where a user without counter permission is refused.
  auto availability =
      params<CUpti_Profiler_GetCounterAvailability_Params>(CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
  availability.ctx = context_;
  check(api_->counter_availability(&availability), "cuptiProfilerGetCounterAvailability");
  std::vector<uint8_t> availability_image(availability.counterAvailabilityImageSize);
  availability.pCounterAvailabilityImage = availability_image.data();
  check(api_->counter_availability(&availability), "cuptiProfilerGetCounterAvailability");

  auto host = params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  host.pChipName = chip.pChipName;
  host.pCounterAvailabilityImage = availability_image.data();
  check(api_->host_initialize(&host), "cuptiProfilerHostInitialize");
  host_ = host.pHostObject;

  // Fail soft per metric: one the chip does not know is reported missing.
  for (const CounterMetric& metric : counter_metrics()) {
    auto properties =
        params<CUpti_Profiler_Host_GetMetricProperties_Params>(CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE);
    properties.pHostObject = host_;
    properties.pMetricName = metric.name;
    if (api_->metric_properties(&properties) == CUPTI_SUCCESS) {
      metric_names_.push_back(metric.name);
    } else {
      missing_.push_back(metric.name);
    }
  }
  if (metric_names_.empty()) throw std::runtime_error("hardware counters: the chip " + std::string(chip.pChipName) +
                                                      " knows none of the metrics (common/kernel_counters.cpp)");
  for (const std::string& name : metric_names_) metric_pointers_.push_back(name.c_str());

  auto add = params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  add.pHostObject = host_;
  add.ppMetricNames = metric_pointers_.data();
  add.numMetrics = metric_pointers_.size();
  check(api_->add_metrics(&add), "cuptiProfilerHostConfigAddMetrics");
  auto size = params<CUpti_Profiler_Host_GetConfigImageSize_Params>(CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  size.pHostObject = host_;
  check(api_->config_image_size(&size), "cuptiProfilerHostGetConfigImageSize");
  config_.resize(size.configImageSize);
  auto image = params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  image.pHostObject = host_;
  image.configImageSize = config_.size();
  image.pConfigImage = config_.data();
  check(api_->config_image(&image), "cuptiProfilerHostGetConfigImage");

  // A user without counter permission is refused here at the latest: try it now, not after the sweep.
  enable();
  auto disable = params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
  disable.pRangeProfilerObject = profiler_;
  check(api_->disable(&disable), "cuptiRangeProfilerDisable");
  profiler_ = nullptr;
}

CuptiRangeCounters::~CuptiRangeCounters() {
  if (profiler_) {
    auto disable = params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    disable.pRangeProfilerObject = profiler_;
    api_->disable(&disable);
  }
  if (host_) {
    auto deinitialize =
        params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
    deinitialize.pHostObject = host_;
    api_->host_deinitialize(&deinitialize);
  }
}

void CuptiRangeCounters::enable() {
  auto enable = params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
  enable.ctx = context_;
  check(api_->enable(&enable), "cuptiRangeProfilerEnable");
  profiler_ = enable.pRangeProfilerObject;
  auto size = params<CUpti_RangeProfiler_GetCounterDataSize_Params>(CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  size.pRangeProfilerObject = profiler_;
  size.pMetricNames = metric_pointers_.data();
  size.numMetrics = metric_pointers_.size();
  size.maxNumOfRanges = kMaxRanges;
  size.maxNumRangeTreeNodes = kMaxRanges;
  check(api_->counter_data_size(&size), "cuptiRangeProfilerGetCounterDataSize");
  counter_data_.assign(size.counterDataSize, 0);
}

KernelCounters CuptiRangeCounters::collect(PreparedGemm& run, const std::function<void()>& before_each_pass) {
  if (!profiler_) {
    enable();
    // The first collection after enabling counts more than its run: on an H100 ~16 MB of DRAM writes
    // and +15-25% duration at every M, where the later ones write 52 KB (llama3_8b gate_up TP2, M=16
    // first or M=144 first alike). So it is run once and dropped.
    collect_once(run, before_each_pass);
  }
  return collect_once(run, before_each_pass);
}

KernelCounters CuptiRangeCounters::collect_once(PreparedGemm& run, const std::function<void()>& before_each_pass) {
  auto initialize = params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  initialize.pRangeProfilerObject = profiler_;
  initialize.counterDataSize = counter_data_.size();
  initialize.pCounterData = counter_data_.data();
  check(api_->counter_data_initialize(&initialize), "cuptiRangeProfilerCounterDataImageInitialize");

  auto config = params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  config.pRangeProfilerObject = profiler_;
  config.configSize = config_.size();
  config.pConfig = config_.data();
  config.counterDataImageSize = counter_data_.size();
  config.pCounterDataImage = counter_data_.data();
  config.range = CUPTI_AutoRange;  // one range per kernel launch
  config.replayMode = CUPTI_UserReplay;  // each pass a whole run after before_each_pass (header)
  config.maxRangesPerPass = kMaxRanges;
  config.numNestingLevels = 1;
  config.minNestingLevel = 1;
  config.passIndex = 0;
  config.targetNestingLevel = 1;
  check(api_->set_config(&config), "cuptiRangeProfilerSetConfig");

  // One run per pass until the profiler has every pass it scheduled. The preparation runs
  // before Start, so nothing it launches is a range of its own.
  bool all_submitted = false;
  for (int pass = 0; pass < kMaxPasses && !all_submitted; ++pass) {
    before_each_pass();
    auto start = params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
    start.pRangeProfilerObject = profiler_;
    check(api_->start(&start), "cuptiRangeProfilerStart");
    run.run();
    if (cudaDeviceSynchronize() != cudaSuccess) throw std::runtime_error("hardware counters: the counted run failed");
    auto stop = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    stop.pRangeProfilerObject = profiler_;
    check(api_->stop(&stop), "cuptiRangeProfilerStop");
    all_submitted = stop.isAllPassSubmitted != 0;
  }
  if (!all_submitted) throw std::runtime_error("hardware counters: the range profiler never finished its passes");
  auto decode = params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  decode.pRangeProfilerObject = profiler_;
  check(api_->decode(&decode), "cuptiRangeProfilerDecodeData");

  auto info = params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  info.pCounterDataImage = counter_data_.data();
  info.counterDataImageSize = counter_data_.size();
  check(api_->counter_data_info(&info), "cuptiRangeProfilerGetCounterDataInfo");

  // Counts add up over the kernels (ranges); ratios are weighted by each kernel's duration.
  KernelCounters counters;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const CounterMetric& metric : counter_metrics()) counters.*metric.field = nan;
  std::vector<double> totals(metric_names_.size(), 0), values(metric_names_.size(), 0);
  double total_duration_ns = 0;
  for (std::size_t range = 0; range < info.numTotalRanges; ++range) {
    auto evaluate =
        params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
    evaluate.pHostObject = host_;
    evaluate.pCounterDataImage = counter_data_.data();
    evaluate.counterDataImageSize = counter_data_.size();
    evaluate.rangeIndex = range;
    evaluate.ppMetricNames = metric_pointers_.data();
    evaluate.numMetrics = metric_pointers_.size();
    evaluate.pMetricValues = values.data();
    check(api_->evaluate(&evaluate), "cuptiProfilerHostEvaluateToGpuValues");
    // counter_metrics() lists the duration first; without it every range weighs the same.
    const double duration_ns = metric_names_.front() == counter_metrics().front().name ? values.front() : 1;
    total_duration_ns += duration_ns;
    std::size_t i = 0;
    for (const CounterMetric& metric : counter_metrics()) {
      if (i < metric_names_.size() && metric_names_[i] == metric.name) {
        totals[i] += metric.is_ratio ? values[i] * duration_ns : values[i];
        ++i;
      }
    }
  }
  std::size_t i = 0;
  for (const CounterMetric& metric : counter_metrics()) {
    if (i < metric_names_.size() && metric_names_[i] == metric.name) {
      double value = totals[i];
      if (metric.is_ratio) value = total_duration_ns > 0 ? value / total_duration_ns : nan;
      counters.*metric.field = value;
      ++i;
    }
  }
  counters.duration_us /= 1000;  // gpu__time_duration is in ns
  counters.missing = missing_;
  return counters;
}

}  // namespace shapescope::kernels::cuda
