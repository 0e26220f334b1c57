#include "services/bind.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>

#include "base/quote.hpp"
#include "protocol/gen/methods.hpp"
#include "services/files.hpp"
#include "services/log.hpp"
#include "services/secrets.hpp"
#include "services/settings.hpp"
#include "services/timers.hpp"

namespace escouade::services {

namespace json = boost::json;
namespace method = proto::method;

namespace {

void serve_files(rpc::Session& session, const FilesContext& ctx,
                 const std::shared_ptr<ServedPlugin>& plugin) {
  session.serve<method::FilesRead>([ctx, plugin](const proto::FilesReadParams& p, rpc::Reply r) {
    ctx.workers->run(
        plugin->manifest.id,
        [folder = plugin->folder, path = p.path] { return read_own_file(*folder, path); },
        [plugin, path = p.path, reply = std::move(r)](Result<std::string> text) mutable {
          if (!text) {
            plugin->journal->warn(text.error().message);
            reply.error(text.error());
            return;
          }
          plugin->journal->debug("files/read " + quote_name(path) + ": " +
                                 std::to_string(text->size()) + " bytes");
          reply.result(json::string(std::move(*text)));
        });
  });
}

void serve_settings(rpc::Session& session, const SettingsContext& ctx,
                    const std::shared_ptr<ServedPlugin>& plugin) {
  session.serve<method::SettingsGet>(
      [ctx, plugin](const proto::SettingsGetParams& p, rpc::Reply r) {
        std::optional<std::filesystem::path> folder;
        if (p.project) {
          auto it = plugin->project_folders.find(*p.project);
          if (it == plugin->project_folders.end()) {
            // Nothing of a project it is not on for reaches it: the user's values alone.
            plugin->journal->warn("settings/get: it is not on for project " +
                                  quote_name(*p.project) + "; the user's values answer alone");
          } else if (!it->second.empty()) {
            folder = it->second;
          }
        }
        ctx.workers->run(
            plugin->manifest.id,
            [manifest = plugin->manifest, store = ctx.store, folder] {
              return resolve_settings(manifest, *store, folder ? &*folder : nullptr);
            },
            [plugin, reply = std::move(r)](ResolvedSettings got) mutable {
              for (const auto& problem : got.problems)
                plugin->journal->warn("settings/get: " + problem);
              reply.result(std::move(got.values));
            });
      });
}

}  // namespace

void bind_services(rpc::Session& session, RunScope& run, const ServiceContext& ctx,
                   std::shared_ptr<ServedPlugin> plugin) {
  // `run` outlives every call its session dispatches: the session is closed before it goes.
  session.serve<method::SecretsGet>([ctx, plugin, run = &run](const proto::SecretsGetParams& p,
                                                              rpc::Reply r) {
    if (!run->ready()) {
      const std::string sentence =
          "secrets/get " + quote_name(p.key) + ": refused: asked before initialize was answered";
      plugin->journal->warn(sentence);
      r.error(proto::ErrorCode::refused, sentence);
      return;
    }
    get_secret(ctx.secrets, plugin, p.key, std::move(r));
  });
  if (ctx.settings.store) serve_settings(session, ctx.settings, plugin);
  serve_files(session, ctx.files, plugin);
  serve_log(session, plugin->journal);
  // A sandboxed plugin has no clock of its own to wait on: the host keeps its timers. A process
  // has, and is answered methodNotFound (the schema, net/fetch: "the same for ... timer/*").
  const auto kind = plugin->manifest.run.kind;
  if (kind == manifest::RunKind::js || kind == manifest::RunKind::wasm)
    serve_timers(session, run, ctx.timers, plugin);
}

}  // namespace escouade::services
