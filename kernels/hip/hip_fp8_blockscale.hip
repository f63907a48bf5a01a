// hip_fp8_blockscale and hip_fp8_blockscale_bpreshuffle: C (bf16) = A x B^T with A e4m3 and
// 1x128 f32 scales, B e4m3 and 128x128 f32 scales (DeepSeek-V3's scaling), on AMD GPUs; B
// row-major, or pre-shuffled once per weight into the MFMA operand layout of
// kernels/mfma_preshuffled_b.hpp (a wavefront's B load per MFMA is one contiguous 512-byte read).
//   MFMA path (gfx940..gfx942 and gfx950, the targets with FP8 matrix instructions): each
//     wavefront multiplies a 32x32 tile with v_mfma_f32_32x32x16_fp8_fp8 straight from global
//     memory; every 128-wide K block is summed on its own and promoted into the f32 accumulator
//     with its two scales outside the matrix cores. gfx940..gfx942 read FP8 as e4m3fnuz: operands
//     are re-coded (half the value) and both scales doubled, so the product equals the e4m3
//     reference; gfx950 reads OCP e4m3, used as it is (kernels/fp8_matrix_format.hpp decides).
//   Portable path (every other target, gfx90a included): the one-source kernel of
//     kernels/portable, e4m3 decoded in software, reading B in either layout.
// Neither path has run on AMD hardware (none is reachable from where this was written). The gfx950
// path is compiled only by a ROCm whose clang knows gfx950 (6.4 or later); Debian's HIP 5.2 (LLVM
// 15) rejects the target, so that path has not even been compiled here.
#include <memory>
#include <string>
#include <utility>

