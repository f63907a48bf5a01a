// cuBLASLt's kernel_name: the whole algorithm configuration, and still a name analyze's
// wave analysis reads the tile from (host code: no GPU, no cuBLASLt needed).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "analyze/explain.hpp"
#include "kernels/cuda/cublaslt_algorithm_info.hpp"

namespace shapescope::kernels::cuda {
namespace {

template <std::size_t kCount>
int value_of(const CublasLtEnumName (&names)[kCount], const char* name) {
  for (const auto& entry : names)
    if (std::strcmp(entry.name, name) == 0) return entry.value;
  ADD_FAILURE() << name << " is not in the generated table";
  return -1;
}

// What an H100 reported for gate_up (algo 66, a 128x128 tile, six 128-deep stages).
CublasLtAlgorithmInfo sample_algorithm() {
  CublasLtAlgorithmInfo info;
  info.id = 66;
  info.tile = value_of(kCublasLtTileNames, "128x128");
  info.stages = value_of(kCublasLtStagesNames, "128x6");
  info.cluster_shape = value_of(kCublasLtClusterShapeNames, "1x2x1");
  info.inner_shape = value_of(kCublasLtInnerShapeNames, "MMA16816");
  info.set_tile_extents();
  return info;
}

TEST(CublasLtAlgorithmName, CarriesEveryConfigurationAttribute) {
  CublasLtAlgorithmInfo info = sample_algorithm();
  info.split_k = 3;
  info.reduction_scheme = value_of(kCublasLtReductionSchemeNames, "INPLACE");
  info.cta_swizzling = 1;
  info.custom_option = 2;
  EXPECT_EQ(info.describe(),
            "cublasLt algo=66 tile=128x128 stages=128x6 splitK=3 reduction=INPLACE swizzle=1 custom=2 inner=MMA16816 "
            "cluster=1x2x1");
}

// On the H100 the old name (algo, tile, stages, splitK) was identical at M=144 and M=240,
// 42.6 against 30.7 us: any attribute that differs must make the names differ.
TEST(CublasLtAlgorithmName, DiffersWhenAnyAttributeDiffers) {
  const CublasLtAlgorithmInfo base = sample_algorithm();
  const auto differs = [&](auto change) {
    CublasLtAlgorithmInfo other = base;
    change(other);
    return other.describe() != base.describe();
  };
  EXPECT_TRUE(differs([](CublasLtAlgorithmInfo& i) {
    i.cluster_shape = value_of(kCublasLtClusterShapeNames, "2x1x1");
  }));
  EXPECT_TRUE(differs([](CublasLtAlgorithmInfo& i) { i.cluster_shape = 0; }));  // "auto"
  EXPECT_TRUE(differs([](CublasLtAlgorithmInfo& i) {
    i.reduction_scheme = value_of(kCublasLtReductionSchemeNames, "OUTPUT_TYPE");
  }));
  EXPECT_TRUE(differs([](CublasLtAlgorithmInfo& i) { i.cta_swizzling = 1; }));
  EXPECT_TRUE(differs([](CublasLtAlgorithmInfo& i) { i.custom_option = 1; }));
  EXPECT_TRUE(differs([](CublasLtAlgorithmInfo& i) { i.inner_shape = 0; }));
  EXPECT_TRUE(differs([](CublasLtAlgorithmInfo& i) { i.stages = value_of(kCublasLtStagesNames, "64x4"); }));
  EXPECT_TRUE(differs([](CublasLtAlgorithmInfo& i) { i.split_k = 2; }));
}

TEST(CublasLtAlgorithmName, UnknownValuesAreNamedByNumber) {
  CublasLtAlgorithmInfo info = sample_algorithm();
  info.cluster_shape = 9999;  // a value newer than the header the tables came from
  EXPECT_NE(info.describe().find("cluster=#9999"), std::string::npos) << info.describe();
}

// analyze's wave analysis reads the first MxN token of a kernel name as its tile: the added
// attributes (cluster "2x1x1", stages "128x6") must not pose as one, and the tile must come
// back in our terms: cuBLASLt's extents are rows x columns of its D, i.e. our N x M, so the
// tile's M is tile_cols and its N tile_rows.
TEST(CublasLtAlgorithmName, AnalyzeReadsTheTileFromIt) {
  for (const char* tile : {"128x128", "64x256", "256x128", "192x128", "128x64"}) {
    for (const char* cluster : {"1x2x1", "2x1x1", "4x2x1"}) {
      CublasLtAlgorithmInfo info = sample_algorithm();
      info.tile = value_of(kCublasLtTileNames, tile);
      info.cluster_shape = value_of(kCublasLtClusterShapeNames, cluster);
      info.set_tile_extents();
      SCOPED_TRACE(info.describe());
      const auto parsed = analyze::tile_from_kernel_name(info.describe());
      ASSERT_TRUE(parsed.has_value());
      EXPECT_EQ(*parsed, (analyze::TileShape{info.tile_cols, info.tile_rows}));
      EXPECT_EQ(std::to_string(info.tile_rows) + "x" + std::to_string(info.tile_cols), tile);
    }
  }
  CublasLtAlgorithmInfo undecided = sample_algorithm();
  undecided.tile = 0;
  undecided.set_tile_extents();
  EXPECT_EQ(undecided.tile_rows, 0);
  EXPECT_FALSE(analyze::tile_from_kernel_name(undecided.describe()).has_value())
      << "with no tile, neither the stages nor the cluster shape may be read as one: " << undecided.describe();
}

// The profile's config columns, in our terms like the tile: cuBLASLt's cluster "AxBx1" is A CTAs along
// its D's rows (our N) by B along its columns (our M).
TEST(CublasLtAlgorithmName, TheConfigurationIsReadTransposed) {
  CublasLtAlgorithmInfo info = sample_algorithm();
  info.tile = value_of(kCublasLtTileNames, "256x64");
  info.cluster_shape = value_of(kCublasLtClusterShapeNames, "4x2x1");
  info.split_k = 3;
  info.set_tile_extents();
  const KernelConfig config = info.config();
  EXPECT_EQ(config.tile_m, 64);
  EXPECT_EQ(config.tile_n, 256);
  EXPECT_EQ(config.cluster_m, 2);
  EXPECT_EQ(config.cluster_n, 4);
  EXPECT_EQ(config.cluster_k, 1);
  EXPECT_EQ(config.split_k, 3);
  info.cluster_shape = 0;  // the library decides: unknown
  EXPECT_EQ(info.config().cluster_m, 0);
  EXPECT_EQ(info.config().tile_m, 64);
  info.tile = 0;
  info.set_tile_extents();
  EXPECT_EQ(info.config().tile_m, 0);
  EXPECT_EQ(info.config().split_k, 0);
  EXPECT_EQ(cublaslt_extents("1x16x1"), (std::vector<int>{1, 16, 1}));
  EXPECT_TRUE(cublaslt_extents("x2").empty());
  EXPECT_TRUE(cublaslt_extents("2x").empty());
  EXPECT_TRUE(cublaslt_extents("").empty());
}

TEST(CublasLtAlgorithmName, TileExtentsParseOnlyMxN) {
  EXPECT_EQ(cublaslt_tile_extents("128x256"), (std::pair<int, int>{128, 256}));
  EXPECT_EQ(cublaslt_tile_extents("auto"), (std::pair<int, int>{0, 0}));
  EXPECT_EQ(cublaslt_tile_extents("8xAUTO"), (std::pair<int, int>{0, 0}));
  EXPECT_EQ(cublaslt_tile_extents("#700"), (std::pair<int, int>{0, 0}));
}

}  // namespace
}  // namespace shapescope::kernels::cuda
