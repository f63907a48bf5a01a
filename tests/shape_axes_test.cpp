// The raw shape syntax `N,K[,batch]` shared by profile --shape, kernel_bench and the tests.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/shape_axes.hpp"
#include "common/user_error.hpp"

namespace shapescope {
namespace {

TEST(ShapeAxes, ParsesNKAndAnOptionalBatchAsARawShape) {
  const GemmProblem plain = parse_shape("7168,2304");
  EXPECT_EQ(plain.n, 7168);
  EXPECT_EQ(plain.k, 2304);
  EXPECT_EQ(plain.batch_count, 1);
  EXPECT_TRUE(is_raw_shape(plain));
  EXPECT_EQ(shape_label(plain), "N7168_K2304");
  const GemmProblem batched = parse_shape("512,128,16");
  EXPECT_EQ(batched.batch_count, 16);
  EXPECT_EQ(shape_label(batched), "N512_K128_B16");
}

TEST(ShapeAxes, RefusesAnythingButTwoOrThreeWholeNumbersFromOne) {
  for (const char* bad : {"", "7168", "7168,", ",2304", "1,2,3,4", "abc,2304", "7168,2304.5", "0,128", "128,0",
                          "128,128,0", "-5,128", "128, 128", "99999999999999999999,1", "0x10,16"}) {
    try {
      parse_shape(bad, "--shape");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UserError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find(std::string("--shape '") + bad + "'"), std::string::npos) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
  }
}

TEST(ShapeAxes, EachDistinctShapeOnceInTheOrderGiven) {
  const std::vector<GemmProblem> shapes = parse_shapes({"256,128", "128,256,2", "256,128,1", "128,256"});
  ASSERT_EQ(shapes.size(), 3u);
  EXPECT_EQ(shape_label(shapes[0]), "N256_K128");
  EXPECT_EQ(shape_label(shapes[1]), "N128_K256_B2");
  EXPECT_EQ(shape_label(shapes[2]), "N128_K256");
}

TEST(ShapeAxes, CatalogProblemsAreNotRawAndRepeatsCollapse) {
  const GemmProblem q{"m", "q_proj", 8, 512, 7168, 1};
  const GemmProblem o{"m", "o_proj", 8, 512, 7168, 1};
  EXPECT_FALSE(is_raw_shape(q));
  const std::vector<GemmProblem> distinct = distinct_shapes({q, o, parse_shape("512,7168,2")});
  ASSERT_EQ(distinct.size(), 2u);
  EXPECT_EQ(distinct[0].module, "q_proj");
  EXPECT_EQ(distinct[1].batch_count, 2);
}

}  // namespace
}  // namespace shapescope
