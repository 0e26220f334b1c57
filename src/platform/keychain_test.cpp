// The keychain backends against the real thing: gnome-keyring on a private bus (started by
// the test itself, see secret_service_session.hpp) and the file store in a temporary folder.
// The behaviour every backend shares is one parameterized suite; the Secret Service's own
// cases follow. keychain_file_test.cpp has the file store's own.

#include "platform/keychain.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <libsecret/secret.h>
#include <poll.h>
#include <unistd.h>

#include <memory>
#include <thread>
#include <vector>

#include "platform/errors.hpp"
#include "platform/process.hpp"
#include "support/keychain_test_support.hpp"

extern char** environ;

namespace escouade::platform {
namespace {

using ::testing::HasSubstr;
using testing::SecretServiceSession;
using testing::shared_secret_service;
using testing::TempDir;
using testing::test_name;

enum class Backend { kSecretService, kFileStore };

std::string backend_name(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::kSecretService ? "SecretService" : "FileStore";
}

class KeychainBehaviour : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::kSecretService) {
      std::string why;
      ASSERT_NE(shared_secret_service(why), nullptr) << why;
      keychain_ = make_secret_service_keychain();
    } else {
      dir_ = std::make_unique<TempDir>();
      keychain_ = make_file_keychain(dir_->path() / "secrets");
    }
  }

  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<Keychain> keychain_;
};

INSTANTIATE_TEST_SUITE_P(Backends, KeychainBehaviour,
                         ::testing::Values(Backend::kSecretService, Backend::kFileStore),
                         backend_name);

TEST_P(KeychainBehaviour, AMissingSecretIsNone) {
  auto got = keychain_->get(test_name("token"));
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(*got, std::nullopt);
}

TEST_P(KeychainBehaviour, WhatIsSetIsGot) {
  const std::string name = test_name("token");
  ASSERT_TRUE(keychain_->set(name, "xoxb-123"));
  auto got = keychain_->get(name);
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(*got, std::optional<std::string>("xoxb-123"));
}

TEST_P(KeychainBehaviour, SettingAgainReplaces) {
  const std::string name = test_name("token");
  ASSERT_TRUE(keychain_->set(name, "first"));
  ASSERT_TRUE(keychain_->set(name, "second, longer than the first"));
  auto got = keychain_->get(name);
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(*got, std::optional<std::string>("second, longer than the first"));
  ASSERT_TRUE(keychain_->set(name, "3"));
  EXPECT_EQ(*keychain_->get(name), std::optional<std::string>("3"));
}

TEST_P(KeychainBehaviour, ARemovedSecretIsGone) {
  const std::string name = test_name("token");
  ASSERT_TRUE(keychain_->set(name, "value"));
  auto removed = keychain_->remove(name);
  ASSERT_TRUE(removed) << removed.error().message;
  auto got = keychain_->get(name);
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(*got, std::nullopt);
}

TEST_P(KeychainBehaviour, RemovingAMissingSecretIsNotAnError) {
  auto removed = keychain_->remove(test_name("never-kept"));
  EXPECT_TRUE(removed) << removed.error().message;
}

TEST_P(KeychainBehaviour, NamesThatDifferOnlyInTheirPluginDoNotMix) {
  const std::string a = test_name("a") + ":token";
  const std::string b = test_name("b") + ":token";
  ASSERT_TRUE(keychain_->set(a, "of a"));
  ASSERT_TRUE(keychain_->set(b, "of b"));
  EXPECT_EQ(*keychain_->get(a), std::optional<std::string>("of a"));
  EXPECT_EQ(*keychain_->get(b), std::optional<std::string>("of b"));
  ASSERT_TRUE(keychain_->remove(a));
  EXPECT_EQ(*keychain_->get(a), std::nullopt);
  EXPECT_EQ(*keychain_->get(b), std::optional<std::string>("of b"));
}

TEST_P(KeychainBehaviour, OddTextComesBackByteForByte) {
  const std::string name = test_name("odd");
  const std::string value = std::string("héllo ✓ 日本 \"quoted\" 'single' back\\slash\n") +
                            "second line\r\n\ttab and a NUL:" + std::string(1, '\0') + "end 🔑";
  ASSERT_TRUE(keychain_->set(name, value));
  auto got = keychain_->get(name);
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ(**got, value);
}

