# What the sampled clock columns of the cuBLASLt bf16 profile here add to the start and end readings, and whether a
# point's time against its neighbours' follows its clock against theirs. Run from this folder.
import csv, statistics as st

R = list(csv.DictReader(open("sampled/llama3_8b_gate_up_proj_tp2_N14336_K4096_cublaslt_bf16.csv")))
t = [float(r["kernel_time"]) / int(r["m"]) for r in R]
start = [float(r["sm_clock_mhz"]) for r in R]
ends = [min(float(r["sm_clock_mhz"]), float(r["sm_clock_end_mhz"])) for r in R]
mean = [float(r["sm_clock_sampled_mean_mhz"]) for r in R]
low = [float(r["sm_clock_sampled_min_mhz"]) for r in R]
print(f"{len(R)} points; sampled mean {min(mean):.0f}-{max(mean):.0f} MHz; start and end readings differ at "
      f"{sum(r['sm_clock_mhz'] != r['sm_clock_end_mhz'] for r in R)}; the sampled mean differs from the lower end "
      f"reading at {sum(abs(m - e) > 1 for m, e in zip(mean, ends))}; a reading below both ends at "
      f"{sum(l < e for l, e in zip(low, ends))}")
tight = [i for i, r in enumerate(R) if int(r["samples"]) <= 8]
print(f"{len(tight)} points of at most 8 samples; the sampled mean differs from the lower end reading at "
      f"{sum(abs(mean[i] - ends[i]) > 1 for i in tight)}")


def local(v, i):
    return st.median(v[j] for j in range(max(0, i - 6), min(len(v), i + 7)) if j != i)


slower = [t[i] / local(t, i) for i in range(len(R))]
for name, clock in (("sampled mean", mean), ("lower end reading", ends), ("start reading", start)):
    faster_clock = [local(clock, i) / clock[i] for i in range(len(R))]
    print(f"corr(time / neighbours' median, neighbours' {name} / its own): {st.correlation(slower, faster_clock):.3f}")
print("points 4% or more slower per row than the median of their 12 neighbours:",
      sum(s >= 1.04 for s in slower))
