#include "manifest/install_words.hpp"

namespace escouade::manifest {
namespace {

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items)
    out += (out.empty() ? "" : ", ") + i;
  return out;
}

std::string_view files_of(FsRoot root) {
  switch (root) {
    case FsRoot::plugin:
      return "its own folder";
    case FsRoot::agent:
      return "the folders an agent works in";
    case FsRoot::agent_repo:
      return "the agent's repository";
    case FsRoot::agent_home:
      return "the agent's home folder";
    case FsRoot::temp:
      return "a temporary folder of its own";
  }
  return "a folder";
}

}  // namespace

std::string runs_as(const Manifest& m) {
  switch (m.run.kind) {
    case RunKind::js:
    case RunKind::wasm:
      return "Runs inside Escouade, isolated";
    case RunKind::command:
      return "Runs a program on your computer, with your rights";
    case RunKind::none:
      break;
  }
  return "Runs nothing: it only declares what it adds";
}

std::vector<std::string> capabilities_asked(const Manifest& m) {
  const Permissions& p = m.permissions;
  std::vector<std::string> out;
  if (!p.events.empty()) {
    std::vector<std::string> names;
    for (const auto& e : p.events)
      names.push_back(e.text);
    out.push_back("Sees the facts " + joined(names));
  }
  if (p.decide) out.push_back("Answers the agents' permission requests");
  if (!p.secrets.empty()) out.push_back("Reads its secrets " + joined(p.secrets));
  for (const auto& h : p.network.hosts)
    out.push_back("Connects to " + h + " and its subdomains");
  if (p.network.account) out.push_back("Connects to the server you enter for one of its accounts");
  if (p.network.local_shared)
    out.push_back("Connects to the local server of the program it starts");
  for (const auto& [root, access] : p.files) {
    out.push_back(std::string(access == FileAccess::write ? "Reads and writes" : "Reads") +
                  " the files of " + std::string(files_of(root)));
  }
  for (const auto& c : p.commands)
    out.push_back("Runs the program " + c.text);
  return out;
}

}  // namespace escouade::manifest
