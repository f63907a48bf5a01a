// How often each batch size occurs in serving (a histogram, CSV "m,weight"),
// so recoverable time can be weighted by traffic instead of uniform over the sweep.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace shapescope::analyze {

class MWeights {
 public:
  // Uniform: every M weighs 1.
  MWeights() = default;
  // Throws UserError with file:line on a malformed row, a negative or
  // non-finite weight, or a repeated M.
  static MWeights read(const std::string& path);
  // A histogram built in code (named distributions); `source` says what it is.
  static MWeights from_weights(std::map<int64_t, double> weights, std::string source);

  bool uniform() const { return uniform_; }
  // An M missing from a histogram does not occur in serving: weight 0.
  double weight(int64_t m) const;
  const std::map<int64_t, double>& weights() const { return weights_; }
  const std::string& source() const { return source_; }

 private:
  bool uniform_ = true;
  std::map<int64_t, double> weights_;
  std::string source_;
};

}  // namespace shapescope::analyze
