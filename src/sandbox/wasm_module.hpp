#pragma once

// The checks a plugin.wasm passes before the engine sees it, and the one change made to it: its
// memory's maximum (spec: "The limits", 64 MB for everything the instance holds). No engine
// here: the module's binary sections are read as the WebAssembly core specification (1.0)
// lays them out, and only what the sandbox decides on is looked at.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/result.hpp"

namespace escouade::sandbox {

// A wasm page: memory sizes are counted in them.
inline constexpr std::uint64_t kWasmPageBytes = 64 * 1024;

// Whether the sandbox serves this imported function ("wasi_snapshot_preview1", "fd_write").
using ServedImport = std::function<bool(std::string_view module, std::string_view name)>;

struct PreparedModule {
  std::string bytes;     // what to compile: the module, its memory's maximum set when it was not
  bool max_set = false;  // its memory had no maximum, or one above the limit, and now has it
};

// The module ready to compile, or why it may not run, in a sentence for the journal:
// - not a wasm module (magic, version 1), or sections that cannot be read;
// - an import that is not a function the sandbox serves: its ("module", "name");
// - a shared memory (threads), a memory64, more than one memory, an imported memory;
// - an initial memory above `max_pages`;
// - no exported `memory`, or no exported function `_start` (a WASI command).
// A memory with no maximum, or one above `max_pages`, gets `max_pages` as its maximum: its
// memory section is written again with the new limits (every other byte is kept as it is).
// What the engine validates (types, code) is left to its compiler.
Result<PreparedModule> prepare_module(std::string_view bytes, std::uint64_t max_pages,
                                      const ServedImport& served);

}  // namespace escouade::sandbox
