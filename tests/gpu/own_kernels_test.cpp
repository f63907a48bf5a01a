// Our own CUDA kernels (fp8_blockscale, fp8_blockscale_bpreshuffle, a16w8_blockscale_batched,
// portable_fp8_blockscale and its pre-shuffled-B variant) against the float64 reference
// (tests/gpu/reference_check.hpp): DeepSeek-V3 TP8 and Qwen3 TP8 weight shapes, the MLA batched
// shapes, M from 1 to 4097 including non-multiples of 8 and 128; outputs poisoned before every
// run, fresh seeds per check. Each test skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "common/user_error.hpp"
#include "kernels/cuda/fp8_blockscale.hpp"
#include "kernels/kernel.hpp"
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/gpu/reference_check.hpp"

namespace shapescope::kernels {
namespace {

TEST(OwnKernels, Fp8BlockscaleMatchesReferenceOnDeepSeekAndQwen3) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  check_fp8_kernel("fp8_blockscale", *device);
}

TEST(OwnKernels, Fp8BlockscaleBpreshuffleMatchesReferenceOnDeepSeekAndQwen3) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  check_fp8_kernel("fp8_blockscale_bpreshuffle", *device);
}

// The one-source kernels of kernels/portable, on the same set as the FP8 kernels, and on shapes only
// they accept: K and N off every alignment, partial scale blocks (and, pre-shuffled, partial 32-column
// and 128-K tiles padded with zeros).
void check_portable_kernel(const std::string& kernel_name, Device& device) {
  const std::vector<WeightCase> unaligned = {{"unaligned", 200, 336, 1}, {"unaligned", 72, 100, 1},
                                             {"unaligned", 129, 257, 1}, {"one_column", 1, 7, 1}};
  check_fp8_kernel_and_unaligned(kernel_name, device, unaligned, {1, 2, 63, 64, 65, 130});
}

// The HIP backend's portable path.
TEST(OwnKernels, PortableFp8BlockscaleMatchesReferenceOnDeepSeekQwen3AndUnalignedShapes) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  check_portable_kernel("portable_fp8_blockscale", *device);
}

// B shuffled on the GPU into the layout hip_fp8_blockscale_bpreshuffle's MFMA path reads
// (kernels/mfma_preshuffled_b.hpp): a wrong shuffle or offset gives O(1) errors here.
TEST(OwnKernels, PortableFp8BlockscaleBpreshuffleMatchesReferenceOnDeepSeekQwen3AndUnalignedShapes) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  check_portable_kernel("portable_fp8_blockscale_bpreshuffle", *device);
}

TEST(OwnKernels, A16w8BatchedMatchesReferenceOnMlaShapes) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  // DeepSeek-V3 absorbed MLA at TP8: 128 heads / 8; a partial 128-block of N and K too.
  const std::vector<WeightCase> shapes = {
      {"mla_absorb_q", 512, 128, 16}, {"mla_absorb_out", 128, 512, 16}, {"edges", 200, 336, 3},
      {"k_split_edges", 96, 720, 2}};  // 6 K blocks over 4 K-split warps: the second stage is half empty
  const std::vector<int64_t> ms = {1, 2, 3, 4, 7, 8, 16, 31, 32, 33, 64, 100, 128, 129};
  CheckTally tally;
  check_shapes("a16w8_blockscale_batched", *device, shapes, ms, tally);
  std::printf("  a16w8_blockscale_batched: %d checks, worst rel_err %.3e\n", tally.checked, tally.worst);
}

