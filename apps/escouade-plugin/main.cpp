// escouade-plugin: the plugin author's command line.

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "common/command_line.hpp"

int main(int argc, char** argv) {
  CLI::App app{"escouade-plugin: tools for authors of Escouade plugins (protocol 1)"};
  app.require_subcommand(1);
  int exit_code = 0;
  escouade::cli::add_lint_command(app, exit_code);
  escouade::cli::add_test_command(app, exit_code);
  escouade::cli::add_check_command(app, exit_code);
  escouade::cli::add_run_command(app, exit_code);
  escouade::cli::add_new_command(app, exit_code);
  if (auto ended = escouade::cli::parse_command_line(app, "escouade-plugin", argc, argv))
    return *ended;
  return exit_code;
}
