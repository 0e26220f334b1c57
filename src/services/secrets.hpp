#pragma once

// A plugin's secrets, kept in the keychain as plugin:<id>:<key>: secrets/get for the plugin,
// host/secrets/set and host/secrets/delete for the app. Each asks policy/secret_keys first, does
// the keychain's blocking work on the workers, and maps the keychain's errors to the protocol's
// codes here and nowhere else (keychain_error).

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "protocol/gen/methods.hpp"
#include "rpc/reply.hpp"
#include "services/context.hpp"
#include "services/run_scope.hpp"

namespace escouade::services {

// The keychain name of a plugin's secret.
std::string keychain_name(std::string_view plugin_id, std::string_view key);

// Answers secrets/get for `key`: notYours (-32001) for a key its permissions.secrets do not
// grant (noted in the journal), keychain (-32002) when the keychain cannot be reached, null when
// no secret is kept, else the secret, which its masker learns before the answer leaves. The
// journal notes every key asked for, never a value. Call on the host's thread.
void get_secret(const SecretsContext& ctx, const std::shared_ptr<ServedPlugin>& plugin,
                const std::string& key, rpc::Reply<proto::method::SecretsGet> reply);

// Binds secrets/get on a session of `plugin`'s: refused (-32003) before the plugin answered
// initialize (RunScope::ready), then get_secret.
void serve_secrets(rpc::Session& session, RunScope& run, const SecretsContext& ctx,
                   const std::shared_ptr<ServedPlugin>& plugin);

using SecretDone = std::function<void(Result<void>)>;

// The app keeps `value` as the plugin's secret `key`, or forgets it. `done` on the host's
// thread: invalidParams (-32602) for a key its permissions.secrets do not grant or a value the
// keychain cannot keep, keychain (-32002) when the keychain cannot be reached. The journal notes
// the key, never the value.
void set_secret(const SecretsContext& ctx, const std::shared_ptr<ServedPlugin>& plugin,
                const std::string& key, std::string value, SecretDone done);
void delete_secret(const SecretsContext& ctx, const std::shared_ptr<ServedPlugin>& plugin,
                   const std::string& key, SecretDone done);

}  // namespace escouade::services
