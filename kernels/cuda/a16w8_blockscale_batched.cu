// a16w8_blockscale_batched: C[b] (bf16) = A[b] (bf16) x dequant(B[b])^T with B e4m3
// and 128x128 scales, for absorbed-MLA shapes (16 heads per TP8 rank, N x K of
// 512 x 128 or 128 x 512, M up to 128).
//
// B moves as e4m3 (half the bytes of a bf16 weight) and is widened in registers:
// e4m3 codes are exact in bf16, so the tensor cores (mma.sync bf16) multiply the
// codes and the 128x128 block scale is applied per K block outside them, as in
// the FP8 kernels. A and B tiles come through a 4-stage cp.async pipeline.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <stdexcept>

#include "kernels/cuda/a16w8_blockscale_config.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_prepared_gemm.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/device_operands.cuh"
#include "kernels/cuda/hopper_ptx.cuh"
#include "kernels/cuda/own_kernel_entries.hpp"
#include "kernels/cuda/programmatic_launch.cuh"
#include "kernels/shape_checks.hpp"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels::cuda {
namespace {

struct A16w8Params {
  const uint16_t* a = nullptr;       // [batch][m][k] bf16
  const uint8_t* b = nullptr;        // [batch][n][k] e4m3
  const float* b_scales = nullptr;   // [batch][ceil(n/128)][ceil(k/128)]
  uint16_t* c = nullptr;             // [batch][m][n] bf16
  int m = 0, n = 0, k = 0;  // k a multiple of 16 (16-byte copies)
};

// Two e4m3 codes (low byte = lower K) as a bf16 pair, exactly.
__device__ __forceinline__ uint32_t e4m3x2_to_bf16x2(uint16_t codes) {
  const __half2 halves = __half2(__nv_cvt_fp8x2_to_halfraw2(codes, __NV_E4M3));
  const __nv_bfloat162 pair = __float22bfloat162_rn(__half22float2(halves));
  return *reinterpret_cast<const uint32_t*>(&pair);
}

// A stage holds kWarpsK consecutive K blocks; warp group wk of the CTA multiplies the
// wk-th of them, and the kWarpsK partial tiles are summed through shared memory at the
// end. Splitting K inside the CTA shortens the serial chain of narrow, deep shapes
// (N=128, K=512) that have too few output tiles to fill the GPU.
template <int kWarpsM, int kWarpsN, int kWarpsK, int kStages>
__global__ void __launch_bounds__(kWarpsM* kWarpsN* kWarpsK * 32) a16w8_blockscale_kernel(const A16w8Params p) {
  constexpr int kThreads = kWarpsM * kWarpsN * kWarpsK * 32;
  constexpr int kTileM = 32 * kWarpsM, kTileN = 32 * kWarpsN;
  constexpr int kATileBytes = kTileM * kA16w8ARowBytes;
  constexpr int kBlockBytes = kATileBytes + kTileN * kA16w8BRowBytes;  // one K block of A and B
  constexpr int kStageBytes = kWarpsK * kBlockBytes;
  extern __shared__ __align__(16) uint8_t shared[];

  const int batch = blockIdx.z;
  const int n0 = blockIdx.x * kTileN, m0 = blockIdx.y * kTileM;
  const int kblocks = (p.k + kA16w8BlockK - 1) / kA16w8BlockK;  // a partial last block reads zeros past K
  const int stage_count = (kblocks + kWarpsK - 1) / kWarpsK;
  const uint16_t* a = p.a + int64_t(batch) * p.m * p.k;
  const uint8_t* b = p.b + int64_t(batch) * p.n * p.k;
  const float* b_scales =
      p.b_scales + (int64_t(batch) * ((p.n + 127) / 128) + n0 / 128) * kblocks;  // kTileN divides 128

  auto load_stage = [&](int slot, int stage) {
    for (int sub = 0; sub < kWarpsK; ++sub) {
      const int kb = stage * kWarpsK + sub;
      if (kb >= kblocks) break;  // nobody multiplies a block past K
      uint8_t* a_tile = shared + slot * kStageBytes + sub * kBlockBytes;
      uint8_t* b_tile = a_tile + kATileBytes;
      for (int q = threadIdx.x; q < kTileM * 16; q += kThreads) {  // 16 chunks of 8 bf16 per row
        const int row = q / 16, chunk = q % 16;
        const bool valid = m0 + row < p.m && kb * kA16w8BlockK + chunk * 8 < p.k;
        const uint16_t* source = a + (valid ? int64_t(m0 + row) * p.k + kb * kA16w8BlockK + chunk * 8 : 0);
        ptx::copy_16_async(ptx::shared_address(a_tile + row * kA16w8ARowBytes + chunk * 16), source, valid);
      }
      for (int q = threadIdx.x; q < kTileN * 8; q += kThreads) {  // 8 chunks of 16 codes per row
        const int row = q / 8, chunk = q % 8;
        const bool valid = n0 + row < p.n && kb * kA16w8BlockK + chunk * 16 < p.k;
        const uint8_t* source = b + (valid ? int64_t(n0 + row) * p.k + kb * kA16w8BlockK + chunk * 16 : 0);
        ptx::copy_16_async(ptx::shared_address(b_tile + row * kA16w8BRowBytes + chunk * 16), source, valid);
      }
    }
  };

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warp_k = warp / (kWarpsM * kWarpsN), warp_mn = warp % (kWarpsM * kWarpsN);
  const int warp_row = warp_mn / kWarpsN * 32, warp_col = warp_mn % kWarpsN * 32;
  const int group = lane / 4, pair = 2 * (lane % 4);  // the mma fragment coordinates of this lane

  float accumulators[2][4][4] = {};

  // Under programmatic dependent launch the previous grid may still run: wait for it before
  // the first global read, then let the next grid be scheduled (it waits for ours in turn).
  ptx::wait_for_previous_grid();
  ptx::allow_dependent_launch();
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < stage_count) load_stage(s, s);
    ptx::commit_async_copies();
  }
  for (int i = 0; i < stage_count; ++i) {
    ptx::wait_async_copies<kStages - 2>();
    __syncthreads();  // stage i complete; every thread is done reading stage i-1
    if (i + kStages - 1 < stage_count) load_stage((i + kStages - 1) % kStages, i + kStages - 1);
    ptx::commit_async_copies();

    const int kb = i * kWarpsK + warp_k;
    if (kb >= kblocks) continue;
    const uint8_t* a_tile = shared + (i % kStages) * kStageBytes + warp_k * kBlockBytes;
    const uint8_t* b_tile = a_tile + kATileBytes;
    const float scale = __ldg(b_scales + kb);
    float block_product[2][4][4] = {};
#pragma unroll
    for (int step = 0; step < kA16w8BlockK / 16; ++step) {
      const int k = step * 16 + pair;
      uint32_t a_fragments[2][4];
#pragma unroll
      for (int mt = 0; mt < 2; ++mt) {
        const uint8_t* row = a_tile + (warp_row + mt * 16 + group) * kA16w8ARowBytes + k * 2;
        a_fragments[mt][0] = *reinterpret_cast<const uint32_t*>(row);
        a_fragments[mt][1] = *reinterpret_cast<const uint32_t*>(row + 8 * kA16w8ARowBytes);
        a_fragments[mt][2] = *reinterpret_cast<const uint32_t*>(row + 16);
        a_fragments[mt][3] = *reinterpret_cast<const uint32_t*>(row + 8 * kA16w8ARowBytes + 16);
      }
#pragma unroll
      for (int nt = 0; nt < 4; ++nt) {
        const uint8_t* codes = b_tile + (warp_col + nt * 8 + group) * kA16w8BRowBytes + k;
        const uint32_t b_fragment[2] = {e4m3x2_to_bf16x2(*reinterpret_cast<const uint16_t*>(codes)),
                                        e4m3x2_to_bf16x2(*reinterpret_cast<const uint16_t*>(codes + 8))};
#pragma unroll
        for (int mt = 0; mt < 2; ++mt) ptx::mma_bf16_16x8x16(block_product[mt][nt], a_fragments[mt], b_fragment);
      }
    }
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
      for (int nt = 0; nt < 4; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) accumulators[mt][nt][e] += block_product[mt][nt][e] * scale;
  }

  if constexpr (kWarpsK > 1) {
    // Sum the K-split partial tiles: warps wk > 0 park theirs in the (now idle) stage memory.
    ptx::wait_async_copies<0>();
    __syncthreads();
    float* parked = reinterpret_cast<float*>(shared);  // [wk - 1][warp_mn][32 values][32 lanes]
    auto slot_of = [&](int wk, int value) { return ((wk - 1) * kWarpsM * kWarpsN + warp_mn) * 1024 + value * 32 + lane; };
    if (warp_k > 0) {
#pragma unroll
      for (int v = 0; v < 32; ++v) parked[slot_of(warp_k, v)] = accumulators[v / 16][v / 4 % 4][v % 4];
    }
    __syncthreads();
    if (warp_k > 0) return;
    for (int wk = 1; wk < kWarpsK; ++wk) {
#pragma unroll
      for (int v = 0; v < 32; ++v) accumulators[v / 16][v / 4 % 4][v % 4] += parked[slot_of(wk, v)];
    }
  }

  // Fragment element e of tile (mt, nt): row group (+8 for e >= 2), column pair (+1 for odd e).
  uint16_t* c = p.c + int64_t(batch) * p.m * p.n;