// Split-K runs in clusters whose ranks hand partial tiles to rank 0 through barrier
// phases; a phase left unbalanced by one launch would hang or mis-sum the next one. Every
// cluster size the device holds is forced once (the heuristic picks only some of them).
TEST(OwnKernels, SplitKRunsRepeatedlyWithFreshOutputs) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  const KernelEntry& entry = find_kernel("fp8_blockscale");
  const auto session = entry.open(*device, WeightShape{512, 7168, 1}, 0x5eed);  // 4 tiles of 56 K blocks
  for (int split = 2; split <= cuda::kFp8MaxSplit; ++split) {
    ASSERT_EQ(setenv("SHAPESCOPE_FP8_SPLIT_K", std::to_string(split).c_str(), 1), 0);
    const auto gemm = session->prepare(4, 0xfeed + uint64_t(split));
    unsetenv("SHAPESCOPE_FP8_SPLIT_K");
    const std::string name = gemm->launch_name();
    EXPECT_NE(name.find("_splitk" + std::to_string(split) + "_"), std::string::npos) << name;
    for (int repeat = 0; repeat < 3; ++repeat) {
      const CheckResult result = gemm->check();
      EXPECT_TRUE(result.passed(kExpectedError)) << name << " repeat " << repeat << ": rel_err " << result.rel_err
                                                 << ", unwritten " << result.unwritten;
    }
  }
}

// A tail schedule forced (SHAPESCOPE_FP8_ROW_GROUPS and _BLOCK_N: every tile that runs it; `knob`: each of
// `settings`) over `shapes` and `ms`; where the forced settings leave no such configuration, prepare refuses
// (UserError) and the point is skipped. Each configuration runs with programmatic dependent launch, checked
// against the float64 reference on poisoned outputs three times, and at `graph_ms` once more after a graph
// of 16 launches (a finisher's arrival count must be back at 0 for every launch). The kernel name must hold
// `marker`.
struct ForcedTailRuns {
  int configurations = 0, after_whole_waves = 0;
};
ForcedTailRuns check_forced_tail_runs(Device& device, const std::vector<WeightCase>& shapes, const char* knob,
                                      const std::vector<const char*>& settings, const std::vector<int64_t>& ms,
                                      const std::vector<int64_t>& graph_ms, const std::string& marker, uint64_t seed) {
  const KernelEntry& entry = find_kernel("fp8_blockscale");
  struct Tile {
    const char *rows, *columns;
  };
  const std::vector<Tile> tiles = {{"1", "128"}, {"2", "128"}, {"2", "256"}};  // not the 192-row tile
  const std::vector<const char*> forced_names = {"SHAPESCOPE_FP8_ROW_GROUPS", "SHAPESCOPE_FP8_BLOCK_N", knob};
  ForcedTailRuns counted;
  device.set_programmatic_launch(true);
  for (const WeightCase& shape : shapes) {
    const auto session = entry.open(device, WeightShape{shape.n, shape.k, 1}, ++seed);
    for (const Tile& tile : tiles) {
      for (const char* setting : settings) {
        for (const int64_t m : ms) {
          const std::vector<const char*> values = {tile.rows, tile.columns, setting};
          for (std::size_t i = 0; i < values.size(); ++i) EXPECT_EQ(setenv(forced_names[i], values[i], 1), 0);
          std::unique_ptr<PreparedGemm> gemm;
          try {
            gemm = session->prepare(m, ++seed);
          } catch (const UserError&) {  // no such configuration at this M
          }
          for (const char* name : forced_names) unsetenv(name);
          if (!gemm) continue;
          const std::string name = gemm->launch_name();
          SCOPED_TRACE(shape.label + " M=" + std::to_string(m) + " " + name);
          EXPECT_NE(name.find(marker), std::string::npos);
          if (name.find("_dp0") == std::string::npos) ++counted.after_whole_waves;
          for (int repeat = 0; repeat < 3; ++repeat) {
            const CheckResult result = gemm->check();
            EXPECT_EQ(result.unwritten, 0) << "repeat " << repeat;
            EXPECT_LE(result.rel_err, kExpectedError) << "repeat " << repeat;
          }
          if (std::find(graph_ms.begin(), graph_ms.end(), m) != graph_ms.end()) {
            EXPECT_GT(device.capture(std::vector<PreparedGemm*>(16, gemm.get()))->replay_us(), 0.0);
            EXPECT_LE(gemm->check().rel_err, kExpectedError) << "after the graph of 16 launches";
          }
          ++counted.configurations;
        }
      }
    }
  }
  device.set_programmatic_launch(false);
  return counted;
}

