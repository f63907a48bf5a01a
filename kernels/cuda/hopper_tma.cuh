// Thin wrappers over Hopper's bulk copy engine (TMA) and the shared-memory barriers
// it completes on (mbarrier): what a producer warp needs to keep tiles in flight
// while the consumer warpgroups run wgmma. Device code only.
#pragma once

#include <cuda.h>

#include <cstdint>

namespace shapescope::kernels::cuda::tma {

__device__ __forceinline__ void init_barrier(uint32_t barrier, uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(barrier), "r"(arrivals) : "memory");
}

// Makes barrier initialisation visible to the copy engine (before the CTA's first sync).
__device__ __forceinline__ void fence_barrier_init() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }

// Spins until the barrier's phase with this parity has completed.
__device__ __forceinline__ void wait_barrier(uint32_t barrier, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred done;\n"
      "WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT;\n}\n" ::"r"(barrier),
      "r"(parity)
      : "memory");
}

__device__ __forceinline__ void arrive(uint32_t barrier) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(barrier) : "memory");
}

// One arrival that also announces how many bytes the copy engine will deliver to this phase.
__device__ __forceinline__ void arrive_expect_bytes(uint32_t barrier, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(barrier), "r"(bytes) : "memory");
}

// A box of a 2-D tensor map at (x = inner coordinate, y = row) into shared memory;
// elements past the tensor's edges arrive as zeros and still count as delivered bytes.
__device__ __forceinline__ void load_tile_2d(uint32_t shared_destination, const CUtensorMap* map, int x, int y,
                                             uint32_t barrier) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          shared_destination),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(barrier)
      : "memory");
}

// A box of shared memory out to a 2-D tensor map at (x, y); parts past the tensor's
// edges are not written. Completion is tracked per thread by bulk groups.
__device__ __forceinline__ void store_tile_2d(const CUtensorMap* map, int x, int y, uint32_t shared_source) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(x), "r"(y), "r"(shared_source)
               : "memory");
}
__device__ __forceinline__ void commit_stores() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// Waits until the committed stores have read their shared memory (it may be reused).
__device__ __forceinline__ void wait_stores_read() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }
// Waits until the committed stores are complete.
__device__ __forceinline__ void wait_stores() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }

__device__ __forceinline__ void prefetch_tensor_map(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// Hands registers from the copy warpgroup to the math warpgroups (sm_90a; needs a
// register cap at kernel entry, i.e. __launch_bounds__(threads, 1)).
template <int kRegisters>
__device__ __forceinline__ void release_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}
template <int kRegisters>
__device__ __forceinline__ void claim_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

// Synchronises the `threads` threads (whole warps) that use named barrier `id` (1..15; 0 is __syncthreads).
__device__ __forceinline__ void sync_named(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Thread-block clusters: another CTA's shared memory (distributed shared memory).

// The address of the same shared-memory location in the cluster's CTA `rank`.
__device__ __forceinline__ uint32_t map_to_rank(uint32_t shared_address, int rank) {
  uint32_t mapped;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(mapped) : "r"(shared_address), "r"(rank));
  return mapped;
}

__device__ __forceinline__ float load_from_cluster(uint32_t cluster_address) {
  float value;
  asm volatile("ld.shared::cluster.f32 %0, [%1];\n" : "=f"(value) : "r"(cluster_address) : "memory");
  return value;
}

// Makes this thread's earlier shared-memory writes (and those it has seen through a CTA
// barrier) visible cluster-wide before what follows.
__device__ __forceinline__ void fence_cluster() { asm volatile("fence.acq_rel.cluster;\n" ::: "memory"); }

// An arrival, with release semantics at cluster scope, on a barrier of another CTA of the cluster.
__device__ __forceinline__ void arrive_in_cluster(uint32_t cluster_barrier_address) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_barrier_address)
               : "memory");
}

// All threads of all CTAs of the cluster, with release/acquire ordering of their memory
// accesses (not .aligned: callable from diverged warps).
__device__ __forceinline__ void sync_cluster() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}

// wait_barrier with acquire semantics at cluster scope (the arrivals came from other CTAs).
__device__ __forceinline__ void wait_barrier_from_cluster(uint32_t barrier, uint32_t parity) {
  asm volatile(
      "{\n.reg .pred done;\n"
      "WAIT:\n"
      "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT;\n}\n" ::"r"(barrier),
      "r"(parity)
      : "memory");
}

}  // namespace shapescope::kernels::cuda::tma
