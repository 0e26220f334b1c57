// prepare_module on modules written byte by byte: what it refuses, with which words, and the
// memory maximum it sets.

#include "sandbox/wasm_module.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace escouade::sandbox {
namespace {

constexpr std::uint64_t kLimit = 1024;  // 64 MB

std::string section(std::uint8_t id, const std::string& content) {
  std::string s(1, static_cast<char>(id));
  s.push_back(static_cast<char>(content.size()));  // every test section is under 128 bytes
  return s + content;
}
std::string name(const std::string& n) {
  return std::string(1, static_cast<char>(n.size())) + n;
}

// A module of `sections` after the header.
std::string module(const std::vector<std::string>& sections) {
  std::string m("\0asm\1\0\0\0", 8);
  for (const auto& s : sections)
    m += s;
  return m;
}

// One memory of `limits` (flags and values, already encoded).
std::string memory(const std::string& limits) {
  return section(5, "\x01" + limits);
}
// Exports memory 0 and function 0 as _start.
std::string exports() {
  return section(7, "\x02" + name("memory") + std::string("\x02\x00", 2) + name("_start") +
                        std::string("\x00\x00", 2));
}
// The type section of one function type: (i32, i32, i32, i32) -> i32 unless told.
std::string types(const std::string& params = "\x7f\x7f\x7f\x7f",
                  const std::string& results = "\x7f") {
  return section(1, "\x01\x60" + name(params) + name(results));
}
// Its type section, then its import of one function of type 0.
std::string import_function(const std::string& module_name, const std::string& field) {
  return types() +
         section(2, "\x01" + name(module_name) + name(field) + std::string("\x00\x00", 2));
}

std::optional<FunctionType> serves(std::string_view module_name, std::string_view field) {
  if (module_name == "wasi_snapshot_preview1" && field == "fd_write")
    return FunctionType{"\x7f\x7f\x7f\x7f", "\x7f"};
  return std::nullopt;
}

std::string refusal(const std::string& bytes) {
  auto r = prepare_module(bytes, kLimit, serves);
  return r ? std::string("(not refused)") : r.error().message;
}

TEST(WasmModule, AMemoryWithinTheLimitIsKeptAsItIs) {
  const std::string m = module({import_function("wasi_snapshot_preview1", "fd_write"),
                                memory(std::string("\x01\x01\x10", 3)), exports()});
  auto r = prepare_module(m, kLimit, serves);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_FALSE(r->max_set);
  EXPECT_EQ(r->bytes, m);
}

TEST(WasmModule, AMemoryWithNoMaximumGetsTheLimit) {
  const std::string m = module({memory(std::string("\x00\x02", 2)), exports()});
  auto r = prepare_module(m, kLimit, serves);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->max_set);
  // flags 1, min 2, max 1024 (LEB128: 0x80 0x08)
  EXPECT_EQ(r->bytes, module({memory(std::string("\x01\x02\x80\x08", 4)), exports()}));
  auto again = prepare_module(r->bytes, kLimit, serves);
  ASSERT_TRUE(again);
  EXPECT_FALSE(again->max_set);
}

TEST(WasmModule, AMaximumPastTheLimitIsLoweredToIt) {
  // max 65536 pages (4 GiB): LEB128 0x80 0x80 0x04
  const std::string m = module({memory(std::string("\x01\x01\x80\x80\x04", 5)), exports()});
  auto r = prepare_module(m, kLimit, serves);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->max_set);
  EXPECT_EQ(r->bytes, module({memory(std::string("\x01\x01\x80\x08", 4)), exports()}));
}

TEST(WasmModule, WhatItRefusesAndWhy) {
  EXPECT_EQ(refusal(module({import_function("wasi_snapshot_preview1", "path_open"),
                            memory(std::string("\x00\x01", 2)), exports()})),
            "its module imports (\"wasi_snapshot_preview1\", \"path_open\"), which the sandbox "
            "does not serve: only its WASI subset and escouade.call (docs/sandbox.md)");
  EXPECT_NE(refusal(module({import_function("env", "system"), memory(std::string("\x00\x01", 2)),
                            exports()}))
                .find("(\"env\", \"system\")"),
            std::string::npos);
  EXPECT_EQ(refusal(module({memory(std::string("\x03\x01\x02", 3)), exports()})),
            "its module has a shared memory, which the sandbox refuses");
  EXPECT_EQ(refusal(module({memory(std::string("\x05\x01\x02", 3)), exports()})),
            "its module has a 64-bit memory (memory64), which the sandbox refuses");
  // 2000 pages: LEB128 0xd0 0x0f
  EXPECT_EQ(refusal(module({memory(std::string("\x00\xd0\x0f", 3)), exports()})),
            "its module asks for 125 MB of memory at its start, past the 64 MB its linear memory "
            "may have");
  const std::string imported_memory =
      section(2, "\x01" + name("env") + name("memory") + std::string("\x02\x00\x01", 3));
  EXPECT_NE(refusal(module({imported_memory, exports()})).find("imports its memory"),
            std::string::npos);
  EXPECT_NE(refusal(module({memory(std::string("\x00\x01", 2))})).find("no memory named"),
            std::string::npos);
  EXPECT_NE(refusal(module({memory(std::string("\x00\x01", 2)),
                            section(7, "\x01" + name("memory") + std::string("\x02\x00", 2))}))
                .find("no function \"_start\""),
            std::string::npos);
  EXPECT_EQ(refusal("\x7f"
                    "ELF and more"),
            "its plugin.wasm is not a wasm module (version 1)");
  // fd_write imported with another type than WASI's.
  const std::string fd_write = section(
      2, "\x01" + name("wasi_snapshot_preview1") + name("fd_write") + std::string("\x00\x00", 2));
  EXPECT_EQ(refusal(module({types("\x7f\x7f", "\x7f"), fd_write, memory(std::string("\x00\x01", 2)),
                            exports()})),
            "its module imports (\"wasi_snapshot_preview1\", \"fd_write\") as (i32, i32) -> i32, "
            "but the sandbox serves it as (i32, i32, i32, i32) -> i32");
  EXPECT_EQ(refusal(module({types("\x7f\x7f\x7f\x7f", "\x7e"), fd_write,
                            memory(std::string("\x00\x01", 2)), exports()})),
            "its module imports (\"wasi_snapshot_preview1\", \"fd_write\") as (i32, i32, i32, "
            "i32) -> i64, but the sandbox serves it as (i32, i32, i32, i32) -> i32");
  EXPECT_EQ(refusal(module(
                {types("\x7f\x7e", ""), fd_write, memory(std::string("\x00\x01", 2)), exports()})),
            "its module imports (\"wasi_snapshot_preview1\", \"fd_write\") as (i32, i64) -> (), "
            "but the sandbox serves it as (i32, i32, i32, i32) -> i32");
  // A type index past the type section, or no type section at all: not a module that reads.
  EXPECT_EQ(refusal(module({fd_write, memory(std::string("\x00\x01", 2)), exports()})),
            "its plugin.wasm cannot be read: a section is cut or malformed");
  EXPECT_EQ(refusal(module({memory(std::string("\x00\x01", 2)), std::string("\x07\x40\x01", 3)})),
            "its plugin.wasm cannot be read: a section is cut or malformed");
}

}  // namespace
}  // namespace escouade::sandbox
