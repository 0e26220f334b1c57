// `escouade-plugin run <folder>...`: the options, and where escouade-host is found.

#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "harness/runner.hpp"

namespace escouade::cli {

namespace fs = std::filesystem;

namespace {

bool executable(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

// escouade-host beside this program (an installation), else where the build tree puts it
// (apps/escouade-host/ beside apps/escouade-plugin/). Empty when neither holds it.
fs::path find_host() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  const fs::path dir = self.parent_path();
  for (const fs::path& p :
       {dir / "escouade-host", dir.parent_path() / "escouade-host" / "escouade-host"}) {
    if (executable(p)) return p;
  }
  return {};
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code) {
  struct Options {
    std::vector<std::string> folders;
    std::string host;
    std::string project = "demo";
    std::string project_folder;
    bool is_private = false;
    std::vector<std::string> secrets;
    std::vector<std::string> settings;
    std::string scenario;
    std::string data_dir;
    std::string keychain;
    std::string trace;
    std::string proxy;
    std::string ca_file;
    bool no_journal = false;
    bool no_color = false;
  };
  auto o = std::make_shared<Options>();
  auto* run = app.add_subcommand(
      "run",
      "Host plugins with the real escouade-host and play them a scenario: facts, permission "
      "requests, calls, crashes (docs/harness.md)");
  run->add_option("folders", o->folders, "The plugins' folders")
      ->required()
      ->check(CLI::ExistingDirectory);
  run->add_option("--scenario", o->scenario,
                  "A file of steps, one JSON object a line; without it, steps are read from "
                  "the standard input")
      ->check(CLI::ExistingFile);
  run->add_option("--host", o->host,
                  "The escouade-host program (default: the one beside escouade-plugin)");
  run->add_option("--project", o->project, "The project the plugins are on for")
      ->capture_default_str();
  run->add_option("--project-folder", o->project_folder,
                  "The project's folder, where its .escouade.yml is")
      ->check(CLI::ExistingDirectory);
  run->add_flag("--private", o->is_private, "The project is private");
  run->add_option("--secret", o->secrets,
                  "A plugin's secret, ID:KEY=VALUE (KEY=VALUE with one plugin); repeatable");
  run->add_option("--setting", o->settings,
                  "A plugin's setting, ID:NAME=VALUE (NAME=VALUE with one plugin), VALUE as "
                  "JSON or text; repeatable");
  run->add_option("--data-dir", o->data_dir,
                  "The host's data dir (journals in plugin-logs/); default: a temporary one");
  run->add_option("--keychain", o->keychain,
                  "Where secrets are kept: secret-service or file:DIR (default: a demo file "
                  "store in the data dir)");
  run->add_option("--trace", o->trace,
                  "Write every line between Escouade and each plugin, both ways, with its time "
                  "and the plugin's id (secrets masked) to this file, as escouade-plugin lint "
                  "reads it");
  run->add_option("--proxy", o->proxy,
                  "An HTTP proxy, http://HOST:PORT, for the network of sandboxed plugins (as "
                  "escouade-host's)");
  run->add_option("--ca-file", o->ca_file,
                  "Certificates (PEM) trusted beside the system's for the network of sandboxed "
                  "plugins: a test server's CA (as escouade-host's)")
      ->check(CLI::ExistingFile);
  run->add_flag("--no-journal", o->no_journal, "Do not show the plugins' journals");
  run->add_flag("--no-color", o->no_color, "Never colour the output");
  run->callback([o, &exit_code] {
    harness::RunOptions options;
    for (const auto& f : o->folders)
      options.folders.emplace_back(f);
    options.host = o->host.empty() ? find_host() : fs::path(o->host);
    if (options.host.empty()) {
      std::cerr << "escouade-plugin run: escouade-host is not beside escouade-plugin; give it "
                   "with --host PATH\n";
      exit_code = 2;
      return;
    }
    options.project = o->project;
    options.project_folder = o->project_folder;
    options.is_private = o->is_private;
    options.secrets = o->secrets;
    options.settings = o->settings;
    options.scenario = o->scenario;
    options.data_dir = o->data_dir;
    options.keychain = o->keychain;
    options.trace = o->trace;
    options.proxy = o->proxy;
    options.ca_file = o->ca_file;
    options.journal = !o->no_journal;
    options.color = !o->no_color && ::isatty(STDOUT_FILENO);
    options.interactive = o->scenario.empty() && ::isatty(STDIN_FILENO);
    exit_code = harness::run_harness(options, std::cout);
  });
}

}  // namespace escouade::cli
