#pragma once

// `escouade-plugin lint`: reads a recording of protocol lines and says, line by line, what the
// codec makes of it: each message's kind and method, whether its params (and an answer's
// result) hold to the schema, and every JSON-RPC 2.0 rule it breaks.

#include <cstddef>
#include <istream>
#include <ostream>
#include <string>

namespace escouade::cli {

struct LintOptions {
  bool color = false;
  bool quiet = false;  // only the problems and the summary
};

struct LintSummary {
  std::size_t lines = 0;
  std::size_t bytes = 0;
  std::size_t messages = 0;
  std::size_t batches = 0;
  std::size_t calls = 0;
  std::size_t answers = 0;
  std::size_t problems = 0;
};

// Reads lines from `in` until its end. A line may start with "--> " (Escouade to the plugin)
// or "<-- " (the plugin to Escouade), as in the JSON-RPC 2.0 specification's examples; without
// one the direction comes from the method. Writes the report to `out`.
LintSummary lint(std::istream& in, const std::string& name, std::ostream& out,
                 const LintOptions& options);

}  // namespace escouade::cli
