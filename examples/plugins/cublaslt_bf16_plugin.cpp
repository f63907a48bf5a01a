// An example shapescope plugin for the CUDA backend: a cuBLASLt bf16 GEMM (heuristic algorithm) declared through
// the C ABI, so it can be profiled beside the built-in cublaslt_bf16 (same library call, other code path).
// Row-major C[M,N] = A[M,K] * B[N,K]^T is column-major C^T = B * A^T: B is cuBLASLt's transposed A, A its B.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <new>

#include "shapescope_plugin.h"

namespace {

struct Gemm {
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t weights = nullptr, activations = nullptr, output = nullptr;
  cublasLtMatmulHeuristicResult_t algorithm{};
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  char name[96] = {};
};

constexpr size_t kMaxWorkspace = 32u << 20;

void destroy(Gemm* gemm) {
  if (!gemm) return;
  if (gemm->workspace) cudaFree(gemm->workspace);
  if (gemm->weights) cublasLtMatrixLayoutDestroy(gemm->weights);
  if (gemm->activations) cublasLtMatrixLayoutDestroy(gemm->activations);
  if (gemm->output) cublasLtMatrixLayoutDestroy(gemm->output);
  if (gemm->desc) cublasLtMatmulDescDestroy(gemm->desc);
  if (gemm->handle) cublasLtDestroy(gemm->handle);
  delete gemm;
}

cublasLtMatrixLayout_t layout(uint64_t rows, uint64_t cols, int64_t ld, int64_t batch, int64_t stride) {
  cublasLtMatrixLayout_t result = nullptr;
  if (cublasLtMatrixLayoutCreate(&result, CUDA_R_16BF, rows, cols, ld) != CUBLAS_STATUS_SUCCESS) return nullptr;
  const int32_t count = int32_t(batch);
  cublasLtMatrixLayoutSetAttribute(result, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count);
  cublasLtMatrixLayoutSetAttribute(result, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride);
  return result;
}

int prepare(const shapescope_operands* op, void** handle, char* error, size_t error_size) {
  const shapescope_shape s = op->shape;
  Gemm* gemm = new (std::nothrow) Gemm;
  if (!gemm) return std::snprintf(error, error_size, "out of host memory"), 1;
  const cublasOperation_t transposed = CUBLAS_OP_T, plain = CUBLAS_OP_N;
  bool ok = cublasLtCreate(&gemm->handle) == CUBLAS_STATUS_SUCCESS &&
            cublasLtMatmulDescCreate(&gemm->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) == CUBLAS_STATUS_SUCCESS;
  if (ok) {
    cublasLtMatmulDescSetAttribute(gemm->desc, CUBLASLT_MATMUL_DESC_TRANSA, &transposed, sizeof transposed);
    cublasLtMatmulDescSetAttribute(gemm->desc, CUBLASLT_MATMUL_DESC_TRANSB, &plain, sizeof plain);
    gemm->weights = layout(uint64_t(s.k), uint64_t(s.n), s.k, s.batch_count, s.n * s.k);
    gemm->activations = layout(uint64_t(s.k), uint64_t(s.m), s.k, s.batch_count, s.m * s.k);
    gemm->output = layout(uint64_t(s.n), uint64_t(s.m), s.n, s.batch_count, s.m * s.n);
    ok = gemm->weights && gemm->activations && gemm->output;
  }
  if (!ok) {
    destroy(gemm);
    return std::snprintf(error, error_size, "cuBLASLt descriptor creation failed"), 2;
  }
  cublasLtMatmulPreference_t preference = nullptr;
  cublasLtMatmulPreferenceCreate(&preference);
  cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &kMaxWorkspace,
                                       sizeof kMaxWorkspace);
  int found = 0;
  const cublasStatus_t status =
      cublasLtMatmulAlgoGetHeuristic(gemm->handle, gemm->desc, gemm->weights, gemm->activations, gemm->output,
                                     gemm->output, preference, 1, &gemm->algorithm, &found);
  cublasLtMatmulPreferenceDestroy(preference);
  if (status != CUBLAS_STATUS_SUCCESS || found == 0) {
    destroy(gemm);
    return std::snprintf(error, error_size, "cuBLASLt has no algorithm for M=%lld (status %d)", (long long)s.m,
                         int(status)),
           3;
  }
  gemm->workspace_bytes = gemm->algorithm.workspaceSize;
  if (gemm->workspace_bytes && cudaMalloc(&gemm->workspace, gemm->workspace_bytes) != cudaSuccess) {
    destroy(gemm);
    return std::snprintf(error, error_size, "cudaMalloc of %zu workspace bytes failed", gemm->workspace_bytes), 4;
  }
  std::snprintf(gemm->name, sizeof gemm->name, "plugin cuBLASLt bf16 (workspace %zu B)", gemm->workspace_bytes);
  *handle = gemm;
  return 0;
}

int run(void* handle, const shapescope_operands* op, char* error, size_t error_size) {
  Gemm* gemm = static_cast<Gemm*>(handle);
  const float one = 1.0f, zero = 0.0f;
  const cublasStatus_t status =
      cublasLtMatmul(gemm->handle, gemm->desc, &one, op->b, gemm->weights, op->a, gemm->activations, &zero, op->c,
                     gemm->output, op->c, gemm->output, &gemm->algorithm.algo, gemm->workspace, gemm->workspace_bytes,
                     static_cast<cudaStream_t>(op->stream));
  if (status != CUBLAS_STATUS_SUCCESS) return std::snprintf(error, error_size, "cublasLtMatmul: status %d", int(status)), 1;
  return 0;
}

void release(void* handle) { destroy(static_cast<Gemm*>(handle)); }

const char* launch_name(void* handle) { return static_cast<Gemm*>(handle)->name; }

const shapescope_kernel kKernels[] = {
    {"example_cublaslt_bf16", "cuBLASLt bf16 GEMM through the plugin ABI (an example)", SHAPESCOPE_FORMAT_BF16,
     SHAPESCOPE_BACKEND_CUDA, 0, prepare, run, release, launch_name},
};

const shapescope_plugin kPlugin = {SHAPESCOPE_PLUGIN_ABI_VERSION, 1, kKernels};

}  // namespace

extern "C" const shapescope_plugin* shapescope_plugin_entry(void) { return &kPlugin; }
