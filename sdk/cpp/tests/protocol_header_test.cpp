// sdk/cpp/include/escouade/protocol.hpp is generated from schema/plugin-protocol-1.json and
// checked in: it must be what the generator writes today. So must the TypeScript SDK's
// sdk/typescript/src/protocol.ts (escouade-codegen --ts).

#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "escouade/protocol.hpp"

namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs escouade-codegen `mode` (--sdk: the header, --ts: protocol.ts) on `schema`; the file it
// wrote.
std::string generate(const fs::path& schema, const fs::path& out, const char* mode = "--sdk") {
  const std::string command = std::string(ESCOUADE_CODEGEN) + " " + mode + " '" + schema.string() +
                              "' '" + out.string() + "'";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return read_file(out);
}

fs::path temp_path(const std::string& name) {
  return fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
}

TEST(ProtocolHeader, TheCheckedInHeaderIsWhatTheSchemaGives) {
  const fs::path out = temp_path("escouade-sdk-protocol.hpp");
  const std::string generated = generate(ESCOUADE_PROTOCOL_SCHEMA, out);
  fs::remove(out);
  ASSERT_FALSE(generated.empty());
  EXPECT_TRUE(generated == read_file(ESCOUADE_SDK_PROTOCOL_HPP))
      << "sdk/cpp/include/escouade/protocol.hpp is out of date; run: escouade-codegen --sdk "
         "schema/plugin-protocol-1.json sdk/cpp/include/escouade/protocol.hpp";
}

TEST(ProtocolHeader, AChangedSchemaGivesADifferentHeader) {
  boost::json::value schema = boost::json::parse(read_file(ESCOUADE_PROTOCOL_SCHEMA));
  schema.at("definitions").at("Decision").at("properties").as_object()["remember"] =
      boost::json::object{{"type", "boolean"}};
  const fs::path in = temp_path("escouade-sdk-schema.json");
  const fs::path out = temp_path("escouade-sdk-changed.hpp");
  std::ofstream(in) << boost::json::serialize(schema);
  const std::string generated = generate(in, out);
  fs::remove(in);
  fs::remove(out);
  EXPECT_NE(generated, read_file(ESCOUADE_SDK_PROTOCOL_HPP));
  EXPECT_NE(generated.find("std::optional<bool> remember{};"), std::string::npos);
}

TEST(TypeScriptProtocol, TheCheckedInFileIsWhatTheSchemaGives) {
  const fs::path out = temp_path("escouade-sdk-protocol.ts");
  const std::string generated = generate(ESCOUADE_PROTOCOL_SCHEMA, out, "--ts");
  fs::remove(out);
  ASSERT_FALSE(generated.empty());
  EXPECT_TRUE(generated == read_file(ESCOUADE_SDK_PROTOCOL_TS))
      << "sdk/typescript/src/protocol.ts is out of date; run scripts/regen-sdk.sh";
}

TEST(TypeScriptProtocol, AChangedSchemaGivesADifferentFile) {
  boost::json::value schema = boost::json::parse(read_file(ESCOUADE_PROTOCOL_SCHEMA));
  schema.at("definitions").at("Decision").at("properties").as_object()["remember"] =
      boost::json::object{{"type", "boolean"}};
  const fs::path in = temp_path("escouade-sdk-schema-ts.json");
  const fs::path out = temp_path("escouade-sdk-changed.ts");
  std::ofstream(in) << boost::json::serialize(schema);
  const std::string generated = generate(in, out, "--ts");
  fs::remove(in);
  fs::remove(out);
  EXPECT_NE(generated, read_file(ESCOUADE_SDK_PROTOCOL_TS));
  EXPECT_NE(generated.find("  remember?: boolean;\n"), std::string::npos);
  EXPECT_NE(generated.find("return `${at}.remember: must be a boolean`;"), std::string::npos);
}

TEST(ProtocolHeader, TypesConvertBothWaysAndReadersNameTheField) {
  escouade::Decision d{escouade::DecisionDecision::deny, "no"};
  const boost::json::value v = boost::json::value_from(d);
  EXPECT_EQ(v, boost::json::parse(R"({"decision":"deny","message":"no"})"));
  escouade::Decision back;
  EXPECT_EQ(escouade::read(v, back), std::nullopt);
  EXPECT_EQ(back, d);
  EXPECT_EQ(escouade::read(boost::json::parse(R"({"decision":"maybe"})"), back),
            "params.decision: \"maybe\" is not one of allow, deny, ask");
  escouade::LogParams log;
  EXPECT_EQ(escouade::read(boost::json::parse(R"({"level":"info","message":"x","extra":1})"), log),
            std::nullopt);
  EXPECT_EQ(escouade::to_string(escouade::FactName::workflow_step_entered),
            "workflow.step_entered");
  EXPECT_EQ(escouade::fact_name_from_string("ticket.merged"), escouade::FactName::ticket_merged);
  EXPECT_EQ(escouade::method::PermissionsDecide::kTimeoutMs, 500u);
  EXPECT_EQ(escouade::method::FilesRead::kName, "files/read");
}

}  // namespace
