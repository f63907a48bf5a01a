#include "profiler/device_baseline.hpp"

#include "profiler/repeat_sweep.hpp"
#include "profiler/sweep_runner.hpp"

namespace shapescope::profiler {

std::shared_ptr<DeviceBaseline> measure_device_baseline(kernels::Device& device, const SweepPlan& plan) {
  device.set_programmatic_launch(plan.programmatic_launch);
  // Drift must not pose as shape: start from a settled clock and flag points measured below it.
  const double steady_clock_mhz =
      plan.steady_warm_up && device.kind() != kernels::BackendKind::cpu
          ? warm_up_for_sweep(device, plan.m_values, plan.problems, plan.kernels, plan.seed)
          : 0;
  return std::make_shared<DeviceBaseline>(DeviceBaseline{steady_clock_mhz, measure_timing_floors(device, plan.measure),
                                                         PeakResolver(plan.peak_mode, plan.peak_override_tflops)});
}

}  // namespace shapescope::profiler
