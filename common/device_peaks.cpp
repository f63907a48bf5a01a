#include "common/device_peaks.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "common/user_error.hpp"

namespace shapescope {

namespace {

std::string lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return text;
}

}  // namespace

// Dense tensor-core peaks from the vendors' datasheets (the "without sparsity"
// column), TFLOP/s; memory bandwidth in TB/s. fp16 means fp16 inputs with fp32
// accumulation, fp8 means e4m3 with fp32 accumulation, fp4 is NVFP4/MXFP4.
const std::vector<DevicePeak>& device_peak_table() {
  static const std::vector<DevicePeak> table = {
      // match, display name, SMs/CUs, bf16, fp16, fp8, fp4, TB/s
      // NVIDIA H100 datasheet; "NVIDIA H100 80GB HBM3" is the SXM part.
      {"H100", "NVIDIA H100 SXM", 132, 989.4, 989.4, 1978.9, 0, 3.35},
      {"H100 PCIe", "NVIDIA H100 PCIe", 114, 756, 756, 1513, 0, 2.0},
      {"H100 NVL", "NVIDIA H100 NVL", 132, 835, 835, 1671, 0, 3.9},
      // NVIDIA H200 datasheet: H100 SXM compute, faster HBM3e.
      {"H200", "NVIDIA H200", 132, 989.4, 989.4, 1978.9, 0, 4.8},
      // H800 SXM: the export variant with H100 SXM compute rates.
      {"H800", "NVIDIA H800", 132, 989.4, 989.4, 1978.9, 0, 3.35},
      // NVIDIA A100 datasheet (80GB SXM); Ampere has no FP8 tensor path.
      {"A100", "NVIDIA A100", 108, 312, 312, 0, 0, 2.039},
      // A800 80GB PCIe, the study's card (it normalizes utils by 312).
      {"A800", "NVIDIA A800", 108, 312, 312, 0, 0, 1.935},
      // Ada Lovelace whitepaper, RTX 4090: fp32-accumulate rates (the study rounds fp16 to 166).
      {"RTX 4090", "NVIDIA GeForce RTX 4090", 128, 165.2, 165.2, 330.3, 0, 1.008},
      // NVIDIA L40S datasheet.
      {"L40S", "NVIDIA L40S", 142, 362.05, 362.05, 733, 0, 0.864},
      // NVIDIA B200 (HGX B200 per-GPU dense rates).
      {"B200", "NVIDIA B200", 148, 2250, 2250, 4500, 9000, 8.0},
      // AMD Instinct MI300X datasheet (2100 MHz peak engine clock, 304 CUs). AITER's
      // gfx942 rows with fewer CUs (cu_num 80) are partitioned or cut-down parts:
      // scale these peaks by cu_num / 304.
      {"MI300X", "AMD Instinct MI300X", 304, 1307.4, 1307.4, 2614.9, 0, 5.3},
      {"gfx942", "AMD Instinct MI300X (gfx942)", 304, 1307.4, 1307.4, 2614.9, 0, 5.3},
      // AMD Instinct MI325X datasheet: MI300X compute, 256 GB HBM3E.
      {"MI325X", "AMD Instinct MI325X", 304, 1307.4, 1307.4, 2614.9, 0, 6.0},
      // AMD Instinct MI355X datasheet (2400 MHz, 256 CUs): 2.5 PF fp16, 5 PF fp8, 10 PF MXFP4 dense.
      {"MI355X", "AMD Instinct MI355X", 256, 2516.6, 2516.6, 5033.2, 10066.3, 8.0},
      {"gfx950", "AMD Instinct MI355X (gfx950)", 256, 2516.6, 2516.6, 5033.2, 10066.3, 8.0},
  };
  return table;
}

std::optional<DevicePeak> find_device_peak(const std::string& device_name) {
  const std::string name = lowercase(device_name);
  const DevicePeak* best = nullptr;
  for (const DevicePeak& entry : device_peak_table()) {
    if (name.find(lowercase(entry.match)) == std::string::npos) continue;
    if (best == nullptr || entry.match.size() > best->match.size()) best = &entry;
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

std::optional<double> peak_tflops(const std::string& device_name, const std::string& dtype) {
  const std::string kind = lowercase(dtype);
  double DevicePeak::*rate = nullptr;
  if (kind == "bf16" || kind == "bfloat16" || kind == "a16w8") {
    rate = &DevicePeak::bf16_tflops;  // a16w8 dequantizes its FP8 weights and multiplies in bf16
  } else if (kind == "fp16" || kind == "float16" || kind == "half") {
    rate = &DevicePeak::fp16_tflops;
  } else if (kind == "fp8" || kind == "e4m3" || kind == "fp8_e4m3" || kind == "w8a8" || kind == "a8w8" ||
             kind == "fp8_blockscale") {
    rate = &DevicePeak::fp8_tflops;
  } else if (kind == "fp4" || kind == "nvfp4" || kind == "mxfp4") {
    rate = &DevicePeak::fp4_tflops;
  } else {
    throw UserError(fmt::format("unknown dtype '{}' for a peak rate; use bf16, fp16, fp8 (e4m3, w8a8, "
                                "fp8_blockscale), a16w8 or fp4",
                                dtype));
  }
  const std::optional<DevicePeak> peak = find_device_peak(device_name);
  if (!peak || (*peak).*rate <= 0) return std::nullopt;
  return (*peak).*rate;
}

}  // namespace shapescope
