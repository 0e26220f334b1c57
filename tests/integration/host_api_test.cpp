// The host through its C++ API (what an app linking libescouade-plugins does), with real plugin
// processes: the same behaviours as through escouade-host, without the app's pipe.

#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/value_to.hpp>
#include <optional>

#include "host/host.hpp"
#include "host_answer.hpp"
#include "host_client.hpp"
#include "platform/process.hpp"
#include "runtime/process_program.hpp"
#include "support/process_test_support.hpp"

extern char** environ;

namespace escouade::testing {
namespace {

namespace asio = boost::asio;
namespace json = boost::json;

// fact() (host_client.hpp) as the generated type Host::publish takes.
proto::Fact typed_fact(std::string_view name, std::int64_t seq, std::string_view project = "p1") {
  return json::value_to<proto::Fact>(fact(name, seq, project));
}

class HostApi : public ::testing::Test {
 protected:
  HostApi() : programs_(io_.get_executor(), context_) {
    (void)platform::become_subreaper();
    host::HostConfig config;
    config.data_dir = data_.path();
    config.base_env = {"PATH=/usr/bin:/bin"};
    config.memory_limit_mb = 100;
    host_ = std::make_unique<host::Host>(
        io_.get_executor(), config, programs_,
        [this](const supervisor::Status& s) { statuses_.push_back(s); });
  }
  ~HostApi() override {
    bool closed = false;
    host_->shutdown([&] { closed = true; });
    run_until([&] { return closed; });
  }

  std::string load(const PluginSpec& spec) {
    auto loaded = host_->load(make_plugin(plugins_.path(), spec));
    EXPECT_TRUE(loaded) << loaded.error().message;
    EXPECT_TRUE(host_->enable(loaded->id, host::Project{"p1", "Project One", false, {}}));
    return loaded->id;
  }

  supervisor::Status status(const std::string& id) { return (*host_->status(id))[0]; }

  void wait_state(const std::string& id, supervisor::State state) {
    run_until([&] { return status(id).state == state; });
  }

  Result<json::value> call(const std::string& id, const std::string& method, json::value params) {
    std::optional<Result<json::value>> out;
    host_->call(id, *rpc::Outgoing::request_value(method, params), std::chrono::milliseconds(30000),
                [&](Result<host::Answer> r) { keep_answer(out, std::move(r)); });
    run_until([&] { return out.has_value(); });
    return *out;
  }

  template <class P>
  void run_until(P done) {
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!done() && std::chrono::steady_clock::now() < limit) {
      io_.restart();
      io_.run_one_for(std::chrono::milliseconds(20));
    }
    ASSERT_TRUE(done());
  }

  TempDir data_;
  TempDir plugins_;
  asio::io_context io_;
  runtime::ProcessContext context_;
  runtime::ProcessProgramFactory programs_;
  std::vector<supervisor::Status> statuses_;
  std::unique_ptr<host::Host> host_;
};

TEST_F(HostApi, ADecisionThroughTheApi) {
  auto id = load({"dev.api.guard"});
  auto deny =
      call(id, "permissions/decide",
           json::parse(R"({"request":{"id":"r","kind":"command","input":{"command":"rm -rf /"}},)"
                       R"("project":{"id":"p1","name":"Project One","private":false}})"));
  ASSERT_TRUE(deny) << deny.error().message;
  EXPECT_EQ(deny->at("decision"), "deny");
  auto st = host_->status(id);
  ASSERT_TRUE(st);
  EXPECT_EQ((*st)[0].state, supervisor::State::running);
  ASSERT_TRUE((*st)[0].pid);
}

// Only the C++ API can hand the host text that is not UTF-8: such a request is sent to no
// plugin, each plugin's part is an error that says why, and the decision is no allowance. (Its
// params are made in an arena on Host::decide's stack; what each call keeps is a copy.)
TEST_F(HostApi, ADecisionThatCannotBeEncodedIsAnErrorForEachPlugin) {
  load({"dev.api.one"});
  load({"dev.api.two"});
  const proto::DecideParams request = command_request("r", "rm \xff");
  std::optional<Result<policy::Verdict>> out;
  host_->decide(request, [&](Result<policy::Verdict> v) { out = std::move(v); });
  run_until([&] { return out.has_value(); });
  ASSERT_TRUE(*out) << (*out).error().message;
  EXPECT_EQ((*out)->decision, proto::DecisionDecision::ask);
  ASSERT_EQ((*out)->by.size(), 2u);
  for (const auto& v : (*out)->by) {
    EXPECT_EQ(v.kind, policy::Vote::Kind::error) << v.id;
    EXPECT_NE(v.reason.find("not valid UTF-8; it was not sent"), std::string::npos) << v.reason;
  }
  // Both still answer what comes next.
  EXPECT_TRUE(call("dev.api.one", "test/echo", json::object{}));
}

TEST_F(HostApi, FactsReachTheirPluginInOrder) {
  auto id = load({"dev.api.facts"});
  for (int seq = 1; seq <= 50; ++seq) {
    auto delivered = host_->publish(typed_fact("agent.status", seq));
    ASSERT_TRUE(delivered);
    EXPECT_EQ(*delivered, std::vector<std::string>{id});
  }
  auto facts = call(id, "test/facts", json::object{});
  ASSERT_TRUE(facts);
  ASSERT_EQ(facts->as_array().size(), 50u);
  for (int i = 0; i < 50; ++i)
    EXPECT_EQ(facts->at(i).as_int64(), i + 1);
  // Another project's fact does not reach it.
  auto other = host_->publish(typed_fact("agent.status", 51, "p2"));
  ASSERT_TRUE(other);
  EXPECT_TRUE(other->empty());
}

// One fact to several plugins: written once, each one that hears it gets all of it, in order
// (the last is handed the message itself, the others a copy of its line), and one between
// them that does not hear it gets none.
TEST_F(HostApi, FactsReachEveryPluginThatHearsThemWhole) {
  const auto first = load({"dev.api.first"});
  const auto deaf = load(
      {.id = "dev.api.deaf", .activation = {"event:ticket.created"}, .events = {"ticket.created"}});
  const auto last = load({"dev.api.last"});
  for (int seq = 1; seq <= 20; ++seq) {
    auto delivered = host_->publish(typed_fact("agent.status", seq));
    ASSERT_TRUE(delivered);
    EXPECT_EQ(*delivered, (std::vector<std::string>{first, last}));
  }
  for (const auto& id : {first, last}) {
    auto facts = call(id, "test/facts", json::object{});
    ASSERT_TRUE(facts) << id;
    ASSERT_EQ(facts->as_array().size(), 20u) << id;
    for (int i = 0; i < 20; ++i)
      EXPECT_EQ(facts->at(i).as_int64(), i + 1) << id;
  }
  auto none = call(deaf, "test/facts", json::object{});
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->as_array().empty());
}

