// The SDK's Plugin driven through an in-memory Escouade (scripted_host.hpp).

#include "escouade/plugin.hpp"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>
#include <vector>

#include "scripted_host.hpp"

namespace {

namespace json = boost::json;
using escouade::testing::answer;
using escouade::testing::decide_params;
using escouade::testing::fact;
using escouade::testing::initialize;
using escouade::testing::notification;
using escouade::testing::request;
using escouade::testing::ScriptedHost;

// The reply whose id is `id` among the lines written (batches included), or null.
json::value reply_to(const ScriptedHost& host, const json::value& id) {
  for (const auto& line : host.parsed()) {
    if (const auto* batch = line.if_array()) {
      for (const auto& m : *batch) {
        if (m.at("id") == id) return m;
      }
    } else if (line.as_object().contains("id") && !line.as_object().contains("method") &&
               line.at("id") == id) {
      return line;
    }
  }
  return nullptr;
}

int index_of_reply(const ScriptedHost& host, const json::value& id) {
  const auto lines = host.parsed();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto& o = lines[i].as_object();
    if (!o.contains("method") && o.contains("id") && o.at("id") == id) return static_cast<int>(i);
  }
  return -1;
}

TEST(Plugin, AnswersTheHandshakeWithItsVersionAndBatchThenRunsOnStart) {
  ScriptedHost host;
  host.send(initialize());
  escouade::Plugin p{"dev.test.sdk"};
  p.on_start([](escouade::Context& c) {
    c.log(escouade::Level::info, "ready in " + *c.initialize().lang);
  });
  EXPECT_EQ(p.run(host), 0);
  ASSERT_EQ(host.output.size(), 2u);
  EXPECT_EQ(
      json::parse(host.output[0]),
      json::parse(
          R"({"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"capabilities":{"batch":true}}})"));
  EXPECT_EQ(
      json::parse(host.output[1]),
      json::parse(
          R"({"jsonrpc":"2.0","method":"log","params":{"level":"info","message":"ready in en"}})"));
  EXPECT_EQ(p.initialize_params().escouade.version, "2.1.1");
  EXPECT_TRUE(host.flushed);
}

TEST(Plugin, DispatchesDecideAndFactsToTypedHandlers) {
  ScriptedHost host;
  host.send(initialize());
  host.send(request(2, "permissions/decide", decide_params("rm -rf /")));
  json::object with_unknown = fact("ticket.column", 7).as_object();
  with_unknown["shiny"] = "new";
  host.send(notification("events/fact", with_unknown));
  escouade::Plugin p{"dev.test.sdk"};
  std::vector<escouade::Fact> facts;
  p.on_decide([](const escouade::DecideParams& d, escouade::Context&) {
    const auto* command = d.request.input ? d.request.input->if_contains("command") : nullptr;
    if (command && command->as_string() == "rm -rf /") return escouade::deny("never rm -rf");
    return escouade::ask();
  });
  p.on_fact([&](const escouade::Fact& f, escouade::Context&) { facts.push_back(f); });
  p.run(host);
  EXPECT_EQ(reply_to(host, 2).at("result"),
            json::parse(R"({"decision":"deny","message":"never rm -rf"})"));
  ASSERT_EQ(facts.size(), 1u);
  EXPECT_EQ(facts[0].name, escouade::FactName::ticket_column);
  EXPECT_EQ(facts[0].seq, 7);
  EXPECT_EQ(facts[0].project->id, "p1");
  EXPECT_EQ(facts[0].unknown.at("shiny"), "new");
}

TEST(Plugin, AnswersUnknownMethodsWithMethodNotFound) {
  ScriptedHost host;
  host.send(request(5, "test/nothing", nullptr));
  host.send(notification("test/nothing-either", nullptr));
  escouade::Plugin p{"dev.test.sdk"};
  p.run(host);
  ASSERT_EQ(host.output.size(), 1u);
  const auto r = json::parse(host.output[0]);
  EXPECT_EQ(r.at("id"), 5);
  EXPECT_EQ(r.at("error").at("code"), -32601);
  EXPECT_NE(std::string(r.at("error").at("message").as_string()).find("test/nothing"),
            std::string::npos);
}

