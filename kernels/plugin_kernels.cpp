#include "kernels/plugin_kernels.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <csetjmp>
#include <csignal>
#include <cstring>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "common/user_error.hpp"
#include "kernels/entry_registry.hpp"
#include "kernels/operand_format.hpp"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels {

namespace {

// The formats a plugin may declare: the operands shapescope generates for each, its math class (`dtype`, the MFU
// peak) and the first ABI version that names it.
struct AbiFormat {
  int32_t value;
  const char* name;  // as the Python entry point's --operand-format names it
  OperandFormat operands;
  const char* dtype;
  uint32_t since_version;
};
constexpr AbiFormat kAbiFormats[] = {
    {SHAPESCOPE_FORMAT_BF16, "bf16", OperandFormat::bf16, "bf16", 1},
    {SHAPESCOPE_FORMAT_FP8_BLOCKSCALE, "fp8_blockscale", OperandFormat::fp8_blockscale, "fp8", 1},
    {SHAPESCOPE_FORMAT_A16W8_BLOCKSCALE, "a16w8_blockscale", OperandFormat::a16w8_blockscale, "a16w8", 1},
    {SHAPESCOPE_FORMAT_MXFP8, "mxfp8", OperandFormat::mxfp8, "fp8", 2},
    {SHAPESCOPE_FORMAT_A16W4_MXFP4, "mxfp4", OperandFormat::a16w4_mxfp4, "bf16", 2},
    {SHAPESCOPE_FORMAT_A16W4_NVFP4, "nvfp4", OperandFormat::a16w4_nvfp4, "bf16", 2},
    {SHAPESCOPE_FORMAT_A16W4_E2M1_E8M0_16, "e2m1_e8m0_16", OperandFormat::a16w4_e2m1_e8m0_16, "bf16", 2},
    {SHAPESCOPE_FORMAT_NVFP4, "nvfp4_native", OperandFormat::nvfp4, "fp4", 2},
};

const AbiFormat* abi_format(int32_t value, uint32_t abi_version) {
  for (const AbiFormat& format : kAbiFormats)
    if (format.value == value && format.since_version <= abi_version) return &format;
  return nullptr;
}

std::string abi_formats_text(uint32_t abi_version) {
  std::string text;
  for (const AbiFormat& format : kAbiFormats) {
    if (format.since_version > abi_version) continue;
    text += fmt::format("{}{} {}", text.empty() ? "" : ", ", format.value, format.name);
  }
  return text;
}

std::string formats_text(OperandFormat format, uint32_t flags) {
  if (uses_scale_codes(format)) {
    const OperandEncodings encodings = operand_encodings(format);
    return fmt::format("A {}, B {}, C bf16", describe(encodings.a), describe(encodings.b));
  }
  const std::string a_scales = (flags & SHAPESCOPE_A_SCALES_M_MAJOR) ? "1x128 f32 scales M-major" : "1x128 f32 scales";
  const std::string b_scales =
      (flags & SHAPESCOPE_B_SCALES_K_PADDED_4) ? "128x128 f32 scales, K blocks padded to 4" : "128x128 f32 scales";
  switch (format) {
    case OperandFormat::fp8_blockscale: return fmt::format("A e4m3 {}, B e4m3 {}, C bf16", a_scales, b_scales);
    case OperandFormat::a16w8_blockscale: return fmt::format("A bf16, B e4m3 {}, C bf16", b_scales);
    default: return "A bf16, B bf16, C bf16";
  }
}

bool valid_name(const std::string& name) {
  return !name.empty() && name.size() <= 128 && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '+' || c == '-';
  });
}

std::string text_or(const char* text, const std::string& fallback) { return text && *text ? text : fallback; }

KernelEntry plugin_entry(const std::shared_ptr<PluginKernel>& kernel) {
  KernelEntry entry;
  entry.name = kernel->name;
  entry.backend = kernel->abi.backend == SHAPESCOPE_BACKEND_CUDA ? BackendKind::cuda : BackendKind::cpu;
  entry.dtype = kernel->dtype;
  entry.formats = formats_text(kernel->format, kernel->abi.flags);
  entry.formats_taken = {block_format_of(kernel->format)};
  entry.description = fmt::format("plugin {}: {}", kernel->source, text_or(kernel->abi.description, "(no description)"));
  entry.batched = true;
  entry.unsupported_reason = [format = kernel->format](const GemmShape& shape) -> std::optional<std::string> {
    const OperandEncodings encodings = operand_encodings(format);
    for (const OperandEncoding& encoding : {encodings.a, encodings.b})
      if (std::string problem = k_packing_problem(encoding, shape.k); !problem.empty()) return problem;
    return std::nullopt;
  };
  entry.describe_config = [](const GemmShape&) { return std::string("chosen by the plugin"); };
  entry.open = [kernel](Device& device, const WeightShape& shape, uint64_t seed) -> std::unique_ptr<GemmSession> {
    return device.kind() == BackendKind::cuda ? open_cuda_plugin_session(kernel, device, shape, seed)
                                              : open_cpu_plugin_session(kernel, device, shape, seed);
  };
  return entry;
}

