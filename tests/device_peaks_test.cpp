#include "common/device_peaks.hpp"

#include <string>

#include <gtest/gtest.h>

#include "common/user_error.hpp"

namespace shapescope {
namespace {

std::string display_name_of(const std::string& device) {
  const auto peak = find_device_peak(device);
  return peak ? peak->display_name : "(none)";
}

TEST(DevicePeaks, MostSpecificMatchWins) {
  EXPECT_EQ(display_name_of("NVIDIA H100 80GB HBM3"), "NVIDIA H100 SXM");
  EXPECT_EQ(display_name_of("NVIDIA H100 PCIe"), "NVIDIA H100 PCIe");
  EXPECT_EQ(display_name_of("nvidia h100 nvl"), "NVIDIA H100 NVL");
  EXPECT_EQ(display_name_of("NVIDIA H200"), "NVIDIA H200");
  EXPECT_EQ(display_name_of("NVIDIA GeForce RTX 4090"), "NVIDIA GeForce RTX 4090");
  EXPECT_EQ(display_name_of("NVIDIA A800 80GB PCIe"), "NVIDIA A800");
  EXPECT_EQ(display_name_of("gfx942"), "AMD Instinct MI300X (gfx942)");
  EXPECT_EQ(display_name_of("gfx950"), "AMD Instinct MI355X (gfx950)");
  EXPECT_EQ(display_name_of("AMD Instinct MI325X"), "AMD Instinct MI325X");
  EXPECT_EQ(display_name_of("Intel Xeon"), "(none)");
}

TEST(DevicePeaks, DtypesMapToTheRateTheyRunAt) {
  const double bf16 = *peak_tflops("NVIDIA H200", "bf16");
  const double fp8 = *peak_tflops("NVIDIA H200", "fp8");
  EXPECT_DOUBLE_EQ(bf16, 989.4);
  EXPECT_DOUBLE_EQ(fp8, 1978.9);
  EXPECT_DOUBLE_EQ(*peak_tflops("NVIDIA H200", "E4M3"), fp8);
  EXPECT_DOUBLE_EQ(*peak_tflops("NVIDIA H200", "fp8_blockscale"), fp8);
  EXPECT_DOUBLE_EQ(*peak_tflops("NVIDIA H200", "a16w8"), bf16);  // dequantized to bf16 before the MMA
  EXPECT_DOUBLE_EQ(*peak_tflops("NVIDIA A800 80GB PCIe", "fp16"), 312);
  EXPECT_DOUBLE_EQ(*peak_tflops("NVIDIA H100 PCIe", "bf16"), 756);
}

TEST(DevicePeaks, MissingRatesAndDevicesAreEmpty) {
  EXPECT_FALSE(peak_tflops("NVIDIA A100-SXM4-80GB", "fp8"));  // Ampere has no FP8 tensor cores
  EXPECT_FALSE(peak_tflops("NVIDIA H100 80GB HBM3", "fp4"));
  EXPECT_FALSE(peak_tflops("Intel Xeon", "bf16"));
  EXPECT_THROW(peak_tflops("NVIDIA H200", "int3"), UserError);
}

TEST(DevicePeaks, TableIsConsistent) {
  for (const DevicePeak& entry : device_peak_table()) {
    EXPECT_GT(entry.multiprocessors, 0) << entry.match;
    EXPECT_GT(entry.bf16_tflops, 0) << entry.match;
    EXPECT_GT(entry.memory_tb_per_s, 0) << entry.match;
    // Where a narrower format exists it runs at twice the wider one's rate.
    if (entry.fp8_tflops > 0) {
      EXPECT_NEAR(entry.fp8_tflops / entry.bf16_tflops, 2.0, 0.03) << entry.match;
    }
    if (entry.fp4_tflops > 0) {
      EXPECT_NEAR(entry.fp4_tflops / entry.fp8_tflops, 2.0, 0.01) << entry.match;
    }
    EXPECT_EQ(display_name_of(entry.match), entry.display_name) << entry.match;
  }
}

}  // namespace
}  // namespace shapescope
