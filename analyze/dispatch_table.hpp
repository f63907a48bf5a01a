// `analyze --dispatch out.json`: what a serving engine should run at each M.
// Profiles are grouped by (device, N, K, batch count): each group's profiles
// are its kernel set, whatever their dtypes (which numerics are acceptable is
// the caller's choice of inputs; the table records each kernel's dtype). For
// every M of the group's sweep the table names the fastest way to do that GEMM
// — run one of the kernels, split M into measured sizes (the split search's
// k-way / halves / study pair), or pad up to a larger measured M — and joins
// consecutive M with the same kernel and action into ranges. A split or pad is
// chosen only when its predicted time beats the best single launch ×
// split_ratio (the same bar as the split search). The JSON schema is
// docs/dispatch_schema.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyze/series.hpp"
#include "analyze/split_search.hpp"

namespace shapescope::analyze {

enum class DispatchAction { run, split, pad };
std::string to_string(DispatchAction action);

struct DispatchChoice {
  int64_t m = 0;
  std::string kernel;              // the profile whose measurements the choice uses
  DispatchAction action = DispatchAction::run;
  std::vector<int64_t> parts;      // split: M of each launch; pad: the padded M
  double predicted_us = 0;
  double single_launch_us = 0;     // the fastest single launch of M over the kernel set
};

struct DispatchRange {
  int64_t m_first = 0, m_last = 0;
  std::string kernel;
  DispatchAction action = DispatchAction::run;
  std::vector<DispatchChoice> choices;  // one per swept M in the range, ascending
};

struct DispatchTable {
  std::string device;
  int64_t n = 0, k = 0, batch_count = 1;
  std::vector<std::string> kernels;  // the kernel set, in input order
  std::vector<std::string> dtypes;   // of each kernel
  std::vector<DispatchRange> ranges;
};

// One table per (device, N, K, batch count) group of `series`.
std::vector<DispatchTable> build_dispatch_tables(const std::vector<const Series*>& series,
                                                 const SplitOptions& options);

nlohmann::json dispatch_json(const std::vector<DispatchTable>& tables, const SplitOptions& options);

}  // namespace shapescope::analyze
