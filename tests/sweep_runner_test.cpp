// The sweep runner against a fake kernel and device: resume, atomic rewrite,
// and the rows it writes when a point cannot be measured.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include <unistd.h>

#include "common/csv.hpp"
#include "common/user_error.hpp"
#include "profiler/interrupt.hpp"
#include "profiler/profile_csv.hpp"
#include "profiler/sweep_runner.hpp"

namespace shapescope::profiler {
namespace {

namespace fs = std::filesystem;

struct Counters {
  std::set<int64_t> prepared;
  int runs = 0, sessions_opened = 0, prepares = 0;
};
Counters counters;

constexpr double kFakeRunUs = 100.0;
constexpr std::size_t kFakeFreeBytes = 50'000;

class FakeGemm final : public kernels::PreparedGemm {
 public:
  explicit FakeGemm(int64_t m) : m_(m) {}
  void run() override { ++counters.runs; }
  kernels::CheckResult check() override {
    run();
    kernels::CheckResult result;
    result.elements_checked = 10;
    result.rel_err = m_ == 9 ? 0.5 : 1e-3;  // M=9 computes garbage
    return result;
  }
  std::string launch_name() const override { return "fake, \"tile\" 64x64"; }
  double min_bytes() const override { return 1e6; }

 private:
  int64_t m_;
};

class FakeSession final : public kernels::GemmSession {
 public:
  std::size_t activation_bytes(int64_t m) const override { return std::size_t(m) * 1000; }
  std::unique_ptr<kernels::PreparedGemm> prepare(int64_t m, uint64_t) override {
    counters.prepared.insert(m);
    ++counters.prepares;
    if (m == 7) throw std::runtime_error("launch failed: out of shared memory");
    return std::make_unique<FakeGemm>(m);
  }
};

class FixedTimer final : public kernels::Timer {
 public:
  void start() override {}
  void stop() override {}
  double elapsed_us() override { return kFakeRunUs; }
};

class FixedSequence final : public kernels::RunSequence {
 public:
  explicit FixedSequence(std::size_t runs) : runs_(runs) {}
  double replay_us() override { return double(runs_) * kFakeRunUs; }

 private:
  std::size_t runs_;
};

class FakeDevice final : public kernels::Device {
 public:
  kernels::BackendKind kind() const override { return kernels::BackendKind::cuda; }
  kernels::DeviceInfo info() const override {
    kernels::DeviceInfo info;
    info.name = "Fake GPU";
    info.backend = "cuda";
    info.l2_bytes = l2_bytes;
    return info;
  }
  std::size_t l2_bytes = 0;
  std::size_t free_bytes = kFakeFreeBytes;
  std::unique_ptr<kernels::Timer> make_timer() override { return std::make_unique<FixedTimer>(); }
  void flush_cache() override {}
  void synchronize() override {}
  std::size_t free_memory_bytes() const override { return free_bytes; }
  std::optional<kernels::ClockSample> sample_clock() const override { return std::nullopt; }
  std::unique_ptr<kernels::RunSequence> capture(const std::vector<kernels::PreparedGemm*>& runs) override {
    return std::make_unique<FixedSequence>(runs.size());
  }
  std::unique_ptr<kernels::Timer> make_kernel_timer() override { return std::make_unique<FixedTimer>(); }
  std::unique_ptr<kernels::PreparedGemm> empty_run() override { return std::make_unique<FakeGemm>(1); }
};

const char* kFakeKernel = "test_fake_sweep_kernel";

class SweepRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kernels::KernelEntry entry;
    entry.name = kFakeKernel;
    entry.backend = kernels::BackendKind::cuda;
    entry.dtype = "fp8";
    entry.formats = "fake";
    entry.unsupported_reason = [](const kernels::GemmShape& shape) -> std::optional<std::string> {
      if (shape.m == 3) return "M=3 is odd";
      return std::nullopt;
    };
    entry.open = [](kernels::Device&, const kernels::WeightShape&, uint64_t) -> std::unique_ptr<kernels::GemmSession> {
      ++counters.sessions_opened;
      return std::make_unique<FakeSession>();
    };
    kernels::register_kernel(entry);
    counters = {};
    set_interrupt_requested(false);
    out = fs::temp_directory_path() / ("shapescope_sweep_test_" + std::to_string(::getpid()) + "_" +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(out);
    fs::create_directories(out);
    plan.problems = {GemmProblem{"toy", "up_proj", 2, 256, 128, 1}};
    plan.kernels = {kFakeKernel};
    plan.m_values = {1, 2, 3, 7, 9, 64};
    plan.out_dir = out;
    plan.peak_override_tflops = 100;
    plan.measure.min_samples = 3;
  }
  void TearDown() override {
    set_interrupt_requested(false);
    fs::remove_all(out);
  }
  fs::path csv() const { return out / profile_file_name(plan.problems[0], kFakeKernel, plan.measure.timing); }
  std::map<int64_t, ProfileRow> rows_by_m() const {
    std::map<int64_t, ProfileRow> rows;
    for (const ProfileRow& row : read_profile_csv(csv())) rows[row.batch] = row;
    return rows;
  }

