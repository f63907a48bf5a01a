// MXFP8 operands to bf16 (mxfp8_dequantize.hpp), memory-bound: a thread takes four runs of 8 codes (8-byte loads,
// all in flight before any is converted), converts each e4m3 pair to f16 in one instruction (exact), scales
// it in fp32 by the block's 2^(code - 127) (exact: the product stays inside fp32) and rounds the pair to bf16
// (exact for the codes of kMxfp8Bf16LowestCode..kMxfp8Bf16HighestCode), and stores 16 bytes. A and B are one
// grid, A's runs first.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/mxfp8_dequantize.hpp"
#include "kernels/cuda/mxfp8_operands.hpp"

namespace shapescope::kernels::cuda {
namespace {

constexpr int kRun = 8;  // codes a load
constexpr int kRunsPerThread = 4;
constexpr int kThreads = 256;

struct DequantizeParams {
  Mxfp8DequantizedOperand a, b;
  uint32_t runs_per_row = 0;     // k / kRun
  int64_t a_runs = 0, runs = 0;  // runs of A; of A and B
};

// 2^(code - 127) for codes 1..254, built from its bits (open refuses operands with codes below kMxfp8Bf16LowestCode).
__device__ __forceinline__ float scale_value(uint32_t code) { return __uint_as_float(code << 23); }

__device__ __forceinline__ uint32_t scaled_bf16_pair(uint32_t codes, float scale) {
  const __half2 pair(__nv_cvt_fp8x2_to_halfraw2(__nv_fp8x2_storage_t(codes), __NV_E4M3));
  const float2 values = __half22float2(pair);
  const __nv_bfloat162 out = __floats2bfloat162_rn(values.x * scale, values.y * scale);
  return *reinterpret_cast<const uint32_t*>(&out);
}

// A block's runs are consecutive, kThreads apart for one thread, so every load and store of a warp is contiguous.
__global__ void __launch_bounds__(kThreads) mxfp8_dequantize_kernel(const DequantizeParams p) {
  const int64_t first = int64_t(blockIdx.x) * kThreads * kRunsPerThread + threadIdx.x;
  uint2 codes[kRunsPerThread] = {};
  uint32_t scale_codes[kRunsPerThread] = {};
#pragma unroll
  for (int r = 0; r < kRunsPerThread; ++r) {
    const int64_t run = first + r * kThreads;
    if (run >= p.runs) continue;
    const bool is_a = run < p.a_runs;
    const uint32_t local = uint32_t(is_a ? run : run - p.a_runs);  // < 2^32 (mxfp8_dequantize.hpp)
    const uint32_t row = local / p.runs_per_row, col = (local - row * p.runs_per_row) * kRun;
    const uint2* operand_codes = reinterpret_cast<const uint2*>(is_a ? p.a.codes : p.b.codes);
    const uint32_t* scales = is_a ? p.a.scales : p.b.scales;
    const int64_t rows = is_a ? p.a.rows : p.b.rows;
    codes[r] = __ldcs(operand_codes + local);
    scale_codes[r] = __ldg(scales + int64_t(col / kMxfp8ScaleWordK) * rows + row) >>
                     (8 * (col % kMxfp8ScaleWordK / kMxfp8ScaleBlock));
  }
#pragma unroll
  for (int r = 0; r < kRunsPerThread; ++r) {
    const int64_t run = first + r * kThreads;
    if (run >= p.runs) continue;
    const bool is_a = run < p.a_runs;
    const float scale = scale_value(scale_codes[r] & 0xFF);
    const uint4 out = make_uint4(scaled_bf16_pair(codes[r].x, scale), scaled_bf16_pair(codes[r].x >> 16, scale),
                                 scaled_bf16_pair(codes[r].y, scale), scaled_bf16_pair(codes[r].y >> 16, scale));
    uint4* destination = reinterpret_cast<uint4*>(is_a ? p.a.out : p.b.out);
    destination[is_a ? run : run - p.a_runs] = out;
  }
}

}  // namespace

void dequantize_mxfp8(const Mxfp8DequantizedOperand& a, const Mxfp8DequantizedOperand& b, int64_t k,
                      cudaStream_t stream) {
  const DequantizeParams params{a, b, uint32_t(k / kRun), a.rows * k / kRun, (a.rows + b.rows) * k / kRun};
  const int64_t blocks = (params.runs + kThreads * kRunsPerThread - 1) / (kThreads * kRunsPerThread);
  if (blocks == 0) return;
  mxfp8_dequantize_kernel<<<unsigned(blocks), kThreads, 0, stream>>>(params);
  CUDA_CHECK_LAUNCH();
}

}  // namespace shapescope::kernels::cuda
