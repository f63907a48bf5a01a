// The codec tests' encoding oracle, written independently of the codecs: brute-force nearest-value search.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

namespace shapescope::testing_support {

// The code 0..largest_code of a format (`value_of` defines it) nearest to |value|, ties to the even code,
// saturating at the largest code's value.
inline int nearest_positive_code(double value, double (*value_of)(int), int largest_code) {
  const double magnitude = std::min(std::fabs(value), value_of(largest_code));
  int best = 0;
  double best_distance = std::numeric_limits<double>::infinity();
  for (int code = 0; code <= largest_code; ++code) {
    const double distance = std::fabs(value_of(code) - magnitude);
    if (distance < best_distance || (distance == best_distance && (code & 1) == 0)) {
      best = code;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace shapescope::testing_support