// The crash guard's jump target while a guarded call runs on this thread.
thread_local sigjmp_buf* crash_target = nullptr;
constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};

void on_crash_signal(int signal_number) {
  if (crash_target) siglongjmp(*crash_target, signal_number);
  std::signal(signal_number, SIG_DFL);  // not ours: die as the process would have
  std::raise(signal_number);
}

struct PrepareCall {
  const shapescope_kernel* abi;
  const shapescope_operands* operands;
  void* handle = nullptr;
  int status = 0;
  char error[512] = {};
};

// Runs prepare with the crash handlers installed; returns the signal that stopped it, or 0.
int guarded_prepare(PrepareCall& call) {
  struct sigaction handler {};
  handler.sa_handler = on_crash_signal;
  sigemptyset(&handler.sa_mask);
  struct sigaction previous[std::size(kCrashSignals)];
  for (std::size_t i = 0; i < std::size(kCrashSignals); ++i) sigaction(kCrashSignals[i], &handler, &previous[i]);
  sigjmp_buf target;
  const int caught = sigsetjmp(target, 1);
  if (caught == 0) {
    crash_target = &target;
    call.status = call.abi->prepare(call.operands, &call.handle, call.error, sizeof call.error);
  }
  crash_target = nullptr;
  for (std::size_t i = 0; i < std::size(kCrashSignals); ++i) sigaction(kCrashSignals[i], &previous[i], nullptr);
  return caught;
}

std::string reason(const char* error, std::size_t size) {
  const std::string text(error, strnlen(error, size));
  return text.empty() ? "no reason given" : text;
}

// Names registered from in-process tables: the only ones a later registration may replace.
std::set<std::string>& in_process_names() {
  static std::set<std::string> names;
  return names;
}

std::vector<std::string> register_table(const shapescope_plugin* plugin, const std::string& source,
                                        const std::shared_ptr<void>& library) {
  if (!plugin) throw UserError(fmt::format("plugin {}: its entry returned no table; return a shapescope_plugin", source));
  if (plugin->abi_version < SHAPESCOPE_PLUGIN_ABI_OLDEST_VERSION || plugin->abi_version > SHAPESCOPE_PLUGIN_ABI_VERSION) {
    throw UserError(fmt::format("plugin {} was built for plugin ABI version {}, this shapescope speaks versions {} to "
                                "{}: rebuild it against this shapescope's include/shapescope_plugin.h",
                                source, plugin->abi_version, SHAPESCOPE_PLUGIN_ABI_OLDEST_VERSION,
                                SHAPESCOPE_PLUGIN_ABI_VERSION));
  }
  if (plugin->kernel_count == 0 || !plugin->kernels) {
    throw UserError(fmt::format("plugin {} declares no kernels: fill shapescope_plugin.kernels", source));
  }
  // Built-in names are taken: register them first so a clash is seen here, not later.
  register_cpu_kernels();
  register_cuda_kernels();
  std::vector<std::shared_ptr<PluginKernel>> kernels;
  for (uint32_t i = 0; i < plugin->kernel_count; ++i) {
    auto kernel = std::make_shared<PluginKernel>();
    kernel->library = library;
    kernel->abi = plugin->kernels[i];
    kernel->name = kernel->abi.name ? kernel->abi.name : "";
    kernel->source = source;
    const std::string what = fmt::format("plugin {} kernel {} ('{}')", source, i, kernel->name);
    if (!valid_name(kernel->name)) {
      throw UserError(what + ": give a name of 1 to 128 characters from A-Z a-z 0-9 _ . + -");
    }
    const AbiFormat* format = abi_format(kernel->abi.format, plugin->abi_version);
    if (!format) {
      throw UserError(fmt::format("{}: format {} is not a shapescope_format of ABI version {} ({})", what,
                                  kernel->abi.format, plugin->abi_version, abi_formats_text(plugin->abi_version)));
    }
    if (kernel->abi.backend != SHAPESCOPE_BACKEND_CPU && kernel->abi.backend != SHAPESCOPE_BACKEND_CUDA) {
      throw UserError(fmt::format("{}: backend {} is not 0 (cpu) or 1 (cuda)", what, kernel->abi.backend));
    }
    if (!kernel->abi.prepare || !kernel->abi.run) throw UserError(what + ": prepare and run must not be NULL");
    const bool replaceable = !library && in_process_names().count(kernel->name) > 0;
    const bool taken = !replaceable && entry_named(kernel_registry(), kernel->name) != nullptr;
    const bool twice = std::any_of(kernels.begin(), kernels.end(), [&](const auto& other) {
      return other->name == kernel->name;
    });
    if (taken || twice) {
      throw UserError(what + ": the name is already registered (a built-in kernel or another plugin's); rename it");
    }
    kernel->format = format->operands;
    kernel->dtype = format->dtype;
    kernels.push_back(std::move(kernel));
  }
  std::vector<std::string> names;
  for (const auto& kernel : kernels) {
    if (!library) in_process_names().insert(kernel->name);
    register_kernel(plugin_entry(kernel));
    names.push_back(kernel->name);
  }
  return names;
}

}  // namespace

