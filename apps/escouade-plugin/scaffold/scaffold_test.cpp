// The scaffold's parts without a process: the embedded files against the source tree, the id
// made from a folder's name, the placeholders and the refusals that come from the manifest.

#include "scaffold/scaffold.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json.hpp>
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
namespace json = boost::json;
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

TEST(ScaffoldEmbedded, TheTsTemplateIsTheSourceTreesFileForFile) {
  const auto on_disk = files_under(ESCOUADE_SCAFFOLD_TS_TEMPLATE, true);
  EXPECT_EQ(embedded(escouade::scaffold::ts_files()), on_disk);
  std::set<std::string> paths;
  for (const auto& [path, bytes] : on_disk)
    paths.insert(path);
  EXPECT_EQ(paths,
            (std::set<std::string>{"escouade-plugin.json", "package.json", "package-lock.json",
                                   "tsconfig.json", "src/plugin.ts", "src/main.ts",
                                   "test/plugin.test.ts", "README.md", "gitignore"}));
}

json::value parse_or_null(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  return ec ? json::value() : v;
}

// A member of an object, or null when it is not there (or `v` is not an object).
json::value member(const json::value& v, std::string_view key) {
  const auto* o = v.if_object();
  const auto* found = o ? o->if_contains(key) : nullptr;
  return found ? *found : json::value();
}

// What npm would publish of sdk/typescript: package.json, and what its "files" names (each
// folder with everything under it).
std::map<std::string, std::string> published_sdk() {
  const fs::path sdk = ESCOUADE_TS_SDK;
  std::map<std::string, std::string> out;
  out["package.json"] = read_file(sdk / "package.json");
  const json::value files = member(parse_or_null(out["package.json"]), "files");
  EXPECT_TRUE(files.is_array()) << "sdk/typescript/package.json has no \"files\"";
  if (!files.is_array()) return out;
  for (const auto& entry : files.as_array()) {
    const fs::path path = sdk / std::string(entry.as_string());
    if (fs::is_directory(path)) {
      for (const auto& [name, bytes] : files_under(path, true))
        out[std::string(entry.as_string()) + "/" + name] = bytes;
    } else {
      out[std::string(entry.as_string())] = read_file(path);
    }
  }
  return out;
}

TEST(ScaffoldEmbedded, TheVendoredTsSdkIsWhatNpmWouldPublishByteForByte) {
  const auto published = published_sdk();
  EXPECT_EQ(embedded(escouade::scaffold::ts_sdk_files()), published)
      << "sdk/typescript/package.json's \"files\" and what embed_files.cmake embeds part";
  EXPECT_TRUE(published.contains("bin/escouade-plugin-build.mjs"));
  EXPECT_TRUE(published.contains("src/index.ts"));
  EXPECT_TRUE(published.contains("src/testing.ts"));
  EXPECT_TRUE(published.contains("README.md"));
  EXPECT_FALSE(published.contains("tsconfig.json"));
}

// The lockfile `new ts` writes was made by npm for the SDK of the source tree: what it says of
// the SDK's package (the link to vendor/, its version, its dependencies) is what
// sdk/typescript/package.json says, its packages are at the versions the SDK and the template
// pin, and those of the template are the repository's own (the npm cache has them).
TEST(ScaffoldEmbedded, TheTsLockfileHoldsTheSdkOfTheSourceTree) {
  const std::string regenerate =
      "\nregenerate apps/escouade-plugin/scaffold/template-ts/package-lock.json: run "
      "scripts/regen-ts-template-lock.sh (see scaffold_ts.cpp)";
  const auto ts = embedded(escouade::scaffold::ts_files());
  const auto sdk_files = embedded(escouade::scaffold::ts_sdk_files());
  const json::value lock = parse_or_null(ts.at("package-lock.json"));
  const json::value package = parse_or_null(ts.at("package.json"));
  const json::value sdk = parse_or_null(sdk_files.at("package.json"));
  ASSERT_TRUE(lock.is_object());
  ASSERT_TRUE(package.is_object());
  ASSERT_TRUE(sdk.is_object());
  const json::value packages = member(lock, "packages");
  const std::string vendor(escouade::scaffold::kTsSdkFolder);

  EXPECT_EQ(member(lock, "name"), "@TARGET@");
  EXPECT_EQ(member(member(packages, ""), "name"), "@TARGET@");
  EXPECT_EQ(member(member(packages, ""), "devDependencies"), member(package, "devDependencies"))
      << regenerate;
  EXPECT_EQ(member(member(package, "devDependencies"), "@escouade-dev/plugin"),
            json::value("file:" + vendor));
  EXPECT_EQ(member(packages, "node_modules/@escouade-dev/plugin"),
            (json::object{{"resolved", vendor}, {"link", true}}))
      << regenerate;

  // What npm copies into the lockfile from a linked package's package.json.
  const json::value entry = member(packages, vendor);
  for (const char* key :
       {"name", "version", "license", "dependencies", "devDependencies", "optionalDependencies",
        "peerDependencies", "bin", "engines", "os", "cpu"}) {
    EXPECT_EQ(member(entry, key), member(sdk, key))
        << "the lockfile's " << vendor << " says of " << key << " what sdk/typescript/package.json"
        << " does not" << regenerate;
  }

  // Each package the SDK and the template pin, at its version (npm puts the SDK's beside the
  // others, or under the SDK's own node_modules).
  const auto locked_version = [&](const std::string& name) {
    for (const std::string& at : {"node_modules/" + name, vendor + "/node_modules/" + name}) {
      if (const json::value v = member(member(packages, at), "version"); !v.is_null()) return v;
    }
    return json::value();
  };
  for (const json::value& pins :
       {member(sdk, "dependencies"), member(package, "devDependencies")}) {
    ASSERT_TRUE(pins.is_object());
    for (const auto& [name, version] : pins.as_object()) {
      if (std::string(version.as_string()).starts_with("file:")) continue;
      EXPECT_EQ(locked_version(name), version) << name << regenerate;
    }
  }
  EXPECT_FALSE(member(member(sdk, "dependencies"), "esbuild").is_null());

  // TypeScript and Node's types: the repository's own, so that its npm cache has them.
  const json::value root =
      parse_or_null(read_file(fs::path(ESCOUADE_TS_SDK) / "../../package.json"));
  ASSERT_TRUE(root.is_object());
  for (const char* name : {"typescript", "@types/node"}) {
    EXPECT_EQ(member(member(package, "devDependencies"), name),
              member(member(root, "devDependencies"), name))
        << name << ": template-ts/package.json and the repository's package.json part"
        << regenerate;
  }
}