#include "kernels/fp8_matrix_format.hpp"
#include "kernels/hip/hip_buffer.hpp"
#include "kernels/hip/hip_check.hpp"
#include "kernels/hip/hip_kernel_entries.hpp"
#include "kernels/hip/hip_operands.hpp"
#include "kernels/hip/hip_prepared_gemm.hpp"
#include "kernels/mfma_preshuffled_b.hpp"
#include "kernels/portable/portable_fp8_blockscale.hpp"
#include "kernels/portable/portable_fp8_blockscale_shape.hpp"
#include "kernels/shape_checks.hpp"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::rocm {
namespace {

using portable::BLayout;
using portable::PortableFp8Params;

constexpr int kMfmaTile = 64;       // block tile, M and N: 2 x 2 wavefronts of 32 x 32
constexpr int kMfmaThreads = 256;   // 4 wavefronts of 64
constexpr int kMfmaStepK = mfma_b::kStepK;  // K per v_mfma_f32_32x32x16_fp8_fp8

// The device pass for the FP8 MFMA targets compiles the MFMA path; others trap. The same instruction
// reads e4m3fnuz on gfx940..gfx942 and OCP e4m3 on gfx950: the host feeds each its format.
#if defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__) || defined(__gfx950__)
#define SHAPESCOPE_FP8_MFMA_TARGET 1
typedef float Float16Vector __attribute__((ext_vector_type(16)));

// The 8 codes a lane feeds one MFMA: row `row`, columns k..k+7 (zeros past the edge; K % 16 == 0
// so a group never straddles K).
__device__ __forceinline__ long load_codes(const uint8_t* codes, int rows, int k_extent, int row, int k) {
  if (row >= rows || k >= k_extent) return 0;
  return *reinterpret_cast<const long*>(codes + int64_t(row) * k_extent + k);
}

// The 8 B codes lane `lane` feeds the MFMA at K `k` for columns n0..n0+31.
template <BLayout kLayout>
__device__ __forceinline__ long load_b_codes(const PortableFp8Params& p, int n0, int k, int lane, int kblocks) {
  if constexpr (kLayout == BLayout::mfma_preshuffled) {
    if (n0 >= p.n) return 0;  // the second wavefront column of the last block tile may lie past N's 32-column tiles
    const int in_block = k % mfma_b::kBlockK;
    return *reinterpret_cast<const long*>(
        p.b + mfma_b::lane_offset(n0 / mfma_b::kTileColumns, k / mfma_b::kBlockK, in_block / kMfmaStepK, lane, kblocks));
  }
  return load_codes(p.b, p.n, p.k, n0 + mfma_b::lane_column(lane), k + mfma_b::lane_k(lane));
}
#endif

template <BLayout kLayout>
__global__ void __launch_bounds__(kMfmaThreads) mfma_fp8_blockscale_kernel(const PortableFp8Params p) {
#if SHAPESCOPE_FP8_MFMA_TARGET
  const int wave = int(threadIdx.x) / 64, lane = int(threadIdx.x) % 64;
  const int m0 = int(blockIdx.y) * kMfmaTile + (wave / 2) * 32, n0 = int(blockIdx.x) * kMfmaTile + (wave % 2) * 32;
  const int lane_row = mfma_b::lane_column(lane), lane_k = mfma_b::lane_k(lane);
  const int kblocks = (p.k + portable::kPortableScaleBlock - 1) / portable::kPortableScaleBlock;
  // Output register r of this lane: column n0 + lane % 32, row m0 + 8 (r / 4) + 4 (lane / 32) + r % 4.
  const int column = n0 + lane_row;
  Float16Vector accumulators = {};
  for (int kb = 0; kb < kblocks; ++kb) {
    const int k_end = p.k < (kb + 1) * portable::kPortableScaleBlock ? p.k : (kb + 1) * portable::kPortableScaleBlock;
    Float16Vector block_sum = {};
    for (int k = kb * portable::kPortableScaleBlock; k < k_end; k += kMfmaStepK) {
      const long a_codes = load_codes(p.a, p.m, p.k, m0 + lane_row, k + lane_k);
      const long b_codes = load_b_codes<kLayout>(p, n0, k, lane, kblocks);
      block_sum = __builtin_amdgcn_mfma_f32_32x32x16_fp8_fp8(a_codes, b_codes, block_sum, 0, 0, 0);
    }
    const float b_scale = column < p.n ? p.b_scales[int64_t(column / portable::kPortableScaleBlock) * kblocks + kb] : 0.0f;
    for (int r = 0; r < 16; ++r) {
      const int row = m0 + 8 * (r / 4) + lane_k / 2 + r % 4;
      const float a_scale = row < p.m ? p.a_scales[int64_t(row) * kblocks + kb] : 0.0f;
      accumulators[r] += block_sum[r] * (a_scale * b_scale);
    }
  }
  for (int r = 0; r < 16; ++r) {
    const int row = m0 + 8 * (r / 4) + lane_k / 2 + r % 4;
    if (row < p.m && column < p.n) p.c[int64_t(row) * p.n + column] = encode_bf16(accumulators[r]);
  }
#else
  (void)p;
  __builtin_trap();  // the host launches this only where fp8_matrix_format() names a format
#endif
}

// The launch configuration's name: the matrix format fed to the MFMA, or the portable kernel.
std::string mfma_config(Fp8MatrixFormat format) {
  if (format == Fp8MatrixFormat::none) return "portable_64x64_f32fma";
  return std::string("mfma_32x32x16_fp8_") + fp8_matrix_format_name(format) + "_64x64";
}

std::optional<std::string> unsupported_reason(const GemmShape& shape) {
  if (auto reason = portable::portable_fp8_blockscale_unsupported_reason(shape)) return reason;
  if (shape.k % kMfmaStepK != 0)
    return "K=" + std::to_string(shape.k) + " is not a multiple of 16 (one MFMA step; 8-byte operand loads)";
  return std::nullopt;
}

class HipFp8Prepared final : public HipPreparedGemm {
 public:
  HipFp8Prepared(HipDevice& device, const ReferenceProblem& problem, const uint8_t* b, const float* b_scales,
                 BLayout layout, Fp8MatrixFormat format)
      : HipPreparedGemm(device, problem), layout_(layout), format_(format) {
    const GemmShape& s = problem.shape;
    a_ = HipBuffer<uint8_t>(std::size_t(s.m * s.k));
    a_scales_ = HipBuffer<float>(std::size_t(s.m * synthetic::blocks(s.k)));
    c_ = HipBuffer<uint16_t>(std::size_t(s.m * s.n));
    fill_fp8_codes(a_.data(), problem.seed_a, synthetic::a_codes, s.m, s.k, format_, device.stream());
    fill_a_scales(a_scales_.data(), problem.seed_a, s.m, s.k, format_, device.stream());
    set_output(c_.data());
    params_ = PortableFp8Params{a_.data(), a_scales_.data(), b, b_scales, c_.data(), int(s.m), int(s.n), int(s.k)};
    HIP_CHECK(hipStreamSynchronize(device.stream()));
  }

  void run() override {
    if (format_ == Fp8MatrixFormat::none)
      return portable::launch_portable_fp8_blockscale(params_, layout_, device_.stream());
    const dim3 grid(unsigned((params_.n + kMfmaTile - 1) / kMfmaTile), unsigned((params_.m + kMfmaTile - 1) / kMfmaTile));
    if (layout_ == BLayout::mfma_preshuffled) {
      mfma_fp8_blockscale_kernel<BLayout::mfma_preshuffled><<<grid, dim3(kMfmaThreads), 0, device_.stream()>>>(params_);
    } else {
      mfma_fp8_blockscale_kernel<BLayout::row_major><<<grid, dim3(kMfmaThreads), 0, device_.stream()>>>(params_);
    }
    HIP_CHECK(hipGetLastError());
  }
  std::string launch_name() const override {
    const std::string kernel =
        layout_ == BLayout::mfma_preshuffled ? "hip_fp8_blockscale_bpreshuffle/" : "hip_fp8_blockscale/";
    return kernel + mfma_config(format_);
  }

