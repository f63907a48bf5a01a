"""An MXFP4 x bf16 GEMM through Triton's tl.dot_scaled (gpt-oss's path for its MXFP4 experts on Hopper, where
Triton upcasts the e2m1 weights to bf16 in the kernel): `gemm` is a callable over the operands below, and the
file runs stand-alone as a check and a timing beside our a16w4_blockscale (docs/formats.md has the figures):

    python triton_dot_scaled_mxfp4.py [--ms 1,2,4,8,16] [--csv PATH]   # float64 check, then CUDA-graph timing

Through shapescope's Python entry point (examples/python/device_run.sh, step 5), checked and timed as any kernel:

    python -m shapescope.profile --callable triton_dot_scaled_mxfp4:gemm --operand-format mxfp4 \
        --prepare triton_dot_scaled_mxfp4:as_gemm_arguments --model llama3_3_70b_nvfp4 --module all --tp 2

Operands: A [M,K] bf16 row-major; B [N,K/2] uint8, two e2m1 codes a byte (the even K in the low nibble); B scales
[N,ceil(K/32)] uint8 e8m0; C [M,N] bf16. One program computes a BLOCK_M x BLOCK_N tile of C over all of K;
tl.dot_scaled takes B as [BLOCK_K/2, BLOCK_N] (packed along K), read transposed through the pointers."""
import argparse
import math
import sys

import torch
import triton
import triton.language as tl

SCALE_BLOCK = 32


