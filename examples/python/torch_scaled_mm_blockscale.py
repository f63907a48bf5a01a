"""torch._scaled_mm with DeepSeek-V3 block scaling (A e4m3 with 1x128 scales, B e4m3 with 128x128 scales), as a
shapescope callable:

    python -m shapescope.profile --callable torch_scaled_mm_blockscale:scaled_mm \
        --prepare torch_scaled_mm_blockscale:as_scaled_mm_arguments --formats fp8_blockscale --a-scales m_major \
        --model deepseek_v3 --module down_proj --tp 8 --m-list 16,256,4096 --timing kernel

shapescope hands A [M,K], its scales M-major [M,K/128] (stride (1, M): what _scaled_mm wants for 1x128), B [N,K]
and its scales [N/128,K/128]; prepare (untimed, once per M) turns them into _scaled_mm's arguments as views."""
import torch


def as_scaled_mm_arguments(a, a_scales, b, b_scales, out):
    # _scaled_mm multiplies A [M,K] by a column-major [K,N]: B [N,K] transposed is exactly that, a view.
    return a, b.t(), a_scales, b_scales.t(), out


def scaled_mm(a, b_kn, scale_a, scale_b, out):
    torch._scaled_mm(a, b_kn, scale_a, scale_b, out_dtype=torch.bfloat16, out=out)
