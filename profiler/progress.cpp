#include "profiler/progress.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

namespace shapescope::profiler {

Progress::Progress(int64_t total_points, bool enabled)
    : total_(std::max<int64_t>(total_points, 1)), enabled_(enabled), start_(std::chrono::steady_clock::now()) {}

std::string Progress::format_duration(double seconds) {
  const int64_t s = int64_t(std::llround(std::max(0.0, seconds)));
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

void Progress::advance(const std::string& label) {
  ++done_;
  if (!enabled_) return;
  constexpr int kWidth = 30;
  const double fraction = std::min(1.0, double(done_) / double(total_));
  const int filled = int(fraction * kWidth);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double eta = done_ > 0 ? elapsed / double(done_) * double(total_ - done_) : 0;
  // \r and clear-to-end-of-line redraw the same terminal line.
  fmt::print(stderr, "\r[{}{}] {}/{} ETA {} {}\x1b[K", std::string(size_t(filled), '#'),
             std::string(size_t(kWidth - filled), '.'), done_, total_, format_duration(eta), label);
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::finish() {
  if (drawn_) fmt::print(stderr, "\n");
  drawn_ = false;
}

}  // namespace shapescope::profiler
