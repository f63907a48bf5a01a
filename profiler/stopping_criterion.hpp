// When a point has enough samples: stopping criteria as plug-ins (after nvbench's
// stopping_criterion): a small interface that sees the samples one by one, and a registry by
// name with each criterion's parameters and their defaults (`--stopping-criterion NAME`,
// `--criterion-param KEY=VALUE`). The caps (max samples, max seconds per point) stay the
// measurement loop's.
//
//   stderr  the standard error of the mean below --target-rel-stderr of the mean, after
//           --min-samples samples (the default).
//   ci95    the 95% Student-t interval of the mean within max-rel-ci95 of the mean, after
//           min-samples (3) samples: the interval a profile records is the bar itself, so a
//           stable kernel stops as soon as three samples pin it down, and a noisy one is held to
//           the same interval.
//   median-ci95  stderr's rule, or the median's distribution-free 95% interval (order statistics)
//           within max-rel-ci95 of the median: the profile records the median, and a few slow
//           outliers widen that interval by a rank each where they hold the mean's stderr up.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace shapescope::profiler {

struct MeasureOptions;

class StoppingCriterion {
 public:
  virtual ~StoppingCriterion() = default;
  virtual void add(double sample_us) = 0;
  // True once the samples so far are enough.
  virtual bool done() const = 0;
};

struct StoppingCriterionEntry {
  std::string name;
  std::string description;
  std::map<std::string, double> defaults;  // every parameter it takes
  // `params` holds every parameter of `defaults` (a given value, or the default).
  std::function<std::unique_ptr<StoppingCriterion>(const std::map<std::string, double>& params,
                                                   const MeasureOptions& options)>
      make;
};

const std::vector<StoppingCriterionEntry>& stopping_criteria();

// The criterion named by options.stopping_criterion with options.criterion_params over its defaults.
// Throws UserError naming the valid criteria, or the criterion's parameters, or a parameter out of range.
std::unique_ptr<StoppingCriterion> make_stopping_criterion(const MeasureOptions& options);

// "KEY=VALUE" of --criterion-param into `params`. Throws UserError.
void parse_criterion_param(const std::string& text, std::map<std::string, double>& params);

}  // namespace shapescope::profiler
