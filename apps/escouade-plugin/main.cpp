// escouade-plugin: the plugin author's command line.

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "lint.hpp"

int main(int argc, char** argv) {
  CLI::App app{"escouade-plugin: tools for authors of Escouade plugins (protocol 1)"};
  app.require_subcommand(1);

  std::vector<std::string> files;
  bool quiet = false;
  bool no_color = false;
  auto* lint = app.add_subcommand(
      "lint",
      "Check a recording of protocol lines (JSON-RPC 2.0, one message a line; '-->' and "
      "'<--' prefixes tell who sent it) against protocol 1");
  lint->add_option("files", files, "Files to read; - for standard input")->required();
  lint->add_flag("-q,--quiet", quiet, "Print only the problems and the summary");
  lint->add_flag("--no-color", no_color, "Never colour the report");

  CLI11_PARSE(app, argc, argv);

  escouade::cli::LintOptions options;
  options.quiet = quiet;
  options.color = !no_color && isatty(STDOUT_FILENO);
  std::size_t problems = 0;
  for (const auto& file : files) {
    if (file == "-") {
      problems += escouade::cli::lint(std::cin, "stdin", std::cout, options).problems;
      continue;
    }
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      std::cerr << "escouade-plugin lint: cannot read " << file << "\n";
      return 2;
    }
    problems += escouade::cli::lint(in, file, std::cout, options).problems;
  }
  return problems == 0 ? 0 : 1;
}
