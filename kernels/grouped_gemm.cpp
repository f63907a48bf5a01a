#include "kernels/grouped_gemm.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/enum_names.hpp"
#include "common/user_error.hpp"
#include "kernels/entry_registry.hpp"
#include "kernels/synthetic_operands.hpp"

#if SHAPESCOPE_HAVE_CUDA
#include <cublas_api.h>
#endif

namespace shapescope::kernels {

namespace {

int64_t round_up(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

std::vector<GroupedKernelEntry>& registry() { return registered_entries<GroupedKernelEntry>(); }

}  // namespace

constexpr EnumName<GroupLayout> kGroupLayoutNames[] = {
    {GroupLayout::contiguous, "contiguous"},
    {GroupLayout::masked, "masked"},
};

std::string to_string(GroupLayout layout) { return name_of(kGroupLayoutNames, layout); }

int64_t GroupedShape::active_groups() const {
  return std::count_if(rows.begin(), rows.end(), [](int64_t r) { return r > 0; });
}

int64_t GroupedShape::useful_rows() const { return std::accumulate(rows.begin(), rows.end(), int64_t(0)); }

int64_t GroupedShape::max_rows() const { return rows.empty() ? 0 : *std::max_element(rows.begin(), rows.end()); }

int64_t GroupedShape::min_rows() const { return rows.empty() ? 0 : *std::min_element(rows.begin(), rows.end()); }

int64_t GroupedShape::layout_rows() const {
  if (layout == GroupLayout::masked) return groups() * max_m;
  int64_t total = 0;
  for (const int64_t r : rows) total += round_up(r, align);
  return total;
}

int64_t GroupedShape::first_row(int64_t group) const {
  if (layout == GroupLayout::masked) return group * max_m;
  int64_t row = 0;
  for (int64_t g = 0; g < group; ++g) row += round_up(rows[std::size_t(g)], align);
  return row;
}

int64_t GroupedShape::routed_row(int64_t group) const {
  return std::accumulate(rows.begin(), rows.begin() + group, int64_t(0));
}

GroupedShape lay_out_groups(int64_t n, int64_t k, std::vector<int64_t> rows, GroupLayout layout, int64_t align,
                            int64_t slot_multiple) {
  GroupedShape shape;
  shape.n = n;
  shape.k = k;
  shape.rows = std::move(rows);
  shape.layout = layout;
  shape.align = align;
  if (layout == GroupLayout::masked)
    shape.max_m = (std::max<int64_t>(shape.max_rows(), 1) + slot_multiple - 1) / slot_multiple * slot_multiple;
  return shape;
}

std::string GroupedShape::layout_text() const {
  return layout == GroupLayout::masked ? fmt::format("masked:{}", max_m) : fmt::format("contiguous:{}", align);
}

std::optional<std::string> grouped_shape_problem(const GroupedShape& shape) {
  if (shape.rows.empty()) return "no groups";
  if (shape.n < 1 || shape.k < 1) return fmt::format("N={} and K={} must be positive", shape.n, shape.k);
  if (shape.min_rows() < 0) return "a group has negative rows";
  if (shape.layout == GroupLayout::contiguous && shape.align < 1)
    return fmt::format("align {} must be 1 or more", shape.align);
  if (shape.layout == GroupLayout::masked && shape.max_rows() > shape.max_m)
    return fmt::format("a group has {} rows but masked slots hold max_m={}", shape.max_rows(), shape.max_m);
  if (shape.layout == GroupLayout::masked && shape.max_m < 1) return "masked slots need max_m >= 1";
  return std::nullopt;
}

double grouped_min_bytes(const GroupedShape& shape, OperandFormat format) {
  const OperandEncodings encodings = operand_encodings(format);
  const int64_t rows = shape.useful_rows();
  return double(shape.active_groups()) * operand_bytes(encodings.b, shape.n, shape.k) +
         operand_bytes(encodings.a, rows, shape.k) + double(rows) * double(shape.n) * 2;
}

const std::vector<GroupedKernelEntry>& grouped_kernel_registry() { return registry(); }

const GroupedKernelEntry& find_grouped_kernel(const std::string& name) {
  if (const GroupedKernelEntry* entry = entry_named(registry(), name)) return *entry;
  throw UserError(fmt::format("'{}' is not a grouped kernel; --module experts runs one of {} (see --list-kernels)",
                              name, entry_names(registry())));
}

std::string missing_grouped_kernels() {
#if SHAPESCOPE_HAVE_CUDA
  const std::string cublas = fmt::format("cuBLAS {}.{}.{}", CUBLAS_VER_MAJOR, CUBLAS_VER_MINOR, CUBLAS_VER_PATCH);
#if SHAPESCOPE_CUBLASLT_GROUPED_API
  return "cublaslt_fp8_blockscale_grouped: " + cublas +
         " has the grouped GEMM API, but shapescope does not call it yet; cublaslt_fp8_blockscale_grouped_loop stands in";
#else
  return "cublaslt_fp8_blockscale_grouped: not registered, " + cublas +
         "'s cuBLASLt has no grouped GEMM API (CUBLASLT_MATRIX_LAYOUT_GROUPED_ROWS_ARRAY); "
         "cublaslt_fp8_blockscale_grouped_loop stands in";
#endif
#else
  return "";
#endif
}

void register_grouped_kernel(GroupedKernelEntry entry) { register_entry(registry(), std::move(entry)); }

}  // namespace shapescope::kernels
