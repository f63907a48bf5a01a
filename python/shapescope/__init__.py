"""shapescope's Python entry point: profile a Python callable with shapescope's operands, checks and timing.

    import shapescope
    shapescope.profile(fn, model="llama3_8b", module="gate_up_proj", tp=2, m=[1, 16, 256], operand_format="bf16")

Pure Python over libshapescope_c.so (ctypes): nothing is compiled against this Python. Install with
`pip install --no-build-isolation ./python`; see docs/plugins_and_python.md.
"""
from ._core import (ProfileError, bf16_to_float, e2m1_to_float, e4m3_to_float, e8m0_to_float, float_to_bf16, profile,
                    HostTensor)

__all__ = ["profile", "ProfileError", "HostTensor", "bf16_to_float", "float_to_bf16", "e4m3_to_float",
           "e2m1_to_float", "e8m0_to_float"]
