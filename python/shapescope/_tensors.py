"""shapescope's operand buffers as the callable's tensors: torch tensors over the same memory (CUDA through
__cuda_array_interface__, CPU through the buffer protocol), or HostTensor views when torch is not importable."""
import ctypes
import math
import struct

from . import _abi


class HostTensor:
    """A strided view of host memory shapescope owns, for callables without torch.

    data: a flat memoryview of the whole buffer ('H' bf16 bits, 'B' e4m3 codes, 'f' float32 scales);
    element (i, j, ...) is data[offset(i, j, ...)]. dtype: "bf16", "e4m3" or "float32"."""

    def __init__(self, address, dtype, shape, strides):
        self.dtype, self.shape, self.strides = dtype, tuple(shape), tuple(strides)
        count = 1 + sum((extent - 1) * stride for extent, stride in zip(shape, strides)) if all(shape) else 0
        element = {"bf16": ctypes.c_uint16, "e4m3": ctypes.c_uint8, "float32": ctypes.c_float}[dtype]
        self.address = address
        self.data = memoryview((element * count).from_address(address)).cast("B").cast(
            {"bf16": "H", "e4m3": "B", "float32": "f"}[dtype])

    def offset(self, *index):
        return sum(i * stride for i, stride in zip(index, self.strides))

    def __repr__(self):
        return f"HostTensor({self.dtype}, shape={self.shape}, strides={self.strides})"


def bf16_to_float(bits):
    return struct.unpack("<f", struct.pack("<I", (bits & 0xFFFF) << 16))[0]


def float_to_bf16(value):
    """Round to nearest even, as shapescope's reference and the GPU do."""
    if math.isnan(value):
        return 0x7FC0
    word = struct.unpack("<I", struct.pack("<f", value))[0]
    return ((word + 0x7FFF + ((word >> 16) & 1)) >> 16) & 0xFFFF


def e4m3_to_float(code):
    sign, exponent, mantissa = code >> 7, (code >> 3) & 0xF, code & 0x7
    if exponent == 0xF and mantissa == 0x7:
        return math.nan
    magnitude = math.ldexp(mantissa, -9) if exponent == 0 else math.ldexp(8 + mantissa, exponent - 10)
    return -magnitude if sign else magnitude


class Layout:
    """Shapes and element strides of one point's operands, in the callable's argument order."""

    def __init__(self, shape, fmt, flags):
        m, n, k, batch = shape.m, shape.n, shape.k, shape.batch_count
        kb, nb = -(-k // 128), -(-n // 128)
        batched = batch > 1

        def with_batch(dims, strides, per_batch):
            return ((batch,) + dims, (per_batch,) + strides) if batched else (dims, strides)

        a_dtype = "e4m3" if fmt == "fp8_blockscale" else "bf16"
        b_dtype = "bf16" if fmt == "bf16" else "e4m3"
        self.items = [("a", a_dtype) + with_batch((m, k), (k, 1), m * k)]
        if fmt == "fp8_blockscale":
            strides = (1, m) if flags & _abi.A_SCALES_M_MAJOR else (kb, 1)
            self.items.append(("a_scales", "float32") + with_batch((m, kb), strides, m * kb))
        self.items.append(("b", b_dtype) + with_batch((n, k), (k, 1), n * k))
        if fmt != "bf16":
            row = (kb + 3) // 4 * 4 if flags & _abi.B_SCALES_K_PADDED_4 else kb
            self.items.append(("b_scales", "float32") + with_batch((nb, kb), (row, 1), nb * row))
        self.items.append(("c", "bf16") + with_batch((m, n), (n, 1), m * n))


def host_tensors(operands, layout):
    return [HostTensor(getattr(operands, name), dtype, dims, strides) for name, dtype, dims, strides in layout.items]


_TORCH_DTYPES = {"bf16": ("bfloat16", "<i2", 2), "e4m3": ("float8_e4m3fn", "|u1", 1), "float32": ("float32", "<f4", 4)}


class _CudaArray:
    def __init__(self, address, typestr, dims, strides, size):
        self.__cuda_array_interface__ = {"data": (address, False), "shape": tuple(dims), "typestr": typestr,
                                         "strides": tuple(s * size for s in strides), "version": 3, "stream": None}


def torch_tensors(torch, operands, layout, on_cuda):
    tensors = []
    for name, dtype, dims, strides in layout.items:
        torch_name, typestr, size = _TORCH_DTYPES[dtype]
        address = getattr(operands, name)
        if on_cuda:
            raw = torch.as_tensor(_CudaArray(address, typestr, dims, strides, size), device="cuda")
        else:
            count = 1 + sum((e - 1) * s for e, s in zip(dims, strides))
            flat = torch.frombuffer((ctypes.c_uint8 * (count * size)).from_address(address), dtype=torch.uint8)
            raw = flat.view({"<i2": torch.int16, "|u1": torch.uint8, "<f4": torch.float32}[typestr])
            raw = raw.as_strided(tuple(dims), tuple(strides))
        tensors.append(raw.view(getattr(torch, torch_name)))
    return tensors