// Split-K over the last wave cuts tiles between CTAs outside any cluster; the CTA holding a
// tile's first K range waits for the others' partial tiles, adds them and stores. Forced on every
// tile that runs it and number of ranges (2, odd, and the most that fit: 33 per tile of a 4-tile tail
// of the 64-row tile on 132 SMs), over unaligned M, a partial last K block (K=1040), N off the 128
// columns (N=1000), a deep small-N shape, with and without whole waves before the split; graphs of 16
// launches with few and with many ranges.
TEST(OwnKernels, LastWaveSplitAlongKMatchesReferenceOnCutTilesAndRepeatedLaunches) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  const ForcedTailRuns counted = check_forced_tail_runs(
      *device, {{"deep_small_n", 1280, 8192, 1}, {"unaligned", 1000, 1040, 1}, {"four_tiles", 512, 7168, 1}},
      "SHAPESCOPE_FP8_TAIL_SPLITS", {"2", "3", "64"}, {1, 7, 65, 130, 777, 1283, 2100}, {7, 777, 2100}, "_tailk",
      0x57e4);
  std::printf("  split over the last wave: %d forced configurations checked, %d after whole waves\n",
              counted.configurations, counted.after_whole_waves);
  EXPECT_GE(counted.configurations, 140);  // 153 on an H100 (132 SMs); the rest leave no room for two ranges per tail tile
  EXPECT_GE(counted.after_whole_waves, 10);
}

// Stream-K over the tail lays the tail tiles' K blocks end to end in equal runs, one per CTA, cut at
// any K block: a run may end one tile (contributing its partial tile), hold whole ones and start
// another (finishing it after its own work). Forced on every tile that runs it, over the last partial
// wave and over a whole wave and the partial one (runs longer than a tile), over unaligned M, a
// partial last K block (K=1040), N off the 128 columns (N=1000), a deep and a short small-N shape.
TEST(OwnKernels, StreamKRunsMatchReferenceOnCutTilesAndRepeatedLaunches) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  const ForcedTailRuns counted = check_forced_tail_runs(
      *device, {{"deep_small_n", 1280, 8192, 1}, {"unaligned", 1000, 1040, 1}, {"short_small_n", 512, 2048, 1}},
      "SHAPESCOPE_FP8_STREAM_K", {"1", "2"}, {1, 65, 130, 777, 1283, 2128, 4000}, {777, 2128}, "_streamk", 0x5743);
  std::printf("  stream-K over the tail: %d forced configurations checked, %d after whole waves\n",
              counted.configurations, counted.after_whole_waves);
  EXPECT_GE(counted.configurations, 60);  // 75 on an H100 (132 SMs)
  EXPECT_GE(counted.after_whole_waves, 10);
}

// The model's own choices on shapes whose last wave is short: small N with deep K, wide N with
// deep K and small N with short K, over M where the tiles fill a whole number of waves and where
// they do not.
TEST(OwnKernels, ChosenConfigurationsMatchReferenceOnPartialWaves) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  const std::vector<WeightCase> shapes = {
      {"small_n_deep_k", 2560, 8192, 1}, {"wide_deep_k", 7168, 12288, 1}, {"small_n", 512, 2048, 1}};
  CheckTally tally;
  check_shapes("fp8_blockscale", *device, shapes, {1, 16, 63, 516, 1000, 1856, 2049, 2128, 2500}, tally);
  std::printf("  fp8_blockscale partial waves: %d checks, worst rel_err %.3e\n", tally.checked, tally.worst);
}

