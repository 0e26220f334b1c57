#pragma once

// The fingerprint of a sandboxed plugin's module (its plugin.wasm, or a run.js plugin's bundle):
// the SHA-256 the store's version.json gives for it, which the app hands to host/load. The host
// checks it twice: at the load, before anything of the plugin changes, and on the very bytes
// each compile or start reads, so that a file changed in between is refused too. A module whose
// digest differs is never compiled.

#include <optional>
#include <string>
#include <string_view>

namespace escouade::runtime {

// Whether `text` is a SHA-256 written in hexadecimal (64 digits, either case).
bool is_sha256_hex(std::string_view text) noexcept;

// Why `bytes`, the module `name`, is refused against the fingerprint `expected` (hexadecimal, as
// is_sha256_hex): "its module plugin.wasm does not match the fingerprint of its store: its SHA-256
// is 3f2a..., the store's version.json says 9c41...; it was not compiled". nullopt when it
// matches.
std::optional<std::string> fingerprint_mismatch(std::string_view name, std::string_view bytes,
                                                std::string_view expected);

}  // namespace escouade::runtime
