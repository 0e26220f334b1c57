#include "sandbox/bundle.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
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

RootFiles read_root(const std::filesystem::path& folder) {
  return read_root_files(*runtime::OwnFolder::open(folder));
}

TEST(ReadRootFiles, OnlyTheJsonFilesAtTheRootWithinTheirLimitsAndNeverTheManifest) {
  TempDir dir;
  std::ofstream(dir.path() / "escouade-plugin.json") << "{}";
  std::ofstream(dir.path() / "rules.json") << R"({"a":1})";
  std::ofstream(dir.path() / "notes.txt") << "not json";
  std::filesystem::create_directories(dir.path() / "data");
  std::ofstream(dir.path() / "data" / "deep.json") << "{}";
  std::ofstream(dir.path() / "big.json") << std::string(RootFiles::kEachBytes + 1, ' ');
  const RootFiles files = read_root(dir.path());
  ASSERT_EQ(files.files.size(), 1u);
  EXPECT_EQ(files.files.at("rules.json"), R"({"a":1})");
  EXPECT_EQ(files.left_out.at("big.json"), "is over 256 KiB");
  EXPECT_FALSE(files.left_out.contains("escouade-plugin.json"));  // never even looked at
}

TEST(ReadRootFiles, OneMegabyteInAll) {
  TempDir dir;
  for (char c = 'a'; c <= 'e'; ++c)
    std::ofstream(dir.path() / (std::string(1, c) + ".json"))
        << std::string(RootFiles::kEachBytes, ' ');
  const RootFiles files = read_root(dir.path());
  EXPECT_EQ(files.files.size(), 4u);  // 4 x 256 KB = 1 MB
  EXPECT_EQ(files.left_out.at("e.json"), "the JSON files given pass 1 MB in all");
}

// Issue 26: a link shipped in the plugin's folder was read wherever it led. Each of these is
// left out with files/read's reason, beside a good file that is still given.
TEST(ReadRootFiles, NothingOutsideTheFolderNorHiddenNorTheManifestUnderAnotherName) {
  TempDir outside;
  std::ofstream(outside.path() / "id_ed25519") << "-----BEGIN OPENSSH PRIVATE KEY-----";
  TempDir dir;
  const auto& d = dir.path();
  std::ofstream(d / "escouade-plugin.json") << R"({"id":"dev.x"})";
  std::ofstream(d / "rules.json") << R"({"ok":true})";
  std::ofstream(d / ".secret.json") << R"({"token":"s3cret"})";
  std::filesystem::create_symlink("/etc/passwd", d / "passwd.json");
  std::filesystem::create_symlink("/proc/self/environ", d / "environ.json");
  std::filesystem::create_symlink(outside.path() / "id_ed25519", d / "key.json");
  std::filesystem::create_symlink("../" + outside.path().filename().string(), d / "up.json");
  std::filesystem::create_symlink(".secret.json", d / "visible.json");
  std::filesystem::create_symlink("escouade-plugin.json", d / "manifest.json");
  std::filesystem::create_hard_link(outside.path() / "id_ed25519", d / "hard.json");
  std::filesystem::create_directories(d / "folder.json");
  ASSERT_EQ(::mkfifo((d / "fifo.json").c_str(), 0600), 0);  // never opened for reading
  ASSERT_EQ(::symlink("loop.json", (d / "loop.json").c_str()), 0);
  std::ofstream(d / "latin1.json") << "{\"caf\xe9\":1}";

  const RootFiles files = read_root(d);
  ASSERT_EQ(files.files.size(), 1u);
  EXPECT_EQ(files.files.at("rules.json"), R"({"ok":true})");
  const auto reason = [&](const char* name) {
    const auto it = files.left_out.find(name);
    return it == files.left_out.end() ? std::string("(given)") : it->second;
  };
  constexpr std::string_view kLeaves =
      "the path leaves the folder (through '..', an absolute link or a link that climbs out)";
  for (const char* name : {"passwd.json", "environ.json", "key.json"})
    EXPECT_EQ(reason(name), kLeaves) << name;
  EXPECT_EQ(reason("up.json"), kLeaves);
  EXPECT_EQ(reason(".secret.json"), "a hidden file or folder");
  EXPECT_EQ(reason("visible.json"), "it leads to a hidden file or folder (\".secret.json\")");
  EXPECT_EQ(reason("manifest.json"), "the manifest, under another name");
  EXPECT_EQ(reason("hard.json"),
            "the file has other names (a hard link), which may be outside the folder");
  EXPECT_NE(reason("folder.json"), "(given)");
  EXPECT_NE(reason("fifo.json"), "(given)");
  EXPECT_NE(reason("loop.json"), "(given)");
  EXPECT_EQ(reason("latin1.json"), "is not UTF-8 text");
}

TEST(ReadRootFiles, AFolderThatCannotBeOpenedGivesNothing) {
  const RootFiles files = read_root("/nonexistent/escouade-plugin-folder");
  EXPECT_TRUE(files.files.empty());
  EXPECT_TRUE(files.left_out.empty());
}

}  // namespace
}  // namespace escouade::sandbox
