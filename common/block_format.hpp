// The one description of a block-scaled number format: what each operand's elements are, what scales them,
// over how many elements along K one scale applies, and the named formats built from these.
//
//   format          A (activations)            B (weights)                 Hopper math  where it lives
//   fp8_blockscale  e4m3, fp32 per 1x128       e4m3, fp32 per 128x128      fp8          DeepSeek-V3/R1, Qwen3 FP8
//   mxfp8           e4m3, e8m0 per 1x32        e4m3, e8m0 per 1x32         fp8          OCP MX v1.0 MXFP8
//   mxfp4           bf16 (weight-only)         e2m1, e8m0 per 1x32         bf16         gpt-oss MoE experts
//   nvfp4           bf16 (weight-only)         e2m1, ue4m3 per 1x16 + f32  bf16         NVIDIA FP4 checkpoints
//   e2m1_e8m0_16    bf16 (weight-only)         e2m1, e8m0 per 1x16         bf16         the CuTe DSL study's FP4
//   bf16            bf16                       bf16                        bf16         unquantized baseline
//
// The FP4 formats are weight-only on Hopper (W4A16: the weights stay 4-bit in memory and are multiplied in
// bf16), so their activations are bf16 and their math class (`dtype`, the MFU peak) is bf16. Their native
// activations (the same encoding as the weights, multiplied in FP4 on Blackwell) are `native_activations`.
// Everything here is constexpr, so device code reads the table too (nvcc's --expt-relaxed-constexpr).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shapescope {

enum class ElementType : uint8_t { bf16, e4m3, e5m2, e2m1 };
enum class ScaleType : uint8_t { none, fp32, e8m0, ue4m3 };

// One operand's encoding. A scale covers block_rows x block_k elements (rows of the operand, K along them);
// an fp32 per-tensor scale, where present, multiplies every block scale (NVFP4's second level).
struct OperandEncoding {
  ElementType element = ElementType::bf16;
  ScaleType scale = ScaleType::none;
  int block_k = 0;     // elements along K per scale; 0 without scales
  int block_rows = 0;  // operand rows per scale: 1, or 128 for a 2-D weight block; 0 without scales
  bool tensor_scale = false;

  constexpr bool scaled() const { return scale != ScaleType::none; }
  constexpr bool operator==(const OperandEncoding&) const = default;
};

enum class BlockFormatId : uint8_t { fp8_blockscale, mxfp8, mxfp4, nvfp4, e2m1_e8m0_16, bf16 };

struct BlockFormat {
  BlockFormatId id;
  const char* name;
  OperandEncoding activations;         // A as Hopper kernels take it (bf16 for weight-only formats)
  OperandEncoding weights;             // B
  OperandEncoding native_activations;  // A where the hardware multiplies the format natively (Blackwell FP4)
  bool weight_only;                    // A stays bf16 on Hopper: W4A16
  const char* dtype;                   // the class of the math on Hopper: the MFU peak ("fp8", "bf16")
};

namespace block_format_detail {
constexpr OperandEncoding kBf16{};
constexpr OperandEncoding kE4m3PerToken128{ElementType::e4m3, ScaleType::fp32, 128, 1, false};
constexpr OperandEncoding kE4m3Block128x128{ElementType::e4m3, ScaleType::fp32, 128, 128, false};
constexpr OperandEncoding kMxfp8{ElementType::e4m3, ScaleType::e8m0, 32, 1, false};
constexpr OperandEncoding kMxfp4{ElementType::e2m1, ScaleType::e8m0, 32, 1, false};
constexpr OperandEncoding kNvfp4{ElementType::e2m1, ScaleType::ue4m3, 16, 1, true};
constexpr OperandEncoding kE2m1E8m0Per16{ElementType::e2m1, ScaleType::e8m0, 16, 1, false};
}  // namespace block_format_detail

