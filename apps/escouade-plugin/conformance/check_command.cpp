// `escouade-plugin check <folder>`: the manifest alone, as the host loads it.

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "manifest/install_words.hpp"
#include "manifest/manifest.hpp"

namespace escouade::cli {

namespace {

std::string list(const std::vector<std::string>& items) {
  if (items.empty()) return "none";
  std::string out;
  for (const auto& i : items)
    out += (out.empty() ? "" : ", ") + i;
  return out;
}

std::vector<std::string> permissions_of(const manifest::Permissions& p) {
  std::vector<std::string> out;
  for (const auto& e : p.events)
    out.push_back("events " + e.text);
  if (p.decide) out.push_back("decide");
  for (const auto& s : p.secrets)
    out.push_back("secret " + s);
  for (const auto& h : p.network.hosts)
    out.push_back("network " + h);
  if (p.network.account) out.push_back("network {account}");
  if (p.network.local_shared) out.push_back("network local:shared");
  for (const auto& [root, access] : p.files) {
    out.push_back("files " + std::string(manifest::to_string(root)) + " " +
                  (access == manifest::FileAccess::write ? "write" : "read"));
  }
  for (const auto& c : p.commands)
    out.push_back("command " + c.text);
  return out;
}

int run_check(const std::string& folder) {
  auto m = manifest::load_manifest(folder);
  if (!m) {
    std::cout << folder << ": refused\n  " << m.error().message << "\n";
    return 1;
  }
  std::string run;
  switch (m->run.kind) {
    case manifest::RunKind::none:
      run = "nothing (declarative)";
      break;
    case manifest::RunKind::command:
      for (const auto& a : m->run.command)
        run += (run.empty() ? "" : " ") + a;
      run += " (" + m->run.resolved.string() + ")";
      break;
    case manifest::RunKind::js:
      run = "js " + m->run.path;
      break;
    case manifest::RunKind::wasm:
      run = "wasm " + m->run.path + " (" + m->run.resolved.string() + ")";
      break;
  }
  std::vector<std::string> activation;
  for (const auto& a : m->activation)
    activation.push_back("event:" + a.text);
  std::cout << "OK " << m->id << " " << m->version << " (" << m->name << ")\n"
            << "  run: " << run << "\n"
            << "  activation: "
            << (activation.empty() ? "none: it never starts by itself" : list(activation)) << "\n"
            << "  permissions: " << list(permissions_of(m->permissions)) << "\n"
            << "The install window says:\n"
            << "  " << manifest::runs_as(*m) << "\n";
  for (const auto& asked : manifest::capabilities_asked(*m))
    std::cout << "  - " << asked << "\n";
  return 0;
}

}  // namespace

void add_check_command(CLI::App& app, int& exit_code) {
  auto folder = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "check",
      "Checks a plugin's manifest alone, as Escouade loads it (exit code 0 when it holds)");
  cmd->add_option("folder", *folder, "The plugin's folder (escouade-plugin.json at its root)")
      ->required();
  cmd->callback([folder, &exit_code] { exit_code = run_check(*folder); });
}

}  // namespace escouade::cli