std::vector<std::string> load_plugin(const std::string& path) {
  // RTLD_LOCAL: two plugins may define the same helper names; RTLD_NOW: a missing symbol is found here.
  void* handle = dlopen(path.find('/') == std::string::npos ? ("./" + path).c_str() : path.c_str(),
                        RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* error = dlerror();
    throw UserError(fmt::format("--plugin {}: cannot load it ({}); give the path of a shared library built against "
                                "include/shapescope_plugin.h", path, error ? error : "unknown error"));
  }
  // Never dlclose: a plugin may leave threads or atexit handlers behind (a CUDA library does).
  const std::shared_ptr<void> library(handle, [](void*) {});
  void* symbol = dlsym(handle, SHAPESCOPE_PLUGIN_ENTRY_SYMBOL);
  if (!symbol) {
    throw UserError(fmt::format("--plugin {}: no symbol {}; export `const shapescope_plugin* {}(void)` with C linkage",
                                path, SHAPESCOPE_PLUGIN_ENTRY_SYMBOL, SHAPESCOPE_PLUGIN_ENTRY_SYMBOL));
  }
  const auto entry = reinterpret_cast<shapescope_plugin_entry_fn>(symbol);
  return register_table(entry(), path, library);
}

std::vector<std::string> register_in_process_plugin(const shapescope_plugin* plugin, const std::string& source) {
  return register_table(plugin, source, nullptr);
}

PluginScaleLayout plugin_a_scale_layout(const GemmShape& shape, uint32_t flags) {
  const int64_t kgroups = synthetic::blocks(shape.k);
  const int64_t per_batch = shape.m * kgroups;
  if (flags & SHAPESCOPE_A_SCALES_M_MAJOR) return {per_batch, 1, shape.m, shape.batch_count * per_batch};
  return {per_batch, kgroups, 1, shape.batch_count * per_batch};
}

PluginScaleLayout plugin_b_scale_layout(const WeightShape& shape, uint32_t flags) {
  const int64_t kblocks = synthetic::blocks(shape.k);
  const int64_t row = (flags & SHAPESCOPE_B_SCALES_K_PADDED_4) ? (kblocks + 3) / 4 * 4 : kblocks;
  const int64_t per_batch = synthetic::blocks(shape.n) * row;
  return {per_batch, row, 1, shape.batch_count * per_batch};
}

bool uses_scale_codes(OperandFormat format) {
  return format != OperandFormat::bf16 && format != OperandFormat::fp8_blockscale &&
         format != OperandFormat::a16w8_blockscale;
}

std::size_t plugin_activation_bytes(const WeightShape& shape, OperandFormat format, int64_t m) {
  const OperandEncoding a = operand_encodings(format).a;
  // fp8_blockscale's A scales may be padded by the layout flags: count them as f32 per 128 elements, unpadded.
  const double a_bytes = format == OperandFormat::fp8_blockscale
                             ? double(m) * double(shape.k + synthetic::blocks(shape.k) * 4)
                             : operand_bytes(a, m, shape.k);
  return std::size_t(double(shape.batch_count) * (a_bytes + 2.0 * double(m) * double(shape.n)));
}

void* plugin_prepare(PluginKernel& kernel, const shapescope_operands& operands) {
  if (!kernel.crashed.empty()) throw std::runtime_error(kernel.crashed);
  PrepareCall call{&kernel.abi, &operands};
  if (const int signal_number = guarded_prepare(call)) {
    kernel.crashed = fmt::format("plugin kernel {} crashed in prepare at M={} (signal {}, {}); it is not called again "
                                 "in this run", kernel.name, operands.shape.m, signal_number,
                                 strsignal(signal_number));
    throw std::runtime_error(kernel.crashed);
  }
  if (call.status != 0) {
    throw std::runtime_error(fmt::format("plugin kernel {}: prepare failed ({}): {}", kernel.name, call.status,
                                         reason(call.error, sizeof call.error)));
  }
  return call.handle;
}

void plugin_run(const PluginKernel& kernel, void* handle, const shapescope_operands& operands) {
  char error[512] = {};
  if (const int status = kernel.abi.run(handle, &operands, error, sizeof error); status != 0) {
    throw std::runtime_error(
        fmt::format("plugin kernel {}: run failed ({}): {}", kernel.name, status, reason(error, sizeof error)));
  }
}

void plugin_release(const PluginKernel& kernel, void* handle) {
  if (kernel.abi.release && kernel.crashed.empty()) kernel.abi.release(handle);
}

std::string plugin_launch_name(const PluginKernel& kernel, void* handle) {
  const char* name = kernel.abi.launch_name ? kernel.abi.launch_name(handle) : nullptr;
  return name && *name ? name : kernel.name;
}

}  // namespace shapescope::kernels
