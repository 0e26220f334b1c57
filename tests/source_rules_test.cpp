// Rules of the source tree that a compiler does not check: no error code written as a number
// outside generated code (the codes come from the schema, protocol/gen/errors.hpp), and the
// one-way layering of src/ (../shared/DESIGN.md: a folder includes only folders listed below
// it). Each check also runs on a small tree made to break it, to show that it can fail.

#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "base/temp_dir.hpp"

namespace {

namespace fs = std::filesystem;

const fs::path kSource = ESCOUADE_SOURCE_DIR;
const fs::path kDesign = fs::path(ESCOUADE_SOURCE_DIR) / ".." / "shared" / "DESIGN.md";

// src/'s folders, highest first, as DESIGN.md lists them.
// (src/net, the one HTTP and WebSocket client, has no sources yet: its place is kept.)
const std::vector<std::string> kLayers = {
    "host",    "supervisor", "services", "net",      "sandbox",  "runtime", "rpc",
    "journal", "policy",     "manifest", "protocol", "platform", "base"};

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool is_code(const fs::path& p) {
  const auto ext = p.extension();
  return ext == ".cpp" || ext == ".hpp" || ext == ".h";
}

// A line with its // comment taken off (a // inside a string literal is kept).
std::string without_comment(const std::string& line) {
  bool in_string = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\' && in_string) {
      ++i;
      continue;
    }
    if (line[i] == '"') in_string = !in_string;
    if (!in_string && line.compare(i, 2, "//") == 0) return line.substr(0, i);
  }
  return line;
}

// Whether `code` holds -32 and three digits: a JSON-RPC error code (-32768 to -32000, the range
// the protocol's codes are in).
bool holds_error_code(const std::string& code) {
  for (std::size_t at = code.find("-32"); at != std::string::npos; at = code.find("-32", at + 1)) {
    const auto digit = [&](std::size_t i) {
      return i < code.size() && std::isdigit(static_cast<unsigned char>(code[i]));
    };
    if (digit(at + 3) && digit(at + 4) && digit(at + 5) && !digit(at + 6)) return true;
  }
  return false;
}

// "file:line: text" for each -32xxx in the code (not the comments) of the non-test sources
// under `roots`, generated files left out.
std::vector<std::string> code_literals(const fs::path& top, const std::vector<std::string>& roots) {
  std::vector<std::string> found;
  for (const auto& root : roots) {
    if (!fs::exists(top / root)) continue;
    for (const auto& e : fs::recursive_directory_iterator(top / root)) {
      const fs::path& p = e.path();
      if (!e.is_regular_file() || !is_code(p)) continue;
      const std::string name = p.filename().string();
      if (name.find("_test.") != std::string::npos) continue;  // tests quote the wire
      if (p.string().find("/generated/") != std::string::npos) continue;
      if (name == "protocol.hpp" && p.parent_path().filename() == "escouade") continue;  // SDK's
      std::istringstream in(read(p));
      int n = 0;
      for (std::string line; std::getline(in, line);) {
        ++n;
        if (holds_error_code(without_comment(line))) {
          found.push_back(fs::relative(p, top).string() + ":" + std::to_string(n) + ": " + line);
        }
      }
    }
  }
  return found;
}

// "file:line: includes X" for each include of src/<a>/ from src/<b>/ where a is above b.
std::vector<std::string> upward_includes(const fs::path& src) {
  static const std::regex kInclude(R"(^\s*#\s*include\s+"([a-z_]+)/)");
  std::vector<std::string> found;
  auto rank = [](const std::string& folder) -> int {
    for (std::size_t i = 0; i < kLayers.size(); ++i)
      if (kLayers[i] == folder) return static_cast<int>(i);
    return -1;
  };
  for (const auto& e : fs::recursive_directory_iterator(src)) {
    if (!e.is_regular_file() || !is_code(e.path())) continue;
    const std::string folder = fs::relative(e.path(), src).begin()->string();
    const int own = rank(folder);
    if (own < 0) continue;
    std::istringstream in(read(e.path()));
    int n = 0;
    for (std::string line; std::getline(in, line);) {
      ++n;
      std::smatch m;
      if (!std::regex_search(line, m, kInclude)) continue;
      const int other = rank(m[1]);
      if (other >= 0 && other < own) {
        found.push_back(fs::relative(e.path(), src).string() + ":" + std::to_string(n) +
                        ": includes " + std::string(m[1]) + "/");
      }
    }
  }
  return found;
}

