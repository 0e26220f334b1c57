// The app's agents (host/agents/set, host/agents/remove), which fs/* and proc/spawn of sandboxed
// plugins judge against, and each plugin's temporary folder (the root temp).

#include <system_error>

#include "base/private_dirs.hpp"
#include "host/host.hpp"
#include "protocol/gen/errors.hpp"

namespace escouade::host {

namespace fs = std::filesystem;
using proto::ErrorCode;

namespace {

Error invalid(std::string message) {
  return Error{ErrorCode::invalid_params, std::move(message)};
}

// The real path of a root the app gave (links resolved as far as it exists), so that the
// absolute paths a plugin gets back from fs/canon and fs/write are under it as written.
Result<void> keep_root(std::optional<fs::path>& root, std::string_view field) {
  if (!root) return {};
  if (root->empty() || !root->is_absolute())
    return invalid("roots." + std::string(field) + ": an absolute path");
  std::error_code ec;
  fs::path real = fs::weakly_canonical(*root, ec);
  root = ec ? root->lexically_normal() : real;
  return {};
}

}  // namespace

Result<void> Host::set_agent(policy::Agent agent) {
  if (agent.key.empty()) return invalid("key: an agent's key may not be empty");
  if (agent.project.empty()) return invalid("project: the id of the project the agent works in");
  if (auto r = keep_root(agent.agent, "agent"); !r) return r;
  if (auto r = keep_root(agent.agent_repo, "agentRepo"); !r) return r;
  if (auto r = keep_root(agent.agent_home, "agentHome"); !r) return r;
  for (const auto& kv : agent.env) {
    const auto eq = kv.find('=');
    if (eq == 0 || eq == std::string::npos || kv.find('\0') != std::string::npos)
      return invalid("env: a variable's name may not be empty nor hold '=' or NUL");
  }
  const std::string key = agent.key;
  agents_.agents.insert_or_assign(key, std::move(agent));
  return {};
}

Result<void> Host::remove_agent(std::string_view key) {
  auto it = agents_.agents.find(key);
  if (it == agents_.agents.end()) return invalid("no agent \"" + std::string(key) + "\" is set");
  agents_.agents.erase(it);
  return {};
}

fs::path Host::make_temp_folder(std::string_view id) {
  if (config_.data_dir.empty()) return {};
  fs::path folder = config_.data_dir / "plugin-temp" / std::string(id);
  // Emptied when this host first loads the plugin: what a plugin left in its temporary folder
  // does not outlive the host that gave it (a reload, an update, keeps it).
  std::error_code ec;
  fs::remove_all(folder, ec);
  if (create_private_directories(folder)) return {};
  return folder;
}

}  // namespace escouade::host
