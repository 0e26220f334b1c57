#pragma once

// secrets/get: one of the plugin's secrets, kept in the keychain as plugin:<id>:<key>.

#include <memory>
#include <string>
#include <string_view>

#include "rpc/reply.hpp"
#include "services/context.hpp"

namespace escouade::services {

// The keychain name of a plugin's secret.
std::string keychain_name(std::string_view plugin_id, std::string_view key);

// Answers secrets/get for `key`: -32001 for a key its permissions.secrets do not grant (noted
// in the journal), -32002 when the keychain cannot be reached, null when no secret is kept,
// else the secret, which its masker learns before the answer leaves. The journal notes every
// key asked for, never a value. Call on the host's thread; the keychain is read on a worker.
void get_secret(const ServiceContext& ctx, const std::shared_ptr<ServedPlugin>& plugin,
                const std::string& key, rpc::Reply reply);

}  // namespace escouade::services
