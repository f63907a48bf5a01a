#!/usr/bin/env python3
"""Summarize a clock-probed sweep: the probe clock against NVML's, a point's slowness against its neighbours
against its probe clock against theirs, and the per-M medians with and without probes.
Usage: probe_summary.py PROBED.csv [UNPROBED.csv PROBED_SAME_RANGE.csv]"""
import csv, statistics as st, sys

def load(path):
    return {int(r['m']): r for r in csv.DictReader(open(path))}

def f(r, k):
    return float(r[k]) if r[k] else None

def corr(x, y):
    mx, my = st.mean(x), st.mean(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    return sxy / (sum((a - mx) ** 2 for a in x) * sum((b - my) ** 2 for b in y)) ** 0.5

def q(v, p):
    v = sorted(v); return v[min(len(v) - 1, int(p * len(v)))]

rows = load(sys.argv[1]); ms = sorted(rows)
probe = {m: f(rows[m], 'sm_clock_sampled_mean_mhz') for m in ms}
low = {m: f(rows[m], 'sm_clock_sampled_min_mhz') for m in ms}
nvml = {m: min(f(rows[m], 'sm_clock_mhz'), f(rows[m], 'sm_clock_end_mhz')) for m in ms}
per_row = {m: f(rows[m], 'kernel_time') / m for m in ms}
have = [m for m in ms if probe[m]]
print(f'{len(ms)} points, {len(have)} with probes')
print(f'probe mean clock {min(probe[m] for m in have):.0f}-{max(probe[m] for m in have):.0f} MHz (median '
      f'{st.median(probe[m] for m in have):.0f}); lowest probe median {st.median(low[m] for m in have):.0f}; '
      f'NVML (lower end) {min(nvml.values()):.0f}-{max(nvml.values()):.0f} (median {st.median(nvml.values()):.0f})')
d = [probe[m] / nvml[m] - 1 for m in have]
print(f'probe mean / NVML lower end - 1: median {100*st.median(d):+.1f}%, p10 {100*q(d,.1):+.1f}%, p90 {100*q(d,.9):+.1f}%')
# Against the 12 neighbours (6 each side).
slow, clk, clk_low, clk_nvml, tc = [], [], [], [], []
for i, m in enumerate(have):
    nb = [have[j] for j in range(max(0, i - 6), min(len(have), i + 7)) if j != i]
    slow.append(per_row[m] / st.median(per_row[n] for n in nb) - 1)
    clk.append(st.median(probe[n] for n in nb) / probe[m] - 1)
    clk_low.append(st.median(low[n] for n in nb) / low[m] - 1)
    clk_nvml.append(st.median(nvml[n] for n in nb) / nvml[m] - 1)
    tc.append(per_row[m] * probe[m] / st.median(per_row[n] * probe[n] for n in nb) - 1)
print(f'slowness vs neighbours against their probe mean clock over its own: correlation {corr(slow, clk):.2f} '
      f'(lowest probe {corr(slow, clk_low):.2f}, NVML lower end {corr(slow, clk_nvml):.2f})')
print(f'spread of the slowness (p90-p10): time per row {100*(q(slow,.9)-q(slow,.1)):.1f}%, '
      f'time per row x probe clock {100*(q(tc,.9)-q(tc,.1)):.1f}%')
slow4 = [i for i, s in enumerate(slow) if s >= 0.04]
expl = [i for i in slow4 if clk[i] >= 0.5 * slow[i]]
print(f'{len(slow4)} points >=4% slower per row than their neighbours; for {len(expl)} the probe clock is lower by at '
      f'least half of it; their clock deficit median {100*st.median(clk[i] for i in slow4) if slow4 else 0:.1f}% '
      f'vs slowness median {100*st.median(slow[i] for i in slow4) if slow4 else 0:.1f}%')
for i in slow4[:12]:
    m = have[i]
    print(f'  M={m}: {100*slow[i]:+.1f}% per row, probe mean {probe[m]:.0f} (lowest {low[m]:.0f}) vs neighbours '
          f'{probe[m]*(1+clk[i]):.0f} MHz, NVML {nvml[m]:.0f}')
if len(sys.argv) == 4:
    off, on = load(sys.argv[2]), load(sys.argv[3])
    both = sorted(set(off) & set(on))
    r = [f(on[m], 'kernel_time') / f(off[m], 'kernel_time') - 1 for m in both]
    print(f'perturbation over {len(both)} M: median time with probes {st.median(f(on[m],"kernel_time") for m in both):.1f} '
          f'us, without {st.median(f(off[m],"kernel_time") for m in both):.1f} us; per-M ratio - 1 median '
          f'{100*st.median(r):+.2f}% (p10 {100*q(r,.1):+.1f}%, p90 {100*q(r,.9):+.1f}%)')
    with open(sys.argv[3].rsplit('/', 2)[0] + '/per_m_with_and_without_probes.csv', 'w') as out:
        out.write('m,median_us_with_probes,median_us_without,probe_mean_mhz,nvml_start_with,nvml_start_without\n')
        for m in both:
            out.write(f'{m},{on[m]["kernel_time"]},{off[m]["kernel_time"]},{on[m]["sm_clock_sampled_mean_mhz"]},'
                      f'{on[m]["sm_clock_mhz"]},{off[m]["sm_clock_mhz"]}\n')