#pragma unroll
  for (int mt = 0; mt < 2; ++mt)
#pragma unroll
    for (int nt = 0; nt < 4; ++nt)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = m0 + warp_row + mt * 16 + group + 8 * half;
        const int col = n0 + warp_col + nt * 8 + pair;
        if (row >= p.m || col >= p.n) continue;
        const float v0 = accumulators[mt][nt][2 * half], v1 = accumulators[mt][nt][2 * half + 1];
        uint16_t* out = c + int64_t(row) * p.n + col;
        if (col + 1 < p.n && p.n % 2 == 0) {
          *reinterpret_cast<__nv_bfloat162*>(out) = __floats2bfloat162_rn(v0, v1);
        } else {
          out[0] = __bfloat16_as_ushort(__float2bfloat16_rn(v0));
          if (col + 1 < p.n) out[1] = __bfloat16_as_ushort(__float2bfloat16_rn(v1));
        }
      }
}

// `programmatic`: with programmatic dependent launch (the kernel waits for the previous grid
// before touching global memory).
template <int kWarpsM, int kWarpsN, int kWarpsK, int kStages>
void launch_instance(const A16w8Params& params, const A16w8Config& config, int batch, bool programmatic,
                     cudaStream_t stream) {
  const auto kernel = a16w8_blockscale_kernel<kWarpsM, kWarpsN, kWarpsK, kStages>;
  const int shared_bytes = a16w8_shared_bytes(config);
  static const bool shared_limit_raised = [&] {  // above 48 KB only after opting in, once per instance
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared_bytes));
    return true;
  }();
  (void)shared_limit_raised;
  const dim3 grid(unsigned((params.n + config.tile_n() - 1) / config.tile_n()),
                  unsigned((params.m + config.tile_m() - 1) / config.tile_m()), unsigned(batch));
  launch_kernel(kernel, grid, dim3(unsigned(config.threads())), std::size_t(shared_bytes), params, programmatic, stream);
}