TEST_P(KeychainBehaviour, ALongValueComesBackWhole) {
  const std::string name = test_name("long");
  std::string value;
  for (int i = 0; i < 20000; ++i)
    value += static_cast<char>('a' + i % 26);
  ASSERT_TRUE(keychain_->set(name, value));
  EXPECT_EQ(*keychain_->get(name), std::optional<std::string>(value));
}

TEST_P(KeychainBehaviour, ATextThatIsNotUtf8IsRefusedAndNothingIsKept) {
  const std::string name = test_name("binary");
  auto kept = keychain_->set(name, std::string("\xff\xfe not text"));
  ASSERT_FALSE(kept);
  EXPECT_EQ(kept.error().code, Errc::invalid_argument);
  EXPECT_THAT(kept.error().message, HasSubstr("is not UTF-8 text"));
  EXPECT_THAT(kept.error().message, HasSubstr(name));
  EXPECT_EQ(*keychain_->get(name), std::nullopt);
}

TEST_P(KeychainBehaviour, AnEmptyNameIsRefused) {
  auto kept = keychain_->set("", "value");
  ASSERT_FALSE(kept);
  EXPECT_EQ(kept.error().message, "a keychain name is never empty");
  EXPECT_FALSE(keychain_->get(""));
  EXPECT_FALSE(keychain_->remove(""));
}

TEST_P(KeychainBehaviour, FourThreadsAtOnceEachReadBackTheirOwn) {
  constexpr int kThreads = 4;
  constexpr int kEach = 50;
  std::vector<std::vector<std::string>> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        const std::string suffix = std::to_string(t) + "-" + std::to_string(i);
        const std::string name = test_name("k" + suffix);
        const std::string value = "value " + suffix;
        auto kept = keychain_->set(name, value);
        if (!kept) {
          failures[t].push_back("set " + suffix + ": " + kept.error().message);
          continue;
        }
        auto got = keychain_->get(name);
        if (!got) {
          failures[t].push_back("get " + suffix + ": " + got.error().message);
        } else if (*got != std::optional<std::string>(value)) {
          failures[t].push_back("get " + suffix + ": " + got->value_or("(none)"));
        }
      }
    });
  }
  for (std::thread& thread : threads)
    thread.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_THAT(failures[t], ::testing::IsEmpty()) << "thread " << t;
  // And all of them are still there afterwards, none overwritten by another thread.
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kEach; i += 7) {
      const std::string suffix = std::to_string(t) + "-" + std::to_string(i);
      EXPECT_EQ(*keychain_->get(test_name("k" + suffix)),
                std::optional<std::string>("value " + suffix));
    }
  }
}

// --- The Secret Service's own cases -----------------------------------------------------------

class SecretServiceKeychain : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    session_ = shared_secret_service(why);
    ASSERT_NE(session_, nullptr) << why;
    keychain_ = make_secret_service_keychain();
  }

  SecretServiceSession* session_ = nullptr;
  std::unique_ptr<Keychain> keychain_;
};

struct ListFree {
  void operator()(GList* list) const { g_list_free_full(list, g_object_unref); }
};
struct TableUnref {
  void operator()(GHashTable* t) const { g_hash_table_unref(t); }
};
using TablePtr = std::unique_ptr<GHashTable, TableUnref>;

TablePtr escouade_attributes(const std::string& name) {
  TablePtr table{g_hash_table_new(g_str_hash, g_str_equal)};
  g_hash_table_insert(table.get(), const_cast<char*>("service"), const_cast<char*>("escouade"));
  g_hash_table_insert(table.get(), const_cast<char*>("username"), const_cast<char*>(name.c_str()));
  return table;
}

std::string attribute(GHashTable* attributes, const char* key) {
  const auto* value = static_cast<const char*>(g_hash_table_lookup(attributes, key));
  return value != nullptr ? value : "(absent)";
}