TEST(Plugin, AnswersParamsThatDoNotHoldWithInvalidParamsNamingTheField) {
  ScriptedHost host;
  json::value wrong_kind = decide_params("ls");
  wrong_kind.at("request").as_object()["kind"] = 12;
  host.send(request(2, "permissions/decide", wrong_kind));
  json::value no_project = decide_params("ls");
  no_project.as_object().erase("project");
  host.send(request(3, "permissions/decide", no_project));
  host.send(request(4, "permissions/decide", nullptr));
  escouade::Plugin p{"dev.test.sdk"};
  int calls = 0;
  p.on_decide([&](const escouade::DecideParams&, escouade::Context&) {
    ++calls;
    return escouade::allow();
  });
  p.run(host);
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(
      reply_to(host, 2).at("error"),
      json::parse(
          R"({"code":-32602,"message":"params.request.kind: expected a string, got an integer"})"));
  EXPECT_EQ(
      reply_to(host, 3).at("error"),
      json::parse(R"({"code":-32602,"message":"params.project: required field is missing"})"));
  EXPECT_EQ(reply_to(host, 4).at("error").at("message"), "params: expected an object, got null");
}

TEST(Plugin, AnUntypedHandlerAnswersItsResultOrItsError) {
  ScriptedHost host;
  host.send(request(2, "custom/echo", json::parse(R"({"a":1})")));
  host.send(request("s-3", "custom/fail", nullptr));
  escouade::Plugin p{"dev.test.sdk"};
  p.on("custom/echo",
       [](const json::value& params, escouade::Context&) -> escouade::Result<json::value> {
         return params;
       });
  p.on("custom/fail", [](const json::value&, escouade::Context&) -> escouade::Result<json::value> {
    return escouade::Error(-32050, "not today");
  });
  p.run(host);
  EXPECT_EQ(reply_to(host, 2).at("result"), json::parse(R"({"a":1})"));
  EXPECT_EQ(reply_to(host, "s-3").at("error"),
            json::parse(R"({"code":-32050,"message":"not today"})"));
}

TEST(Plugin, AnswersABatchWithOneBatchAndNothingForItsNotifications) {
  ScriptedHost host;
  json::array batch{request(2, "permissions/decide", decide_params("ls")),
                    notification("events/fact", fact("agent.status", 1)),
                    request(3, "test/unknown", nullptr)};
  host.send(batch);
  host.send(json::array{notification("events/fact", fact("agent.status", 2))});
  escouade::Plugin p{"dev.test.sdk"};
  int facts = 0;
  p.on_decide(
      [](const escouade::DecideParams&, escouade::Context&) { return escouade::allow("reads"); });
  p.on_fact([&](const escouade::Fact&, escouade::Context&) { ++facts; });
  p.run(host);
  ASSERT_EQ(host.output.size(), 1u) << "a batch of notifications gets no answer";
  const auto replies = json::parse(host.output[0]);
  ASSERT_TRUE(replies.is_array());
  ASSERT_EQ(replies.as_array().size(), 2u);
  EXPECT_EQ(reply_to(host, 2).at("result").at("decision"), "allow");
  EXPECT_EQ(reply_to(host, 3).at("error").at("code"), -32601);
  EXPECT_EQ(facts, 2);
}

