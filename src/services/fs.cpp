#include "services/fs.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "base/base64.hpp"
#include "base/quote.hpp"
#include "base/utf8.hpp"
#include "platform/beneath_roots.hpp"
#include "protocol/gen/errors.hpp"
#include "protocol/gen/methods.hpp"

namespace escouade::services {

namespace method = proto::method;
using manifest::FsRoot;
using proto::ErrorCode;

namespace {

template <class Root>
FsRoot root_of(Root r) {
  switch (r) {
    case Root::plugin:
      return FsRoot::plugin;
    case Root::agent:
      return FsRoot::agent;
    case Root::agent_repo:
      return FsRoot::agent_repo;
    case Root::agent_home:
      return FsRoot::agent_home;
    case Root::temp:
      break;
  }
  return FsRoot::temp;
}

// One call as the journal and the plugin's error name it: `fs/read agentRepo "src/a.ts"`,
// `fs/stat "/w/repo/a.ts" (agent "a1")`.
struct Call {
  const char* method;
  std::string what;

  Error error(boost::system::error_code code, std::string_view reason) const {
    return make_error(code, what + ": " + std::string(verdict(code)) + ": " + std::string(reason));
  }
};

Call call_of(const char* method, std::optional<FsRoot> root, const std::string& path,
             const std::optional<std::string>& agent) {
  std::string what = method;
  if (root) what += " " + std::string(manifest::to_string(*root));
  what += " " + quote_name(path, 300);
  if (agent) what += " (agent " + quote_name(*agent, 100) + ")";
  return Call{method, std::move(what)};
}

// What a worker needs: the roots to open, where the path starts, and its own sentence.
struct Judged {
  Call call;
  std::vector<platform::RootSpec> roots;
  std::string start;
  std::string relative;
};

// The text of the call judged on the host's thread: the roots the plugin declares, the agent
// the app set, the fence of its project.
Result<Judged> judge(const FsContext& ctx, const ServedPlugin& plugin, const char* method,
                     std::optional<FsRoot> root, const std::string& path,
                     const std::optional<std::string>& agent_key, bool write) {
  Call call = call_of(method, root, path, agent_key);
  const policy::Agent* agent = nullptr;
  policy::ProjectFence fence;
  if (agent_key && ctx.agents) {
    agent = ctx.agents->find(*agent_key);
    if (agent) {
      auto it = ctx.agents->projects.find(agent->project);
      fence.is_private = it == ctx.agents->projects.end() || it->second.is_private;
      fence.plugin_on = plugin.on_for(agent->project);
    }
  }
  policy::FsRequest request{agent_key, root, path, write};
  auto target = plugin.fs_roots.judge(
      request, agent, fence, policy::PluginPlaces{plugin.manifest.folder, plugin.temp_folder});
  if (!target) return call.error(target.error().code, target.error().message);
  Judged out{std::move(call),
             {},
             std::string(manifest::to_string(target->root)),
             std::move(target->relative)};
  for (const auto& r : target->roots) {
    if (r.folder.empty())
      return out.call.error(ErrorCode::failed,
                            "the plugin has no temporary folder (the host "
                            "has no data folder)");
    out.roots.push_back(
        platform::RootSpec{std::string(manifest::to_string(r.root)), r.folder, r.writable});
  }
  return out;
}

// Why the file could not be reached, with the code the method answers.
Error from_beneath(const Call& call, const platform::BeneathError& e) {
  using K = platform::BeneathFailure;
  // fs/write and fs/canon have no notFound in the schema: what is missing on their way (a root's
  // folder not made yet, a part that is a file) is a failure there.
  const std::string_view method = call.method;
  const bool answers_not_found = method != "fs/write" && method != "fs/canon";
  switch (e.kind) {
    case K::missing:
      if (!answers_not_found) break;
      return call.error(ErrorCode::not_found, e.reason);
    case K::escapes:
    case K::link_loop:
    case K::not_a_file:
    case K::hard_link:
    case K::read_only:
      return call.error(ErrorCode::refused, e.reason);
    case K::folder:
    case K::too_large:
    case K::denied:
    case K::os_error:
      break;
  }
  return call.error(ErrorCode::failed, e.reason);
}

// The roots a worker opens: the start root (first), then those of the others that exist. A root
// the app set whose folder is not there (an agentHome not made yet: the host keeps such roots)
// holds nothing a link could lead to, and must not make the agent's other roots unreachable.
std::vector<platform::RootSpec> present_roots(const std::vector<platform::RootSpec>& roots) {
  std::vector<platform::RootSpec> out;
  for (std::size_t i = 0; i < roots.size(); ++i) {
    std::error_code ec;
    if (i == 0 || std::filesystem::is_directory(roots[i].path, ec)) out.push_back(roots[i]);
  }
  return out;
}

template <class Reply>
void fail(ServedPlugin& plugin, const Error& e, Reply& reply) {
  plugin.journal->warn(e.message);
  reply.error(e);
}

// Judges on the host's thread, then `work(roots, judged)` on a worker, whose Result goes to
// `done(judged, result, reply)` back on the host's thread.
template <class Method, class Work, class Done>
void serve_one(const FsContext& ctx, const std::shared_ptr<ServedPlugin>& plugin,
               Result<Judged> judged, rpc::Reply<Method> reply, Work work, Done done) {
  if (!judged) return fail(*plugin, judged.error(), reply);
  auto shared = std::make_shared<Judged>(std::move(*judged));
  ctx.workers->run(
      plugin->manifest.id,
      [shared, work = std::move(work)] {
        auto roots = platform::BeneathRoots::open(present_roots(shared->roots));
        using Out = decltype(work(*roots, *shared));
        if (!roots) return Out(from_beneath(shared->call, roots.error()));
        return work(*roots, *shared);
      },
      [plugin, shared, reply = std::move(reply), done = std::move(done)](auto result) mutable {
        if (!result) return fail(*plugin, result.error(), reply);
        done(*plugin, *shared, *result, reply);
      });
}

template <class T>
Result<T> lift(const Judged& j, platform::BeneathResult<T> r) {
  if (!r) return from_beneath(j.call, r.error());
  return std::move(*r);
}

proto::FsEntryKind entry_kind(platform::FsKind k) {
  switch (k) {
    case platform::FsKind::file:
      return proto::FsEntryKind::file;
    case platform::FsKind::dir:
      return proto::FsEntryKind::dir;
    case platform::FsKind::link:
      return proto::FsEntryKind::link;
    case platform::FsKind::other:
      break;
  }
  return proto::FsEntryKind::other;
}

}  // namespace

void serve_fs(rpc::Session& session, const FsContext& ctx, std::shared_ptr<ServedPlugin> plugin) {
  session.serve<method::FsRead>([ctx, plugin](const proto::FsPath& p,
                                              rpc::Reply<method::FsRead> reply) {
    const auto root = p.root ? std::optional<FsRoot>(root_of(*p.root)) : std::nullopt;
    const auto limit = static_cast<std::size_t>(plugin->manifest.limits.file_bytes);
    serve_one(
        ctx, plugin, judge(ctx, *plugin, "fs/read", root, p.path, p.agent, false), std::move(reply),
        [limit](const platform::BeneathRoots& roots, const Judged& j) {
          return lift(j, roots.read(j.start, j.relative, limit));
        },
        [](ServedPlugin& served, const Judged& j, platform::FsRead& read, auto& out) {
          served.journal->debug(j.call.what + ": " + std::to_string(read.bytes.size()) + " bytes");
          proto::FsReadResult result;
          if (is_valid_utf8(read.bytes))
            result.text = std::move(read.bytes);
          else
            result.data_base64 = base64_encode(read.bytes);
          out.result(result, rpc::room_for_text(result.text ? result.text->size()
                                                            : result.data_base64->size()));
        });
  });

  session.serve<method::FsWrite>([ctx, plugin](const proto::FsWriteParams& p,
                                               rpc::Reply<method::FsWrite> reply) {
    const auto root = p.root ? std::optional<FsRoot>(root_of(*p.root)) : std::nullopt;
    auto judged = judge(ctx, *plugin, "fs/write", root, p.path, p.agent, true);
    std::string data;
    if (judged) {
      if (p.text && p.data_base64) {
        judged = judged->call.error(ErrorCode::invalid_params, "text or dataBase64, not both");
      } else if (p.data_base64) {
        auto bytes = base64_decode(*p.data_base64);
        if (!bytes)
          judged = judged->call.error(ErrorCode::invalid_params, "dataBase64 is not base64");
        else
          data = std::move(*bytes);
      } else {
        data = p.text.value_or("");
      }
    }
    if (judged && data.size() > kMaxWriteBytes)
      judged =
          judged->call.error(ErrorCode::failed, "is " + std::to_string(data.size()) +
                                                    " bytes, over 4 MiB, the most fs/write writes");
    const bool append = p.append.value_or(false);
    serve_one(
        ctx, plugin, std::move(judged), std::move(reply),
        [data = std::move(data), append](const platform::BeneathRoots& roots, const Judged& j) {
          return lift(j, roots.write(j.start, j.relative, data, append));
        },
        [append](ServedPlugin& served, const Judged& j, platform::FsWritten& w, auto& out) {
          // The path and the size, never the content.
          served.journal->info(j.call.what + ": " + std::to_string(w.bytes) + " bytes " +
                               (append ? "appended to " : "written to ") + quote_name(w.real_path));
          out.result(proto::FsWriteResult{w.real_path, static_cast<std::int64_t>(w.bytes)});
        });
  });

  session.serve<method::FsStat>([ctx, plugin](const proto::FsPath& p,
                                              rpc::Reply<method::FsStat> reply) {
    const auto root = p.root ? std::optional<FsRoot>(root_of(*p.root)) : std::nullopt;
    serve_one(
        ctx, plugin, judge(ctx, *plugin, "fs/stat", root, p.path, p.agent, false), std::move(reply),
        [](const platform::BeneathRoots& roots, const Judged& j) {
          return lift(j, roots.stat(j.start, j.relative));
        },
        [](ServedPlugin&, const Judged&, platform::FsStat& s, auto& out) {
          proto::FsStatResult result;
          result.kind = s.kind == platform::FsKind::file  ? proto::FsStatResultKind::file
                        : s.kind == platform::FsKind::dir ? proto::FsStatResultKind::dir
                                                          : proto::FsStatResultKind::other;
          result.bytes = static_cast<std::int64_t>(s.bytes);
          result.modified = s.modified_ms;
          out.result(result);
        });
  });

  session.serve<method::FsList>([ctx, plugin](const proto::FsPath& p,
                                              rpc::Reply<method::FsList> reply) {
    const auto root = p.root ? std::optional<FsRoot>(root_of(*p.root)) : std::nullopt;
    serve_one(
        ctx, plugin, judge(ctx, *plugin, "fs/list", root, p.path, p.agent, false), std::move(reply),
        [](const platform::BeneathRoots& roots, const Judged& j) {
          return lift(j, roots.list(j.start, j.relative, kMaxListEntries));
        },
        [](ServedPlugin&, const Judged&, platform::FsListing& l, auto& out) {
          proto::FsListResult result;
          result.truncated = l.truncated;
          result.entries.reserve(l.entries.size());
          for (auto& e : l.entries)
            result.entries.push_back(
                proto::FsEntry{is_valid_utf8(e.name) ? std::move(e.name) : to_valid_utf8(e.name),
                               entry_kind(e.kind), static_cast<std::int64_t>(e.bytes)});
          out.result(result);
        });
  });

  session.serve<method::FsCanon>(
      [ctx, plugin](const proto::FsPath& p, rpc::Reply<method::FsCanon> reply) {
        const auto root = p.root ? std::optional<FsRoot>(root_of(*p.root)) : std::nullopt;
        serve_one(
            ctx, plugin, judge(ctx, *plugin, "fs/canon", root, p.path, p.agent, false),
            std::move(reply),
            [](const platform::BeneathRoots& roots, const Judged& j) {
              return lift(j, roots.canon(j.start, j.relative));
            },
            [](ServedPlugin&, const Judged&, std::string& path, auto& out) {
              out.result(proto::FsCanonResult{path});
            });
      });
}

}  // namespace escouade::services