  fs::path out;
  SweepPlan plan;
  FakeDevice device;
};

TEST_F(SweepRunnerTest, AShapeTheKernelRefusesIsUnsupportedEvenWhenItsSessionCannotOpen) {
  kernels::KernelEntry entry = kernels::find_kernel(kFakeKernel);
  entry.name = "test_fake_unbatched_kernel";
  entry.unsupported_reason = [](const kernels::GemmShape& shape) -> std::optional<std::string> {
    if (shape.batch_count != 1) return "not batched";
    return std::nullopt;
  };
  entry.open = [](kernels::Device&, const kernels::WeightShape&, uint64_t) -> std::unique_ptr<kernels::GemmSession> {
    throw std::runtime_error("cannot open a batched shape");
  };
  kernels::register_kernel(entry);
  plan.kernels = {entry.name};
  plan.problems[0].batch_count = 4;
  run_sweep(device, plan);
  const auto rows = read_profile_csv(out / profile_file_name(plan.problems[0], entry.name));
  ASSERT_EQ(rows.size(), plan.m_values.size());
  for (const ProfileRow& row : rows) {
    EXPECT_EQ(row.status, kStatusUnsupported) << "M=" << row.batch;
    EXPECT_EQ(row.note, "not batched");
  }
}

TEST_F(SweepRunnerTest, FailuresBecomeRowsAndTheSweepGoesOn) {
  const SweepResult result = run_sweep(device, plan);
  auto rows = rows_by_m();
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[1].status, kStatusOk);
  EXPECT_EQ(rows[1].kernel_name, "fake, \"tile\" 64x64");  // commas and quotes survive the CSV
  EXPECT_DOUBLE_EQ(rows[1].kernel_time_us, kFakeRunUs);
  EXPECT_DOUBLE_EQ(rows[2].tflops, 2.0 * 2 * 256 * 128 / kFakeRunUs / 1e6);
  EXPECT_DOUBLE_EQ(rows[2].utils, rows[2].tflops / 100);
  EXPECT_EQ(rows[3].status, kStatusUnsupported);
  EXPECT_EQ(rows[3].note, "M=3 is odd");
  EXPECT_EQ(rows[7].status, kStatusError);
  EXPECT_NE(rows[7].note.find("out of shared memory"), std::string::npos);
  EXPECT_EQ(rows[9].status, kStatusNumericalFail);
  EXPECT_DOUBLE_EQ(rows[9].rel_err, 0.5);
  EXPECT_GT(rows[9].kernel_time_us, 0);  // still timed, flagged
  EXPECT_EQ(rows[64].status, kStatusSkippedOom);  // 64000 bytes > 50000 free
  EXPECT_NE(rows[64].note.find("free"), std::string::npos);
  EXPECT_EQ(counters.prepared.count(64), 0u);

  ASSERT_EQ(result.files.size(), 1u);
  EXPECT_EQ(result.files[0].ok, 2);
  EXPECT_EQ(result.files[0].failed, 4);
  EXPECT_FALSE(result.interrupted);
  EXPECT_TRUE(fs::exists(sidecar_path(csv())));
  // Only the CSV and its sidecar: no temporaries left behind by the atomic rewrites.
  EXPECT_EQ(std::distance(fs::directory_iterator(out), fs::directory_iterator()), 2);
}

