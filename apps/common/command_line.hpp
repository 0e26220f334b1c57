#pragma once

// The command line of both programs (escouade-host, escouade-plugin): --version says the build's
// version, protocols and engine (sandbox/version.hpp); a usage error ends at 2, as
// docs/conformance.md says (CLI11's own codes are over 100); --help and --version end at 0.

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "sandbox/version.hpp"

namespace escouade::cli {

// Gives `app` its --version flag and parses argv: nullopt to go on, else the exit code now.
inline std::optional<int> parse_command_line(CLI::App& app, std::string_view program, int argc,
                                             char** argv) {
  std::string version = sandbox::version_text(program);
  version.pop_back();  // CLI11 ends the line itself
  app.set_version_flag("--version", version, "Its version, the protocols and the engine");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return std::nullopt;
}

}  // namespace escouade::cli