// What `new ts` writes: the template filled in (the name escaped in JSON), the manifest first,
// then the SDK's package under vendor/ as it is.
TEST(ScaffoldEmbedded, TheTsPlanFillsTheTemplateAndVendorsTheSdkAsItIs) {
  const Identity who{"dev.example.ts-one", "TS \"one\"", "ts-one"};
  const auto files = escouade::scaffold::plan_ts(who);
  ASSERT_FALSE(files.empty());
  EXPECT_EQ(files[0].path, "escouade-plugin.json");

  std::map<std::string, std::string> planned;
  for (const auto& f : files)
    planned[f.path] = f.bytes;
  std::set<std::string> expected;
  for (const auto& f : escouade::scaffold::ts_files())
    expected.insert(f.path == "gitignore" ? ".gitignore" : std::string(f.path));
  const std::string vendor = std::string(escouade::scaffold::kTsSdkFolder) + "/";
  for (const auto& f : escouade::scaffold::ts_sdk_files()) {
    expected.insert(vendor + std::string(f.path));
    EXPECT_EQ(planned[vendor + std::string(f.path)], f.bytes) << f.path;
  }
  std::set<std::string> paths;
  for (const auto& [path, bytes] : planned)
    paths.insert(path);
  EXPECT_EQ(paths, expected);
  EXPECT_EQ(files.size(), planned.size()) << "a path planned twice";

  const std::regex placeholder("@[A-Z_]+@");
  for (const auto& [path, bytes] : planned) {
    if (path.starts_with(vendor)) continue;
    EXPECT_FALSE(std::regex_search(bytes, placeholder)) << path;
  }
  const json::value manifest = parse_or_null(planned["escouade-plugin.json"]);
  EXPECT_EQ(member(manifest, "id"), "dev.example.ts-one");
  EXPECT_EQ(member(manifest, "name"), "TS \"one\"") << planned["escouade-plugin.json"];
  EXPECT_EQ(member(manifest, "run"), (json::object{{"js", "dist/plugin.mjs"}}));
  EXPECT_EQ(member(parse_or_null(planned["package.json"]), "name"), "ts-one");
  const json::value lock = parse_or_null(planned["package-lock.json"]);
  EXPECT_EQ(member(lock, "name"), "ts-one");
  EXPECT_EQ(member(member(member(lock, "packages"), ""), "name"), "ts-one");
  EXPECT_TRUE(parse_or_null(planned["tsconfig.json"]).is_object());
  EXPECT_EQ(planned[".gitignore"], "node_modules/\n.escouade-build/\n");
  EXPECT_NE(planned["src/plugin.ts"].find("new Plugin({ id: 'dev.example.ts-one' })"),
            std::string::npos);
  EXPECT_FALSE(std::regex_search(planned["src/main.ts"], std::regex("(^|\n)export ")))
      << "a bundle exports nothing";
  EXPECT_NE(planned["README.md"].find("# TS \"one\"\n"), std::string::npos);
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
