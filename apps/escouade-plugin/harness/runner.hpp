#pragma once

// `escouade-plugin run`: hosts plugins with the real escouade-host and plays a scenario to
// them, printing each step, its outcome, the host's status changes and the plugins' journals
// as they happen. docs/harness.md is the author's guide.

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

namespace escouade::harness {

struct RunOptions {
  std::vector<std::filesystem::path> folders;  // the plugins, loaded in this order
  std::filesystem::path host;                  // the escouade-host program
  std::string project = "demo";
  std::filesystem::path project_folder;  // given to host/enable: where .escouade.yml is
  bool is_private = false;
  std::vector<std::string> secrets;   // [ID:]KEY=VALUE
  std::vector<std::string> settings;  // [ID:]NAME=VALUE
  std::filesystem::path scenario;     // empty: the standard input
  std::filesystem::path data_dir;     // empty: a temporary one, removed at the end
  std::string keychain;               // empty: file:<data dir>/keychain
  std::filesystem::path trace;        // escouade-host --trace: every plugin's lines, or none
  std::string proxy;                  // escouade-host --proxy, or none
  std::filesystem::path ca_file;      // escouade-host --ca-file, or none
  bool journal = true;                // follow the plugins' journals
  bool color = false;
  bool interactive = false;  // the standard input is a terminal: a prompt, and help
};

// Runs it to the end of the scenario (or of the standard input); writes to `out`. Returns 0
// when every step held, 1 when one failed, 2 when the host could not be started.
int run_harness(const RunOptions& options, std::ostream& out);

}  // namespace escouade::harness
