"""torch.matmul on bf16 (the study's baseline) as a shapescope callable: out = a @ b.T, written into shapescope's
output so no copy is timed.

    python -m shapescope.profile --callable torch_matmul_bf16:matmul --model llama3_8b --module gate_up_proj --tp 2 \
        --m-list 1,16,256,4096 --timing graph"""
import torch


def matmul(a, b, out):
    torch.matmul(a, b.t(), out=out)
