#include "base/private_dirs.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "base/temp_dir.hpp"

namespace escouade {
namespace {

unsigned mode_of(const std::filesystem::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0;
}

// Every folder it makes is its user's alone, under a umask that would open them; one that was
// there keeps its mode.
TEST(PrivateDirs, EachFolderItMakesIs0700) {
  TempDir root("escouade-private");
  ::chmod(root.path().c_str(), 0755);
  const mode_t before = ::umask(0);
  const auto dir = root.path() / "data" / "plugin-logs";
  EXPECT_FALSE(create_private_directories(dir));
  ::umask(before);
  EXPECT_EQ(mode_of(root.path() / "data"), 0700u);
  EXPECT_EQ(mode_of(dir), 0700u);
  EXPECT_EQ(mode_of(root.path()), 0755u);
  EXPECT_FALSE(create_private_directories(dir)) << "already there: nothing to do";
}

TEST(PrivateDirs, AFolderThatCannotBeMadeSaysWhy) {
  TempDir root("escouade-private");
  const auto file = root.path() / "a-file";
  std::FILE* f = std::fopen(file.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  EXPECT_TRUE(create_private_directories(file / "below"));
}

}  // namespace
}  // namespace escouade
