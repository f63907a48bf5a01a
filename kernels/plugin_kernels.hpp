// Kernels from plugin libraries (include/shapescope_plugin.h, docs/plugin_abi.md): a library
// is loaded with dlopen and its ABI version checked; each kernel it declares becomes a
// KernelEntry whose sessions generate shapescope's synthetic operands in the layout the
// plugin asked for, call its prepare/run/release, and check its output against the float64
// reference exactly as our own kernels are checked.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "include/shapescope_plugin.h"
#include "kernels/kernel.hpp"
#include "kernels/reference_gemm.hpp"
#include "kernels/synthetic_operands.hpp"

namespace shapescope::kernels {

// One kernel a plugin declared, shared by its sessions.
struct PluginKernel {
  std::shared_ptr<void> library;  // the dlopen handle that keeps the code loaded; null for in-process tables
  shapescope_kernel abi{};        // the plugin's entry, copied
  std::string name;
  std::string source;             // the library path, or who registered an in-process table
  OperandFormat format = OperandFormat::bf16;
  std::string dtype;  // the math class the MFU peak is taken for
  // Set once prepare crashed: why. The kernel is never called again in this process.
  std::string crashed;
};

// Loads a plugin library and registers its kernels after the built-in ones; returns their names.
// Throws UserError (one line naming the library and the fix) on a library that does not load, lacks the
// entry symbol, declares another ABI version, or an invalid kernel (bad name or format, a built-in's name).
std::vector<std::string> load_plugin(const std::string& path);
// The same for a table already in this process (the Python entry point builds one with ctypes). A name an
// earlier in-process table registered is replaced (a Python session profiles one callable after another).
std::vector<std::string> register_in_process_plugin(const shapescope_plugin* plugin, const std::string& source);

// Where the plugin's scale floats live (shapescope_plugin.h's layout flags), in floats.
struct PluginScaleLayout {
  int64_t batch = 0, outer = 0, kgroup = 0;  // strides of (batch, row or row block, K group)
  int64_t floats = 0;                        // whole allocation, padding included
};
PluginScaleLayout plugin_a_scale_layout(const GemmShape& shape, uint32_t flags);
PluginScaleLayout plugin_b_scale_layout(const WeightShape& shape, uint32_t flags);
// Whether a format's plugin operands carry one-byte scale codes (ABI version 2's formats) rather than the f32
// scales of formats 1 to 3.
bool uses_scale_codes(OperandFormat format);
// The synthetic operand of an ABI version 2 format in host memory, as shapescope_plugin.h lays it out: codes
// [batch][rows][k] (e2m1 two per byte, the even K in the low nibble), one-byte scale codes
// [batch][rows][ceil(k/block_k)] and the per-tensor scales [batch] (each empty where the encoding has none).
struct PluginHostOperand {
  std::vector<uint8_t> codes, scale_codes;
  std::vector<float> tensor_scales;
};
PluginHostOperand plugin_host_operand(const OperandEncoding& encoding, const synthetic::OperandStreams& streams,
                                      uint64_t seed, int64_t batch_count, int64_t rows, int64_t k);
// A session's bytes per M on either backend: A, its scales and the bf16 output.
std::size_t plugin_activation_bytes(const WeightShape& shape, OperandFormat format, int64_t m);

// prepare() with a crash guard: a SIGSEGV, SIGBUS, SIGFPE or SIGILL inside it is caught, the kernel is
// marked crashed and not called again. Throws std::runtime_error with the plugin's reason on any failure.
void* plugin_prepare(PluginKernel& kernel, const shapescope_operands& operands);
// run(); throws std::runtime_error with the plugin's reason when it returns non-zero.
void plugin_run(const PluginKernel& kernel, void* handle, const shapescope_operands& operands);
void plugin_release(const PluginKernel& kernel, void* handle);
std::string plugin_launch_name(const PluginKernel& kernel, void* handle);

// Sessions over the backend's memory: host vectors, or device buffers filled on the GPU.
std::unique_ptr<GemmSession> open_cpu_plugin_session(const std::shared_ptr<PluginKernel>& kernel, Device& device,
                                                     const WeightShape& shape, uint64_t seed);
// Throws std::runtime_error when built without CUDA.
std::unique_ptr<GemmSession> open_cuda_plugin_session(const std::shared_ptr<PluginKernel>& kernel, Device& device,
                                                      const WeightShape& shape, uint64_t seed);

}  // namespace shapescope::kernels
