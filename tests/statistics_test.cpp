// The shared statistics against published tables.
#include "common/statistics.hpp"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "common/user_error.hpp"

namespace shapescope {
namespace {

TEST(Statistics, NormalQuantilesMatchTables) {
  EXPECT_NEAR(upper_normal_quantile(0.025), 1.959964, 1e-5);
  EXPECT_NEAR(upper_normal_quantile(0.05), 1.644854, 1e-5);
  EXPECT_THROW(upper_normal_quantile(0.7), UserError);
}

TEST(Statistics, StudentQuantilesMatchTablesFromOneToManyDegreesOfFreedom) {
  EXPECT_NEAR(upper_student_quantile(0.025, 1), 12.7062, 1e-3);
  EXPECT_NEAR(upper_student_quantile(0.025, 3), 3.1824, 1e-4);
  EXPECT_NEAR(upper_student_quantile(0.025, 10), 2.2281, 1e-4);
  EXPECT_NEAR(upper_student_quantile(0.025, 15), 2.131450, 1e-4);
  EXPECT_NEAR(upper_student_quantile(0.025, 40), 2.0211, 1e-4);
  EXPECT_NEAR(upper_student_quantile(0.025, 120), 1.9799, 1e-4);
  EXPECT_NEAR(upper_student_quantile(0.025, 100000), 1.9600, 1e-4);
  EXPECT_NEAR(upper_student_quantile(0.005, 5), 4.032143, 1e-4);
  EXPECT_GT(upper_student_quantile(0.025, 30), upper_student_quantile(0.025, 31));
  EXPECT_THROW(upper_student_quantile(0.025, 0), UserError);
}

TEST(Statistics, GeometricMean) {
  EXPECT_NEAR(geometric_mean(std::vector<double>{2, 8}), 4, 1e-12);
  EXPECT_NEAR(geometric_mean(std::vector<double>{0.5, 2, 1.25}), std::cbrt(1.25), 1e-12);
  EXPECT_EQ(geometric_mean(std::vector<double>{}), 1);
}

}  // namespace
}  // namespace shapescope
