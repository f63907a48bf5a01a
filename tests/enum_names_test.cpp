// One name table per enum, read both ways.
#include <gtest/gtest.h>

#include "common/enum_names.hpp"
#include "common/user_error.hpp"
#include "kernels/kernel.hpp"

namespace shapescope {
namespace {

enum class Fruit { apple, pear, plum };
constexpr EnumName<Fruit> kFruitNames[] = {{Fruit::apple, "apple"}, {Fruit::pear, "pear"}, {Fruit::plum, "plum"}};

TEST(EnumNames, ATableReadsBothWaysAndListsItsNames) {
  EXPECT_EQ(name_of(kFruitNames, Fruit::pear), "pear");
  EXPECT_EQ(name_of(kFruitNames, static_cast<Fruit>(7)), "unknown");
  EXPECT_EQ(value_named(kFruitNames, "plum"), Fruit::plum);
  EXPECT_FALSE(value_named(kFruitNames, "Plum").has_value());
  EXPECT_EQ(names_listed(kFruitNames), "apple, pear, plum");
  EXPECT_EQ(names_listed(kFruitNames, " or "), "apple, pear or plum");
}

TEST(EnumNames, EveryTimingModeParsesBackFromItsName) {
  for (const kernels::TimingMode mode : {kernels::TimingMode::events, kernels::TimingMode::graph,
                                         kernels::TimingMode::kernel})
    EXPECT_EQ(kernels::parse_timing_mode(kernels::to_string(mode)), mode);
  try {
    kernels::parse_timing_mode("cupti");
    FAIL() << "no error";
  } catch (const UserError& error) {
    EXPECT_STREQ(error.what(), "timing mode 'cupti' is not one of events, graph, kernel");
  }
}

}  // namespace
}  // namespace shapescope
