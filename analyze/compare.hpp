// Kernel A against kernel B on the points both measured: per point the speedup
// of B over A (time A / time B), per shape and per group (model, or device)
// the geometric mean, and win/loss/tie counts, in the form of the AITER
// findings ("1079 of 1104 shapes faster, 25 slower by 1% on average and up to 3.4%").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/series.hpp"

namespace shapescope::analyze {

struct CompareOptions {
  // Used where the points carry no spread: |speedup − 1| within this is a tie.
  double tie_band = 0.01;
  // Rows timed in different modes (events vs graph vs kernel) differ by the mode's
  // floor, not the kernels: refused unless this is set.
  bool allow_mixed_timing = false;
};

enum class Outcome { faster, slower, tie };  // B relative to A

struct ComparedPoint {
  std::string group;  // model when known, else device (AITER: gfx and CU count)
  std::string shape;  // module, N, K (and batch count when > 1)
  int64_t m = 0;
  double time_a_us = 0, time_b_us = 0;
  double speedup = 1;  // time A / time B: above 1, B is faster
  Outcome outcome = Outcome::tie;
};

struct CompareGroup {
  std::string name;
  std::size_t points = 0, faster = 0, slower = 0, ties = 0;
  double geomean_speedup = 1;
  double mean_slowdown = 0;  // over the slower points: mean of time B / time A − 1
  double max_slowdown = 0;
};

struct CompareResult {
  std::string label_a, label_b;
  // The block format of every series of a side, "" when unknown or mixed: profiles of one shape in two formats
  // (--operand-format) say which format wins at each M.
  std::string format_a, format_b;
  std::vector<ComparedPoint> points;     // ordered by group, shape, M
  std::vector<CompareGroup> per_shape;   // name "group | shape"
  std::vector<CompareGroup> per_group;
  CompareGroup overall;
  std::size_t only_in_a = 0, only_in_b = 0;  // points without a partner
};

// Throws UserError when the two sides share no point.
CompareResult compare_series(const std::vector<Series>& a, const std::vector<Series>& b, const std::string& label_a,
                             const std::string& label_b, const CompareOptions& options);

// "1079 of 1104 points faster with B, 25 slower by 1.0% on average and up to 3.4%, 0 tied; geometric mean ×1.123"
std::string compare_headline(const CompareResult& result);
// Whether the two sides ran different block formats.
bool compares_formats(const CompareResult& result);
// The point's faster side by its block format ("nvfp4"), or "tie".
std::string winning_format(const CompareResult& result, const ComparedPoint& point);

// The `count` largest slowdowns of B, worst first.
std::vector<ComparedPoint> worst_slowdowns(const CompareResult& result, std::size_t count);

}  // namespace shapescope::analyze
