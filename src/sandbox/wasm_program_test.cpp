// A SandboxProgram running run.wasm modules with the real engine: echo.wasm (C, wasi-libc) and
// hostile modules from .wat (tests/fixtures/sandbox/wasm/, built by the build into
// ESCOUADE_WASM_FIXTURES). The limits are the spec's own; no assertion is timed: the waits are
// only safety nets.

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sandbox/sandbox_program.hpp"

namespace escouade::sandbox {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;
namespace fs = std::filesystem;
using runtime::ProgramEnd;

const fs::path kModules = ESCOUADE_WASM_FIXTURES;

class WasmSandbox : public ::testing::Test {
 protected:
  WasmSandbox() : factory_(io_.get_executor()) {}

  void start(const std::string& module, runtime::ProgramLimits limits = {}) {
    runtime::ProgramSpec spec;
    spec.limits = limits;
    spec.plugin_id = "dev.test.wasm";
    spec.kind = runtime::RunKind::wasm;
    spec.folder = kModules;
    spec.module = kModules / module;
    ASSERT_TRUE(fs::exists(spec.module)) << spec.module;
    ASSERT_TRUE(factory_.runs(runtime::RunKind::wasm));
    out_.clear();
    err_.clear();
    end_.reset();
    program_ = factory_.make(spec);
    ASSERT_TRUE(program_);
    runtime::ProgramEvents ev;
    ev.output_line = [this](std::string_view l) { out_.emplace_back(l); };
    ev.error_line = [this](std::string_view l) { err_.emplace_back(l); };
    ev.exited = [this](const ProgramEnd& e) { end_ = e; };
    ASSERT_TRUE(program_->start(std::move(ev)));
  }

