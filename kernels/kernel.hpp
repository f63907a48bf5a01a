// The contract between the profiler and every GEMM implementation (CPU, CUDA or HIP).
//
// A kernel entry opens a session for one weight shape (N, K, batch_count); the
// session prepares the weights once (quantize, scales, pre-shuffle: never timed)
// and then prepares activations for each M of a sweep. The measurement core in
// profiler/ only ever calls PreparedGemm::run() inside its timed region.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/block_format.hpp"

namespace shapescope {
struct KernelCounters;  // common/kernel_counters.hpp
}  // namespace shapescope

namespace shapescope::kernels {

enum class BackendKind { cpu, cuda, hip };
std::string to_string(BackendKind kind);

struct WeightShape {
  int64_t n = 0;
  int64_t k = 0;
  int64_t batch_count = 1;  // >1 for batched GEMMs (e.g. absorbed MLA heads)
  // The format the session runs, one of its entry's formats_taken (a kernel taking one format may ignore it).
  BlockFormatId format = BlockFormatId::fp8_blockscale;
};

struct GemmShape {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t batch_count = 1;
  double flops() const { return 2.0 * double(m) * double(n) * double(k) * double(batch_count); }
};

// Result of comparing a kernel's output with the float64 reference on the
// dequantized operands (on a deterministic sample of elements for large outputs).
struct CheckResult {
  double rel_err = 0;            // ||out - ref|| / ||ref|| over the checked elements
  int64_t elements_checked = 0;
  int64_t unwritten = 0;         // elements still holding the poison pattern
  bool passed(double threshold) const { return unwritten == 0 && rel_err <= threshold && rel_err == rel_err; }
};

// The rel_err above which a kernel's output counts as wrong (status numerical_fail), unless a caller sets
// its own threshold.
inline constexpr double kCheckThreshold = 1e-2;

// One prepared problem: activations and output for one M, weights shared with the session.
class PreparedGemm {
 public:
  virtual ~PreparedGemm() = default;
  // Enqueue one GEMM (asynchronous on CUDA, blocking on the CPU).
  virtual void run() = 0;
  // Poison the output, run once, synchronize and compare against the float64 reference.
  virtual CheckResult check() = 0;
  // check() in two steps, so the comparison (host work, milliseconds) can run on another thread while the
  // device is timed: poison, run and read the sampled outputs now, compare when the returned function is
  // called (it needs nothing of this object). The default checks at once.
  virtual std::function<CheckResult()> begin_check() {
    return [result = check()] { return result; };
  }
  // The kernel or configuration that actually ran (the CSV's kernel_name column).
  virtual std::string launch_name() const = 0;
  // Fewest bytes one run must move through memory: each operand read once, output written once.
  virtual double min_bytes() const = 0;
};

// Thrown by GemmSession::prepare when only the library can judge a shape and it
// refuses it (cuBLASLt answering NOT_SUPPORTED for M = 1..3): the point gets
// status "unsupported" with what() as its note, never a crash.
class UnsupportedShape : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Weights prepared once for a (N, K, batch_count); activations prepared per M.
class GemmSession {
 public:
  virtual ~GemmSession() = default;
  // Device bytes needed for an M on top of the weights (to skip an M that cannot fit).
  virtual std::size_t activation_bytes(int64_t m) const = 0;
  virtual std::unique_ptr<PreparedGemm> prepare(int64_t m, uint64_t seed) = 0;
};

// The GPU clock state at one moment (when the device can tell).
struct ClockSample {
  double sm_clock_mhz = 0;
  double temperature_c = 0;
  double power_w = 0;
};

struct DeviceInfo {
  std::string name;             // e.g. "NVIDIA H200"
  std::string backend;          // cpu | cuda | hip
  int multiprocessors = 0;      // SMs (or CPU cores)
  std::size_t l2_bytes = 0;
  std::size_t memory_bytes = 0;
  std::string driver_version;
  std::string runtime_version;
  double max_sm_clock_mhz = 0;
  std::string uuid;             // GPU: "GPU-<uuid>" as nvidia-smi prints it, stable across CUDA_VISIBLE_DEVICES; CPU: ""
  double copy_tb_per_s = 0;     // GPU: measured device-to-device copy, bytes read + written; 0 when unknown
};

// How a sample is timed (the CSV's `timing` column):
//   events: one run after the cache flush, event to event (what a lone cold launch costs);
//   graph:  R runs over R distinct operand sets captured once and replayed as one unit,
//           per-run time = replay time / R (what a serving engine's CUDA graph pays);
//   kernel: the GPU durations of every kernel a run launches, summed (what a profiler reports).
enum class TimingMode { events, graph, kernel };
std::string to_string(TimingMode mode);
// Throws UserError naming the valid modes.
TimingMode parse_timing_mode(const std::string& text);

// Times one region of device work.
class Timer {
 public:
  virtual ~Timer() = default;
  virtual void start() = 0;
  virtual void stop() = 0;
  virtual double elapsed_us() = 0;  // waits for the region to finish
  // What the last region launched ("name; name"), where the timer can tell; else "".
  virtual std::string launched() const { return ""; }
};

// A fixed sequence of runs captured once and replayed as one unit (a CUDA graph on
// the GPU): no launch gaps between them. Destroy it before any of its runs.
class RunSequence {
 public:
  virtual ~RunSequence() = default;
  // Replays the whole sequence once; µs from its start to its end.
  virtual double replay_us() = 0;
};

// Hardware counters of one run (GPU profiling counters; common/kernel_counters.hpp).
class CounterSession {
 public:
  virtual ~CounterSession() = default;
  // Runs `run` once per counter pass and returns the metrics summed (ratios duration-weighted)
  // over every kernel it launched. `before_each_pass` runs before every pass, outside what is
  // counted: there the caller leaves the cache and the device as each pass must find them (the
  // counter pass flushes and waits for cold counts), so no pass counts work done before it,
  // such as the write-back of lines an earlier pass or the operand fills left dirty. A metric
  // the device lacks is NaN and named in `missing`; m, min_bytes and kernels are the caller's.
  virtual KernelCounters collect(PreparedGemm& run, const std::function<void()>& before_each_pass) = 0;
};

// Where kernels run: timers, cache flushing, clocks, memory.
class Device {
 public:
  virtual ~Device() = default;
  virtual BackendKind kind() const = 0;
  virtual DeviceInfo info() const = 0;
  virtual std::unique_ptr<Timer> make_timer() = 0;
  // Evict operands from the last-level cache so the next run reads them from memory.
  virtual void flush_cache() = 0;
  virtual void synchronize() = 0;
  virtual std::size_t free_memory_bytes() const = 0;
  virtual std::optional<ClockSample> sample_clock() const = 0;
  // `runs` in order as one replayable unit (they must outlive it).
  virtual std::unique_ptr<RunSequence> capture(const std::vector<PreparedGemm*>& runs) = 0;
  // A timer of the GPU durations of the kernels a region launches; throws
  // std::runtime_error saying what is missing where it cannot (no CUPTI, say).
  virtual std::unique_ptr<Timer> make_kernel_timer() = 0;
  // A run that launches one empty kernel: the floor each timing mode adds to every run.
  virtual std::unique_ptr<PreparedGemm> empty_run() = 0;
  // Lets kernels that support it launch with programmatic dependent launch, so one GEMM's
  // prologue overlaps the previous one's tail (graph timing turns it on; a no-op on the CPU).
  virtual void set_programmatic_launch(bool on) { (void)on; }
  // Hardware counters, where the device has them (null: none, as on the CPU). Throws
  // std::runtime_error with one line where they exist but cannot be used (no libcupti,
  // counters not permitted to this user).
  virtual std::unique_ptr<CounterSession> counters() { return nullptr; }
};

// The launch configuration a kernel's heuristic picks for a shape, written as the profile's columns
// (tile_m, tile_n, cluster_m, cluster_n, cluster_k, split_k, as CUTLASS's profiler reports them) so that
// analysis reads the tile rather than parsing kernel names. 0: the kernel does not say.
struct KernelConfig {
  int tile_m = 0, tile_n = 0;                       // the output tile one CTA computes: rows of M x columns of N
  int cluster_m = 0, cluster_n = 0, cluster_k = 0;  // CTAs per thread-block cluster along M, N and K
  int split_k = 0;                                  // CTAs sharing one output tile along K (1: no split)
  // One CTA per output tile: no cluster, no split-K.
  static KernelConfig plain_tile(int tile_m, int tile_n) { return {tile_m, tile_n, 1, 1, 1, 1}; }
};

// What names a kernel and its operands: the fields dense (KernelEntry) and grouped (GroupedKernelEntry)
// entries share, filled in one designated initializer.
struct KernelIdentity {
  std::string name;          // registry key, e.g. "cublaslt_fp8_blockscale"
  BackendKind backend = BackendKind::cpu;
  std::string dtype;         // the MFU peak class: "bf16", "fp8", ...
  std::string formats;       // operand formats, e.g. "A e4m3 1x128 f32 scales, B e4m3 128x128 f32 scales, C bf16"
  // The named formats a session can run (WeightShape::format), the first its own: a sweep runs a kernel in
  // the layer's format where it takes it, else in its first.
  std::vector<BlockFormatId> formats_taken;
  std::string description;
};

// The reason a kernel cannot run a shape, or nothing; the default of an entry that runs every shape.
template <typename Shape>
std::optional<std::string> runs_every_shape(const Shape&) {
  return std::nullopt;
}

struct KernelEntry : KernelIdentity {
  KernelEntry() = default;
  explicit KernelEntry(KernelIdentity identity) : KernelIdentity(std::move(identity)) {}

