"""shapescope's operand buffers as the callable's tensors: torch tensors over the same memory (CUDA through
__cuda_array_interface__, CPU through the buffer protocol), or HostTensor views when torch is not importable."""
import ctypes
import math
import struct

from . import _abi


class HostTensor:
    """A strided view of host memory shapescope owns, for callables without torch.

    data: a flat memoryview of the whole buffer ('H' bf16 bits, 'B' one-byte codes, 'f' float32 scales);
    element (i, j, ...) is data[offset(i, j, ...)]. dtype: "bf16", "e4m3", "float32", "e2m1x2" (two e2m1 codes a
    byte, the even K element in the low nibble: shape[-1] counts bytes), "e8m0" or "ue4m3" (one-byte scale
    codes)."""

    def __init__(self, address, dtype, shape, strides):
        self.dtype, self.shape, self.strides = dtype, tuple(shape), tuple(strides)
        count = 1 + sum((extent - 1) * stride for extent, stride in zip(shape, strides)) if all(shape) else 0
        element = {"bf16": ctypes.c_uint16, "float32": ctypes.c_float}.get(dtype, ctypes.c_uint8)
        self.address = address
        self.data = memoryview((element * count).from_address(address)).cast("B").cast(
            {"bf16": "H", "float32": "f"}.get(dtype, "B"))

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


def e2m1_to_float(code):
    """One e2m1 code (a nibble): sign, two exponent bits, one mantissa bit; values 0, 0.5, 1, 1.5, 2, 3, 4, 6."""
    magnitude = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)[code & 0x7]
    return -magnitude if code & 0x8 else magnitude


def e8m0_to_float(code):
    """An e8m0 scale code: 2^(code - 127); 0xFF is NaN."""
    return math.nan if code == 0xFF else math.ldexp(1.0, code - 127)


# The version 2 formats (include/shapescope_plugin.h): each operand's element dtype, scale-code dtype, elements
# along K per scale, and whether it has a per-tensor fp32 scale; None for bf16 activations.
_CODED = {
    "mxfp8": (("e4m3", "e8m0", 32, False), ("e4m3", "e8m0", 32, False)),
    "mxfp4": (None, ("e2m1x2", "e8m0", 32, False)),
    "nvfp4": (None, ("e2m1x2", "ue4m3", 16, True)),
    "e2m1_e8m0_16": (None, ("e2m1x2", "e8m0", 16, False)),
    "nvfp4_native": (("e2m1x2", "ue4m3", 16, True), ("e2m1x2", "ue4m3", 16, True)),
}


class Layout:
    """Shapes and element strides of one point's operands, in the callable's argument order."""

    def __init__(self, shape, fmt, flags):
        m, n, k, batch = shape.m, shape.n, shape.k, shape.batch_count
        kb, nb = -(-k // 128), -(-n // 128)
        batched = batch > 1

        def with_batch(dims, strides, per_batch):
            return ((batch,) + dims, (per_batch,) + strides) if batched else (dims, strides)

        if fmt in _CODED:
            self.items = []
            for name, rows, coded in (("a", m, _CODED[fmt][0]), ("b", n, _CODED[fmt][1])):
                if coded is None:
                    self.items.append((name, "bf16") + with_batch((rows, k), (k, 1), rows * k))
                    continue
                element, scale, block, tensor_scale = coded
                width = -(-k // 2) if element == "e2m1x2" else k
                blocks = -(-k // block)
                self.items.append((name, element) + with_batch((rows, width), (width, 1), rows * width))
                self.items.append((f"{name}_scale_codes", scale) + with_batch((rows, blocks), (blocks, 1), rows * blocks))
                if tensor_scale:
                    self.items.append((f"{name}_tensor_scales", "float32", (batch,), (1,)))
            self.items.append(("c", "bf16") + with_batch((m, n), (n, 1), m * n))
            return
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


# torch's names for the dtypes (float4_e2m1fn_x2 and float8_e8m0fnu exist from torch 2.8 on; an older torch gets
# the codes as uint8), the array-interface typestr and the element size.
_TORCH_DTYPES = {"bf16": ("bfloat16", "<i2", 2), "e4m3": ("float8_e4m3fn", "|u1", 1), "float32": ("float32", "<f4", 4),
                 "e2m1x2": ("float4_e2m1fn_x2", "|u1", 1), "e8m0": ("float8_e8m0fnu", "|u1", 1),
                 "ue4m3": ("float8_e4m3fn", "|u1", 1)}


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
        tensors.append(raw.view(getattr(torch, torch_name, torch.uint8)))
    return tensors
