/* Plugins that fail on purpose, for the tests: every failure must become a row with a
 * status and a note while the sweep goes on. bf16 on the CPU backend. */
#include <stdio.h>
#include <string.h>

#include "shapescope_plugin.h"

static int prepare_ok(const shapescope_operands* operands, void** handle, char* error, size_t error_size) {
  (void)operands, (void)error, (void)error_size;
  *handle = NULL;
  return 0;
}

static int prepare_refuses(const shapescope_operands* operands, void** handle, char* error, size_t error_size) {
  (void)handle;
  snprintf(error, error_size, "no tile for M=%lld", (long long)operands->shape.m);
  return 7;
}

/* Crashes (a write through a null pointer) at M = 3 only. */
static int prepare_crashes_at_3(const shapescope_operands* operands, void** handle, char* error, size_t error_size) {
  if (operands->shape.m == 3) {
    volatile int* nowhere = NULL;
    *nowhere = 1;
  }
  return prepare_ok(operands, handle, error, error_size);
}

/* Writes C as zeros: the right size, the wrong numbers. */
static int run_zeros(void* handle, const shapescope_operands* op, char* error, size_t error_size) {
  (void)handle, (void)error, (void)error_size;
  memset(op->c, 0, (size_t)(op->shape.batch_count * op->shape.m * op->shape.n) * 2u);
  return 0;
}

static int run_fails(void* handle, const shapescope_operands* op, char* error, size_t error_size) {
  (void)handle, (void)op;
  snprintf(error, error_size, "device lost");
  return 3;
}

static int run_writes_nothing(void* handle, const shapescope_operands* op, char* error, size_t error_size) {
  (void)handle, (void)op, (void)error, (void)error_size;
  return 0;
}

static const shapescope_kernel kKernels[] = {
    {"failing_prepare", "prepare returns an error", SHAPESCOPE_FORMAT_BF16, SHAPESCOPE_BACKEND_CPU, 0,
     prepare_refuses, run_zeros, NULL, NULL},
    {"failing_run", "run returns an error", SHAPESCOPE_FORMAT_BF16, SHAPESCOPE_BACKEND_CPU, 0, prepare_ok, run_fails,
     NULL, NULL},
    {"failing_writes_nothing", "run leaves C untouched", SHAPESCOPE_FORMAT_BF16, SHAPESCOPE_BACKEND_CPU, 0, prepare_ok,
     run_writes_nothing, NULL, NULL},
    {"failing_wrong_numbers", "run writes zeros", SHAPESCOPE_FORMAT_BF16, SHAPESCOPE_BACKEND_CPU, 0, prepare_ok,
     run_zeros, NULL, NULL},
    {"failing_crash_in_prepare", "prepare crashes at M=3", SHAPESCOPE_FORMAT_BF16, SHAPESCOPE_BACKEND_CPU, 0,
     prepare_crashes_at_3, run_zeros, NULL, NULL},
};

static const shapescope_plugin kPlugin = {SHAPESCOPE_PLUGIN_ABI_VERSION, sizeof kKernels / sizeof kKernels[0],
                                          kKernels};

const shapescope_plugin* shapescope_plugin_entry(void) { return &kPlugin; }
