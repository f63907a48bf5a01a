// mxfp8_blockscale: C (bf16) = A x B^T with A and B e4m3 and an e8m0 scale per 32 along K on both (OCP MXFP8),
// on Hopper's FP8 tensor cores (mma.sync m16n8k32 e4m3) with fp32 promotion per 32-wide K block: each block's
// product leaves the tensor cores and is added into the accumulators times a_scale[row] * b_scale[col]. That
// promotion costs two fp32 operations per accumulator every 32 K on the CUDA cores, where DeepSeek's FP8 recipe
// (fp8_blockscale) pays one per 128 K with one weight scale per tile: the price of MXFP8 on a GPU without
// block-scaled tensor cores. Tiles of 128 x 128 (8 warps of 64 x 32), K in stages of 128 through a 3-deep
// cp.async pipeline; each operand's scales come in the same stages, packed at prepare four to a row and stage.
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_prepared_gemm.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/hopper_ptx.cuh"
#include "kernels/cuda/mxfp8_operands.hpp"
#include "kernels/cuda/own_kernel_entries.hpp"
#include "kernels/cuda/programmatic_launch.cuh"
#include "kernels/operand_format.hpp"
#include "kernels/shape_checks.hpp"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::cuda {
namespace {

constexpr int kTileM = 128, kTileN = 128, kStageK = 128, kStages = 3, kThreads = 256;
constexpr int kRowBytes = kStageK + 16;  // e4m3 row of a stage + 16 bytes: fragment reads avoid bank conflicts
constexpr int kStageBytes = (kTileM + kTileN) * kRowBytes + (kTileM + kTileN) * 4;
constexpr int kSharedBytes = kStages * kStageBytes;
constexpr int kScaleBlock = kMxfp8ScaleBlock;
static_assert(kStageK == kMxfp8ScaleWordK, "a stage's scales are one packed word a row");

struct Mxfp8Params {
  const uint8_t* a = nullptr;         // [m][k] e4m3
  const uint32_t* a_scales = nullptr;  // [ceil(k/128)][m]: four e8m0 codes, one per 32 of the stage
  const uint8_t* b = nullptr;         // [n][k] e4m3
  const uint32_t* b_scales = nullptr;  // [ceil(k/128)][n]
  uint16_t* c = nullptr;              // [m][n] bf16
  int m = 0, n = 0, k = 0;            // k a multiple of 16 (16-byte copies)
};

// D[16 x 8] = A[16 x 32] * B[32 x 8], e4m3 in, f32 out (C = 0).
__device__ __forceinline__ void mma_e4m3_16x8x32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%10, %10, %10, %10};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(0.0f));
}

// 2^(code - 127), exactly (code 0 is the subnormal 2^-127; 0xFF, NaN, never comes from a quantizer).
__device__ __forceinline__ float e8m0_value(uint32_t code) {
  return code == 0 ? __int_as_float(0x00400000) : __int_as_float(int(code << 23));
}

