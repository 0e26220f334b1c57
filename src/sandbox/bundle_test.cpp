#include "sandbox/bundle.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "base/temp_dir.hpp"

namespace escouade::sandbox {
namespace {

TEST(RefuseOldSdk, ABundleWithoutTheMarkIsNotAnSdkBundleAndRuns) {
  EXPECT_EQ(refuse_old_sdk("import 'node:readline';\n"), std::nullopt);
  EXPECT_EQ(refuse_old_sdk(""), std::nullopt);
  EXPECT_EQ(refuse_old_sdk("\n// @escouade-dev/plugin 0.1.0\n"), std::nullopt);  // not first
}

TEST(RefuseOldSdk, From03OnItRuns) {
  EXPECT_EQ(refuse_old_sdk("// @escouade-dev/plugin 0.3.0\nx"), std::nullopt);
  EXPECT_EQ(refuse_old_sdk("// @escouade-dev/plugin 0.12.1\r\nx"), std::nullopt);
  EXPECT_EQ(refuse_old_sdk("// @escouade-dev/plugin 1.0.0"), std::nullopt);
}

TEST(RefuseOldSdk, Before03ItIsToldToRebuild) {
  const auto why = refuse_old_sdk("// @escouade-dev/plugin 0.2.9\nimport x from 'node:fs';");
  ASSERT_TRUE(why);
  EXPECT_EQ(*why,
            "its bundle was made with @escouade-dev/plugin 0.2.9, which does not run in the "
            "sandbox: rebuild it with @escouade-dev/plugin 0.3 or later");
  EXPECT_TRUE(refuse_old_sdk("// @escouade-dev/plugin 0.1"));
  EXPECT_TRUE(refuse_old_sdk("// @escouade-dev/plugin banana"));
}

TEST(ReadRootFiles, OnlyTheJsonFilesAtTheRootWithinTheirLimitsAndNeverTheManifest) {
  TempDir dir;
  std::ofstream(dir.path() / "escouade-plugin.json") << "{}";
  std::ofstream(dir.path() / "rules.json") << R"({"a":1})";
  std::ofstream(dir.path() / "notes.txt") << "not json";
  std::filesystem::create_directories(dir.path() / "data");
  std::ofstream(dir.path() / "data" / "deep.json") << "{}";
  std::ofstream(dir.path() / "big.json") << std::string(RootFiles::kEachBytes + 1, ' ');
  const RootFiles files = read_root_files(dir.path());
  ASSERT_EQ(files.files.size(), 1u);
  EXPECT_EQ(files.files.at("rules.json"), R"({"a":1})");
  EXPECT_EQ(files.left_out.at("big.json"), "it is larger than 256 KB");
}

TEST(ReadRootFiles, OneMegabyteInAll) {
  TempDir dir;
  for (char c = 'a'; c <= 'e'; ++c)
    std::ofstream(dir.path() / (std::string(1, c) + ".json"))
        << std::string(RootFiles::kEachBytes, ' ');
  const RootFiles files = read_root_files(dir.path());
  EXPECT_EQ(files.files.size(), 4u);  // 4 x 256 KB = 1 MB
  EXPECT_EQ(files.left_out.at("e.json"), "the JSON files given pass 1 MB in all");
}

}  // namespace
}  // namespace escouade::sandbox
