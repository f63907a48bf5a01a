#include "common/block_format.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/user_error.hpp"

namespace shapescope {

std::string_view to_string(BlockFormatId id) { return block_format(id).name; }

std::string_view to_string(ElementType element) {
  switch (element) {
    case ElementType::e4m3: return "e4m3";
    case ElementType::e5m2: return "e5m2";
    case ElementType::e2m1: return "e2m1";
    case ElementType::bf16: break;
  }
  return "bf16";
}

std::string_view to_string(ScaleType scale) {
  switch (scale) {
    case ScaleType::fp32: return "fp32";
    case ScaleType::e8m0: return "e8m0";
    case ScaleType::ue4m3: return "ue4m3";
    case ScaleType::none: break;
  }
  return "none";
}

std::string describe(const OperandEncoding& encoding) {
  std::string text(to_string(encoding.element));
  if (encoding.scaled())
    text += fmt::format(", {} scale per {}x{}", to_string(encoding.scale), encoding.block_rows, encoding.block_k);
  if (encoding.tensor_scale) text += ", fp32 per-tensor scale";
  return text;
}

std::vector<std::string> block_format_names() {
  std::vector<std::string> names;
  for (const BlockFormat& format : kBlockFormats) names.emplace_back(format.name);
  return names;
}

BlockFormatId parse_block_format(std::string_view name) {
  for (const BlockFormat& format : kBlockFormats)
    if (name == format.name) return format.id;
  throw UserError(fmt::format("unknown format '{}': use one of {}", name, fmt::join(block_format_names(), ", ")));
}

std::string format_label(BlockFormatId id) {
  return id == BlockFormatId::fp8_blockscale ? "" : fmt::format("_{}", to_string(id));
}

std::string k_packing_problem(const OperandEncoding& encoding, int64_t k) {
  const int per_byte = 8 / element_bits(encoding.element);
  if (per_byte > 1 && k % per_byte != 0)
    return fmt::format("K={} cannot be packed as {} ({} elements per byte): K must be a multiple of {}", k,
                       to_string(encoding.element), per_byte, per_byte);
  return "";
}

}  // namespace shapescope