__global__ void __launch_bounds__(kThreads) mxfp8_blockscale_kernel(const Mxfp8Params p) {
  extern __shared__ __align__(16) uint8_t shared[];
  const int m0 = blockIdx.y * kTileM, n0 = blockIdx.x * kTileN;
  const int stages = (p.k + kStageK - 1) / kStageK;

  auto load_stage = [&](int slot, int stage) {
    uint8_t* a_tile = shared + slot * kStageBytes;
    uint8_t* b_tile = a_tile + kTileM * kRowBytes;
    uint8_t* a_scale_tile = b_tile + kTileN * kRowBytes;
    uint8_t* b_scale_tile = a_scale_tile + kTileM * 4;
    const int k0 = stage * kStageK;
    for (int q = threadIdx.x; q < (kTileM + kTileN) * 8; q += kThreads) {  // 8 chunks of 16 codes a row
      const bool is_a = q < kTileM * 8;
      const int row = (is_a ? q : q - kTileM * 8) / 8, chunk = q % 8;
      const int rows = is_a ? p.m : p.n, first = is_a ? m0 : n0;
      const bool valid = first + row < rows && k0 + chunk * 16 < p.k;
      const uint8_t* source = (is_a ? p.a : p.b) + (valid ? int64_t(first + row) * p.k + k0 + chunk * 16 : 0);
      ptx::copy_16_async(ptx::shared_address((is_a ? a_tile : b_tile) + row * kRowBytes + chunk * 16), source, valid);
    }
    for (int q = threadIdx.x; q < (kTileM + kTileN) / 4; q += kThreads) {  // 4 rows of scales a chunk
      const bool is_a = q < kTileM / 4;
      const int row = (is_a ? q : q - kTileM / 4) * 4, rows = is_a ? p.m : p.n;
      const int64_t first = (is_a ? m0 : n0) + row;
      const uint32_t* source = (is_a ? p.a_scales + int64_t(stage) * p.m : p.b_scales + int64_t(stage) * p.n) + first;
      uint32_t* destination = reinterpret_cast<uint32_t*>((is_a ? a_scale_tile : b_scale_tile) + row * 4);
      if (first + 4 <= rows && reinterpret_cast<uintptr_t>(source) % 16 == 0) {
        ptx::copy_16_async(ptx::shared_address(destination), source, true);
      } else {  // the ragged edge of M or N, or rows not a multiple of 4: word by word, zeros past the edge
        for (int r = 0; r < 4; ++r) destination[r] = first + r < rows ? __ldg(source + r) : 0;
      }
    }
  };

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, group = lane / 4, quad = lane % 4;
  const int warp_row = warp / 4 * 64, warp_col = warp % 4 * 32;
  float accumulators[4][4][4] = {};

  ptx::wait_for_previous_grid();
  ptx::allow_dependent_launch();
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < stages) load_stage(s, s);
    ptx::commit_async_copies();
  }
  for (int i = 0; i < stages; ++i) {
    ptx::wait_async_copies<kStages - 2>();
    __syncthreads();
    if (i + kStages - 1 < stages) load_stage((i + kStages - 1) % kStages, i + kStages - 1);
    ptx::commit_async_copies();

    const uint8_t* a_tile = shared + (i % kStages) * kStageBytes;
    const uint8_t* b_tile = a_tile + kTileM * kRowBytes;
    const uint32_t* a_scale_tile = reinterpret_cast<const uint32_t*>(b_tile + kTileN * kRowBytes);
    const uint32_t* b_scale_tile = a_scale_tile + kTileM;
    uint32_t col_codes[4][2];  // this lane's columns: tile nt, +0 / +1
#pragma unroll
    for (int nt = 0; nt < 4; ++nt)
#pragma unroll
      for (int j = 0; j < 2; ++j) col_codes[nt][j] = b_scale_tile[warp_col + nt * 8 + 2 * quad + j];
#pragma unroll
    for (int sub = 0; sub < kStageK / kScaleBlock; ++sub) {
      const int k = sub * kScaleBlock + 4 * quad;
      uint32_t b_fragments[4][2];
      float col_scales[4][2];
#pragma unroll
      for (int nt = 0; nt < 4; ++nt) {
        const uint8_t* row = b_tile + (warp_col + nt * 8 + group) * kRowBytes + k;
        b_fragments[nt][0] = *reinterpret_cast<const uint32_t*>(row);
        b_fragments[nt][1] = *reinterpret_cast<const uint32_t*>(row + 16);
#pragma unroll
        for (int j = 0; j < 2; ++j) col_scales[nt][j] = e8m0_value(col_codes[nt][j] >> (8 * sub) & 0xFF);
      }
#pragma unroll
      for (int mt = 0; mt < 4; ++mt) {
        const int r0 = warp_row + mt * 16 + group;
        const uint8_t* row = a_tile + r0 * kRowBytes + k;
        const uint32_t a_fragment[4] = {*reinterpret_cast<const uint32_t*>(row),
                                        *reinterpret_cast<const uint32_t*>(row + 8 * kRowBytes),
                                        *reinterpret_cast<const uint32_t*>(row + 16),
                                        *reinterpret_cast<const uint32_t*>(row + 8 * kRowBytes + 16)};
        const float row_scales[2] = {e8m0_value(a_scale_tile[r0] >> (8 * sub) & 0xFF),
                                     e8m0_value(a_scale_tile[r0 + 8] >> (8 * sub) & 0xFF)};
#pragma unroll
        for (int nt = 0; nt < 4; ++nt) {
          float block[4];
          mma_e4m3_16x8x32(block, a_fragment, b_fragments[nt]);
#pragma unroll
          for (int e = 0; e < 4; ++e)
            accumulators[mt][nt][e] += block[e] * (row_scales[e / 2] * col_scales[nt][e % 2]);
        }
      }
    }
  }

  // Fragment element e: row group (+8 for e >= 2), column 2 quad (+1 for odd e).
#pragma unroll
  for (int mt = 0; mt < 4; ++mt)
#pragma unroll
    for (int nt = 0; nt < 4; ++nt)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = m0 + warp_row + mt * 16 + group + 8 * half, col = n0 + warp_col + nt * 8 + 2 * quad;
        if (row >= p.m || col >= p.n) continue;
        uint16_t* out = p.c + int64_t(row) * p.n + col;
        const float v0 = accumulators[mt][nt][2 * half], v1 = accumulators[mt][nt][2 * half + 1];
        if (col + 1 < p.n && p.n % 2 == 0) {
          *reinterpret_cast<__nv_bfloat162*>(out) = __floats2bfloat162_rn(v0, v1);
        } else {
          out[0] = __bfloat16_as_ushort(__float2bfloat16_rn(v0));
          if (col + 1 < p.n) out[1] = __bfloat16_as_ushort(__float2bfloat16_rn(v1));
        }
      }
}

void launch_mxfp8(const Mxfp8Params& params, bool programmatic, cudaStream_t stream) {
  static const bool shared_limit_raised = [] {
    CUDA_CHECK(cudaFuncSetAttribute(mxfp8_blockscale_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes));
    return true;
  }();
  (void)shared_limit_raised;
  const dim3 grid(unsigned((params.n + kTileN - 1) / kTileN), unsigned((params.m + kTileM - 1) / kTileM));
  launch_kernel(mxfp8_blockscale_kernel, grid, dim3(kThreads), kSharedBytes, params, programmatic, stream);
}

