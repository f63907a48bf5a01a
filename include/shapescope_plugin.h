/* shapescope plugin ABI, version 2: a shared library declares GEMM kernels that
 * `profile --plugin lib.so --kernel NAME` sweeps like its own. shapescope generates
 * the operands (synthetic, defined by seed and index), checks every point against
 * its float64 reference and times the kernel's run() in every timing mode.
 *
 * The library exports one C function, SHAPESCOPE_PLUGIN_ENTRY_SYMBOL, returning a
 * pointer to a static shapescope_plugin whose abi_version is SHAPESCOPE_PLUGIN_ABI_VERSION
 * or an older version still spoken (SHAPESCOPE_PLUGIN_ABI_OLDEST_VERSION; any other is
 * refused at load). Version 2 adds the MX and FP4 formats and their one-byte scales at the
 * end of shapescope_operands, so a version 1 plugin reads the same struct as before.
 * Documented in docs/plugin_abi.md. Plain C, no shapescope header or library needed
 * to build a plugin.
 */
#ifndef SHAPESCOPE_PLUGIN_H
#define SHAPESCOPE_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SHAPESCOPE_PLUGIN_ABI_VERSION 2u
#define SHAPESCOPE_PLUGIN_ABI_OLDEST_VERSION 1u
#define SHAPESCOPE_PLUGIN_ENTRY_SYMBOL "shapescope_plugin_entry"

/* Operand formats: the ones shapescope generates and checks. Every C is bf16 [batch][m][n] row-major. */
typedef enum shapescope_format {
  /* A bf16 [batch][m][k], B bf16 [batch][n][k] (K-major: C = A * B^T). Scales are NULL. */
  SHAPESCOPE_FORMAT_BF16 = 1,
  /* A e4m3 [batch][m][k] with f32 1x128 scales, B e4m3 [batch][n][k] with f32 128x128 scales (DeepSeek-V3). */
  SHAPESCOPE_FORMAT_FP8_BLOCKSCALE = 2,
  /* A bf16 [batch][m][k], B e4m3 [batch][n][k] with f32 128x128 scales; a_scales is NULL. */
  SHAPESCOPE_FORMAT_A16W8_BLOCKSCALE = 3,
  /* Version 2 (a version 1 table may not name them). Elements: bf16 two bytes, e4m3 one byte, e2m1 two per byte
   * ([batch][rows][ceil(k/2)], the even K element in the low nibble). Block scales are one-byte codes, one per
   * 1 x block elements along K, [batch][rows][ceil(k/block)], in a_scale_codes / b_scale_codes: e8m0 is
   * 2^(code - 127), ue4m3 an e4m3 code with the sign clear. An element's value is its code's value times its
   * block scale times the operand's per-tensor scale where the format has one (a_/b_tensor_scales, [batch]). */
  SHAPESCOPE_FORMAT_MXFP8 = 4,               /* A and B e4m3, e8m0 scales per 1x32 (OCP MX v1.0) */
  SHAPESCOPE_FORMAT_A16W4_MXFP4 = 5,         /* A bf16; B e2m1, e8m0 scales per 1x32 (gpt-oss experts) */
  SHAPESCOPE_FORMAT_A16W4_NVFP4 = 6,         /* A bf16; B e2m1, ue4m3 scales per 1x16, fp32 per-tensor scale */
  SHAPESCOPE_FORMAT_A16W4_E2M1_E8M0_16 = 7,  /* A bf16; B e2m1, e8m0 scales per 1x16 */
  SHAPESCOPE_FORMAT_NVFP4 = 8                /* A and B as A16W4_NVFP4's B: Blackwell's native FP4 GEMM */
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
  /* Version 2: the one-byte block scale codes and per-tensor scales of formats 4 to 8, NULL where the format has
   * none (and always for formats 1 to 3, whose f32 scales are a_scales and b_scales). */
  const uint8_t* a_scale_codes;
  const uint8_t* b_scale_codes;
  const float* a_tensor_scales;
  const float* b_tensor_scales;
} shapescope_operands;

/* Every function returns 0 on success; any other value is a failure whose one-line reason the plugin may write
 * into error[0..error_size) (NUL-terminated). A failed prepare records the point as `error` with that reason and
 * the sweep goes on; a failed run() does the same. */
typedef struct shapescope_kernel {
  const char* name;        /* registry name: [A-Za-z0-9_.+-], not one of shapescope's own kernels */
  const char* description; /* one line for --list-kernels */
  int32_t format;          /* shapescope_format */
  int32_t backend;         /* shapescope_backend */
  uint32_t flags;          /* SHAPESCOPE_*_SCALES_*: the f32 scales of formats 1 to 3 */
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
  uint32_t abi_version; /* SHAPESCOPE_PLUGIN_ABI_VERSION (or an older version the table was written for) */
  uint32_t kernel_count;
  const shapescope_kernel* kernels;
} shapescope_plugin;

/* The one symbol a plugin exports: `const shapescope_plugin* shapescope_plugin_entry(void)`. */
typedef const shapescope_plugin* (*shapescope_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* SHAPESCOPE_PLUGIN_H */
