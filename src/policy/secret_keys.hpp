#pragma once

// Which secrets a plugin may ask for (secrets/get): the keys of its permissions.secrets, where
// a key ending with '*' takes in every key that begins like it (account:* takes account:work).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace escouade::policy {

// Why `key` is not one of the plugin's, as a sentence for the journal and the plugin; nullopt
// when `patterns` (its permissions.secrets) grant it.
//
// Matching is exact and case-sensitive. A pattern `p*` takes in the keys that begin with `p`
// and go on past it (account:* takes account:work, not account: nor account). A key written as
// a keychain name (plugin:<id>:<key>, even the plugin's own) is never granted: a plugin names
// its secrets by key, and the host alone adds the prefix.
// Why `key` cannot be a key at all, whoever asks: longer than kMaxSecretKeyBytes, not UTF-8,
// or holding a control character (a NUL would cut the keychain's name short). The caller
// answers invalidParams (-32602): the params do not hold. secrets/get judges the permission
// first, so a plugin asking for a key not its own gets -32001 whatever its characters (the spec
// says so of any key that is not one of its permissions); the app's host/secrets/set and
// delete judge the form first. An empty key is well formed and never granted.
inline constexpr std::size_t kMaxSecretKeyBytes = 256;
std::optional<std::string> secret_key_form_problem(std::string_view key);

std::optional<std::string> secret_key_refusal(const std::vector<std::string>& patterns,
                                              std::string_view key);

}  // namespace escouade::policy
