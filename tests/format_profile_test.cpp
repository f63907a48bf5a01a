// Formats in a sweep: the catalog's and --hf-config's layer formats, --operand-format, the default kernels
// (those taking the layers' formats plus the bf16 baseline, so an FP8 job does not grow), the format each kernel
// runs, file names, and the bad inputs that stop before any work with one line and exit 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "common/model_catalog.hpp"
#include "profiler/grouped_sweep.hpp"
#include "profiler/profile_csv.hpp"
#include "profiler/sweep_runner.hpp"
#include "profiler/sweep_setup.hpp"
#include "tests/profile_cli_support.hpp"
#include "tests/scratch_dir.hpp"
#include "tests/user_error_of.hpp"

namespace shapescope::profiler {
namespace {

using testing_support::user_error_of;

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

ProfileRequest cpu_request(const std::string& model, const std::string& module, int tp,
                           const testing_support::ScratchDir& scratch) {
  ProfileRequest request;
  request.model = model;
  request.module = module;
  request.tp = tp;
  request.backend = "cpu";
  request.threads = 1;
  request.m_sweep.lists = {"1"};
  request.out = (scratch.path() / "out").string();
  return request;
}

TEST(FormatCatalog, GptOssHasMxfp4ExpertsAndBf16Attention) {
  const ModelCatalog catalog = ModelCatalog::load_default();
  for (const auto& [name, experts, layers] :
       {std::tuple{"gpt_oss_20b", 32, 24}, std::tuple{"gpt_oss_120b", 128, 36}}) {
    const ModelSpec& spec = catalog.model(name);
    EXPECT_EQ(spec.num_hidden_layers, layers);
    for (const LinearLayer& layer : spec.layers) {
      if (layer.experts > 0) {
        EXPECT_EQ(layer.format, BlockFormatId::mxfp4) << layer.name;
        EXPECT_EQ(layer.experts, experts);
        EXPECT_EQ(layer.top_k, 4);
        EXPECT_EQ(layer.expert_width, 2880);
      } else {
        EXPECT_EQ(layer.format, BlockFormatId::bf16) << layer.name;
      }
    }
  }
  const std::vector<GemmProblem> experts = catalog.problems("gpt_oss_120b", kExpertsModule, 1, 8);
  ASSERT_EQ(experts.size(), 2u);
  EXPECT_EQ(experts[0].local_experts, 16);
  EXPECT_EQ(experts[0].format, BlockFormatId::mxfp4);
  for (const LinearLayer& layer : catalog.model("llama3_3_70b_nvfp4").layers) EXPECT_EQ(layer.format, BlockFormatId::nvfp4);
  for (const LinearLayer& layer : catalog.model("deepseek_r1_nvfp4").layers) {
    const std::vector<std::string> attention_layers = {"fused_qkv_a_proj", "q_b_proj",     "kv_b_proj",
                                                       "o_proj",           "mla_absorb_q", "mla_absorb_out"};
    const bool attention = has(attention_layers, layer.name);
    EXPECT_EQ(layer.format, attention ? BlockFormatId::bf16 : BlockFormatId::nvfp4) << layer.name;
  }
  // The FP8 catalog is unchanged: every layer fp8_blockscale.
  for (const LinearLayer& layer : catalog.model("deepseek_v3").layers) EXPECT_EQ(layer.format, BlockFormatId::fp8_blockscale);
}

TEST(FormatCatalog, AnUnknownFormatInACatalogFileNamesTheFileAndTheFormats) {
  const std::string error = user_error_of([] {
    parse_model_json(R"({"name": "x", "source": "s", "format": "fp5",
                         "layers": [{"name": "a", "k": 64, "n": 64, "tp": "split_n"}]})",
                     "x.json");
  });
  EXPECT_NE(error.find("x.json"), std::string::npos) << error;
  EXPECT_NE(error.find("'fp5'"), std::string::npos) << error;
}