// "file:line: includes X" for each include matching `header` (its first group names it) in a
// file outside `folder`, anywhere under `top`'s code folders `roots`.
std::vector<std::string> includes_outside(const fs::path& top,
                                          const std::vector<std::string>& roots,
                                          const std::regex& header, const std::string& folder) {
  std::vector<std::string> found;
  for (const auto& root : roots) {
    if (!fs::exists(top / root)) continue;
    for (const auto& e : fs::recursive_directory_iterator(top / root)) {
      if (!e.is_regular_file() || !is_code(e.path())) continue;
      const std::string rel = fs::relative(e.path(), top).generic_string();
      if (rel.rfind(folder, 0) == 0) continue;
      std::istringstream in(read(e.path()));
      int n = 0;
      for (std::string line; std::getline(in, line);) {
        ++n;
        std::smatch m;
        if (std::regex_search(line, m, header))
          found.push_back(rel + ":" + std::to_string(n) + ": includes " + std::string(m[1]));
      }
    }
  }
  return found;
}

// Each include of an engine header (jsapi.h, jsfriendapi.h, js/…, mozilla/…) outside
// src/sandbox/spidermonkey/ (STYLE.md, habit 9: the JS engine lives behind one interface in
// one folder).
std::vector<std::string> engine_includes(const fs::path& top,
                                         const std::vector<std::string>& roots) {
  static const std::regex kEngine(R"(^\s*#\s*include\s+<(jsapi\.h|jsfriendapi\.h|js/|mozilla/))");
  return includes_outside(top, roots, kEngine, "src/sandbox/spidermonkey/");
}

// Each include of Boost.Beast or OpenSSL (Asio's TLS streams included) outside src/net/
// (DESIGN.md: the one HTTP(S) and WebSocket client; their headers cost minutes of compile time,
// and one folder holds every use of them).
std::vector<std::string> network_includes(const fs::path& top,
                                          const std::vector<std::string>& roots) {
  static const std::regex kNetwork(
      R"(^\s*#\s*include\s+<(boost/beast[^>]*|openssl/[^>]*|boost/asio/ssl[^>]*)>)");
  return includes_outside(top, roots, kNetwork, "src/net/");
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines)
    out += l + "\n";
  return out;
}

TEST(SourceRules, NoErrorCodeIsWrittenAsANumberOutsideGeneratedCode) {
  const auto found =
      code_literals(kSource, {"src", "apps", "tools", "bench", "examples", "sdk/cpp/include"});
  EXPECT_TRUE(found.empty()) << "use proto::ErrorCode (protocol/gen/errors.hpp):\n"
                             << joined(found);
}

TEST(SourceRules, TheLiteralCheckFindsALiteralAndLeavesCommentsAlone) {
  escouade::TempDir tree("escouade-rules");
  fs::create_directories(tree.path() / "src" / "x");
  std::ofstream(tree.path() / "src" / "x" / "a.cpp")
      << "// -32602 in a comment is fine\n"
      << "const char* url = \"http://example.org\";  // -32603 too\n"
      << "int code = -32602;\n";
  const auto found = code_literals(tree.path(), {"src"});
  ASSERT_EQ(found.size(), 1u) << joined(found);
  EXPECT_NE(found[0].find("a.cpp:3"), std::string::npos);
}

TEST(SourceRules, NoFolderOfSrcIncludesOneAboveIt) {
  const auto found = upward_includes(kSource / "src");
  EXPECT_TRUE(found.empty()) << "DESIGN.md: a folder of src/ may include only those below it:\n"
                             << joined(found);
}

