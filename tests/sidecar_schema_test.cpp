// The sidecar's one declaration of its keys: what the profiler writes, the analyzer reads back.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/sidecar_schema.hpp"
#include "common/user_error.hpp"
#include "tests/scratch_dir.hpp"

namespace shapescope {
namespace {

Sidecar written_sidecar() {
  Sidecar sidecar;
  sidecar.shapescope_version = "1.2.3";
  sidecar.git_commit = "abc1234";
  sidecar.date_utc = "2026-11-24T21:00:00Z";
  sidecar.command_line = "profile --model llama3_8b";
  sidecar.device = {"NVIDIA H200", "cuda", 132, 52428800, 150ull << 30, "570.1", "12.8", 1980, "GPU-1", 4.1};
  sidecar.cpu_model = "Xeon";
  sidecar.clock_at_start = SidecarClock{1980, 41, 120.5};
  sidecar.kernel = {"fp8_blockscale", "fp8", "A e4m3", "ours"};
  sidecar.problem = {"llama3_8b", "o_proj", 2, 4096, 2048, 1, 0, 0, true, false, "fp8_blockscale"};
  sidecar.peak = {1979, "datasheet"};
  sidecar.measurement.warmup_runs = 2;
  sidecar.measurement.max_samples = 2000;
  sidecar.measurement.target_rel_stderr = 0.005;
  sidecar.measurement.hot = true;
  sidecar.measurement.seed = 18446744073709551615ull;  // a seed beyond int64 survives
  sidecar.measurement.timing = "graph";
  sidecar.measurement.timing_floors = {{"events_us", 2.5}};
  sidecar.measurement_fingerprint = {{"timing", "graph"}};
  sidecar.sweep = {12.5, 1.5, 3.25, 0.74, true, nlohmann::json{{"points", 3}}};
  return sidecar;
}

TEST(SidecarSchema, WhatIsWrittenReadsBack) {
  const Sidecar written = written_sidecar();
  const nlohmann::json json = sidecar_json(written);
  EXPECT_EQ(json.at("problem").at("module"), "o_proj");
  EXPECT_EQ(json.at("device").at("multiprocessors"), 132);
  EXPECT_EQ(json.at(sidecar_key::kSweep).at(sidecar_key::kInterrupted), true);
  EXPECT_FALSE(json.contains("grouped"));  // an absent optional section is no key

  const Sidecar read = parse_sidecar(nlohmann::json::parse(json.dump()));
  EXPECT_EQ(read.git_commit, written.git_commit);
  EXPECT_EQ(read.device.name, "NVIDIA H200");
  EXPECT_EQ(read.device.multiprocessors, 132);
  EXPECT_EQ(read.device.memory_bytes, 150ull << 30);
  EXPECT_EQ(read.device.copy_tb_per_s, 4.1);
  ASSERT_TRUE(read.clock_at_start.has_value());
  EXPECT_EQ(read.clock_at_start->power_w, 120.5);
  EXPECT_EQ(read.kernel.name, "fp8_blockscale");
  EXPECT_EQ(read.problem.model, "llama3_8b");
  EXPECT_EQ(read.problem.tp, 2);
  EXPECT_TRUE(read.problem.cuts_scale_block);
  EXPECT_EQ(read.peak.source, "datasheet");
  EXPECT_EQ(read.measurement.seed, written.measurement.seed);
  EXPECT_EQ(read.measurement.timing, "graph");
  EXPECT_TRUE(read.measurement.hot);
  EXPECT_EQ(read.measurement.timing_floors, written.measurement.timing_floors);
  EXPECT_EQ(read.measurement_fingerprint, written.measurement_fingerprint);
  EXPECT_EQ(read.sweep.timed_kernel_s, 3.25);
  EXPECT_TRUE(read.sweep.interrupted);
  EXPECT_EQ(read.sweep.point_phases, written.sweep.point_phases);
  EXPECT_FALSE(read.grouped.has_value());
}

TEST(SidecarSchema, AbsentOrMistypedKeysKeepTheirDefaults) {
  const Sidecar read = parse_sidecar(nlohmann::json::parse(
      R"({"device": {"name": 7, "multiprocessors": "many"}, "problem": {"model": "m", "tp": 1.5},
          "clock_at_start": null, "sweep": "not an object"})"));
  EXPECT_EQ(read.device.name, "");
  EXPECT_EQ(read.device.multiprocessors, 0);
  EXPECT_EQ(read.problem.model, "m");
  EXPECT_EQ(read.problem.tp, 0);
  EXPECT_FALSE(read.clock_at_start.has_value());
  EXPECT_FALSE(read.sweep.interrupted);
  EXPECT_EQ(parse_sidecar(nlohmann::json::array()).problem.module, "");
}

TEST(SidecarSchema, SitsBesideItsCsvAndSaysWhenItIsNotJson) {
  testing_support::ScratchDir dir;
  const auto csv = dir.path() / "profile.csv";
  EXPECT_EQ(sidecar_path(csv), dir.path() / "profile.json");
  EXPECT_FALSE(read_sidecar(csv).has_value());
  dir.write("profile.json", "{\"device\": ");
  EXPECT_THROW(read_sidecar(csv), UserError);
  dir.write("profile.json", sidecar_json(written_sidecar()).dump());
  EXPECT_EQ(parse_sidecar(*read_sidecar(csv)).problem.module, "o_proj");
}

}  // namespace
}  // namespace shapescope
