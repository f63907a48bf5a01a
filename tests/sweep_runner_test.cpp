// The sweep runner against a fake kernel and device: resume, atomic rewrite,
// and the rows it writes when a point cannot be measured.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include "common/csv.hpp"
#include "common/file_lock.hpp"
#include "common/interrupt.hpp"
#include "common/shape_axes.hpp"
#include "common/user_error.hpp"
#include "fake_device.hpp"
#include "common/kernel_counters.hpp"
#include "profiler/counter_pass.hpp"
#include "profiler/profile_csv.hpp"
#include "profiler/resume.hpp"
#include "profiler/sweep_runner.hpp"
#include "tests/scratch_dir.hpp"

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
  explicit FakeSession(std::function<void()> on_prepare = [] {}) : on_prepare_(std::move(on_prepare)) {}
  std::size_t activation_bytes(int64_t m) const override { return std::size_t(m) * 1000; }
  std::unique_ptr<kernels::PreparedGemm> prepare(int64_t m, uint64_t) override {
    on_prepare_();
    counters.prepared.insert(m);
    ++counters.prepares;
    if (m == 7) throw std::runtime_error("launch failed: out of shared memory");
    return std::make_unique<FakeGemm>(m);
  }

 private:
  std::function<void()> on_prepare_;
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
    plan.problems = {GemmProblem{"toy", "up_proj", 2, 256, 128, 1}};
    plan.kernels = {kFakeKernel};
    plan.m_values = {1, 2, 3, 7, 9, 64};
    plan.out_dir = out;
    plan.peak_override_tflops = 100;
    plan.measure.min_samples = 3;
  }
  void TearDown() override { set_interrupt_requested(false); }
  fs::path csv() const { return out / profile_file_name(plan.problems[0], kFakeKernel, plan.measure.timing); }
  std::map<int64_t, ProfileRow> rows_by_m() const {
    std::map<int64_t, ProfileRow> rows;
    for (const ProfileRow& row : read_profile_csv(csv())) rows[row.batch] = row;
    return rows;
  }

  testing_support::ScratchDir scratch_;
  const fs::path out = scratch_.path();
  SweepPlan plan;
  testing_fakes::DeviceScript script = [] {
    testing_fakes::DeviceScript fake;
    fake.durations_us = {kFakeRunUs};
    fake.free_bytes = kFakeFreeBytes;
    return fake;
  }();
  testing_fakes::FakeDevice device{script};
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

TEST_F(SweepRunnerTest, EveryRowRecordsTheConfigurationTheKernelEntryPicksForItsShape) {
  kernels::KernelEntry entry = kernels::find_kernel(kFakeKernel);
  entry.name = "test_fake_configured_kernel";
  entry.config_for = [](const kernels::GemmShape& shape) {
    return kernels::KernelConfig{shape.m < 8 ? 64 : 128, 256, 1, 2, 1, shape.m < 8 ? 4 : 1};
  };
  kernels::register_kernel(entry);
  plan.kernels = {entry.name};
  run_sweep(device, plan);
  std::map<int64_t, ProfileRow> rows;
  for (const ProfileRow& row : read_profile_csv(out / profile_file_name(plan.problems[0], entry.name)))
    rows[row.batch] = row;
  ASSERT_EQ(rows.size(), plan.m_values.size());
  // Measured, failed and skipped rows alike: the configuration is a fact of the shape.
  for (const int64_t m : {1, 7, 9, 64}) {
    EXPECT_EQ(rows[m].tile_m, m < 8 ? 64 : 128) << "M=" << m;
    EXPECT_EQ(rows[m].tile_n, 256) << "M=" << m;
    EXPECT_EQ(rows[m].cluster_m, 1) << "M=" << m;
    EXPECT_EQ(rows[m].cluster_n, 2) << "M=" << m;
    EXPECT_EQ(rows[m].cluster_k, 1) << "M=" << m;
    EXPECT_EQ(rows[m].split_k, m < 8 ? 4 : 1) << "M=" << m;
  }
  // A shape the kernel refuses has no configuration.
  EXPECT_EQ(rows[3].status, kStatusUnsupported);
  EXPECT_EQ(rows[3].tile_m, 0);
  EXPECT_EQ(rows[3].split_k, 0);
  // The fake entry sets no config_for: its rows say nothing.
  plan.kernels = {kFakeKernel};
  run_sweep(device, plan);
  for (const auto& [m, row] : rows_by_m()) EXPECT_EQ(row.tile_m, 0) << "M=" << m;
}