TEST(SourceRules, TheLayeringCheckFindsAnIncludeUpwards) {
  escouade::TempDir tree("escouade-rules");
  fs::create_directories(tree.path() / "rpc");
  std::ofstream(tree.path() / "rpc" / "a.cpp") << "#include \"base/result.hpp\"\n"
                                               << "#include \"services/bind.hpp\"\n";
  const auto found = upward_includes(tree.path());
  ASSERT_EQ(found.size(), 1u) << joined(found);
  EXPECT_NE(found[0].find("includes services/"), std::string::npos);
}

TEST(SourceRules, OnlyTheSpiderMonkeyFolderIncludesTheEngine) {
  const auto found = engine_includes(kSource, {"src", "apps", "tests", "bench"});
  EXPECT_TRUE(found.empty()) << "only src/sandbox/spidermonkey/ includes jsapi.h:\n"
                             << joined(found);
}

TEST(SourceRules, TheEngineCheckFindsAnEngineHeaderOutsideItsFolder) {
  escouade::TempDir tree("escouade-rules");
  fs::create_directories(tree.path() / "src" / "sandbox" / "spidermonkey");
  std::ofstream(tree.path() / "src" / "sandbox" / "spidermonkey" / "a.cpp")
      << "#include <jsapi.h>\n";
  std::ofstream(tree.path() / "src" / "sandbox" / "b.cpp") << "#include <vector>\n"
                                                           << "#include <js/Modules.h>\n";
  const auto found = engine_includes(tree.path(), {"src"});
  ASSERT_EQ(found.size(), 1u) << joined(found);
  EXPECT_NE(found[0].find("src/sandbox/b.cpp:2"), std::string::npos);
}

// Tests and benches may hold their own TLS servers (a test CA on loopback): the rule is the
// product's, src/ and apps/.
TEST(SourceRules, OnlyTheNetFolderIncludesBeastAndOpenSsl) {
  const auto found = network_includes(kSource, {"src", "apps"});
  EXPECT_TRUE(found.empty()) << "only src/net/ includes Boost.Beast and OpenSSL:\n"
                             << joined(found);
}

TEST(SourceRules, TheNetworkCheckFindsBeastOrOpenSslOutsideItsFolder) {
  escouade::TempDir tree("escouade-rules");
  fs::create_directories(tree.path() / "src" / "net");
  fs::create_directories(tree.path() / "src" / "services");
  std::ofstream(tree.path() / "src" / "net" / "a.cpp") << "#include <boost/beast/http.hpp>\n"
                                                       << "#include <openssl/ssl.h>\n";
  std::ofstream(tree.path() / "src" / "services" / "b.cpp")
      << "#include <boost/asio/post.hpp>\n"
      << "#include <boost/beast/websocket.hpp>\n"
      << "  #  include <openssl/x509.h>\n"
      << "#include <boost/asio/ssl/context.hpp>\n";
  const auto found = network_includes(tree.path(), {"src"});
  ASSERT_EQ(found.size(), 3u) << joined(found);
  EXPECT_NE(found[0].find("src/services/b.cpp:2: includes boost/beast/websocket.hpp"),
            std::string::npos);
  EXPECT_NE(found[1].find("b.cpp:3: includes openssl/x509.h"), std::string::npos);
  EXPECT_NE(found[2].find("b.cpp:4: includes boost/asio/ssl/context.hpp"), std::string::npos);
}

// The order above is DESIGN.md's; when the shared design is beside the checkout, they agree.
TEST(SourceRules, TheLayersAreDesignsOrder) {
  if (!fs::exists(kDesign)) GTEST_SKIP() << kDesign << " is not beside the checkout";
  static const std::regex kLine(R"(^src/([a-z_]+)\s)");
  std::vector<std::string> design;
  std::istringstream in(read(kDesign));
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, kLine)) design.push_back(m[1]);
  }
  EXPECT_EQ(design, kLayers);
}

}  // namespace
