// How a batch of M tokens becomes rows per expert (`profile --routing`): every token
// picks top_k distinct experts, drawn from a per-expert popularity; under expert
// parallelism the profiled GPU (rank 0) holds experts [0, experts/ep) and sees only
// the (token, expert) pairs that land there.
//
//   uniform          every expert equally popular, top-k drawn at random (seeded)
//   balanced         no randomness: token t takes experts t*top_k .. t*top_k+top_k-1 (mod E),
//                    so every expert gets the same rows to within one
//   lognormal:SIGMA  popularity exp(SIGMA * z), z standard normal per expert; the skew the
//                    issue cites DeepEP for as closest to real DeepSeek-V3 traffic
//   zipf:S           popularity 1/rank^S, ranks dealt to experts in a seeded shuffle
//   file:CSV         a measured histogram (columns expert,tokens) used as the popularity
//
// The popularity is drawn once from the sweep's seed (the same hot experts at every M);
// each M's tokens are drawn from their own seed. All randomness is a counter-based hash,
// so a seed gives the same rows on every platform.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shapescope::profiler {

enum class RoutingKind { uniform, balanced, lognormal, zipf, histogram };

struct RoutingSpec {
  RoutingKind kind = RoutingKind::uniform;
  double parameter = 0;            // lognormal sigma, zipf exponent
  std::vector<double> histogram;   // file: tokens per expert, index = expert
  std::string file;                // file: the path given
  std::string text() const;        // "uniform", "lognormal:1.5", "file:path/to.csv"
  std::string label() const;       // for file names: "uniform", "lognormal1.5", "file_<stem>"
};

// Parses --routing; a file is read and checked here. Throws UserError naming the input and the fix.
RoutingSpec parse_routing(const std::string& text);

// The routing of one MoE layer's experts.
class Router {
 public:
  // Throws UserError when a histogram does not fit `experts` or has fewer than top_k experts with tokens.
  Router(const RoutingSpec& spec, int64_t experts, int64_t top_k, uint64_t popularity_seed);
  // (token, expert) pairs per expert, over all experts: each of `tokens` tokens adds one row
  // to top_k distinct experts, so the rows sum to tokens * top_k.
  std::vector<int64_t> expert_rows(int64_t tokens, uint64_t token_seed) const;
  const std::vector<double>& popularity() const { return popularity_; }

 private:
  RoutingSpec spec_;
  int64_t experts_, top_k_;
  std::vector<double> popularity_;
  std::vector<double> cumulative_;  // prefix sums of popularity_
};

// The rows of the experts rank `rank` holds when `ep` ranks hold experts/ep consecutive experts each.
std::vector<int64_t> local_rows(const std::vector<int64_t>& expert_rows, int64_t ep, int64_t rank = 0);

}  // namespace shapescope::profiler
