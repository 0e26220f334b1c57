// The scaffold's parts without a process: the embedded files against the source tree, the id
// made from a folder's name, the placeholders and the refusals that come from the manifest.

#include "scaffold/scaffold.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>

#include "base/temp_dir.hpp"
#include "manifest/rules.hpp"
#include "scaffold/embedded.hpp"

namespace {

namespace fs = std::filesystem;
using escouade::scaffold::Identity;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Every regular file under `root`, by its path relative to it, with its bytes.
std::map<std::string, std::string> files_under(const fs::path& root, bool recursive) {
  std::map<std::string, std::string> out;
  auto add = [&](const fs::directory_entry& e) {
    if (e.is_regular_file()) {
      out[e.path().lexically_relative(root).generic_string()] = read_file(e.path());
    }
  };
  if (recursive) {
    for (const auto& e : fs::recursive_directory_iterator(root))
      add(e);
  } else {
    for (const auto& e : fs::directory_iterator(root))
      add(e);
  }
  return out;
}

std::map<std::string, std::string> embedded(std::span<const escouade::scaffold::EmbeddedFile> f) {
  std::map<std::string, std::string> out;
  for (const auto& e : f)
    out[std::string(e.path)] = std::string(e.bytes);
  return out;
}

TEST(ScaffoldEmbedded, TheTemplateIsTheSourceTreesFileForFile) {
  const auto on_disk = files_under(ESCOUADE_SCAFFOLD_TEMPLATE, true);
  EXPECT_EQ(embedded(escouade::scaffold::template_files()), on_disk);
  EXPECT_TRUE(on_disk.contains("escouade-plugin.json"));
  EXPECT_TRUE(on_disk.contains("src/main.cpp"));
}

TEST(ScaffoldEmbedded, TheJsTemplateIsTheSourceTreesFileForFile) {
  const auto on_disk = files_under(ESCOUADE_SCAFFOLD_JS_TEMPLATE, true);
  EXPECT_EQ(embedded(escouade::scaffold::js_files()), on_disk);
  EXPECT_EQ(on_disk.size(), 3u);
  EXPECT_TRUE(on_disk.contains("plugin.mjs"));
}

// What `new js` writes has every placeholder filled: the id and name, and the error codes from
// the protocol's; the manifest comes first.
TEST(ScaffoldEmbedded, TheJsPlanFillsEveryPlaceholder) {
  Identity who;
  who.id = "dev.example.js-one";
  who.name = "JS \"one\"";
  who.target = "js-one";
  const auto files = escouade::scaffold::plan_js(who);
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].path, "escouade-plugin.json");
  const std::regex placeholder("@[A-Z_]+@");
  for (const auto& f : files) {
    EXPECT_FALSE(std::regex_search(f.bytes, placeholder)) << f.path;
  }
  const auto module = std::find_if(files.begin(), files.end(),
                                   [](const auto& f) { return f.path == "plugin.mjs"; });
  ASSERT_NE(module, files.end());
  EXPECT_TRUE(std::regex_search(
      module->bytes,
      std::regex(R"(kParse = -\d+, kInvalidRequest = -\d+, kMethodNotFound = -\d+;)")));
  EXPECT_NE(module->bytes.find("// dev.example.js-one: an Escouade plugin"), std::string::npos);
  EXPECT_NE(files[0].bytes.find(R"("name": "JS \"one\"")"), std::string::npos) << files[0].bytes;
}

TEST(ScaffoldEmbedded, TheSdkHeadersAreTheSourceTreesByteForByte) {
  const auto on_disk = files_under(ESCOUADE_SDK_HEADERS, false);
  EXPECT_EQ(embedded(escouade::scaffold::sdk_headers()), on_disk);
  EXPECT_TRUE(on_disk.contains("plugin.hpp"));
  EXPECT_TRUE(on_disk.contains("protocol.hpp"));
}

TEST(ScaffoldEmbedded, TheTemplateUsesOnlyTheKnownPlaceholders) {
  const std::set<std::string> known = {"@ID@", "@NAME@", "@TARGET@"};
  const std::regex placeholder("@[A-Z_]+@");
  for (const auto& f : escouade::scaffold::template_files()) {
    const std::string text(f.bytes);
    for (std::sregex_iterator it(text.begin(), text.end(), placeholder), end; it != end; ++it) {
      EXPECT_TRUE(known.contains(it->str())) << f.path << ": " << it->str();
    }
  }
}

TEST(ScaffoldId, ComesFromTheFolderNameInLowerCaseWithoutWhatAnIdCannotHold) {
  using escouade::scaffold::id_from_folder_name;
  EXPECT_EQ(id_from_folder_name("guard"), "dev.example.guard");
  EXPECT_EQ(id_from_folder_name("My_Plugin.v2"), "dev.example.mypluginv2");
  EXPECT_EQ(id_from_folder_name("--Slack notifier--"), "dev.example.slacknotifier");
  EXPECT_EQ(id_from_folder_name("ticket-watch"), "dev.example.ticket-watch");
  EXPECT_EQ(id_from_folder_name("caf\xc3\xa9"), "dev.example.caf");
  EXPECT_EQ(id_from_folder_name("___"), std::nullopt);
  EXPECT_EQ(id_from_folder_name("-"), std::nullopt);
  EXPECT_EQ(id_from_folder_name(""), std::nullopt);
}

