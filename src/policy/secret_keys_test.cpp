#include "policy/secret_keys.hpp"

#include <gtest/gtest.h>

namespace escouade::policy {
namespace {

const std::vector<std::string> kGranted = {"token", "account:*", "db*"};

struct KeyCase {
  const char* name;
  std::string_view key;
  bool granted;
};

class SecretKeys : public ::testing::TestWithParam<KeyCase> {};

TEST_P(SecretKeys, VerdictFollowsThePermissions) {
  const auto& c = GetParam();
  const auto refusal = secret_key_refusal(kGranted, c.key);
  EXPECT_EQ(!refusal.has_value(), c.granted)
      << std::string(c.key) << ": " << refusal.value_or("granted");
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SecretKeys,
    ::testing::Values(
        KeyCase{"Exact", "token", true}, KeyCase{"ExactIsCaseSensitive", "Token", false},
        KeyCase{"LongerThanExact", "tokens", false}, KeyCase{"ShorterThanExact", "toke", false},
        KeyCase{"UnderTheStar", "account:work", true},
        KeyCase{"DeepUnderTheStar", "account:work:eu", true},
        KeyCase{"TheStemAlone", "account:", false},
        KeyCase{"TheStemWithoutItsColon", "account", false},
        KeyCase{"StarWithoutSeparator", "dbpassword", true},
        KeyCase{"OtherPluginInFull", "plugin:dev.other:token", false},
        KeyCase{"OwnNameInFull", "plugin:dev.mine:token", false},
        KeyCase{"KeychainNameOfAGrantedFamily", "plugin:dev.other:account:x", false},
        KeyCase{"Empty", "", false}, KeyCase{"StarLiteral", "account:*", true},
        KeyCase{"NotDeclared", "password", false}, KeyCase{"TrailingSpace", "token ", false},
        KeyCase{"NulInside", std::string_view("token\0x", 7), false}),
    [](const ::testing::TestParamInfo<KeyCase>& p) { return std::string(p.param.name); });

TEST(SecretKeys, NoPermissionsGrantsNothing) {
  const auto refusal = secret_key_refusal({}, "token");
  ASSERT_TRUE(refusal);
  EXPECT_EQ(*refusal, "not a key of permissions.secrets, which names none");
}

TEST(SecretKeys, KeychainNamesAreRefusedWithTheirReason) {
  const auto refusal = secret_key_refusal({"*"}, "plugin:dev.other:token");
  ASSERT_TRUE(refusal);
  EXPECT_NE(refusal->find("a keychain name, not a key"), std::string::npos);
}

// A key that cannot be a key is a params problem (-32602), judged before any permission: a NUL
// would cut the keychain's name short, so `account:x\0y` must never reach it.
TEST(SecretKeys, KeysThatCannotBeKeysAreNamedAsSuch) {
  using namespace std::string_view_literals;
  struct Bad {
    std::string_view key;
    const char* problem;
  };
  const std::string too_long(kMaxSecretKeyBytes + 1, 'k');
  const Bad bad[] = {
      {"account:x\0y"sv, "control character"},
      {"token\n"sv, "control character"},
      {"tok\x7f"
       "en"sv,
       "control character"},
      {"\xff\xfe"sv, "UTF-8"},
      {"account:\xc3"sv, "UTF-8"},
      {too_long, "256 bytes at most"},
  };
  for (const Bad& b : bad) {
    const auto problem = secret_key_form_problem(b.key);
    ASSERT_TRUE(problem) << b.key;
    EXPECT_NE(problem->find(b.problem), std::string::npos) << *problem;
  }
  for (std::string_view good : {""sv, "token"sv, "account:work"sv, "clé:été"sv}) {
    EXPECT_FALSE(secret_key_form_problem(good)) << good;
  }
  EXPECT_FALSE(secret_key_form_problem(std::string(kMaxSecretKeyBytes, 'k')));
}

}  // namespace
}  // namespace escouade::policy