TEST_F(SweepRunnerTest, ResumeKeepsMeasuredRowsAndMeasuresOnlyTheRest) {
  ProfileRow earlier;
  earlier.batch = earlier.m = 2;
  earlier.kernel_time_us = 12345;
  earlier.kernel_name = "from an earlier run";
  write_profile_csv(csv(), {earlier});
  const SweepResult result = run_sweep(device, plan);
  EXPECT_EQ(counters.prepared.count(2), 0u);
  EXPECT_EQ(counters.prepared.count(1), 1u);
  auto rows = rows_by_m();
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_DOUBLE_EQ(rows[2].kernel_time_us, 12345);
  EXPECT_EQ(result.files[0].resumed, 1);

  counters = {};
  run_sweep(device, plan);  // everything measured: nothing is prepared again
  EXPECT_TRUE(counters.prepared.empty());
  EXPECT_EQ(rows_by_m().size(), 6u);
}

TEST_F(SweepRunnerTest, InterruptStopsBetweenPointsAndStillWritesTheFile) {
  set_interrupt_requested(true);
  const SweepResult result = run_sweep(device, plan);
  EXPECT_TRUE(result.interrupted);
  EXPECT_TRUE(counters.prepared.empty());
  EXPECT_TRUE(fs::exists(csv()));
  EXPECT_TRUE(rows_by_m().empty());
}

TEST_F(SweepRunnerTest, GraphTimingRotatesOverEnoughSessionsToCoverTwiceTheL2) {
  device.l2_bytes = 2'000'000;       // a run touches 1 MB: four sets cover 2 x L2
  device.free_bytes = 1'000'000'000;
  plan.measure.timing = kernels::TimingMode::graph;
  plan.m_values = {1, 2};
  plan.steady_warm_up = false;  // the clock warm-up opens a session of its own
  run_sweep(device, plan);
  EXPECT_EQ(counters.sessions_opened, 4);  // opened once, kept for every M
  EXPECT_EQ(counters.prepares, 2 * 4);
  for (const auto& [m, row] : rows_by_m()) {
    EXPECT_EQ(row.timing, "graph");
    EXPECT_EQ(row.operand_sets, 4);
    EXPECT_EQ(row.status, kStatusOk);
    EXPECT_TRUE(row.note.empty()) << row.note;
    EXPECT_DOUBLE_EQ(row.kernel_time_us, kFakeRunUs);
  }
}

TEST_F(SweepRunnerTest, GraphTimingShortOfMemorySaysTheRotationIsPartlyWarm) {
  device.l2_bytes = 2'000'000;
  device.free_bytes = 4'500'000;  // half of it holds two 1 MB sets, not four
  plan.measure.timing = kernels::TimingMode::graph;
  plan.m_values = {1};
  run_sweep(device, plan);
  const ProfileRow row = rows_by_m().at(1);
  EXPECT_EQ(row.operand_sets, 2);
  EXPECT_NE(row.note.find("partly warm"), std::string::npos) << row.note;
}

TEST_F(SweepRunnerTest, AResumedFileTimedAnotherWayIsRefusedBeforeAnyWork) {
  ProfileRow earlier;
  earlier.batch = earlier.m = 2;
  earlier.kernel_time_us = 12345;
  earlier.timing = "events";
  plan.measure.timing = kernels::TimingMode::graph;
  write_profile_csv(csv(), {earlier});
  EXPECT_THROW(run_sweep(device, plan), UserError);
  EXPECT_TRUE(counters.prepared.empty());
}

TEST_F(SweepRunnerTest, EventTimingUsesOneSessionAndSaysSoInEveryRow) {
  device.l2_bytes = 2'000'000;
  device.free_bytes = 1'000'000'000;
  plan.m_values = {1, 2};
  plan.steady_warm_up = false;
  run_sweep(device, plan);
  EXPECT_EQ(counters.sessions_opened, 1);
  for (const auto& [m, row] : rows_by_m()) {
    EXPECT_EQ(row.timing, "events");
    EXPECT_EQ(row.operand_sets, 1);
  }
}

TEST(ProfileFileName, CarriesShapeBatchAndKernel) {
  GemmProblem problem{"deepseek_v3", "attn_mqa_absorbed", 8, 512, 128, 16};
  EXPECT_EQ(profile_file_name(problem, "k"), "deepseek_v3_attn_mqa_absorbed_tp8_N512_K128_B16_k.csv");
  problem.batch_count = 1;
  EXPECT_EQ(profile_file_name(problem, "k"), "deepseek_v3_attn_mqa_absorbed_tp8_N512_K128_k.csv");
  EXPECT_EQ(profile_file_name(problem, "k", kernels::TimingMode::graph),
            "deepseek_v3_attn_mqa_absorbed_tp8_N512_K128_k_graph.csv");
}

}  // namespace
}  // namespace shapescope::profiler
