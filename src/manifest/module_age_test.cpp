#include "manifest/module_age.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "base/temp_dir.hpp"

namespace escouade::manifest {
namespace {

namespace fs = std::filesystem;

Manifest wasm_in(const fs::path& folder) {
  Manifest m;
  m.folder = folder;
  m.run.kind = RunKind::wasm;
  m.run.path = "Cargo.toml";
  return m;
}

TEST(ModuleAge, APluginWasmOlderThanItsBuildFileIsSaid) {
  escouade::TempDir dir("escouade-module-age");
  std::ofstream(dir.path() / "plugin.wasm") << "\0asm";
  std::ofstream(dir.path() / "Cargo.toml") << "[package]\n";
  const auto now = fs::file_time_type::clock::now();
  fs::last_write_time(dir.path() / "plugin.wasm", now - std::chrono::hours(1));
  fs::last_write_time(dir.path() / "Cargo.toml", now);
  EXPECT_EQ(module_older_than_build(wasm_in(dir.path())),
            "plugin.wasm is older than Cargo.toml, its build file: build it again, or what runs "
            "is not what you last wrote");
  // Built again: nothing to say.
  fs::last_write_time(dir.path() / "plugin.wasm", now + std::chrono::seconds(1));
  EXPECT_FALSE(module_older_than_build(wasm_in(dir.path())));
}

TEST(ModuleAge, NothingIsSaidOfAnotherKindOrAMissingFile) {
  escouade::TempDir dir("escouade-module-age");
  std::ofstream(dir.path() / "Cargo.toml") << "[package]\n";
  EXPECT_FALSE(module_older_than_build(wasm_in(dir.path())));  // no plugin.wasm
  Manifest js = wasm_in(dir.path());
  js.run.kind = RunKind::js;
  EXPECT_FALSE(module_older_than_build(js));
}

}  // namespace
}  // namespace escouade::manifest
