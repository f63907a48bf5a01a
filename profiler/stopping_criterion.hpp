// When a point has enough samples: stopping criteria as plug-ins (after nvbench's
// stopping_criterion): a small interface that sees the samples one by one, and a registry by
// name with each criterion's parameters and their defaults (`--stopping-criterion NAME`,
// `--criterion-param KEY=VALUE`). The caps (max samples, max seconds per point) stay the
// measurement loop's.
//
//   stderr  the standard error of the mean below --target-rel-stderr of the mean, after
//           --min-samples samples.
//   ci95    the 95% Student-t interval of the mean within max-rel-ci95 of the mean, after
//           min-samples (3) samples: the interval a profile records is the bar itself, so a
//           stable kernel stops as soon as three samples pin it down, and a noisy one is held to
//           the same interval.
//   median-ci95  stderr's rule, or the median's distribution-free 95% interval (order statistics)
//           within max-rel-ci95 of the median: the profile records the median, and a few slow
//           outliers widen that interval by a rank each where they hold the mean's stderr up.
//   pooled-ci95 (the default)  a kernel's relative spread is nearly the same at nearby M (one kernel, one shape family, one
//           timer), so the points of a sweep share it: the relative variance pooled over the last `window`
//           points of the same file (NoiseHistory; a point beyond the 99% quantile of its F stays out) bounds
//           the interval of this point's median from `min-samples` (3) samples on, where the point's own
//           samples cannot (at 5, their own t quantile is 2.78; the pool's is about 2.0). The median's
//           interval is t(pool dof) x pooled sigma x c(n) / sqrt(n), c the median's standard error over the
//           mean's for normal samples (1 up to 2 samples, 1.16 at 3, rising to sqrt(pi/2)). The median's own
//           distribution-free interval within the bar stops a point too (a pool widened by slow samples holds
//           no point whose median is pinned down). A guard: where the point's own variance exceeds the
//           pool's beyond the 95% quantile of F(n - 1, pool dof), the pool has under `min-pool-dof`
//           degrees of freedom (the first points of a sweep), or the pool is too wide to reach the bar at
//           this n (a noisy stretch), the point goes by median-ci95's rule, which holds stderr's: on the same
//           samples, pooled-ci95 never takes more than stderr. A point
//           that stops on the pool records the pool's interval of the mean as its ci95. The default bar,
//           1%, was set by measurement: on the main job's kernels and M range (H100, 2026-11-25) its profiles
//           record a median ci95 no wider than stderr's, from 24-33% fewer samples; on an H200, 27% fewer at a
//           median ci95 0.03 points wider (docs/adaptive_search.md).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace shapescope::profiler {

struct MeasureOptions;
class NoiseHistory;

class StoppingCriterion {
 public:
  virtual ~StoppingCriterion() = default;
  virtual void add(double sample_us) = 0;
  // True once the samples so far are enough.
  virtual bool done() const = 0;
  // The 95% half-width of the mean over the mean that the criterion stopped on, where it rests on more than
  // the point's own samples (a pooled spread); nullopt: the samples' own Student-t interval.
  virtual std::optional<double> recorded_relative_ci95() const { return std::nullopt; }
  // False where the point's spread is far beyond its neighbours' pooled one: it stays out of their pool.
  virtual bool joins_pool() const { return true; }
};

struct StoppingCriterionEntry {
  std::string name;
  std::string description;
  std::map<std::string, double> defaults;  // every parameter it takes
  // `params` holds every parameter of `defaults` (a given value, or the default); `history` is the noise of
  // the sweep's earlier points of the same file, or null (a lone measurement).
  std::function<std::unique_ptr<StoppingCriterion>(const std::map<std::string, double>& params,
                                                   const MeasureOptions& options, const NoiseHistory* history)>
      make;
};

const std::vector<StoppingCriterionEntry>& stopping_criteria();

// The criterion named by options.stopping_criterion with options.criterion_params over its defaults.
// Throws UserError naming the valid criteria, or the criterion's parameters, or a parameter out of range.
std::unique_ptr<StoppingCriterion> make_stopping_criterion(const MeasureOptions& options,
                                                          const NoiseHistory* history = nullptr);

// Every parameter of that criterion: options.criterion_params over its defaults. Throws as above.
std::map<std::string, double> stopping_criterion_params(const MeasureOptions& options);

// "KEY=VALUE" of --criterion-param into `params`. Throws UserError.
void parse_criterion_param(const std::string& text, std::map<std::string, double>& params);

}  // namespace shapescope::profiler
