import csv, sys, statistics as st
d = sys.argv[1]
P = [dict((k, int(v)) for k, v in r.items()) for r in csv.DictReader(open(f"{d}/nvml_poll.csv"))]
E = [(int(r["start_ns"]), float(r["duration_us"])) for r in csv.DictReader(open(f"{d}/matmul_events.csv"))]
def q(x, p): x = sorted(x); return x[min(len(x) - 1, int(p * len(x)))]
print("polls", len(P), "span_s", (P[-1]["t_ns"] - P[0]["t_ns"]) / 1e9)
for k in ("clock_call_ns", "reasons_call_ns", "power_call_ns"):
    v = [p[k] for p in P]; print(k, "median", q(v, .5), "p90", q(v, .9), "max", max(v))
gaps = [(P[i + 1]["t_ns"] - P[i]["t_ns"]) / 1e3 for i in range(len(P) - 1)]; print("poll gap us median", q(gaps, .5), "p99", q(gaps, .99))
lo, hi = E[0][0], E[-1][0]
W = [p for p in P if lo + 2e9 <= p["t_ns"] <= hi]   # steady part of the load (after 2 s)
clk = [p["sm_clock_mhz"] for p in W]
ch = [i for i in range(1, len(W)) if W[i]["sm_clock_mhz"] != W[i - 1]["sm_clock_mhz"]]
print("under load (after 2 s): polls", len(W), "clock min/median/max", min(clk), q(clk, .5), max(clk), "distinct", sorted(set(clk)))
print("clock changes", len(ch), "per second", len(ch) / ((W[-1]["t_ns"] - W[0]["t_ns"]) / 1e9))
runs = []; last = W[0]["t_ns"]
for i in ch: runs.append((W[i]["t_ns"] - last) / 1e6); last = W[i]["t_ns"]
if runs: print("time between clock changes ms: median", q(runs, .5), "p10", q(runs, .1), "p90", q(runs, .9))
val_changes = [i for i in range(1, len(W)) if W[i]["power_mw"] != W[i - 1]["power_mw"]]
print("power changes per s", len(val_changes) / ((W[-1]["t_ns"] - W[0]["t_ns"]) / 1e9), "power W median", q([p["power_mw"] for p in W], .5) / 1e3)
print("reasons distinct", sorted(set(hex(p["reasons"]) for p in W)))
# line matmuls up with the clock polled during them
import bisect
ts = [p["t_ns"] for p in P]
pairs = []
for s, dur in E:
    if s < lo + 2e9: continue
    i, j = bisect.bisect_left(ts, s), bisect.bisect_right(ts, s + dur * 1e3)
    if j > i: pairs.append((dur, st.mean(P[k]["sm_clock_mhz"] for k in range(i, j)), min(P[k]["sm_clock_mhz"] for k in range(i, j))))
du = [p[0] for p in pairs]; mc = [p[1] for p in pairs]
print("matmuls (steady)", len(pairs), "us min/median/max", min(du), q(du, .5), max(du))
if len(set(mc)) > 1: print("corr(duration, mean polled clock)", round(st.correlation(du, mc), 3), "corr(duration, 1/clock)", round(st.correlation(du, [1 / c for c in mc]), 3))
slow = sorted(pairs)[-10:]; fast = sorted(pairs)[:10]
print("fastest (us, mean clk, min clk)", [(round(a), round(b), c) for a, b, c in fast])
print("slowest (us, mean clk, min clk)", [(round(a), round(b), c) for a, b, c in slow])
