# Times each NVML call the profiler makes around a point (median of 200 calls, µs) and prints what the
# violation counters say, through ctypes against the driver's libnvidia-ml.so.1.
import ctypes, statistics, time
nvml = ctypes.CDLL("libnvidia-ml.so.1")
assert nvml.nvmlInit_v2() == 0
dev = ctypes.c_void_p()
assert nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(dev)) == 0
u = ctypes.c_uint()
class Violation(ctypes.Structure):
    _fields_ = [("ref", ctypes.c_ulonglong), ("ns", ctypes.c_ulonglong)]
class Field(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint), ("scope", ctypes.c_uint), ("ts", ctypes.c_longlong),
                ("lat", ctypes.c_longlong), ("vt", ctypes.c_int), ("ret", ctypes.c_int), ("v", ctypes.c_ulonglong)]
v = Violation()
fields2 = (Field * 2)(); fields2[0].id = 74; fields2[1].id = 75
fields1 = (Field * 1)(); fields1[0].id = 74
calls = {
    "ClockInfo(SM)": lambda: nvml.nvmlDeviceGetClockInfo(dev, 1, ctypes.byref(u)),
    "Temperature": lambda: nvml.nvmlDeviceGetTemperature(dev, 0, ctypes.byref(u)),
    "PowerUsage": lambda: nvml.nvmlDeviceGetPowerUsage(dev, ctypes.byref(u)),
    "ViolationStatus(POWER)": lambda: nvml.nvmlDeviceGetViolationStatus(dev, 0, ctypes.byref(v)),
    "ViolationStatus(THERMAL)": lambda: nvml.nvmlDeviceGetViolationStatus(dev, 1, ctypes.byref(v)),
    "FieldValues(74)": lambda: nvml.nvmlDeviceGetFieldValues(dev, 1, fields1),
    "FieldValues(74,75)": lambda: nvml.nvmlDeviceGetFieldValues(dev, 2, fields2),
    "EnforcedPowerLimit": lambda: nvml.nvmlDeviceGetEnforcedPowerLimit(dev, ctypes.byref(u)),
}
for name, call in calls.items():
    times = []
    for _ in range(200):
        t = time.perf_counter(); rc = call(); times.append((time.perf_counter() - t) * 1e6)
    print(f"{name:28s} rc={rc} median {statistics.median(times):9.1f} us  max {max(times):9.1f} us")
for policy in (0, 1):
    nvml.nvmlDeviceGetViolationStatus(dev, policy, ctypes.byref(v)); print("violation", policy, v.ref, v.ns)
nvml.nvmlDeviceGetFieldValues(dev, 2, fields2)
for f in fields2: print("field", f.id, "ret", f.ret, "type", f.vt, "ts", f.ts, "value", f.v, "latency", f.lat)
# How often the counters move: 40 readings 1 ms apart.
prev = None
for _ in range(40):
    nvml.nvmlDeviceGetViolationStatus(dev, 0, ctypes.byref(v))
    if prev: print("dref_us", v.ref - prev[0], "dns", v.ns - prev[1])
    prev = (v.ref, v.ns); time.sleep(0.001)