 private:
  BLayout layout_;
  Fp8MatrixFormat format_;
  HipBuffer<uint8_t> a_;
  HipBuffer<float> a_scales_;
  HipBuffer<uint16_t> c_;
  PortableFp8Params params_;
};

class HipFp8Session final : public GemmSession {
 public:
  HipFp8Session(HipDevice& device, const WeightShape& shape, uint64_t seed, BLayout layout)
      : device_(device), shape_(shape), seed_(seed), layout_(layout), format_(fp8_matrix_format(device.architecture())) {
    b_ = HipBuffer<uint8_t>(std::size_t(shape.n * shape.k));
    b_scales_ = HipBuffer<float>(std::size_t(synthetic::blocks(shape.n) * synthetic::blocks(shape.k)));
    fill_fp8_codes(b_.data(), seed, synthetic::b_codes, shape.n, shape.k, format_, device.stream());
    if (layout == BLayout::mfma_preshuffled) {
      HipBuffer<uint8_t> shuffled(std::size_t(mfma_b::shuffled_bytes(shape.n, shape.k)));
      portable::launch_preshuffle_b(b_.data(), shuffled.data(), shape.n, shape.k, device.stream());
      HIP_CHECK(hipStreamSynchronize(device.stream()));  // the row-major codes are freed next
      b_ = std::move(shuffled);
    }
    fill_b_scales(b_scales_.data(), seed, shape.n, shape.k, format_, device.stream());
    HIP_CHECK(hipStreamSynchronize(device.stream()));
  }

  std::size_t activation_bytes(int64_t m) const override {
    return std::size_t(m * (shape_.k + synthetic::blocks(shape_.k) * 4) + m * shape_.n * 2);
  }

  std::unique_ptr<PreparedGemm> prepare(int64_t m, uint64_t seed) override {
    const ReferenceProblem problem{OperandFormat::fp8_blockscale, GemmShape{m, shape_.n, shape_.k, 1}, seed, seed_};
    return std::make_unique<HipFp8Prepared>(device_, problem, b_.data(), b_scales_.data(), layout_, format_);
  }

 private:
  HipDevice& device_;
  WeightShape shape_;
  uint64_t seed_;
  BLayout layout_;
  Fp8MatrixFormat format_;
  HipBuffer<uint8_t> b_;
  HipBuffer<float> b_scales_;
};

KernelEntry hip_entry(const std::string& name, BLayout layout) {
  KernelEntry entry(
      {.name = name, .backend = BackendKind::hip, .dtype = "fp8", .formats_taken = {BlockFormatId::fp8_blockscale}});
  entry.unsupported_reason = unsupported_reason;
  entry.describe_config = [](const GemmShape&) {
    return mfma_config(Fp8MatrixFormat::e4m3fnuz) + " on gfx940..942, " + mfma_config(Fp8MatrixFormat::e4m3) +
           " on gfx950, " + mfma_config(Fp8MatrixFormat::none) + " elsewhere";
  };
  entry.config_for = [](const GemmShape&) { return KernelConfig::plain_tile(kMfmaTile, kMfmaTile); };
  entry.open = [name, layout](Device& device, const WeightShape& shape, uint64_t seed) -> std::unique_ptr<GemmSession> {
    require_supported_weights(name, shape, unsupported_reason(GemmShape{1, shape.n, shape.k, shape.batch_count}));
    return std::make_unique<HipFp8Session>(as_hip_device(device), shape, seed, layout);
  };
  return entry;
}

}  // namespace

KernelEntry hip_fp8_blockscale_entry() {
  KernelEntry entry = hip_entry("hip_fp8_blockscale", BLayout::row_major);
  entry.formats = "A e4m3 1x128 f32 scales, B e4m3 128x128 f32 scales (row-major), C bf16; e4m3fnuz on gfx940..942";
  entry.description =
      "ours: v_mfma_f32_32x32x16_fp8_fp8 (fnuz on gfx940..942, OCP e4m3 on gfx950) with per-128-K promotion outside "
      "the matrix cores; the portable f32 FMA kernel elsewhere";
  return entry;
}

KernelEntry hip_fp8_blockscale_bpreshuffle_entry() {
  KernelEntry entry = hip_entry("hip_fp8_blockscale_bpreshuffle", BLayout::mfma_preshuffled);
  entry.formats = "A e4m3 1x128 f32 scales, B e4m3 128x128 f32 scales, B pre-shuffled for the 32x32x16 FP8 MFMA "
                  "(4 KB tiles of 32 columns x 128 K), C bf16; e4m3fnuz on gfx940..942";
  entry.description =
      "ours: hip_fp8_blockscale with B pre-shuffled once per weight so a wavefront's B load per MFMA is one "
      "contiguous 512-byte read (AITER's bpreshuffle question on AMD)";
  return entry;
}

}  // namespace shapescope::kernels::rocm
