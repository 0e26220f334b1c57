// What the host serves plugins (secrets, masking, settings, files, log, batches, and no timers
// for a process), through escouade-host with real plugin processes asking for them.

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <fstream>

#include "host_client.hpp"

namespace escouade::testing {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

// Waits for a journal line of `id` holding `text`; fails the test when none comes.
void expect_journal(HostClient& host, const std::string& id, const std::string& text) {
  EXPECT_FALSE(host.wait_journal(id, text).empty()) << id << " never journaled: " << text;
}

constexpr std::string_view kSecret = "s3cr3t-Tok\"en\\/é";
constexpr std::string_view kMask = "\u2022\u2022\u2022\u2022";

// The whole answer a plugin got when it called Escouade (test/ask).
json::value ask(HostClient& host, const std::string& id, std::string_view method,
                json::value params) {
  return unmasked(
      host.call_plugin(id, "test/ask", json::object{{"method", method}, {"params", params}}));
}

std::int64_t error_code(const json::value& answer) {
  const json::value* e = answer.as_object().if_contains("error");
  return e ? e->at("code").as_int64() : 0;
}

std::string secret_plugin(HostClient& host,
                          std::vector<std::string> secrets = {"token", "account:*"}) {
  PluginSpec spec{"dev.secrets"};
  spec.secrets = std::move(secrets);
  return host.load_and_enable(make_plugin(host.plugins_dir(), spec));
}

void set_secret(HostClient& host, const std::string& key, std::string_view value) {
  auto a = host.call("host/secrets/set",
                     json::object{{"id", "dev.secrets"}, {"key", key}, {"value", value}});
  ASSERT_TRUE(a.ok()) << a.error_message;
}

TEST(Secrets, AGrantedKeyIsGivenAndNeverJournaled) {
  HostClient host;
  const auto id = secret_plugin(host);
  set_secret(host, "token", kSecret);
  set_secret(host, "account:work", "w0rk-pass");
  EXPECT_EQ(ask(host, id, "secrets/get", json::object{{"key", "token"}}).at("result").as_string(),
            kSecret);
  EXPECT_EQ(ask(host, id, "secrets/get", json::object{{"key", "account:work"}}).at("result"),
            "w0rk-pass");
  // No secret kept under a granted key: null.
  const auto none = ask(host, id, "secrets/get", json::object{{"key", "account:home"}});
  EXPECT_TRUE(none.at("result").is_null());
  expect_journal(host, id, R"(secrets/get "token": given)");
  expect_journal(host, id, R"(secrets/get "account:home": none is kept)");
  const std::string file = host.journal_file(id);
  EXPECT_EQ(file.find("s3cr3t"), std::string::npos);
  EXPECT_EQ(file.find("w0rk-pass"), std::string::npos);
}

TEST(Secrets, KeysNotGrantedAreRefusedAndThePluginGoesOn) {
  HostClient host;
  const auto id = secret_plugin(host);
  PluginSpec other{"dev.other"};
  other.secrets = {"token"};
  host.load_and_enable(make_plugin(host.plugins_dir(), other));
  ASSERT_TRUE(host.call("host/secrets/set",
                        json::object{{"id", "dev.other"}, {"key", "token"}, {"value", "theirs"}})
                  .ok());
  for (std::string key : {"password", "plugin:dev.other:token", "plugin:dev.secrets:token", "Token",
                          "account:", "account", "tokens", ""}) {
    const auto a = ask(host, id, "secrets/get", json::object{{"key", key}});
    EXPECT_EQ(error_code(a), -32001) << key << ": " << json::serialize(a);
    expect_journal(host, id, "secrets/get " + json::serialize(json::string(key)) + ": refused");
  }
  // A key not its own is refused -32001 whatever its characters; one that account:* would take
  // in but that cannot be a key (a control character) does not hold, nor does one that is not
  // a string.
  for (std::string key : {std::string("tok\nen"), std::string("pass\0word", 9),
                          std::string(300, 'x'), std::string("plugin:\x01")}) {
    EXPECT_EQ(error_code(ask(host, id, "secrets/get", json::object{{"key", key}})), -32001)
        << json::serialize(json::string(key));
  }
  EXPECT_EQ(error_code(ask(host, id, "secrets/get", json::object{{"key", "account:\twork"}})),
            -32602);
  EXPECT_EQ(error_code(ask(host, id, "secrets/get", json::object{{"key", 7}})), -32602);
  EXPECT_EQ(host.call_plugin(id, "test/echo", "alive"), "alive");
  EXPECT_EQ(host.journal_file(id).find("theirs"), std::string::npos);
}

TEST(Secrets, APermissionTakenBackRefusesTheKey) {
  HostClient host;
  const auto id = secret_plugin(host);
  set_secret(host, "token", "first");
  EXPECT_EQ(ask(host, id, "secrets/get", json::object{{"key", "token"}}).at("result"), "first");
  // The update no longer declares "token": its process is stopped, the next one is refused.
  const fs::path manifest = host.plugins_dir() / id / "escouade-plugin.json";
  json::value m = json::parse(
      std::string((std::istreambuf_iterator<char>(std::ifstream(manifest).rdbuf())), {}));
  m.at("permissions").as_object()["secrets"] = json::array{"account:*"};
  std::ofstream(manifest) << json::serialize(m);
  ASSERT_TRUE(
      host.call("host/load", json::object{{"folder", (host.plugins_dir() / id).string()}}).ok());
  EXPECT_EQ(error_code(ask(host, id, "secrets/get", json::object{{"key", "token"}})), -32001);
}

TEST(Secrets, TheAppSetsOnlyDeclaredKeysAndDeletes) {
  HostClient host;
  const auto id = secret_plugin(host);
  auto a = host.call("host/secrets/set", json::object{{"id", id}, {"key", "nope"}, {"value", "x"}});
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(*a.error_code, -32602);
  a = host.call("host/secrets/set",
                json::object{{"id", "dev.absent"}, {"key", "token"}, {"value", "x"}});
  EXPECT_EQ(a.error_code.value_or(0), -32602);
  set_secret(host, "token", "to-forget");
  ASSERT_TRUE(host.call("host/secrets/delete", json::object{{"id", id}, {"key", "token"}}).ok());
  EXPECT_TRUE(ask(host, id, "secrets/get", json::object{{"key", "token"}}).at("result").is_null());
  // The file store keeps each secret as plugin:<id>:<key>, in a file of its own.
  set_secret(host, "token", "kept");
  EXPECT_FALSE(fs::is_empty(host.data_dir() / "test-keychain"));
}

TEST(Secrets, AKeychainOutOfReachAnswersKeychainError) {
  // The Secret Service of a D-Bus session that does not exist.
  ::setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/escouade-test-bus", 1);
  HostClient host({"--keychain", "secret-service"});
  ::unsetenv("DBUS_SESSION_BUS_ADDRESS");
  const auto id = secret_plugin(host);
  const auto a = ask(host, id, "secrets/get", json::object{{"key", "token"}});
  EXPECT_EQ(error_code(a), -32002) << json::serialize(a);
  expect_journal(host, id, R"(secrets/get "token": )");
  auto set =
      host.call("host/secrets/set", json::object{{"id", id}, {"key", "token"}, {"value", "x"}});
  EXPECT_EQ(set.error_code.value_or(0), -32002);
  EXPECT_EQ(host.call_plugin(id, "test/echo", 1), 1);
}

// --- masking -----------------------------------------------------------------------------------

TEST(Masking, AGivenSecretIsMaskedInEveryFormTheJournalKeeps) {
  HostClient host;
  const auto id = secret_plugin(host);
  set_secret(host, "token", kSecret);
  ASSERT_EQ(ask(host, id, "secrets/get", json::object{{"key", "token"}}).at("result").as_string(),
            kSecret);
  const std::string plain(kSecret);
  const std::string escaped = json::serialize(json::string(kSecret));  // "s3cr3t-Tok\"en\\/é"
  const std::string escaped_inner = escaped.substr(1, escaped.size() - 2);
  // stderr: plain, inside a word, JSON-escaped inside a JSON line, split across two writes.
  host.call_plugin(id, "test/stderr", json::object{{"text", "plain " + plain}});
  host.call_plugin(id, "test/stderr", json::object{{"text", "word" + plain + "word"}});
  host.call_plugin(id, "test/stderr",
                   json::object{{"text", R"({"auth":")" + escaped_inner + R"("})"}});
  host.call_plugin(id, "test/stderr",
                   json::object{{"text", "split " + plain + " end"}, {"splitAt", 10}});
  // a line long enough to come in pieces, the secret across the first cut (16 KiB)
  host.call_plugin(
      id, "test/stderr",
      json::object{{"text", std::string(16380, 'x') + plain + std::string(40000, 'y')}});
  // a line on stdout that is not JSON-RPC, quoted in its first 200 characters, the secret
  // across that cut
  host.call_plugin(id, "test/stdout-raw", json::object{{"text", std::string(190, 'g') + plain}});
  // its log notifications
  host.call_plugin(id, "test/log", json::object{{"level", "warn"}, {"message", "logged " + plain}});
  // a refusal note that quotes what it asked for
  ask(host, id, "secrets/get", json::object{{"key", plain}});
  // a crash report with its last lines of stderr
  try {
    host.call_plugin(id, "test/crash-saying", json::object{{"text", "dying with " + plain}});
  } catch (const std::exception&) {
  }
  expect_journal(host, id, "exit code 9");
  const std::string file = host.journal_file(id);
  EXPECT_EQ(file.find("s3cr3t"), std::string::npos) << file;
  EXPECT_EQ(file.find("Tok"), std::string::npos) << file;
  for (const auto& line : host.journal(id))
    EXPECT_EQ(line.find("s3cr3t"), std::string::npos);
  // The long line is one entry, not a line a piece.
  EXPECT_EQ(file.find("stderr: yyyy"), std::string::npos);
  for (std::string expect :
       {"stderr: plain ", "stderr: word", "stderr: {\"auth\":\"", "stderr: split ",
        "stderr: xxxxxxxx", "gggggggg", "log: logged ", "dying with "}) {
    const auto at = file.find(expect);
    ASSERT_NE(at, std::string::npos) << expect << "\n" << file;
    EXPECT_NE(file.find(std::string(kMask), at), std::string::npos) << expect;
  }
}

// --- settings ----------------------------------------------------------------------------------

json::object declared_settings() {
  return json::object{{"channel", json::object{{"type", "string"}, {"default", "#dev"}}},
                      {"limit", json::object{{"type", "number"}, {"default", 10}}},
                      {"loud", json::object{{"type", "boolean"}, {"default", false}}}};
}

TEST(Settings, UserValuesOverDefaultsAndTheProjectsOverThem) {
  HostClient host;
  PluginSpec spec{"dev.settings"};
  spec.settings = declared_settings();
  const auto id = host.load_and_enable(make_plugin(host.plugins_dir(), spec));
  EXPECT_EQ(ask(host, id, "settings/get", json::object{}).at("result"),
            json::parse(R"({"channel":"#dev","limit":10,"loud":false})"));

  auto set = host.call("host/settings/set",
                       json::object{{"id", id}, {"values", json::object{{"limit", 25}}}});
  ASSERT_TRUE(set.ok()) << set.error_message;
  set = host.call("host/settings/set",
                  json::object{{"id", id}, {"values", json::object{{"limit", "many"}}}});
  EXPECT_EQ(set.error_code.value_or(0), -32602);
  set = host.call("host/settings/set",
                  json::object{{"id", id}, {"values", json::object{{"colour", "red"}}}});
  EXPECT_EQ(set.error_code.value_or(0), -32602);

  const fs::path project = host.data_dir() / "project-p2";
  fs::create_directories(project);
  std::ofstream(project / ".escouade.yml") << "plugins:\n  dev.settings:\n    channel: \"#p2\"\n"
                                              "    loud: true\n  dev.other:\n    channel: x\n";
  host.enable(id, "p2", false, project);
  EXPECT_EQ(ask(host, id, "settings/get", json::object{}).at("result"),
            json::parse(R"({"channel":"#dev","limit":25,"loud":false})"));
  EXPECT_EQ(ask(host, id, "settings/get", json::object{{"project", "p2"}}).at("result"),
            json::parse(R"({"channel":"#p2","limit":25,"loud":true})"));
  // A project it is not on for gives nothing of its own.
  EXPECT_EQ(ask(host, id, "settings/get", json::object{{"project", "p9"}}).at("result"),
            json::parse(R"({"channel":"#dev","limit":25,"loud":false})"));
  expect_journal(host, id, "not on for project \"p9\"");

  // A malformed file is journaled, and the user's values still answer.
  std::ofstream(project / ".escouade.yml") << "plugins:\n  dev.settings: [unclosed\n";
  EXPECT_EQ(ask(host, id, "settings/get", json::object{{"project", "p2"}}).at("result"),
            json::parse(R"({"channel":"#dev","limit":25,"loud":false})"));
  expect_journal(host, id, ".escouade.yml");
}

// --- files/read ----------------------------------------------------------------------------------

TEST(Files, OwnFilesAreReadAndEscapesRefusedWithTheirNote) {
  HostClient host;
  const auto dir = make_plugin(host.plugins_dir(), PluginSpec{"dev.files"});
  std::ofstream(dir / "rules.json") << R"({"deny":["rm -rf"]})";
  fs::create_directories(dir / "data");
  std::ofstream(dir / "data" / "words.txt") << "alpha\nbeta\n";
  std::ofstream(dir / ".env") << "TOKEN=x";
  fs::create_symlink("/etc/passwd", dir / "passwd");
  const auto id = host.load_and_enable(dir);
  EXPECT_EQ(ask(host, id, "files/read", json::object{{"path", "rules.json"}}).at("result"),
            R"({"deny":["rm -rf"]})");
  EXPECT_EQ(ask(host, id, "files/read", json::object{{"path", "data/words.txt"}}).at("result"),
            "alpha\nbeta\n");
  const std::vector<std::pair<std::string, int>> refused = {{"../dev.files/rules.json", -32003},
                                                            {"/etc/passwd", -32003},
                                                            {".env", -32003},
                                                            {"escouade-plugin.json", -32003},
                                                            {"passwd", -32003},
                                                            {"missing.txt", -32005},
                                                            {"plugin", -32004}};
  for (const auto& [path, code] : refused) {
    const auto a = ask(host, id, "files/read", json::object{{"path", path}});
    EXPECT_EQ(error_code(a), code) << path << ": " << json::serialize(a);
    expect_journal(host, id, "files/read " + json::serialize(json::string(path)));
  }
  EXPECT_EQ(host.call_plugin(id, "test/echo", "on"), "on");
}

// --- batches and log -----------------------------------------------------------------------------

TEST(Batches, ABatchOfCallsIsAnsweredByOneBatch) {
  HostClient host;
  const auto dir = make_plugin(host.plugins_dir(), PluginSpec{"dev.batch"});
  std::ofstream(dir / "notes.txt") << "hello";
  const auto id = host.load_and_enable(dir);
  const auto answers = host.call_plugin(
      id, "test/ask-batch",
      json::array{json::object{{"method", "files/read"}, {"params", {{"path", "notes.txt"}}}},
                  json::object{{"method", "secrets/get"}, {"params", {{"key", "nope"}}}},
                  json::object{{"method", "settings/get"}},
                  json::object{{"method", "fs/unknown"}}});
  ASSERT_TRUE(answers.is_array());
  ASSERT_EQ(answers.as_array().size(), 4u) << json::serialize(answers);  // not the notification
  std::map<std::string, json::value> by_id;
  for (const auto& a : answers.as_array())
    by_id[std::string(a.at("id").as_string())] = a;
  ASSERT_EQ(by_id.size(), 4u);
  int read = 0, refused = 0, settings = 0, unknown = 0;
  for (const auto& [call_id, a] : by_id) {
    const auto& o = a.as_object();
    if (o.contains("result") && o.at("result") == "hello") ++read;
    if (o.contains("result") && o.at("result").is_object()) ++settings;
    if (error_code(a) == -32001) ++refused;
    if (error_code(a) == -32601) ++unknown;
  }
  EXPECT_EQ(read + refused + settings + unknown, 4) << json::serialize(answers);
  EXPECT_EQ(read, 1);
  expect_journal(host, id, "log: inside a batch");
}

TEST(Log, EachLevelIsJournaledAsSuch) {
  HostClient host;
  const auto id = host.load_and_enable(make_plugin(host.plugins_dir(), PluginSpec{"dev.log"}));
  for (std::string level : {"debug", "info", "warn", "error"}) {
    host.call_plugin(id, "test/log", json::object{{"level", level}, {"message", "at " + level}});
    const auto line = host.wait_journal(id, "log: at " + level);
    EXPECT_NE(line.find(" " + level + " "), std::string::npos) << line;
  }
  // A log that does not hold is noted, and nothing else is lost.
  host.call_plugin(id, "test/log", json::object{{"level", "loud"}, {"message", "x"}});
  expect_journal(host, id, "the notification was ignored");
  EXPECT_EQ(host.call_plugin(id, "test/echo", 2), 2);
}

// timer/* is for sandboxed plugins: a process has its own clock (the schema, net/fetch: "A plugin
// run by a command ... is answered methodNotFound; the same for ... timer/*").
TEST(Timers, APluginRunAsACommandIsAnsweredMethodNotFound) {
  HostClient host;
  const auto id = host.load_and_enable(make_plugin(host.plugins_dir(), PluginSpec{"dev.timers"}));
  EXPECT_EQ(error_code(ask(host, id, "timer/set", json::object{{"ms", 10}})), -32601);
  EXPECT_EQ(host.call_plugin(id, "test/echo", 3), 3);
}

}  // namespace
}  // namespace escouade::testing
