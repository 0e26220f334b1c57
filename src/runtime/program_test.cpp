#include "runtime/program.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include "runtime/memory_program.hpp"

namespace escouade::runtime {
namespace {

TEST(ProgramRouter, EachKindGoesToTheFactoryThatRunsIt) {
  boost::asio::io_context io;
  MemoryProgramFactory processes(io.get_executor());
  MemoryProgramFactory sandbox(io.get_executor());
  ProgramRouter router;
  router.route(RunKind::command, &processes);
  router.route(RunKind::js, &sandbox);
  EXPECT_TRUE(router.runs(RunKind::command));
  EXPECT_TRUE(router.runs(RunKind::js));
  EXPECT_FALSE(router.runs(RunKind::wasm));

  ProgramSpec spec;
  spec.plugin_id = "dev.test.js";
  spec.kind = RunKind::js;
  EXPECT_NE(router.make(spec), nullptr);
  EXPECT_EQ(sandbox.made().size(), 1u);
  EXPECT_TRUE(processes.made().empty());

  spec.kind = RunKind::wasm;
  EXPECT_EQ(router.make(spec), nullptr);  // no factory runs it: not runnable here
}

TEST(ProgramEnd, AProcessEndIsACrashSaidAsItsStatus) {
  const ProgramEnd end = ProgramEnd::of_process(ExitStatus{3, std::nullopt});
  EXPECT_EQ(end.kind, ProgramEnd::Kind::crash);
  EXPECT_EQ(end.reason, "exit code 3");
  EXPECT_TRUE(end.ran());
  EXPECT_FALSE(ProgramEnd::of_process(ExitStatus{}).ran());
  const ProgramEnd refused{ProgramEnd::Kind::refusal, "it imports node:child_process", {}, {}};
  EXPECT_TRUE(refused.ran());
}

}  // namespace
}  // namespace escouade::runtime