// A plugin that reads slower than facts come: past its input's bound (4 MiB) the oldest facts
// are dropped, and the journal counts them; the calls made meanwhile are kept, and answered
// (protocol/delivery.hpp). What it got is in order.
TEST_F(HostApi, AFloodOfFactsLosesFactsNeverACall) {
  auto id = load({"dev.api.flood", "slow-facts"});
  ASSERT_TRUE(call(id, "test/echo", json::object{}));  // running
  proto::Fact fact = typed_fact("agent.status", 0);
  fact.data["padding"] = std::string(4096, 'x');
  constexpr int kFacts = 3000;  // 12 MB: three times the bound
  std::vector<std::optional<Result<host::Answer>>> echoes(3);
  for (int seq = 1; seq <= kFacts; ++seq) {
    fact.seq = seq;
    ASSERT_TRUE(host_->publish(fact));
    if (seq % 1000 == 0) {
      auto& out = echoes[static_cast<std::size_t>(seq / 1000 - 1)];
      host_->call(id, *rpc::Outgoing::request_value("test/echo", json::object{{"n", seq}}),
                  std::chrono::milliseconds(60000),
                  [&out](Result<host::Answer> r) { out = std::move(r); });
    }
  }
  run_until([&] {
    return std::all_of(echoes.begin(), echoes.end(), [](const auto& e) { return e.has_value(); });
  });
  for (std::size_t i = 0; i < echoes.size(); ++i) {
    ASSERT_TRUE(*echoes[i]) << echoes[i]->error().message;
    EXPECT_EQ((*echoes[i])->value.at("n"), static_cast<int>(i + 1) * 1000);
  }
  auto facts = call(id, "test/facts", json::object{});
  ASSERT_TRUE(facts);
  const auto& got = facts->as_array();
  EXPECT_LT(got.size(), static_cast<std::size_t>(kFacts)) << "some were dropped";
  EXPECT_GT(got.size(), 100u);
  for (std::size_t i = 1; i < got.size(); ++i)
    EXPECT_LT(got[i - 1].as_int64(), got[i].as_int64());
  EXPECT_EQ(got.back().as_int64(), kFacts) << "the newest are kept, the oldest go";
  const auto journal = host_->journal(id, 500);
  ASSERT_TRUE(journal);
  const auto dropped = std::find_if(journal->begin(), journal->end(), [](const std::string& l) {
    return l.find("were dropped while its input was full") != std::string::npos;
  });
  EXPECT_NE(dropped, journal->end());
}

