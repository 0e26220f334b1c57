#include "policy/fs_roots.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include "base/quote.hpp"
#include "base/utf8.hpp"
#include "protocol/gen/errors.hpp"

namespace escouade::policy {

namespace {

using manifest::FileAccess;
using manifest::FsRoot;

constexpr std::array<FsRoot, 3> kAgentRoots = {FsRoot::agent, FsRoot::agent_repo,
                                               FsRoot::agent_home};

Error invalid(std::string reason) {
  return make_error(proto::ErrorCode::invalid_params, std::move(reason));
}

Error refused(std::string reason) {
  return make_error(proto::ErrorCode::refused, std::move(reason));
}

bool is_agent_root(FsRoot root) {
  return root == FsRoot::agent || root == FsRoot::agent_repo || root == FsRoot::agent_home;
}

std::string name_of(FsRoot root) {
  return std::string(manifest::to_string(root));
}

bool is_ascii_letter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

std::vector<std::string_view> split_on_slash(std::string_view path) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) {
      parts.push_back(path.substr(start));
      return parts;
    }
    parts.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
}

// The parts that move a path: without "." and empty ones.
std::vector<std::string> kept_parts(std::string_view path) {
  std::vector<std::string> kept;
  for (std::string_view part : split_on_slash(path)) {
    if (!part.empty() && part != ".") kept.emplace_back(part);
  }
  return kept;
}

std::string joined(const std::vector<std::string>& parts, std::size_t from) {
  std::string out;
  for (std::size_t i = from; i < parts.size(); ++i) {
    if (!out.empty()) out += '/';
    out += parts[i];
  }
  return out;
}

const std::optional<std::filesystem::path>& folder_of(const Agent& agent, FsRoot root) {
  switch (root) {
    case FsRoot::agent_repo:
      return agent.agent_repo;
    case FsRoot::agent_home:
      return agent.agent_home;
    default:
      return agent.agent;
  }
}

// A root of the agent that the plugin declares, with the parts of its folder.
struct AgentRoot {
  RootGrant grant;
  std::vector<std::string> parts;
};

bool starts_with(const std::vector<std::string>& parts, const std::vector<std::string>& prefix) {
  return parts.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), parts.begin());
}

// The declared and set roots of `agent`, in the order agent, agentRepo, agentHome. A folder
// that is not absolute (the host gives none) is left out rather than matched loosely.
std::vector<AgentRoot> declared_roots(const std::map<FsRoot, FileAccess>& files,
                                      const Agent& agent) {
  std::vector<AgentRoot> roots;
  for (FsRoot root : kAgentRoots) {
    const auto declared = files.find(root);
    const auto& folder = folder_of(agent, root);
    if (declared == files.end() || !folder || !folder->is_absolute()) continue;
    roots.push_back(AgentRoot{RootGrant{root, *folder, declared->second == FileAccess::write},
                              kept_parts(folder->generic_string())});
  }
  return roots;
}

// The deepest of `roots` containing `parts`; of two the same folder, a writable one, then the
// first.
const AgentRoot* deepest_containing(const std::vector<AgentRoot>& roots,
                                    const std::vector<std::string>& parts) {
  const AgentRoot* best = nullptr;
  for (const AgentRoot& r : roots) {
    if (!starts_with(parts, r.parts)) continue;
    if (best == nullptr || r.parts.size() > best->parts.size() ||
        (r.parts.size() == best->parts.size() && r.grant.writable && !best->grant.writable)) {
      best = &r;
    }
  }
  return best;
}

std::vector<RootGrant> link_roots(const std::vector<AgentRoot>& roots, FsRoot start) {
  std::vector<RootGrant> out;
  for (const AgentRoot& r : roots) {
    if (r.grant.root == start)
      out.insert(out.begin(), r.grant);
    else
      out.push_back(r.grant);
  }
  return out;
}

std::string agent_named(const std::string& key) {
  return "agent " + quote_name(key);
}

}  // namespace

FsRoots::FsRoots(const std::map<manifest::FsRoot, manifest::FileAccess>& files) : files_(files) {}

bool FsRoots::declares(manifest::FsRoot root) const {
  return files_.count(root) != 0;
}

