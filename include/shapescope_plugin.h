/* shapescope plugin ABI, version 1: a shared library declares GEMM kernels that
 * `profile --plugin lib.so --kernel NAME` sweeps like its own. shapescope generates
 * the operands (synthetic, defined by seed and index), checks every point against
 * its float64 reference and times the kernel's run() in every timing mode.
 *
 * The library exports one C function, SHAPESCOPE_PLUGIN_ENTRY_SYMBOL, returning a
 * pointer to a static shapescope_plugin whose abi_version must equal
 * SHAPESCOPE_PLUGIN_ABI_VERSION (a mismatch is refused at load). Documented in
 * docs/plugin_abi.md. Plain C, no shapescope header or library needed to build a plugin.
 */
#ifndef SHAPESCOPE_PLUGIN_H
#define SHAPESCOPE_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SHAPESCOPE_PLUGIN_ABI_VERSION 1u
#define SHAPESCOPE_PLUGIN_ENTRY_SYMBOL "shapescope_plugin_entry"

/* Operand formats: the ones shapescope generates and checks. Every C is bf16 [batch][m][n] row-major. */
typedef enum shapescope_format {
  /* A bf16 [batch][m][k], B bf16 [batch][n][k] (K-major: C = A * B^T). Scales are NULL. */
  SHAPESCOPE_FORMAT_BF16 = 1,
  /* A e4m3 [batch][m][k] with f32 1x128 scales, B e4m3 [batch][n][k] with f32 128x128 scales (DeepSeek-V3). */
  SHAPESCOPE_FORMAT_FP8_BLOCKSCALE = 2,
  /* A bf16 [batch][m][k], B e4m3 [batch][n][k] with f32 128x128 scales; a_scales is NULL. */
  SHAPESCOPE_FORMAT_A16W8_BLOCKSCALE = 3
} shapescope_format;

typedef enum shapescope_backend {
  SHAPESCOPE_BACKEND_CPU = 0,  /* host pointers, stream NULL, run() returns when C is written */
  SHAPESCOPE_BACKEND_CUDA = 1  /* device pointers, run() enqueues on `stream` (a cudaStream_t) and returns */
} shapescope_backend;

/* Scale layouts. Default: A scales [batch][m][ceil(k/128)], B scales [batch][ceil(n/128)][ceil(k/128)],
 * both contiguous. Flags (shapescope_kernel.flags) ask for another layout: */
/* A scales [batch][ceil(k/128)][m]: M-major, as cuBLASLt's VEC128_32F and torch._scaled_mm want them. */
#define SHAPESCOPE_A_SCALES_M_MAJOR 0x1u
/* B scale rows padded to a multiple of 4 K blocks ([batch][ceil(n/128)][round_up(ceil(k/128), 4)]), as cuBLASLt's
 * BLK128x128_32F wants them; padding floats are 0. */
#define SHAPESCOPE_B_SCALES_K_PADDED_4 0x2u

typedef struct shapescope_shape {
  int64_t m, n, k, batch_count; /* C[b] (m x n) = A[b] (m x k) * B[b] (n x k)^T, b < batch_count */
} shapescope_shape;

typedef struct shapescope_operands {
  shapescope_shape shape;
  const void* a;          /* e4m3 codes (1 byte) or bf16 bits (2 bytes) */
  const float* a_scales;  /* FP8_BLOCKSCALE only, else NULL */
  const void* b;          /* e4m3 codes or bf16 bits */
  const float* b_scales;  /* FP8_BLOCKSCALE and A16W8_BLOCKSCALE, else NULL */
  void* c;                /* bf16 output; holds 0xFFFF (poison) before a checked run */
  void* stream;           /* cudaStream_t on the CUDA backend (read it every run: it may change), NULL on the CPU */
} shapescope_operands;

/* Every function returns 0 on success; any other value is a failure whose one-line reason the plugin may write
 * into error[0..error_size) (NUL-terminated). A failed prepare records the point as `error` with that reason and
 * the sweep goes on; a failed run() does the same. */
typedef struct shapescope_kernel {
  const char* name;        /* registry name: [A-Za-z0-9_.+-], not one of shapescope's own kernels */
  const char* description; /* one line for --list-kernels */
  int32_t format;          /* shapescope_format */
  int32_t backend;         /* shapescope_backend */
  uint32_t flags;          /* SHAPESCOPE_*_SCALES_* */
  /* Once per (M, operand set), untimed. The operands are filled and stay valid until release(); prepare may read
   * them (to pre-shuffle weights, build descriptors) and must leave A, B and their scales unchanged. On success
   * *handle is what run() and release() get. */
  int (*prepare)(const shapescope_operands* operands, void** handle, char* error, size_t error_size);
  /* Timed: one GEMM. On CUDA only enqueue work on operands->stream (no synchronization, no allocation: the run
   * may be captured into a CUDA graph). */
  int (*run)(void* handle, const shapescope_operands* operands, char* error, size_t error_size);
  /* Frees what prepare made. May be NULL. */
  void (*release)(void* handle);
  /* What ran, for the CSV's kernel_name column ("my_gemm tile 128x128"). May be NULL (the name is used). */
  const char* (*launch_name)(void* handle);
} shapescope_kernel;

typedef struct shapescope_plugin {
  uint32_t abi_version; /* SHAPESCOPE_PLUGIN_ABI_VERSION */
  uint32_t kernel_count;
  const shapescope_kernel* kernels;
} shapescope_plugin;

/* The one symbol a plugin exports: `const shapescope_plugin* shapescope_plugin_entry(void)`. */
typedef const shapescope_plugin* (*shapescope_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* SHAPESCOPE_PLUGIN_H */
