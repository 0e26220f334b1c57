#include "services/secrets.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>

#include "platform/keychain.hpp"
#include "policy/secret_keys.hpp"
#include "protocol/gen/errors.hpp"

namespace escouade::services {

namespace json = boost::json;
using proto::ErrorCode;

namespace {

std::string shown(std::string_view key) {
  return json::serialize(json::string(key));
}

}  // namespace

std::string keychain_name(std::string_view plugin_id, std::string_view key) {
  std::string name = "plugin:";
  name += plugin_id;
  name += ':';
  name += key;
  return name;
}

void get_secret(const ServiceContext& ctx, const std::shared_ptr<ServedPlugin>& plugin,
                const std::string& key, rpc::Reply reply) {
  const std::string what = "secrets/get " + shown(key);
  if (auto refusal = policy::secret_key_refusal(plugin->manifest.permissions.secrets, key)) {
    const std::string sentence = what + ": refused: " + *refusal;
    plugin->journal->warn(sentence);
    reply.error(static_cast<int>(ErrorCode::not_yours), sentence);
    return;
  }
  if (!ctx.keychain) {
    const std::string sentence = what + ": no keychain is configured";
    plugin->journal->error(sentence);
    reply.error(static_cast<int>(ErrorCode::keychain), sentence);
    return;
  }
  on_worker(
      ctx,
      [keychain = ctx.keychain, name = keychain_name(plugin->manifest.id, key)] {
        return keychain->get(name);
      },
      [plugin, what, reply = std::move(reply)](Result<std::optional<std::string>> got) mutable {
        if (!got) {
          const std::string sentence = what + ": " + got.error().message;
          plugin->journal->error(sentence);
          reply.error(static_cast<int>(ErrorCode::keychain), sentence);
          return;
        }
        if (!*got) {
          plugin->journal->info(what + ": none is kept");
          reply.result(nullptr);
          return;
        }
        // Masked from now on, before anything the plugin does with it can reach the journal.
        plugin->masker->add(**got);
        plugin->journal->info(what + ": given");
        reply.result(json::string(**got));
      });
}

}  // namespace escouade::services
