"""The Python entry point's CPU path, with no torch and no numpy: pure-Python callables get HostTensor views of
shapescope's operands, are checked against the float64 reference and timed; the CSV says what happened."""
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import shapescope
from shapescope import bf16_to_float, e2m1_to_float, e4m3_to_float, e8m0_to_float, float_to_bf16

# A tiny Llama-style model: o_proj is N=128, K=128.
TINY = ('{"model_type": "llama", "hidden_size": 128, "num_attention_heads": 1, "num_key_value_heads": 1, '
        '"head_dim": 128, "intermediate_size": 256}')
FAST = ["--threads", "1", "--peak-tflops", "1", "--min-samples", "2", "--max-samples", "2", "--warmup", "0",
        "--max-seconds-per-point", "0"]


def bf16_gemm(a, b, out):
    """out = a @ b.T in pure Python on bf16 bits."""
    (m, k), (n, _) = a.shape, b.shape
    av = [bf16_to_float(x) for x in a.data]
    bv = [bf16_to_float(x) for x in b.data]
    for row in range(m):
        arow = av[row * k:(row + 1) * k]
        for col in range(n):
            out.data[out.offset(row, col)] = float_to_bf16(sum(x * y for x, y in zip(arow, bv[col * k:(col + 1) * k])))


def fp8_gemm(a, a_scales, b, b_scales, out):
    """Block-scaled e4m3, reading scales through their strides (M-major 1x128 scales in the test)."""
    (m, k), (n, _) = a.shape, b.shape
    table = [e4m3_to_float(code) for code in range(256)]
    for row in range(m):
        for col in range(n):
            total = 0.0
            for block in range(0, k, 128):
                part = sum(table[a.data[row * k + i]] * table[b.data[col * k + i]] for i in range(block, min(k, block + 128)))
                total += part * a_scales.data[a_scales.offset(row, block // 128)] * \
                    b_scales.data[b_scales.offset(col // 128, block // 128)]
            out.data[out.offset(row, col)] = float_to_bf16(total)


def a16w4_gemm(a, b, b_scale_codes, *rest):
    """W4A16: bf16 a times e2m1 weights packed two a byte, each block of K scaled by an e8m0 or ue4m3 code and,
    for NVFP4, by the per-tensor fp32 scale (the argument before out)."""
    out = rest[-1]
    tensor_scale = rest[0].data[0] if len(rest) == 2 else 1.0
    (m, k), n = a.shape, b.shape[0]
    block = k // b_scale_codes.shape[1]
    decode_scale = e8m0_to_float if b_scale_codes.dtype == "e8m0" else e4m3_to_float
    av = [bf16_to_float(x) for x in a.data]
    weights = []
    for col in range(n):
        row = []
        for i in range(k):
            byte = b.data[b.offset(col, i // 2)]
            scale = decode_scale(b_scale_codes.data[b_scale_codes.offset(col, i // block)])
            row.append(e2m1_to_float(byte >> 4 if i % 2 else byte & 0xF) * scale * tensor_scale)
        weights.append(row)
    for r in range(m):
        arow = av[r * k:(r + 1) * k]
        for col in range(n):
            out.data[out.offset(r, col)] = float_to_bf16(sum(x * y for x, y in zip(arow, weights[col])))


def wrong_gemm(a, b, out):
    for i in range(len(out.data)):
        out.data[i] = float_to_bf16(1.0)


def raising_gemm(a, b, out):
    raise ValueError("no kernel for this shape")


def exiting_gemm(a, b, out):
    raise SystemExit(3)


def interrupting_gemm(a, b, out):
    """Fine at M=1; at M=2 it raises KeyboardInterrupt, as a callable stopped by its own Ctrl-C would."""
    if a.shape[0] == 2:
        raise KeyboardInterrupt
    bf16_gemm(a, b, out)


def slow_gemm(a, b, out):
    import time
    time.sleep(0.02)
    bf16_gemm(a, b, out)


class PythonCpuPath(unittest.TestCase):
    def setUp(self):
        self.out = tempfile.mkdtemp(prefix="shapescope_py_")
        self.config = os.path.join(self.out, "tiny.json")
        with open(self.config, "w") as file:
            file.write(TINY)

    def tearDown(self):
        shutil.rmtree(self.out)

    def rows(self, kernel, layer_format=""):
        """The rows of the kernel's file; layer_format: the file name's format part (none for FP8 and bf16)."""
        path = os.path.join(self.out, f"tiny_o_proj_tp1_N128_K128{layer_format}_{kernel}.csv")
        self.assertTrue(os.path.exists(path), path)
        self.assertTrue(os.path.exists(path[:-4] + ".json"))
        with open(path) as file:
            return list(csv.DictReader(file))

    def sweep(self, fn, name, m=(1, 2), **options):
        return shapescope.profile(fn, "tiny", "o_proj", 1, m, hf_config=self.config, backend="cpu",
                                  out=self.out, name=name, extra_args=FAST, **options)

    def test_bf16_callable_rows_are_ok(self):
        self.assertEqual(self.sweep(bf16_gemm, "py_bf16"), 0)
        rows = self.rows("py_bf16")
        self.assertEqual([row["batch"] for row in rows], ["1", "2"])
        for row in rows:
            self.assertEqual(row["status"], "ok", row["note"])
            self.assertLess(float(row["rel_err"]), 1e-2)
            self.assertGreater(float(row["kernel_time"]), 0)
            self.assertEqual(row["kernel_name"], "py_bf16 (Python callable)")

    def test_fp8_blockscale_callable_with_m_major_scales(self):
        self.sweep(fp8_gemm, "py_fp8", operand_format="fp8_blockscale", a_scales="m_major", b_scales_padded=True)
        for row in self.rows("py_fp8"):
            self.assertEqual(row["status"], "ok", row["note"])
            self.assertEqual(row["dtype"], "fp8")

    def test_fp4_weight_only_callables_get_packed_codes_and_scale_codes(self):
        for fmt in ("mxfp4", "nvfp4", "e2m1_e8m0_16"):
            name = f"py_{fmt}"
            self.sweep(a16w4_gemm, name, operand_format=fmt)
            for row in self.rows(name, f"_{fmt}"):  # the layers are profiled in the callable's weight format
                self.assertEqual(row["status"], "ok", f"{fmt}: {row['note']}")
                self.assertEqual(row["dtype"], "bf16")
                self.assertEqual(row["format"], fmt)

    def test_graph_timing_rotates_operand_sets(self):
        self.sweep(bf16_gemm, "py_graph", m=[1], timing="graph")  # up to 256 pure-Python runs per replay
        path = os.path.join(self.out, "tiny_o_proj_tp1_N128_K128_py_graph_graph.csv")
        with open(path) as file:
            rows = list(csv.DictReader(file))
        self.assertEqual(len(rows), 1)
        self.assertEqual(rows[0]["status"], "ok", rows[0]["note"])
        self.assertEqual(rows[0]["timing"], "graph")
        self.assertGreater(int(rows[0]["operand_sets"]), 1)

    def test_wrong_numbers_and_exceptions_become_rows(self):
        self.sweep(wrong_gemm, "py_wrong")
        for row in self.rows("py_wrong"):
            self.assertEqual(row["status"], "numerical_fail")
        self.sweep(raising_gemm, "py_raises")
        for row in self.rows("py_raises"):
            self.assertEqual(row["status"], "error")
            self.assertIn("ValueError: no kernel for this shape", row["note"])

    def test_system_exit_in_a_callable_is_an_error_row_naming_it(self):
        self.sweep(exiting_gemm, "py_exits")
        for row in self.rows("py_exits"):
            self.assertEqual(row["status"], "error")
            self.assertIn("SystemExit: 3", row["note"])

    def test_keyboard_interrupt_in_a_callable_stops_the_sweep_as_ctrl_c_does(self):
        with self.assertRaises(shapescope.ProfileError) as raised:
            self.sweep(interrupting_gemm, "py_interrupts", m=(1, 2, 3))
        self.assertEqual(raised.exception.exit_code, 130)
        rows = self.rows("py_interrupts")
        self.assertEqual([(row["batch"], row["status"]) for row in rows], [("1", "ok")])  # M=1 kept, M=2 not a row

    def test_entry_point_mistakes_are_one_line_and_exit_2(self):
        base = ["--model", "tiny", "--hf-config", self.config, "--backend", "cpu", "--m-list", "1", "--out", self.out]
        broken = os.path.join(self.out, "broken_module.py")
        with open(broken, "w") as file:
            file.write("raise RuntimeError('this module fails to import')\n")
        for arguments, env, fragment in [
                (["--callable", "nonexistent.mod:fn"], {}, "No module named"),
                (["--callable", f"{__name__}:nofn"], {}, "has no 'nofn'"),
                (["--callable", "broken_module:fn"], {"PYTHONPATH": self.out}, "this module fails to import"),
                (["--callable", "nocolon"], {}, "MODULE:FUNCTION"),
                (["--callable", f"{__name__}:bf16_gemm"], {"SHAPESCOPE_LIB": self.config}, self.config),
                (["--callable", f"{__name__}:bf16_gemm", "--tp", "x"], {}, "--tp"),
                (["--callable", f"{__name__}:bf16_gemm", "--warmup", "-1"], {}, "--warmup")]:
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path + [env.get("PYTHONPATH", "")]),
                       **{key: value for key, value in env.items() if key != "PYTHONPATH"})
            result = subprocess.run([sys.executable, "-m", "shapescope.profile"] + arguments + base, env=env,
                                    cwd=os.path.dirname(os.path.abspath(__file__)), capture_output=True, text=True,
                                    timeout=300)
            self.assertEqual(result.returncode, 2, (arguments, result.stderr))
            self.assertEqual(result.stderr.count("\n"), 1, (arguments, result.stderr))
            self.assertIn(fragment, result.stderr, arguments)
            self.assertNotIn("Traceback", result.stderr)
        debug = subprocess.run([sys.executable, "-m", "shapescope.profile", "--debug", "--callable",
                                "nonexistent.mod:fn"] + base, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)),
                               capture_output=True, text=True, timeout=300)
        self.assertIn("Traceback", debug.stderr)

    def test_sigint_during_a_python_callable_keeps_rows_and_exits_130(self):
        import signal
        import time
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        process = subprocess.Popen([sys.executable, "-m", "shapescope.profile", "--callable",
                                    f"{__name__}:slow_gemm", "--name", "py_slow", "--model", "tiny", "--module",
                                    "o_proj", "--backend", "cpu", "--hf-config", self.config, "--m-list", "1,2,3",
                                    "--out", self.out, "--threads", "1", "--peak-tflops", "1", "--warmup", "0",
                                    "--min-samples", "400", "--max-samples", "400", "--target-rel-stderr", "1e-9"],
                                   env=env, cwd=os.path.dirname(os.path.abspath(__file__)),
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        csv_path = os.path.join(self.out, "tiny_o_proj_tp1_N128_K128_py_slow.csv")
        deadline = time.monotonic() + 120
        while not os.path.exists(csv_path[:-4] + ".json") and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.5)  # inside M=1's 400 samples of 20 ms
        process.send_signal(signal.SIGINT)
        signalled = time.monotonic()
        _, stderr = process.communicate(timeout=60)
        self.assertEqual(process.returncode, 130, stderr)
        self.assertLess(time.monotonic() - signalled, 1.5)
        self.assertNotIn("Traceback", stderr)

    def test_user_error_raises_profile_error_with_exit_2(self):
        with self.assertRaises(shapescope.ProfileError) as raised:
            shapescope.profile(bf16_gemm, "no_such_model", "o_proj", 1, [1], backend="cpu", out=self.out)
        self.assertEqual(raised.exception.exit_code, 2)

    def test_importing_the_command_line_module_keeps_profile_callable(self):
        import shapescope.profile  # noqa: F401 (rebinds the package attribute to the submodule)
        self.assertEqual(shapescope.profile(bf16_gemm, "tiny", "o_proj", 1, [1], hf_config=self.config,
                                            backend="cpu", out=self.out, name="py_after_import", extra_args=FAST), 0)
        self.assertEqual([row["status"] for row in self.rows("py_after_import")], ["ok"])

    def test_command_line_entry_point(self):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        result = subprocess.run([sys.executable, "-m", "shapescope.profile", "--callable", f"{__name__}:bf16_gemm",
                                 "--name", "py_cli", "--model", "tiny", "--module", "o_proj", "--backend", "cpu",
                                 "--hf-config", self.config, "--m-list", "1", "--out", self.out] + FAST,
                                env=env, cwd=os.path.dirname(os.path.abspath(__file__)), capture_output=True,
                                text=True, timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual([row["status"] for row in self.rows("py_cli")], ["ok"])


if __name__ == "__main__":
    unittest.main()