// Indexed by BlockFormatId.
inline constexpr std::array<BlockFormat, 6> kBlockFormats{{
    {BlockFormatId::fp8_blockscale, "fp8_blockscale", block_format_detail::kE4m3PerToken128,
     block_format_detail::kE4m3Block128x128, block_format_detail::kE4m3PerToken128, false, "fp8"},
    {BlockFormatId::mxfp8, "mxfp8", block_format_detail::kMxfp8, block_format_detail::kMxfp8,
     block_format_detail::kMxfp8, false, "fp8"},
    {BlockFormatId::mxfp4, "mxfp4", block_format_detail::kBf16, block_format_detail::kMxfp4,
     block_format_detail::kMxfp4, true, "bf16"},
    {BlockFormatId::nvfp4, "nvfp4", block_format_detail::kBf16, block_format_detail::kNvfp4,
     block_format_detail::kNvfp4, true, "bf16"},
    {BlockFormatId::e2m1_e8m0_16, "e2m1_e8m0_16", block_format_detail::kBf16, block_format_detail::kE2m1E8m0Per16,
     block_format_detail::kE2m1E8m0Per16, true, "bf16"},
    {BlockFormatId::bf16, "bf16", block_format_detail::kBf16, block_format_detail::kBf16, block_format_detail::kBf16,
     false, "bf16"},
}};

constexpr const BlockFormat& block_format(BlockFormatId id) { return kBlockFormats[static_cast<size_t>(id)]; }

// Largest finite magnitude and the exponent of the largest power of two below it (the OCP MX spec's emax_elem).
constexpr float element_max(ElementType element) {
  switch (element) {
    case ElementType::e4m3: return 448.0f;
    case ElementType::e5m2: return 57344.0f;
    case ElementType::e2m1: return 6.0f;
    case ElementType::bf16: break;
  }
  return 3.3895313892515355e38f;
}
constexpr int element_emax(ElementType element) {
  switch (element) {
    case ElementType::e4m3: return 8;
    case ElementType::e5m2: return 15;
    case ElementType::e2m1: return 2;
    case ElementType::bf16: break;
  }
  return 127;
}

// Bits one element occupies in memory, and bytes of one scale.
constexpr int element_bits(ElementType element) {
  switch (element) {
    case ElementType::e4m3:
    case ElementType::e5m2: return 8;
    case ElementType::e2m1: return 4;
    case ElementType::bf16: break;
  }
  return 16;
}
constexpr int scale_bytes(ScaleType scale) {
  switch (scale) {
    case ScaleType::fp32: return 4;
    case ScaleType::e8m0:
    case ScaleType::ue4m3: return 1;
    case ScaleType::none: break;
  }
  return 0;
}

// Bytes an operand of rows x k (per batch) occupies: packed elements, block scales, per-tensor scale.
constexpr double operand_bytes(const OperandEncoding& encoding, int64_t rows, int64_t k) {
  double bytes = double(rows) * double(k) * element_bits(encoding.element) / 8.0;
  if (encoding.scaled()) {
    const int64_t row_blocks = (rows + encoding.block_rows - 1) / encoding.block_rows;
    const int64_t k_blocks = (k + encoding.block_k - 1) / encoding.block_k;
    bytes += double(row_blocks) * double(k_blocks) * scale_bytes(encoding.scale);
  }
  return bytes + (encoding.tensor_scale ? 4.0 : 0.0);
}

std::string_view to_string(BlockFormatId id);
std::string_view to_string(ElementType element);
std::string_view to_string(ScaleType scale);
// "e2m1, ue4m3 scale per 1x16, fp32 per-tensor scale"
std::string describe(const OperandEncoding& encoding);
// Every named format, in table order.
std::vector<std::string> block_format_names();
// Throws UserError naming the valid formats when `name` is none of them.
BlockFormatId parse_block_format(std::string_view name);

// A profile file name's format part: "" for fp8_blockscale, the layers' default (so the file names of FP8
// profiles stay as they were), else "_<name>".
std::string format_label(BlockFormatId id);

// Why an operand of this encoding cannot hold K elements per row (FP4 packs two per byte: K must be even),
// or empty.
std::string k_packing_problem(const OperandEncoding& encoding, int64_t k);

}  // namespace shapescope
