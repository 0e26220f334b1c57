#include <unistd.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "lint.hpp"

namespace escouade::cli {

void add_lint_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::vector<std::string> files;
    bool quiet = false;
    bool no_color = false;
  };
  auto o = std::make_shared<Options>();
  auto* command = app.add_subcommand(
      "lint",
      "Check a recording of protocol lines (JSON-RPC 2.0, one message a line; '-->' and "
      "'<--' prefixes tell who sent it) against protocol 1");
  command->add_option("files", o->files, "Files to read; - for standard input")->required();
  command->add_flag("-q,--quiet", o->quiet, "Print only the problems and the summary");
  command->add_flag("--no-color", o->no_color, "Never colour the report");
  command->callback([o, &exit_code] {
    LintOptions options;
    options.quiet = o->quiet;
    options.color = !o->no_color && isatty(STDOUT_FILENO);
    std::size_t problems = 0;
    for (const auto& file : o->files) {
      if (file == "-") {
        problems += lint(std::cin, "stdin", std::cout, options).problems;
        continue;
      }
      std::ifstream in(file, std::ios::binary);
      if (!in) {
        std::cerr << "escouade-plugin lint: cannot read " << file << "\n";
        exit_code = 2;
        return;
      }
      problems += lint(in, file, std::cout, options).problems;
    }
    exit_code = problems == 0 ? 0 : 1;
  });
}

}  // namespace escouade::cli