@triton.jit
def _mxfp4_gemm_kernel(a_ptr, b_ptr, b_scale_ptr, c_ptr, M, N, K, scale_cols,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    depth = tl.arange(0, BLOCK_K)
    packed_depth = tl.arange(0, BLOCK_K // 2)
    scale_depth = tl.arange(0, BLOCK_K // 32)
    row_ok = rows < M
    col_ok = cols < N
    accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + depth
        a = tl.load(a_ptr + rows[:, None] * K + ks[None, :], mask=row_ok[:, None] & (ks < K)[None, :], other=0.0)
        packed = k0 // 2 + packed_depth
        b = tl.load(b_ptr + cols[None, :] * (K // 2) + packed[:, None],
                    mask=(packed < K // 2)[:, None] & col_ok[None, :], other=0)
        scale_ks = k0 // 32 + scale_depth
        b_scale = tl.load(b_scale_ptr + cols[:, None] * scale_cols + scale_ks[None, :],
                          mask=col_ok[:, None] & (scale_ks < scale_cols)[None, :], other=127)
        accumulator = tl.dot_scaled(a, None, "bf16", b, b_scale, "e2m1", accumulator)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], accumulator.to(tl.bfloat16),
             mask=row_ok[:, None] & col_ok[None, :])


def gemm(a, b, b_scales, out):
    """C = A x dequant(B)^T; K a multiple of 128 (whole BLOCK_K tiles of packed codes and scales)."""
    m, k = a.shape
    n = b.shape[0]
    block_m = 16 if m <= 16 else 64
    block_n = 64 if m <= 16 else 128
    grid = (triton.cdiv(m, block_m), triton.cdiv(n, block_n))
    _mxfp4_gemm_kernel[grid](a, b, b_scales, out, m, n, k, b_scales.shape[1], BLOCK_M=block_m, BLOCK_N=block_n,
                             BLOCK_K=128, num_warps=4, num_stages=4)


def as_gemm_arguments(a, b, b_scales, out):
    """The entry point's prepare: shapescope hands B as float4_e2m1fn_x2 and its scales as float8_e8m0fnu views;
    the kernel reads them as the bytes they are."""
    return a, b.view(torch.uint8), b_scales.view(torch.uint8), out


E2M1_VALUES = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]


def random_operands(m, n, k, generator):
    """Random bf16 activations, every e2m1 code, e8m0 scales 2^-4 .. 2^-1 (O(1) weights, as an MX quantizer gives)."""
    a = torch.empty(m, k, dtype=torch.float32).uniform_(-1, 1, generator=generator).to(torch.bfloat16)
    codes = torch.randint(0, 16, (n, k), dtype=torch.uint8, generator=generator)
    packed = codes[:, 0::2] | (codes[:, 1::2] << 4)
    scales = torch.randint(123, 127, (n, math.ceil(k / SCALE_BLOCK)), dtype=torch.uint8, generator=generator)
    return a, codes, packed, scales


def reference(a, codes, scales):
    values = torch.tensor(E2M1_VALUES, dtype=torch.float64)[codes.long()]
    scale = torch.pow(2.0, scales.double() - 127).repeat_interleave(SCALE_BLOCK, dim=1)[:, :codes.shape[1]]
    return a.double() @ (values * scale).t()


def graph_time_us(run, replays=20):
    """Median over replays of a CUDA graph of 10 runs, per run."""
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        run()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(10):
            run()
    times = []
    for _ in range(replays):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1000 / 10)
    return sorted(times)[len(times) // 2]


def shapes():
    for tp in (1, 2, 4):
        yield f"llama70b.qkv.tp{tp}", 10240 // tp, 8192
        yield f"llama70b.o.tp{tp}", 8192, 8192 // tp
        yield f"llama70b.gate_up.tp{tp}", 57344 // tp, 8192
        yield f"llama70b.down.tp{tp}", 8192, 28672 // tp
    yield "gpt_oss_120b.qkv", 5120, 2880
    yield "gpt_oss_120b.o", 2880, 4096


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ms", default="1,2,4,8,16")
    parser.add_argument("--csv")
    args = parser.parse_args(argv)
    generator = torch.Generator().manual_seed(7)
    worst = 0.0
    for m, n, k in [(1, 64, 128), (5, 200, 384), (16, 256, 2944), (33, 96, 256)]:
        a, codes, packed, scales = random_operands(m, n, k, generator)
        out = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
        gemm(a.cuda(), packed.cuda(), scales.cuda(), out)
        expected = reference(a, codes, scales)
        error = ((out.cpu().double() - expected).norm() / expected.norm()).item()
        worst = max(worst, error)
        print(f"check M={m} N={n} K={k}: rel_err {error:.3e}")
        if not error <= 5e-3:
            print("FAIL: the Triton MXFP4 GEMM does not match the float64 reference", file=sys.stderr)
            return 1
    props = torch.cuda.get_device_properties(0)
    print(f"{props.name}; torch {torch.__version__}, triton {triton.__version__}; worst rel_err {worst:.3e}")
    rows = ["shape,m,n,k,triton_us,torch_bf16_us,bytes"]
    print(f"{'shape':<22} {'M':>4} {'triton us':>10} {'bf16 us':>9} {'x bf16':>7}")
    for label, n, k in shapes():
        _, _, packed, scales = random_operands(1, n, k, generator)
        packed, scales = packed.cuda(), scales.cuda()
        weights = torch.empty(n, k, dtype=torch.bfloat16, device="cuda").uniform_(-1, 1)
        for m in [int(x) for x in args.ms.split(",")]:
            a = torch.empty(m, k, dtype=torch.bfloat16, device="cuda").uniform_(-1, 1)
            out = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
            ours = graph_time_us(lambda: gemm(a, packed, scales, out))
            bf16 = graph_time_us(lambda: torch.matmul(a, weights.t(), out=out))
            moved = n * k // 2 + scales.numel() + 2 * m * (k + n)
            print(f"{label:<22} {m:>4} {ours:>10.2f} {bf16:>9.2f} {bf16 / ours:>7.2f}")
            rows.append(f"{label},{m},{n},{k},{ours:.3f},{bf16:.3f},{moved}")
        del weights
    if args.csv:
        with open(args.csv, "w") as file:
            file.write("\n".join(rows) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
