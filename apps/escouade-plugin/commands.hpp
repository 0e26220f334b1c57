#pragma once

// The subcommands of escouade-plugin. Each adds itself to the app; its callback runs it and
// sets `exit_code` (0 for success). A subcommand's file and its .cmake come together.

#include <CLI/CLI.hpp>

namespace escouade::cli {

void add_lint_command(CLI::App& app, int& exit_code);   // lint_command.cpp
void add_test_command(CLI::App& app, int& exit_code);   // conformance.cmake
void add_check_command(CLI::App& app, int& exit_code);  // conformance.cmake
void add_run_command(CLI::App& app, int& exit_code);    // harness.cmake
void add_new_command(CLI::App& app, int& exit_code);    // scaffold.cmake

}  // namespace escouade::cli
