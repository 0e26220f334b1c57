// URL, URLSearchParams, TextEncoder and TextDecoder of the run.js prelude, with the real engine
// (tests/fixtures/sandbox/web/). Every expected value below is what Node 18 gives for the same
// expression (checked when the cases were written; the test runs no Node), but for the labels
// Node knows and the sandbox does not (only utf-8).

#include <cstdlib>
#include <ctime>

#include "sandbox/node_runner.hpp"
#include "sandbox/sandbox_test_fixture.hpp"

namespace escouade::sandbox {
namespace {

class SandboxWebApis : public Sandbox {
 protected:
  void SetUp() override {
    runtime::ProgramSpec spec = spec_of("web", "dist/plugin.mjs");
    spec.plugin_id = "dev.test.web";
    start(spec);
  }

  // The result of calling `method` in the bundle, which must not answer an error.
  json::value result(std::string_view method, json::value params = json::object()) {
    const int id = next_id_++;
    call(id, method, std::move(params));
    auto a = answer(id);
    if (!a) {
      ADD_FAILURE() << "no answer to " << id << "; ended: " << (end_ ? end_->reason : "no")
                    << (err_.empty() ? "" : "; " + err_.back());
      return nullptr;
    }
    EXPECT_FALSE(a->as_object().contains("error")) << json::serialize(*a);
    return a->as_object().contains("result") ? a->at("result") : json::value();
  }

  // The result of the answer whose id is `id` (a string the bundle chose).
  json::value result_of(const json::value& id) {
    auto a =
        line_where([&](const json::object& o) { return o.contains("id") && o.at("id") == id; });
    EXPECT_TRUE(a) << "no answer to " << json::serialize(id);
    return a && a->as_object().contains("result") ? a->at("result") : json::value();
  }

