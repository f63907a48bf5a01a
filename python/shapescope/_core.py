"""shapescope.profile(): a Python callable as an in-process plugin kernel, swept by the profile CLI's own code."""
import ctypes
import importlib
import re
import signal

from . import _abi, _tensors
from ._tensors import (HostTensor, bf16_to_float, e2m1_to_float, e4m3_to_float, e8m0_to_float,  # noqa: F401
                       float_to_bf16)  # (re-exported)


class ProfileError(RuntimeError):
    """profile exited non-zero (2: a user error, printed on stderr as one line; 130: interrupted)."""

    def __init__(self, exit_code):
        super().__init__(f"profile exited {exit_code} (see its message on stderr)")
        self.exit_code = exit_code


def _torch_or_none():
    try:
        return importlib.import_module("torch")
    except ImportError:
        return None


def _write_error(buffer, size, text):
    data = text.replace("\n", " ").encode("utf-8", "replace")[: max(0, size - 1)] + b"\0"
    ctypes.memmove(buffer, data, len(data))


def _failed(exception, error, error_size):
    """A callback's exception as its error note; nothing may escape into ctypes (it would print a traceback
    and return garbage). KeyboardInterrupt stops the sweep as Ctrl-C does: profile's own SIGINT handler is
    installed during the call, so raising the signal sets its flag; the point is dropped, rows kept, exit 130.
    SystemExit is an error row naming it, not an exit of the sweep's process."""
    if isinstance(exception, KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)
    _write_error(error, error_size, f"{type(exception).__name__}: {exception}")
    return 1


class _Callable:
    """The ctypes callbacks of one callable; handles are keys of self.states (never 0)."""

    def __init__(self, fn, prepare, fmt, flags, on_cuda, torch):
        self.fn, self.user_prepare, self.format, self.flags = fn, prepare, fmt, flags
        self.on_cuda, self.torch = on_cuda, torch
        self.states, self.next_handle = {}, 1
        self.current_stream = None  # the stream pointer torch's current stream was set to
        self.name_buffers = {}

    def _use_stream(self, pointer):
        # Every launch the callable makes must go to the stream shapescope times (and captures in graph mode).
        if pointer != self.current_stream:
            self.torch.cuda.set_stream(self.torch.cuda.ExternalStream(pointer))
            self.current_stream = pointer

    def prepare(self, operands_pointer, handle_pointer, error, error_size):
        try:
            operands = operands_pointer.contents
            layout = _tensors.Layout(operands.shape, self.format, self.flags)
            if self.torch is not None:
                if self.on_cuda:
                    self._use_stream(operands.stream)
                tensors = _tensors.torch_tensors(self.torch, operands, layout, self.on_cuda)
            else:
                tensors = _tensors.host_tensors(operands, layout)
            out = tensors[-1]
            # `prepare` (untimed) may turn the operands into the arguments fn wants (a layout, a descriptor).
            arguments = tuple(self.user_prepare(*tensors)) if self.user_prepare else tuple(tensors)
            handle = self.next_handle
            self.next_handle += 1
            self.states[handle] = (arguments, out)
            handle_pointer[0] = handle
            return 0
        except BaseException as exception:  # noqa: BLE001 (any failure is the point's note)
            return _failed(exception, error, error_size)

    def run(self, handle, operands_pointer, error, error_size):
        try:
            arguments, out = self.states[handle]
            if self.on_cuda:
                self._use_stream(operands_pointer.contents.stream)
            result = self.fn(*arguments)
            # A callable that returns its product instead of writing `out` pays for this copy in the timing.
            if result is not None and result is not out and self.torch is not None:
                out.copy_(result)
            return 0
        except BaseException as exception:  # noqa: BLE001
            return _failed(exception, error, error_size)

    def release(self, handle):
        self.states.pop(handle, None)
        self.name_buffers.pop(handle, None)


def _kernel_name(fn):
    text = f"py_{getattr(fn, '__module__', '') or ''}_{getattr(fn, '__qualname__', 'callable')}"
    return re.sub(r"[^A-Za-z0-9_.+-]", "_", text)[:128]


