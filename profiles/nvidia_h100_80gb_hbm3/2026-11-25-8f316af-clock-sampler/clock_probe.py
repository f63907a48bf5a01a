# Step-1 probe: does NVML's SM clock move within a point's window at the power cap?
# poller (child process): polls nvmlDeviceGetClockInfo(SM) (+ event reasons, power) every ~0.5 ms, timestamped
# (CLOCK_MONOTONIC, shared with the parent); parent: bf16 matmul 14336x4096x14000 in a loop with a CUDA event
# around each, so per-matmul GPU time can be lined up against the polled clock.
import ctypes, sys, time, os, json, subprocess

def poller(out_path, seconds, period_s):
    nv = ctypes.CDLL("libnvidia-ml.so.1")
    assert nv.nvmlInit_v2() == 0
    dev = ctypes.c_void_p()
    assert nv.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(dev)) == 0
    clk = ctypes.c_uint(); rs = ctypes.c_ulonglong(); pw = ctypes.c_uint()
    reasons_fn = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) or nv.nvmlDeviceGetCurrentClocksThrottleReasons
    rows = []
    end = time.monotonic_ns() + int(seconds * 1e9)
    nxt = time.monotonic_ns()
    while True:
        t0 = time.monotonic_ns()
        if t0 > end: break
        r1 = nv.nvmlDeviceGetClockInfo(dev, 1, ctypes.byref(clk)); t1 = time.monotonic_ns()
        r2 = reasons_fn(dev, ctypes.byref(rs)); t2 = time.monotonic_ns()
        r3 = nv.nvmlDeviceGetPowerUsage(dev, ctypes.byref(pw)); t3 = time.monotonic_ns()
        rows.append((t0, t1 - t0, clk.value if r1 == 0 else -1, t2 - t1, rs.value if r2 == 0 else -1, t3 - t2, pw.value if r3 == 0 else -1))
        nxt += int(period_s * 1e9)
        d = nxt - time.monotonic_ns()
        if d > 0: time.sleep(d / 1e9)
        else: nxt = time.monotonic_ns()
    with open(out_path, "w") as f:
        f.write("t_ns,clock_call_ns,sm_clock_mhz,reasons_call_ns,reasons,power_call_ns,power_mw\n")
        for r in rows: f.write(",".join(map(str, r)) + "\n")

def main(outdir):
    import torch
    poll_csv = os.path.join(outdir, "nvml_poll.csv")
    period = float(os.environ.get("POLL_PERIOD_S", "0.0005"))
    total = 1.0 + 8.0 + 1.5
    child = subprocess.Popen([sys.executable, __file__, "poll", poll_csv, str(total), str(period)])
    time.sleep(1.0)  # idle baseline
    a = torch.randn(14000, 4096, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(4096, 14336, device="cuda", dtype=torch.bfloat16)
    c = a @ b; torch.cuda.synchronize()
    base = torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize(); host0 = time.monotonic_ns(); base.record(); torch.cuda.synchronize(); host1 = time.monotonic_ns()
    evs = []
    t_end = time.monotonic() + 8.0
    while time.monotonic() < t_end:
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record(); torch.matmul(a, b, out=c); e.record(); evs.append((s, e))
    torch.cuda.synchronize()
    with open(os.path.join(outdir, "matmul_events.csv"), "w") as f:
        f.write("start_ns,duration_us\n")
        anchor = (host0 + host1) // 2
        for s, e in evs:
            f.write(f"{anchor + int(base.elapsed_time(s) * 1e6)},{s.elapsed_time(e) * 1e3:.2f}\n")
    child.wait()

if __name__ == "__main__":
    if sys.argv[1] == "poll": poller(sys.argv[2], float(sys.argv[3]), float(sys.argv[4]))
    else: main(sys.argv[1])
