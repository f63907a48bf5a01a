#include "analyze/explain.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "analyze/counter_evidence.hpp"
#include "common/device_peaks.hpp"
#include "common/enum_names.hpp"

namespace shapescope::analyze {

namespace {

// Long template-laden names are cut so that one evidence line stays readable;
// the tile token survives because it is what the evidence is about.
std::string short_kernel_name(const std::string& name) {
  constexpr std::size_t limit = 72;
  if (name.size() <= limit) return name;
  const std::size_t lt = name.find('<');
  std::string inner = lt == std::string::npos ? name : name.substr(lt + 1, name.find('>', lt) - lt - 1);
  return inner.size() <= limit ? inner : inner.substr(0, limit - 1) + "…";
}

// For a ≥ 0 and b > 0, without the overflow of (a + b − 1) / b at sizes near int64's end.
int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }

// Counts of tiles and CTAs stop at int64's end: a profile may name any N and batch.
int64_t saturating_product(int64_t a, int64_t b) {
  int64_t product = 0;
  return __builtin_mul_overflow(a, b, &product) ? std::numeric_limits<int64_t>::max() : product;
}

// The tile a point ran: the profile's columns, else parsed from the kernel name (profiles of other tools and
// shapescope profiles written before the columns).
std::optional<TileShape> tile_of(const SeriesPoint& point) {
  return point.tile ? point.tile : tile_from_kernel_name(point.kernel_name);
}

// " × 2 split-K = 96 CTAs" where the tiles are split along K, else "".
std::string split_text(const Waves& waves, int64_t split_k) {
  return split_k > 1 ? fmt::format(" × {} split-K = {} CTAs", split_k, waves.ctas) : "";
}

double relative_spread(const SeriesPoint& point) {
  if (point.time_us <= 0) return 0;
  if (point.ci95_us > 0) return point.ci95_us / point.time_us;
  return 2 * point.stddev_us / point.time_us;  // ±2σ, the same reach as a 95% interval
}

// A cause the data supports, or why it does not.
struct CauseCheck {
  std::optional<Cause> cause;
  std::string why_not;
  double predicted = 1;  // the MFU ratio to the reference that the mechanism predicts here (1: none)
};

// Another kernel than at the reference, where it predicts the drop: at least half of this M's drop is there where
// that kernel took over (the first M of its stretch after the reference) and where it runs on (the next M, if it
// runs the same kernel and lies within kNeighbourSpan); else the kernel ran without the drop and does not account
// for it.
CauseCheck kernel_switch(const Series& series, std::size_t index, std::size_t reference_index, double reference_utils) {
  const SeriesPoint& here = series.points[index];
  const SeriesPoint& reference = series.points[reference_index];
  if (here.kernel_name.empty() || reference.kernel_name.empty()) return {std::nullopt, "no kernel names recorded"};
  const std::string kernel = launched_kernel(here.kernel_name);
  if (kernel == launched_kernel(reference.kernel_name))
    return {std::nullopt, fmt::format("same kernel as M={}", reference.m)};
  const double drop = reference_utils > 0 ? 1 - here.utils / reference_utils : 0;
  const auto kept_most = [&](const SeriesPoint& point) { return point.utils >= reference_utils * (1 - 0.5 * drop); };
  std::size_t start = index;
  while (start > reference_index + 1 && launched_kernel(series.points[start - 1].kernel_name) == kernel) --start;
  for (const std::size_t same : {start, index + 1}) {
    if (same == index || same >= series.points.size()) continue;
    const SeriesPoint& other = series.points[same];
    // On a sparse grid the next measured M may lie too far for its kernel to say anything about this M.
    if (same > index && static_cast<double>(other.m - here.m) > kNeighbourSpan * static_cast<double>(here.m)) continue;
    if (launched_kernel(other.kernel_name) == kernel && kept_most(other)) {
      return {std::nullopt, fmt::format("the same kernel ran at M={} with MFU {:.3f} (M={}: {:.3f})", other.m,
                                        other.utils, reference.m, reference_utils)};
    }
  }
  return {Cause{CauseKind::kernel_switch,
               fmt::format("M={} ran {} (MFU {:.3f}); M={} ran {} (MFU {:.3f})", reference.m,
                           short_kernel_name(reference.kernel_name), reference.utils, here.m,
                           short_kernel_name(here.kernel_name), here.utils)},
          ""};
}

CauseCheck wave_quantization(const Series& series, std::size_t index, const SeriesPoint& reference) {
  const SeriesPoint& here = series.points[index];
  const int sms = multiprocessor_count(series);
  const std::optional<TileShape> tile = tile_of(here);
  if (series.grouped) return {std::nullopt, "grouped GEMM: tiles are counted per expert, not from M"};
  if (sms <= 0) return {std::nullopt, "SM count unknown"};
  if (series.n <= 0) return {std::nullopt, "N unknown"};
  if (!tile) return {std::nullopt, "no tile shape in the profile or the kernel name"};
  // The reference's own tile and split, else this M's.
  const std::optional<TileShape> reference_tile = tile_of(reference);
  const int64_t reference_split = reference_tile ? reference.split_k : here.split_k;
  const int64_t batch = series.batch_count;
  const Waves now = waves_of(here.m, series.n, *tile, sms, batch, here.split_k);
  const Waves before = waves_of(reference.m, series.n, reference_tile.value_or(*tile), sms, batch, reference_split);
  // A wave boundary crossed since the previous measured M (with this M's tile).
  const bool crossed = index > 0 &&
                       waves_of(series.points[index - 1].m, series.n, *tile, sms, batch, here.split_k).waves < now.waves;
  const double mfu_ratio = reference.utils > 0 ? here.utils / reference.utils : 1;
  const double wave_ratio = now.efficiency / before.efficiency;
  const double area_ratio = now.area_used / before.area_used;
  // Emptier waves, or tiles whose last row or column holds little output, must account for
  // at least half the MFU lost; one more wave on top of hundreds is real but explains nothing.
  const auto accounts_for = [&](double ratio) { return ratio < 1 && (1 - ratio) >= 0.5 * (1 - mfu_ratio); };
  const bool accounts = accounts_for(wave_ratio) || accounts_for(area_ratio);
  const double predicted = std::min({wave_ratio, area_ratio, 1.0});
  if (!accounts) {
    return {std::nullopt,
            fmt::format("waves {:.0f}% full vs {:.0f}% at M={}", 100 * now.efficiency, 100 * before.efficiency,
                        reference.m),
            predicted};
  }
  return {Cause{CauseKind::wave_quantization,
               fmt::format("{}x{} tiles: ⌈{}/{}⌉·⌈{}/{}⌉ = {} tiles{} on {} SMs = {} wave(s), {:.0f}% full{} "
                           "(M={}: {} tiles{}, {} wave(s), {:.0f}% full); {:.0f}% of the tiles' area holds output "
                           "vs {:.0f}%",
                           tile->m, tile->n, here.m, tile->m, series.n, tile->n, now.tiles,
                           split_text(now, here.split_k), sms, now.waves, 100 * now.efficiency,
                           crossed ? "; a wave boundary falls just below this M" : "", reference.m, before.tiles,
                           split_text(before, reference_split), before.waves, 100 * before.efficiency,
                           100 * now.area_used, 100 * before.area_used)},
          "", predicted};
}

CauseCheck noise(const SeriesPoint& here, const SeriesPoint& reference, double reference_utils) {
  const double spread_here = relative_spread(here), spread_reference = relative_spread(reference);
  if (spread_here == 0 && spread_reference == 0) return {std::nullopt, "no spread recorded"};
  const double drop = reference_utils > 0 ? 1 - here.utils / reference_utils : 0;
  const double combined = std::hypot(spread_here, spread_reference);
  if (drop > combined) return {std::nullopt, fmt::format("drop beyond the ±{:.1f}% spread", 100 * combined)};
  return {Cause{CauseKind::noise, fmt::format("drop {:.1f}% is within the combined 95% spread ±{:.1f}% of M={} and M={}",
                                             100 * drop, 100 * combined, here.m, reference.m)},
          ""};
}

// The SM clocks of an anomaly and its reference to compare: the means probed between their samples where both
// have them (a dip between a point's start and end readings shows only there), else the endpoint readings.
struct ComparedClocks {
  double here_mhz = 0, reference_mhz = 0;
  const char* what = "SM clock";
};

ComparedClocks compared_clocks(const SeriesPoint& here, const SeriesPoint& reference) {
  if (here.sampled_sm_clock_mhz && reference.sampled_sm_clock_mhz)
    return {*here.sampled_sm_clock_mhz, *reference.sampled_sm_clock_mhz, "mean SM clock over the samples"};
  return {here.sm_clock_mhz, reference.sm_clock_mhz};
}

// Measured off the steady clock (the profiler's flag), or at an SM clock lower than the reference's by enough to
// account for at least half the MFU lost: a compute-bound kernel's time scales with 1/clock.
CauseCheck throttling(const SeriesPoint& here, const SeriesPoint& reference, double reference_utils) {
  if (here.throttled) return {Cause{CauseKind::throttling, fmt::format("M={} was measured below the steady SM clock", here.m)}, ""};
  const ComparedClocks clocks = compared_clocks(here, reference);
  if (clocks.here_mhz <= 0 || clocks.reference_mhz <= 0) return {std::nullopt, "not flagged as throttled"};
  const double clock_ratio = clocks.here_mhz / clocks.reference_mhz;
  const double drop = reference_utils > 0 ? 1 - here.utils / reference_utils : 0;
  if (clock_ratio < 1 && 1 - clock_ratio >= 0.5 * drop) {
    return {Cause{CauseKind::throttling, fmt::format("{} {:.0f} MHz at M={} vs {:.0f} MHz at M={}: {:.1f}% "
                                                     "slower, {:.1f}% of the MFU lost",
                                                     clocks.what, clocks.here_mhz, here.m, clocks.reference_mhz,
                                                     reference.m, 100 * (1 - clock_ratio), 100 * drop)},
            "", clock_ratio};
  }
  return {std::nullopt,
          fmt::format("not flagged as throttled, {} {:.0f} vs {:.0f} MHz at M={}", clocks.what, clocks.here_mhz,
                      clocks.reference_mhz, reference.m),
          std::min(clock_ratio, 1.0)};
}

// How much slower a moment at the power limit may be taken to run: a cap that lowers the SM clock to half of
// what was asked is deep (an H100 at its 700 W limit read 1275-1965 MHz of its 1980 across GEMM sweeps).
constexpr double kCappedSlowdown = 0.5;
// A share of the point's time may exceed 1 by the jitter of the counter's timestamps (100.01% on an H100).
constexpr double kMostCappedShare = 1.01;

// Held at the board's power limit (the power policy's violation counter) for more of its time than the reference,
// by enough that the extra capped time, kCappedSlowdown slower, accounts for at least half the drop. Profiles
// without the column say nothing of it.
CauseCheck power_cap(const SeriesPoint& here, const SeriesPoint& reference, double reference_utils) {
  if (!here.power_capped_share && !reference.power_capped_share) return {};
  if (!here.power_capped_share || !reference.power_capped_share) {
    const int64_t without = here.power_capped_share ? reference.m : here.m;
    return {std::nullopt, fmt::format("no power-cap accounting at M={}", without)};
  }
  const double capped = *here.power_capped_share, reference_capped = *reference.power_capped_share;
  // More than all of the point's time: the counter was refreshed in steps, not read up to date.
  if (std::max(capped, reference_capped) > kMostCappedShare) {
    return {std::nullopt, fmt::format("power-cap share {:.0f}% at M={}: the counter was not read up to date",
                                      100 * std::max(capped, reference_capped),
                                      capped > reference_capped ? here.m : reference.m)};
  }
  const double drop = reference_utils > 0 ? 1 - here.utils / reference_utils : 0;
  const double excess = capped - reference_capped;
  const std::string limit = here.power_limit_w > 0 ? fmt::format(" {:.0f} W", here.power_limit_w) : "";
  if (excess <= 0 || kCappedSlowdown * excess < 0.5 * drop) {
    return {std::nullopt, fmt::format("at the power limit {:.0f}% of its time vs {:.0f}% at M={}", 100 * capped,
                                      100 * reference_capped, reference.m)};
  }
  return {Cause{CauseKind::power_cap,
                fmt::format("M={} spent {:.1f}% of its time held down by the board's{} power limit, M={} {:.1f}%: "
                            "{:.1f}% more of its time capped; its {:.1f}% drop needs those moments {:.0f}% slower",
                            here.m, 100 * capped, limit, reference.m, 100 * reference_capped, 100 * excess,
                            100 * drop, 100 * drop / excess)},
          ""};
}

// A grouped GEMM that did more work per token than at the reference: the MFU it predicts, (tokens' rows / work
// here) / (the same at the reference), is lower by at least half the drop. The work is the rows the kernel
// computed (the tokens the routing put on this GPU's experts, each expert's rows padded to its tiles), or the
// tile rows of the busiest expert, which that expert's CTAs run one after another while the others idle: the
// kernel ends with its busiest expert.
CauseCheck expert_rows(const Series& series, const SeriesPoint& here, const SeriesPoint& reference,
                       double reference_utils) {
  if (!series.grouped) return {};
  if (here.useful_rows <= 0 || reference.useful_rows <= 0 || here.executed_rows <= 0 || reference.executed_rows <= 0)
    return {std::nullopt, "no expert rows recorded"};
  const double drop = reference_utils > 0 ? 1 - here.utils / reference_utils : 0;
  const auto accounts = [&](double ratio) { return ratio < 1 && 1 - ratio >= 0.5 * drop; };
  const double tokens = static_cast<double>(here.useful_rows) / static_cast<double>(reference.useful_rows);
  const double computed = tokens * static_cast<double>(reference.executed_rows) / static_cast<double>(here.executed_rows);
  if (accounts(computed)) {
    return {Cause{CauseKind::expert_rows,
                  fmt::format("M={} put {} rows of tokens on this GPU's experts, of {} rows the kernel computed "
                              "({:.1f}%); M={}: {} of {} ({:.1f}%): {:.1f}% less MFU predicted, of a {:.1f}% drop",
                              here.m, here.useful_rows, here.executed_rows,
                              100.0 * static_cast<double>(here.useful_rows) / static_cast<double>(here.executed_rows),
                              reference.m, reference.useful_rows, reference.executed_rows,
                              100.0 * static_cast<double>(reference.useful_rows) /
                                  static_cast<double>(reference.executed_rows),
                              100 * (1 - computed), 100 * drop)},
            ""};
  }
  const std::optional<TileShape> tile = tile_of(here), reference_tile = tile_of(reference);
  if (tile && reference_tile && here.busiest_expert_rows > 0 && reference.busiest_expert_rows > 0) {
    const int64_t passes = ceil_div(here.busiest_expert_rows, tile->m);
    const int64_t reference_passes = ceil_div(reference.busiest_expert_rows, reference_tile->m);
    const double busiest = tokens * static_cast<double>(reference_passes) / static_cast<double>(passes);
    if (passes > reference_passes && accounts(busiest)) {
      return {Cause{CauseKind::expert_rows,
                    fmt::format("the busiest expert got {} rows at M={}: ⌈{}/{}⌉ = {} tile rows, run one after "
                                "another (M={}: {} rows, {} tile row(s)); with {} vs {} rows of tokens, {:.1f}% "
                                "less MFU predicted, of a {:.1f}% drop",
                                here.busiest_expert_rows, here.m, here.busiest_expert_rows, tile->m, passes,
                                reference.m, reference.busiest_expert_rows, reference_passes, here.useful_rows,
                                reference.useful_rows, 100 * (1 - busiest), 100 * drop)},
              ""};
    }
  }
  return {std::nullopt, fmt::format("{} of {} computed rows held tokens vs {} of {} at M={}", here.useful_rows,
                                    here.executed_rows, reference.useful_rows, reference.executed_rows, reference.m)};
}

// Below the device's ridge point the roofline bounds a kernel's time by the bytes it moves: doing fewer flops per
// byte than at the reference (the fewest bytes, profile column gbytes_per_s) loses MFU in proportion.
CauseCheck intensity(const Series& series, const SeriesPoint& here, const SeriesPoint& reference,
                     double reference_utils) {
  if (here.gbytes_per_s <= 0 || reference.gbytes_per_s <= 0 || here.tflops <= 0 || reference.tflops <= 0) return {};
  const std::optional<DevicePeak> device = find_device_peak(series.device);
  if (!device || device->memory_tb_per_s <= 0 || series.peak_tflops <= 0) return {};
  const double ridge = series.peak_tflops / device->memory_tb_per_s;  // flop per byte
  const auto per_byte = [](const SeriesPoint& point) { return 1e3 * point.tflops / point.gbytes_per_s; };
  if (per_byte(here) >= ridge || per_byte(reference) >= ridge) return {};  // bound by compute: says nothing
  const double ratio = per_byte(here) / per_byte(reference);
  const double drop = reference_utils > 0 ? 1 - here.utils / reference_utils : 0;
  if (ratio >= 1 || 1 - ratio < 0.5 * drop) {
    return {std::nullopt, fmt::format("{:.1f} flop per byte vs {:.1f} at M={} (ridge {:.0f})", per_byte(here),
                                      per_byte(reference), reference.m, ridge)};
  }
  return {Cause{CauseKind::intensity,
                fmt::format("bound by memory: M={} did {:.2f} flop per byte it must move, M={} {:.2f}, both below "
                            "the ridge of {:.0f} ({:.0f} TFLOP/s over {:.2f} TB/s): {:.1f}% less MFU predicted, of a "
                            "{:.1f}% drop",
                            here.m, per_byte(here), reference.m, per_byte(reference), ridge, series.peak_tflops,
                            device->memory_tb_per_s, 100 * (1 - ratio), 100 * drop)},
          ""};
}

// The GPU slowed down for a moment: the same kernel at a neighbouring M, scaled to this M's work, ran faster in its
// median than this M in its fastest sample by at least half of this M's drop, yet took as long as that in its
// slowest sample: the neighbour ran at this M's level for a moment of the sweep, and this M was measured all
// through such a moment. (An M whose fastest sample matches its neighbour's median is not slower than its
// neighbour, whatever its samples' jitter.)
CauseCheck transient(const Series& series, std::size_t index, double reference_utils) {
  const SeriesPoint& here = series.points[index];
  const double drop = reference_utils > 0 ? 1 - here.utils / reference_utils : 0;
  double widest = 0;
  for (const std::size_t neighbour : {index - 1, index + 1}) {
    if (neighbour >= series.points.size()) continue;  // index - 1 wraps past the end at the first point
    const SeriesPoint& other = series.points[neighbour];
    const bool near = std::abs(static_cast<double>(other.m - here.m)) <= kNeighbourSpan * static_cast<double>(here.m);
    if (!near || here.kernel_name.empty() || launched_kernel(other.kernel_name) != launched_kernel(here.kernel_name) ||
        other.slowest_us <= 0 || other.time_us <= 0 || here.fastest_us <= 0)
      continue;
    const double work = static_cast<double>(here.m) / static_cast<double>(other.m);
    const double swing = 1 - other.time_us * work / here.fastest_us;  // how much slower all of this M ran
    widest = std::max(widest, swing);
    if (swing >= 0.5 * drop && other.slowest_us * work >= here.fastest_us) {
      return {Cause{CauseKind::transient,
                    fmt::format("M={}, the same kernel, took {:.1f} µs in its median and {:.1f} µs in its slowest "
                                "sample at this M's work; M={} took {:.1f} µs in its fastest: {:.1f}% slower all "
                                "through, of a {:.1f}% drop",
                                other.m, other.time_us * work, other.slowest_us * work, here.m, here.fastest_us,
                                100 * swing, 100 * drop)},
              ""};
    }
  }
  return {std::nullopt, widest > 0 ? fmt::format("no transient beside it (its fastest sample {:.1f}% slower than "
                                                 "the same kernel's median beside it, or never reached there)",
                                                 100 * widest)
                                   : "no transient beside it"};
}

}  // namespace

