// `escouade-plugin check <folder>`: the manifest alone, as the host loads it.

#include <CLI/CLI.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <variant>

#include "base/event_loop.hpp"
#include "commands.hpp"
#include "manifest/install_words.hpp"
#include "manifest/manifest.hpp"
#include "manifest/module_age.hpp"
#include "runtime/process_program.hpp"
#include "sandbox/sandbox_program.hpp"

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

// A setting as `check` lists it: its name, type, default and description.
std::string setting_line(const std::string& name, const manifest::Setting& s) {
  std::string value;
  if (const auto* text = std::get_if<std::string>(&s.default_value)) {
    value = "\"" + *text + "\"";
  } else if (const auto* number = std::get_if<double>(&s.default_value)) {
    std::ostringstream out;
    out << *number;
    value = out.str();
  } else {
    value = std::get<bool>(s.default_value) ? "true" : "false";
  }
  const char* type = s.type == manifest::SettingType::string   ? "string"
                     : s.type == manifest::SettingType::number ? "number"
                                                               : "boolean";
  return name + " (" + type + ", default " + value + ")" +
         (s.description.empty() ? "" : ": " + s.description);
}

// A run.js or run.wasm module compiled as the host compiles it at its load, by a compile helper
// of the sandbox, running none of it: why it would be refused, or nullopt. `ran` false when the
// sandbox's helper is not there to ask.
std::optional<std::string> compile_module(const manifest::Manifest& m, bool& ran) {
  EventLoop loop;
  runtime::ProcessContext context;
  sandbox::SandboxProgramFactory sandbox(loop.executor(), context,
                                         sandbox::SandboxOptions::installed());
  auto [spec, runs] = runtime::program_of(m);
  ran = runs && sandbox.runs(spec.kind);
  if (!ran) return std::nullopt;
  std::optional<std::optional<std::string>> verdict;
  auto busy = boost::asio::make_work_guard(loop.io());  // until the verdict, whatever is queued
  sandbox.check(spec, [&](std::optional<std::string> refused) {
    verdict = std::move(refused);
    busy.reset();
    loop.stop();
  });
  loop.run();
  loop.drain();
  return verdict.value_or("its compile gave no verdict");
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
  if (m->settings.empty()) {
    std::cout << "Settings: none\n";
  } else {
    std::cout << "Settings:\n";
    for (const auto& [name, s] : m->settings)
      std::cout << "  " << setting_line(name, s) << "\n";
  }
  int code = 0;
  if (auto stale = manifest::module_older_than_build(*m))
    std::cout << "Warning: " << *stale << "\n";
  if (m->run.kind == manifest::RunKind::js || m->run.kind == manifest::RunKind::wasm) {
    // Compiled as the host compiles it at its load, and nothing of it run.
    bool ran = false;
    const auto refused = compile_module(*m, ran);
    const std::string module =
        m->run.kind == manifest::RunKind::js ? m->run.path : std::string("plugin.wasm");
    if (!ran) {
      std::cout << "Module: not compiled: the sandbox's helper (escouade-sandbox) is not "
                   "installed beside this program\n";
    } else if (refused) {
      std::cout << "Module: " << module << " refused\n  " << *refused << "\n";
      code = 1;
    } else {
      std::cout << "Module: " << module
                << (m->run.kind == manifest::RunKind::js
                        ? " compiles; its imports (node:fs, node:readline at most) and exports "
                          "(none) are as the sandbox wants them; nothing of it was run\n"
                        : " compiles; its imports, memory and exports are as the sandbox wants "
                          "them; nothing of it was run\n");
    }
  }
  return code;
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