  int next_id_ = 1;
};

// node:readline as Node cuts lines: across chunks, "\r\n", an empty line; a listener added while
// a line is handed out hears the lines after it only.
TEST_F(SandboxWebApis, ReadlineCutsLinesAsNodeDoes) {
  EXPECT_EQ(result("test/lines"),
            json::parse(R"({"got":["a","b","cd","e","f",""],"added":["cd","e","f",""]})"));
}

// No stack is captured for each promise (context.cpp): an error made after an await has its own
// frames, and none of the async calls that led there.
TEST_F(SandboxWebApis, AnErrorAfterAnAwaitHasItsOwnFramesOnly) {
  EXPECT_EQ(result("test/stacks"), json::parse(R"({"ownFrame":true,"asyncFrames":false})"));
}

// The spec's own line: readFileSync(new URL('../rules.json', globalThis._importMeta_.url)).
TEST_F(SandboxWebApis, TheSpecsReadFileSyncOfANewUrlReadsARootFile) {
  EXPECT_EQ(result("test/rules"), json::parse(R"({"words":["deploy","rollback"]})"));
}

// The same through the module's own import.meta.url, which the engine leaves to its embedder.
TEST_F(SandboxWebApis, ImportMetaUrlIsTheBundlesFileUrl) {
  EXPECT_EQ(result("test/rulesByImportMeta"), json::parse(R"({"words":["deploy","rollback"]})"));
}

TEST_F(SandboxWebApis, UrlsResolveAndNormalizeAsTheStandardSays) {
  struct Case {
    const char* name;
    const char* input;
    const char* base;  // null: none
    const char* href;  // or the error's name and code
  };
  const std::vector<Case> cases = {
      {"parent", "../rules.json", "file:///home/u/plugin/dist/plugin.mjs",
       "file:///home/u/plugin/rules.json"},
      {"dots", "./a/./b/../c", "file:///x/y/z", "file:///x/y/a/c"},
      {"dotDotAlone", "..", "file:///x/y/z", "file:///x/"},
      {"neverAboveTheRoot", "../../../../etc", "file:///x/y/z", "file:///etc"},
      {"absolutePath", "/abs/path?q=1#h", "https://example.com/a/b",
       "https://example.com/abs/path?q=1#h"},
      {"schemeRelative", "//other.org/p", "https://example.com/a/b", "https://other.org/p"},
      {"queryOnly", "?new", "https://example.com/a/b?old#f", "https://example.com/a/b?new"},
      {"fragmentOnly", "#frag", "https://example.com/a/b?old#f",
       "https://example.com/a/b?old#frag"},
      {"empty", "", "https://example.com/a/b?old#f", "https://example.com/a/b?old"},
      {"caseDefaultPortAndEncoding", "HTTPS://EXAMPLE.com:443/A%20b/c d?x=y z#\xc3\xa9", nullptr,
       "https://example.com/A%20b/c%20d?x=y%20z#%C3%A9"},
      {"userinfo", "http://user:pa ss@host.com:8080/p", nullptr,
       "http://user:pa%20ss@host.com:8080/p"},
      {"sameSchemeRelative", "http:foo/bar", "http://h.com/a/b", "http://h.com/a/foo/bar"},
      {"backslashes", "http:\\\\h.com\\a\\..\\b", nullptr, "http://h.com/b"},
      {"fileLocalhost", "file://localhost/etc/x", nullptr, "file:///etc/x"},
      {"fileOneSlash", "file:/etc/x", nullptr, "file:///etc/x"},
      {"encodedDots", "https://h.com/a/%2e%2E/b/.%2e/c", nullptr, "https://h.com/c"},
      {"trailingDotDot", "https://h.com/a/b/..", nullptr, "https://h.com/a/"},
      {"noPath", "https://h.com", nullptr, "https://h.com/"},
      {"nonAscii", "https://h.com/\xcf\x80?\xcf\x80#\xcf\x80", nullptr,
       "https://h.com/%CF%80?%CF%80#%CF%80"},
      {"quoteInQuery", "https://h.com/?a='b'", nullptr, "https://h.com/?a=%27b%27"},
      {"opaque", "mailto:someone@x.org", nullptr, "mailto:someone@x.org"},
      {"tabsAndSpaces", "  https://h.com/t\tab\n  ", nullptr, "https://h.com/tab"},
      {"ipv6", "https://[::1]:8443/x", nullptr, "https://[::1]:8443/x"},
      {"noBase", "nothing", nullptr, "TypeError ERR_INVALID_URL"},
      {"noHost", "https://", nullptr, "TypeError ERR_INVALID_URL"},
      {"portTooBig", "https://h.com:99999/", nullptr, "TypeError ERR_INVALID_URL"},
      {"spaceInHost", "http://a b/", nullptr, "TypeError ERR_INVALID_URL"},
      {"againstAnOpaqueBase", "x", "mailto:a@b", "TypeError ERR_INVALID_URL"},
  };
  json::array sent;
  for (const Case& c : cases)
    sent.push_back(json::array{c.name, c.input, c.base ? json::value(c.base) : json::value()});
  const json::value r = result("test/url", json::object{{"cases", sent}});
  for (const Case& c : cases)
    EXPECT_EQ(r.at(c.name), json::value(c.href)) << c.name << ": " << c.input;
  EXPECT_EQ(r.at("parts"),
            json::parse(R"(["https:","User","Pw","example.com:8443","example.com","8443","/a/b",)"
                        R"("?x=1","#top","https://example.com:8443",)"
                        R"("https://User:Pw@example.com:8443/a/b?x=1#top",)"
                        R"("{\"u\":\"https://User:Pw@example.com:8443/a/b?x=1#top\"}"])"));
  EXPECT_EQ(r.at("fileOrigin"), "null");
  EXPECT_EQ(r.at("params"), json::parse(R"(["1",["1","2"],"x y","\u00e9",true,null])"));
  EXPECT_EQ(r.at("paramsWritten"), "https://h.com/p?a=1&b=x+y&a=2&c=%C3%A9&d=&e=f+g%26h");
  EXPECT_EQ(r.at("canParse"), json::parse("[false,true]"));
}

// The same bundle run by Node and in the sandbox, on the same inputs: every answer the same,
// whole (each case's href or error, the parts, the search params, canParse). The table adds
// what the standard's host parser does that a hand-made one misses: hosts that end in a number
// are IPv4 addresses in any of their spellings, or no URL at all.
TEST_F(SandboxWebApis, UrlsAreWhatNodeMakesOfThemOnATableOfInputs) {
  const std::string node = testing::find_node();
  ASSERT_FALSE(node.empty()) << "node is not on the PATH (scripts/install-deps.sh installs it)";
  const std::vector<std::pair<const char*, const char*>> inputs = {
      {"http://1.2.3.4.5/", nullptr},
      {"http://0x7f.1/", nullptr},
      {"http://2130706433/", nullptr},
      {"http://0177.0.0.1/", nullptr},
      {"http://127.1/", nullptr},
      {"http://127.0.0.1./", nullptr},
      {"http://256.0.0.1/", nullptr},
      {"http://4294967296/", nullptr},
      {"http://1.2.3.09/", nullptr},
      {"http://0x/", nullptr},
      {"http://example.123/", nullptr},
      {"http://example.com./x", nullptr},
      {"http://[::ffff:127.0.0.1]/", nullptr},
      {"http://[0:0:0:0:0:0:0:1]/", nullptr},
      {"https://EXAMPLE.com:0443/a", nullptr},
      {"http://h.com:80/", nullptr},
      {"http://h.com/%7e/%2F", nullptr},
      {"http://h.com/a b?c d#e f", nullptr},
      {"ws://h.com/chat", nullptr},
      {"wss://h.com:443/", nullptr},
      {"ftp://h.com:21/f", nullptr},
      {"file:///C:/x", nullptr},
      {"http://user@h.com/", nullptr},
      {"http://:pw@h.com/", nullptr},
      {"https://h.com/../../x", nullptr},
      {"https://h.com/a/./b/%2E/c", nullptr},
      {"https://h.com?x", nullptr},
      {"https://h.com#x", nullptr},
      {"x/y", "https://h.com/a/b"},
      {"", "https://h.com/a?b"},
      {"//h2.com", "wss://h.com/a"},
      {"https:", "https://h.com/a"},
      {"javascript:alert(1)", nullptr},
      {"http://[2001:DB8::0:1]/", nullptr},
      {"http://[::]/", nullptr},
      {"http://[1:0:0:2::3:0]/", nullptr},
      {"http://[::1:2:3:4:5:6:7]/", nullptr},
      {"http://[1:0:0:0:1:0:0:0]/", nullptr},
      {"http://[1::2::3]/", nullptr},
      {"http://[::ffff:1.2.3]/", nullptr},
      {"http://[0:0:0:0:0:0:0:0:1]/", nullptr},
      {"http://[fe80::1%25eth0]/", nullptr},
      {"http://[::1/", nullptr},
      {"http://a-b.example-1.com/", nullptr},
  };
  json::array sent;
  int i = 0;
  for (const auto& [input, base] : inputs)
    sent.push_back(
        json::array{"c" + std::to_string(i++), input, base ? json::value(base) : json::value()});
  const json::object request{{"jsonrpc", "2.0"},
                             {"id", 1},
                             {"method", "test/url"},
                             {"params", json::object{{"cases", sent}}}};
  const auto run = testing::run_node(node, {(kFixtures / "web" / "dist" / "plugin.mjs").string()},
                                     json::serialize(request) + "\n");
  ASSERT_EQ(run.status, 0) << run.err;
  const json::value by_node = json::parse(run.out).at("result");
  const json::value ours = result("test/url", json::object{{"cases", sent}});
  ASSERT_TRUE(ours.is_object());
  i = 0;
  for (const auto& [input, base] : inputs) {
    const std::string name = "c" + std::to_string(i++);
    EXPECT_EQ(ours.at(name), by_node.at(name))
        << input << (base ? std::string(" against ") + base : std::string());
  }
  for (const char* part : {"parts", "fileOrigin", "params", "paramsWritten", "canParse"})
    EXPECT_EQ(ours.at(part), by_node.at(part)) << part;
}

// A Request's url is its text read as URL reads it, whether that text came before or not: the
// prelude keeps the hrefs of the last 64 texts, never what was no URL, and forgets them all
// when full.
TEST_F(SandboxWebApis, ARequestsUrlIsItsTextReadAsAUrlEveryTime) {
  json::array texts;
  for (int round = 0; round < 2; ++round) {
    texts.emplace_back("HTTPS://CHAT.Example.COM:443/x/../hello");
    texts.emplace_back("https://chat example.com/");
    texts.emplace_back(" https://h.com/a b?c d#e ");
  }
  for (int i = 0; i < 70; ++i)
    texts.emplace_back("https://h.com/p" + std::to_string(i));
  texts.emplace_back("HTTPS://CHAT.Example.COM:443/x/../hello");
  texts.emplace_back("https://h.com/p0");
  texts.emplace_back("https://h.com/p69");
  texts.emplace_back(std::string("https://h.com/") + std::string(3000, 'x'));
  texts.emplace_back(std::string("https://h.com/") + std::string(3000, 'x'));
  const json::value got = result("test/requests", json::object{{"texts", texts}});
  ASSERT_TRUE(got.is_array()) << json::serialize(got);
  ASSERT_EQ(got.as_array().size(), texts.size());
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const json::array& pair = got.as_array()[i].as_array();
    EXPECT_EQ(pair[0], pair[1]) << texts[i];
  }
  const auto url_of = [&](std::size_t i) { return got.as_array()[i].as_array()[0]; };
  for (std::size_t at : {std::size_t{0}, std::size_t{3}, std::size_t{76}})
    EXPECT_EQ(url_of(at), "https://chat.example.com/hello");
  EXPECT_EQ(url_of(1), "TypeError");
  EXPECT_EQ(url_of(4), "TypeError");
  EXPECT_EQ(url_of(5), "https://h.com/a%20b?c%20d#e");
  EXPECT_EQ(url_of(77), "https://h.com/p0");
  EXPECT_EQ(url_of(78), "https://h.com/p69");
  EXPECT_EQ(url_of(80), json::value(std::string("https://h.com/") + std::string(3000, 'x')));
}

// TextEncoder and TextDecoder of the same bundle by Node and in the sandbox: the same answers.
TEST_F(SandboxWebApis, TextEncodingIsWhatNodeMakesOfIt) {
  const std::string node = testing::find_node();
  ASSERT_FALSE(node.empty()) << "node is not on the PATH (scripts/install-deps.sh installs it)";
  const auto run = testing::run_node(node, {(kFixtures / "web" / "dist" / "plugin.mjs").string()},
                                     R"({"jsonrpc":"2.0","id":1,"method":"test/text"})"
                                     "\n");
  ASSERT_EQ(run.status, 0) << run.err;
  const json::object by_node = json::parse(run.out).at("result").as_object();
  const json::value ours = result("test/text");
  ASSERT_TRUE(ours.is_object());
  for (const auto& [name, value] : by_node) {
    // Node knows latin1; the sandbox's TextDecoder is UTF-8 only (docs/sandbox.md).
    if (name == "label") continue;
    EXPECT_EQ(ours.at(name), value) << name;
  }
}

TEST_F(SandboxWebApis, TextEncoderAndDecoderAreUtf8WithReplacementsBomAndStreams) {
  const json::value r = result("test/text");
  EXPECT_EQ(r.at("encoded"), "61 c3 a9 e2 82 ac f0 9f 98 80");
  EXPECT_EQ(r.at("loneHigh"), "ef bf bd 78");
  EXPECT_EQ(r.at("loneLow"), "78 ef bf bd");
  EXPECT_EQ(r.at("empty"), 0);
  EXPECT_EQ(r.at("encodeInto"), json::parse(R"([3,5,"61 f0 9f 98 80"])"));
  EXPECT_EQ(r.at("fourBytes"), "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
  EXPECT_EQ(r.at("bom"), "a");
  EXPECT_EQ(r.at("bomKept"),
            "\xef\xbb\xbf"
            "a");
  const std::string fffd = "\xef\xbf\xbd";
  EXPECT_EQ(r.at("invalidLead"), json::value(fffd + "a"));
  EXPECT_EQ(r.at("cutShort"), json::value(fffd));
  EXPECT_EQ(r.at("badContinuation"), json::value(fffd + "(" + fffd));
  EXPECT_EQ(r.at("surrogateBytes"), json::value(fffd + fffd + fffd));
  EXPECT_EQ(r.at("overlong"), json::value(fffd + fffd));
  EXPECT_EQ(r.at("pastUnicode"), json::value(fffd + fffd + fffd + fffd));
  EXPECT_EQ(r.at("fatal"), "TypeError ERR_ENCODING_INVALID_ENCODED_DATA");
  EXPECT_EQ(r.at("fatalValid"), json::value(fffd)) << "a U+FFFD in the bytes is no error";
  EXPECT_EQ(r.at("stream"), json::parse(R"(["","\ud83d\ude00a",""])"));
  EXPECT_EQ(r.at("views"), json::parse(R"([" ABC","AB","BC"])"));
  EXPECT_EQ(r.at("label"), json::parse(R"(["utf-8","RangeError ERR_ENCODING_NOT_SUPPORTED"])"));
}

// The setters, each case checked against what Node 20 gives for the same assignment (a value a
// setter cannot take leaves the URL as it was).
TEST_F(SandboxWebApis, UrlSettersChangeOnePartAsTheStandardSays) {
  struct Case {
    const char* name;
    const char* href;
    const char* part;
    const char* value;
    const char* after;
  };
  const std::vector<Case> cases = {
      {"pathname", "https://h.com/a/b?q#f", "pathname", "/x/y z", "https://h.com/x/y%20z?q#f"},
      {"pathnameQuestion", "https://h.com/a", "pathname", "/a?b#c", "https://h.com/a%3Fb%23c"},
      {"pathnameDots", "https://h.com/a/b", "pathname", "/x/../y/./z", "https://h.com/y/z"},
      {"pathnameRelative", "https://h.com/a", "pathname", "no/slash", "https://h.com/no/slash"},
      {"pathnameEmpty", "https://h.com/a", "pathname", "", "https://h.com/"},
      {"pathnameBackslash", "https://h.com/a", "pathname", "\\x\\y", "https://h.com/x/y"},
      {"pathnameFile", "file:///etc/x", "pathname", "/home/u/rules.json",
       "file:///home/u/rules.json"},
      {"pathnameOpaque", "mailto:a@b.c", "pathname", "/x", "mailto:a@b.c"},
      {"hostname", "https://h.com:8443/p", "hostname", "Other.ORG", "https://other.org:8443/p"},
      {"hostnameWithPort", "https://h.com:8443/p", "hostname", "other.org:99",
       "https://h.com:8443/p"},
      {"hostnameWithPath", "https://h.com/p", "hostname", "other.org/x?y", "https://other.org/p"},
      {"hostnameEmpty", "https://h.com/p", "hostname", "", "https://h.com/p"},
      {"hostnameForbidden", "https://h.com/p", "hostname", "a b.com", "https://h.com/p"},
      {"host", "https://h.com/p", "host", "other.org:8080", "https://other.org:8080/p"},
      {"hostDefaultPort", "https://h.com:8443/p", "host", "other.org:443", "https://other.org/p"},
      {"hostNoPort", "https://h.com:8443/p", "host", "other.org", "https://other.org:8443/p"},
      {"hostBadPort", "https://h.com:8443/p", "host", "other.org:99999",
       "https://other.org:8443/p"},
      {"port", "https://h.com/p", "port", "8080", "https://h.com:8080/p"},
      {"portDefault", "https://h.com:8080/p", "port", "443", "https://h.com/p"},
      {"portEmpty", "https://h.com:8080/p", "port", "", "https://h.com/p"},
      {"portTrailing", "https://h.com/p", "port", "81abc", "https://h.com:81/p"},
      {"portLetters", "https://h.com:82/p", "port", "abc", "https://h.com:82/p"},
      {"portTooLarge", "https://h.com:82/p", "port", "65536", "https://h.com:82/p"},
      {"portFile", "file:///x", "port", "80", "file:///x"},
      {"protocol", "http://h.com:443/p", "protocol", "https", "https://h.com/p"},
      {"protocolColon", "http://h.com/p", "protocol", "WSS:", "wss://h.com/p"},
      {"protocolToNonSpecial", "http://h.com/p", "protocol", "foo", "http://h.com/p"},
      {"protocolBad", "http://h.com/p", "protocol", "1http", "http://h.com/p"},
      {"protocolToFileWithPort", "http://h.com:81/p", "protocol", "file", "http://h.com:81/p"},
      {"username", "https://h.com/p", "username", "ada lovelace", "https://ada%20lovelace@h.com/p"},
      {"password", "https://ada@h.com/p", "password", "p@ss:w", "https://ada:p%40ss%3Aw@h.com/p"},
      {"usernameFile", "file:///x", "username", "ada", "file:///x"},
      {"fileHostname", "file:///x", "hostname", "server", "file://server/x"},
      {"fileLocalhost", "file://server/x", "hostname", "localhost", "file:///x"},
  };
  json::array sent;
  for (const auto& c : cases)
    sent.push_back(json::array{c.name, c.href, c.part, c.value});
  const json::value r = result("test/urlSetters", json::object{{"cases", sent}});
  ASSERT_TRUE(r.is_object());
  for (const auto& c : cases)
    EXPECT_EQ(r.at(c.name), c.after)
        << c.name << ": " << c.href << " ." << c.part << " = " << c.value;
}

TEST_F(SandboxWebApis, BytesWrittenToStdoutAreUtf8) {
  EXPECT_EQ(result("test/writeBytes"), true);
  EXPECT_EQ(result_of(json::value("bytes")), "\xc3\xa9");
}

// A plugin's local time is in the zone its host names (SandboxOptions::time_zone): its dates,
// its offset, Intl's zone. ICU once looked for the system's zone itself, where /etc/localtime
// leads, and the filter killed the helper at the plugin's first local date.
class SandboxTimeZone : public SandboxWebApis {
 protected:
  void SetUp() override {}  // each test starts the bundle in its zone
  void start_in(std::string zone) {
    auto options = SandboxOptions::installed();
    options.time_zone = std::move(zone);
    factory_ = std::make_unique<SandboxProgramFactory>(io_.get_executor(), context_, options);
    SandboxWebApis::SetUp();
  }
  // The offset from UTC, in minutes, the C library gives for the epoch in `zone`.
  static long c_library_offset(const std::string& zone) {
    const char* was = std::getenv("TZ");
    const std::string saved = was ? was : "";
    ::setenv("TZ", zone.c_str(), 1);
    ::tzset();
    std::time_t epoch = 0;
    std::tm tm{};
    ::localtime_r(&epoch, &tm);
    if (was) {
      ::setenv("TZ", saved.c_str(), 1);
    } else {
      ::unsetenv("TZ");
    }
    ::tzset();
    return tm.tm_gmtoff / 60;
  }
};

TEST_F(SandboxTimeZone, APluginsLocalTimeIsInTheZoneItsHostNames) {
  start_in("Asia/Kolkata");
  const json::value t = result("test/time");
  ASSERT_TRUE(t.is_object());
  EXPECT_EQ(t.at("offset"), -330);
  EXPECT_EQ(t.at("hours"), 5);
  EXPECT_EQ(t.at("zone"), "Asia/Kolkata");
  EXPECT_EQ(t.at("text"), "Thu Jan 01 1970 05:30:00 GMT+0530 (India Standard Time)");
  EXPECT_EQ(t.at("local"), "1/1/1970, 5:30:00 AM");
  EXPECT_EQ(t.at("iso"), "1970-01-01T00:00:00.000Z");
  EXPECT_FALSE(end_) << end_->reason;
}

TEST_F(SandboxTimeZone, TheHostsChoiceIsTheSystemsZone) {
  const std::string zone = system_time_zone();
  EXPECT_EQ(SandboxOptions::installed().time_zone, zone);
  start_in(zone);
  const json::value t = result("test/time");
  ASSERT_TRUE(t.is_object());
  EXPECT_EQ(t.at("offset").to_number<long>(), -c_library_offset(zone)) << zone;
  EXPECT_FALSE(end_) << end_->reason;
}

TEST_F(SandboxTimeZone, ANameThatIsNoZoneIsUtcAndNeverACrash) {
  for (const char* zone : {"../../etc/passwd", "Etc/GMT+5"}) {
    start_in(zone);
    const json::value t = result("test/time");
    ASSERT_TRUE(t.is_object()) << zone;
    EXPECT_EQ(t.at("iso"), "1970-01-01T00:00:00.000Z");
    EXPECT_FALSE(end_) << zone << ": " << end_->reason;
    program_->stop();
    ended();
  }
}

}  // namespace
}  // namespace escouade::sandbox
