// Datasheet dense peaks (TFLOP/s, no sparsity) per device and dtype, for MFU.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace shapescope {

struct DevicePeak {
  std::string match;       // case-insensitive substring of the device name ("H100 SXM", "gfx942", ...)
  std::string display_name;
  int multiprocessors = 0; // SMs / CUs, for wave-quantization analysis
  double bf16_tflops = 0;
  double fp16_tflops = 0;
  double fp8_tflops = 0;
  double fp4_tflops = 0;   // 0 when the device has no FP4 tensor path
  double memory_tb_per_s = 0;
};

const std::vector<DevicePeak>& device_peak_table();
// The most specific table entry whose match occurs in `device_name`.
std::optional<DevicePeak> find_device_peak(const std::string& device_name);
// dtype: bf16, fp16, fp8 (also e4m3, a16w8 → the tensor-core rate it runs at), fp4.
std::optional<double> peak_tflops(const std::string& device_name, const std::string& dtype);

}  // namespace shapescope
