#include "services/bind.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>

#include "protocol/gen/methods.hpp"
#include "services/files.hpp"
#include "services/log.hpp"
#include "services/secrets.hpp"
#include "services/settings.hpp"

namespace escouade::services {

namespace json = boost::json;
namespace method = proto::method;

namespace {

void serve_files(rpc::Session& session, const ServiceContext& ctx,
                 const std::shared_ptr<ServedPlugin>& plugin) {
  session.serve<method::FilesRead>([ctx, plugin](const proto::FilesReadParams& p, rpc::Reply r) {
    on_worker(
        ctx,
        [folder = plugin->manifest.folder, path = p.path] { return read_own_file(folder, path); },
        [plugin, path = p.path, reply = std::move(r)](Result<std::string> text) mutable {
          if (!text) {
            plugin->journal->warn(text.error().message);
            reply.error(text.error().code, text.error().message);
            return;
          }
          plugin->journal->debug("files/read " + json::serialize(json::string(path)) + ": " +
                                 std::to_string(text->size()) + " bytes");
          reply.result(json::string(std::move(*text)));
        });
  });
}

void serve_settings(rpc::Session& session, const ServiceContext& ctx,
                    const std::shared_ptr<ServedPlugin>& plugin) {
  session.serve<method::SettingsGet>(
      [ctx, plugin](const proto::SettingsGetParams& p, rpc::Reply r) {
        std::optional<std::filesystem::path> folder;
        if (p.project) {
          auto it = plugin->project_folders.find(*p.project);
          if (it == plugin->project_folders.end()) {
            // Nothing of a project it is not on for reaches it: the user's values alone.
            plugin->journal->warn("settings/get: it is not on for project " +
                                  json::serialize(json::string(*p.project)) +
                                  "; the user's values answer alone");
          } else if (!it->second.empty()) {
            folder = it->second;
          }
        }
        on_worker(
            ctx,
            [manifest = plugin->manifest, store = ctx.settings, folder] {
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

void bind_services(rpc::Session& session, const ServiceContext& ctx,
                   std::shared_ptr<ServedPlugin> plugin) {
  session.serve<method::SecretsGet>([ctx, plugin](const proto::SecretsGetParams& p, rpc::Reply r) {
    get_secret(ctx, plugin, p.key, std::move(r));
  });
  if (ctx.settings) serve_settings(session, ctx, plugin);
  serve_files(session, ctx, plugin);
  serve_log(session, plugin->journal);
}

}  // namespace escouade::services
