// The generator, run as the build runs it: a change to the schema changes the generated code,
// and a construct it cannot express stops it with the path of that construct.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs the generator (no shell) with stderr sent to a file; returns its exit status.
int run_codegen(const fs::path& schema, const fs::path& out, const fs::path& err) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::string prog = ESCOUADE_CODEGEN, a1 = schema.string(), a2 = out.string();
  std::vector<char*> argv{prog.data(), a1.data(), a2.data(), nullptr};
  pid_t pid = 0;
  int rc = posix_spawn(&pid, prog.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class Codegen : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("escouade-codegen-test-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "out");
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write_schema(const json::value& v) {
    fs::path p = dir_ / "schema.json";
    std::ofstream(p) << json::serialize(v);
    return p;
  }

  fs::path dir_;
};

TEST_F(Codegen, SchemaChangesReachTheGeneratedCode) {
  json::value schema = json::parse(read(ESCOUADE_PROTOCOL_SCHEMA));
  ASSERT_EQ(run_codegen(write_schema(schema), dir_ / "out", dir_ / "err"), 0) << read(dir_ / "err");
  const std::string before = read(dir_ / "out" / "methods.cpp");
  EXPECT_NE(before.find("{\"permissions/decide\", Direction::to_plugin, false, "
                        "::escouade::proto::Delivery::kept, 500,"),
            std::string::npos);
  // Of what the host sends a plugin, facts alone may be dropped on the way.
  EXPECT_NE(before.find("{\"events/fact\", Direction::to_plugin, true, "
                        "::escouade::proto::Delivery::droppable,"),
            std::string::npos);

  auto& methods = schema.at("x-methods").as_object();
  methods["permissions/decide"].as_object()["timeoutMs"] = 750;
  methods["test/echo"] = json::parse(
      R"({"direction":"toEscouade","params":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]},"result":{"type":"string"}})");
  ASSERT_EQ(run_codegen(write_schema(schema), dir_ / "out", dir_ / "err"), 0) << read(dir_ / "err");
  const std::string after = read(dir_ / "out" / "methods.cpp");
  EXPECT_NE(after.find("{\"permissions/decide\", Direction::to_plugin, false, "
                       "::escouade::proto::Delivery::kept, 750,"),
            std::string::npos);
  EXPECT_NE(after.find("\"test/echo\""), std::string::npos);
  EXPECT_NE(read(dir_ / "out" / "types.hpp").find("struct TestEchoParams {"), std::string::npos);
}

TEST_F(Codegen, UnsupportedConstructStopsTheBuildWithItsPath) {
  json::value schema = json::parse(read(ESCOUADE_PROTOCOL_SCHEMA));
  schema.at("definitions").at("LogParams").at("properties").as_object()["level"] =
      json::parse(R"({"oneOf":[{"type":"string"},{"type":"integer"}]})");
  EXPECT_EQ(run_codegen(write_schema(schema), dir_ / "out", dir_ / "err"), 1);
  EXPECT_NE(read(dir_ / "err").find("definitions.LogParams.level"), std::string::npos)
      << read(dir_ / "err");
}

TEST_F(Codegen, UnknownErrorNameIsRefused) {
  json::value schema = json::parse(read(ESCOUADE_PROTOCOL_SCHEMA));
  schema.at("x-methods").at("files/read").as_object()["errors"] = json::parse(R"(["teapot"])");
  EXPECT_EQ(run_codegen(write_schema(schema), dir_ / "out", dir_ / "err"), 1);
  EXPECT_NE(read(dir_ / "err").find("x-methods.files/read: errors names an unknown error: teapot"),
            std::string::npos)
      << read(dir_ / "err");
}

// The generator is told which notifications may be dropped (events/fact): a schema where that
// name is no notification the host sends, or no method at all, stops the build.
TEST_F(Codegen, ADroppableNameMustBeANotificationTheHostSends) {
  json::value schema = json::parse(read(ESCOUADE_PROTOCOL_SCHEMA));
  schema.at("x-methods").at("events/fact").as_object()["direction"] = "toEscouade";
  EXPECT_EQ(run_codegen(write_schema(schema), dir_ / "out", dir_ / "err"), 1);
  EXPECT_NE(read(dir_ / "err")
                .find("x-methods.events/fact: only a notification the host sends may be dropped"),
            std::string::npos)
      << read(dir_ / "err");
  schema.at("x-methods").as_object().erase("events/fact");
  EXPECT_EQ(run_codegen(write_schema(schema), dir_ / "out", dir_ / "err"), 1);
  EXPECT_NE(read(dir_ / "err").find("no method events/fact to drop"), std::string::npos)
      << read(dir_ / "err");
}

}  // namespace
