// How the Plugin keeps its memory from message to message (plugin.hpp, kArenaBytes): each
// message run() reads is parsed into one arena emptied before the next, and its answer is
// written straight from its result. None of it shows: the bytes written are those of the JSON
// the SDK built before, a message of any size is served, and what a handler keeps outlives its
// message.

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>
#include <vector>

#include "escouade/plugin.hpp"
#include "scripted_host.hpp"

namespace {

namespace json = boost::json;
using escouade::testing::decide_params;
using escouade::testing::fact;
using escouade::testing::notification;
using escouade::testing::request;
using escouade::testing::ScriptedHost;

// The line of an answer as the SDK wrote it when it built the answer's JSON and serialized it.
std::string result_line(const json::value& id, const json::value& result) {
  return json::serialize(json::object{{"jsonrpc", "2.0"}, {"id", id}, {"result", result}});
}

std::string error_line(const json::value& id, int code, std::string_view message) {
  return json::serialize(json::object{
      {"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}});
}

// A Decision's JSON: an empty message is none.
json::value verdict(std::string_view decision, std::string_view message) {
  json::object v{{"decision", decision}};
  if (!message.empty()) v["message"] = message;
  return v;
}

// A plugin whose decision refuses with the command as its message, and an untyped echo.
void serve_echoes(escouade::Plugin& p) {
  p.on_decide([](const escouade::DecideParams& d, escouade::Context&) {
    const auto* command = d.request.input ? d.request.input->if_contains("command") : nullptr;
    return escouade::deny(command ? std::string(command->as_string()) : std::string());
  });
  p.on("custom/echo",
       [](const json::value& params, escouade::Context&) -> escouade::Result<json::value> {
         return params;
       });
  p.on("custom/fail",
       [](const json::value& params, escouade::Context&) -> escouade::Result<json::value> {
         return escouade::Error(-32050, std::string(params.as_string()));
       });
}

// `n` characters of text that needs escaping here and there.
std::string text_of(std::size_t n, char seed) {
  std::string s;
  for (std::size_t i = 0; i < n; ++i) {
    switch (i % 41) {
      case 7:
        s += '"';
        break;
      case 13:
        s += '\\';
        break;
      case 19:
        s += '\n';
        break;
      case 23:
        s += '\x01';
        break;
      default:
        s += static_cast<char>('a' + (seed + i) % 26);
    }
  }
  return s;
}

TEST(PluginMemory, AnswersAreTheBytesOfTheirJson) {
  ScriptedHost host;
  const std::string odd = "ls \"a b\"\n\t\x01 caf\xc3\xa9 \xe2\x82\xac / \\";
  host.send(request(2, "permissions/decide", decide_params("rm -rf /")));
  host.send(request("d-3", "permissions/decide", decide_params(odd)));
  host.send(request(4, "custom/fail", json::value(odd)));
  host.send(request(5, "custom/none", nullptr));
  host.input.push_back("{not json");
  host.send(json::array{request(6, "permissions/decide", decide_params("ls")),
                        notification("custom/unheard", nullptr),
                        request(7, "custom/none", nullptr)});
  host.send(json::object{{"jsonrpc", "1.0"}, {"id", 8}, {"method", "x"}});
  const json::value nested = json::parse(R"({"a":[1,-2,3.5,true,null,{"b":"c"}],"d":{}})");
  host.send(request(9, "custom/echo", nested));
  host.send(request(nullptr, "custom/echo", 18446744073709551615ull));
  host.send(json::array{});
  host.send(request(10, "permissions/decide", nullptr));
  escouade::Plugin p{"dev.test.sdk"};
  serve_echoes(p);
  p.run(host);

  json::error_code ec;
  json::parse("{not json", ec);
  const std::vector<std::string> want{
      result_line(2, verdict("deny", "rm -rf /")),
      result_line("d-3", verdict("deny", odd)),
      error_line(4, -32050, odd),
      error_line(5, -32601, "custom/none: not a method of dev.test.sdk"),
      error_line(nullptr, -32700, "parse error: " + ec.message()),
      json::serialize(json::array{
          json::parse(result_line(6, verdict("deny", "ls"))),
          json::parse(error_line(7, -32601, "custom/none: not a method of dev.test.sdk"))}),
      error_line(8, -32600, "not a JSON-RPC 2.0 request"),
      result_line(9, nested),
      result_line(nullptr, 18446744073709551615ull),
      error_line(nullptr, -32600, "an empty batch"),
      error_line(10, -32602, "params: expected an object, got null"),
  };
  EXPECT_EQ(host.output, want);
}

// Lines far past the arena's first block (and past what the plugin keeps of a line's memory),
// between small ones: each is answered whole, and the small ones after it as before it.
TEST(PluginMemory, AMessageLargerThanTheArenaIsServedWhole) {
  ScriptedHost host;
  const std::vector<std::size_t> sizes{5, 20000, 100, 3 * 1024 * 1024, 0, 70000, 12};
  for (std::size_t i = 0; i < sizes.size(); ++i)
    host.send(request(static_cast<std::int64_t>(i), "permissions/decide",
                      decide_params(text_of(sizes[i], static_cast<char>(i)))));
  // An object of many members (its table, keys and strings all in the arena), echoed.
  json::object wide;
  for (int i = 0; i < 5000; ++i)
    wide["key-" + std::to_string(i)] = text_of(static_cast<std::size_t>(i % 50), 'k');
  host.send(request(100, "custom/echo", wide));
  host.send(request(101, "permissions/decide", decide_params("git status")));
  escouade::Plugin p{"dev.test.sdk"};
  serve_echoes(p);
  p.run(host);

  ASSERT_EQ(host.output.size(), sizes.size() + 2);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_EQ(host.output[i], result_line(static_cast<std::int64_t>(i),
                                          verdict("deny", text_of(sizes[i], static_cast<char>(i)))))
        << "message " << i << " of " << sizes[i] << " bytes";
  }
  EXPECT_EQ(host.output[sizes.size()], result_line(100, wide));
  EXPECT_EQ(host.output[sizes.size() + 1], result_line(101, verdict("deny", "git status")));
}

// Thousands of messages of changing sizes through the same arena: each answer is its own.
TEST(PluginMemory, ManyMessagesInARowAreEachAnsweredAsAlone) {
  ScriptedHost host;
  constexpr int kMessages = 3000;
  auto command = [](int i) {
    return text_of(static_cast<std::size_t>(i % 11) * 700, static_cast<char>(i));
  };
  for (int i = 0; i < kMessages; ++i) {
    if (i % 3 == 2)
      host.send(request(i, "custom/echo", json::object{{"n", i}, {"text", command(i)}}));
    else
      host.send(request(i, "permissions/decide", decide_params(command(i))));
  }
  escouade::Plugin p{"dev.test.sdk"};
  serve_echoes(p);
  p.run(host);

  ASSERT_EQ(host.output.size(), static_cast<std::size_t>(kMessages));
  for (int i = 0; i < kMessages; ++i) {
    const std::string want = i % 3 == 2
                                 ? result_line(i, json::object{{"n", i}, {"text", command(i)}})
                                 : result_line(i, verdict("deny", command(i)));
    ASSERT_EQ(host.output[static_cast<std::size_t>(i)], want) << "message " << i;
  }
}

// What untyped handlers and the typed ones' params keep (copies of what they were given, made
// the plain C++ way) is still whole after the messages that follow have reused the arena.
TEST(PluginMemory, WhatAHandlerKeepsOutlivesItsMessage) {
  ScriptedHost host;
  const json::value first = json::parse(R"({"list":["one","two three four five six"],"n":7})");
  host.send(request(1, "custom/keep", first));
  host.send(notification("custom/note", json::value("a note longer than a small string")));
  json::object new_fact = fact("shiny.new", 3).as_object();
  new_fact["extra"] = json::object{{"nested", "a value longer than a small string"}};
  host.send(notification("events/fact", new_fact));
  host.send(request(2, "permissions/decide", decide_params("cat a-file-with-a-long-name.txt")));
  for (int i = 0; i < 50; ++i)
    host.send(request(100 + i, "permissions/decide", decide_params(text_of(4000, 'z'))));
  std::vector<json::value> kept;
  std::vector<json::object> facts;
  std::vector<escouade::DecideParams> decisions;
  escouade::Plugin p{"dev.test.sdk"};
  p.on("custom/keep",
       [&](const json::value& params, escouade::Context&) -> escouade::Result<json::value> {
         kept.push_back(params);
         return nullptr;
       });
  p.on_notification("custom/note",
                    [&](const json::value& params, escouade::Context&) { kept.push_back(params); });
  p.on_other_fact([&](const json::object& f, escouade::Context&) { facts.push_back(f); });
  p.on_decide([&](const escouade::DecideParams& d, escouade::Context&) {
    decisions.push_back(d);
    return escouade::ask();
  });
  p.run(host);

  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[0], first);
  EXPECT_EQ(kept[1], "a note longer than a small string");
  ASSERT_EQ(facts.size(), 1u);
  EXPECT_EQ(facts[0], new_fact);
  ASSERT_EQ(decisions.size(), 51u);
  EXPECT_EQ(json::value(*decisions[0].request.input),
            json::parse(R"({"command":"cat a-file-with-a-long-name.txt"})"));
  EXPECT_EQ(decisions[0].project.name, "Project One");
}

}  // namespace