TEST_F(HostApi, StatusChangesAreReported) {
  auto id = load({"dev.api.status", "wrong-version"});
  auto r = call(id, "test/echo", json::object{});
  EXPECT_FALSE(r);
  run_until(
      [&] { return !statuses_.empty() && statuses_.back().state == supervisor::State::stopped; });
  EXPECT_EQ(statuses_.back().reason,
            "it speaks version 2 of the protocol; this Escouade speaks version 1");
  auto journal = host_->journal(id, 500);
  ASSERT_TRUE(journal);
  EXPECT_FALSE(journal->empty());
}

TEST_F(HostApi, ACrashLoopStopsAfterFourCrashes) {
  auto id = load({"dev.api.crashy", "crash"});
  ASSERT_TRUE(host_->publish(typed_fact("agent.status", 1)));
  wait_state(id, supervisor::State::stopped);
  EXPECT_EQ(status(id).reason, "stopped after 4 crashes within 5 minutes");
  EXPECT_EQ(status(id).crashes, 4);
  ASSERT_TRUE(host_->restart(id));
  EXPECT_EQ(status(id).crashes, 0);
}

TEST_F(HostApi, AttachmentsAreGivenAgainAfterACrash) {
  auto id = load({"dev.api.attach"});
  ASSERT_TRUE(call(id, "agent/attach", json::parse(R"({"agent":"a1"})")));
  ASSERT_TRUE(call(id, "agent/attach", json::parse(R"({"agent":{"id":"a2","name":"Ada"}})")));
  EXPECT_FALSE(call(id, "test/crash", json::object{}));
  auto attached = call(id, "test/attached", json::object{});
  ASSERT_TRUE(attached) << attached.error().message;
  EXPECT_EQ(*attached, json::parse(R"(["\"a1\"","{\"id\":\"a2\",\"name\":\"Ada\"}"])"));
}

TEST_F(HostApi, PastTheMemoryLimitItIsStopped) {
  auto id = load({"dev.api.hog", "memory-hog"});
  ASSERT_TRUE(host_->publish(typed_fact("agent.status", 1)));
  wait_state(id, supervisor::State::stopped);
  EXPECT_NE(status(id).reason.find("MB of memory, past the limit of 100 MB"), std::string::npos)
      << status(id).reason;
  EXPECT_EQ(status(id).crashes, 0);
}

TEST_F(HostApi, ShutdownThenExitIsNotACrash) {
  auto id = load({"dev.api.polite"});
  auto pid = call(id, "test/env", json::object{})->at("pid").as_int64();
  bool closed = false;
  host_->shutdown([&] { closed = true; });
  run_until([&] { return closed; });
  EXPECT_EQ(status(id).state, supervisor::State::stopped);
  EXPECT_EQ(status(id).reason, "Escouade closed");
  EXPECT_EQ(status(id).crashes, 0);
  EXPECT_FALSE(process_alive(static_cast<int>(pid)));
}

// A child of the app's own, started beside the host: `argv` found on PATH; its pid, or -1.
pid_t start_own_child(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  return ::posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), environ) == 0 ? pid : -1;
}

// An app that embeds the host without making its process a subreaper receives no orphan of a
// plugin: the children of its process that the host did not start are the app's own (its agents,
// its tools). A plugin's crash, whose end looks for orphans, ends none of them and reaps none.
TEST_F(HostApi, AnAppsOwnChildrenOutliveAPluginsCrash) {
  ::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
  struct Restore {
    ~Restore() { (void)platform::become_subreaper(); }
  } restore;
  const pid_t running = start_own_child({"sleep", "30"});
  const pid_t ended = start_own_child({"false"});
  ASSERT_GT(running, 0);
  ASSERT_GT(ended, 0);
  struct EndRunning {
    pid_t pid;
    ~EndRunning() {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  } end_running{running};
  run_until([&] { return platform::testing::is_zombie(ended); });

  auto id = load({"dev.api.crashy"});
  const auto before = call(id, "test/env", json::object{});
  ASSERT_TRUE(before) << before.error().message;
  EXPECT_FALSE(call(id, "test/crash", json::object{}));
  const auto after = call(id, "test/env", json::object{});  // its crash handled, it started again
  ASSERT_TRUE(after) << after.error().message;
  EXPECT_NE(after->at("pid"), before->at("pid"));

  int status = 0;
  EXPECT_EQ(::waitpid(running, &status, WNOHANG), 0) << "the app's running child was ended";
  ASSERT_EQ(::waitpid(ended, &status, 0), ended) << "the app's ended child was reaped by the host";
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
}

TEST_F(HostApi, UnknownIdsAreRefused) {
  EXPECT_EQ(host_->restart("dev.nope").error().code, proto::ErrorCode::invalid_params);
  EXPECT_EQ(host_->status(std::string_view("dev.nope")).error().code,
            proto::ErrorCode::invalid_params);
  auto r = call("dev.nope", "test/echo", json::object{});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "no plugin dev.nope is loaded");
}

}  // namespace
}  // namespace escouade::testing