constexpr EnumName<CauseKind> kCauseKindNames[] = {
    {CauseKind::kernel_switch, "kernel switch"},
    {CauseKind::wave_quantization, "wave quantization"},
    {CauseKind::noise, "noise"},
    {CauseKind::throttling, "throttling"},
    {CauseKind::power_cap, "power cap"},
    {CauseKind::expert_rows, "expert rows"},
    {CauseKind::intensity, "fewer flops per byte"},
    {CauseKind::transient, "transient slowdown"},
    {CauseKind::extra_kernel, "extra kernel"},
    {CauseKind::dram_traffic, "DRAM traffic"},
    {CauseKind::idle_sms, "idle SMs"},
    {CauseKind::occupancy_drop, "occupancy drop"},
};

std::string to_string(CauseKind kind) { return name_of(kCauseKindNames, kind); }

std::string Explanation::summary() const {
  if (causes.empty()) {
    std::string reasons;
    for (const std::string& reason : ruled_out) reasons += (reasons.empty() ? "" : ", ") + reason;
    return "no supported cause: " + reasons;
  }
  std::string text;
  for (const Cause& cause : causes) text += fmt::format("{}{}: {}", text.empty() ? "" : "; ", to_string(cause.kind), cause.evidence);
  return text;
}

// The kernel names are scanned by hand, not with std::regex: libstdc++'s matcher recurses once per character of
// a repetition, and a name of a few hundred thousand letters (a template-laden name, a file that is not a profile)
// overflows the stack.
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alphanumeric(char c) { return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// The run of digits at `at` in `text`: its length (0: none).
std::size_t digits_at(std::string_view text, std::size_t at) {
  std::size_t end = at;
  while (end < text.size() && is_digit(text[end])) ++end;
  return end - at;
}

// A tile is some rows and columns of the output: a dimension of zero, or past kMaxTileDimension, is no tile (and
// would divide by zero, or overflow, counting tiles).
constexpr int64_t kMaxTileDimension = 1 << 20;

// "128x64x32" (dims joined by 'x', each a run of digits): the dims, or empty when `text` is not that or a dim is
// 0 or beyond kMaxTileDimension.
std::vector<int64_t> dims_of(std::string_view text) {
  std::vector<int64_t> dims;
  for (std::size_t begin = 0;;) {
    const std::size_t length = digits_at(text, begin);
    int64_t dim = 0;
    const auto parsed = std::from_chars(text.data() + begin, text.data() + begin + length, dim);
    if (length == 0 || parsed.ec != std::errc() || dim <= 0 || dim > kMaxTileDimension) return {};
    dims.push_back(dim);
    begin += length;
    if (begin == text.size()) return dims;
    if (text[begin] != 'x') return {};
    ++begin;
  }
}

// CUTLASS-style "m128n256k128" (an "x1" after K allowed): M and N.
std::optional<TileShape> mnk_tile(std::string_view token) {
  std::vector<int64_t> dims;
  std::size_t at = 0;
  for (const char letter : {'m', 'n', 'k'}) {
    if (at >= token.size() || token[at] != letter) return std::nullopt;
    const std::size_t length = digits_at(token, ++at);
    const std::vector<int64_t> dim = dims_of(token.substr(at, length));
    if (dim.empty()) return std::nullopt;
    dims.push_back(dim[0]);
    at += length;
  }
  const std::string_view rest = token.substr(at);
  if (!rest.empty() && (rest[0] != 'x' || dims_of(rest.substr(1)).size() != 1)) return std::nullopt;
  return TileShape{dims[0], dims[1]};
}

// cuBLAS's operand layout as a token of its own ("…_nn", "…_tn_align8").
bool has_cublas_layout(std::string_view name) {
  for (std::size_t at = 0; at + 2 <= name.size(); ++at) {
    const auto layout = [&](std::size_t i) { return name[i] == 'n' || name[i] == 't'; };
    if (layout(at) && layout(at + 1) && (at == 0 || name[at - 1] == '_') &&
        (at + 2 == name.size() || name[at + 2] == '_'))
      return true;
  }
  return false;
}

}  // namespace