  bool batched = false;      // true when the kernel runs batch_count > 1
  // False for a kernel profiled only when named with --kernel (a slow correctness baseline).
  bool profiled_by_default = true;
  // Empty when the kernel can run this shape, else why not ("K=100 is not a multiple of 128").
  std::function<std::optional<std::string>(const GemmShape&)> unsupported_reason = runs_every_shape<GemmShape>;
  // Why the current GPU cannot run this kernel at all (a compute capability it lacks), or nothing; unset for
  // kernels that run wherever their backend does. A sweep that names such a kernel stops on it before any work.
  std::function<std::optional<std::string>()> device_problem;
  // The configuration the heuristic picks for a shape (listed by `profile --list-kernels`).
  std::function<std::string(const GemmShape&)> describe_config;
  // The launch configuration the heuristic picks (every profile row records it); unset: unknown.
  std::function<KernelConfig(const GemmShape&)> config_for;
  std::function<std::unique_ptr<GemmSession>(Device&, const WeightShape&, uint64_t seed)> open;
};

// All kernels compiled into this binary, in registration order.
const std::vector<KernelEntry>& kernel_registry();
// Throws UserError listing the valid names when `name` is unknown.
const KernelEntry& find_kernel(const std::string& name);
// Registering a name again replaces its entry, so backends' register_*() calls are idempotent.
void register_kernel(KernelEntry entry);

// Backend registration hooks (explicit, so static libraries keep them).
void register_cpu_kernels();
void register_cuda_kernels();  // no-op when built without CUDA
bool cuda_backend_compiled();

// Devices: the CPU always exists; the CUDA device exists when compiled in and a GPU is present.
std::unique_ptr<Device> make_cpu_device(int threads);
std::unique_ptr<Device> make_cuda_device();  // nullptr when no GPU (reason via cuda_unavailable_reason)
std::string cuda_unavailable_reason();
int cuda_device_count();  // GPUs this process can see (0 without CUDA)

// The HIP backend (AMD GPUs), built with -DSHAPESCOPE_HIP=ON|AUTO; the same hooks as CUDA's.
void register_hip_kernels();  // no-op when built without HIP
bool hip_backend_compiled();
std::unique_ptr<Device> make_hip_device();  // nullptr when no AMD GPU (reason via hip_unavailable_reason)
std::string hip_unavailable_reason();

}  // namespace shapescope::kernels
