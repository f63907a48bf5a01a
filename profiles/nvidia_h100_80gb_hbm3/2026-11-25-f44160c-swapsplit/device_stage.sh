#!/bin/bash
# Device stage of the swapsplit branch (swap-AB with the K split across a thread-block cluster).
# Usage, from the repository root on the device machine, $OUT set:
#   bash device_stage.sh <main's unpacked binaries> <swapsplit's unpacked binaries (bins.tar.xz)>
# Each folder holds profile (and, for swapsplit, shapescope_gpu_tests) and the .so files they need, in any
# sub-folders (bins.tar.xz: bin/, lib/, commit.txt). Steps (~60-90 s in all at 1-2 s per sweep): the GPU tests of this build, the
# DeepSeek-V3 TP8 decode sweep alternating main / swapsplit twice, forced swap-AB variants of swapsplit
# (no split = the previous choice; forced splits and rows; swap-AB forced everywhere, N=512 and M 33-64
# included), then prefill M on two
# modules with both builds. Logs and profiles land in $OUT (summary.txt, run.log, profiles.tar.gz).
set -u
MAIN=$(realpath "$1"); MINE=$(realpath "$2")
OUT=${OUT:-/tmp/swapsplit_out}; mkdir -p "$OUT"
T=/tmp/swapsplit_stage; rm -rf $T; mkdir -p $T/prof
export SHAPESCOPE_MODELS_DIR=$PWD/models
L=$OUT/run.log
bin_of() { find "$1" -name "$2" -type f | head -1; }                           # wherever the folder has it
lib_of() { find "$1" -name '*.so*' -printf '%h\n' | sort -u | paste -sd: -; }  # every folder with a .so
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader; date -u;
  cat "$MINE/commit.txt" 2>/dev/null; } | tee $L
t0=$SECONDS
LD_LIBRARY_PATH=$(lib_of $MINE):${LD_LIBRARY_PATH:-} timeout 120 $(bin_of $MINE shapescope_gpu_tests) \
  --gtest_filter='Fp8SwapAb*:OwnKernels.*' > $OUT/gpu_tests.txt 2>&1
