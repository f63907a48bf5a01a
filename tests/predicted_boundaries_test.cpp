#include <gtest/gtest.h>

#include <map>

#include "profiler/predicted_boundaries.hpp"

namespace shapescope::profiler {
namespace {

kernels::KernelEntry tiled_kernel(int tile_m, int tile_n) {
  kernels::KernelEntry kernel;
  kernel.name = "tiled";
  kernel.config_for = [=](const kernels::GemmShape&) { return kernels::KernelConfig::plain_tile(tile_m, tile_n); };
  return kernel;
}

TEST(PredictedBoundaries, EachWaveBoundaryCarriesTheRelativeRiseOfItsWaves) {
  // 128 x 128 tiles over N = 2048: 16 tile columns, 8 rows fill a wave of 132 SMs (128 tiles).
  GemmProblem problem;
  problem.n = 2048;
  problem.k = 4096;
  const std::vector<PredictedBoundary> boundaries = predicted_boundaries(tiled_kernel(128, 128), problem, 132, 4096);
  ASSERT_FALSE(boundaries.empty());
  EXPECT_EQ(boundaries.front().m, 128);
  EXPECT_DOUBLE_EQ(boundaries.front().effect, 1.0);  // a second tile row doubles the work of the first
  std::map<int64_t, double> effect;
  for (const PredictedBoundary& boundary : boundaries) effect[boundary.m] = boundary.effect;
  EXPECT_DOUBLE_EQ(effect.at(1024), 1.0);      // one full wave of 8 rows; the 9th spills into a second
  EXPECT_DOUBLE_EQ(effect.at(2048), 0.5);      // 16 rows fill 2 waves; the 17th needs a third
  for (std::size_t i = 1; i < boundaries.size(); ++i) EXPECT_LT(boundaries[i - 1].m, boundaries[i].m);
}

TEST(PredictedBoundaries, ManyTileColumnsPredictABoundaryEveryTileRowOfShrinkingEffect) {
  // 224 tile columns on 132 SMs: every tile row is a new wave, its effect falling as the waves add up.
  GemmProblem problem;
  problem.n = 14336;
  problem.k = 4096;
  const std::vector<PredictedBoundary> boundaries = predicted_boundaries(tiled_kernel(64, 64), problem, 132, 32768);
  EXPECT_GT(boundaries.size(), 300u);
  EXPECT_GT(boundaries.front().effect, 0.5);
  EXPECT_LT(boundaries.back().effect, 0.01);
}

}  // namespace
}  // namespace shapescope::profiler
