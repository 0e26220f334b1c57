#include "services/settings.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/temp_dir.hpp"
#include "protocol/gen/errors.hpp"
#include "services/project_file.hpp"
#include "services/setting_value.hpp"

namespace escouade::services {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using manifest::Manifest;
using manifest::Setting;
using manifest::SettingType;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

constexpr auto kInvalidParams = proto::ErrorCode::invalid_params;

struct TempDir : escouade::TempDir {
  TempDir() : escouade::TempDir("escouade-settings") {}
};

void write_file(const fs::path& path, std::string_view text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// dev.example.guard with a setting of each type.
Manifest guard(std::string id = "dev.example.guard") {
  Manifest m;
  m.id = std::move(id);
  m.settings.emplace("channel", Setting{SettingType::string, std::string("#dev"), ""});
  m.settings.emplace("timeout", Setting{SettingType::number, 30.0, ""});
  m.settings.emplace("ratio", Setting{SettingType::number, 0.5, ""});
  m.settings.emplace("notify", Setting{SettingType::boolean, true, ""});
  return m;
}

json::object object(std::string_view text) {
  return json::parse(text).as_object();
}

class SettingsTest : public ::testing::Test {
 protected:
  fs::path store_dir() const { return data_.path() / "plugin-settings"; }
  fs::path project() const { return project_.path(); }
  void write_project(std::string_view yaml) const { write_file(project() / ".escouade.yml", yaml); }
  // resolve_settings for guard() with the project folder.
  ResolvedSettings resolve(const Manifest& m) const {
    const fs::path folder = project();
    return resolve_settings(m, store_, &folder);
  }

  TempDir data_;
  TempDir project_;
  SettingsStore store_{data_.path() / "plugin-settings"};
};

// --- the user's values ---------------------------------------------------------------------

TEST_F(SettingsTest, DefaultsAloneWhenNothingIsSet) {
  const ResolvedSettings r = store_.read(guard());
  EXPECT_EQ(r.values, object(R"({"channel":"#dev","timeout":30,"ratio":0.5,"notify":true})"));
  EXPECT_TRUE(r.values.at("timeout").is_int64()) << "a whole default answers as an integer";
  EXPECT_THAT(r.problems, IsEmpty());
  EXPECT_FALSE(fs::exists(store_dir())) << "reading writes nothing";
}

TEST_F(SettingsTest, UserValuesOverDefaults) {
  ASSERT_TRUE(store_.set(guard(), object(R"({"channel":"#ops","notify":false,"timeout":2.5})")));
  EXPECT_EQ(store_.user_values(guard()),
            object(R"({"channel":"#ops","timeout":2.5,"ratio":0.5,"notify":false})"));
}

TEST_F(SettingsTest, SetRefusesAnUnknownNameAndNamesTheSettings) {
  const Result<void> r = store_.set(guard(), object(R"({"chanel":"#ops"})"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, kInvalidParams);
  EXPECT_EQ(r.error().message,
            "settings.chanel: not a setting of dev.example.guard; it has channel, notify, ratio, "
            "timeout");
  EXPECT_FALSE(fs::exists(store_.file_of("dev.example.guard")));
}

TEST_F(SettingsTest, SetRefusesAPluginWithoutSettings) {
  Manifest bare;
  bare.id = "dev.example.bare";
  const Result<void> r = store_.set(bare, object(R"({"x":1})"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "settings.x: not a setting of dev.example.bare; it has none");
}

TEST_F(SettingsTest, SetRefusesEachWrongType) {
  struct Case {
    std::string_view values;
    std::string_view message;
  };
  const Case cases[] = {
      {R"({"channel":42})", "settings.channel: expected a string, got a number"},
      {R"({"channel":true})", "settings.channel: expected a string, got a boolean"},
      {R"({"channel":["#a"]})", "settings.channel: expected a string, got a list"},
      {R"({"timeout":"30"})", "settings.timeout: expected a number, got a string"},
      {R"({"timeout":false})", "settings.timeout: expected a number, got a boolean"},
      {R"({"timeout":{"s":1}})", "settings.timeout: expected a number, got an object"},
      {R"({"notify":"true"})", "settings.notify: expected a boolean, got a string"},
      {R"({"notify":1})", "settings.notify: expected a boolean, got a number"},
  };
  for (const Case& c : cases) {
    const Result<void> r = store_.set(guard(), object(c.values));
    ASSERT_FALSE(r) << c.values;
    EXPECT_EQ(r.error().code, kInvalidParams);
    EXPECT_EQ(r.error().message, c.message);
  }
  EXPECT_FALSE(fs::exists(store_.file_of("dev.example.guard")));
}

TEST_F(SettingsTest, SetIsAllOrNothing) {
  ASSERT_TRUE(store_.set(guard(), object(R"({"channel":"#first"})")));
  const std::string before = read_text(store_.file_of("dev.example.guard"));
  const Result<void> r = store_.set(guard(), object(R"({"channel":"#second","notify":"no"})"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "settings.notify: expected a boolean, got a string");
  EXPECT_EQ(read_text(store_.file_of("dev.example.guard")), before);
  EXPECT_EQ(store_.user_values(guard()).at("channel"), "#first");
}

TEST_F(SettingsTest, SetMergesIntoEarlierValues) {
  ASSERT_TRUE(store_.set(guard(), object(R"({"channel":"#ops"})")));
  ASSERT_TRUE(store_.set(guard(), object(R"({"timeout":5})")));
  const json::object values = store_.user_values(guard());
  EXPECT_EQ(values.at("channel"), "#ops");
  EXPECT_EQ(values.at("timeout"), 5);
}

TEST_F(SettingsTest, NullForgetsTheUserValue) {
  ASSERT_TRUE(store_.set(guard(), object(R"({"channel":"#ops","timeout":5})")));
  ASSERT_TRUE(store_.set(guard(), object(R"({"channel":null})")));
  const json::object values = store_.user_values(guard());
  EXPECT_EQ(values.at("channel"), "#dev");
  EXPECT_EQ(values.at("timeout"), 5);
  EXPECT_EQ(json::parse(read_text(store_.file_of("dev.example.guard"))),
            json::parse(R"({"timeout":5})"));
}

TEST_F(SettingsTest, ValuesLastAcrossANewStoreInAnAtomicPrivateFile) {
  ASSERT_TRUE(store_.set(guard(), object(R"({"channel":"#ops","ratio":0.25})")));
  const SettingsStore again(store_dir());
  EXPECT_EQ(again.user_values(guard()),
            object(R"({"channel":"#ops","timeout":30,"ratio":0.25,"notify":true})"));
  const fs::path file = store_dir() / "dev.example.guard.json";
  EXPECT_EQ(json::parse(read_text(file)), json::parse(R"({"channel":"#ops","ratio":0.25})"));
  EXPECT_EQ(fs::status(file).permissions() & (fs::perms::group_all | fs::perms::others_all),
            fs::perms::none);
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(store_dir())) {
    names.push_back(entry.path().filename().string());
  }
  EXPECT_THAT(names, ElementsAre("dev.example.guard.json")) << "no temporary file is left";
}

TEST_F(SettingsTest, EachPluginHasItsOwnValues) {
  ASSERT_TRUE(store_.set(guard(), object(R"({"channel":"#ops"})")));
  EXPECT_EQ(store_.user_values(guard("dev.example.other")).at("channel"), "#dev");
}

TEST_F(SettingsTest, ValuesOfNamesNoLongerDeclaredAreKeptNotAnswered) {
  Manifest v1 = guard();
  v1.settings.emplace("legacy", Setting{SettingType::string, std::string("a"), ""});
  ASSERT_TRUE(store_.set(v1, object(R"({"legacy":"kept"})")));
  const Manifest v2 = guard();
  EXPECT_FALSE(store_.user_values(v2).contains("legacy"));
  EXPECT_THAT(store_.read(v2).problems, IsEmpty());
  ASSERT_TRUE(store_.set(v2, object(R"({"channel":"#ops"})")));
  EXPECT_EQ(store_.user_values(v1).at("legacy"), "kept");
}

TEST_F(SettingsTest, AKeptValueOfAnotherTypeAnswersTheDefaultWithAProblem) {
  ASSERT_TRUE(store_.set(guard(), object(R"({"timeout":5})")));
  Manifest changed = guard();
  changed.settings["timeout"] = Setting{SettingType::string, std::string("30s"), ""};
  const ResolvedSettings r = store_.read(changed);
  EXPECT_EQ(r.values.at("timeout"), "30s");
  ASSERT_THAT(r.problems, SizeIs(1));
  EXPECT_THAT(r.problems[0], HasSubstr("timeout: the value kept is a number, but "
                                       "dev.example.guard declares a string setting"));
}

TEST_F(SettingsTest, ACorruptStoreFileAnswersDefaultsAndIsKeptAsideOnTheNextSet) {
  const fs::path file = store_.file_of("dev.example.guard");
  write_file(file, R"({"channel": "#ops",)");
  const ResolvedSettings r = store_.read(guard());
  EXPECT_EQ(r.values, store_.read(guard("dev.example.fresh")).values);
  ASSERT_THAT(r.problems, SizeIs(1));
  EXPECT_THAT(r.problems[0], HasSubstr(file.string() + ": not valid JSON"));
  EXPECT_THAT(r.problems[0], HasSubstr("the manifest's defaults answer"));

  write_file(file, "[1, 2]");
  EXPECT_THAT(store_.read(guard()).problems,
              ElementsAre(HasSubstr("not a JSON object but a list")));

  ASSERT_TRUE(store_.set(guard(), object(R"({"notify":false})")));
  EXPECT_EQ(read_text(fs::path(file.string() + ".corrupt")), "[1, 2]");
  const ResolvedSettings after = store_.read(guard());
  EXPECT_THAT(after.problems, IsEmpty());
  EXPECT_EQ(after.values.at("notify"), false);
}

TEST_F(SettingsTest, SetRefusesWhatWouldOutgrowTheFileLimit) {
  const std::string big(kMaxSettingsFileBytes, 'x');
  json::object values;
  values["channel"] = big;
  const Result<void> r = store_.set(guard(), values);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, kInvalidParams);
  EXPECT_THAT(r.error().message, HasSubstr("at most 1048576 (1 MiB)"));
  EXPECT_FALSE(fs::exists(store_.file_of("dev.example.guard")));
}

// A set on one thread while another reads: every read sees one whole file, the old or the new.
TEST_F(SettingsTest, ReadsWhileSettingSeeWholeFiles) {
  ASSERT_TRUE(store_.set(guard(), object(R"({"channel":"#a","timeout":1})")));
  std::thread setter([&] {
    for (int i = 0; i < 100; ++i) {
      json::object values;
      values["channel"] = i % 2 == 0 ? "#b" : "#a";
      values["timeout"] = i % 2 == 0 ? 2 : 1;
      ASSERT_TRUE(store_.set(guard(), values));
    }
  });
  for (int i = 0; i < 100; ++i) {
    const ResolvedSettings r = store_.read(guard());
    ASSERT_THAT(r.problems, IsEmpty());
    const bool a = r.values.at("channel") == "#a" && r.values.at("timeout") == 1;
    const bool b = r.values.at("channel") == "#b" && r.values.at("timeout") == 2;
    ASSERT_TRUE(a || b) << json::serialize(r.values);
  }
  setter.join();
}

// --- the project's .escouade.yml ------------------------------------------------------------

TEST_F(SettingsTest, AProjectsSectionGoesOverTheUsersValues) {
  ASSERT_TRUE(store_.set(guard(), object(R"({"channel":"#ops","timeout":5})")));
  write_project(
      "# Escouade's settings for this project\n"
      "plugins:\n"
      "  dev.example.guard:\n"
      "    channel: \"#project\"\n"
      "    notify: false\n");
  const ResolvedSettings r = resolve(guard());
  EXPECT_EQ(r.values, object(R"({"channel":"#project","timeout":5,"ratio":0.5,"notify":false})"));
  EXPECT_THAT(r.problems, IsEmpty());
  EXPECT_EQ(resolve_settings(guard(), store_, nullptr).values.at("channel"), "#ops");
}

TEST_F(SettingsTest, AnotherPluginsSectionIsNotUsed) {
  write_project(
      "plugins:\n"
      "  dev.example.other:\n"
      "    channel: \"#other\"\n"
      "  dev.example:\n"
      "    channel: \"#prefix\"\n"
      "  dev.example.guard.extra:\n"
      "    channel: \"#longer\"\n");
  const ResolvedSettings r = resolve(guard());
  EXPECT_EQ(r.values.at("channel"), "#dev");
  EXPECT_THAT(r.problems, IsEmpty());
}

TEST_F(SettingsTest, DottedPluginIdsAreOneKey) {
  write_project(
      "plugins:\n"
      "  dev.example: {channel: \"#short\"}\n"
      "  \"dev.example.guard\": {channel: \"#quoted-key\"}\n");
  EXPECT_EQ(resolve(guard()).values.at("channel"), "#quoted-key");
  EXPECT_EQ(resolve(guard("dev.example")).values.at("channel"), "#short");
}

TEST_F(SettingsTest, AMissingFileOrFolderIsNoProblem) {
  ASSERT_TRUE(store_.set(guard(), object(R"({"channel":"#ops"})")));
  ResolvedSettings r = resolve(guard());
  EXPECT_EQ(r.values.at("channel"), "#ops");
  EXPECT_THAT(r.problems, IsEmpty());
  const fs::path gone = project() / "no-such-folder";
  r = resolve_settings(guard(), store_, &gone);
  EXPECT_EQ(r.values.at("channel"), "#ops");
  EXPECT_THAT(r.problems, IsEmpty());
}

TEST_F(SettingsTest, EmptyOrNullPartsSetNothing) {
  for (std::string_view yaml :
       {"", "# only a comment\n", "plugins:\n", "plugins: ~\n", "plugins:\n  dev.example.guard:\n",
        "plugins:\n  dev.example.guard:\n    channel:\n    notify: ~\n"}) {
    write_project(yaml);
    const ResolvedSettings r = resolve(guard());
    EXPECT_EQ(r.values.at("channel"), "#dev") << yaml;
    EXPECT_EQ(r.values.at("notify"), true) << yaml;
    EXPECT_THAT(r.problems, IsEmpty()) << yaml;
  }
}

// Each case: a malformed file, the line and column reported, and the user's values still there.
TEST_F(SettingsTest, MalformedYamlIsReportedWithItsLine) {
  ASSERT_TRUE(store_.set(guard(), object(R"({"channel":"#ops"})")));
  struct Case {
    std::string_view yaml;
    std::string_view where;
    std::string_view why;
  };
  const Case cases[] = {
      {"plugins:\n  dev.example.guard:\n    channel: \"#project\n    notify: false\n",
       "line 3, column 14", "a quoted value is never closed"},
      {"plugins:\n  dev.example.guard:\n    channel: '#it''s\n", "line 3, column 14",
       "a quoted value is never closed"},
      {"plugins:\n  dev.example.guard:\n\tchannel: \"#project\"\n", "line 3",
       "indented with a tab"},
      {"plugins:\n  dev.example.guard: {channel: \"#x\"\n", "line 3", "end of map flow not found"},
      {"plugins:\n  - dev.example.guard\n", "line 2, column 3",
       "plugins is a list; it should be a mapping of plugin ids to their settings"},
      {"plugins:\n  dev.example.guard:\n    - channel: \"#x\"\n", "line 3, column 5",
       "plugins.dev.example.guard is a list; it should be a mapping of setting names to values"},
      {"- plugins\n", "line 1, column 1", "the file is a list; it should be a mapping"},
      {"plugins: dev.example.guard\n", "line 1, column 10", "plugins is a single value"},
  };
  const std::string file = (project() / ".escouade.yml").string();
  for (const Case& c : cases) {
    write_project(c.yaml);
    const ResolvedSettings r = resolve(guard());
    EXPECT_EQ(r.values.at("channel"), "#ops") << c.yaml;
    EXPECT_EQ(r.values.at("notify"), true) << c.yaml;
    ASSERT_THAT(r.problems, SizeIs(1)) << c.yaml;
    EXPECT_THAT(r.problems[0], HasSubstr(file + ": " + std::string(c.where))) << c.yaml;
    EXPECT_THAT(r.problems[0], HasSubstr(c.why)) << c.yaml;
  }
}

TEST_F(SettingsTest, BooleansFollowTheCoreSchema) {
  Manifest m = guard();
  for (std::string_view name : {"a", "b", "c", "d", "e", "f", "g"}) {
    m.settings.emplace(std::string(name), Setting{SettingType::boolean, false, ""});
  }
  write_project(
      "plugins:\n"
      "  dev.example.guard:\n"
      "    a: true\n"
      "    b: False\n"
      "    c: TRUE\n"
      "    d: yes\n"
      "    e: \"true\"\n"
      "    f: 1\n"
      "    notify: false\n");
  const ResolvedSettings r = resolve(m);
  EXPECT_EQ(r.values.at("a"), true);
  EXPECT_EQ(r.values.at("b"), false);
  EXPECT_EQ(r.values.at("c"), true);
  EXPECT_EQ(r.values.at("d"), false) << "the default, yes being text";
  EXPECT_EQ(r.values.at("e"), false);
  EXPECT_EQ(r.values.at("f"), false);
  EXPECT_EQ(r.values.at("notify"), false);
  const std::string file = (project() / ".escouade.yml").string();
  EXPECT_THAT(
      r.problems,
      ElementsAre(file + ": line 6, column 8: plugins.dev.example.guard.d: expected true or "
                         "false, got yes (text in YAML 1.2, which Escouade follows); "
                         "skipped",
                  HasSubstr("e: expected true or false, got the quoted text \"true\""),
                  HasSubstr("f: expected true or false, got \"1\"")));
}

TEST_F(SettingsTest, NumbersFollowTheCoreSchema) {
  Manifest m;
  m.id = "dev.example.guard";
  for (std::string_view name : {"dec", "neg", "plus", "frac", "exp", "hex", "oct", "dot", "big",
                                "inf", "word", "quoted", "under", "huge"}) {
    m.settings.emplace(std::string(name), Setting{SettingType::number, 7.0, ""});
  }
  write_project(
      "plugins:\n"
      "  dev.example.guard:\n"
      "    dec: 42\n"
      "    neg: -1.5\n"
      "    plus: +3\n"
      "    frac: 2.50\n"
      "    exp: 1e3\n"
      "    hex: 0x1F\n"
      "    oct: 0o17\n"
      "    dot: .5\n"
      "    big: 12345678901234567890\n"
      "    inf: .inf\n"
      "    word: ten\n"
      "    quoted: \"42\"\n"
      "    under: 1_000\n"
      "    huge: 1e999\n");
  const ResolvedSettings r = resolve(m);
  EXPECT_EQ(r.values.at("dec"), 42);
  EXPECT_TRUE(r.values.at("dec").is_int64());
  EXPECT_EQ(r.values.at("neg"), -1.5);
  EXPECT_EQ(r.values.at("plus"), 3);
  EXPECT_EQ(r.values.at("frac"), 2.5);
  EXPECT_EQ(r.values.at("exp"), 1000);
  EXPECT_EQ(r.values.at("hex"), 31);
  EXPECT_EQ(r.values.at("oct"), 15);
  EXPECT_EQ(r.values.at("dot"), 0.5);
  EXPECT_EQ(r.values.at("big"), 12345678901234567890.0);
  for (std::string_view refused : {"inf", "word", "quoted", "under", "huge"}) {
    EXPECT_EQ(r.values.at(refused), 7) << refused;
  }
  EXPECT_THAT(r.problems, ElementsAre(HasSubstr("inf: expected a finite number, got .inf"),
                                      HasSubstr("word: expected a number, got \"ten\""),
                                      HasSubstr("quoted: expected a number, got the quoted text "
                                                "\"42\""),
                                      HasSubstr("under: expected a number, got \"1_000\""),
                                      HasSubstr("huge: expected a number, got \"1e999\", out of "
                                                "range")));
}

TEST_F(SettingsTest, AStringSettingTakesAnyScalarAsWritten) {
  Manifest m;
  m.id = "dev.example.guard";
  for (std::string_view name : {"plain", "quoted", "single", "boolean", "number", "block", "str"}) {
    m.settings.emplace(std::string(name), Setting{SettingType::string, std::string("d"), ""});
  }
  write_project(
      "plugins:\n"
      "  dev.example.guard:\n"
      "    plain: 42\n"
      "    quoted: \"42\"\n"
      "    single: 'it''s'\n"
      "    boolean: true\n"
      "    number: 1.50\n"
      "    block: |\n"
      "      two\n"
      "      lines\n"
      "    str: !!str 0x10\n");
  const ResolvedSettings r = resolve(m);
  EXPECT_EQ(r.values, object(R"({"plain":"42","quoted":"42","single":"it's","boolean":"true",
                                  "number":"1.50","block":"two\nlines\n","str":"0x10"})"));
  EXPECT_THAT(r.problems, IsEmpty());
}

TEST_F(SettingsTest, BadEntriesAreSkippedAndTheOthersRead) {
  write_project(
      "plugins:\n"
      "  dev.example.guard:\n"
      "    channel: \"#project\"\n"
      "    chanel: \"#typo\"\n"
      "    timeout: {seconds: 5}\n"
      "    ratio: [1, 2]\n"
      "    notify: !!bool false\n"
      "    ? [a, b]\n"
      "    : 1\n");
  const ResolvedSettings r = resolve(guard());
  EXPECT_EQ(r.values, object(R"({"channel":"#project","timeout":30,"ratio":0.5,"notify":true})"));
  const std::string file = (project() / ".escouade.yml").string();
  EXPECT_THAT(
      r.problems,
      ::testing::UnorderedElementsAre(
          file + ": line 4, column 13: plugins.dev.example.guard.chanel: not a setting of "
                 "dev.example.guard; it has channel, notify, ratio, timeout; skipped",
          HasSubstr("line 5, column 14: plugins.dev.example.guard.timeout: a mapping is skipped"),
          HasSubstr("line 6, column 12: plugins.dev.example.guard.ratio: a list is skipped"),
          HasSubstr("notify: the tag tag:yaml.org,2002:bool is not read"),
          HasSubstr("line 8, column 7: plugins.dev.example.guard: a key that is a list")));
}

TEST_F(SettingsTest, ARepeatedNameKeepsItsLastValue) {
  write_project(
      "plugins:\n"
      "  dev.example.guard:\n"
      "    channel: \"#first\"\n"
      "    channel: \"#last\"\n");
  const ResolvedSettings r = resolve(guard());
  EXPECT_EQ(r.values.at("channel"), "#last");
  EXPECT_THAT(r.problems, ElementsAre(HasSubstr("line 4, column 14: plugins.dev.example.guard."
                                                "channel: given twice; the last one is read")));
}

TEST_F(SettingsTest, OnlyTheFirstDocumentIsRead) {
  write_project(
      "plugins:\n  dev.example.guard: {channel: \"#one\"}\n---\nplugins:\n  dev.example.guard: "
      "{channel: \"#two\"}\n");
  const ResolvedSettings r = resolve(guard());
  EXPECT_EQ(r.values.at("channel"), "#one");
  EXPECT_THAT(r.problems,
              ElementsAre(HasSubstr("holds 2 documents (---); only the first is read")));
}

TEST_F(SettingsTest, AByteOrderMarkIsSkippedAndOtherTextRefused) {
  write_project("\xEF\xBB\xBFplugins:\n  dev.example.guard: {channel: \"#bom\"}\n");
  EXPECT_EQ(resolve(guard()).values.at("channel"), "#bom");
  EXPECT_THAT(resolve(guard()).problems, IsEmpty());

  write_project("plugins:\n  dev.example.guard: {channel: \"\xC3\x28\"}\n");
  ResolvedSettings r = resolve(guard());
  EXPECT_EQ(r.values.at("channel"), "#dev");
  EXPECT_THAT(r.problems, ElementsAre(HasSubstr(".escouade.yml: not UTF-8 text")));

  write_project(std::string("plugins:\n  dev.example.guard: {channel: \"a\0b\"}\n", 45));
  r = resolve(guard());
  EXPECT_EQ(r.values.at("channel"), "#dev");
  EXPECT_THAT(r.problems, ElementsAre(HasSubstr("not UTF-8 text")));
}

TEST_F(SettingsTest, AHugeFileIsReportedUnread) {
  ASSERT_TRUE(store_.set(guard(), object(R"({"channel":"#ops"})")));
  std::string yaml = "plugins:\n  dev.example.guard:\n    channel: \"#huge\"\n";
  while (yaml.size() <= kMaxProjectFileBytes)
    yaml += "# filler filler filler filler filler\n";
  write_project(yaml);
  const ResolvedSettings r = resolve(guard());
  EXPECT_EQ(r.values.at("channel"), "#ops");
  EXPECT_THAT(r.problems, ElementsAre(HasSubstr(std::to_string(yaml.size()) +
                                                " bytes; Escouade reads at most 1048576 (1 MiB)")));
}

TEST_F(SettingsTest, DeepNestingIsReportedNotFollowed) {
  std::string yaml = "plugins:\n  dev.example.guard:\n    channel: ";
  yaml += std::string(5000, '[') + std::string(5000, ']') + "\n";
  write_project(yaml);
  const ResolvedSettings r = resolve(guard());
  EXPECT_EQ(r.values.at("channel"), "#dev");
  EXPECT_THAT(r.problems, SizeIs(1));
}

TEST_F(SettingsTest, AFolderIsReportedNotRead) {
  fs::create_directory(project() / ".escouade.yml");
  const ResolvedSettings r = resolve(guard());
  EXPECT_EQ(r.values.at("channel"), "#dev");
  EXPECT_THAT(r.problems, ElementsAre((project() / ".escouade.yml").string() +
                                      ": a folder; Escouade reads .escouade.yml only as a "
                                      "regular file"));
}

// A FIFO with no writer would block a plain open for reading forever: this test hangs (and
// ctest's timeout fails it) if the reader opens it that way.
TEST_F(SettingsTest, ANamedPipeIsReportedWithoutBlocking) {
  const fs::path fifo = project() / ".escouade.yml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const ResolvedSettings r = resolve(guard());
  EXPECT_EQ(r.values.at("channel"), "#dev");
  EXPECT_THAT(r.problems, ElementsAre(HasSubstr(": a named pipe; Escouade reads .escouade.yml "
                                                "only as a regular file")));
}

TEST_F(SettingsTest, ALinkIsNotFollowed) {
  write_file(project() / "elsewhere.yml", "plugins:\n  dev.example.guard: {channel: \"#link\"}\n");
  fs::create_symlink(project() / "elsewhere.yml", project() / ".escouade.yml");
  const ResolvedSettings r = resolve(guard());
  EXPECT_EQ(r.values.at("channel"), "#dev");
  EXPECT_THAT(r.problems, ElementsAre(HasSubstr(": a symbolic link; Escouade reads .escouade.yml "
                                                "only as a regular file")));
}

TEST_F(SettingsTest, StoreAndProjectProblemsComeTogether) {
  write_file(store_.file_of("dev.example.guard"), "not json");
  write_project("plugins:\n  dev.example.guard:\n    channel: \"#project\"\n    timeout: soon\n");
  const ResolvedSettings r = resolve(guard());
  EXPECT_EQ(r.values, object(R"({"channel":"#project","timeout":30,"ratio":0.5,"notify":true})"));
  EXPECT_THAT(r.problems, ElementsAre(HasSubstr("dev.example.guard.json: not valid JSON"),
                                      HasSubstr("timeout: expected a number, got \"soon\"")));
}

TEST(ProjectSettings, ReadsTheEntriesAsWritten) {
  const TempDir project;
  write_file(project.path() / ".escouade.yml",
             "plugins:\n  dev.example.guard:\n    channel: '#x'\n    count: 3\n");
  const ProjectSettings p = read_project_settings(project.path(), "dev.example.guard");
  EXPECT_EQ(p.file, project.path() / ".escouade.yml");
  EXPECT_THAT(p.problems, IsEmpty());
  ASSERT_THAT(p.values, SizeIs(2));
  EXPECT_EQ(p.values[0].name, "channel");
  EXPECT_EQ(p.values[0].text, "#x");
  EXPECT_FALSE(p.values[0].plain);
  EXPECT_EQ(p.values[0].line, 3);
  EXPECT_EQ(p.values[0].column, 14);
  EXPECT_EQ(p.values[1].name, "count");
  EXPECT_TRUE(p.values[1].plain);
  EXPECT_EQ(p.values[1].where,
            p.file.string() + ": line 4, column 12: plugins.dev.example.guard.count");
}

TEST(SettingNumber, WholeNumbersAnswerAsIntegers) {
  EXPECT_TRUE(setting_number(3.0).is_int64());
  EXPECT_TRUE(setting_number(-0.0).is_int64());
  EXPECT_TRUE(setting_number(9007199254740992.0).is_int64());
  EXPECT_TRUE(setting_number(18014398509481984.0).is_double());
  EXPECT_TRUE(setting_number(0.1).is_double());
}

}  // namespace
}  // namespace escouade::services