// Read through libsecret's search, another path than the backend's lookup: the item is where
// and what the Escouade app (Rust `keyring`) looks for.
TEST_F(SecretServiceKeychain, TheItemIsWhatTheRustKeyringCrateReads) {
  const std::string name = test_name("token");
  ASSERT_TRUE(keychain_->set(name, "s3cret"));

  const TablePtr query = escouade_attributes(name);
  GError* error = nullptr;
  std::unique_ptr<GList, ListFree> items{secret_service_search_sync(
      nullptr, nullptr, query.get(),
      static_cast<SecretSearchFlags>(SECRET_SEARCH_ALL | SECRET_SEARCH_LOAD_SECRETS), nullptr,
      &error)};
  ASSERT_EQ(error, nullptr) << error->message;
  ASSERT_EQ(g_list_length(items.get()), 1u);
  auto* item = static_cast<SecretItem*>(items->data);

  GHashTable* attributes = secret_item_get_attributes(item);
  EXPECT_EQ(attribute(attributes, "service"), "escouade");
  EXPECT_EQ(attribute(attributes, "username"), name);
  EXPECT_EQ(attribute(attributes, "xdg:schema"), "org.freedesktop.Secret.Generic");
  g_hash_table_unref(attributes);

  gchar* label = secret_item_get_label(item);
  EXPECT_EQ(std::string(label), "Escouade " + name);
  g_free(label);

  // In the default collection, which the session's keyring has as "login".
  const std::string path = g_dbus_proxy_get_object_path(G_DBUS_PROXY(item));
  EXPECT_EQ(path.rfind("/org/freedesktop/secrets/collection/login/", 0), 0u) << path;

  SecretValue* value = secret_item_get_secret(item);
  ASSERT_NE(value, nullptr);
  EXPECT_EQ(std::string(secret_value_get_text(value)), "s3cret");
  EXPECT_EQ(std::string(secret_value_get_content_type(value)), "text/plain");
  secret_value_unref(value);
}

// An entry written the way the Rust crate writes it (no xdg:schema, attributes of its own
// beside service and username) is read and forgotten by the backend.
TEST_F(SecretServiceKeychain, AnEntryWrittenByTheAppIsRead) {
  const std::string name = test_name("from-app");
  TablePtr attributes = escouade_attributes(name);
  g_hash_table_insert(attributes.get(), const_cast<char*>("target"), const_cast<char*>("default"));
  g_hash_table_insert(attributes.get(), const_cast<char*>("application"),
                      const_cast<char*>("rust-keyring"));
  SecretValue* value = secret_value_new("from the app", -1, "text/plain");
  GError* error = nullptr;
  const gboolean stored =
      secret_service_store_sync(nullptr, nullptr, attributes.get(), SECRET_COLLECTION_DEFAULT,
                                "app entry", value, nullptr, &error);
  secret_value_unref(value);
  ASSERT_TRUE(stored) << error->message;

  auto got = keychain_->get(name);
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(*got, std::optional<std::string>("from the app"));
  ASSERT_TRUE(keychain_->remove(name));
  EXPECT_EQ(*keychain_->get(name), std::nullopt);
}

TEST_F(SecretServiceKeychain, DescribesItself) {
  EXPECT_EQ(keychain_->describe(), "the Secret Service");
}

TEST_F(SecretServiceKeychain, ANameThatIsNotUtf8IsRefused) {
  auto kept = keychain_->set("plugin:dev.test:\xff", "value");
  ASSERT_FALSE(kept);
  EXPECT_EQ(kept.error().code, Errc::invalid_argument);
  EXPECT_THAT(kept.error().message, HasSubstr("UTF-8"));
}

// --- In a process of its own (GLib keeps the first bus it connects to): keychain_probe ----------

struct ProbeRun {
  std::string output;
  std::optional<ExitStatus> status;
};

// Runs keychain_probe with this process's environment, DBUS_SESSION_BUS_ADDRESS and the
// entries of `extra` replaced.
ProbeRun run_probe(const std::vector<std::string>& extra,
                   const std::vector<std::string>& calls = {"get", "set", "remove"}) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string key = entry.substr(0, entry.find('='));
    bool replaced = key == "DBUS_SESSION_BUS_ADDRESS";
    for (const std::string& x : extra)
      replaced = replaced || x.rfind(key + "=", 0) == 0;
    if (!replaced) env.push_back(entry);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  std::vector<std::string> argv = {ESCOUADE_KEYCHAIN_PROBE};
  argv.insert(argv.end(), calls.begin(), calls.end());
  auto spawned = spawn(SpawnRequest{.argv = argv, .cwd = {}, .env = env});
  if (!spawned) return {spawned.error().message, std::nullopt};
  ::close(spawned->stdin_fd);
  spawned->stdin_fd = -1;
  ProbeRun run;
  char buffer[4096];
  for (;;) {
    pollfd p{spawned->stdout_fd, POLLIN, 0};
    if (::poll(&p, 1, 30000) <= 0) break;  // a safety net, not an expectation
    const ssize_t n = ::read(spawned->stdout_fd, buffer, sizeof buffer);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) break;
    run.output.append(buffer, static_cast<std::size_t>(n));
  }
  run.status = wait_exit(*spawned);
  close_fds(*spawned);
  return run;
}