std::string launched_kernel(const std::string& kernel_name) {
  std::string kernel;
  kernel.reserve(kernel_name.size());
  for (std::size_t at = 0; at < kernel_name.size();) {
    const std::string_view rest = std::string_view(kernel_name).substr(at);
    if (rest.rfind("_grid", 0) == 0 && digits_at(rest, 5) > 0) {
      at += 5 + digits_at(rest, 5);
    } else if (rest.rfind("+pdl", 0) == 0) {
      at += 4;
    } else {
      kernel += kernel_name[at++];
    }
  }
  return kernel;
}

std::optional<TileShape> tile_from_kernel_name(const std::string& kernel_name) {
  // Tokens between separators; a tile token is digits joined by 'x' (AITER asm adds a mangling 'E').
  // CUTLASS-style shape tokens, as shapescope's own kernels name their CTA tile: "m128n256k128"; cuBLAS's xmma
  // kernels' "tilesize160x128x32", rows of our M first (on an A800, 108 SMs, N=4096: M=960 → 968 ran 136 → 202 µs,
  // ⌈M/160⌉·⌈4096/128⌉ = 192 → 224 tiles, 2 → 3 waves; read transposed the tiles would not change).
  // cuBLAS's operand layout ("…_nn", "…_tn_align8"): cuBLAS is column-major, and a row-major caller (PyTorch,
  // shapescope) runs C = A·B as cuBLAS's Cᵀ = Bᵀ·Aᵀ.
  std::optional<TileShape> pair;
  std::string_view previous;
  // Names in cuBLAS's column-major terms give the tile as rows x columns of its D, which is our C transposed
  // (N x M): shapescope's cuBLASLt description ("cublasLt algo=66 tile=128x64 …") and cuBLAS's own kernels
  // ("ampere_fp16_s16816gemm_fp16_256x128_…_nn", "cutlass_80_tensorop_…_256x128_32x3_nn_align8": on an RTX 4090,
  // 128 SMs, N=14336, M=1152 → 1156 ran 813 → 1013 µs, ⌈M/128⌉·⌈14336/256⌉ = 504 → 560 tiles, 4 → 5 waves).
  const bool column_major = kernel_name.rfind("cublasLt ", 0) == 0 || has_cublas_layout(kernel_name);
  const std::string_view name = kernel_name;
  for (std::size_t begin = 0; begin < name.size();) {
    if (!is_alphanumeric(name[begin])) {
      ++begin;
      continue;
    }
    std::size_t end = begin;
    while (end < name.size() && is_alphanumeric(name[end])) ++end;
    const std::string_view token = name.substr(begin, end - begin);
    begin = end;
    if (const std::optional<TileShape> tile = mnk_tile(token)) return tile;
    if (token.rfind("tilesize", 0) == 0) {
      const std::vector<int64_t> dims = dims_of(token.substr(8));
      if (dims.size() == 3) return TileShape{dims[0], dims[1]};
    }
    const std::vector<int64_t> dims = dims_of(token.back() == 'E' ? token.substr(0, token.size() - 1) : token);
    if (dims.size() == 4) return TileShape{dims[1], dims[2]};                 // CK: block, M, N, K per block
    if (dims.size() == 3 && previous == "cktile") return TileShape{dims[0], dims[1]};  // CK-tile: M, N, K
    if (dims.size() == 2 && dims[0] >= 16 && dims[1] >= 16 && !pair)
      pair = column_major ? TileShape{dims[1], dims[0]} : TileShape{dims[0], dims[1]};
    previous = token;
  }
  return pair;
}

