#pragma once

// The checks a plugin.wasm passes before the engine sees it, and the one change made to it: its
// memory's maximum (spec: "The limits", 64 MB for everything the instance holds). No engine
// here: the module's binary sections are read as the WebAssembly core specification (1.0)
// lays them out, and only what the sandbox decides on is looked at.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.hpp"

namespace escouade::sandbox {

// A wasm page: memory sizes are counted in them.
inline constexpr std::uint64_t kWasmPageBytes = 64 * 1024;

// The largest linear memory a run.wasm instance may have under its memory limit, in pages:
// seven eighths of the limit (896 pages, 56 MB, of 64 MB). The last eighth is what the engine
// and the sandbox hold for the instance (its context, the lines it writes, its escouade.call
// requests), counted with its linear memory against the one limit (docs/sandbox.md).
constexpr std::uint64_t linear_memory_pages(std::uint64_t memory_limit) {
  return memory_limit / 8 * 7 / kWasmPageBytes;
}

// A function's type as a module writes it: the value types of its parameters and of its results,
// one byte each (0x7f i32, 0x7e i64, 0x7d f32, 0x7c f64, 0x7b v128, 0x70 funcref, 0x6f
// externref).
struct FunctionType {
  std::string params;
  std::string results;
  bool operator==(const FunctionType&) const = default;
};
// How a sentence writes it: "(i32, i64, i32) -> i32", "(i32) -> ()".
std::string describe(const FunctionType& type);

// The type the sandbox serves this imported function with ("wasi_snapshot_preview1",
// "fd_write"), or nullopt when it does not serve it.
using ServedImport =
    std::function<std::optional<FunctionType>(std::string_view module, std::string_view name)>;

struct PreparedModule {
  std::string bytes;     // what to compile: the module, its memory's maximum set when it was not
  bool max_set = false;  // its memory had no maximum, or one above the limit, and now has it
};

// The module ready to compile, or why it may not run, in a sentence for the journal:
// - not a wasm module (magic, version 1), or sections that cannot be read;
// - an import that is not a function the sandbox serves: its ("module", "name");
// - an imported function whose type is not the one the sandbox serves it with: both types;
// - a shared memory (threads), a memory64, more than one memory, an imported memory;
// - an initial memory above `max_pages`;
// - no exported `memory`, or no exported function `_start` (a WASI command).
// A memory with no maximum, or one above `max_pages`, gets `max_pages` as its maximum: its
// memory section is written again with the new limits (every other byte is kept as it is).
// What the engine validates (types, code) is left to its compiler.
Result<PreparedModule> prepare_module(std::string_view bytes, std::uint64_t max_pages,
                                      const ServedImport& served);

}  // namespace escouade::sandbox
