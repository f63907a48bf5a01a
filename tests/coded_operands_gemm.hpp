// A naive host GEMM over the plugin ABI's version 2 operands (include/shapescope_plugin.h), decoding them as the
// header documents, for the plugin tests: a table entry's run() on host memory.
#pragma once

#include <cstdint>
#include <cstring>

#include "include/shapescope_plugin.h"
#include "kernels/fp4_e2m1.hpp"
#include "kernels/fp8_e4m3.hpp"
#include "kernels/scale_e8m0.hpp"

namespace shapescope::kernels {

// How one format lays out its operands: element types, elements along K per scale code, the scale type.
struct CodedLayout {
  const char* a_element;  // "bf16", "e4m3" or "e2m1"
  const char* b_element;
  int block;           // elements along K per scale code
  bool e8m0;           // else ue4m3
  bool tensor_scale;   // NVFP4's per-tensor scale
};
// `row` counts rows over all batches (the layouts are [batch][rows][...]); `tensor` is the row's batch's scale.
inline double coded_value(const char* element, const uint8_t* codes, const uint8_t* scale_codes, const float* tensor,
                   const CodedLayout& layout, int64_t row, int64_t col, int64_t k) {
  double value;
  if (std::strcmp(element, "bf16") == 0) {
    const auto* bits = reinterpret_cast<const uint16_t*>(codes);
    return decode_bf16(bits[row * k + col]);
  }
  if (std::strcmp(element, "e4m3") == 0) {
    value = decode_e4m3(codes[row * k + col]);
  } else {
    const uint8_t byte = codes[row * ((k + 1) / 2) + col / 2];
    value = decode_e2m1(uint8_t(col % 2 ? byte >> 4 : byte & 0xF));
  }
  const int64_t k_blocks = (k + layout.block - 1) / layout.block;
  const uint8_t scale = scale_codes[row * k_blocks + col / layout.block];
  value *= layout.e8m0 ? decode_e8m0(scale) : decode_e4m3(scale);
  return layout.tensor_scale ? value * tensor[0] : value;
}
template <const CodedLayout& Layout, bool kForgetTensorScale = false>
int coded_operands_gemm(void*, const shapescope_operands* op, char*, size_t) {
  const auto* a = static_cast<const uint8_t*>(op->a);
  const auto* b = static_cast<const uint8_t*>(op->b);
  auto* c = static_cast<uint16_t*>(op->c);
  const int64_t m = op->shape.m, n = op->shape.n, k = op->shape.k;
  const float one = 1.0f;
  const bool a_tensor = Layout.tensor_scale && std::strcmp(Layout.a_element, "bf16") != 0;
  for (int64_t batch = 0; batch < op->shape.batch_count; ++batch) {
    const float* a_tensor_scale = a_tensor && !kForgetTensorScale ? op->a_tensor_scales + batch : &one;
    const float* b_tensor_scale = Layout.tensor_scale && !kForgetTensorScale ? op->b_tensor_scales + batch : &one;
    for (int64_t row = 0; row < m; ++row)
      for (int64_t col = 0; col < n; ++col) {
        double sum = 0;
        for (int64_t i = 0; i < k; ++i)
          sum += coded_value(Layout.a_element, a, op->a_scale_codes, a_tensor_scale, Layout, batch * m + row, i, k) *
                 coded_value(Layout.b_element, b, op->b_scale_codes, b_tensor_scale, Layout, batch * n + col, i, k);
        c[(batch * m + row) * n + col] = encode_bf16(float(sum));
      }
  }
  return 0;
}
inline constexpr CodedLayout kMxfp8Layout{"e4m3", "e4m3", 32, true, false};
inline constexpr CodedLayout kMxfp4Layout{"bf16", "e2m1", 32, true, false};
inline constexpr CodedLayout kNvfp4WeightLayout{"bf16", "e2m1", 16, false, true};
inline constexpr CodedLayout kE2m1E8m0Per16Layout{"bf16", "e2m1", 16, true, false};
inline constexpr CodedLayout kNvfp4Layout{"e2m1", "e2m1", 16, false, true};

}  // namespace shapescope::kernels
