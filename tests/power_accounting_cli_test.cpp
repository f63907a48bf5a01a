// `profile --power-accounting` end to end on the CPU, a device that keeps no throttle accounting: the sweep
// runs, and the power-cap columns are in the file and empty.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "common/csv.hpp"
#include "tests/profile_cli_support.hpp"

namespace {

namespace fs = std::filesystem;
using shapescope::testing_support::run_profile;

class PowerAccountingCli : public shapescope::testing_support::ProfileCliTest {};

TEST_F(PowerAccountingCli, OnADeviceWithoutAccountingTheColumnsStayEmpty) {
  const fs::path out = scratch("out");
  const auto outcome = run_profile("--model qwen3_4b --module o_proj --tp 8 --backend cpu --threads 1 "
                                   "--kernel cpu_bf16 --peak-tflops 1 --m-list 1,2 --min-samples 2 --warmup 0 "
                                   "--power-accounting --out " + out.string());
  ASSERT_EQ(outcome.exit_code, 0) << outcome.stderr_text;
  const shapescope::csv::Table table = shapescope::csv::read_file(out / "qwen3_4b_o_proj_tp8_N2560_K512_cpu_bf16.csv");
  ASSERT_EQ(table.rows.size(), 2u);
  for (const char* column : {"power_capped_pct", "power_limit_w"}) {
    const int at = table.column(column);
    ASSERT_GE(at, 0) << column;
    for (const auto& row : table.rows) EXPECT_EQ(row[std::size_t(at)], "") << column;
  }
}

}  // namespace