TEST(FormatHfConfig, QuantizationConfigSetsEachLayersFormat) {
  const testing_support::ScratchDir scratch;
  const std::string gpt_oss = R"({"model_type": "gpt_oss", "hidden_size": 2880, "intermediate_size": 2880,
      "head_dim": 64, "num_attention_heads": 64, "num_key_value_heads": 8, "num_local_experts": 32,
      "experts_per_token": 4, "num_hidden_layers": 24,
      "quantization_config": {"quant_method": "mxfp4",
                              "modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router"]}})";
  const ModelSpec mxfp4 = model_from_hf_config(scratch.write("gpt_oss.json", gpt_oss), "gpt_oss_hf");
  const ModelCatalog models = ModelCatalog::load_default();
  const ModelSpec& catalog = models.model("gpt_oss_20b");
  ASSERT_EQ(mxfp4.layers.size(), catalog.layers.size());
  for (size_t i = 0; i < catalog.layers.size(); ++i) {
    EXPECT_EQ(mxfp4.layers[i].format, catalog.layers[i].format) << catalog.layers[i].name;
    EXPECT_EQ(mxfp4.layers[i].n, catalog.layers[i].n) << catalog.layers[i].name;
    EXPECT_EQ(mxfp4.layers[i].k, catalog.layers[i].k) << catalog.layers[i].name;
  }
  const std::string llama = R"({"model_type": "llama", "hidden_size": 8192, "num_attention_heads": 64,
      "num_key_value_heads": 8, "intermediate_size": 28672, "num_hidden_layers": 80,
      "quantization_config": {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16,
                              "exclude_modules": ["lm_head"]}})";
  for (const LinearLayer& layer : model_from_hf_config(scratch.write("llama.json", llama), "l").layers)
    EXPECT_EQ(layer.format, BlockFormatId::nvfp4) << layer.name;
  std::string unknown = llama;
  unknown.replace(unknown.find("modelopt"), 8, "awq");
  const std::string error = user_error_of([&] { model_from_hf_config(scratch.write("awq.json", unknown), "l"); });
  EXPECT_NE(error.find("quant_method 'awq'"), std::string::npos) << error;
  EXPECT_NE(error.find("models/<name>.json"), std::string::npos) << error;
  std::string group32 = llama;
  group32.replace(group32.find("\"group_size\": 16"), 16, "\"group_size\": 32");
  EXPECT_NE(user_error_of([&] { model_from_hf_config(scratch.write("g32.json", group32), "l"); }).find("group_size 32"),
            std::string::npos);
}

TEST(FormatSweep, DefaultKernelsTakeTheLayersFormatPlusTheBf16Baseline) {
  const testing_support::ScratchDir scratch;
  // An FP8 layer: the FP8 job's kernels, no more.
  const SweepSetup fp8 = prepare_sweep(cpu_request("llama3_8b", "o_proj", 1, scratch));
  EXPECT_TRUE(has(fp8.plan.kernels, "cpu_fp8_blockscale"));
  EXPECT_TRUE(has(fp8.plan.kernels, "cpu_a16w8_blockscale"));
  EXPECT_TRUE(has(fp8.plan.kernels, "cpu_bf16"));
  EXPECT_FALSE(has(fp8.plan.kernels, "cpu_a16w4_blockscale"));
  EXPECT_FALSE(has(fp8.plan.kernels, "cpu_mxfp8_blockscale"));
  EXPECT_EQ(profile_file_name(fp8.plan.problems[0], "cpu_fp8_blockscale"),
            "llama3_8b_o_proj_tp1_N4096_K4096_cpu_fp8_blockscale.csv");  // FP8 file names are as they were
  // An NVFP4 layer: the a16w4 kernel and the bf16 baseline.
  const SweepSetup nvfp4 = prepare_sweep(cpu_request("llama3_3_70b_nvfp4", "o_proj", 2, scratch));
  EXPECT_EQ(nvfp4.plan.kernels, (std::vector<std::string>{"cpu_bf16", "cpu_a16w4_blockscale"}));
  EXPECT_EQ(profile_file_name(nvfp4.plan.problems[0], "cpu_bf16"),
            "llama3_3_70b_nvfp4_o_proj_tp2_N8192_K4096_nvfp4_cpu_bf16.csv");
  // --operand-format replaces the layer's format (what-if).
  ProfileRequest what_if = cpu_request("llama3_8b", "o_proj", 1, scratch);
  what_if.operand_format = "mxfp8";
  const SweepSetup mxfp8 = prepare_sweep(what_if);
  EXPECT_EQ(mxfp8.plan.problems[0].format, BlockFormatId::mxfp8);
  EXPECT_EQ(mxfp8.plan.kernels, (std::vector<std::string>{"cpu_bf16", "cpu_mxfp8_blockscale"}));
}

