// The contract for grouped GEMMs, as MoE engines run routed experts: one call over G
// groups (the experts on this GPU) that share N and K, group g multiplying its own
// rows of activations by its own weights: C_g[rows_g, N] = A_g[rows_g, K] * B_g[N, K]^T.
//
// Layouts of A and C (B is [G][N][K] in both):
//   contiguous  the groups' rows back to back, each group starting at a multiple of
//               `align` (DeepGEMM pads each expert to 128 rows on Hopper, vLLM's fused
//               MoE to its block size); the rows between are padding.
//   masked      [G][max_m] rows, group g's first rows_g valid (the valid counts live on
//               the device, so a CUDA graph replays for any counts up to max_m).
// Synthetic operands: A's logical tensor is the routed rows [T, K] (T = sum of rows_g,
// group g's rows at T-offset routed_row(g)), B is batch g of [G, N, K]; both as in
// synthetic_operands.hpp. Padding rows of A hold zeros.
// Output contract: every row of every group is written; padding rows may be written or
// not (they are never checked), and nothing outside C is.
//
// A grouped kernel registers a GroupedKernelEntry; its prepared GEMM is a PreparedGemm,
// so the measurement core times its run() exactly like a dense one.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/kernel.hpp"
#include "kernels/operand_format.hpp"

namespace shapescope::kernels {

enum class GroupLayout { contiguous, masked };
std::string to_string(GroupLayout layout);

struct GroupedShape {
  int64_t n = 0, k = 0;
  std::vector<int64_t> rows;  // rows (tokens) per group; zero for an expert nobody was routed to
  GroupLayout layout = GroupLayout::contiguous;
  int64_t align = 1;          // contiguous: each group's first row is a multiple of this
  int64_t max_m = 0;          // masked: rows per group slot

  int64_t groups() const { return int64_t(rows.size()); }
  int64_t active_groups() const;
  int64_t useful_rows() const;  // T: the rows that hold a token
  int64_t max_rows() const;
  int64_t min_rows() const;
  int64_t layout_rows() const;  // rows of A and C in memory, padding included
  int64_t padded_rows() const { return layout_rows() - useful_rows(); }
  int64_t first_row(int64_t group) const;   // the layout row of the group's first row
  int64_t routed_row(int64_t group) const;  // the group's first row among the T routed rows
  double useful_flops() const { return 2.0 * double(useful_rows()) * double(n) * double(k); }
  std::string layout_text() const;          // "contiguous:128", "masked:256"
};

// The problem of `rows` per group: contiguous groups starting on multiples of `align`, or masked slots as tall
// as the largest group (at least one row) rounded up to `slot_multiple`.
GroupedShape lay_out_groups(int64_t n, int64_t k, std::vector<int64_t> rows, GroupLayout layout, int64_t align,
                            int64_t slot_multiple);

// Why `shape` is not a valid problem (no groups, negative rows, align < 1, a group over
// max_m, ...), or nothing.
std::optional<std::string> grouped_shape_problem(const GroupedShape& shape);

// The fewest bytes one grouped run must move: the weights (and scales) of every group with
// rows, each routed activation row and its scales read once, each output row written once.
double grouped_min_bytes(const GroupedShape& shape, OperandFormat format);

struct GroupedWeightShape {
  int64_t groups = 0, n = 0, k = 0;
  BlockFormatId format = BlockFormatId::fp8_blockscale;  // as WeightShape::format
};

class GroupedPreparedGemm : public PreparedGemm {
 public:
  // Rows the kernel's math covers, its own padding included (a whole tile, a call's row
  // rounding): executed FLOPs = 2 * executed_rows * N * K.
  virtual int64_t executed_rows() const = 0;
};

// Weights of every group prepared once; activations prepared per grouped shape.
class GroupedGemmSession {
 public:
  virtual ~GroupedGemmSession() = default;
  virtual std::size_t activation_bytes(const GroupedShape& shape) const = 0;
  virtual std::unique_ptr<GroupedPreparedGemm> prepare(const GroupedShape& shape, uint64_t seed) = 0;
};

struct GroupedKernelEntry : KernelIdentity {
  GroupedKernelEntry() = default;
  explicit GroupedKernelEntry(KernelIdentity identity) : KernelIdentity(std::move(identity)) {}

  // The dense kernel of the same backend and dtype: its peak is this kernel's MFU peak, and it
  // warms the GPU before a sweep.
  std::string peak_kernel;
  std::function<std::optional<std::string>(const GroupedShape&)> unsupported_reason = runs_every_shape<GroupedShape>;
  std::function<std::string(const GroupedShape&)> describe_config;
  std::function<std::unique_ptr<GroupedGemmSession>(Device&, const GroupedWeightShape&, uint64_t seed)> open;
};

const std::vector<GroupedKernelEntry>& grouped_kernel_registry();
// Throws UserError listing the grouped kernels when `name` is not one.
const GroupedKernelEntry& find_grouped_kernel(const std::string& name);
// Registering a name again replaces its entry (as register_kernel).
void register_grouped_kernel(GroupedKernelEntry entry);

// What this build could not register and why (cuBLASLt's grouped block-scaled GEMM needs a
// newer cuBLAS than 13.1: detected from the headers at build time), or "".
std::string missing_grouped_kernels();

}  // namespace shapescope::kernels