// With programmatic dependent launch each kernel may start while the previous one runs and
// waits for it before touching global memory: results stay exact, alone and in a CUDA graph
// of back-to-back launches (where the attribute becomes a programmatic edge).
TEST(OwnKernels, ProgrammaticDependentLaunchKeepsResultsExact) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  struct Case {
    std::string kernel;
    WeightShape weights;
    int64_t m;
  };
  const std::vector<Case> cases = {{"fp8_blockscale", {512, 7168, 1}, 48},       // split-K clusters (swap-AB below 33)
                                   {"fp8_blockscale", {4608, 7168, 1}, 1024},    // one CTA per SM, no cluster
                                   {"fp8_blockscale_bpreshuffle", {512, 7168, 1}, 64},
                                   {"a16w8_blockscale_batched", {128, 512, 16}, 8}};
  device->set_programmatic_launch(true);
  uint64_t seed = 0x9d1;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.kernel + " N=" + std::to_string(c.weights.n) + " K=" + std::to_string(c.weights.k) +
                 " M=" + std::to_string(c.m));
    const auto session = find_kernel(c.kernel).open(*device, c.weights, ++seed);
    const auto gemm = session->prepare(c.m, ++seed);
    const std::string name = gemm->launch_name();
    EXPECT_EQ(name.substr(name.size() - 4), "+pdl") << name;
    EXPECT_TRUE(gemm->check().passed(kExpectedError));
    EXPECT_GT(device->capture(std::vector<PreparedGemm*>(16, gemm.get()))->replay_us(), 0.0);
    EXPECT_TRUE(gemm->check().passed(kExpectedError)) << "after the graph of 16 launches";
  }
  device->set_programmatic_launch(false);
}

// Under programmatic dependent launch the copy thread of the weights-ahead instance loads the B
// tiles of a first unit that fits in the ring before the previous grid ends (the heuristic picks
// it where K fits); A and its scales follow after the wait into the
// same stages. And a split K moves only the partial tiles' rows that hold output. Over both weight
// orders, tiny and unaligned M, units that fit the ring (K=256, K=512, K ranges of a split) and
// units that do not (K=7168, K=1040 with a partial last K block, N off the 128 columns), cluster
// splits and splits of the last wave: each checked on poisoned outputs, after a graph of 16
// launches, and checked again. The tiled kernel's decode schedules: swap-AB, which the heuristic
// takes at decode, is kept off (tests/gpu/fp8_swapab_test.cpp checks it).
TEST(OwnKernels, WeightsLoadedAheadAndSplitsOfFewRowsKeepResultsExact) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  ASSERT_EQ(setenv("SHAPESCOPE_FP8_SWAP_AB", "0", 1), 0);
  struct Case {
    WeightShape weights;
    const char* forced_name;  // a schedule forced (nullptr: the heuristic's)
    const char* forced_value;
  };
  const std::vector<Case> cases = {{{4608, 7168, 1}, nullptr, nullptr},
                                   {{1000, 1040, 1}, nullptr, nullptr},
                                   {{2112, 256, 1}, nullptr, nullptr},
                                   {{4096, 512, 1}, nullptr, nullptr},
                                   {{1000, 1040, 1}, "SHAPESCOPE_FP8_TAIL_SPLITS", "2"},
                                   {{512, 7168, 1}, "SHAPESCOPE_FP8_TAIL_SPLITS", "10"},
                                   {{512, 7168, 1}, "SHAPESCOPE_FP8_SPLIT_K", "3"},
                                   {{1000, 1040, 1}, "SHAPESCOPE_FP8_SPLIT_K", "2"}};
  device->set_programmatic_launch(true);
  uint64_t seed = 0xa7ead;
  int runs = 0;
  for (const char* kernel : {"fp8_blockscale", "fp8_blockscale_bpreshuffle"}) {
    for (const Case& c : cases) {
      const auto session = find_kernel(kernel).open(*device, c.weights, ++seed);
      for (const int64_t m : {1, 7, 33, 64}) {
        if (c.forced_name) {
          ASSERT_EQ(setenv(c.forced_name, c.forced_value, 1), 0);
        }
        const auto gemm = session->prepare(m, ++seed);
        if (c.forced_name) unsetenv(c.forced_name);
        const std::string name = gemm->launch_name();
        SCOPED_TRACE(std::string(kernel) + " N=" + std::to_string(c.weights.n) + " K=" + std::to_string(c.weights.k) +
                     " M=" + std::to_string(m) + " " + name);
        if (c.forced_name) {
          EXPECT_NE(name.find(std::string(c.forced_name).find("TAIL") != std::string::npos ? "_tailk" : "_splitk" +
                                                                                                   std::string(c.forced_value)),
                    std::string::npos);
        } else {  // the weights ahead run where the whole K fits in the 64-row tile's ring of 6 stages
          EXPECT_EQ(name.find("_weightsahead") != std::string::npos, c.weights.k <= 6 * 128);
        }
        EXPECT_TRUE(gemm->check().passed(kExpectedError));
        EXPECT_GT(device->capture(std::vector<PreparedGemm*>(16, gemm.get()))->replay_us(), 0.0);
        const CheckResult result = gemm->check();
        EXPECT_EQ(result.unwritten, 0) << "after the graph of 16 launches";
        EXPECT_LE(result.rel_err, kExpectedError) << "after the graph of 16 launches";
        ++runs;
      }
    }
  }
  device->set_programmatic_launch(false);
  ASSERT_EQ(unsetenv("SHAPESCOPE_FP8_SWAP_AB"), 0);
  std::printf("  weights ahead of the previous grid, splits of few rows: %d configurations checked\n", runs);
}

