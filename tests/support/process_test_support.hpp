#pragma once

// Helpers for platform_test: the fixture program, lines from pipes, polling with a safety
// timeout, and a test base that ends every process a test made, even when it fails.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "platform/process.hpp"

namespace escouade::platform::testing {

// How long a test waits for something that should happen at once, before it gives up. Only a
// guard against hanging: no test asserts on how fast anything is.
inline constexpr std::chrono::seconds kSafety{30};

// The path of process_fixture (see process_fixture.cpp for its modes).
std::string fixture_path();

// Reads lines from a descriptor (blocking or not), waiting at most kSafety for each.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  // The next line without its '\n'; nullopt at the end of the stream or after kSafety.
  std::optional<std::string> next();

 private:
  int fd_;
  std::string buffer_;
  bool eof_ = false;
};

// Calls `done` every few milliseconds until it is true or kSafety has passed; its last answer.
bool eventually(const std::function<bool()>& done);

// Processes still running (zombies are not) whose environment has ESCOUADE_PLUGIN_ID=<tag>.
std::vector<int> tagged_processes(const std::string& tag);

// True when `pid` no longer runs: absent from /proc, or a zombie.
bool gone(int pid);
bool is_zombie(int pid);
// For failure messages: what /proc says of a process (its stat line and wait channel).
std::string describe_process(int pid);
// The parent pid of a process, -1 when it is gone.
int parent_of(int pid);
// Where `value` is "key <int>", the int; else -1.
int field_int(const std::optional<std::string>& line, const std::string& key);

// A base for tests that start processes. Each test has its own tag, given as
// ESCOUADE_PLUGIN_ID to the processes it starts; TearDown kills every process still carrying
// it, and kills and reaps the children the test started or forked.
class ProcessTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // The host's environment with ESCOUADE_PLUGIN_ID=<tag>, plus `extra`.
  std::vector<std::string> tagged_env(const std::vector<std::string>& extra = {}) const;
  // Spawns process_fixture with `args` and the tagged environment; fails the test on error.
  Spawned start_fixture(const std::vector<std::string>& args);
  // Spawns `request` and remembers the process for TearDown.
  Result<Spawned> start(const SpawnRequest& request);
  // Forks a copy of this test process that runs `body(out_fd)` and _exits: a simulated host.
  // Returns the read end of a pipe whose write end `body` holds. The child must not use gtest.
  int fork_host(const std::function<void(int out_fd)>& body, int& host_pid);
  // Remembers a pid that is not our child (a watchdog): TearDown kills it if it still runs
  // under that name.
  void forget_later(int pid) { strays_.push_back(pid); }

  std::string tag_;

 private:
  std::vector<Spawned> spawned_;
  std::vector<int> forked_;
  std::vector<int> pipes_;
  std::vector<int> strays_;
};

}  // namespace escouade::platform::testing