def profile(fn, model, module="all", tp=1, m=None, operand_format="bf16", *, prepare=None, name=None, backend="auto",
            timing=None, out=None, a_scales="k_major", b_scales_padded=False, hf_config=None, tensors="auto",
            extra_args=()):
    """Profile `fn` over M for a model's GEMM shapes, as `profile --kernel NAME` profiles a kernel.

    fn gets shapescope's operands and writes C (or returns it; the copy is then timed):
      bf16:             fn(a, b, out)                    a [M,K], b [N,K], out [M,N] bf16: out = a @ b.T
      fp8_blockscale:   fn(a, a_scales, b, b_scales, out) e4m3 a, b; float32 scales [M,K/128], [N/128,K/128]
      a16w8_blockscale: fn(a, b, b_scales, out)
      mxfp8:            fn(a, a_scale_codes, b, b_scale_codes, out)  e4m3; e8m0 scale codes per 1x32
      mxfp4, e2m1_e8m0_16 (weight-only, W4A16 as Hopper runs them):
                        fn(a, b, b_scale_codes, out)   bf16 a; b e2m1 two a byte [N,K/2]; e8m0 per 1x32 / 1x16
      nvfp4 (W4A16):    fn(a, b, b_scale_codes, b_tensor_scales, out)  ue4m3 per 1x16, fp32 per-tensor [batch]
      nvfp4_native:     fn(a, a_scale_codes, a_tensor_scales, b, b_scale_codes, b_tensor_scales, out)  (Blackwell)
    (a leading batch dimension when a layer is batched). With torch importable they are torch tensors on the
    backend's device, else HostTensor views. `prepare(*operands)`, if given, runs once per M untimed and returns
    the arguments fn gets instead. Every point is checked against shapescope's float64 reference; the CSV and
    sidecar go where `profile` writes them (out). Returns 0; raises ProfileError on a non-zero exit.
    """
    if operand_format not in _abi.FORMATS:
        raise ValueError(f"operand_format={operand_format!r}: give one of {', '.join(_abi.FORMATS)}")
    if a_scales not in ("k_major", "m_major"):
        raise ValueError(f"a_scales={a_scales!r}: give k_major or m_major")
    torch = _torch_or_none() if tensors in ("auto", "torch") else None
    if tensors == "torch" and torch is None:
        raise ImportError("tensors='torch' but torch is not importable")
    if backend == "auto":
        backend = "cuda" if torch is not None and torch.cuda.is_available() else "cpu"
    if backend not in _abi.BACKENDS:
        raise ValueError(f"backend={backend!r}: give auto, cpu or cuda")
    if backend == "cuda" and torch is None:
        raise ImportError("the CUDA backend hands the callable torch tensors: torch is not importable")
    flags = (_abi.A_SCALES_M_MAJOR if a_scales == "m_major" else 0) | (_abi.B_SCALES_K_PADDED_4 if b_scales_padded else 0)
    name = name or _kernel_name(fn)
    library = _abi.load_library()

    callbacks = _Callable(fn, prepare, operand_format, flags, backend == "cuda", torch)

    def launch_name(handle):
        buffer = ctypes.create_string_buffer(f"{name} (Python callable)".encode())
        callbacks.name_buffers[handle] = buffer
        return ctypes.addressof(buffer)

    # The ctypes function objects must outlive the call: they are locals of this frame.
    c_prepare, c_run = _abi.PREPARE(callbacks.prepare), _abi.RUN(callbacks.run)
    c_release, c_launch_name = _abi.RELEASE(callbacks.release), _abi.LAUNCH_NAME(launch_name)
    description = f"Python callable {getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', '?')}"
    kernel = _abi.Kernel(name.encode(), description.encode(), _abi.FORMATS[operand_format], _abi.BACKENDS[backend], flags,
                         c_prepare, c_run, c_release, c_launch_name)
    plugin = _abi.Plugin(_abi.ABI_VERSION, 1, ctypes.pointer(kernel))

    argv = ["profile", "--model", model, "--module", module, "--tp", str(tp), "--kernel", name, "--backend", backend]
    if operand_format in _abi.LAYER_FORMATS:
        argv += ["--operand-format", _abi.LAYER_FORMATS[operand_format]]
    if m is not None:
        argv += ["--m-list", ",".join(str(int(value)) for value in m)]
    if timing:
        argv += ["--timing", timing]
    if out:
        argv += ["--out", str(out)]
    if hf_config:
        argv += ["--hf-config", str(hf_config)]
    argv += [str(arg) for arg in extra_args]
    c_argv = (ctypes.c_char_p * (len(argv) + 1))(*[arg.encode() for arg in argv], None)

    previous_handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        code = library.shapescope_c_profile(len(argv), c_argv, ctypes.byref(plugin), description.encode())
    finally:
        for number, handler in previous_handlers.items():  # profile installs its own; give Python's back
            signal.signal(number, handler)
        if backend == "cuda" and callbacks.current_stream is not None:
            torch.cuda.set_stream(torch.cuda.default_stream())
    if code != 0:
        raise ProfileError(code)
    return code