Waves waves_of(int64_t m, int64_t n, TileShape tile, int sms, int64_t batch, int64_t split_k) {
  Waves waves;
  waves.tiles = saturating_product(saturating_product(ceil_div(m, tile.m), ceil_div(n, tile.n)), batch);
  waves.ctas = saturating_product(waves.tiles, split_k);
  waves.waves = ceil_div(waves.ctas, sms);
  const double capacity = static_cast<double>(waves.waves) * sms;
  waves.efficiency = static_cast<double>(waves.ctas) / capacity;
  waves.area_used = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(batch) *
                    static_cast<double>(split_k) / (capacity * static_cast<double>(tile.m) * static_cast<double>(tile.n));
  return waves;
}

int multiprocessor_count(const Series& series) {
  if (series.multiprocessors > 0) return series.multiprocessors;
  if (const auto peak = find_device_peak(series.device)) return peak->multiprocessors;
  return 0;
}

Explanation explain_anomaly(const Series& series, const Anomaly& anomaly, const CountersByM* counters) {
  Explanation explanation;
  explanation.m = anomaly.m;
  explanation.reference_m = anomaly.reference_m;
  const SeriesPoint& here = series.points[anomaly.index];
  const SeriesPoint& reference = series.points[anomaly.reference_index];
  const CauseCheck waves = wave_quantization(series, anomaly.index, reference);
  const CauseCheck clock = throttling(here, reference, anomaly.reference_utils);
  const CauseCheck switched = kernel_switch(series, anomaly.index, anomaly.reference_index, anomaly.reference_utils);
  for (const CauseCheck& check : {switched, waves, noise(here, reference, anomaly.reference_utils), clock,
                                  power_cap(here, reference, anomaly.reference_utils),
                                  expert_rows(series, here, reference, anomaly.reference_utils),
                                  intensity(series, here, reference, anomaly.reference_utils),
                                  transient(series, anomaly.index, anomaly.reference_utils)}) {
    if (check.cause) {
      explanation.causes.push_back(*check.cause);
    } else if (!check.why_not.empty()) {  // a check of a column the profile lacks says nothing
      explanation.ruled_out.push_back(check.why_not);
    }
  }
  // Emptier waves and a lower SM clock that each account for less than half the drop may together: their
  // slowdowns multiply.
  const double together = waves.predicted * clock.predicted;
  if (!waves.cause && !clock.cause && waves.predicted < 1 && clock.predicted < 1 &&
      1 - together >= 0.5 * anomaly.drop()) {
    const ComparedClocks clocks = compared_clocks(here, reference);
    explanation.causes.push_back(
        {CauseKind::throttling,
         fmt::format("{} {:.0f} MHz at M={} vs {:.0f} MHz at M={} ({:.1f}% slower) and waves {:.1f}% emptier "
                     "(or less of the tiles' area holding output): together {:.1f}% slower, {:.1f}% of the MFU lost",
                     clocks.what, clocks.here_mhz, here.m, clocks.reference_mhz, reference.m,
                     100 * (1 - clock.predicted), 100 * (1 - waves.predicted), 100 * (1 - together), 100 * anomaly.drop())});
  }
  if (counters) {
    const auto at_here = counters->find(here.m), at_reference = counters->find(reference.m);
    if (at_here == counters->end() || at_reference == counters->end()) {
      explanation.ruled_out.push_back(fmt::format("no counters for M={}", at_here == counters->end() ? here.m : reference.m));
    } else {
      CounterFindings findings = counter_causes(at_here->second, at_reference->second);
      for (Cause& cause : findings.causes) explanation.causes.push_back(std::move(cause));
      if (!findings.why_not.empty()) explanation.ruled_out.push_back(findings.why_not);
    }
  }
  return explanation;
}

std::vector<Explanation> explain_anomalies(const Series& series, const std::vector<Anomaly>& anomalies,
                                           const CountersByM* counters) {
  std::vector<Explanation> explanations;
  explanations.reserve(anomalies.size());
  for (const Anomaly& anomaly : anomalies) explanations.push_back(explain_anomaly(series, anomaly, counters));
  return explanations;
}

}  // namespace shapescope::analyze