TEST(FormatSweep, GroupedPresetRunsEachKernelInItsOwnFormat) {
  const testing_support::ScratchDir scratch;
  ProfileRequest request = cpu_request("", "all", 1, scratch);
  request.m_sweep.lists.clear();
  request.grouped.preset = "nvfp4_targets";
  const SweepSetup setup = prepare_sweep(request);
  ASSERT_TRUE(setup.grouped.has_value());
  EXPECT_TRUE(has(setup.grouped->kernels, "cpu_a16w4_blockscale_grouped"));
  for (const GroupedSeries& series : setup.grouped->series) EXPECT_EQ(series.problem.format, BlockFormatId::nvfp4);
  EXPECT_EQ(grouped_file_name(setup.grouped->series[0], "cpu_fp8_blockscale_grouped", kernels::TimingMode::events)
                .find("_nvfp4_cpu_fp8_blockscale_grouped"),
            grouped_file_name(setup.grouped->series[0], "cpu_fp8_blockscale_grouped", kernels::TimingMode::events)
                    .size() -
                std::string("_nvfp4_cpu_fp8_blockscale_grouped.csv").size());
}

TEST(FormatCli, BadFormatInputGetsOneLineAndExit2) {
  if (!testing_support::profile_binary_built()) GTEST_SKIP() << "profile not built";
  testing_support::expect_user_error("--backend cpu --model llama3_8b --operand-format fp5", {"--operand-format", "'fp5'", "nvfp4"});
  testing_support::expect_user_error("--backend cpu --model llama3_8b --module o_proj --kernel cpu_bf16 --operand-format nvfp4",
                                     {"cpu_bf16", "cannot take", "nvfp4", "takes bf16"});
  testing_support::expect_user_error("--backend cpu --shape 256,301 --operand-format nvfp4 --m-list 1",
                                     {"K=301", "cpu_a16w4_blockscale", "multiple of 2"});
}

TEST(FormatCli, AnNvfp4SweepRunsEndToEndWithEveryPointChecked) {
  if (!testing_support::profile_binary_built()) GTEST_SKIP() << "profile not built";
  const testing_support::ScratchDir scratch;
  const testing_support::Outcome outcome = testing_support::run_profile(
      "--backend cpu --threads 1 --shape 256,320 --operand-format e2m1_e8m0_16 --kernel cpu_a16w4_blockscale "
      "--m-list 1,17 --max-samples 2 --min-samples 1 --out " + (scratch.path() / "out").string());
  ASSERT_EQ(outcome.exit_code, 0) << outcome.stderr_text;
  const std::vector<ProfileRow> rows =
      read_profile_csv(scratch.path() / "out" / "shape_N256_K320_e2m1_e8m0_16_cpu_a16w4_blockscale.csv");
  ASSERT_EQ(rows.size(), 2u);
  for (const ProfileRow& row : rows) {
    EXPECT_EQ(row.status, kStatusOk);
    EXPECT_EQ(row.format, "e2m1_e8m0_16");
    EXPECT_EQ(row.dtype, "bf16");
    EXPECT_LT(row.rel_err, 1e-2);
    // Bytes the format reads: bf16 A, half a byte per weight, one e8m0 per 16, bf16 C.
    const double bytes = 2.0 * row.m * 320 + 256 * 160 + 256 * 20 + 2.0 * row.m * 256;
    EXPECT_NEAR(row.gbytes_per_s * row.kernel_time_us * 1e3, bytes, bytes * 1e-6);
  }
}

}  // namespace
}  // namespace shapescope::profiler