TEST(Plugin, CallsEscouadeAndQueuesWhatArrivesWhileItWaits) {
  ScriptedHost host;
  host.send(initialize());
  host.send(request(2, "custom/rules", nullptr));
  std::vector<std::string> order;
  // Escouade answers files/read only after sending a request and, in one batch, the answer
  // with a fact; the secret comes back as an error.
  host.on_write = [](ScriptedHost& h, const json::value& v) {
    const auto* o = v.if_object();
    if (!o || !o->contains("method")) return;
    if (o->at("method") == "files/read") {
      h.send(request(3, "custom/second", nullptr));
      h.send(json::array{notification("events/fact", fact("turn.ended", 9)),
                         answer(o->at("id"), "{\"deny\":[\"rm -rf\"]}")});
    } else if (o->at("method") == "secrets/get") {
      h.send(json::object{
          {"jsonrpc", "2.0"},
          {"id", o->at("id")},
          {"error",
           {{"code", -32001}, {"message", "secrets/get \"x\": not a key of dev.test.sdk"}}}});
    }
  };
  escouade::Plugin p{"dev.test.sdk"};
  p.on("custom/rules",
       [&](const json::value&, escouade::Context& c) -> escouade::Result<json::value> {
         order.push_back("rules start");
         auto text = c.file("rules.json");
         if (!text) return text.error();
         order.push_back("rules end");
         return json::value(*text);
       });
  p.on("custom/second",
       [&](const json::value&, escouade::Context& c) -> escouade::Result<json::value> {
         order.push_back("second");
         auto secret = c.secret("x");
         EXPECT_FALSE(secret.ok());
         EXPECT_EQ(secret.error().code, -32001);
         return json::value(secret.error().message);
       });
  p.on_fact([&](const escouade::Fact& f, escouade::Context&) {
    order.push_back("fact " + std::to_string(f.seq));
  });
  p.run(host);
  EXPECT_EQ(order, (std::vector<std::string>{"rules start", "rules end", "second", "fact 9"}));
  EXPECT_EQ(reply_to(host, 2).at("result"), "{\"deny\":[\"rm -rf\"]}");
  EXPECT_EQ(reply_to(host, 3).at("result"), "secrets/get \"x\": not a key of dev.test.sdk");
  EXPECT_LT(index_of_reply(host, 2), index_of_reply(host, 3));
}

TEST(Plugin, ReadsTypedAnswersOfSecretsAndSettings) {
  ScriptedHost host;
  host.send(request(2, "custom/go", nullptr));
  json::value settings_params;
  host.on_write = [&](ScriptedHost& h, const json::value& v) {
    const auto* o = v.if_object();
    if (!o || !o->contains("method")) return;
    if (o->at("method") == "secrets/get") h.send(answer(o->at("id"), nullptr));
    if (o->at("method") == "settings/get") {
      settings_params = o->at("params");
      h.send(answer(o->at("id"), json::object{{"channel", "#ops"}}));
    }
    if (o->at("method") == "files/read") h.send(answer(o->at("id"), 42));
  };
  escouade::Plugin p{"dev.test.sdk"};
  p.on("custom/go", [](const json::value&, escouade::Context& c) -> escouade::Result<json::value> {
    auto token = c.secret("token");
    EXPECT_TRUE(token.ok());
    EXPECT_EQ(*token, std::nullopt);
    auto settings = c.settings("p1");
    EXPECT_TRUE(settings.ok());
    EXPECT_EQ(settings->at("channel"), "#ops");
    auto file = c.file("rules.json");
    EXPECT_FALSE(file.ok());
    return json::value(file.error().message);
  });
  p.run(host);
  EXPECT_EQ(settings_params, json::parse(R"({"project":"p1"})"));
  EXPECT_EQ(reply_to(host, 2).at("result"),
            "files/read: result: expected a string, got an integer");
}

TEST(Plugin, AnswersShutdownAfterItsHandlerAndStops) {
  ScriptedHost host;
  host.send(initialize());
  host.send(request(2, "shutdown", nullptr));
  host.send(request(3, "test/after", nullptr));
  escouade::Plugin p{"dev.test.sdk"};
  p.on_shutdown([](escouade::Context& c) { c.log(escouade::Level::info, "bye"); });
  EXPECT_EQ(p.run(host), 0);
  ASSERT_EQ(host.output.size(), 3u);
  EXPECT_EQ(json::parse(host.output[1]).at("params").at("message"), "bye");
  EXPECT_EQ(json::parse(host.output[2]), json::parse(R"({"jsonrpc":"2.0","id":2,"result":null})"));
  EXPECT_TRUE(host.flushed);
}

