// A SandboxProgram running run.wasm modules with the real engine: echo.wasm (C, wasi-libc) and
// hostile modules from .wat (tests/fixtures/sandbox/wasm/, built by the build into
// ESCOUADE_WASM_FIXTURES). The limits are the spec's own; no assertion is timed: the waits are
// only safety nets.

#include "sandbox/channel.hpp"
#include "sandbox/sandbox_test_fixture.hpp"

namespace escouade::sandbox {
namespace {

const fs::path kModules = ESCOUADE_WASM_FIXTURES;

class WasmSandbox : public Sandbox {
 protected:
  // Starts `module` (under the wasm fixtures) as a run.wasm plugin.
  void start(const std::string& module, runtime::ProgramLimits limits = {}) {
    runtime::ProgramSpec spec;
    spec.limits = limits;
    spec.plugin_id = "dev.test.wasm";
    spec.kind = runtime::RunKind::wasm;
    spec.folder = kModules;
    spec.module = kModules / module;
    ASSERT_TRUE(fs::exists(spec.module)) << spec.module;
    Sandbox::start(spec);
  }
  // The modules read their params as an object.
  void call(int id, std::string_view method, json::value params = json::object{}) {
    Sandbox::call(id, method, std::move(params));
  }
  void handshake() {
    call(1, "initialize", json::object{{"protocolVersion", 1}});
    ASSERT_EQ(result(1).at("protocolVersion"), 1);
  }
};

TEST_F(WasmSandbox, AGoodPluginAnswersItsCallsAndKeepsItsState) {
  start("echo.wasm");
  EXPECT_EQ(program_->describe(), "echo.wasm in the sandbox");
  handshake();
  EXPECT_TRUE(in_a_helper());
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
  start("echo.wasm");  // wasm-ld wrote no maximum: the sandbox set one
  handshake();
  call(2, "test/grow");
  auto g = result(2);
  EXPECT_EQ(g.at("pages"), 896);  // 56 MB, seven eighths of 64: memory.grow answered -1 there
  EXPECT_GT(g.at("grown").as_int64(), 0);
  call(3, "test/echo", 1);
  const json::value echo = result(3);  // and it runs on
  ASSERT_TRUE(echo.is_object()) << (end_ ? end_->reason : "it did not end");
  EXPECT_EQ(echo.at("echo"), 1);
}

// The host keeps the memory's buffer between calls, and takes the new one after a grow: an
// answer written from pages grown just before goes out whole, and a call after it still works.
TEST_F(WasmSandbox, TheHostSeesTheMemoryAsItIsAfterAGrow) {
  start("echo.wasm");
  handshake();
  call(2, "test/echo", 1);
  ASSERT_EQ(result(2).at("echo"), 1);  // the buffer as it was, kept
  call(3, "test/growwrite");
  const json::value grown = result(3);
  ASSERT_TRUE(grown.is_object()) << grown;
  EXPECT_GE(grown.at("at").as_int64(), 2 * 65536);
  call(4, "test/growwrite");
  EXPECT_EQ(result(4).at("at").as_int64(), grown.at("at").as_int64() + 2 * 65536);
  call(5, "test/echo", 5);
  EXPECT_EQ(result(5).at("echo"), 5);
}

TEST_F(WasmSandbox, GrowingPastTheLimitFailsInAModuleWithNoMaximumOrOneTooLarge) {
  start("grow_no_max.wasm");
  EXPECT_EQ(ended().reason, "its instance exited with code 896");
  start("grow_max_too_large.wasm");
  EXPECT_EQ(ended().reason, "its instance exited with code 896");
}

// Its linear memory and what the sandbox holds for it (here the 5 MiB request of an
// escouade.call, parsed and written on its thread) count against the one limit of 64 MB.
TEST_F(WasmSandbox, ItsLinearMemoryCountsWithWhatTheSandboxHoldsForIt) {
  if (!helpers_account())
    GTEST_SKIP() << "built with AddressSanitizer: the sandbox's allocations are not charged";
  start("echo.wasm");
  handshake();
  call(2, "test/heavycall", json::object{{"grow", false}});
  send(json::object{{"jsonrpc", "2.0"}, {"id", "escouade.call/1"}, {"result", 1}});
  const json::value small = result(2);  // a few MB of memory and a 5 MiB call: well within
  ASSERT_TRUE(small.is_object()) << (end_ ? end_->reason : "no answer");
  EXPECT_EQ(small.at("code"), 0);
  call(3, "test/heavycall", json::object{{"grow", true}});  // 56 MB, then the call
  EXPECT_EQ(ended().reason, "its instance ran past 64 MB of memory: Escouade stopped it");
  EXPECT_FALSE(answer(3));
}

// While escouade.call waits for its answer, the lines that come stay in its input under the
// input's bound: past 4 MiB, notifications are dropped as they would be while it computes,
// and those kept are read after, in order.
TEST_F(WasmSandbox, TheLinesThatComeWhileEscouadeCallWaitsAreBounded) {
  start("echo.wasm");
  handshake();
  call(2, "test/call", json::object{{"q", 1}});
  ASSERT_TRUE(line_where(
      [](const json::object& o) { return o.contains("id") && o.at("id") == "escouade.call/1"; }));
  const std::string fact = json::serialize(json::object{
                               {"jsonrpc", "2.0"},
                               {"method", "events/fact"},
                               {"params", json::object{{"pad", std::string(64 * 1024, 'x')}}}}) +
                           "\n";
  constexpr int kFacts = 100;  // 6.4 MB
  for (int i = 0; i < kFacts; ++i)
    program_->write(fact, proto::Delivery::droppable);
  EXPECT_TRUE(run_until([&] { return !full_.empty(); }));
  send(json::object{{"jsonrpc", "2.0"}, {"id", "escouade.call/1"}, {"result", 1}});
  send(json::object{{"jsonrpc", "2.0"}, {"id", "escouade.call/2"}, {"result", 2}});
  const json::value r = result(2);
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r.at("code"), 0);
  EXPECT_EQ(r.at("answer"), 1);
  call(3, "test/echo", 3);
  const json::value echo = result(3);
  ASSERT_TRUE(echo.is_object());
  const auto facts = echo.at("facts").as_int64();
  EXPECT_GT(facts, 0);
  EXPECT_LT(facts, kFacts) << "some were dropped";
  EXPECT_EQ(full_.size(), 1u) << "the host heard once that its input was full";
  EXPECT_LE(facts * static_cast<std::int64_t>(fact.size()),
            static_cast<std::int64_t>(Channel::kInputBacklog));
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
  // The end names the line whose turn it was, for whoever must say what caused it.
  EXPECT_NE(ended().turn.find(R"("method":"test/spin")"), std::string::npos) << ended().turn;
  EXPECT_NE(ended().turn.find(R"("id":2)"), std::string::npos) << ended().turn;
  EXPECT_EQ(ended().turn.back(), '}') << "its line, without its line break";
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

// Each instance is a helper of its own, its module compiled there (SpiderMonkey 102 cannot keep
// compiled wasm across processes): a restart is a new process, with nothing of the old instance.
TEST_F(WasmSandbox, ARestartIsANewInstanceInANewHelper) {
  start("echo.wasm");
  handshake();
  call(2, "test/echo", 1);
  EXPECT_EQ(result(2).at("calls"), 2);
  const auto first = program_->pid();
  ASSERT_TRUE(first);
  call(3, "test/trap");
  ASSERT_EQ(ended().kind, ProgramEnd::Kind::crash);
  start("echo.wasm");
  handshake();
  call(2, "test/echo", 1);
  EXPECT_EQ(result(2).at("calls"), 2);
  ASSERT_TRUE(program_->pid());
  EXPECT_NE(*program_->pid(), *first);
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
        Refused{"wrong_signature.wasm",
                "its module imports (\"wasi_snapshot_preview1\", \"fd_write\") as (i32, i32) -> "
                "i32, but the sandbox serves it as (i32, i32, i32, i32) -> i32"},
        Refused{"initial_too_large.wasm",
                "its module asks for 125 MB of memory at its start, past the 56 MB its linear "
                "memory may have"},
        Refused{"no_start.wasm",
                "its module exports no function \"_start\": a run.wasm plugin is a WASI command "
                "(a main, built with --target=wasm32-wasi)"}),
    [](const ::testing::TestParamInfo<Refused>& p) {
      return fs::path(p.param.module).stem().string();
    });

}  // namespace
}  // namespace escouade::sandbox
