#pragma once

// A run.wasm plugin names its build file (Cargo.toml, CMakeLists.txt, a Makefile) and ships the
// plugin.wasm built from it beside its manifest. A plugin.wasm older than that build file was
// probably not built again after a change: what would run is not what the author wrote.
// escouade-plugin check and test say so; the host does not judge it (a store plugin's files
// keep whatever times its archive gave them).

#include <optional>
#include <string>

#include "manifest/manifest.hpp"

namespace escouade::manifest {

// The warning when `m` is run.wasm and its plugin.wasm was last written before its build file;
// nullopt otherwise (another kind, a file missing, times that cannot be read).
std::optional<std::string> module_older_than_build(const Manifest& m);

}  // namespace escouade::manifest
