# Over the probe's steady load (after its first 2 s): how well the polled SM clock explains each matmul's time when
# read `lag` ms after the matmul's middle, when the value changes (phase on a 100 ms grid), and the time x clock
# product within each clock value. Run from this folder: python3 probe_lag.py
import bisect, csv, lzma, statistics as st

P = [(int(r["t_ns"]), int(r["sm_clock_mhz"])) for r in csv.DictReader(lzma.open("probe/nvml_poll.csv.xz", "rt"))]
E = [(int(r["start_ns"]), float(r["duration_us"])) for r in csv.DictReader(lzma.open("probe/matmul_events.csv.xz", "rt"))]
E = [e for e in E if e[0] >= E[0][0] + 2e9]
ts = [t for t, _ in P]


def clock_at(t):
    return P[max(bisect.bisect_right(ts, t) - 1, 0)][1]


durations = [d for _, d in E]
for lag_ms in (-100, -50, 0, 20, 50, 100, 200):
    clocks = [clock_at(s + d * 500 + lag_ms * 1e6) for s, d in E]
    print(f"lag {lag_ms:+4d} ms: corr(duration, 1/clock) {st.correlation(durations, [1 / c for c in clocks]):.3f}")
changes = [P[i][0] for i in range(1, len(P)) if P[i][1] != P[i - 1][1]]
phases = sorted(((c - P[0][0]) / 1e6) % 100 for c in changes)
print(f"{len(changes)} clock changes, phase on a 100 ms grid {phases[0]:.1f} to {phases[-1]:.1f} ms")
by_clock = {}
for s, d in E:
    by_clock.setdefault(clock_at(s + d * 500 + 50e6), []).append(d)
for clock in sorted(by_clock):
    g = sorted(by_clock[clock])
    if len(g) > 20:
        print(f"{clock} MHz: {len(g)} matmuls, median {st.median(g):.0f} us (p5 {g[len(g) // 20]:.0f}, p95 "
              f"{g[-len(g) // 20]:.0f}), median x clock {st.median(g) * clock / 1e6:.3f}")