// The FP8 heuristic's device spec, queried from the runtime: plausible on any GPU, and on
// an H100 SXM the figures the reference spec (the listing without a GPU) was written from.
TEST(OwnKernels, Fp8DeviceSpecIsQueriedFromTheGpu) {
  const auto device = open_device();
  REQUIRE_GPU(device);
  const cuda::Fp8DeviceSpec spec = cuda::fp8_device_spec(0);
  const cuda::Fp8DeviceSpec reference = cuda::fp8_reference_spec();
  std::printf("  %s: %d SMs, %d bytes per block; clusters of 2..6: %d %d %d %d %d\n", spec.name.c_str(),
              spec.multiprocessors, spec.shared_bytes_per_block_optin, spec.clusters_by_split[2],
              spec.clusters_by_split[3], spec.clusters_by_split[4], spec.clusters_by_split[5], spec.clusters_by_split[6]);
  EXPECT_EQ(spec.multiprocessors, device->info().multiprocessors);
  EXPECT_EQ(spec.clusters_by_split[1], spec.multiprocessors);
  for (int split = 2; split <= cuda::kFp8MaxSplit; ++split) {
    EXPECT_GT(spec.clusters_by_split[std::size_t(split)], 0) << "split " << split;
    EXPECT_LE(spec.clusters_by_split[std::size_t(split)] * split, spec.multiprocessors) << "split " << split;
  }
  if (spec.name.find("H100") != std::string::npos && spec.multiprocessors == reference.multiprocessors) {
    EXPECT_EQ(spec.shared_bytes_per_block_optin, reference.shared_bytes_per_block_optin);
    for (const int split : {2, 3, 4, 6})
      EXPECT_EQ(spec.clusters_by_split[std::size_t(split)], reference.clusters_by_split[std::size_t(split)])
          << "split " << split;
  }
}

TEST(OwnKernels, UnsupportedShapesAreNamed) {
  register_cuda_kernels();
  const KernelEntry& entry = find_kernel("fp8_blockscale");
  EXPECT_TRUE(entry.unsupported_reason(GemmShape{4, 4096, 100, 1}).has_value());
  EXPECT_TRUE(entry.unsupported_reason(GemmShape{4, 512, 128, 16}).has_value());  // not batched
  EXPECT_FALSE(entry.unsupported_reason(GemmShape{1, 2112, 192, 1}).has_value());
  const KernelEntry& batched = find_kernel("a16w8_blockscale_batched");
  EXPECT_TRUE(batched.batched);
  EXPECT_FALSE(batched.unsupported_reason(GemmShape{1, 512, 128, 16}).has_value());
}

}  // namespace
}  // namespace shapescope::kernels
