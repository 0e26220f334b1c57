// fs/* as a sandboxed plugin's session sees them, on a real tree in a temporary folder: two
// agents (one of a private project), roots of each kind, links in and out, a FIFO, a hard link
// and a file outside every root; the judging on the host's thread, the files on real workers.
// Every refusal is checked three ways (its code, its sentence, the journal's line) and followed
// by a good call, which must still be answered.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include "base/base64.hpp"
#include "base/temp_dir.hpp"
#include "base/utf8.hpp"
#include "base/workers.hpp"
#include "services/bind.hpp"
#include "services/fs.hpp"

namespace escouade::services {
namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using namespace std::chrono_literals;
using manifest::FileAccess;
using manifest::FsRoot;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::int64_t kInvalid = -32602;
constexpr std::int64_t kRefused = -32003;
constexpr std::int64_t kFailed = -32004;
constexpr std::int64_t kNotFound = -32005;

constexpr const char* kId = "dev.escouade.fsdemo";
// What lies outside every root: no answer and no journal line may ever hold it.
constexpr const char* kOutside = "OUTSIDE-SECRET-4b1d";
constexpr const char* kB2Notes = "B2-PRIVATE-NOTES-9c2e";
constexpr const char* kEscapes = "a link on the path leads outside every root of the agent";

void put(const fs::path& file, std::string_view content) {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << content;
}

std::string slurp(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// {agent, root, path}: an empty `agent` is none.
json::object at(std::string_view root, std::string_view path, std::string_view agent = "a1") {
  json::object o;
  if (!agent.empty()) o["agent"] = agent;
  if (!root.empty()) o["root"] = root;
  o["path"] = path;
  return o;
}

json::object with(json::object o, std::string_view key, json::value v) {
  o[key] = std::move(v);
  return o;
}

class FsService : public ::testing::Test {
 protected:
  explicit FsService(manifest::RunKind kind = manifest::RunKind::js) {
    for (const fs::path& p : {wt_a1_, repo_, home_a1_, wt_b2_, plugin_folder_, temp_})
      fs::create_directories(p);
    put(repo_ / "hello.txt", "hello from the repo\n");
    put(home_a1_ / "profile.txt", "home profile");
    put(outside_file_, kOutside);
    put(wt_b2_ / "notes.txt", kB2Notes);
    put(root_ / "src/repo2/x", "a sibling of the repo");
    put(plugin_folder_ / "data.txt", "the plugin's own data");

    agents_.agents["a1"] = policy::Agent{"a1", "p1", wt_a1_, repo_, home_a1_, {}};
    agents_.projects["p1"] = ProjectPlace{false, root_ / "projects/p1"};
    agents_.agents["b2"] =
        policy::Agent{"b2", "secret", wt_b2_, root_ / "src/secret", root_ / "home/b2", {}};
    agents_.projects["secret"] = ProjectPlace{true, root_ / "projects/secret"};

    plugin_->manifest.id = kId;
    plugin_->manifest.folder = plugin_folder_;
    plugin_->manifest.run.kind = kind;
    set_files({{FsRoot::agent, FileAccess::read},
               {FsRoot::agent_repo, FileAccess::write},
               {FsRoot::agent_home, FileAccess::read},
               {FsRoot::temp, FileAccess::write},
               {FsRoot::plugin, FileAccess::read}});
    plugin_->temp_folder = temp_;
    plugin_->project_folders = {{"p1", root_ / "projects/p1"}};
    JournalOptions jo;
    jo.dir = root_ / "logs";
    jo.plugin_id = kId;
    jo.tail_lines = 5000;
    plugin_->journal = std::make_shared<Journal>(std::move(jo));

    ctx_.fs = FsContext{&workers_, &agents_};
    session_.emplace(
        io_.get_executor(),
        [this](std::string l) {
          lines_.push_back(l);
          sent_.push_back(json::parse(l));
        },
        [](std::string_view) {});
    run_.emplace(*session_);
    bind_services(*session_, *run_, ctx_, plugin_);
  }
  ~FsService() override {
    session_->close();
    run_.reset();
  }

  void set_files(std::map<FsRoot, FileAccess> files) {
    plugin_->manifest.permissions.files = files;
    plugin_->fs_roots = policy::FsRoots(files);
  }

  int send(std::string_view method, const json::object& params) {
    const int id = next_id_++;
    session_->feed_line(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" +
                        std::string(method) + R"(","params":)" + json::serialize(params) + "}");
    return id;
  }
  std::optional<json::value> answer_to(int id) const {
    for (const auto& m : sent_)
      if (m.as_object().contains("id") && m.at("id") == id) return m;
    return std::nullopt;
  }
  json::value call(std::string_view method, const json::object& params) {
    const int id = send(method, params);
    run_until([&] { return answer_to(id).has_value(); });
    auto a = answer_to(id);
    return a ? *a : json::value();
  }
  template <class Done>
  void run_until(Done done, std::chrono::milliseconds at_most = 30s) {
    const auto until = std::chrono::steady_clock::now() + at_most;  // a safety net only
    while (!done() && std::chrono::steady_clock::now() < until) {
      io_.restart();
      io_.run_one_for(50ms);
    }
  }

  std::string journal_text() const {
    std::string all;
    for (const auto& l : plugin_->journal->tail(5000))
      all += l + "\n";
    return all;
  }
  // The journal as written on disk, rotated part included.
  std::string journal_file() const {
    return slurp(root_ / "logs" / (std::string(kId) + ".log.1")) +
           slurp(root_ / "logs" / (std::string(kId) + ".log"));
  }
  std::string all_sent() const {
    std::string all;
    for (const auto& l : lines_)
      all += l + "\n";
    return all;
  }

  static std::int64_t code(const json::value& a) {
    return a.is_object() && a.as_object().contains("error") ? a.at("error").at("code").as_int64()
                                                            : 0;
  }
  static std::string message(const json::value& a) {
    return a.is_object() && a.as_object().contains("error")
               ? std::string(a.at("error").at("message").as_string())
               : std::string();
  }
  static const json::object& result(const json::value& a) {
    static const json::object none;
    return a.is_object() && a.as_object().contains("result") && a.at("result").is_object()
               ? a.at("result").as_object()
               : none;
  }
  static std::string text(const json::value& a) {
    const auto& r = result(a);
    return r.contains("text") ? std::string(r.at("text").as_string()) : std::string("<no text>");
  }

  // A good call, answered: the service still serves after whatever came before.
  void expect_still_serves() {
    auto a = call("fs/read", at("agentRepo", "hello.txt"));
    EXPECT_EQ(text(a), "hello from the repo\n") << json::serialize(a);
  }
  // `a` is the error `code` with `sentence` as its message, the journal says it as a warning,
  // and a good call is answered afterwards.
  void expect_error(const json::value& a, std::int64_t expected, const std::string& sentence) {
    EXPECT_EQ(code(a), expected) << json::serialize(a);
    EXPECT_EQ(message(a), sentence);
    EXPECT_THAT(journal_text(), HasSubstr("warn  " + sentence));
    expect_still_serves();
  }
  void expect_nothing_outside_leaked() const {
    EXPECT_THAT(all_sent(), Not(HasSubstr(kOutside)));
    EXPECT_THAT(all_sent(), Not(HasSubstr(base64_encode(kOutside))));
    EXPECT_THAT(all_sent(), Not(HasSubstr(kB2Notes)));
    EXPECT_THAT(journal_file() + journal_text(), Not(HasSubstr(kOutside)));
  }

  TempDir dir_{"escouade-fs-service"};
  const fs::path root_ = dir_.path();
  const fs::path wt_a1_ = root_ / "wt/a1";
  const fs::path repo_ = root_ / "src/repo";
  const fs::path home_a1_ = root_ / "home/a1";
  const fs::path wt_b2_ = root_ / "wt/b2";
  const fs::path outside_file_ = root_ / "outside/secret.txt";
  const fs::path plugin_folder_ = root_ / "plugin";
  const fs::path temp_ = root_ / "data/tmp" / kId;
  boost::asio::io_context io_;
  Workers workers_{io_.get_executor(), 2};
  AgentBook agents_;
  std::shared_ptr<ServedPlugin> plugin_ = std::make_shared<ServedPlugin>();
  ServiceContext ctx_;
  std::optional<rpc::Session> session_;
  std::optional<RunScope> run_;
  std::vector<std::string> lines_;
  std::vector<json::value> sent_;
  int next_id_ = 1;
};

// 1. Ordinary files.

TEST_F(FsService, ReadsTextAndBytesWritesStatsListsAndCanonisesOrdinaryFiles) {
  expect_still_serves();
  put(repo_ / "bytes.bin", std::string("\xff\xfe\x00\x01\x80", 5));
  auto bin = call("fs/read", at("agentRepo", "bytes.bin"));
  ASSERT_TRUE(result(bin).contains("dataBase64")) << json::serialize(bin);
  EXPECT_FALSE(result(bin).contains("text"));
  EXPECT_EQ(base64_decode(std::string(result(bin).at("dataBase64").as_string())),
            std::string("\xff\xfe\x00\x01\x80", 5));

  const std::string content = "distinctive-content-7f3a9e";
  auto w = call("fs/write", with(at("agentRepo", "new/deep/file.txt"), "text", content.c_str()));
  ASSERT_TRUE(result(w).contains("path")) << json::serialize(w);
  EXPECT_EQ(result(w).at("path").as_string(), (repo_ / "new/deep/file.txt").string());
  EXPECT_EQ(result(w).at("bytes").as_int64(), static_cast<std::int64_t>(content.size()));
  EXPECT_EQ(slurp(repo_ / "new/deep/file.txt"), content);
  auto more = call("fs/write", with(with(at("agentRepo", "new/deep/file.txt"), "text", "+tail"),
                                    "append", true));
  EXPECT_EQ(result(more).at("bytes").as_int64(), 5);
  EXPECT_EQ(slurp(repo_ / "new/deep/file.txt"), content + "+tail");
  EXPECT_EQ(text(call("fs/read", at("agentRepo", "new/deep/file.txt"))), content + "+tail");
  auto again = call("fs/write", with(at("agentRepo", "new/deep/file.txt"), "text", "short"));
  EXPECT_EQ(result(again).at("bytes").as_int64(), 5);
  EXPECT_EQ(slurp(repo_ / "new/deep/file.txt"), "short");

  // The journal has the path and the size of each write, never its content.
  const std::string real = "\"" + (repo_ / "new/deep/file.txt").string() + "\"";
  EXPECT_THAT(journal_text(), HasSubstr("info  fs/write agentRepo \"new/deep/file.txt\" (agent "
                                        "\"a1\"): 26 bytes written to " +
                                        real));
  EXPECT_THAT(journal_text(), HasSubstr("5 bytes appended to " + real));
  EXPECT_THAT(journal_text() + journal_file(), Not(HasSubstr(content)));
  EXPECT_THAT(journal_text() + journal_file(), Not(HasSubstr("+tail")));

  auto st = call("fs/stat", at("agentRepo", "hello.txt"));
  EXPECT_EQ(result(st).at("kind"), "file") << json::serialize(st);
  EXPECT_EQ(result(st).at("bytes"), 20);
  EXPECT_TRUE(result(st).at("modified").is_int64());
  EXPECT_EQ(result(call("fs/stat", at("agentRepo", "new"))).at("kind"), "dir");
  EXPECT_EQ(code(call("fs/stat", at("agentRepo", "nope.txt"))), kNotFound);

  auto ls = call("fs/list", at("agentRepo", ""));
  ASSERT_TRUE(result(ls).contains("entries")) << json::serialize(ls);
  EXPECT_EQ(result(ls).at("truncated"), false);
  const auto& entries = result(ls).at("entries").as_array();
  ASSERT_EQ(entries.size(), 3u) << json::serialize(ls);
  EXPECT_EQ(json::serialize(entries[0]), R"({"name":"bytes.bin","kind":"file","bytes":5})");
  EXPECT_EQ(json::serialize(entries[1]), R"({"name":"hello.txt","kind":"file","bytes":20})");
  EXPECT_EQ(entries[2].at("name"), "new");
  EXPECT_EQ(entries[2].at("kind"), "dir");

  EXPECT_EQ(result(call("fs/canon", at("agentRepo", "new/deep/file.txt"))).at("path").as_string(),
            (repo_ / "new/deep/file.txt").string());
  EXPECT_EQ(result(call("fs/canon", at("agentRepo", "not/yet/there.txt"))).at("path").as_string(),
            (repo_ / "not/yet/there.txt").string());

  // temp and plugin need no agent; an agent given with them is ignored.
  auto tw = call("fs/write", with(at("temp", "cache/bin.dat", ""), "dataBase64", "AP8A"));
  EXPECT_EQ(result(tw).at("path").as_string(), (temp_ / "cache/bin.dat").string());
  EXPECT_EQ(result(tw).at("bytes"), 3);
  EXPECT_EQ(result(call("fs/read", at("temp", "cache/bin.dat", ""))).at("dataBase64"), "AP8A");
  EXPECT_EQ(text(call("fs/read", at("plugin", "data.txt", ""))), "the plugin's own data");
  EXPECT_EQ(text(call("fs/read", at("plugin", "data.txt", "b2"))), "the plugin's own data");
}

TEST_F(FsService, AWriteGivesTextOrBase64NotBothAndAFolderIsNotAFile) {
  expect_error(call("fs/write", with(with(at("temp", "x", ""), "text", "a"), "dataBase64", "YQ==")),
               kInvalid, R"(fs/write temp "x": invalid params: text or dataBase64, not both)");
  expect_error(call("fs/write", with(at("temp", "x", ""), "dataBase64", "%%%")), kInvalid,
               R"(fs/write temp "x": invalid params: dataBase64 is not base64)");
  EXPECT_FALSE(fs::exists(temp_ / "x"));
  expect_error(call("fs/read", at("agentRepo", "")), kFailed,
               R"(fs/read agentRepo "" (agent "a1"): failed: is a folder, not a file)");
  expect_error(call("fs/write", with(at("temp", "", ""), "text", "a")), kFailed,
               R"(fs/write temp "": failed: is a folder, not a file)");
  expect_error(call("fs/read", at("agentRepo", "nope.txt")), kNotFound,
               R"(fs/read agentRepo "nope.txt" (agent "a1"): not found: no such file)");
  expect_error(call("fs/list", at("agentRepo", "hello.txt")), kNotFound,
               R"(fs/list agentRepo "hello.txt" (agent "a1"): not found: is not a folder)");
  // What the binder refuses before the service: a missing path, a root the schema lacks.
  json::object no_path;
  no_path["root"] = "temp";
  EXPECT_EQ(code(call("fs/read", no_path)), kInvalid);
  EXPECT_EQ(code(call("fs/read", at("home", "x"))), kInvalid);
  expect_still_serves();
}

// 2. Spellings.

TEST_F(FsService, AnEquivalentSpellingReachesTheSameFile) {
  put(repo_ / "a/b", "a-b");
  for (const char* path : {"a/b", "a//b", "./a/b", "a/./b", ".//a///./b", "a/b/"}) {
    EXPECT_EQ(text(call("fs/read", at("agentRepo", path))), "a-b") << path;
    EXPECT_EQ(result(call("fs/canon", at("agentRepo", path))).at("path").as_string(),
              (repo_ / "a/b").string())
        << path;
  }
  for (const char* path : {"a/", "./a", "a//"}) {
    auto ls = call("fs/list", at("agentRepo", path));
    ASSERT_TRUE(result(ls).contains("entries")) << path << json::serialize(ls);
    EXPECT_EQ(result(ls).at("entries").as_array().size(), 1u);
  }
  for (const char* path : {"", ".", "./", ".//./"})
    EXPECT_EQ(result(call("fs/canon", at("agentRepo", path))).at("path").as_string(),
              repo_.string())
        << path;
  // %2e%2e is a name of six characters, not a way up.
  EXPECT_EQ(code(call("fs/read", at("agentRepo", "%2e%2e/wt/a1"))), kNotFound);
}

TEST_F(FsService, ClimbingHidingAndMisshapenPathsAreRefusedWithTheirCodes) {
  put(repo_ / "b", "b");
  struct Case {
    json::object params;
    std::int64_t code;
    std::string sentence;
  };
  const std::string climbs = "refused: a '..' part (a path may not climb, even within its root)";
  const std::string tilde = "refused: a ~ is never expanded";
  const Case cases[] = {
      {at("agentRepo", "../x"), kRefused, R"(fs/read agentRepo "../x" (agent "a1"): )" + climbs},
      {at("agentRepo", "a/../b"), kRefused,
       R"(fs/read agentRepo "a/../b" (agent "a1"): )" + climbs},
      {at("agentRepo", ".."), kRefused, R"(fs/read agentRepo ".." (agent "a1"): )" + climbs},
      {at("agentRepo", "~/x"), kRefused, R"(fs/read agentRepo "~/x" (agent "a1"): )" + tilde},
      {at("agentRepo", "~"), kRefused, R"(fs/read agentRepo "~" (agent "a1"): )" + tilde},
      {at("agentRepo", "a/~/b"), kRefused, R"(fs/read agentRepo "a/~/b" (agent "a1"): )" + tilde},
      {at("agentRepo", (repo_ / "hello.txt").string()), kRefused,
       "fs/read agentRepo \"" + (repo_ / "hello.txt").string() +
           "\" (agent \"a1\"): refused: an absolute path with a root: give it relative to the "
           "root"},
      {at("", "hello.txt"), kRefused,
       R"(fs/read "hello.txt" (agent "a1"): refused: a relative path needs a root)"},
      {at("", "hello.txt", ""), kRefused,
       R"(fs/read "hello.txt": refused: a relative path needs a root)"},
      {at("agentRepo", "a\\b"), kRefused,
       R"(fs/read agentRepo "a\\b" (agent "a1"): refused: a backslash ('/' is the only )"
       R"(separator between parts))"},
      {at("agentRepo", "C:x"), kRefused,
       R"(fs/read agentRepo "C:x" (agent "a1"): refused: a Windows drive with a root: give the )"
       R"(path relative to the root)"},
      {at("agentRepo", std::string("a\0b", 3)), kInvalid,
       R"(fs/read agentRepo "a\u0000b" (agent "a1"): invalid params: a NUL character in the path)"},
      {at("", ""), kInvalid, R"(fs/read "" (agent "a1"): invalid params: an empty path)"},
      {at("", "/etc/passwd", ""), kInvalid,
       R"(fs/read "/etc/passwd": invalid params: an absolute path without an agent (it is judged by an )"
       R"(agent's roots))"},
      {at("agentRepo", std::string(256, 'n')), kInvalid, ""},
      {at("agentRepo", std::string(4097, 'a')), kInvalid, ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(json::serialize(c.params));
    for (const char* method : {"fs/read", "fs/stat", "fs/list", "fs/canon", "fs/write"}) {
      SCOPED_TRACE(method);
      auto params = c.params;
      if (std::string_view(method) == "fs/write") params["text"] = "x";
      auto a = call(method, params);
      if (c.sentence.empty()) {
        EXPECT_EQ(code(a), c.code) << json::serialize(a);
        EXPECT_THAT(message(a), HasSubstr(std::string(method) + " agentRepo \""));
        EXPECT_THAT(message(a), HasSubstr(": invalid params: a p"));
        EXPECT_THAT(journal_text(), HasSubstr("warn  " + message(a)));
        expect_still_serves();
        continue;
      }
      std::string sentence = c.sentence;
      sentence.replace(0, 7, method);  // "fs/read" -> the method called
      expect_error(a, c.code, sentence);
    }
  }
  EXPECT_FALSE(fs::exists(repo_ / "x"));
  EXPECT_FALSE(fs::exists(repo_ / "a"));
  EXPECT_EQ(slurp(repo_ / "b"), "b");
}

// 3. Roots.

TEST_F(FsService, ARootTheManifestDoesNotDeclareIsRefused) {
  set_files({{FsRoot::agent_repo, FileAccess::write}, {FsRoot::temp, FileAccess::write}});
  for (const char* root : {"agent", "agentHome", "plugin"}) {
    const std::string agent = std::string_view(root) == "plugin" ? "" : " (agent \"a1\")";
    expect_error(call("fs/read", at(root, "profile.txt", agent.empty() ? "" : "a1")), kRefused,
                 "fs/read " + std::string(root) + " \"profile.txt\"" + agent +
                     ": refused: the root " + root + " is not in its permissions.files");
  }
  // An absolute path under an undeclared root is under no declared root.
  expect_error(call("fs/read", at("", (home_a1_ / "profile.txt").string())), kRefused,
               "fs/read \"" + (home_a1_ / "profile.txt").string() +
                   "\" (agent \"a1\"): refused: is under no root of agent \"a1\" that its "
                   "permissions.files declare");
  // A link into an undeclared root is a link outside.
  fs::create_symlink(home_a1_ / "profile.txt", repo_ / "tohome");
  expect_error(call("fs/read", at("agentRepo", "tohome")), kRefused,
               R"(fs/read agentRepo "tohome" (agent "a1"): refused: )" + std::string(kEscapes));

  // Deny by default: a plugin that declares nothing reaches nothing, temp included.
  set_files({});
  EXPECT_EQ(code(call("fs/read", at("temp", "x", ""))), kRefused);
  EXPECT_EQ(message(call("fs/read", at("agentRepo", "hello.txt"))),
            R"(fs/read agentRepo "hello.txt" (agent "a1"): refused: the root agentRepo is not in )"
            R"(its permissions.files)");
}

TEST_F(FsService, AWriteOnARootGivenForReadingIsRefusedAndNothingIsMade) {
  expect_error(call("fs/write", with(at("agentHome", "x.txt"), "text", "x")), kRefused,
               R"(fs/write agentHome "x.txt" (agent "a1"): refused: agentHome is given for )"
               R"(reading only)");
  expect_error(call("fs/write", with(at("plugin", "data.txt", ""), "text", "x")), kRefused,
               R"(fs/write plugin "data.txt": refused: plugin is given for reading only)");
  expect_error(call("fs/write", with(at("", (home_a1_ / "x.txt").string()), "text", "x")), kRefused,
               "fs/write \"" + (home_a1_ / "x.txt").string() +
                   "\" (agent \"a1\"): refused: lands in agentHome, which is given for reading "
                   "only");
  // Through a link from a root given for writing into one given for reading: the file is judged.
  fs::create_symlink(home_a1_ / "profile.txt", repo_ / "tohome");
  expect_error(call("fs/write", with(at("agentRepo", "tohome"), "text", "x")), kRefused,
               R"(fs/write agentRepo "tohome" (agent "a1"): refused: the path leads into )"
               R"(agentHome, which is given for reading only)");
  fs::create_symlink(home_a1_, repo_ / "homedir");
  expect_error(call("fs/write", with(at("agentRepo", "homedir/made/x.txt"), "text", "x")), kRefused,
               R"(fs/write agentRepo "homedir/made/x.txt" (agent "a1"): refused: the path leads )"
               R"(into agentHome, which is given for reading only)");
  EXPECT_FALSE(fs::exists(home_a1_ / "x.txt"));
  EXPECT_FALSE(fs::exists(home_a1_ / "made"));
  EXPECT_EQ(slurp(home_a1_ / "profile.txt"), "home profile");
  EXPECT_EQ(slurp(plugin_folder_ / "data.txt"), "the plugin's own data");
}

TEST_F(FsService, AgentRootsNeedAnAgentTheAppSetAndThatHasThem) {
  for (const char* root : {"agent", "agentRepo", "agentHome"})
    expect_error(call("fs/read", at(root, "hello.txt", "")), kInvalid,
                 "fs/read " + std::string(root) + " \"hello.txt\": invalid params: the root " +
                     root + " without an agent (whose " + root + " is it?)");
  expect_error(call("fs/read", at("agentRepo", "hello.txt", "zz")), kRefused,
               R"(fs/read agentRepo "hello.txt" (agent "zz"): refused: no agent "zz": the app )"
               R"(has not set it)");
  expect_error(call("fs/read", at("", (repo_ / "hello.txt").string(), "zz")), kRefused,
               "fs/read \"" + (repo_ / "hello.txt").string() +
                   "\" (agent \"zz\"): refused: no agent \"zz\": the app has not set it");
  // An agent the app set without a repo.
  agents_.agents["c4"] = policy::Agent{"c4", "p1", wt_a1_, std::nullopt, std::nullopt, {}};
  expect_error(call("fs/read", at("agentRepo", "hello.txt", "c4")), kRefused,
               R"(fs/read agentRepo "hello.txt" (agent "c4"): refused: agent "c4" has no )"
               R"(agentRepo)");
}

TEST_F(FsService, AnAgentRemovedFromTheBookIsRefusedAfterwards) {
  expect_still_serves();
  const auto kept = agents_.agents.at("a1");
  agents_.agents.erase("a1");
  for (const char* method : {"fs/read", "fs/stat", "fs/list", "fs/canon"}) {
    auto a = call(method, at("agentRepo", "hello.txt"));
    EXPECT_EQ(code(a), kRefused) << method;
    EXPECT_EQ(message(a), std::string(method) +
                              R"( agentRepo "hello.txt" (agent "a1"): refused: no agent "a1": )"
                              R"(the app has not set it)");
    EXPECT_THAT(journal_text(), HasSubstr("warn  " + message(a)));
  }
  // temp needs no agent: still served.
  EXPECT_TRUE(
      result(call("fs/write", with(at("temp", "t.txt", ""), "text", "t"))).contains("path"));
  agents_.agents["a1"] = kept;
  expect_still_serves();
}

TEST_F(FsService, ARootOfTheAgentThatIsNotThereLeavesItsOtherRootsReachable) {
  // The host keeps a root the app gave that does not exist yet (weakly_canonical).
  fs::create_symlink(home_a1_ / "profile.txt", repo_ / "tohome");
  fs::remove_all(home_a1_);
  expect_still_serves();
  EXPECT_EQ(result(call("fs/write", with(at("agentRepo", "w.txt"), "text", "w"))).at("bytes"), 1);
  EXPECT_EQ(result(call("fs/list", at("agentRepo", ""))).at("entries").as_array().size(), 3u);
  // A link into it leads nowhere a root holds.
  expect_error(call("fs/read", at("agentRepo", "tohome")), kRefused,
               R"(fs/read agentRepo "tohome" (agent "a1"): refused: )" + std::string(kEscapes));
  // It itself is not found.
  expect_error(call("fs/read", at("agentHome", "profile.txt")), kNotFound,
               R"(fs/read agentHome "profile.txt" (agent "a1"): not found: cannot open the )"
               R"(folder )" +
                   home_a1_.string() + ": No such file or directory");
}

// 4. The fence.

TEST_F(FsService, APrivateProjectsAgentIsFencedUntilThePluginIsOnThere) {
  const std::string fenced =
      R"(refused: agent "b2" works in a private project (« Projet privé ») where the plugin )"
      R"(is not on)";
  expect_error(call("fs/read", at("agent", "notes.txt", "b2")), kRefused,
               R"(fs/read agent "notes.txt" (agent "b2"): )" + fenced);
  expect_error(call("fs/read", at("", (wt_b2_ / "notes.txt").string(), "b2")), kRefused,
               "fs/read \"" + (wt_b2_ / "notes.txt").string() + "\" (agent \"b2\"): " + fenced);
  expect_error(call("fs/list", at("agent", "", "b2")), kRefused,
               R"(fs/list agent "" (agent "b2"): )" + fenced);
  expect_error(call("fs/write", with(at("agentRepo", "n.txt", "b2"), "text", "x")), kRefused,
               R"(fs/write agentRepo "n.txt" (agent "b2"): )" + fenced);
  EXPECT_THAT(message(call("fs/read", at("agent", "notes.txt", "b2"))),
              HasSubstr("« Projet privé »"));
  expect_nothing_outside_leaked();

  plugin_->project_folders["secret"] = root_ / "projects/secret";
  EXPECT_EQ(text(call("fs/read", at("agent", "notes.txt", "b2"))), kB2Notes);
  EXPECT_EQ(text(call("fs/read", at("", (wt_b2_ / "notes.txt").string(), "b2"))), kB2Notes);
  plugin_->project_folders.erase("secret");
  EXPECT_EQ(message(call("fs/read", at("agent", "notes.txt", "b2"))),
            R"(fs/read agent "notes.txt" (agent "b2"): )" + fenced);

  // A project that is not private needs no turning on.
  plugin_->project_folders.clear();
  expect_still_serves();
}

TEST_F(FsService, AnAgentOfAnUnknownProjectIsFencedAsPrivate) {
  agents_.agents["c3"] = policy::Agent{"c3", "ghost", wt_a1_, repo_, home_a1_, {}};
  expect_error(
      call("fs/read", at("agentRepo", "hello.txt", "c3")), kRefused,
      R"(fs/read agentRepo "hello.txt" (agent "c3"): refused: agent "c3" works in a private )"
      R"(project (« Projet privé ») where the plugin is not on)");
}

// 5. Absolute paths.

TEST_F(FsService, AnAbsolutePathIsJudgedByTheAgentsRootsPartByPart) {
  EXPECT_EQ(text(call("fs/read", at("", (repo_ / "hello.txt").string()))), "hello from the repo\n");
  EXPECT_EQ(text(call("fs/read", at("", repo_.string() + "//./hello.txt"))),
            "hello from the repo\n");
  auto w = call("fs/write", with(at("", (repo_ / "abs/w.txt").string()), "text", "w"));
  EXPECT_EQ(result(w).at("path").as_string(), (repo_ / "abs/w.txt").string());
  EXPECT_EQ(result(call("fs/stat", at("", repo_.string()))).at("kind"), "dir");

  const std::string no_root =
      "\" (agent \"a1\"): refused: is under no root of agent \"a1\" that its permissions.files "
      "declare";
  for (const fs::path& p :
       {root_ / "src/repo2/x", outside_file_, root_ / "src", fs::path("/etc/passwd")}) {
    expect_error(call("fs/read", at("", p.string())), kRefused,
                 "fs/read \"" + p.string() + no_root);
    expect_error(call("fs/write", with(at("", p.string()), "text", "x")), kRefused,
                 "fs/write \"" + p.string() + no_root);
  }
  EXPECT_EQ(slurp(root_ / "src/repo2/x"), "a sibling of the repo");
  EXPECT_EQ(slurp(outside_file_), kOutside);
  expect_nothing_outside_leaked();
}

// 6. Links.

TEST_F(FsService, ALinkToAnotherDeclaredRootOfTheAgentIsFollowed) {
  fs::create_symlink(home_a1_ / "profile.txt", repo_ / "tohome");
  fs::create_symlink("../../home/a1", repo_ / "homedir");  // relative, climbing out of the repo
  EXPECT_EQ(text(call("fs/read", at("agentRepo", "tohome"))), "home profile");
  EXPECT_EQ(text(call("fs/read", at("agentRepo", "homedir/profile.txt"))), "home profile");
  EXPECT_EQ(result(call("fs/canon", at("agentRepo", "tohome"))).at("path").as_string(),
            (home_a1_ / "profile.txt").string());
  EXPECT_EQ(result(call("fs/stat", at("agentRepo", "tohome"))).at("kind"), "file");
  EXPECT_EQ(result(call("fs/list", at("agentRepo", "homedir"))).at("entries").as_array().size(),
            1u);
}

TEST_F(FsService, ALinkOutsideOrToAnotherAgentIsRefusedAndItsContentNeverSent) {
  fs::create_symlink(outside_file_, repo_ / "toout");
  fs::create_symlink("../../outside/secret.txt", repo_ / "relout");
  fs::create_symlink(outside_file_.parent_path(), repo_ / "outdir");
  fs::create_symlink(wt_b2_ / "notes.txt", repo_ / "tob2");
  fs::create_symlink(wt_b2_, repo_ / "b2dir");
  fs::create_symlink(root_ / "outside/new.txt", repo_ / "dangling");
  const std::string escapes = std::string(": refused: ") + kEscapes;
  for (const char* path : {"toout", "relout", "outdir/secret.txt", "tob2", "b2dir/notes.txt"}) {
    for (const char* method : {"fs/read", "fs/stat", "fs/canon"})
      expect_error(call(method, at("agentRepo", path)), kRefused,
                   std::string(method) + " agentRepo \"" + path + "\" (agent \"a1\")" + escapes);
    expect_error(call("fs/write", with(at("agentRepo", path), "text", "overwritten")), kRefused,
                 std::string("fs/write agentRepo \"") + path + "\" (agent \"a1\")" + escapes);
  }
  for (const char* path : {"outdir", "b2dir"})
    expect_error(call("fs/list", at("agentRepo", path)), kRefused,
                 std::string("fs/list agentRepo \"") + path + "\" (agent \"a1\")" + escapes);
  // A link to nothing outside: no file is made there.
  expect_error(call("fs/write", with(at("agentRepo", "dangling"), "text", "x")), kRefused,
               R"(fs/write agentRepo "dangling" (agent "a1"))" + escapes);
  expect_error(call("fs/write", with(at("agentRepo", "outdir/made.txt"), "text", "x")), kRefused,
               R"(fs/write agentRepo "outdir/made.txt" (agent "a1"))" + escapes);
  EXPECT_FALSE(fs::exists(root_ / "outside/new.txt"));
  EXPECT_FALSE(fs::exists(root_ / "outside/made.txt"));
  EXPECT_EQ(slurp(outside_file_), kOutside);
  EXPECT_EQ(slurp(wt_b2_ / "notes.txt"), kB2Notes);
  expect_nothing_outside_leaked();
}

TEST_F(FsService, ALinkSwappedDuringReadsNeverGivesTheOutside) {
  put(repo_ / "inside.txt", "INSIDE");
  fs::create_symlink("inside.txt", repo_ / "swap");
  std::atomic<bool> reading{true};
  std::atomic<int> swaps{0};
  std::thread swapper([&] {
    const std::string link = (repo_ / "swap").string(), next = (repo_ / "swap.next").string();
    const std::string out = outside_file_.string();
    for (int i = 0; i < 1000 || reading; ++i) {
      ::unlink(next.c_str());
      if (::symlink(i % 2 == 0 ? out.c_str() : "inside.txt", next.c_str()) != 0) continue;
      if (::rename(next.c_str(), link.c_str()) == 0) ++swaps;
    }
  });
  struct Joiner {
    std::atomic<bool>& reading;
    std::thread& t;
    ~Joiner() {
      reading = false;
      t.join();
    }
  } joiner{reading, swapper};

  constexpr int kReads = 300;
  int inside = 0, refused = 0;
  for (int i = 0; i < kReads; ++i) {
    auto a = call("fs/read", at("agentRepo", "swap"));
    if (code(a) == 0) {
      EXPECT_EQ(text(a), "INSIDE") << json::serialize(a);
      ++inside;
    } else {
      EXPECT_EQ(code(a), kRefused) << json::serialize(a);
      EXPECT_EQ(message(a),
                std::string(R"(fs/read agentRepo "swap" (agent "a1"): refused: )") + kEscapes);
      ++refused;
    }
  }
  reading = false;
  EXPECT_EQ(inside + refused, kReads);
  expect_nothing_outside_leaked();
  RecordProperty("reads_inside", inside);
  RecordProperty("reads_refused", refused);
}

TEST_F(FsService, AHardLinkToAFileOutsideIsNeitherReadNorWritten) {
  if (::link(outside_file_.c_str(), (repo_ / "hard.txt").c_str()) != 0)
    GTEST_SKIP() << "no hard link here: " << std::strerror(errno);
  const std::string why =
      ": refused: the file has other names (a hard link), which may be outside the roots";
  expect_error(call("fs/read", at("agentRepo", "hard.txt")), kRefused,
               R"(fs/read agentRepo "hard.txt" (agent "a1"))" + why);
  expect_error(call("fs/write", with(at("agentRepo", "hard.txt"), "text", "overwritten")), kRefused,
               R"(fs/write agentRepo "hard.txt" (agent "a1"))" + why);
  expect_error(
      call("fs/write", with(with(at("agentRepo", "hard.txt"), "text", "appended"), "append", true)),
      kRefused, R"(fs/write agentRepo "hard.txt" (agent "a1"))" + why);
  EXPECT_EQ(slurp(outside_file_), kOutside);
  expect_nothing_outside_leaked();
}

// 7. What is not a file, and odd names.

TEST_F(FsService, AFifoIsRefusedPromptlyAndStatedAsOther) {
  ASSERT_EQ(::mkfifo((repo_ / "pipe").c_str(), 0600), 0);
  const auto began = std::chrono::steady_clock::now();
  expect_error(call("fs/read", at("agentRepo", "pipe")), kRefused,
               R"(fs/read agentRepo "pipe" (agent "a1"): refused: is a FIFO, not a regular file)");
  expect_error(call("fs/write", with(at("agentRepo", "pipe"), "text", "x")), kRefused,
               R"(fs/write agentRepo "pipe" (agent "a1"): refused: is a FIFO, not a regular file)");
  EXPECT_LT(std::chrono::steady_clock::now() - began, 5s) << "no one opened the FIFO's other end";
  auto st = call("fs/stat", at("agentRepo", "pipe"));
  EXPECT_EQ(result(st).at("kind"), "other") << json::serialize(st);
}

TEST_F(FsService, AListingShowsLinksUnfollowedAndOddNamesAsValidJson) {
  const fs::path odd = repo_ / "odd";
  put(odd / "plain.txt", "plain");
  put(odd / "new\nline.txt", "n");
  put(odd / "bad\xff.txt", "b");
  fs::create_directories(odd / "sub");
  fs::create_symlink(outside_file_.parent_path(), odd / "out");
  fs::create_symlink(home_a1_ / "profile.txt", odd / "tohome");
  ASSERT_EQ(::mkfifo((odd / "pipe").c_str(), 0600), 0);

  auto ls = call("fs/list", at("agentRepo", "odd"));
  ASSERT_TRUE(result(ls).contains("entries")) << json::serialize(ls);
  std::map<std::string, std::pair<std::string, std::int64_t>> seen;
  for (const auto& e : result(ls).at("entries").as_array())
    seen[std::string(e.at("name").as_string())] = {std::string(e.at("kind").as_string()),
                                                   e.at("bytes").as_int64()};
  ASSERT_EQ(seen.size(), 7u) << json::serialize(ls);
  EXPECT_EQ(seen.at("plain.txt"), std::make_pair(std::string("file"), std::int64_t{5}));
  EXPECT_EQ(seen.at("new\nline.txt").first, "file");
  EXPECT_EQ(seen.at("bad\xef\xbf\xbd.txt").first, "file");
  EXPECT_EQ(seen.at("sub").first, "dir");
  EXPECT_EQ(seen.at("pipe").first, "other");
  // A link is a link: its own size (its target's length), never what it leads to.
  EXPECT_EQ(seen.at("out"),
            std::make_pair(std::string("link"),
                           static_cast<std::int64_t>(outside_file_.parent_path().string().size())));
  EXPECT_EQ(seen.at("tohome").first, "link");
  for (const auto& line : lines_)
    EXPECT_TRUE(is_valid_utf8(line));
  EXPECT_THAT(all_sent(), Not(HasSubstr("secret.txt")));
  EXPECT_THAT(all_sent(), HasSubstr(R"("name":"new\nline.txt")"));
  // And the odd names are reached by their names.
  EXPECT_EQ(text(call("fs/read", at("agentRepo", "odd/new\nline.txt"))), "n");
}

// 8. Limits.

TEST_F(FsService, AFilePastTheReadLimitFailsAndTheManifestCanRaiseIt) {
  constexpr std::size_t kKiB = 1024;
  put(repo_ / "at.txt", std::string(256 * kKiB, 'a'));
  put(repo_ / "past.txt", std::string(256 * kKiB + 1, 'a'));
  put(repo_ / "mib.txt", std::string(1024 * kKiB, 'm'));
  EXPECT_EQ(text(call("fs/read", at("agentRepo", "at.txt"))).size(), 256 * kKiB);
  expect_error(call("fs/read", at("agentRepo", "past.txt")), kFailed,
               R"(fs/read agentRepo "past.txt" (agent "a1"): failed: the file is larger than )"
               R"(the limit)");
  expect_error(call("fs/read", at("agentRepo", "mib.txt")), kFailed,
               R"(fs/read agentRepo "mib.txt" (agent "a1"): failed: the file is larger than the )"
               R"(limit)");
  plugin_->manifest.limits.file_bytes = manifest::Limits::kMaxFileBytes;
  EXPECT_EQ(text(call("fs/read", at("agentRepo", "mib.txt"))), std::string(1024 * kKiB, 'm'));
  EXPECT_EQ(text(call("fs/read", at("agentRepo", "past.txt"))).size(), 256 * kKiB + 1);
}

TEST_F(FsService, AWriteOf4MiBIsTheMost) {
  const std::string most(kMaxWriteBytes, 'w');
  auto ok = call("fs/write", with(at("temp", "most.txt", ""), "text", most.c_str()));
  EXPECT_EQ(result(ok).at("bytes"), static_cast<std::int64_t>(kMaxWriteBytes));
  expect_error(
      call("fs/write", with(at("temp", "over.txt", ""), "text", (most + "w").c_str())), kFailed,
      R"(fs/write temp "over.txt": failed: is 4194305 bytes, over 4 MiB, the most fs/write )"
      R"(writes)");
  EXPECT_FALSE(fs::exists(temp_ / "over.txt"));
  // Decoded bytes count, not their base64.
  expect_error(call("fs/write", with(at("temp", "over.bin", ""), "dataBase64",
                                     base64_encode(most + "w").c_str())),
               kFailed,
               R"(fs/write temp "over.bin": failed: is 4194305 bytes, over 4 MiB, the most )"
               R"(fs/write writes)");
  EXPECT_FALSE(fs::exists(temp_ / "over.bin"));
  EXPECT_EQ(fs::file_size(temp_ / "most.txt"), kMaxWriteBytes);
}

TEST_F(FsService, AListingStopsAt4096EntriesAndSaysItWasCut) {
  fs::create_directories(temp_ / "many");
  for (int i = 0; i < 5000; ++i)
    std::ofstream(temp_ / "many" / ("f" + std::to_string(i)));
  auto ls = call("fs/list", at("temp", "many", ""));
  ASSERT_TRUE(result(ls).contains("entries")) << message(ls);
  EXPECT_EQ(result(ls).at("entries").as_array().size(), kMaxListEntries);
  EXPECT_EQ(result(ls).at("truncated"), true);
  std::ofstream(temp_ / "few");
  auto few = call("fs/list", at("temp", "", ""));
  EXPECT_EQ(result(few).at("truncated"), false);
  EXPECT_EQ(result(few).at("entries").as_array().size(), 2u);
}

// 9. A process.

class FsServiceForAProcess : public FsService {
 protected:
  FsServiceForAProcess() : FsService(manifest::RunKind::command) {}
};

// A process is served as a sandboxed plugin is, under the same judgement: the host alone knows
// an agent's roots, and the SDKs give one API for both ways a plugin runs.
TEST_F(FsServiceForAProcess, IsServedUnderTheSameJudgement) {
  for (const char* method : {"fs/read", "fs/stat", "fs/list", "fs/canon"})
    EXPECT_NE(code(call(method, at("agentRepo", "hello.txt"))), -32601) << method;
  auto wrote = call("fs/write", with(at("temp", "x", ""), "text", "x"));
  ASSERT_TRUE(result(wrote).contains("bytes")) << message(wrote);
  EXPECT_TRUE(fs::exists(temp_ / "x"));
  EXPECT_EQ(code(call("fs/read", at("agentRepo", "../escape"))), -32003);
  // agentHome is given for reading only.
  EXPECT_EQ(code(call("fs/write", with(at("agentHome", "x.txt"), "text", "x"))), -32003);
}

}  // namespace
}  // namespace escouade::services
