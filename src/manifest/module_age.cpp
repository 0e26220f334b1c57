#include "manifest/module_age.hpp"

#include <filesystem>
#include <system_error>

namespace escouade::manifest {

std::optional<std::string> module_older_than_build(const Manifest& m) {
  if (m.run.kind != RunKind::wasm) return std::nullopt;
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path build = m.folder / m.run.path;
  const fs::path module = m.folder / "plugin.wasm";
  const auto built = fs::last_write_time(module, ec);
  if (ec) return std::nullopt;
  const auto changed = fs::last_write_time(build, ec);
  if (ec || built >= changed) return std::nullopt;
  return "plugin.wasm is older than " + m.run.path +
         ", its build file: build it again, or what runs is not what you last wrote";
}

}  // namespace escouade::manifest
