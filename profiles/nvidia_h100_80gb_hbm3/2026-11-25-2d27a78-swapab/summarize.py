import csv, glob, math, os, sys
root = sys.argv[1]; a = sys.argv[2] if len(sys.argv) > 2 else "main"; b = sys.argv[3] if len(sys.argv) > 3 else "new"
def load(tag, kernel):
    out = {}
    for f in glob.glob(f"{root}/{tag}/*_graph.csv"):
        mod = os.path.basename(f).split("_tp8_")[0].replace("deepseek_v3_", "")
        for r in csv.DictReader(open(f)):
            if r["status"] != "ok" or r["kernel"] != kernel: continue
            out[(mod, int(r["m"]))] = (float(r["kernel_time"]), float(r["gbytes_per_s"]), r["kernel_name"], int(r["n"]), int(r["k"]))
    return out
gm = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float('nan')
ms = [4, 8, 16, 32, 64]
cubA = load(a, "cublaslt_fp8_blockscale"); A = load(a, "fp8_blockscale"); B = load(b, "fp8_blockscale"); cubB = load(b, "cublaslt_fp8_blockscale") or cubA
mods = sorted({k[0] for k in A if k in B})
print(f"| module | N x K | weights MB | cuBLASLt/ours {a} | cuBLASLt/ours {b} | {b}/{a} time | {b} config M=4 / M=64 |")
print("|---|---|---|---|---|---|---|")
ra, rb = [], []
for m in mods:
    keys = [(m, M) for M in ms if (m, M) in A and (m, M) in B and (m, M) in cubA]
    if not keys: continue
    x = [cubA[k][0] / A[k][0] for k in keys]; y = [cubB.get(k, cubA[k])[0] / B[k][0] for k in keys]
    ra += x; rb += y
    n, K = B[keys[0]][3], B[keys[0]][4]
    cfg = lambda k: B[k][2].split("/", 1)[1].replace("+pdl", "")
    print(f"| {m} | {n}x{K} | {n*K/1e6:.1f} | {gm(x):.3f} | {gm(y):.3f} | {gm([B[k][0]/A[k][0] for k in keys]):.3f} | {cfg(keys[0])} / {cfg(keys[-1])} |")
print(f"| all ({len(ra)} points) | | | {gm(ra):.3f} | {gm(rb):.3f} | | |")
print("\nweights >= 16 MB: TB/s = N*K bytes / time (us), M=1,4..64:", a, "/", b, "/ cuBLASLt")
for m in mods:
    k0 = [k for k in B if k[0] == m][0]
    if B[k0][3] * B[k0][4] < 16e6: continue
    for M in [1] + ms:
        k = (m, M)
        if k in B and k in A and k in cubA:
            w = B[k][3] * B[k][4] / 1e6
            print(f"  {m} M={M}: {w/A[k][0]:.2f} / {w/B[k][0]:.2f} / {w/cubA[k][0]:.2f} TB/s  ({A[k][0]:.2f} / {B[k][0]:.2f} / {cubA[k][0]:.2f} us)")
