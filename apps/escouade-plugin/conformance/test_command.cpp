// `escouade-plugin test <folder>`: the conformance bench (bench.hpp), its options and its report.

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "conformance/bench.hpp"
#include "conformance/report.hpp"

namespace escouade::cli {

namespace {

struct TestArgs {
  std::string folder;
  bool json = false;
  std::string junit;
  bool verbose = false;
  std::vector<std::string> secrets;
  std::vector<std::string> settings;
  std::int64_t initialize_timeout_ms = 10'000;
  int time_scale = 1;
  std::string trace;
};

// "key=value" split at its first '='; an error names the option.
bool split_pair(const std::string& option, const std::string& text,
                std::vector<std::pair<std::string, std::string>>& out) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    std::cerr << "escouade-plugin test: " << option << " " << text << ": expected "
              << (option == "--secret" ? "key=value" : "name=value") << "\n";
    return false;
  }
  out.emplace_back(text.substr(0, eq), text.substr(eq + 1));
  return true;
}

int run_test(const TestArgs& args) {
  conformance::BenchOptions options;
  options.folder = args.folder;
  options.initialize_timeout = std::chrono::milliseconds(args.initialize_timeout_ms);
  options.time_scale = args.time_scale;
  options.trace = args.trace;
  for (const auto& s : args.secrets) {
    if (!split_pair("--secret", s, options.secrets)) return 2;
  }
  for (const auto& s : args.settings) {
    if (!split_pair("--setting", s, options.settings)) return 2;
  }
  auto report = conformance::run_bench(options);
  if (!report) {
    std::cerr << "escouade-plugin test: " << report.error().message << "\n";
    return 2;
  }
  if (!args.junit.empty()) {
    std::ofstream out(args.junit, std::ios::binary | std::ios::trunc);
    conformance::write_junit(out, *report);
    if (!out.flush()) {
      std::cerr << "escouade-plugin test: cannot write " << args.junit << "\n";
      return 2;
    }
  }
  if (args.json) {
    conformance::write_json(std::cout, *report);
  } else {
    conformance::TextOptions text;
    const char* no_color = std::getenv("NO_COLOR");
    text.color = ::isatty(STDOUT_FILENO) == 1 && !(no_color && *no_color);
    text.verbose = args.verbose;
    conformance::write_text(std::cout, *report, text);
  }
  std::cout.flush();
  return report->exit_code();
}

}  // namespace

void add_test_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<TestArgs>();
  CLI::App* cmd = app.add_subcommand(
      "test",
      "Runs the conformance bench: plays Escouade's side against the plugin in <folder> and "
      "says, check by check, whether it keeps to protocol 1 (exit code 0 when no check fails)");
  cmd->add_option("folder", args->folder, "The plugin's folder (escouade-plugin.json at its root)")
      ->required();
  cmd->add_flag("--json", args->json, "The report as JSON on stdout");
  cmd->add_option("--junit", args->junit, "Also write the report as JUnit XML to this file");
  cmd->add_flag("-v,--verbose", args->verbose,
                "Show the calls the plugin made and its journal (its stderr, masked)");
  cmd->add_option("--secret", args->secrets,
                  "key=value: what secrets/get answers for a key of permissions.secrets "
                  "(repeatable; kept in a temporary file store, never the system's keychain)");
  cmd->add_option("--setting", args->settings,
                  "name=value: the user's value of a setting of contributes.settings, typed by "
                  "the manifest (repeatable)");
  cmd->add_option("--initialize-timeout-ms", args->initialize_timeout_ms,
                  "How long to wait for the answer to initialize (the spec's 10 s)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--time-scale", args->time_scale,
                  "Multiplies the delays of the decide, burst and answer checks (500 ms, 5 s), "
                  "for a plugin built with sanitizers or a loaded machine; every sentence naming "
                  "a delay says so")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  cmd->add_option("--trace", args->trace,
                  "Write every line between the bench and the plugin, both ways, with its time "
                  "(secrets masked) to this file, as escouade-plugin lint reads it");
  cmd->callback([args, &exit_code] { exit_code = run_test(*args); });
}

}  // namespace escouade::cli