TEST(Plugin, ShutdownWithoutParamsIsAnswered) {
  ScriptedHost host;
  host.input.push_back(R"({"jsonrpc":"2.0","id":9,"method":"shutdown"})");
  escouade::Plugin p{"dev.test.sdk"};
  p.run(host);
  ASSERT_EQ(host.output.size(), 1u);
  EXPECT_EQ(json::parse(host.output[0]), json::parse(R"({"jsonrpc":"2.0","id":9,"result":null})"));
}

TEST(Plugin, AnswersALineThatIsNotJsonAndGoesOn) {
  ScriptedHost host;
  host.input.push_back("this is not json");
  host.input.push_back(R"({"id":4,"method":"x"})");
  host.send(request(5, "custom/ok", nullptr));
  escouade::Plugin p{"dev.test.sdk"};
  p.on("custom/ok", [](const json::value&, escouade::Context&) -> escouade::Result<json::value> {
    return json::value(true);
  });
  p.run(host);
  ASSERT_EQ(host.output.size(), 3u);
  EXPECT_EQ(json::parse(host.output[0]).at("error").at("code"), -32700);
  EXPECT_EQ(json::parse(host.output[0]).at("id"), nullptr);
  EXPECT_EQ(json::parse(host.output[1]).at("error").at("code"), -32600);
  EXPECT_EQ(json::parse(host.output[1]).at("id"), 4);
  EXPECT_EQ(json::parse(host.output[2]).at("result"), true);
}

TEST(Plugin, ACallFailsWhenTheInputEndsBeforeItsAnswerAndOnShutdownStillRuns) {
  ScriptedHost host;
  host.send(request(2, "custom/wait", nullptr));
  escouade::Plugin p{"dev.test.sdk"};
  std::optional<escouade::Error> got;
  bool shut = false;
  p.on("custom/wait",
       [&](const json::value&, escouade::Context& c) -> escouade::Result<json::value> {
         auto s = c.secret("token");
         if (!s) got = s.error();
         return json::value(nullptr);
       });
  p.on_shutdown([&](escouade::Context&) { shut = true; });
  EXPECT_EQ(p.run(host), 0);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->code, static_cast<int>(escouade::ErrorCode::failed));
  EXPECT_TRUE(shut);
}

TEST(Plugin, AFactThatDoesNotHoldIsLoggedNotAnswered) {
  ScriptedHost host;
  json::value bad = fact("agent.status", 1);
  bad.as_object().erase("seq");
  host.send(notification("events/fact", bad));
  escouade::Plugin p{"dev.test.sdk"};
  int facts = 0;
  p.on_fact([&](const escouade::Fact&, escouade::Context&) { ++facts; });
  p.run(host);
  EXPECT_EQ(facts, 0);
  ASSERT_EQ(host.output.size(), 1u);
  const auto log = json::parse(host.output[0]);
  EXPECT_EQ(log.at("method"), "log");
  EXPECT_EQ(log.at("params").at("level"), "warn");
  EXPECT_EQ(log.at("params").at("message"),
            "events/fact: ignored: params.seq: required field is missing");
}

// Forward compatible: a fact named after this SDK was built reaches the catch-all as it came,
// and without one it is passed over without a word; the known facts still reach on_fact.
TEST(Plugin, AFactOfANewNameGoesToTheCatchAllNotToAWarning) {
  for (const bool with_catch_all : {true, false}) {
    ScriptedHost host;
    json::value future = fact("agent.status", 1);
    future.as_object()["name"] = "agent.teleported";
    future.as_object()["data"] = json::object{{"where", "mars"}};
    host.send(notification("events/fact", future));
    host.send(notification("events/fact", fact("agent.status", 2)));
    escouade::Plugin p{"dev.test.sdk"};
    std::vector<std::int64_t> known;
    std::vector<json::object> others;
    p.on_fact([&](const escouade::Fact& f, escouade::Context&) { known.push_back(f.seq); });
    if (with_catch_all)
      p.on_other_fact([&](const json::object& f, escouade::Context&) { others.push_back(f); });
    EXPECT_EQ(p.run(host), 0);
    EXPECT_EQ(known, std::vector<std::int64_t>{2});
    if (with_catch_all) {
      ASSERT_EQ(others.size(), 1u);
      EXPECT_EQ(others[0].at("name"), "agent.teleported");
      EXPECT_EQ(others[0].at("data").at("where"), "mars");
    }
    EXPECT_TRUE(host.output.empty()) << host.output.front();  // no warning logged
  }
}