TEST(ScaffoldId, TheFolderNameIsItsLastComponentOnceResolved) {
  using escouade::scaffold::folder_name;
  EXPECT_EQ(folder_name("/tmp/x/My Plugin"), "My Plugin");
  EXPECT_EQ(folder_name("/tmp/x/guard/"), "guard");
  EXPECT_EQ(folder_name("/tmp/x/guard/sub/.."), "guard");
  EXPECT_EQ(folder_name("."), fs::current_path().filename().string());
}

TEST(ScaffoldFill, ReplacesThePlaceholdersAndEscapesTheNameInJson) {
  const Identity who{"dev.example.x", "Say \"hi\"\\\n", "x"};
  using escouade::scaffold::fill;
  EXPECT_EQ(fill("@ID@ @TARGET@ @NAME@ @OTHER@ a@b @", who, false),
            "dev.example.x x Say \"hi\"\\\n @OTHER@ a@b @");
  EXPECT_EQ(fill("\"@NAME@\"", who, true), R"("Say \"hi\"\\\n")");
}

TEST(ScaffoldIdentity, TakesTheOptionsOrTheFolderName) {
  using escouade::scaffold::settle_identity;
  auto derived = settle_identity({"/tmp/none/Ticket Watch", std::nullopt, std::nullopt});
  ASSERT_TRUE(derived) << derived.error().message;
  EXPECT_EQ(derived->id, "dev.example.ticketwatch");
  EXPECT_EQ(derived->name, "Ticket Watch");
  EXPECT_EQ(derived->target, "ticketwatch");

  auto given = settle_identity({"/tmp/none/x", "org.acme.guard-2", "Acme \"Guard\""});
  ASSERT_TRUE(given) << given.error().message;
  EXPECT_EQ(given->id, "org.acme.guard-2");
  EXPECT_EQ(given->name, "Acme \"Guard\"");
  EXPECT_EQ(given->target, "guard-2");
}

TEST(ScaffoldIdentity, RefusesWhatTheManifestRefusesInItsOwnWords) {
  using escouade::scaffold::settle_identity;
  for (const std::string bad : {"Dev.Example.Guard", "guard", "dev..x", "dev.example.-x"}) {
    auto r = settle_identity({"/tmp/none/x", bad, std::nullopt});
    ASSERT_FALSE(r) << bad;
    const auto why = escouade::manifest::id_problem(bad);
    ASSERT_TRUE(why) << bad;
    EXPECT_EQ(r.error().message, "id: \"" + bad + "\": " + *why);
  }
  auto empty_name = settle_identity({"/tmp/none/x", std::nullopt, ""});
  ASSERT_FALSE(empty_name);
  EXPECT_EQ(empty_name.error().message.rfind("name: ", 0), 0u) << empty_name.error().message;

  auto nameless = settle_identity({"/tmp/none/___", std::nullopt, std::nullopt});
  ASSERT_FALSE(nameless);
  EXPECT_NE(nameless.error().message.find("--id"), std::string::npos);
}

TEST(ScaffoldPlan, WritesTheTemplateFilledAndTheHeadersUnderThirdParty) {
  const Identity who{"dev.example.watch", "Watch", "watch"};
  std::map<std::string, std::string> planned;
  for (auto& f : escouade::scaffold::plan_cpp(who))
    planned[f.path] = f.bytes;

  std::set<std::string> paths;
  for (const auto& [path, bytes] : planned)
    paths.insert(path);
  std::set<std::string> expected = {"escouade-plugin.json", "src/main.cpp", "CMakeLists.txt",
                                    "README.md", ".gitignore"};
  for (const auto& h : escouade::scaffold::sdk_headers())
    expected.insert("third_party/escouade/include/escouade/" + std::string(h.path));
  EXPECT_EQ(paths, expected);

  for (const auto& [path, bytes] : planned) {
    EXPECT_EQ(bytes.find("@ID@"), std::string::npos) << path;
    EXPECT_EQ(bytes.find("@NAME@"), std::string::npos) << path;
    EXPECT_EQ(bytes.find("@TARGET@"), std::string::npos) << path;
  }
  EXPECT_NE(planned["src/main.cpp"].find("escouade::Plugin plugin{\"dev.example.watch\"}"),
            std::string::npos);
  EXPECT_NE(planned["CMakeLists.txt"].find("OUTPUT_NAME watch"), std::string::npos);
  EXPECT_EQ(planned[".gitignore"], "build/\nbin/\n");
}

TEST(ScaffoldWrite, RefusesAPathThatIsAFileAndWritesNothing) {
  escouade::TempDir dir("scaffold-unit");
  std::ofstream(dir.path() / "plain") << "x";
  auto r = escouade::scaffold::scaffold_cpp({dir.path() / "plain", std::nullopt, std::nullopt});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("not a folder"), std::string::npos) << r.error().message;
  EXPECT_EQ(read_file(dir.path() / "plain"), "x");
}

TEST(ScaffoldWrite, RefusesAnEmptyPath) {
  auto r = escouade::scaffold::scaffold_cpp({"", "dev.example.x", std::nullopt});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("no folder given"), std::string::npos) << r.error().message;
}

}  // namespace
