// Secrets through escouade-host with its default keychain, the Secret Service: a real
// gnome-keyring on a private D-Bus session that this test starts (never the user's).

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <cstdlib>

#include "host_client.hpp"
#include "platform/keychain.hpp"
#include "support/secret_service_session.hpp"

namespace escouade::testing {
namespace {

namespace json = boost::json;
using platform::testing::SecretServiceSession;

// Sets the session's variables in this process for as long as it lives (escouade-host inherits
// them), and puts the old values back after.
class SessionEnvironment {
 public:
  explicit SessionEnvironment(const SecretServiceSession& s) {
    for (const auto& kv : s.child_env()) {
      const auto eq = kv.find('=');
      const std::string name = kv.substr(0, eq);
      const char* old = std::getenv(name.c_str());
      saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
      ::setenv(name.c_str(), kv.substr(eq + 1).c_str(), 1);
    }
  }
  ~SessionEnvironment() {
    for (const auto& [name, old] : saved_) {
      if (old) {
        ::setenv(name.c_str(), old->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

TEST(SecretServiceHost, SecretsLiveInTheRealKeychainAndNeverInTheJournal) {
  auto session = SecretServiceSession::start();
  ASSERT_TRUE(session) << session.error().message;
  std::optional<HostClient> host;
  {
    SessionEnvironment env(**session);
    host.emplace(std::vector<std::string>{"--keychain", "secret-service"});
  }
  PluginSpec spec{"dev.keyring"};
  spec.secrets = {"token", "account:*"};
  const auto id = host->load_and_enable(make_plugin(host->plugins_dir(), spec));
  const std::string secret = "xoxb-real-keyring-7f3a";
  auto set =
      host->call("host/secrets/set", json::object{{"id", id}, {"key", "token"}, {"value", secret}});
  ASSERT_TRUE(set.ok()) << set.error_message;

  auto got = unmasked(host->call_plugin(
      id, "test/ask",
      json::object{{"method", "secrets/get"}, {"params", json::object{{"key", "token"}}}}));
  ASSERT_TRUE(got.as_object().contains("result")) << json::serialize(got);
  EXPECT_EQ(got.at("result").as_string(), secret);
  got = host->call_plugin(
      id, "test/ask",
      json::object{{"method", "secrets/get"}, {"params", json::object{{"key", "account:home"}}}});
  EXPECT_TRUE(got.at("result").is_null()) << json::serialize(got);

  // It is kept in the keychain under plugin:<id>:<key>, where the app reads it too.
  (*session)->use_in_this_process();
  auto keychain = platform::make_secret_service_keychain();
  auto kept = keychain->get("plugin:dev.keyring:token");
  ASSERT_TRUE(kept) << kept.error().message;
  ASSERT_TRUE(*kept);
  EXPECT_EQ(**kept, secret);

  // The plugin says it on stderr and in a log: the journal keeps neither.
  host->call_plugin(id, "test/stderr", json::object{{"text", "token=" + secret}});
  host->call_plugin(id, "test/log",
                    json::object{{"level", "info"}, {"message", "using " + secret}});
  EXPECT_FALSE(host->wait_journal(id, "log: using \u2022\u2022\u2022\u2022").empty());
  EXPECT_FALSE(host->wait_journal(id, "stderr: token=\u2022\u2022\u2022\u2022").empty());
  EXPECT_EQ(host->journal_file(id).find(secret), std::string::npos);

  // Deleted by the app: null again.
  ASSERT_TRUE(host->call("host/secrets/delete", json::object{{"id", id}, {"key", "token"}}).ok());
  got = host->call_plugin(
      id, "test/ask",
      json::object{{"method", "secrets/get"}, {"params", json::object{{"key", "token"}}}});
  EXPECT_TRUE(got.at("result").is_null()) << json::serialize(got);
  host->close_and_wait();
}

TEST(SecretServiceHost, ALockedKeychainAnswersKeychainErrorAndThePluginGoesOn) {
  auto session = SecretServiceSession::start();
  ASSERT_TRUE(session) << session.error().message;
  std::optional<HostClient> host;
  {
    SessionEnvironment env(**session);
    host.emplace(std::vector<std::string>{"--keychain", "secret-service"});
  }
  PluginSpec spec{"dev.locked"};
  spec.secrets = {"token"};
  const auto id = host->load_and_enable(make_plugin(host->plugins_dir(), spec));
  ASSERT_TRUE(
      host->call("host/secrets/set", json::object{{"id", id}, {"key", "token"}, {"value", "v"}})
          .ok());
  ASSERT_TRUE((*session)->lock_default_collection());
  const auto got = host->call_plugin(
      id, "test/ask",
      json::object{{"method", "secrets/get"}, {"params", json::object{{"key", "token"}}}});
  ASSERT_TRUE(got.as_object().contains("error")) << json::serialize(got);
  EXPECT_EQ(got.at("error").at("code"), -32002);
  EXPECT_FALSE(host->wait_journal(id, "secrets/get \"token\": ").empty());
  EXPECT_EQ(host->call_plugin(id, "test/echo", "on"), "on");
  host->close_and_wait();
}

}  // namespace
}  // namespace escouade::testing
