#include "analyze/plot_svg.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "common/user_error.hpp"

namespace shapescope::analyze {

namespace {

// Distinguishable on white and for common colour-vision deficiencies (Okabe–Ito).
const std::vector<std::string>& palette() {
  static const std::vector<std::string> colours = {"#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                                   "#56B4E9", "#D55E00", "#000000", "#F0E442"};
  return colours;
}
constexpr const char* kAnomalyColour = "#D62728";

struct Frame {
  double left = 80, right = 0, top = 62, bottom = 0;  // plot area in pixels
  double m_low = 1, m_high = 1, mfu_high = 1;
  bool log_m = false;
  double x(double m) const {
    const double t = log_m ? (std::log2(m) - std::log2(m_low)) / (std::log2(m_high) - std::log2(m_low))
                           : (m - m_low) / (m_high - m_low);
    return left + t * (right - left);
  }
  double y(double mfu) const { return bottom - mfu / mfu_high * (bottom - top); }
};

// Round tick steps 1, 2, 5 × 10^k giving about `target` intervals of a positive, finite span.
double nice_step(double span, int target) {
  const double raw = span / target;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double factor : {1.0, 2.0, 5.0, 10.0}) {
    if (factor * power >= raw) return factor * power;
  }
  return 10 * power;
}

// Ticks first, first + step, … up to `high`; never more than kMaxTicks, whatever the values.
constexpr int kMaxTicks = 40;
std::vector<double> ticks_from(double first, double step, double high) {
  std::vector<double> ticks;
  for (int i = 0; i < kMaxTicks; ++i) {
    const double value = first + i * step;
    if (!(value <= high + step * 1e-9)) break;
    ticks.push_back(value);
  }
  return ticks;
}

std::string format_m(double m) {
  if (m >= 1024 && std::fmod(m, 1024) == 0) return fmt::format("{}k", m / 1024);
  return fmt::format("{}", m);
}

std::vector<double> m_ticks(const Frame& frame) {
  std::vector<double> ticks;
  if (frame.log_m) {
    for (double m = std::exp2(std::ceil(std::log2(frame.m_low))); m <= frame.m_high; m *= 2) ticks.push_back(m);
    while (ticks.size() > 16) {  // keep every other power when crowded
      std::vector<double> thinned;
      for (std::size_t i = 0; i < ticks.size(); i += 2) thinned.push_back(ticks[i]);
      ticks = thinned;
    }
    return ticks;
  }
  const double step = nice_step(frame.m_high - frame.m_low, 10);
  return ticks_from(std::ceil(frame.m_low / step) * step, step, frame.m_high);
}

std::string polyline(const std::vector<PlotPoint>& points, const Frame& frame, const std::string& colour,
                     bool dashed) {
  std::string coordinates;
  for (const PlotPoint& point : points) coordinates += fmt::format("{:.1f},{:.1f} ", frame.x(point.m), frame.y(point.mfu));
  return fmt::format(R"(<polyline fill="none" stroke="{}" stroke-width="{}"{} points="{}"/>)", colour,
                     dashed ? 1.6 : 1.2, dashed ? R"( stroke-dasharray="6 3")" : "", coordinates) +
         "\n";
}

// The part of the labels that all series share, cut at a '_' so that the
// legend shows what tells them apart (kernel, pass) rather than the shape.
std::string shared_label_prefix(const std::vector<PlotSeries>& all) {
  if (all.size() < 2) return "";
  std::string prefix = all.front().label;
  for (const PlotSeries& series : all) {
    std::size_t length = 0;
    while (length < prefix.size() && length < series.label.size() && prefix[length] == series.label[length]) ++length;
    prefix.resize(length);
  }
  const std::size_t cut = prefix.rfind('_');
  return cut == std::string::npos ? "" : prefix.substr(0, cut + 1);
}

}  // namespace

std::string xml_escape(const std::string& text) {
  std::string escaped;
  for (const char c : text) {
    switch (c) {
      case '&': escaped += "&amp;"; break;
      case '<': escaped += "&lt;"; break;
      case '>': escaped += "&gt;"; break;
      case '"': escaped += "&quot;"; break;
      case '\'': escaped += "&apos;"; break;
      default: escaped += c;
    }
  }
  return escaped;
}

PlotSeries plot_series(const SeriesAnalysis& analysis) {
  const Series& series = *analysis.series;
  PlotSeries plot;
  plot.label = series.name;
  std::map<std::size_t, double> planned_time;  // point index → best plan's predicted time
  for (const Finding& finding : analysis.findings) {
    const SeriesPoint& point = series.points[finding.anomaly.index];
    std::string note = fmt::format("M={} MFU {:.3f}, {:.1f}% below {:.3f} (M={})", point.m, point.utils,
                                   100 * finding.anomaly.drop(), finding.anomaly.reference_utils,
                                   finding.anomaly.reference_m);
    if (finding.best) {
      planned_time[finding.anomaly.index] = finding.best->predicted_us;
      note += fmt::format("; best plan {} saves {:.1f}%", to_string(finding.best->kind), 100 * finding.best->gain);
    }
    plot.anomalies.push_back({{static_cast<double>(point.m), point.utils}, note});
  }
  for (std::size_t i = 0; i < series.points.size(); ++i) {
    const SeriesPoint& point = series.points[i];
    plot.measured.push_back({static_cast<double>(point.m), point.utils});
    if (!planned_time.empty()) {
      const auto planned = planned_time.find(i);
      const double mfu = planned == planned_time.end() ? point.utils : point.utils * point.time_us / planned->second;
      plot.with_best_plans.push_back({static_cast<double>(point.m), mfu});
    }
  }
  return plot;
}

std::string render_mfu_svg(const std::vector<PlotSeries>& all, const PlotOptions& options) {
  Frame frame;
  frame.log_m = options.log_m;
  frame.right = options.width - 230.0;  // the legend sits right of the plot
  frame.bottom = options.height - 60.0;
  double m_low = INFINITY, m_high = -INFINITY, mfu_high = 0;
  for (const PlotSeries& series : all) {
    for (const auto* points : {&series.measured, &series.with_best_plans}) {
      for (const PlotPoint& point : *points) {
        m_low = std::min(m_low, point.m);
        m_high = std::max(m_high, point.m);
        mfu_high = std::max(mfu_high, point.mfu);
      }
    }
  }
  if (!(m_low <= m_high)) throw UserError("--plot: the profiles hold no points to draw");
  if (options.log_m && m_low <= 0) throw UserError("--log-m: M must be positive to use a log scale");
  if (!std::isfinite(mfu_high)) throw UserError("--plot: an MFU (measured or with a plan) is not finite");
  frame.m_low = m_low;
  frame.m_high = m_high > m_low ? m_high : m_low + std::max(1.0, m_low);  // one M: any span shows it
  // About ten MFU gridlines at a round step, 0.1 for MFU up to 1.
  const double mfu_step = std::max(0.1, nice_step(std::max(mfu_high, 0.1), 10));
  frame.mfu_high = std::max(0.1, std::ceil(mfu_high / mfu_step - 1e-9) * mfu_step);

  std::string svg = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" font-family="sans-serif" font-size="12">)"
      "\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      options.width, options.height);
  svg += fmt::format(R"(<text x="{}" y="28" font-size="16" font-weight="bold">{}</text>)", frame.left,
                     xml_escape(options.title.empty() ? "MFU over M" : options.title)) +
         "\n";

  // Grid, ticks and tick labels.
  for (const double mfu : ticks_from(0, mfu_step, frame.mfu_high)) {
    const double y = frame.y(mfu);
    svg += fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#e0e0e0"/>)", frame.left, y,
                       frame.right, y) +
           fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="end">{:.1f}</text>)", frame.left - 6, y + 4, mfu) +
           "\n";
  }
  for (const double m : m_ticks(frame)) {
    const double x = frame.x(m);
    svg += fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#e0e0e0"/>)", x, frame.top, x,
                       frame.bottom) +
           fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)", x, frame.bottom + 18,
                       format_m(m)) +
           "\n";
  }
  svg += fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="none" stroke="#333"/>)",
                     frame.left, frame.top, frame.right - frame.left, frame.bottom - frame.top) +
         "\n";
  svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">M (batch rows){}</text>)",
                     (frame.left + frame.right) / 2, frame.bottom + 42, options.log_m ? ", log scale" : "") +
         "\n";
  svg += fmt::format(R"svg(<text transform="translate(24 {:.1f}) rotate(-90)" text-anchor="middle">MFU (fraction of peak)</text>)svg",
                     (frame.top + frame.bottom) / 2) +
         "\n";

  // Data, then the legend.
  const std::string shared = shared_label_prefix(all);
  if (!shared.empty()) {
    svg += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" fill="#555">profiles {}…</text>)", frame.left, frame.top - 10,
                       xml_escape(shared)) +
           "\n";
  }
  double legend_y = frame.top + 8;
  const double legend_x = frame.right + 16;
  for (std::size_t s = 0; s < all.size(); ++s) {
    const PlotSeries& series = all[s];
    const std::string& colour = palette()[s % palette().size()];
    svg += "<g class=\"series\">\n" + polyline(series.measured, frame, colour, false);
    if (!series.with_best_plans.empty()) svg += polyline(series.with_best_plans, frame, colour, true);
    for (const PlotAnomaly& anomaly : series.anomalies) {
      svg += fmt::format(R"(<circle class="anomaly" cx="{:.1f}" cy="{:.1f}" r="3" fill="none" stroke="{}"><title>{}</title></circle>)",
                         frame.x(anomaly.at.m), frame.y(anomaly.at.mfu), kAnomalyColour, xml_escape(anomaly.note)) +
             "\n";
    }
    svg += "</g>\n";
    const auto legend_entry = [&](const std::string& text, const std::string& mark) {
      svg += mark + fmt::format(R"(<text class="legend" x="{:.1f}" y="{:.1f}">{}</text>)", legend_x + 30, legend_y + 4,
                                xml_escape(text)) +
             "\n";
      legend_y += 20;
    };
    // Long names keep their start (kernel, device) and end (shape, dtype).
    const std::string own = series.label.substr(shared.size());
    const std::string label = own.size() > 28 ? own.substr(0, 12) + "…" + own.substr(own.size() - 14) : own;
    legend_entry(label, fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="2"/>)",
                                    legend_x, legend_y, legend_x + 24, legend_y, colour));
    if (!series.with_best_plans.empty()) {
      legend_entry("with best plans", fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="2" stroke-dasharray="6 3"/>)",
                                                  legend_x, legend_y, legend_x + 24, legend_y, colour));
    }
    legend_entry(fmt::format("anomalies ({})", series.anomalies.size()),
                 fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="3" fill="none" stroke="{}"/>)", legend_x + 12,
                             legend_y, kAnomalyColour));
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace shapescope::analyze
