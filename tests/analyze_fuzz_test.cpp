// Random and truncated bytes into the readers and the analysis: any outcome
// but a crash or an exception other than UserError is acceptable.
#include <fstream>
#include <random>
#include <sstream>

#include <gtest/gtest.h>

#include "analyze/analysis.hpp"
#include "analyze_test_support.hpp"
#include "common/user_error.hpp"

namespace shapescope::analyze {
namespace {

std::string head_of(const std::filesystem::path& file, std::size_t bytes) {
  std::ifstream in(file, std::ios::binary);
  std::string text(bytes, '\0');
  in.read(text.data(), static_cast<std::streamsize>(bytes));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

// Returns true when the input was accepted; fails the test on any non-UserError.
bool survives(const testing::ScratchDir& dir, const std::string& name, const std::string& content) {
  const auto file = dir.write(name, content);
  try {
    AnalysisOptions options;
    options.check_split = true;
    for (const Series& series : read_series_file(file.string(), {})) analyze_series(series, options, MWeights());
    return true;
  } catch (const UserError&) {
    return false;
  } catch (const std::exception& error) {
    ADD_FAILURE() << "non-UserError exception: " << error.what() << " on input:\n" << content.substr(0, 400);
    return false;
  }
}

std::vector<std::string> seeds() {
  std::vector<std::string> texts = {
      "batch,kernel_time,flops,utils,kernel_name\n1,10,1,0.1,\"a,b\"\n2,9,2,0.2,x\n4,30,1,0.05,y\n",
      "gfx,cu_num,M,N,K,libtype,kernelId,splitK,us,kernelName,tflops,bw,errRatio\n"
      "gfx942,304,16,512,7168,ck,1,0,10.0,k,10.0,1,0\ngfx942,304,32,512,7168,ck,1,0,30.0,k,6.0,1,0\n"};
  if (std::filesystem::is_directory(testing::shared_data())) {
    texts.push_back(head_of(testing::fairyspeed(testing::kRtx4090Torch251), 6000));
    texts.push_back(head_of(testing::shared_data() / "aiter" / "a8w8_blockscale_tuned_gemm_ds_v3.csv", 6000));
  }
  return texts;
}

TEST(ReaderFuzz, TruncatedInputsNeverCrash) {
  testing::ScratchDir dir;
  for (const std::string& seed : seeds()) {
    const std::size_t step = std::max<std::size_t>(1, seed.size() / 150);
    for (std::size_t length = 0; length <= seed.size(); length += step) {
      survives(dir, "cut.csv", seed.substr(0, length));
    }
  }
}

TEST(ReaderFuzz, MutatedAndRandomBytesNeverCrash) {
  testing::ScratchDir dir;
  std::mt19937 random(7);
  const std::string alphabet = ",\"\n\r0123456789.-eE+naif xyz\t";
  std::size_t accepted = 0;
  for (const std::string& seed : seeds()) {
    for (int round = 0; round < 150; ++round) {
      std::string text = seed;
      const int edits = 1 + static_cast<int>(random() % 8);
      for (int edit = 0; edit < edits && !text.empty(); ++edit) {
        const std::size_t at = random() % text.size();
        switch (random() % 3) {
          case 0:
            text[at] = alphabet[random() % alphabet.size()];
            break;
          case 1:
            text.erase(at, 1 + random() % 4);
            break;
          default:
            text.insert(at, 1, static_cast<char>(random() % 256));
        }
      }
      accepted += survives(dir, "mutated.csv", text);
    }
  }
  for (int round = 0; round < 200; ++round) {
    std::string noise(random() % 512, '\0');
    for (char& c : noise) c = static_cast<char>(random() % 256);
    survives(dir, "noise.csv", noise);
  }
  EXPECT_GT(accepted, 0u);  // the mutations are not all rejected: the analysis ran too
}

}  // namespace
}  // namespace shapescope::analyze
