#pragma once

// Where fs/read, fs/write, fs/stat, fs/list and fs/canon may go (permissions.files), judged on
// the request's text and on what the app and the host know (an agent's roots, its project's
// fence): no file is looked at here. Deny by default: FsRoots made from nothing grants nothing.
// What the text cannot show (a link leading out of its root, a name that the disk folds onto
// another) is the business of the opening and of the service, which follow links only within
// FsTarget::roots.

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "manifest/manifest.hpp"

namespace escouade::policy {

// The longest path judged, in bytes (Linux's PATH_MAX, its NUL included).
inline constexpr std::size_t kMaxFsPathBytes = 4096;
// The longest part, in bytes (NAME_MAX of Linux and macOS).
inline constexpr std::size_t kMaxFsPartBytes = 255;

// An agent as the app set it (host/agents/set {key, project, roots, env}); root paths absolute
// (the host canonicalises them), each optional.
struct Agent {
  std::string key;
  std::string project;
  std::optional<std::filesystem::path> agent, agent_repo, agent_home;
  std::vector<std::string> env;  // "K=V"
};

// What a plugin asked (FsPath, FsWriteParams): `write` for fs/write.
struct FsRequest {
  std::optional<std::string> agent;
  std::optional<manifest::FsRoot> root;
  std::string path;
  bool write = false;
};

// A root a path may lead to, and whether the plugin may write there.
struct RootGrant {
  manifest::FsRoot root;
  std::filesystem::path folder;
  bool writable = false;

  friend bool operator==(const RootGrant&, const RootGrant&) = default;
};

// Where a request goes.
struct FsTarget {
  manifest::FsRoot root;  // where `relative` starts
  std::string relative;   // '/'-joined parts, "" for the root itself
  // Where links may lead: the start root first, then every OTHER root of that agent that the
  // plugin declares and the app set, in the order agent, agentRepo, agentHome (for plugin and
  // temp: that root alone). Where a link leads, the deepest of these containing it gives the
  // access.
  std::vector<RootGrant> roots;
};

// Where the plugin is, for the two roots that need no agent.
struct PluginPlaces {
  std::filesystem::path folder;
  std::filesystem::path temp;
};

// The agent's project as the host knows it; an unknown project is fenced as private.
struct ProjectFence {
  bool is_private = true;
  bool plugin_on = false;  // the plugin is turned on for that project
};

// The roots of one plugin's permissions.files, made once from its manifest.
//
// Immutable once made: shared by the handlers of the plugin's sessions, on any thread.
class FsRoots {
 public:
  // Grants nothing.
  FsRoots() = default;
  explicit FsRoots(const std::map<manifest::FsRoot, manifest::FileAccess>& files);

  // Where `request` goes, or why not: an Error whose code is invalidParams (-32602) or refused
  // (-32003) and whose message is a reason without a subject ("a ~ is never expanded"), for the
  // caller to put in its own sentence (fs/read agentRepo "a/../b": refused: <reason>).
  // `agent`: the agent request.agent names, looked up by the caller (nullptr when the app set
  // none by that key; not looked at when the request names no agent).
  //
  // Checked in this order, the first that applies giving the answer:
  //   invalidParams, the text: an empty path without a root; a path over kMaxFsPathBytes; a NUL
  //     character; a path that is not UTF-8; a part over kMaxFsPartBytes;
  //   invalidParams, the shape: a root of an agent (agent, agentRepo, agentHome) without an
  //     agent; an absolute path without a root and without an agent (nothing to judge it by);
  //   refused, the text: an absolute path with a root; a Windows drive at the start (C:x, with a
  //     root or without); a relative path without a root (with an agent or without: the same
  //     mistake as an absolute path with a root, answered alike); a backslash anywhere ('/' is
  //     the only separator, never part of a name); a path beginning with '~' or a "~" part; a
  //     ".." part, even one that would stay inside;
  //   refused, the grant, when a root is given: a root that permissions.files does not declare;
  //     a write on a root declared for reading; for plugin and temp, the answer (an agent given
  //     with them is ignored, and no fence applies);
  //   refused, the agent (a root of an agent, or an absolute path): an agent the app has not
  //     set; the fence: its project private (or unknown) and the plugin not on for it
  //     (« Projet privé »); with a root, that root not set for the agent;
  //   refused, an absolute path: under none of the agent's roots that permissions.files
  //     declares, matched part by part (/w/repo2 is not under /w/repo); the deepest root
  //     containing it is the start root, a writable one first when two are the same folder;
  //   refused, a write: the deepest declared root of the agent containing the path is declared
  //     for reading (agent in write, agentRepo inside it in read: agent "repo/x" is not
  //     written, as /w/repo/x would not be).
  // An absolute path is one that begins with '/'. "." parts and empty parts (a//b, a '/' at the
  // end) are dropped: with a root, "", "." and "./" are the root itself. Nothing is decoded:
  // %2e%2e is a name of six characters. Any other character, a newline or another control
  // character included, is part of a name. Root folders are compared byte for byte, as the host
  // canonicalised them.
  //
  // Pure and thread-safe.
  Result<FsTarget> judge(const FsRequest& request, const Agent* agent, ProjectFence fence,
                         const PluginPlaces& places) const;

  // Whether permissions.files names `root`, for reading or writing.
  bool declares(manifest::FsRoot root) const;

 private:
  std::map<manifest::FsRoot, manifest::FileAccess> files_;
};

}  // namespace escouade::policy
