#include "services/bind.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace escouade::services {
namespace {

using Families = std::vector<std::string>;

// The table of services by kind of run: every plugin that runs is served its secrets, settings,
// own files, log, the agents' files and its programs (the SDKs give one API for both kinds); a
// sandboxed one its timers and its network too (a process has its own); one with nothing to
// run, nothing.
TEST(ServiceTable, EachKindOfRunIsServedItsFamilies) {
  EXPECT_EQ(service_families(manifest::RunKind::command),
            (Families{"secrets", "settings", "files", "log", "fs", "proc"}));
  EXPECT_EQ(service_families(manifest::RunKind::js),
            (Families{"secrets", "settings", "files", "log", "timer", "net", "ws", "fs", "proc"}));
  EXPECT_EQ(service_families(manifest::RunKind::wasm), service_families(manifest::RunKind::js));
  EXPECT_TRUE(service_families(manifest::RunKind::none).empty());
}

}  // namespace
}  // namespace escouade::services
