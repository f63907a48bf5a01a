"""A Triton block-scaled FP8 GEMM written for this example (DeepSeek-V3 scales: A 1x128 per row and K block, B
128x128), profiled by shapescope as a callable:

    python -m shapescope.profile --callable triton_fp8_blockscale:gemm --formats fp8_blockscale \
        --model deepseek_v3 --module gate_up_proj --tp 8 --m-list 16,256,4096 --timing kernel

Operands as shapescope hands them: A [M,K] e4m3 row-major, A scales [M,K/128] row-major, B [N,K] e4m3 (K-major),
B scales [N/128,K/128], C [M,N] bf16. One program computes a BLOCK_M x 128 tile of C; per 128-wide K block it
multiplies the e4m3 tiles on the tensor cores into an fp32 partial product and promotes it into the accumulator
with a_scale[row] * b_scale, so BLOCK_N = BLOCK_K = 128 (one B scale per tile and K block)."""
import torch
import triton
import triton.language as tl

BLOCK_N = 128
BLOCK_K = 128


@triton.jit
def _fp8_blockscale_kernel(a_ptr, a_scale_ptr, b_ptr, b_scale_ptr, c_ptr, M, N, K, k_blocks,
                           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    depth = tl.arange(0, BLOCK_K)
    row_ok = rows < M
    col_ok = cols < N
    accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kb in range(0, k_blocks):
        ks = kb * BLOCK_K + depth
        k_ok = ks < K
        a = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=row_ok[:, None] & k_ok[None, :], other=0.0)
        # B is [N,K]: the [BLOCK_K, BLOCK_N] tile tl.dot wants is read transposed through the pointers.
        b = tl.load(b_ptr + cols[None, :] * K + ks[:, None], mask=k_ok[:, None] & col_ok[None, :], other=0.0)
        partial = tl.dot(a, b)
        a_scale = tl.load(a_scale_ptr + rows * k_blocks + kb, mask=row_ok, other=0.0)
        b_scale = tl.load(b_scale_ptr + pid_n * k_blocks + kb)
        accumulator += partial * (a_scale[:, None] * b_scale)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], accumulator.to(tl.bfloat16),
             mask=row_ok[:, None] & col_ok[None, :])


def gemm(a, a_scales, b, b_scales, out):
    m, k = a.shape
    n = b.shape[0]
    block_m = 64 if m <= 64 else 128
    grid = (triton.cdiv(m, block_m), triton.cdiv(n, BLOCK_N))
    _fp8_blockscale_kernel[grid](a, a_scales, b, b_scales, out, m, n, k, triton.cdiv(k, BLOCK_K),
                                 BLOCK_M=block_m, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, num_warps=4 if m <= 64 else 8,
                                 num_stages=3)