  void send(const json::value& message) { program_->write_line(json::serialize(message) + "\n"); }
  void call(int id, std::string_view method, json::value params = json::object{}) {
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
  // The first line of its output for which `match` holds, once it came.
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
  std::optional<json::value> answer(int id) {
    return line_where(
        [&](const json::object& o) { return o.contains("id") && o.at("id") == json::value(id); });
  }
  // The result of call `id`, which must come.
  json::value result(int id) {
    auto a = answer(id);
    EXPECT_TRUE(a) << "no answer to " << id;
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
  void handshake() {
    call(1, "initialize", json::object{{"protocolVersion", 1}});
    ASSERT_EQ(result(1).at("protocolVersion"), 1);
  }

  asio::io_context io_;
  SandboxProgramFactory factory_;
  std::unique_ptr<runtime::Program> program_;
  std::vector<std::string> out_;
  std::vector<std::string> err_;
  std::optional<ProgramEnd> end_;
};

TEST_F(WasmSandbox, AGoodPluginAnswersItsCallsAndKeepsItsState) {
  start("echo.wasm");
  EXPECT_EQ(program_->describe(), "echo.wasm in the sandbox");
  EXPECT_EQ(program_->pid(), std::nullopt);
  handshake();
  call(2, "test/echo", json::object{{"a", 1}});
  auto echo = result(2);
  EXPECT_EQ(echo.at("echo"), (json::object{{"a", 1}}));
  EXPECT_EQ(echo.at("calls"), 2);  // the same instance kept its state
  send(json::object{{"jsonrpc", "2.0"}, {"method", "events/fact"}, {"params", json::object{}}});
  call(3, "test/echo", 3);
  EXPECT_EQ(result(3).at("facts"), 1);
  EXPECT_TRUE(err_has("echo.wasm: started"));  // fd 2, to the journal
  ASSERT_TRUE(program_->memory_bytes());
  EXPECT_GT(*program_->memory_bytes(), 64u * 1024);  // its linear memory is counted
  call(4, "shutdown");
  ASSERT_TRUE(answer(4));
  EXPECT_EQ(ended().reason, "its instance exited with code 0");
}

TEST_F(WasmSandbox, WhatTheWasiSubsetGives) {
  start("echo.wasm");
  handshake();
  call(2, "test/world");
  auto w = result(2);
  EXPECT_EQ(w.at("argc"), 1);
  EXPECT_EQ(w.at("argv0"), "echo.wasm");
  EXPECT_EQ(w.at("env"), 0);  // it does not read the environment
  EXPECT_GT(w.at("realtime_s").as_int64(), 1600000000);
  EXPECT_EQ(w.at("random").at(0), 0);
  EXPECT_EQ(w.at("random").at(1), 0);
  EXPECT_NE(w.at("random").at(2), w.at("random").at(3));
  EXPECT_EQ(w.at("seek"), -1);  // stdin does not seek (ESPIPE)
  call(3, "test/log");
  ASSERT_TRUE(answer(3));
  EXPECT_TRUE(run_until([&] { return err_has("to the journal"); }));
}

TEST_F(WasmSandbox, ASleepLastsTenMillisecondsAtLeast) {
  start("echo.wasm");
  handshake();
  call(2, "test/sleep");  // it asks for 1 ms
  EXPECT_GE(result(2).at("slept_ns").as_int64(), 10'000'000);
}

TEST_F(WasmSandbox, AMemoryWithNoMaximumGrowsToTheLimitAndNoFurther) {
  start("echo.wasm");  // wasm-ld wrote no maximum: the sandbox set 64 MB
  handshake();
  call(2, "test/grow");
  auto g = result(2);
  EXPECT_EQ(g.at("pages"), 1024);  // memory.grow answered -1 there
  EXPECT_GT(g.at("grown").as_int64(), 0);
  call(3, "test/echo", 1);
  const json::value echo = result(3);  // and it runs on
  ASSERT_TRUE(echo.is_object()) << (end_ ? end_->reason : "it did not end");
  EXPECT_EQ(echo.at("echo"), 1);
}

TEST_F(WasmSandbox, GrowingPastTheLimitFailsInAModuleWithNoMaximumOrOneTooLarge) {
  start("grow_no_max.wasm");
  EXPECT_EQ(ended().reason, "its instance exited with code 1024");
  start("grow_max_too_large.wasm");
  EXPECT_EQ(ended().reason, "its instance exited with code 1024");
}

TEST_F(WasmSandbox, GuestPointersOutsideTheMemoryAreRefusedWithEfault) {
  start("echo.wasm");
  handshake();
  call(2, "test/faults");
  auto f = result(2);
  EXPECT_EQ(f.at("fd_write"), (json::array{21, 21}));
  EXPECT_EQ(f.at("fd_read"), (json::array{21, 21}));
  EXPECT_EQ(f.at("random"), 21);
  EXPECT_EQ(f.at("call"), (json::array{3, 3, 3}));
  EXPECT_EQ(f.at("badf"), (json::array{8, 8}));
  call(3, "test/echo", 2);
  EXPECT_EQ(result(3).at("echo"), 2);
}

TEST_F(WasmSandbox, WhatOneCallMayAskIsBounded) {
  start("echo.wasm");
  handshake();
  call(2, "test/big");
  auto b = result(2);
  EXPECT_EQ(b.at("write"), 0);
  EXPECT_EQ(b.at("written"), 1024 * 1024);  // of 256 MiB asked: a short write
  EXPECT_EQ(b.at("hugecall"), 3);           // 9 MiB of params: past a protocol line
  call(3, "test/echo", 3);
  EXPECT_EQ(result(3).at("echo"), 3);
}

TEST_F(WasmSandbox, EscouadeCallSendsARequestAndGivesTheAnswerBack) {
  start("echo.wasm");
  handshake();
  call(2, "test/call", json::object{{"q", 1}});
  // Its request, on the protocol, with an id of the sandbox's own.
  auto request = line_where(
      [](const json::object& o) { return o.contains("method") && o.at("method") == "test/host"; });
  ASSERT_TRUE(request);
  EXPECT_EQ(request->at("id"), "escouade.call/1");
  EXPECT_EQ(request->at("params"), (json::object{{"q", 1}}));
  // A fact comes while it waits: kept for fd_read, after the answer.
  send(json::object{{"jsonrpc", "2.0"}, {"method", "events/fact"}, {"params", json::object{}}});
  send(json::object{
      {"jsonrpc", "2.0"}, {"id", "escouade.call/1"}, {"result", json::object{{"got", 1}}}});
  // The second request asks again with a buffer of 2 bytes: told the size, then given it.
  auto second = line_where(
      [](const json::object& o) { return o.contains("id") && o.at("id") == "escouade.call/2"; });
  ASSERT_TRUE(second);
  send(json::object{{"jsonrpc", "2.0"},
                    {"id", "escouade.call/2"},
                    {"error", json::object{{"code", -32601}, {"message", "no test/host"}}}});
  auto r = result(2);
  EXPECT_EQ(r.at("code"), 0);
  EXPECT_EQ(r.at("answer"), (json::object{{"got", 1}}));
  EXPECT_EQ(r.at("small"), 2);
  const std::string error_json = R"({"code":-32601,"message":"no test/host"})";
  EXPECT_EQ(r.at("needed"), error_json.size());
  EXPECT_EQ(r.at("again"), 1);  // an error answer
  EXPECT_EQ(r.at("kept"), json::parse(error_json));
  call(3, "test/echo", 3);
  EXPECT_EQ(result(3).at("facts"), 1);  // the fact that came meanwhile was read after
}

TEST_F(WasmSandbox, AnEndlessWasmLoopIsStoppedAfter2000ms) {
  start("spin.wasm");  // loop br 0, in its first turn
  const auto& end = ended();
  EXPECT_EQ(end.kind, ProgramEnd::Kind::crash);
  EXPECT_EQ(end.reason, "a turn ran past 2000 ms: Escouade stopped its instance");
}

TEST_F(WasmSandbox, AnEndlessLoopInACallAfterTheHandshakeIsStopped) {
  start("echo.wasm");
  handshake();
  call(2, "test/spin");
  EXPECT_EQ(ended().reason, "a turn ran past 2000 ms: Escouade stopped its instance");
}

TEST_F(WasmSandbox, WhileItHoldsADecisionATurnHas500ms) {
  start("echo.wasm");
  handshake();
  program_->decisions_held(1);
  call(2, "test/spin");
  EXPECT_EQ(ended().reason, "a turn ran past 500 ms: Escouade stopped its instance");
}

TEST_F(WasmSandbox, ATrapIsACrashWithItsMessage) {
  start("trap.wasm");
  EXPECT_EQ(ended().kind, ProgramEnd::Kind::crash);
  EXPECT_EQ(end_->reason.rfind("its instance crashed: RuntimeError: unreachable", 0), 0u)
      << end_->reason;
  start("echo.wasm");
  handshake();
  call(2, "test/trap");
  EXPECT_EQ(ended().reason.rfind("its instance crashed: RuntimeError: unreachable", 0), 0u)
      << end_->reason;
}

TEST_F(WasmSandbox, ProcExitEndsItWithItsCode) {
  start("exit3.wasm");
  EXPECT_EQ(ended().reason, "its instance exited with code 3");
  start("echo.wasm");
  handshake();
  call(2, "test/exit");
  EXPECT_EQ(ended().reason, "its instance exited with code 3");
}

TEST_F(WasmSandbox, StopEndsAnInstanceWaitingForInput) {
  start("echo.wasm");
  handshake();
  program_->stop();
  EXPECT_EQ(ended().reason, "stopped by Escouade");
}

TEST_F(WasmSandbox, ARestartMakesItsInstanceFromTheModuleCompiledBefore) {
  // The factory keeps what it compiled: the second instance is made from it, and is a new one.
  start("echo.wasm");
  handshake();
  call(2, "test/echo", 1);
  EXPECT_EQ(result(2).at("calls"), 2);
  call(3, "test/trap");
  ASSERT_EQ(ended().kind, ProgramEnd::Kind::crash);
  start("echo.wasm");
  handshake();
  call(2, "test/echo", 1);
  EXPECT_EQ(result(2).at("calls"), 2);
}

struct Refused {
  const char* module;
  const char* reason;
};

class WasmRefusal : public WasmSandbox, public ::testing::WithParamInterface<Refused> {};

TEST_P(WasmRefusal, IsRefusedBeforeItRunsWithTheReason) {
  start(GetParam().module);
  const auto& end = ended();
  EXPECT_EQ(end.kind, ProgramEnd::Kind::refusal);
  EXPECT_EQ(end.reason, GetParam().reason);
  EXPECT_TRUE(out_.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Modules, WasmRefusal,
    ::testing::Values(
        Refused{"shared_memory.wasm", "its module has a shared memory, which the sandbox refuses"},
        Refused{"memory64.wasm",
                "its module has a 64-bit memory (memory64), which the sandbox refuses"},
        Refused{"forbidden_import.wasm",
                "its module imports (\"wasi_snapshot_preview1\", \"path_open\"), which the "
                "sandbox does not serve: only its WASI subset and escouade.call "
                "(docs/sandbox.md)"},
        Refused{"initial_too_large.wasm",
                "its module asks for 125 MB of memory at its start, past the limit of 64 MB"},
        Refused{"no_start.wasm",
                "its module exports no function \"_start\": a run.wasm plugin is a WASI command "
                "(a main, built with --target=wasm32-wasi)"}),
    [](const ::testing::TestParamInfo<Refused>& p) {
      return fs::path(p.param.module).stem().string();
    });

}  // namespace
}  // namespace escouade::sandbox