TEST_F(SweepRunnerTest, ResumeKeepsMeasuredRowsAndMeasuresOnlyTheRest) {
  SweepPlan earlier_plan = plan;
  earlier_plan.m_values = {2};
  run_sweep(device, earlier_plan);
  std::vector<ProfileRow> earlier = read_profile_csv(csv());
  ASSERT_EQ(earlier.size(), 1u);
  earlier[0].kernel_time_us = 12345;  // marks the row as the earlier run's
  write_profile_csv(csv(), earlier);
  counters = {};
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

TEST_F(SweepRunnerTest, ResumeRefusesRowsMeasuredOtherwiseAndNamesTheDifference) {
  run_sweep(device, plan);  // cold
  const auto before = rows_by_m();
  plan.m_values.push_back(128);  // a new M: resuming would add rows to the file
  plan.measure.hot = true;
  for (const auto& attempt : {std::function<void()>([&] { check_resumable(plan, device.info()); }),
                              std::function<void()>([&] { run_sweep(device, plan); })}) {
    try {
      attempt();
      FAIL() << "a cold file resumed hot";
    } catch (const UserError& error) {
      EXPECT_NE(std::string(error.what()).find("cache: cold in the file, hot in this run"), std::string::npos)
          << error.what();
    }
  }
  EXPECT_EQ(rows_by_m().size(), before.size());
  plan.measure.hot = false;
  plan.seed = 2;
  EXPECT_THROW(check_resumable(plan, device.info()), UserError);
  plan.seed = 1;
  EXPECT_NO_THROW(check_resumable(plan, device.info()));
  // Every M asked for already in the file: nothing would be measured, so nothing is mixed.
  plan.m_values.pop_back();
  plan.seed = 2;
  counters = {};
  EXPECT_NO_THROW(check_resumable(plan, device.info()));
  run_sweep(device, plan);
  EXPECT_TRUE(counters.prepared.empty());
  EXPECT_EQ(rows_by_m().size(), before.size());
}

TEST_F(SweepRunnerTest, AStudyFormatCsvOrACsvWithoutItsSidecarIsNotTakenAsMeasured) {
  std::ofstream(csv()) << "batch,kernel_time,flops,utils\n1,10,1,0.5\n2,10,2,0.5\n";
  EXPECT_THROW(run_sweep(device, plan), UserError);
  EXPECT_TRUE(counters.prepared.empty());
  run_sweep(device, [&] {
    SweepPlan other = plan;
    other.out_dir = out / "other";
    fs::create_directories(other.out_dir);
    return other;
  }());
  fs::copy_file(out / "other" / csv().filename(), csv(), fs::copy_options::overwrite_existing);  // rows, no sidecar
  plan.m_values.push_back(128);  // a new M: resuming would add rows to the file
  try {
    run_sweep(device, plan);
    FAIL() << "rows without a sidecar resumed";
  } catch (const UserError& error) {
    EXPECT_NE(std::string(error.what()).find("no sidecar"), std::string::npos) << error.what();
  }
}

TEST_F(SweepRunnerTest, ASecondRunOnTheSameFileWaitsAndMergesInsteadOfWiping) {
  SweepPlan first = plan;
  first.m_values = {1, 2};
  run_sweep(device, first);
  auto lock = FileLock::acquire(csv(), [](const std::string&) {}, [] { return false; });  // a run still writing
  ASSERT_TRUE(lock);
  counters = {};
  SweepPlan second = plan;
  second.m_values = {3, 8};
  std::thread waiting([&] { run_sweep(device, second); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(rows_by_m().size(), 2u) << "the second run wrote while the first held the file";
  // The holder adds a row before it lets go: the waiting run must keep it.
  std::vector<ProfileRow> rows = read_profile_csv(csv());
  rows.push_back(rows[0]);
  rows.back().batch = rows.back().m = 5;
  write_profile_csv(csv(), rows);
  lock.reset();
  waiting.join();
  EXPECT_EQ(counters.prepared, (std::set<int64_t>{8}));  // 3 is unsupported
  const auto merged = rows_by_m();
  EXPECT_EQ(merged.size(), 5u);
  for (const int64_t m : {1, 2, 3, 5, 8}) EXPECT_EQ(merged.count(m), 1u) << m;
}

TEST_F(SweepRunnerTest, TheSidecarIsOnDiskBeforeTheFirstRow) {
  kernels::KernelEntry entry = kernels::find_kernel(kFakeKernel);
  entry.name = "test_fake_sidecar_kernel";
  static fs::path sidecar;
  static bool sidecar_seen_first = false;
  sidecar = sidecar_path(out / profile_file_name(plan.problems[0], entry.name));
  entry.open = [](kernels::Device&, const kernels::WeightShape&, uint64_t) -> std::unique_ptr<kernels::GemmSession> {
    sidecar_seen_first = false;
    return std::make_unique<FakeSession>([] { sidecar_seen_first = fs::exists(sidecar); });
  };
  kernels::register_kernel(entry);
  plan.kernels = {entry.name};
  plan.m_values = {1};
  run_sweep(device, plan);
  EXPECT_TRUE(sidecar_seen_first);
}

TEST_F(SweepRunnerTest, ACompleteFileWhoseSidecarStillSaysInterruptedIsMarkedComplete) {
  run_sweep(device, plan);
  nlohmann::json sidecar = *read_sidecar(csv());
  sidecar["sweep"]["interrupted"] = true;  // killed between the last CSV write and the sidecar's
  std::ofstream(sidecar_path(csv())) << sidecar.dump();
  counters = {};
  run_sweep(device, plan);
  EXPECT_TRUE(counters.prepared.empty());
  EXPECT_EQ((*read_sidecar(csv()))["sweep"]["interrupted"], false);
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
  script.l2_bytes = 2'000'000;       // a run touches 1 MB: four sets cover 2 x L2
  script.free_bytes = 1'000'000'000;
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
  script.l2_bytes = 2'000'000;
  script.free_bytes = 4'500'000;  // half of it holds two 1 MB sets, not four
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
  script.l2_bytes = 2'000'000;
  script.free_bytes = 1'000'000'000;
  plan.m_values = {1, 2};
  plan.steady_warm_up = false;
  run_sweep(device, plan);
  EXPECT_EQ(counters.sessions_opened, 1);
  for (const auto& [m, row] : rows_by_m()) {
    EXPECT_EQ(row.timing, "events");
    EXPECT_EQ(row.operand_sets, 1);
  }
}

// A gemm whose comparison says on which thread it ran and whether the samples were timed before it ended.
class ComparedGemm final : public kernels::PreparedGemm {
 public:
  void run() override { ++counters.runs; }
  kernels::CheckResult check() override { return begin_check()(); }
  std::function<kernels::CheckResult()> begin_check() override {
    return [] {
      compared_on = std::this_thread::get_id();
      kernels::CheckResult result;
      result.elements_checked = 1;
      result.rel_err = 0.25;  // fails: the result must reach the row whichever thread computed it
      return result;
    };
  }
  std::string launch_name() const override { return "compared"; }
  double min_bytes() const override { return 1e6; }
  static inline std::thread::id compared_on;
};

class ComparedSession final : public kernels::GemmSession {
 public:
  std::size_t activation_bytes(int64_t) const override { return 0; }
  std::unique_ptr<kernels::PreparedGemm> prepare(int64_t, uint64_t) override {
    return std::make_unique<ComparedGemm>();
  }
};

TEST_F(SweepRunnerTest, TheReferenceComparisonRunsBesideTheTimingOnAGpuAndBeforeItOnTheCpu) {
  kernels::KernelEntry entry = kernels::find_kernel(kFakeKernel);
  entry.name = "test_fake_compared_kernel";
  entry.open = [](kernels::Device&, const kernels::WeightShape&, uint64_t) -> std::unique_ptr<kernels::GemmSession> {
    return std::make_unique<ComparedSession>();
  };
  kernels::register_kernel(entry);
  plan.kernels = {entry.name};
  plan.m_values = {4};
  plan.steady_warm_up = false;
  for (const kernels::BackendKind kind : {kernels::BackendKind::cuda, kernels::BackendKind::cpu}) {
    script.kind = kind;
    fs::remove_all(out);
    fs::create_directories(out);
    const SweepResult result = run_sweep(device, plan);
    EXPECT_EQ(ComparedGemm::compared_on != std::this_thread::get_id(), kind == kernels::BackendKind::cuda)
        << kernels::to_string(kind);
    const auto rows = read_profile_csv(out / profile_file_name(plan.problems[0], entry.name));
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].status, kStatusNumericalFail);
    EXPECT_DOUBLE_EQ(rows[0].rel_err, 0.25);
    EXPECT_EQ(result.phases.points(), 1);
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

TEST(ProfileFileName, ARawShapeIsNamedByItsShapeAlone) {
  EXPECT_EQ(profile_file_name(parse_shape("512,128,16"), "k"), "shape_N512_K128_B16_k.csv");
  EXPECT_EQ(profile_file_name(parse_shape("7168,2304"), "k", kernels::TimingMode::graph),
            "shape_N7168_K2304_k_graph.csv");
}

// profile --counters: after the sweep, one collection (and one traced run for the kernel names)
// per M the CSV holds a good row for; failed, refused and erroring points get none.
TEST_F(SweepRunnerTest, CounterPassCollectsEveryGoodPointOnce) {
  script.has_counters = true;
  script.counter_passes = 3;
  KernelCounters scripted;
  scripted.duration_us = 42.6;
  scripted.dram_read_bytes = 9.7e7;
  scripted.sm_active_pct = 70;
  script.counters = {scripted};
  script.launched = "gemm_kernel; splitKreduce_kernel";
  run_sweep(device, plan);
  const int runs_after_sweep = counters.runs;
  const auto session = open_counters(device);
  const std::vector<fs::path> written = run_counter_pass(device, *session, plan);
  ASSERT_EQ(written, std::vector<fs::path>{counters_path(csv())});
  // M = 1 and 2; not 3 (refused), 7 (error), 9 (numerical_fail) nor 64 (skipped-oom).
  EXPECT_EQ(script.counter_collections, 2);
  EXPECT_EQ(counters.runs - runs_after_sweep, 2 * (1 + 3));  // one traced run and a run per pass each
  const auto rows = read_counters_file(written[0]);
  ASSERT_EQ(rows.size(), 2u);
  for (const int64_t m : {1, 2}) {
    ASSERT_TRUE(rows.count(m)) << m;
    EXPECT_EQ(rows.at(m).duration_us, 42.6);
    EXPECT_EQ(rows.at(m).min_bytes, 1e6);
    EXPECT_EQ(rows.at(m).kernels, (std::vector<std::string>{"gemm_kernel", "splitKreduce_kernel"}));
  }
}

// A cold count flushes and waits before EVERY pass, not once before the first, so
// no pass starts with lines dirtied before it (the pass before, the traced run, operand fills)
// and pays their write-back; a hot count leaves the cache as the previous run left it.
std::vector<std::string> counter_pass_log(testing_fakes::DeviceScript& script, kernels::Device& device,
                                          const SweepPlan& plan) {
  script.has_counters = true;
  script.counter_passes = 2;
  run_sweep(device, plan);
  const std::size_t sweep_end = script.device_log.size();
  const auto session = open_counters(device);
  run_counter_pass(device, *session, plan);
  return {script.device_log.begin() + std::ptrdiff_t(sweep_end), script.device_log.end()};
}

TEST_F(SweepRunnerTest, AColdCountFlushesAndWaitsBeforeEveryPass) {
  const std::vector<std::string> pass = {"flush", "synchronize", "counted pass"};
  std::vector<std::string> expected;
  for (int collection = 0; collection < 2; ++collection)  // M = 1 and 2
    for (int pass_index = 0; pass_index < 2; ++pass_index) expected.insert(expected.end(), pass.begin(), pass.end());
  EXPECT_EQ(counter_pass_log(script, device, plan), expected);
}

TEST_F(SweepRunnerTest, AHotCountDoesNotFlush) {
  plan.measure.hot = true;
  EXPECT_EQ(counter_pass_log(script, device, plan), std::vector<std::string>(2 * 2, "counted pass"));
}

TEST_F(SweepRunnerTest, CountersOnADeviceWithoutThemAreAUserError) {
  script.has_counters = false;
  script.kind = kernels::BackendKind::cpu;
  try {
    open_counters(device);
    FAIL() << "no error";
  } catch (const UserError& error) {
    EXPECT_EQ(std::string(error.what()), "--counters: the cpu backend has no hardware counters; use a GPU or drop "
                                         "--counters");
  }
}


TEST_F(SweepRunnerTest, AnAdaptiveSweepMeasuresPartOfTheGridRecordsItAndResumesFromItsFile) {
  plan.m_values.clear();
  for (int64_t m = 1; m <= 40; ++m) plan.m_values.push_back(m);
  plan.m_search.mode = MSearch::adaptive;
  plan.steady_warm_up = false;  // the warm-up would prepare the largest M again
  run_sweep(device, plan);
  const auto first = rows_by_m();
  EXPECT_LT(first.size(), plan.m_values.size());
  EXPECT_FALSE(first.count(3));  // unsupported: no candidate
  const nlohmann::json sidecar = *read_sidecar(csv());
  EXPECT_EQ(sidecar["m_search"]["mode"], "adaptive");
  EXPECT_EQ(sidecar["m_search"]["measured_points"], first.size());
  // The same search again: every M it asks for is in the file, so nothing is measured.
  counters = {};
  run_sweep(device, plan);
  EXPECT_TRUE(counters.prepared.empty());
  EXPECT_EQ(rows_by_m().size(), first.size());
}

}  // namespace
}  // namespace shapescope::profiler
