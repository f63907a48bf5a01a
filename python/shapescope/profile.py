"""python -m shapescope.profile --callable pkg.mod:fn --model M --module L --tp T --m-list 1,2,4 [profile options]

Imports the callable (and --prepare, if given) and runs shapescope.profile(); every option it does not know is
passed to `profile` unchanged (--timing, --out, --min-samples, ...)."""
import argparse
import importlib
import sys
import types

from . import _abi
from ._core import ProfileError, profile


class _UserError(Exception):
    """A mistake on the command line: one line on stderr, exit 2 (the traceback only with --debug)."""


def _load(option, spec):
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise _UserError(f"{option} {spec}: give MODULE:FUNCTION, e.g. mypkg.gemms:my_gemm")
    try:
        target = importlib.import_module(module_name)
    except Exception as error:  # noqa: BLE001 (the user's module failed to import: say how, in one line)
        raise _UserError(f"{option} {spec}: importing {module_name} failed ({type(error).__name__}: {error}); "
                         "check the module path and PYTHONPATH") from error
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise _UserError(f"{option} {spec}: {module_name} has no '{attribute}'; name a function it defines")
        target = getattr(target, part)
    if not callable(target):
        raise _UserError(f"{option} {spec}: {attribute} is a {type(target).__name__}, not a function")
    return target


def _one_line(text):
    return " ".join(str(text).split())


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, not argparse's usage block
        print(f"profile: {_one_line(message)} (see python -m shapescope.profile --help)", file=sys.stderr)
        sys.exit(2)


def main(argv=None):
    parser = _Parser(prog="python -m shapescope.profile", description=__doc__,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--callable", required=True, help="MODULE:FUNCTION to profile")
    parser.add_argument("--prepare", help="MODULE:FUNCTION run once per M (untimed), returns fn's arguments")
    parser.add_argument("--name", help="kernel name in the CSV (default py_<module>_<function>)")
    parser.add_argument("--model", required=True)
    parser.add_argument("--module", default="all")
    parser.add_argument("--tp", type=int, default=1)
    parser.add_argument("--operand-format", default="bf16", choices=list(_abi.FORMATS),
                        help="the operands the callable takes (the option `profile` names the same way)")
    parser.add_argument("--a-scales", default="k_major", choices=["k_major", "m_major"])
    parser.add_argument("--b-scales-padded", action="store_true", help="128x128 scale rows padded to 4 K blocks")
    parser.add_argument("--backend", default="auto", choices=["auto", "cpu", "cuda"])
    parser.add_argument("--tensors", default="auto", choices=["auto", "torch", "host"])
    parser.add_argument("--debug", action="store_true", help="a Python traceback with every error")
    options, rest = parser.parse_known_args(argv)
    try:
        profile(_load("--callable", options.callable), options.model, options.module, options.tp, None,
                options.operand_format, prepare=_load("--prepare", options.prepare) if options.prepare else None,
                name=options.name, backend=options.backend, a_scales=options.a_scales,
                b_scales_padded=options.b_scales_padded, tensors=options.tensors, extra_args=rest)
    except ProfileError as error:
        return error.exit_code  # profile printed its one line
    except (_UserError, ValueError, ImportError, OSError) as error:
        # What the user can fix: a callable that does not import, an option value, the library path.
        if options.debug:
            raise
        print(f"profile: {_one_line(error)}", file=sys.stderr)
        return 2
    except Exception as error:  # noqa: BLE001
        if options.debug:
            raise
        print(f"profile: internal error (a bug in shapescope; rerun with --debug and report the traceback): "
              f"{type(error).__name__}: {_one_line(error)}", file=sys.stderr)
        return 70
    return 0


class _CallableModule(types.ModuleType):
    """`import shapescope.profile` rebinds the package's `profile` to this module: calling it still profiles."""

    def __call__(self, *args, **kwargs):
        return profile(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

if __name__ == "__main__":
    sys.exit(main())
