"""Summary of device_run.sh's profiles: statuses per file, the issue's expectations for torch._scaled_mm
(K=256 and K=2304 rows numerical_fail, every other row ok and within 5% of cublaslt_fp8_blockscale in kernel
timing), and analyze --compare for each shape.   python3 summarize_device_run.py PROFILES_DIR ANALYZE_BINARY"""
import collections
import csv
import glob
import os
import subprocess
import sys

FAIL_K = {256, 2304}  # PyTorch 2.11's block-scaled _scaled_mm is silently wrong when ceil(K/128) % 4 != 0 here
TOLERANCE = 0.05


def read(path):
    with open(path) as file:
        return list(csv.DictReader(file))


def main(root, analyze):
    problems = []
    for path in sorted(glob.glob(os.path.join(root, "**", "*.csv"), recursive=True)):
        rows = read(path)
        counts = collections.Counter(row["status"] for row in rows)
        print(f"{os.path.relpath(path, root)}: {len(rows)} rows, " + ", ".join(f"{s} {n}" for s, n in sorted(counts.items())))
        for row in rows:
            if row["status"] not in ("ok", "throttled", "numerical_fail"):
                print(f"    M={row['batch']} {row['status']}: {row['note']}")

    print("\ntorch._scaled_mm expectations (kernel timing vs cublaslt_fp8_blockscale):")
    for ours in sorted(glob.glob(os.path.join(root, "scaled_mm", "*_torch_scaled_mm_kernel.csv"))):
        theirs = ours.replace("_torch_scaled_mm_kernel.csv", "_cublaslt_fp8_blockscale_kernel.csv")
        base = {row["batch"]: row for row in read(theirs)} if os.path.exists(theirs) else {}
        for path in [ours] + [ours.replace("_kernel.csv", s) for s in ("_graph.csv", ".csv")]:
            if not os.path.exists(path):
                continue
            for row in read(path):
                k = int(row["k"])
                expected = "numerical_fail" if k in FAIL_K else "ok"
                if row["status"] != expected and not (expected == "ok" and row["status"] == "throttled"):
                    problems.append(f"{os.path.basename(path)} M={row['batch']}: {row['status']} "
                                    f"(expected {expected}; rel_err {row['rel_err']}; {row['note']})")
        ratios = []
        for row in read(ours):
            other = base.get(row["batch"])
            if int(row["k"]) in FAIL_K or row["status"] != "ok" or not other or other["status"] != "ok":
                continue
            ratio = float(row["kernel_time"]) / float(other["kernel_time"])
            ratios.append(ratio)
            if abs(ratio - 1) > TOLERANCE:
                problems.append(f"{os.path.basename(ours)} M={row['batch']}: {ratio:.3f}x cublaslt_fp8_blockscale's "
                                f"kernel time ({row['kernel_time']} vs {other['kernel_time']} us)")
        if ratios:
            print(f"  {os.path.basename(ours)}: {len(ratios)} M compared, time ratio {min(ratios):.3f}..{max(ratios):.3f}")
        if os.path.exists(theirs):
            result = subprocess.run([analyze, "--compare", theirs, ours], capture_output=True, text=True)
            print("    " + "\n    ".join(result.stdout.strip().splitlines()[:3]))
    print("\nexpectations not met:" if problems else "\nevery expectation met")
    for problem in problems:
        print("  " + problem)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
