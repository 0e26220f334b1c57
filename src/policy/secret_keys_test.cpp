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

}  // namespace
}  // namespace escouade::policy