#ifdef ESCOUADE_SDK_EXCEPTIONS
TEST(Plugin, AnExceptionFromAHandlerAnswersInternalError) {
  ScriptedHost host;
  host.send(request(2, "custom/throw", nullptr));
  escouade::Plugin p{"dev.test.sdk"};
  p.on("custom/throw", [](const json::value&, escouade::Context&) -> escouade::Result<json::value> {
    throw std::runtime_error("rules.json is broken");
  });
  p.run(host);
  EXPECT_EQ(reply_to(host, 2).at("error"),
            json::parse(R"({"code":-32603,"message":"custom/throw: rules.json is broken"})"));
}
#endif

}  // namespace

TEST(Plugin, FetchSendsNetFetchAndGivesTheBodyAsBytes) {
  ScriptedHost host;
  host.send(request(2, "custom/go", nullptr));
  std::vector<json::value> asked;
  host.on_write = [&](ScriptedHost& h, const json::value& v) {
    const auto* o = v.if_object();
    if (!o || !o->contains("method") || o->at("method") != "net/fetch") return;
    asked.push_back(o->at("params"));
    if (asked.size() == 1)
      h.send(answer(o->at("id"), json::object{{"status", 200},
                                              {"headers", json::object{{"x-a", "1"}}},
                                              {"bodyBase64", "//4AAQ=="}}));
    else
      h.send(json::object{{"jsonrpc", "2.0"},
                          {"id", o->at("id")},
                          {"error", json::object{{"code", -32003},
                                                 {"message",
                                                  "example.org is not in "
                                                  "permissions.network of dev.test.sdk"}}}});
  };
  escouade::Plugin p{"dev.test.sdk"};
  p.on("custom/go", [](const json::value&, escouade::Context& c) -> escouade::Result<json::value> {
    auto got = c.fetch("https://chat.example.com/api", "POST", {{"content-type", "text/plain"}},
                       std::string("\xff\x00", 2));
    EXPECT_TRUE(got.ok());
    EXPECT_EQ(got->status, 200);
    EXPECT_EQ(got->headers.at("x-a"), "1");
    EXPECT_EQ(got->body, std::string("\xff\xfe\x00\x01", 4));
    auto refused = c.fetch("https://example.org/");
    EXPECT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().code, -32003);
    return json::value(refused.error().message);
  });
  p.run(host);
  ASSERT_EQ(asked.size(), 2u);
  EXPECT_EQ(asked[0],
            json::parse(R"({"url":"https://chat.example.com/api","method":"POST",)"
                        R"("headers":{"content-type":"text/plain"},"bodyBase64":"/wA="})"));
  EXPECT_EQ(asked[1], json::parse(R"({"url":"https://example.org/","method":"GET"})"));
  EXPECT_EQ(reply_to(host, 2).at("result"),
            "example.org is not in permissions.network of dev.test.sdk");
}

// fs/* and proc/* through the Context: the params as the schema writes them, bytes whichever
// way they come back, and a program's output and end served to their handlers once the handler
// that started it has returned.
TEST(Plugin, FilesAndProgramsGoThroughFsAndProc) {
  ScriptedHost host;
  host.send(request(2, "custom/go", nullptr));
  std::vector<json::value> asked;
  host.on_write = [&](ScriptedHost& h, const json::value& v) {
    const auto* o = v.if_object();
    if (!o || !o->contains("method") || !o->contains("id")) return;
    const std::string method(o->at("method").as_string());
    if (method.rfind("fs/", 0) != 0 && method.rfind("proc/", 0) != 0) return;
    asked.push_back(json::object{{"method", method}, {"params", o->at("params")}});
    if (method == "fs/read") {
      h.send(answer(o->at("id"), json::object{{"dataBase64", "//4AAQ=="}}));
    } else if (method == "fs/write") {
      h.send(answer(o->at("id"), json::object{{"path", "/w/repo/notes.md"}, {"bytes", 2}}));
    } else if (method == "fs/canon") {
      h.send(answer(o->at("id"), json::object{{"path", "/w/repo/notes.md"}}));
    } else if (method == "proc/spawn") {
      // Its output may come before the answer.
      h.send(json::object{{"jsonrpc", "2.0"},
                          {"method", "proc/out"},
                          {"params", {{"proc", 7}, {"stream", "stdout"}, {"data", "?? a.txt\n"}}}});
      h.send(answer(o->at("id"), json::object{{"proc", 7}}));
      h.send(json::object{{"jsonrpc", "2.0"},
                          {"method", "proc/exit"},
                          {"params", {{"proc", 7}, {"code", nullptr}}}});
    } else {
      h.send(answer(o->at("id"), nullptr));
    }
  };
  std::vector<std::string> events;
  escouade::Plugin p{"dev.test.sdk"};
  p.serve<escouade::method::ProcOut>([&](const escouade::ProcOutParams& o, escouade::Context&) {
    events.push_back(std::string(escouade::to_string(o.stream)) + ":" + o.data);
  });
  p.serve<escouade::method::ProcExit>([&](const escouade::ProcExitParams& e, escouade::Context&) {
    events.push_back("exit:" + (e.code ? std::to_string(*e.code) : std::string("null")));
  });
  p.on("custom/go", [&](const json::value&, escouade::Context& c) -> escouade::Result<json::value> {
    const escouade::FsPath where{"a1", escouade::FsPathRoot::agent_repo, "notes.md"};
    auto bytes = c.read_file(where);
    EXPECT_TRUE(bytes.ok());
    EXPECT_EQ(*bytes, std::string("\xff\xfe\x00\x01", 4));
    auto written = c.write_file(where, std::string("\xff\x00", 2), true);
    EXPECT_TRUE(written.ok());
    EXPECT_EQ(written->path, "/w/repo/notes.md");
    EXPECT_EQ(*c.canon(where), "/w/repo/notes.md");
    escouade::ProcSpawnParams spawn;
    spawn.command = "git";
    spawn.args = std::vector<std::string>{"status", "--porcelain"};
    spawn.dir = escouade::ProcSpawnParamsDir::agent;
    spawn.agent = "a1";
    auto proc = c.spawn(spawn);
    EXPECT_TRUE(proc.ok());
    EXPECT_EQ(*proc, 7);
    EXPECT_TRUE(c.write_input(7, "x", true).ok());
    EXPECT_TRUE(c.kill(7).ok());
    EXPECT_TRUE(events.empty());  // served after this handler
    return json::value(nullptr);
  });
  p.run(host);
  ASSERT_EQ(asked.size(), 6u);
  EXPECT_EQ(asked[0], json::parse(R"({"method":"fs/read","params":)"
                                  R"({"agent":"a1","root":"agentRepo","path":"notes.md"}})"));
  EXPECT_EQ(asked[1], json::parse(R"({"method":"fs/write","params":{"agent":"a1",)"
                                  R"("root":"agentRepo","path":"notes.md","dataBase64":"/wA=",)"
                                  R"("append":true}})"));
  EXPECT_EQ(asked[3],
            json::parse(R"({"method":"proc/spawn","params":{"command":"git",)"
                        R"("args":["status","--porcelain"],"dir":"agent","agent":"a1"}})"));
  EXPECT_EQ(asked[4], json::parse(R"({"method":"proc/write","params":)"
                                  R"({"proc":7,"data":"x","close":true}})"));
  EXPECT_EQ(asked[5], json::parse(R"({"method":"proc/kill","params":{"proc":7}})"));
  EXPECT_EQ(events, (std::vector<std::string>{"stdout:?? a.txt\n", "exit:null"}));
}
