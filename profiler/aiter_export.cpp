#include "profiler/aiter_export.hpp"

#include <algorithm>
#include <map>
#include <regex>
#include <tuple>

#include <fmt/format.h>

#include "common/atomic_file.hpp"
#include "common/csv.hpp"
#include "profiler/profile_csv.hpp"

namespace shapescope::profiler {

namespace {

int split_k_of(const std::string& launch_name) {
  static const std::regex split_k("splitk([0-9]+)");
  std::smatch match;
  return std::regex_search(launch_name, match, split_k) ? std::stoi(match[1].str()) : 0;
}

}  // namespace

std::string aiter_device_column(const std::string& device_name) {
  static const std::regex architecture("\\((gfx[0-9a-f]+)\\)");
  std::smatch match;
  return std::regex_search(device_name, match, architecture) ? match[1].str() : device_name;
}

std::string aiter_table(const std::vector<ProfileRow>& rows, int compute_units) {
  std::vector<const ProfileRow*> ok;
  for (const ProfileRow& row : rows)
    if (row.status == kStatusOk) ok.push_back(&row);
  std::stable_sort(ok.begin(), ok.end(), [](const ProfileRow* a, const ProfileRow* b) {
    return std::tie(a->n, a->k, a->m) < std::tie(b->n, b->k, b->m);
  });
  std::string text = csv::format_row(
      {"gfx", "cu_num", "M", "N", "K", "libtype", "kernelId", "splitK", "us", "kernelName", "tflops", "bw", "errRatio"});
  std::map<std::string, int> kernel_ids;
  for (const ProfileRow* row : ok) {
    const int id = kernel_ids.emplace(row->kernel_name, int(kernel_ids.size())).first->second;
    text += csv::format_row({aiter_device_column(row->device), std::to_string(compute_units), std::to_string(row->m),
                             std::to_string(row->n), std::to_string(row->k), row->kernel, std::to_string(id),
                             std::to_string(split_k_of(row->kernel_name)), fmt::format("{:.4f}", row->kernel_time_us),
                             row->kernel_name, fmt::format("{:.2f}", row->tflops),
                             fmt::format("{:.2f}", row->gbytes_per_s), fmt::format("{:.4g}", row->rel_err)});
  }
  return text;
}

std::vector<std::filesystem::path> write_aiter_tables(const std::vector<std::filesystem::path>& profiles,
                                                      const kernels::DeviceInfo& device,
                                                      const std::filesystem::path& out_dir) {
  std::map<std::string, std::vector<ProfileRow>> rows_by_kernel;
  for (const std::filesystem::path& profile : profiles) {
    for (ProfileRow& row : read_profile_csv(profile)) rows_by_kernel[row.kernel].push_back(std::move(row));
  }
  std::vector<std::filesystem::path> written;
  for (const auto& [kernel, rows] : rows_by_kernel) {
    const std::filesystem::path path = out_dir / (kernel + ".aiter_tuned_gemm.csv");
    write_file_atomically(path, aiter_table(rows, device.multiprocessors));
    written.push_back(path);
  }
  return written;
}

}  // namespace shapescope::profiler