echo "gpu tests rc=$? $((SECONDS-t0))s" | tee -a $L
grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|^\[ RUN|checks|Failure|Expected|Which is|Value of|error" $OUT/gpu_tests.txt | head -80 | tee -a $L
prof() {  # tag folder kernels m-list module env...
  local tag=$1 dir=$2 kernels=$3 mlist=$4 module=$5; shift 5
  local ks=(); for k in ${kernels//,/ }; do ks+=(--kernel $k); done
  local t1=$SECONDS
  timeout 40 env LD_LIBRARY_PATH=$(lib_of $dir):${LD_LIBRARY_PATH:-} "$@" $(bin_of $dir profile) --backend cuda \
    --model deepseek_v3 --tp 8 --module $module --m-list $mlist --timing graph --no-warm-up --min-samples 20 \
    --max-samples 40 --max-seconds-per-point 0.3 "${ks[@]}" --out $T/prof/$tag > $T/prof/log_$tag.txt 2>&1
  echo "$tag rc=$? $((SECONDS-t1))s" | tee -a $L
}
D=1,4,8,16,32,64
BOTH=fp8_blockscale,cublaslt_fp8_blockscale
prof main $MAIN $BOTH $D all
prof new $MINE $BOTH $D all
prof main2 $MAIN $BOTH $D all
prof new2 $MINE $BOTH $D all
# Calibration of the split's price (same build): no split (main's choice of tiling), forced splits and rows.
prof new_nosplit $MINE fp8_blockscale $D all SHAPESCOPE_FP8_SWAP_SPLITS=1
for s in 2 3 4 6; do
  for r in 64 128; do prof new_s${s}_r$r $MINE fp8_blockscale $D all SHAPESCOPE_FP8_SWAP_SPLITS=$s SHAPESCOPE_FP8_SWAP_ROWS=$r; done
done
prof new_swapall $MINE fp8_blockscale $D all SHAPESCOPE_FP8_SWAP_AB=1  # N=512 too, M=64 too
prof new_m33_64 $MINE fp8_blockscale 33,40,48,56,64 all SHAPESCOPE_FP8_SWAP_AB=1
prof main_m33_64 $MAIN $BOTH 33,40,48,56,64 all
P=128,256,512,1024,2048,4096
for mod in gate_up_proj down_proj; do
  prof prefill_main_$mod $MAIN $BOTH $P $mod
  prof prefill_new_$mod $MINE fp8_blockscale $P $mod
done
tar czf $OUT/profiles.tar.gz -C $T/prof .
cat > $T/summary.py <<'PY'
import csv, glob, math, os, sys
root = sys.argv[1]
def load(tag, kernel):
    out = {}
    for f in glob.glob(f"{root}/{tag}/*_graph.csv"):
        mod = os.path.basename(f).split("_tp8_")[0].replace("deepseek_v3_", "")
        for r in csv.DictReader(open(f)):
            if r["status"] == "ok" and r["kernel"] == kernel:
                out[(mod, int(r["m"]))] = (float(r["kernel_time"]), r["kernel_name"], int(r["n"]), int(r["k"]))
    return out
gm = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")
def ratio(tag, ms):
    ours, cub = load(tag, "fp8_blockscale"), load(tag, "cublaslt_fp8_blockscale")
    keys = [k for k in ours if k in cub and k[1] in ms]
    return gm([cub[k][0] / ours[k][0] for k in keys]), len(keys), ours, cub
ms = {4, 8, 16, 32, 64}
print("cuBLASLt / ours, geomean over the modules x M 4-64 (each run against its own cuBLASLt):")
for tag in ["main", "new", "main2", "new2"]:
    r, n, _, _ = ratio(tag, ms)
    print(f"  {tag}: {r:.3f} ({n} points)")
for tag in ["main", "new"]:
    r, n, ours, cub = ratio(tag, ms)
    mods = sorted({k[0] for k in ours})
    print(f"\nper module ({tag}): cuBLASLt/ours M 4-64, config at M=8")
    for m in mods:
        keys = [(m, M) for M in sorted(ms) if (m, M) in ours and (m, M) in cub]
        if keys:
            print(f"  {m}: {gm([cub[k][0] / ours[k][0] for k in keys]):.3f}  {ours.get((m, 8), ('', '?'))[1]}")
print("\nweights >= 16 MB, TB/s (us): main / new / new2 / cuBLASLt")
A, B, B2, C = load("main", "fp8_blockscale"), load("new", "fp8_blockscale"), load("new2", "fp8_blockscale"), load("new", "cublaslt_fp8_blockscale")
for (m, M) in sorted(B):
    n, k = B[(m, M)][2], B[(m, M)][3]
    if n * k < 16e6 or (m, M) not in A: continue
    w = n * k / 1e6
    c = C.get((m, M), (float("nan"),))[0]
    b2 = B2.get((m, M), (float("nan"),))[0]
    print(f"  {m} M={M}: {w/A[(m,M)][0]:.2f} / {w/B[(m,M)][0]:.2f} / {w/b2:.2f} / {w/c:.2f}  ({A[(m,M)][0]:.2f} / {B[(m,M)][0]:.2f} / {b2:.2f} / {c:.2f})")
print("\nforced variants of new: time / new's time, geomean over modules at M 1-32 where swap-AB runs; per module")
base = load("new", "fp8_blockscale")
for tag in sorted(os.listdir(root)):
    if not tag.startswith("new_") or tag == "new_m33_64" or not os.path.isdir(f"{root}/{tag}"): continue
    t = load(tag, "fp8_blockscale")
    keys = [k for k in t if k in base and k[1] <= 32]
    per = {}
    for k in keys: per.setdefault(k[0], []).append(t[k][0] / base[k][0])
    print(f"  {tag}: {gm([t[k][0] / base[k][0] for k in keys]):.3f}  " + " ".join(f"{m.replace('_proj', '')}={gm(v):.2f}" for m, v in sorted(per.items())))
print("\nM 33-64: forced swap-AB (new) time / main's tiled kernel time, per module")
t, a = load("new_m33_64", "fp8_blockscale"), load("main_m33_64", "fp8_blockscale")
for m in sorted({k[0] for k in t}):
    print(f"  {m}: " + " ".join(f"M{M}={t[(m,M)][0]/a[(m,M)][0]:.2f}" for M in [33, 40, 48, 56, 64] if (m, M) in t and (m, M) in a))
print("\nprefill: new / main time (fp8_blockscale)")
for mod in ["gate_up_proj", "down_proj"]:
    a, b = load(f"prefill_main_{mod}", "fp8_blockscale"), load(f"prefill_new_{mod}", "fp8_blockscale")
    keys = sorted(k for k in b if k in a)
    print(f"  {mod}: " + " ".join(f"M{k[1]}={b[k][0]/a[k][0]:.3f}" for k in keys))
PY
python3 $T/summary.py $T/prof > $OUT/summary.txt 2>&1 || echo "summary failed" >> $OUT/summary.txt
cat $OUT/summary.txt
echo "total $((SECONDS))s" | tee -a $L