Result<FsTarget> FsRoots::judge(const FsRequest& request, const Agent* agent, ProjectFence fence,
                                const PluginPlaces& places) const {
  const std::string_view path = request.path;
  const std::optional<FsRoot> root = request.root;

  // invalidParams, the text.
  if (path.empty() && !root) return invalid("an empty path");
  if (path.size() > kMaxFsPathBytes) return invalid("a path longer than 4096 bytes");
  if (path.find('\0') != std::string_view::npos) return invalid("a NUL character in the path");
  if (!is_valid_utf8(path)) return invalid("a path that is not UTF-8");
  const std::vector<std::string_view> parts = split_on_slash(path);
  for (std::string_view part : parts) {
    if (part.size() > kMaxFsPartBytes) return invalid("a part longer than 255 bytes");
  }

  // invalidParams, the shape.
  const bool absolute = !path.empty() && path.front() == '/';
  if (root && is_agent_root(*root) && !request.agent) {
    return invalid("the root " + name_of(*root) + " without an agent (whose " + name_of(*root) +
                   " is it?)");
  }
  if (!root && absolute && !request.agent) {
    return invalid("an absolute path without an agent (it is judged by an agent's roots)");
  }

  // refused, the text.
  if (root && absolute)
    return refused("an absolute path with a root: give it relative to the root");
  if (path.size() >= 2 && is_ascii_letter(path[0]) && path[1] == ':') {
    return refused(root ? "a Windows drive with a root: give the path relative to the root"
                        : "a Windows drive (an absolute path begins with '/')");
  }
  if (!root && !absolute) return refused("a relative path needs a root");
  if (path.find('\\') != std::string_view::npos) {
    return refused("a backslash ('/' is the only separator between parts)");
  }
  if ((!path.empty() && path.front() == '~') ||
      std::find(parts.begin(), parts.end(), "~") != parts.end()) {
    return refused("a ~ is never expanded");
  }
  if (std::find(parts.begin(), parts.end(), "..") != parts.end()) {
    return refused("a '..' part (a path may not climb, even within its root)");
  }
  const std::vector<std::string> kept = kept_parts(path);

  // refused, the grant of the root given.
  if (root) {
    const auto declared = files_.find(*root);
    if (declared == files_.end()) {
      return refused("the root " + name_of(*root) + " is not in its permissions.files");
    }
    const bool writable = declared->second == FileAccess::write;
    if (request.write && !writable) return refused(name_of(*root) + " is given for reading only");
    if (*root == FsRoot::plugin || *root == FsRoot::temp) {
      const auto& folder = *root == FsRoot::plugin ? places.folder : places.temp;
      return FsTarget{*root, joined(kept, 0), {RootGrant{*root, folder, writable}}};
    }
  }

  // refused, the agent.
  if (agent == nullptr) {
    return refused("no " + agent_named(*request.agent) + ": the app has not set it");
  }
  if (fence.is_private && !fence.plugin_on) {
    return refused(agent_named(*request.agent) +
                   " works in a private project (« Projet privé ») where the plugin is not on");
  }
  const std::vector<AgentRoot> roots = declared_roots(files_, *agent);

  if (root) {
    const auto start = std::find_if(roots.begin(), roots.end(),
                                    [&](const AgentRoot& r) { return r.grant.root == *root; });
    if (start == roots.end())
      return refused(agent_named(*request.agent) + " has no " + name_of(*root));
    if (request.write) {
      std::vector<std::string> full = start->parts;
      full.insert(full.end(), kept.begin(), kept.end());
      const AgentRoot* deepest = deepest_containing(roots, full);
      if (deepest != nullptr && !deepest->grant.writable) {
        return refused("lands in " + name_of(deepest->grant.root) +
                       ", which is given for reading only");
      }
    }
    return FsTarget{*root, joined(kept, 0), link_roots(roots, *root)};
  }

  // refused, an absolute path.
  const AgentRoot* deepest = deepest_containing(roots, kept);
  if (deepest == nullptr) {
    return refused("is under no root of " + agent_named(*request.agent) +
                   " that its permissions.files declare");
  }
  if (request.write && !deepest->grant.writable) {
    return refused("lands in " + name_of(deepest->grant.root) +
                   ", which is given for reading only");
  }
  return FsTarget{deepest->grant.root, joined(kept, deepest->parts.size()),
                  link_roots(roots, deepest->grant.root)};
}

}  // namespace escouade::policy
