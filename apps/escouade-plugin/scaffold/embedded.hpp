#pragma once

// The files `escouade-plugin new cpp|wasm|js|ts` writes, carried by the binary: the build
// embeds them (embed_files.cmake) from apps/escouade-plugin/scaffold/template*/,
// sdk/cpp/include/escouade/, sdk/cpp/wasm/ and sdk/typescript/ as they were when it ran, so an
// installed escouade-plugin needs no source tree.

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

// What `new ts` writes: every file under scaffold/template-ts/ (@ID@, @NAME@, @TARGET@; its
// gitignore to be written as .gitignore), sorted by path.
std::span<const EmbeddedFile> ts_files() noexcept;

// The TypeScript SDK's package as npm would publish it, which `new ts` writes as it is under
// vendor/escouade-dev-plugin/: sdk/typescript's package.json, README.md and every file under
// its src/ and bin/ (bin/escouade-plugin-build.mjs), sorted by path. Not its tests, nor its
// tsconfig.json.
std::span<const EmbeddedFile> ts_sdk_files() noexcept;

}  // namespace escouade::scaffold