TEST(SecretServiceUnreachable, EveryCallSaysTheBusCannotBeReached) {
  const ProbeRun run = run_probe({"DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent/escouade-bus"});
  EXPECT_EQ(run.status, (ExitStatus{0, std::nullopt})) << run.output;
  for (
      const char* line :
      {"get error unreachable the Secret Service cannot be reached, so Escouade could not read the "
       "secret plugin:dev.example.probe:token: ",
       "set error unreachable the Secret Service cannot be reached, so Escouade could not keep the "
       "secret plugin:dev.example.probe:token: ",
       "remove error unreachable the Secret Service cannot be reached, so Escouade could not "
       "forget "
       "the secret plugin:dev.example.probe:token: "}) {
    EXPECT_THAT(run.output, HasSubstr(line));
  }
  EXPECT_THAT(run.output, ::testing::Not(HasSubstr("probe value")));
}

TEST(SecretServiceUnreachable, ABusWithoutASecretServiceSaysSo) {
  auto bus = SecretServiceSession::start(SecretServiceSession::Keyring::kAbsent);
  ASSERT_TRUE(bus) << bus.error().message;
  const ProbeRun run = run_probe((*bus)->child_env());
  EXPECT_EQ(run.status, (ExitStatus{0, std::nullopt})) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr("get error unreachable no Secret Service runs on the session bus "
                        "(gnome-keyring, KWallet...), so Escouade could not read the secret "
                        "plugin:dev.example.probe:token: "));
  EXPECT_THAT(run.output,
              HasSubstr("set error unreachable no Secret Service runs on the session bus"));
  EXPECT_THAT(run.output,
              HasSubstr("remove error unreachable no Secret Service runs on the session bus"));
}

// A locked collection and no one to unlock it: a kept secret is not taken for a missing one,
// and neither a set nor a remove claims to have done what it could not.
TEST(SecretServiceLocked, EveryCallSaysTheKeychainIsLocked) {
  auto session = SecretServiceSession::start();
  ASSERT_TRUE(session) << session.error().message;
  const ProbeRun before = run_probe((*session)->child_env(), {"set", "get"});
  ASSERT_EQ(before.output, "set ok\nget ok kept\n");

  auto locked = (*session)->lock_default_collection();
  ASSERT_TRUE(locked) << locked.error().message;
  const ProbeRun run = run_probe((*session)->child_env(), {"get", "remove", "set"});
  EXPECT_EQ(run.status, (ExitStatus{0, std::nullopt})) << run.output;
  EXPECT_THAT(run.output,
              HasSubstr("get error unreachable the keychain is locked, so Escouade could "
                        "not read the secret plugin:dev.example.probe:token: "));
  EXPECT_THAT(run.output, HasSubstr("remove error unreachable the keychain is locked, so Escouade "
                                    "could not forget the secret plugin:dev.example.probe:token"));
  EXPECT_THAT(run.output,
              HasSubstr("set error unreachable the keychain is locked, so Escouade could "
                        "not keep the secret plugin:dev.example.probe:token: "));
}

// What an integration test does with escouade-host: a child given child_env() uses the
// session's keyring, and sees what this process kept there.
TEST_F(SecretServiceKeychain, AChildProgramGivenTheSessionsEnvironmentUsesItsKeyring) {
  const std::string name = "plugin:dev.example.probe:token";
  ASSERT_TRUE(keychain_->set(name, "kept by the test"));
  const ProbeRun run = run_probe(session_->child_env());
  EXPECT_EQ(run.status, (ExitStatus{1, std::nullopt})) << run.output;
  EXPECT_EQ(run.output, "get ok kept\nset ok\nremove ok\n");
  EXPECT_EQ(*keychain_->get(name), std::nullopt);  // the child's remove
}

}  // namespace
}  // namespace escouade::platform
