"""python -m shapescope.profile --callable pkg.mod:fn --model M --module L --tp T --m-list 1,2,4 [profile options]

Imports the callable (and --prepare, if given) and runs shapescope.profile(); every option it does not know is
passed to `profile` unchanged (--timing, --out, --min-samples, ...)."""
import argparse
import importlib
import sys
import types

from ._core import ProfileError, profile


def _load(spec):
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise SystemExit(f"profile: --callable {spec}: give MODULE:FUNCTION, e.g. mypkg.gemms:my_gemm")
    target = importlib.import_module(module_name)
    for part in attribute.split("."):
        target = getattr(target, part)
    return target


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m shapescope.profile", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--callable", required=True, help="MODULE:FUNCTION to profile")
    parser.add_argument("--prepare", help="MODULE:FUNCTION run once per M (untimed), returns fn's arguments")
    parser.add_argument("--name", help="kernel name in the CSV (default py_<module>_<function>)")
    parser.add_argument("--model", required=True)
    parser.add_argument("--module", default="all")
    parser.add_argument("--tp", type=int, default=1)
    parser.add_argument("--operand-format", default="bf16", choices=["bf16", "fp8_blockscale", "a16w8_blockscale"],
                        help="the operands the callable takes (the option `profile` names the same way)")
    parser.add_argument("--a-scales", default="k_major", choices=["k_major", "m_major"])
    parser.add_argument("--b-scales-padded", action="store_true", help="128x128 scale rows padded to 4 K blocks")
    parser.add_argument("--backend", default="auto", choices=["auto", "cpu", "cuda"])
    parser.add_argument("--tensors", default="auto", choices=["auto", "torch", "host"])
    options, rest = parser.parse_known_args(argv)
    try:
        profile(_load(options.callable), options.model, options.module, options.tp, None, options.operand_format,
                prepare=_load(options.prepare) if options.prepare else None, name=options.name,
                backend=options.backend, a_scales=options.a_scales, b_scales_padded=options.b_scales_padded,
                tensors=options.tensors, extra_args=rest)
    except ProfileError as error:
        return error.exit_code
    return 0


class _CallableModule(types.ModuleType):
    """`import shapescope.profile` rebinds the package's `profile` to this module: calling it still profiles."""

    def __call__(self, *args, **kwargs):
        return profile(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

if __name__ == "__main__":
    sys.exit(main())
