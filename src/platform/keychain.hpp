#pragma once

// The system's keychain, where a plugin's secrets are kept under `plugin:<id>:<key>`.
// Backends: the Secret Service through libsecret (Linux), and an explicit file store for demos,
// named as such everywhere it shows. There is no silent fallback from one to the other.
//
// Thread: every call blocks (D-Bus, disk); the host makes them from its worker pool, never from
// its own thread. Each backend is safe to call from several threads at once.
//
// Errors (platform/errors.hpp): Errc::unreachable with a sentence for the journal that names the
// secret, never its value; Errc::invalid_argument for an empty name or a value that is not UTF-8
// text, refused before anything is touched. services/secrets.cpp maps them to the protocol's
// codes. docs/keychain.md says how each backend keeps a secret.

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "base/result.hpp"

namespace escouade::platform {

class Keychain {
 public:
  virtual ~Keychain() = default;

  // The secret kept under `name`, or nullopt when none is. An error (its message a sentence
  // for the journal) when the keychain cannot be reached.
  virtual Result<std::optional<std::string>> get(const std::string& name) = 0;
  // Keeps `value` (UTF-8 text, NUL allowed) under `name`, replacing the one kept before. After
  // an error, the secret kept before is still the one kept.
  virtual Result<void> set(const std::string& name, const std::string& value) = 0;
  // Forgets the secret under `name`; forgetting one that is not kept is not an error.
  virtual Result<void> remove(const std::string& name) = 0;

  // What it is, for the journal and `--help`: "the Secret Service", "the file store in DIR
  // (not a keychain)".
  virtual std::string describe() const = 0;
};

// The Secret Service of the session's D-Bus (gnome-keyring, KWallet...), through libsecret.
// Construction does not connect: a bus that cannot be reached shows as an error of each call.
std::unique_ptr<Keychain> make_secret_service_keychain();

// A plain store in `dir` (created 0700 when missing; one file per secret, 0600): for demos and
// machines without a keychain, chosen explicitly (`--keychain file:DIR`), never as a fallback.
std::unique_ptr<Keychain> make_file_keychain(std::filesystem::path dir);

}  // namespace escouade::platform
