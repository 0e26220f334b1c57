#pragma once

// The files `escouade-plugin new cpp|wasm|js` writes, carried by the binary: the build embeds
// them (embed_files.cmake) from apps/escouade-plugin/scaffold/template*/ and
// sdk/cpp/include/escouade/ as they were when it ran, so an installed escouade-plugin needs no
// source tree.

#include <span>
#include <string_view>

namespace escouade::scaffold {

// A file's path relative to its folder, with '/' between folders, and its exact bytes.
struct EmbeddedFile {
  std::string_view path;
  std::string_view bytes;
};

// Every file under scaffold/template/, sorted by path. Placeholders (@ID@, @NAME@, @TARGET@)
// are still in them: scaffold.hpp fills them in.
std::span<const EmbeddedFile> template_files() noexcept;

// Every header of sdk/cpp/include/escouade/ (plugin.hpp, protocol.hpp...), sorted by name.
std::span<const EmbeddedFile> sdk_headers() noexcept;

// What `new wasm` writes instead of or beside the template's files: every file under
// scaffold/template-wasm/ (same placeholders), then sdk/cpp/wasm/support.cpp as
// third_party/escouade/wasm/support.cpp.
std::span<const EmbeddedFile> wasm_files() noexcept;

// What `new js` writes: every file under scaffold/template-js/ (@ID@, @NAME@, and in plugin.mjs
// the error codes @PARSE@, @INVALID_REQUEST@ and @METHOD_NOT_FOUND@, which scaffold_js.cpp
// fills in from the protocol's generated ones).
std::span<const EmbeddedFile> js_files() noexcept;

}  // namespace escouade::scaffold