void launch_a16w8(const A16w8Params& params, const A16w8Config& config, int batch, bool programmatic,
                  cudaStream_t stream) {
  const auto is = [&](int m, int n, int k, int stages) {
    return config.warps_m == m && config.warps_n == n && config.warps_k == k && config.stages == stages;
  };
  if (is(1, 1, 1, 4)) return launch_instance<1, 1, 1, 4>(params, config, batch, programmatic, stream);
  if (is(1, 2, 1, 4)) return launch_instance<1, 2, 1, 4>(params, config, batch, programmatic, stream);
  if (is(2, 2, 1, 4)) return launch_instance<2, 2, 1, 4>(params, config, batch, programmatic, stream);
  if (is(1, 1, 4, 2)) return launch_instance<1, 1, 4, 2>(params, config, batch, programmatic, stream);
  throw std::logic_error("a16w8_blockscale_batched: no kernel for " + describe(config));
}

class A16w8Prepared final : public CudaPreparedGemm {
 public:
  A16w8Prepared(CudaDevice& device, const ReferenceProblem& problem, const uint8_t* b, const float* b_scales)
      : CudaPreparedGemm(device, problem), config_(choose_a16w8_config(problem.shape)) {
    const GemmShape& s = problem.shape;
    a_ = DeviceBuffer<uint16_t>(std::size_t(s.batch_count * s.m * s.k));
    c_ = DeviceBuffer<uint16_t>(std::size_t(s.batch_count * s.m * s.n));
    const cudaStream_t stream = device.stream();
    fill_bf16_values(a_.data(), problem.seed_a, synthetic::a_bf16, s.batch_count, s.m, s.k, stream);
    set_output(c_.data(), s.batch_count * s.m * s.n, OutputStrides{s.m * s.n, s.n, 1});
    params_ = A16w8Params{a_.data(), b, b_scales, c_.data(), int(s.m), int(s.n), int(s.k)};
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  void run() override {
    launch_a16w8(params_, config_, int(problem().shape.batch_count), device_.programmatic_launch(), device_.stream());
  }
  std::string launch_name() const override {
    return "a16w8_blockscale_batched/" + describe(config_) + (device_.programmatic_launch() ? "+pdl" : "");
  }

 private:
  A16w8Config config_;
  DeviceBuffer<uint16_t> a_;
  DeviceBuffer<uint16_t> c_;
  A16w8Params params_;
};

class A16w8Session final : public GemmSession {
 public:
  A16w8Session(CudaDevice& device, const WeightShape& shape, uint64_t seed) : device_(device), shape_(shape), seed_(seed) {
    const int64_t kblocks = synthetic::blocks(shape.k), nblocks = synthetic::blocks(shape.n);
    const cudaStream_t stream = device.stream();
    b_ = DeviceBuffer<uint8_t>(std::size_t(shape.batch_count * shape.n * shape.k));
    b_scales_ = DeviceBuffer<float>(std::size_t(shape.batch_count * nblocks * kblocks));
    fill_fp8_codes(b_.data(), seed, synthetic::b_codes, shape.batch_count, shape.n, shape.k, stream);
    fill_b_scales(b_scales_.data(), seed, shape.batch_count, shape.n, shape.k,
                  ScaleStrides{nblocks * kblocks, kblocks, 1}, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }

  std::size_t activation_bytes(int64_t m) const override {
    return std::size_t(shape_.batch_count * m * (shape_.k + shape_.n) * 2);
  }

  std::unique_ptr<PreparedGemm> prepare(int64_t m, uint64_t seed) override {
    const ReferenceProblem problem{OperandFormat::a16w8_blockscale, GemmShape{m, shape_.n, shape_.k, shape_.batch_count},
                                  seed, seed_};
    return std::make_unique<A16w8Prepared>(device_, problem, b_.data(), b_scales_.data());
  }

 private:
  CudaDevice& device_;
  WeightShape shape_;
  uint64_t seed_;
  DeviceBuffer<uint8_t> b_;
  DeviceBuffer<float> b_scales_;
};

std::optional<std::string> a16w8_unsupported_reason(const GemmShape& shape) {
  if (shape.k <= 0 || shape.k % 16 != 0)
    return "K=" + std::to_string(shape.k) + " is not a positive multiple of 16 (16-byte row copies)";
  if (shape.m < 1 || shape.n < 1 || shape.batch_count < 1) return "M, N and batch_count must be positive";
  if (shape.batch_count > 65535) return "batch_count over 65535 (one grid z per batch)";
  return int32_index_problem({shape.batch_count * shape.m * std::max(shape.n, shape.k)});
}

}  // namespace

KernelEntry a16w8_blockscale_batched_entry() {
  KernelEntry entry(
      {.name = "a16w8_blockscale_batched",
       .backend = BackendKind::cuda,
       .dtype = "a16w8",  // MFU against the bf16 tensor-core rate it runs at (common/device_peaks)
       .formats = "A bf16, B e4m3 128x128 f32 scales (dequantized in registers), C bf16; batched",
       .formats_taken = {BlockFormatId::fp8_blockscale},
       .description = "ours: batched mma.sync bf16 with e4m3 weights widened in registers, per-128-K scale promotion"});
  entry.batched = true;
  entry.unsupported_reason = a16w8_unsupported_reason;
  entry.describe_config = [](const GemmShape& shape) { return describe(choose_a16w8_config(shape)); };
  entry.config_for = [](const GemmShape& shape) {
    const A16w8Config config = choose_a16w8_config(shape);
    return KernelConfig::plain_tile(config.tile_m(), config.tile_n());
  };
  entry.open = [](Device& device, const WeightShape& shape, uint64_t seed) -> std::unique_ptr<GemmSession> {
    require_supported_weights("a16w8_blockscale_batched", shape,
                              a16w8_unsupported_reason(GemmShape{1, shape.n, shape.k, shape.batch_count}));
    return std::make_unique<A16w8Session>(as_cuda_device(device), shape, seed);
  };
  return entry;
}

}  // namespace shapescope::kernels::cuda