class Mxfp8Prepared final : public CudaPreparedGemm {
 public:
  Mxfp8Prepared(CudaDevice& device, const ReferenceProblem& problem, const uint8_t* b, const uint32_t* b_scales)
      : CudaPreparedGemm(device, problem) {
    const GemmShape& s = problem.shape;
    const cudaStream_t stream = device.stream();
    a_ = DeviceBuffer<uint8_t>(std::size_t(s.m * s.k));
    a_scales_ = DeviceBuffer<uint32_t>(std::size_t(mxfp8_scale_words(s.m, s.k)));
    c_ = DeviceBuffer<uint16_t>(std::size_t(s.m * s.n));
    fill_mxfp8_operand(operand_encodings(OperandFormat::mxfp8).a, synthetic::kAStreams, problem.seed_a, s.m, s.k,
                       a_.data(), a_scales_.data(), stream);
    set_output(c_.data(), s.m * s.n, OutputStrides{s.m * s.n, s.n, 1});
    params_ = Mxfp8Params{a_.data(), a_scales_.data(), b, b_scales, c_.data(), int(s.m), int(s.n), int(s.k)};
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  void run() override { launch_mxfp8(params_, device_.programmatic_launch(), device_.stream()); }
  std::string launch_name() const override {
    return std::string("mxfp8_blockscale/mma16832_m128n128k128_s3") + (device_.programmatic_launch() ? "+pdl" : "");
  }

 private:
  DeviceBuffer<uint8_t> a_;
  DeviceBuffer<uint32_t> a_scales_;
  DeviceBuffer<uint16_t> c_;
  Mxfp8Params params_;
};

class Mxfp8Session final : public GemmSession {
 public:
  Mxfp8Session(CudaDevice& device, const WeightShape& shape, uint64_t seed)
      : device_(device), shape_(shape), seed_(seed) {
    b_ = DeviceBuffer<uint8_t>(std::size_t(shape.n * shape.k));
    b_scales_ = DeviceBuffer<uint32_t>(std::size_t(mxfp8_scale_words(shape.n, shape.k)));
    fill_mxfp8_operand(operand_encodings(OperandFormat::mxfp8).b, synthetic::kBStreams, seed, shape.n, shape.k,
                       b_.data(), b_scales_.data(), device.stream());
    CUDA_CHECK(cudaStreamSynchronize(device.stream()));
  }
  std::size_t activation_bytes(int64_t m) const override {
    return std::size_t(m * shape_.k + mxfp8_scale_words(m, shape_.k) * 4 + m * shape_.n * 2);
  }
  std::unique_ptr<PreparedGemm> prepare(int64_t m, uint64_t seed) override {
    const ReferenceProblem problem{OperandFormat::mxfp8, GemmShape{m, shape_.n, shape_.k, 1}, seed, seed_};
    return std::make_unique<Mxfp8Prepared>(device_, problem, b_.data(), b_scales_.data());
  }

 private:
  CudaDevice& device_;
  WeightShape shape_;
  uint64_t seed_;
  DeviceBuffer<uint8_t> b_;
  DeviceBuffer<uint32_t> b_scales_;
};

std::optional<std::string> mxfp8_unsupported_reason(const GemmShape& shape) {
  if (auto reason = batch_count_problem(shape)) return reason;
  if (auto reason = extent_problem(shape)) return reason;
  if (shape.k % 16 != 0) return "K=" + std::to_string(shape.k) + " is not a multiple of 16 (16-byte row copies)";
  return int32_index_problem({shape.m * shape.k, shape.n * shape.k, shape.m * shape.n});
}

}  // namespace

KernelEntry mxfp8_blockscale_entry() {
  KernelEntry entry({.name = "mxfp8_blockscale", .backend = BackendKind::cuda, .dtype = "fp8",
                     .formats = "A and B e4m3 with e8m0 scales per 1x32 (MXFP8), C bf16",
                     .formats_taken = {BlockFormatId::mxfp8},
                     .description = "ours: mma.sync e4m3 (m16n8k32) with fp32 promotion per 32-wide K block, a "
                                    "3-stage cp.async pipeline of 128x128 tiles"});
  entry.unsupported_reason = mxfp8_unsupported_reason;
  entry.describe_config = [](const GemmShape&) { return std::string("mma16832_m128n128k128_s3"); };
  entry.config_for = [](const GemmShape&) { return KernelConfig::plain_tile(kTileM, kTileN); };
  entry.open = [](Device& device, const WeightShape& shape, uint64_t seed) -> std::unique_ptr<GemmSession> {
    require_supported_weights("mxfp8_blockscale", shape, mxfp8_unsupported_reason(GemmShape{1, shape.n, shape.k, 1}));
    return std::make_unique<Mxfp8Session>(as_cuda_device(device), shape, seed);
  };
  return entry;
}

}  // namespace shapescope::kernels::cuda
