// escouade-plugin: the plugin author's command line.

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "sandbox/version.hpp"

int main(int argc, char** argv) {
  CLI::App app{"escouade-plugin: tools for authors of Escouade plugins (protocol 1)"};
  app.require_subcommand(1);
  int exit_code = 0;
  escouade::cli::add_lint_command(app, exit_code);
  escouade::cli::add_test_command(app, exit_code);
  escouade::cli::add_check_command(app, exit_code);
  escouade::cli::add_run_command(app, exit_code);
  escouade::cli::add_new_command(app, exit_code);
  std::string version = escouade::sandbox::version_text("escouade-plugin");
  version.pop_back();  // CLI11 ends the line itself
  app.set_version_flag("--version", version, "Its version, the protocols and the engine");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end at 0; a usage error ends at 2 (docs/conformance.md).
    return app.exit(e) == 0 ? 0 : 2;
  }
  return exit_code;
}
