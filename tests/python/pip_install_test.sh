#!/usr/bin/env bash
# The Python package as a user installs it: a fresh venv that sees the system's packages (Debian's
# python3-setuptools is the build backend, so nothing is fetched), `pip install --no-build-isolation ./python`,
# then the Python CPU tests and the `shapescope-profile` command run from that venv with neither PYTHONPATH nor
# SHAPESCOPE_LIB: the installed package must find the built library by itself.
#   pip_install_test.sh PYTHON SOURCE_DIR WORK_DIR
set -euo pipefail
python=$1 source=$(realpath "$2") work=$(realpath -m "$3")
rm -rf "$work"
mkdir -p "$work"
cp -r "$source/python" "$work/package"   # the build's by-products (build/, *.egg-info) stay out of the checkout
"$python" -m venv --system-site-packages "$work/venv"
venv_python=$work/venv/bin/python
"$venv_python" -m pip install --no-build-isolation --no-index --no-cache-dir --quiet "$work/package"
cd "$work"
unset PYTHONPATH SHAPESCOPE_LIB
"$venv_python" -c 'import shapescope, sys; assert shapescope.__file__.startswith(sys.prefix), shapescope.__file__'
"$venv_python" -m unittest discover -s "$source/tests/python" -v

# The console command on the tests' bf16 callable and tiny model, its row checked against the float64 reference.
cat > "$work/tiny.json" <<'JSON'
{"model_type": "llama", "hidden_size": 128, "num_attention_heads": 1, "num_key_value_heads": 1, "head_dim": 128,
 "intermediate_size": 256}
JSON
PYTHONPATH=$source/tests/python "$work/venv/bin/shapescope-profile" --callable test_profile_cpu:bf16_gemm \
  --name py_console --model tiny --module o_proj --hf-config "$work/tiny.json" --backend cpu --m-list 1,2 \
  --out "$work/console" --threads 1 --peak-tflops 1 --min-samples 2 --max-samples 2 --warmup 0 \
  --max-seconds-per-point 0
csv=$work/console/tiny_o_proj_tp1_N128_K128_py_console.csv
statuses=$("$venv_python" -c 'import csv, sys; print(" ".join(r["status"] for r in csv.DictReader(open(sys.argv[1]))))' "$csv")
[[ $statuses == "ok ok" ]] || { echo "shapescope-profile wrote statuses '$statuses' to $csv, expected 'ok ok'" >&2; exit 1; }
echo "shapescope-profile: $csv ok"
