#!/usr/bin/env python3
"""Kernel timing (CUPTI activity durations) against Nsight Compute's gpu__time_duration.

Reads the folder bench/own_kernels_device_run.sh's step ncu_kernel writes: for each point
`<tag>.kernel/` (a `profile --timing kernel` output folder) and `<tag>.ncu.csv` (ncu's CSV for
the same GEMM, every launch of it). One launch's ncu duration is the sum of the durations of
all kernels it ran (a split-K reduction included) divided by the launches of its main kernel.
Prints one row per point and the gap in us and %, because ncu's duration holds a fixed part
of the launch (front-end work before the grid starts), so the relative gap shrinks with size.
  bench/ncu_vs_kernel_timing.py FOLDER
"""
import csv
import glob
import os
import statistics
import sys

UNIT_TO_US = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}
AUXILIARY = ("splitkreduce", "reduce_kernel", "memset")  # kernels that ride along a main kernel


def ncu_launch_us(path):
    durations, mains = [], 0
    with open(path, newline="") as f:
        lines = [line for line in f if line.startswith('"')]  # ncu prints its own log lines too
    for row in csv.DictReader(lines):
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        value = float(row["Metric Value"].replace(",", "")) * UNIT_TO_US[row["Metric Unit"]]
        durations.append(value)
        if not any(a in row["Kernel Name"].lower() for a in AUXILIARY):
            mains += 1
    if not mains:
        return None, 0
    return sum(durations) / mains, mains


def kernel_mode_us(folder):
    for path in glob.glob(os.path.join(folder, "*.csv")):
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                if row.get("status") == "ok":
                    return float(row["kernel_time"]), row.get("launched", "")
    return None, ""


def main():
    folder = sys.argv[1]
    print(f"{'point':<48} {'kernel us':>10} {'ncu us':>9} {'launches':>8} {'gap us':>8} {'gap %':>7}")
    gaps = []
    for ncu_csv in sorted(glob.glob(os.path.join(folder, "*.ncu.csv"))):
        tag = os.path.basename(ncu_csv)[: -len(".ncu.csv")]
        ours, _ = kernel_mode_us(os.path.join(folder, tag + ".kernel"))
        theirs, launches = ncu_launch_us(ncu_csv)
        if ours is None or theirs is None:
            print(f"{tag:<48} {'-' if ours is None else f'{ours:.2f}':>10} {'-' if theirs is None else f'{theirs:.2f}':>9}")
            continue
        gap = theirs - ours
        gaps.append((ours, gap))
        print(f"{tag:<48} {ours:>10.2f} {theirs:>9.2f} {launches:>8} {gap:>8.2f} {100 * gap / ours:>6.1f}%")
    if gaps:
        print(f"median gap {statistics.median(g for _, g in gaps):.2f} us; within 5%: "
              f"{sum(abs(g) <= 0.05 * t for t, g in gaps)} of {len(gaps)}; "
              f"within 5% above 40 us: {sum(abs(g) <= 0.05 * t for t, g in gaps if t >= 40)} of "
              f"{sum(t >= 40 for t, _ in gaps)}")


if __name__ == "__main__":
    main()
