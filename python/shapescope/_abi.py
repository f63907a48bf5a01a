"""include/shapescope_plugin.h and include/shapescope_c.h as ctypes declarations (ABI version 2)."""
import ctypes
import os

ABI_VERSION = 2

FORMATS = {"bf16": 1, "fp8_blockscale": 2, "a16w8_blockscale": 3, "mxfp8": 4, "mxfp4": 5, "nvfp4": 6,
           "e2m1_e8m0_16": 7, "nvfp4_native": 8}
# The named block format (profile's --operand-format) whose weights each operand format multiplies: the layers are
# profiled in it, so the file name and the `format` column say what the callable ran. bf16 is the baseline that
# runs beside any layer's format, as profile's own bf16 kernels do, and leaves the layers as they are.
LAYER_FORMATS = {"fp8_blockscale": "fp8_blockscale", "a16w8_blockscale": "fp8_blockscale", "mxfp8": "mxfp8",
                 "mxfp4": "mxfp4", "nvfp4": "nvfp4", "e2m1_e8m0_16": "e2m1_e8m0_16", "nvfp4_native": "nvfp4"}
BACKENDS = {"cpu": 0, "cuda": 1}
A_SCALES_M_MAJOR = 0x1
B_SCALES_K_PADDED_4 = 0x2


class Shape(ctypes.Structure):
    _fields_ = [("m", ctypes.c_int64), ("n", ctypes.c_int64), ("k", ctypes.c_int64), ("batch_count", ctypes.c_int64)]


class Operands(ctypes.Structure):
    _fields_ = [("shape", Shape), ("a", ctypes.c_void_p), ("a_scales", ctypes.c_void_p), ("b", ctypes.c_void_p),
                ("b_scales", ctypes.c_void_p), ("c", ctypes.c_void_p), ("stream", ctypes.c_void_p),
                ("a_scale_codes", ctypes.c_void_p), ("b_scale_codes", ctypes.c_void_p),
                ("a_tensor_scales", ctypes.c_void_p), ("b_tensor_scales", ctypes.c_void_p)]


# char* error buffers are c_void_p: the callbacks write into them with ctypes.memmove.
PREPARE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(Operands), ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p,
                           ctypes.c_size_t)
RUN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(Operands), ctypes.c_void_p, ctypes.c_size_t)
RELEASE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
LAUNCH_NAME = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)


class Kernel(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("description", ctypes.c_char_p), ("format", ctypes.c_int32),
                ("backend", ctypes.c_int32), ("flags", ctypes.c_uint32), ("prepare", PREPARE), ("run", RUN),
                ("release", RELEASE), ("launch_name", LAUNCH_NAME)]


class Plugin(ctypes.Structure):
    _fields_ = [("abi_version", ctypes.c_uint32), ("kernel_count", ctypes.c_uint32),
                ("kernels", ctypes.POINTER(Kernel))]


def library_path():
    """SHAPESCOPE_LIB, else the library the CMake build recorded in _build_location.py (written when the build
    is configured, and copied into the installed package by `pip install ./python`)."""
    if os.environ.get("SHAPESCOPE_LIB"):
        return os.environ["SHAPESCOPE_LIB"]
    try:
        from ._build_location import LIBRARY
    except ImportError:
        raise FileNotFoundError("no libshapescope_c.so recorded: configure and build shapescope (target "
                                "shapescope_c) before installing this package, or set SHAPESCOPE_LIB") from None
    return LIBRARY


_library = None


def load_library():
    global _library
    if _library is None:
        path = library_path()
        if not os.path.exists(path):
            raise FileNotFoundError(f"{path} does not exist: build shapescope (target shapescope_c) or set "
                                    "SHAPESCOPE_LIB to libshapescope_c.so")
        library = ctypes.CDLL(path)
        library.shapescope_c_plugin_abi_version.restype = ctypes.c_uint32
        library.shapescope_c_profile.restype = ctypes.c_int
        library.shapescope_c_profile.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
                                                 ctypes.POINTER(Plugin), ctypes.c_char_p]
        version = library.shapescope_c_plugin_abi_version()
        if version != ABI_VERSION:
            raise ImportError(f"{path} speaks plugin ABI version {version}, this package version {ABI_VERSION}: "
                              "use the package from the same shapescope checkout")
        _library = library
    return _library
