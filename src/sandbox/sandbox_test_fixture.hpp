#pragma once

// The fixture of the sandbox's tests (run.js and run.wasm): a SandboxProgramFactory with the real
// engine on a loop of the test's own, one program started at a time, what it wrote, when its input
// was full and how it ended. No wait below is an assertion: each is a safety net.

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sandbox/sandbox_program.hpp"

namespace escouade::sandbox {

namespace asio = boost::asio;
namespace json = boost::json;
namespace fs = std::filesystem;
using runtime::ProgramEnd;

inline const fs::path kFixtures = ESCOUADE_SANDBOX_FIXTURES;

class Sandbox : public ::testing::Test {
 protected:
  Sandbox() : factory_(std::make_unique<SandboxProgramFactory>(io_.get_executor())) {}

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

  void send(const json::value& message) { program_->write_line(json::serialize(message) + "\n"); }
  void call(int id, std::string_view method, json::value params = nullptr) {
    send(json::object{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}});
  }

  template <class P>
  bool run_until(P done, std::chrono::seconds safety = std::chrono::seconds(60)) {
    const auto limit = std::chrono::steady_clock::now() + safety;
    while (!done() && std::chrono::steady_clock::now() < limit) {
      io_.restart();
      io_.run_one_for(std::chrono::milliseconds(20));
    }
    return done();
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
    static const ProgramEnd none{ProgramEnd::Kind::no_room, "it did not end", {}};
    return end_ ? *end_ : none;
  }
  bool err_has(std::string_view text) const {
    for (const auto& l : err_)
      if (l.find(text) != std::string::npos) return true;
    return false;
  }

  asio::io_context io_;
  std::unique_ptr<SandboxProgramFactory> factory_;
  std::unique_ptr<runtime::Program> program_;
  std::vector<std::string> out_;
  std::vector<std::string> err_;
  std::optional<ProgramEnd> end_;
  std::vector<std::size_t> full_;
};

}  // namespace escouade::sandbox
