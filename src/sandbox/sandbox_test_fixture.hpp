#pragma once

// The fixture of the sandbox's tests (run.js and run.wasm): a SandboxProgramFactory running real
// helpers (escouade-sandbox, the real engine) on a loop of the test's own, one program started at
// a time, what it wrote, when its input was full and how it ended. No wait below is an assertion:
// each is a safety net.

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/sanitizers.hpp"
#include "sandbox/sandbox_program.hpp"

namespace escouade::sandbox {

namespace asio = boost::asio;
namespace json = boost::json;
namespace fs = std::filesystem;
using runtime::ProgramEnd;

inline const fs::path kFixtures = ESCOUADE_SANDBOX_FIXTURES;

// Whether the helpers of this build charge an instance's memory to its account: built with
// AddressSanitizer, which replaces malloc itself, they have none (memory_account.hpp), and the
// GC heap alone is judged against the limit. The helper and these tests are built alike.
constexpr bool helpers_account() {
  return !kAddressSanitizer;
}

class Sandbox : public ::testing::Test {
 protected:
  Sandbox() : factory_(make_factory()) {}

  std::unique_ptr<SandboxProgramFactory> make_factory(std::filesystem::path cache_folder = {}) {
    return std::make_unique<SandboxProgramFactory>(
        io_.get_executor(), context_, SandboxOptions::installed(std::move(cache_folder)));
  }

  static runtime::ProgramSpec spec_of(const std::string& folder, const std::string& module,
                                      runtime::ProgramLimits limits = {}) {
    runtime::ProgramSpec spec;
    spec.limits = limits;
    spec.plugin_id = "dev.test.sandbox";
    spec.kind = runtime::RunKind::js;
    spec.folder = kFixtures / folder;
    spec.module = kFixtures / folder / module;
    return spec;
  }

  // Starts the program `spec` describes; what it writes and how it ends are kept below.
  void start(const runtime::ProgramSpec& spec) {
    out_.clear();
    err_.clear();
    end_.reset();
    full_.clear();
    ASSERT_TRUE(factory_->runs(spec.kind));
    program_ = factory_->make(spec);
    ASSERT_TRUE(program_);
    runtime::ProgramEvents ev;
    ev.output_line = [this](std::string_view l) { out_.emplace_back(l); };
    ev.error_line = [this](std::string_view l) { err_.emplace_back(l); };
    ev.exited = [this](const ProgramEnd& e) { end_ = e; };
    ev.input_full = [this](std::size_t backlog) { full_.push_back(backlog); };
    ASSERT_TRUE(program_->start(std::move(ev)));
  }
  // Starts `module` of `folder` (under the fixtures) as a run.js bundle.
  void start(const std::string& folder, const std::string& module,
             runtime::ProgramLimits limits = {}) {
    start(spec_of(folder, module, limits));
  }

  void send(const json::value& message) {
    program_->write(json::serialize(message) + "\n", proto::Delivery::kept);
  }
  void call(int id, std::string_view method, json::value params = nullptr) {
    send(json::object{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}});
  }

  // Runs the loop until `done()` holds; `done` is called once after each handler at most, and
  // never again once it held (it may take what it found).
  template <class P>
  bool run_until(P done, std::chrono::seconds safety = std::chrono::seconds(60)) {
    const auto limit = std::chrono::steady_clock::now() + safety;
    for (;;) {
      if (done()) return true;
      if (std::chrono::steady_clock::now() >= limit) return false;
      io_.restart();
      io_.run_one_for(std::chrono::milliseconds(20));
    }
  }
  // The first line of its output for which `match` holds, once it came (nullopt if it ended
  // first).
  template <class M>
  std::optional<json::value> line_where(M match) {
    std::optional<json::value> found;
    run_until([&] {
      for (const auto& l : out_) {
        boost::system::error_code ec;
        auto v = json::parse(l, ec);
        if (!ec && v.is_object() && match(v.as_object())) {
          found = v;
          return true;
        }
      }
      return end_.has_value();
    });
    return found;
  }
  // The next line of its output with `method` (or the answer to `id`), taken from what it
  // wrote, in order; the lines before it stay. Every line it writes must be JSON.
  std::optional<json::value> take(std::string_view method, const json::value& id = nullptr) {
    std::optional<json::value> found;
    run_until([&] {
      for (auto it = out_.begin(); it != out_.end(); ++it) {
        const json::value v = json::parse(*it);
        const json::object& o = v.as_object();
        const bool match = id.is_null()
                               ? o.contains("method") && o.at("method") == json::value(method)
                               : !o.contains("method") && o.contains("id") && o.at("id") == id;
        if (match) {
          found = v;
          out_.erase(it);
          return true;
        }
      }
      return end_.has_value();
    });
    return found;
  }
  // The answer to call `id`, once it came.
  std::optional<json::value> answer(int id) {
    return line_where([&](const json::object& o) {
      return !o.contains("method") && o.contains("id") && o.at("id") == json::value(id);
    });
  }
  // The result of call `id`, which must come.
  json::value result(int id) {
    auto a = answer(id);
    EXPECT_TRUE(a) << "no answer to " << id << "; ended: " << (end_ ? end_->reason : "no");
    if (!a || !a->as_object().contains("result")) return nullptr;
    return a->at("result");
  }
  const ProgramEnd& ended() {
    EXPECT_TRUE(run_until([&] { return end_.has_value(); }));
    static const ProgramEnd none{ProgramEnd::Kind::no_room, "it did not end", {}, {}};
    return end_ ? *end_ : none;
  }
  // The program its helper runs, from /proc/<pid>/cmdline (readable though the helper is not
  // dumpable): "" when there is no such process.
  static std::string program_of(int pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
    std::string argv0;
    std::getline(in, argv0, '\0');
    return argv0;
  }
  // Whether the program runs in a helper of its own now: a process of escouade-sandbox.
  bool in_a_helper() const {
    const auto pid = program_->pid();
    return pid && program_of(*pid).ends_with("/escouade-sandbox");
  }
  bool err_has(std::string_view text) const {
    for (const auto& l : err_)
      if (l.find(text) != std::string::npos) return true;
    return false;
  }

  asio::io_context io_;
  runtime::ProcessContext context_;
  std::unique_ptr<SandboxProgramFactory> factory_;
  std::unique_ptr<runtime::Program> program_;
  std::vector<std::string> out_;
  std::vector<std::string> err_;
  std::optional<ProgramEnd> end_;
  std::vector<std::size_t> full_;
};

}  // namespace escouade::sandbox
