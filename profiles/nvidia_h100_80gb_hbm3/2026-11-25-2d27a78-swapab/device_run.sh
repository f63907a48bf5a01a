#!/bin/bash
# Device run: GPU tests of this build, then the DeepSeek-V3 TP8 decode sweep (main's build and this one, same
# call, twice), forced swap-AB variants, and prefill M on both builds. Logs go to $OUT as they are written.
set -u
steps=${1:-tests,bench}
C=$PWD/.dev/swapab/carry; T=/tmp/swapab; rm -rf $T; mkdir -p $T/prof
tar xJf $C/bins.tar.xz -C $T
export SHAPESCOPE_MODELS_DIR=$PWD/models
L=$OUT/run.log
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader; date -u; echo "build $(cat $C/commit.txt)"; } | tee $L
has() { [[ ",$steps," == *",$1,"* ]]; }
hung=""
prof() {  # tag build kernels mlist env...
  local tag=$1 b=$2 kernels=$3 mlist=$4; shift 4
  [[ " $hung " == *" $b$* "* ]] && { echo "$tag skipped" | tee -a $L; return; }
  local ks=(); for k in ${kernels//,/ }; do ks+=(--kernel $k); done
  local t0=$SECONDS
  timeout ${PCAP:-25} env LD_LIBRARY_PATH=$T/$b/lib "$@" $T/$b/bin/profile --backend cuda --model deepseek_v3 --tp 8 --module all \
    --m-list $mlist --timing graph --no-warm-up --min-samples 20 --max-samples 40 --max-seconds-per-point 0.3 "${ks[@]}" \
    --out $T/prof/$tag > $T/prof/log_$tag.txt 2>&1
  local rc=$?; echo "$tag rc=$rc $((SECONDS-t0))s" | tee -a $L
  [ $rc = 124 ] && hung="$hung $b$*"
}
if has tests; then
  t0=$SECONDS
  LD_LIBRARY_PATH=$T/new/lib timeout ${TCAP:-90} $T/new/bin/shapescope_gpu_tests --gtest_filter="${TFILTER:-Fp8SwapAb.*:OwnKernels.*}" > $T/prof/gpu_tests.txt 2>&1
  echo "tests rc=$? $((SECONDS-t0))s" | tee -a $L; grep -E "^\[  (PASSED|FAILED) |^\[  FAILED|^\[ RUN|tests ran|checks|FAIL " $T/prof/gpu_tests.txt | tail -40 | tee -a $L
  cp $T/prof/gpu_tests.txt $OUT/
fi
D=1,4,8,16,32,64
if has bench; then
  prof main main fp8_blockscale,cublaslt_fp8_blockscale $D
  prof new new fp8_blockscale,cublaslt_fp8_blockscale $D
  for s in ${SPLITS:-}; do prof new_split$s new fp8_blockscale $D SHAPESCOPE_FP8_SWAP_AB=1 SHAPESCOPE_FP8_SWAP_SPLITS=$s; done
  for r in ${ROWS:-}; do prof new_rows$r new fp8_blockscale $D SHAPESCOPE_FP8_SWAP_AB=1 SHAPESCOPE_FP8_SWAP_ROWS=$r; done
  prof main2 main fp8_blockscale,cublaslt_fp8_blockscale $D
  prof new2 new fp8_blockscale,cublaslt_fp8_blockscale $D
fi
if has prefill; then
  prof prefill_main main fp8_blockscale,cublaslt_fp8_blockscale 128,512,1024,4096
  prof prefill_new new fp8_blockscale 128,512,1024,4096
fi
tar czf $OUT/profiles.tar.gz -C $T/prof .
ls -la $OUT
