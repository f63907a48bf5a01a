/* An example shapescope plugin in plain C for the CPU backend: a bf16 GEMM and a
 * DeepSeek-style block-scaled FP8 GEMM, written for clarity, not speed. The FP8 kernel
 * asks for the layouts cuBLASLt uses (M-major 1x128 scales, 128x128 scale rows padded
 * to 4 K blocks) to show the layout flags. Build: cc -O2 -shared -fPIC -I include ...
 * Profile: profile --plugin libcpu_example_plugin.so --kernel example_cpu_bf16 --backend cpu ... */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shapescope_plugin.h"

static float bf16_to_float(uint16_t bits) {
  const uint32_t word = (uint32_t)bits << 16;
  float value;
  memcpy(&value, &word, sizeof value);
  return value;
}

static uint16_t float_to_bf16(float value) { /* round to nearest even */
  uint32_t word;
  memcpy(&word, &value, sizeof word);
  if (isnan(value)) return 0x7FC0;
  word += 0x7FFFu + ((word >> 16) & 1u);
  return (uint16_t)(word >> 16);
}

static float e4m3_to_float(uint8_t code) { /* OCP e4m3fn: bias 7, no infinities, 0x7F/0xFF are NaN */
  const int sign = code >> 7, exponent = (code >> 3) & 0xF, mantissa = code & 0x7;
  float magnitude;
  if (exponent == 0xF && mantissa == 0x7) return NAN;
  magnitude = exponent == 0 ? ldexpf((float)mantissa / 8.0f, -6) : ldexpf(1.0f + (float)mantissa / 8.0f, exponent - 7);
  return sign ? -magnitude : magnitude;
}

/* Nothing to prepare: the handle stays NULL. */
static int prepare_nothing(const shapescope_operands* operands, void** handle, char* error, size_t error_size) {
  (void)operands;
  (void)error;
  (void)error_size;
  *handle = NULL;
  return 0;
}

static int run_bf16(void* handle, const shapescope_operands* op, char* error, size_t error_size) {
  const uint16_t* a = (const uint16_t*)op->a;
  const uint16_t* b = (const uint16_t*)op->b;
  uint16_t* c = (uint16_t*)op->c;
  const int64_t m = op->shape.m, n = op->shape.n, k = op->shape.k;
  (void)handle;
  (void)error;
  (void)error_size;
  for (int64_t batch = 0; batch < op->shape.batch_count; ++batch) {
    const uint16_t* ab = a + batch * m * k;
    const uint16_t* bb = b + batch * n * k;
    for (int64_t row = 0; row < m; ++row) {
      for (int64_t col = 0; col < n; ++col) {
        float sum = 0.0f;
        for (int64_t i = 0; i < k; ++i) sum += bf16_to_float(ab[row * k + i]) * bf16_to_float(bb[col * k + i]);
        c[(batch * m + row) * n + col] = float_to_bf16(sum);
      }
    }
  }
  return 0;
}

static int64_t blocks(int64_t extent) { return (extent + 127) / 128; }

/* Per 128-wide K block: an fp32 partial sum of code products, promoted with sa * sb (as the GPU kernels do). */
static int run_fp8_blockscale(void* handle, const shapescope_operands* op, char* error, size_t error_size) {
  const uint8_t* a = (const uint8_t*)op->a;
  const uint8_t* b = (const uint8_t*)op->b;
  uint16_t* c = (uint16_t*)op->c;
  const int64_t m = op->shape.m, n = op->shape.n, k = op->shape.k, kb = blocks(k);
  const int64_t b_row = (kb + 3) / 4 * 4; /* SHAPESCOPE_B_SCALES_K_PADDED_4 */
  float table[256];
  int code;
  (void)handle;
  if (op->shape.batch_count != 1) {
    snprintf(error, error_size, "batch_count %lld: this example runs one GEMM", (long long)op->shape.batch_count);
    return 1;
  }
  for (code = 0; code < 256; ++code) table[code] = e4m3_to_float((uint8_t)code);
  for (int64_t row = 0; row < m; ++row) {
    for (int64_t col = 0; col < n; ++col) {
      float accumulator = 0.0f;
      for (int64_t block = 0; block < kb; ++block) {
        const int64_t end = (block + 1) * 128 < k ? (block + 1) * 128 : k;
        float partial = 0.0f;
        for (int64_t i = block * 128; i < end; ++i) partial += table[a[row * k + i]] * table[b[col * k + i]];
        /* SHAPESCOPE_A_SCALES_M_MAJOR: scale (row, block) at block * m + row */
        accumulator += partial * op->a_scales[block * m + row] * op->b_scales[(col / 128) * b_row + block];
      }
      c[row * n + col] = float_to_bf16(accumulator);
    }
  }
  return 0;
}

static const shapescope_kernel kKernels[] = {
    {"example_cpu_bf16", "plain C bf16 GEMM, fp32 accumulation (an example plugin)", SHAPESCOPE_FORMAT_BF16,
     SHAPESCOPE_BACKEND_CPU, 0, prepare_nothing, run_bf16, NULL, NULL},
    {"example_cpu_fp8_blockscale", "plain C e4m3 GEMM with 1x128/128x128 scales in cuBLASLt's layouts (an example)",
     SHAPESCOPE_FORMAT_FP8_BLOCKSCALE, SHAPESCOPE_BACKEND_CPU,
     SHAPESCOPE_A_SCALES_M_MAJOR | SHAPESCOPE_B_SCALES_K_PADDED_4, prepare_nothing, run_fp8_blockscale, NULL, NULL},
};

static const shapescope_plugin kPlugin = {SHAPESCOPE_PLUGIN_ABI_VERSION, sizeof kKernels / sizeof kKernels[0],
                                          kKernels};

const shapescope_plugin* shapescope_plugin_entry(void) { return &kPlugin; }
