// The "Inconsistency in GEMM Performance" study's profiles:
// batch,kernel_time,flops,utils[,kernel_name]. The shape, device and dtype live
// only in the file name, e.g.
// torchgemm_NVIDIA_GeForce_RTX_4090_torch_2.5.1+cu124_K4096_N14336_dtypefloat16.csv
#include <algorithm>
#include <filesystem>
#include <optional>
#include <string_view>

#include "analyze/csv_fields.hpp"
#include "analyze/readers.hpp"
#include "common/device_peaks.hpp"

namespace shapescope::analyze {

namespace {

std::vector<std::string> split_underscores(const std::string& text) {
  std::vector<std::string> tokens;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find('_', begin), text.size());
    tokens.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return tokens;
}

// "K4096" → 4096 for prefix 'K'; nullopt when the token is not exactly that.
std::optional<int64_t> dimension(std::string_view token, char prefix) {
  if (token.size() < 2 || token[0] != prefix) return std::nullopt;
  int64_t value = 0;
  for (const char c : token.substr(1)) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

bool is_dtype_name(std::string_view token) {
  return token == "float16" || token == "bfloat16" || token == "float32" || token == "fp16" || token == "bf16" ||
         token == "fp8";
}

// Fills kernel (the first token), device (tokens up to the framework name),
// N, K and dtype from the study's naming scheme; unknown parts stay empty.
void describe_from_file_name(Series& series) {
  const std::vector<std::string> tokens = split_underscores(series.name);
  series.kernel = tokens.front();
  std::vector<std::string> device_words;
  bool in_device = true;
  for (std::size_t i = 1; i < tokens.size(); ++i) {
    const std::string& token = tokens[i];
    if (token == "torch" || token == "vllm" || dimension(token, 'K') || dimension(token, 'N')) in_device = false;
    if (in_device) device_words.push_back(token);
    if (const auto k = dimension(token, 'K')) series.k = *k;
    if (const auto n = dimension(token, 'N')) series.n = *n;
    if (token == "dtype") {
      for (std::size_t j = i + 1; j < tokens.size(); ++j) {
        if (j > i + 1) series.dtype += '_';
        series.dtype += tokens[j];
      }
      break;
    }
    if (token.rfind("dtype", 0) == 0) series.dtype = token.substr(5);
    if (is_dtype_name(token)) series.dtype = token;
  }
  if (!in_device) {  // a framework or shape token ended the device name
    for (const std::string& word : device_words) {
      if (!series.device.empty()) series.device += ' ';
      series.device += word;
    }
  }
}

// The study's utils are flops / datasheet peak; recover the peak it used.
double implied_peak_tflops(const std::vector<SeriesPoint>& points) {
  std::vector<double> ratios;
  for (const SeriesPoint& point : points) {
    if (point.utils > 0) ratios.push_back(point.tflops / point.utils);
  }
  if (ratios.empty()) return 0;
  std::nth_element(ratios.begin(), ratios.begin() + static_cast<std::ptrdiff_t>(ratios.size() / 2), ratios.end());
  return ratios[ratios.size() / 2];
}

}  // namespace

std::vector<Series> read_study_csv(const csv::Table& table, const std::string& path, const ReadOptions& options) {
  Series series;
  series.source = path;
  series.format = "study";
  series.name = std::filesystem::path(path).stem().string();
  describe_from_file_name(series);
  if (const auto peak = find_device_peak(series.device)) series.multiprocessors = peak->multiprocessors;

  series.points.reserve(table.rows.size());
  for (std::size_t row = 0; row < table.rows.size(); ++row) {
    const CsvRecord record(table, row, path);
    SeriesPoint point;
    point.line = table.row_lines[row];
    point.m = record.integer("batch");
    point.time_us = record.positive_time("kernel_time");
    point.tflops = record.number("flops");
    point.utils = record.number("utils");
    point.kernel_name = record.text("kernel_name");
    series.points.push_back(std::move(point));
  }

  series.peak_tflops = implied_peak_tflops(series.points);
  if (options.peak_tflops_override > 0) {
    series.peak_tflops = options.peak_tflops_override;
    for (SeriesPoint& point : series.points) point.utils = point.tflops / series.peak_tflops;
  }
  return {std::move(series)};
}

}  // namespace shapescope::analyze
