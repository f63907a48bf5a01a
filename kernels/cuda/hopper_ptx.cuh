// Thin wrappers over the PTX our own kernels use on Hopper (sm_90a): cp.async
// 16-byte copies into shared memory, the async-proxy fence, wgmma descriptors,
// the e4m3 wgmma itself and programmatic dependent launch. Device code only.
#pragma once

#include <cstdint>

namespace shapescope::kernels::cuda::ptx {

__device__ __forceinline__ uint32_t shared_address(const void* pointer) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(pointer));
}

// Programmatic dependent launch (sm_90). A grid launched with the programmatic stream
// serialization attribute may start while the previous grid in the stream still runs;
// wait_for_previous_grid() blocks until that grid has completed and its memory writes
// are visible, so every thread calls it before its first global read or write.
// allow_dependent_launch() lets the next such grid be scheduled once every CTA of this
// one has called it (or exited). Without the attribute both are no-ops.
__device__ __forceinline__ void wait_for_previous_grid() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }
__device__ __forceinline__ void allow_dependent_launch() {
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
}

// A global int read with acquire semantics at GPU scope: what its writer did before its
// release (a fence, then the write) is visible after it.
__device__ __forceinline__ int load_acquire_gpu(const int* address) {
  int value;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(value) : "l"(address) : "memory");
  return value;
}

// 16 bytes global -> shared, bypassing L1 (weights are streamed once). When
// `valid` is false the destination is zero-filled and nothing is read.
__device__ __forceinline__ void copy_16_async(uint32_t shared_destination, const void* global_source, bool valid) {
  const int source_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_destination), "l"(global_source),
               "r"(source_bytes)
               : "memory");
}

__device__ __forceinline__ void commit_async_copies() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

template <int kPendingGroups>
__device__ __forceinline__ void wait_async_copies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPendingGroups) : "memory");
}

// Shared memory written through the generic proxy (cp.async, st.shared) must be
// made visible to the async proxy before wgmma or the copy engine reads it.
__device__ __forceinline__ void fence_generic_to_async_proxy() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Matrix descriptor of a K-major tile of 128-byte rows in the 128-byte swizzle:
// 8-row core groups 1024 bytes apart (stride byte offset), leading offset unused.
__device__ __forceinline__ uint64_t swizzled_128b_descriptor(uint32_t shared_byte_address) {
  uint64_t descriptor = 0;
  descriptor |= uint64_t((shared_byte_address & 0x3FFFF) >> 4);  // start address
  descriptor |= uint64_t(1) << 16;                                // leading byte offset (ignored)
  descriptor |= uint64_t(1024 >> 4) << 32;                        // stride byte offset
  descriptor |= uint64_t(1) << 62;                                // swizzle mode: 128 bytes
  return descriptor;
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Waits until at most kPending of this warpgroup's committed wgmma groups are still running.
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

// Keeps the compiler from moving reads of wgmma accumulators across the wait.
template <int kCount>
__device__ __forceinline__ void fence_accumulators(float (&accumulators)[kCount]) {
#pragma unroll
  for (int i = 0; i < kCount; ++i) asm volatile("" : "+f"(accumulators[i])::"memory");
}

// D[64 x N] (+)= A[64 x 32] * B[N x 32]^T, e4m3 in, f32 accumulators, both from shared
// memory. `accumulate` false overwrites D (the first K step of a 128-wide block).
template <int kN>
struct WgmmaE4m3;

template <>
struct WgmmaE4m3<128> {
  __device__ __forceinline__ static void run(float (&d)[64], uint64_t a, uint64_t b, bool accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
        "%64, %65, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(a), "l"(b), "r"(int(accumulate)));
  }
};

// D[16 x 8] += A[16 x 16] * B[16 x 8], bf16 in, f32 accumulators (mma.sync, all of
// A and B in registers: used where B is dequantized in registers).
__device__ __forceinline__ void mma_bf16_16x8x16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

}  // namespace shapescope::kernels::cuda::ptx
