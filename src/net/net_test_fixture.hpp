#pragma once

// The client's tests' world (client_test.cpp, websocket_test.cpp): in the network lab
// (tests/support/net_lab.hpp), a TLS server for chat.example.com and its subdomains, one over
// IPv6, decoys on loopback and the private network that count who reaches them, a test CA
// given as --ca-file, and a plugin's grant that declares names resolving where they must not.

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <fstream>

#include "base/temp_dir.hpp"
#include "net/client.hpp"
#include "protocol/gen/errors.hpp"
#include "support/test_ca.hpp"
#include "support/test_web_server.hpp"

namespace escouade::net {

using namespace std::chrono_literals;
using test::TestCa;
using test::TestWebServer;

class NetClient : public ::testing::Test {
 protected:
  NetClient()
      : chat_("203.0.113.10", 443,
              ca_.issue({"chat.example.com", "api.chat.example.com", "mixed.example.com"})),
        v6_("2001:db8::10", 443, ca_.issue({"v6.example.com"})),
        // Decoys where a declared name must not lead: they count who reaches them.
        loopback_("127.0.0.1", 443, ca_.issue({"sneaky.example.com", "mixed.example.com"})),
        intranet_("10.1.2.3", 443, ca_.issue({"intranet.example.com"})) {
    std::ofstream(dir_.path() / "ca.pem") << ca_.pem();
    grant_.plugin_id = "dev.escouade.slack";
    grant_.hosts = {"chat.example.com",  "sneaky.example.com", "intranet.example.com",
                    "mixed.example.com", "v6.example.com",     "files.example.com",
                    "mapped.example.com"};
    client_ = make_client({});
  }

  std::shared_ptr<Client> make_client(std::string proxy) {
    auto c = Client::make(io_.get_executor(), Settings{std::move(proxy), dir_.path() / "ca.pem"});
    EXPECT_TRUE(c) << c.error().message;
    return c ? *c : nullptr;
  }

  // Through `client` (client_ by default) and pool_ (none by default).
  Result<Response> fetch(const std::string& url, Request request = {}, FetchLimits limits = {},
                         Client* client = nullptr) {
    auto target = policy::judge_url(grant_, url, policy::UrlUse::fetch);
    if (!target) return target.error();
    if (auto checked = check_request(request); !checked) return checked.error();
    std::optional<Result<Response>> out;
    (client ? client : client_.get())
        ->fetch(
            pool_, *target, std::move(request), limits,
            [this](const std::string& n) { notes_.push_back(n); },
            [&](Result<Response> r) { out = std::move(r); });
    run_until([&] { return out.has_value(); });
    if (!out) return make_error(proto::ErrorCode::failed, "the test saw no answer in 30 s");
    return std::move(*out);
  }

  template <class Done>
  void run_until(Done done) {
    io_.restart();
    const auto until = std::chrono::steady_clock::now() + 30s;  // a safety net only
    while (!done() && std::chrono::steady_clock::now() < until)
      io_.run_one_for(100ms);
  }

  static std::string header(const Head& h, const std::string& name) {
    for (const auto& x : h.headers)
      if (x.name == name) return x.value;
    return "<none>";
  }

  TempDir dir_{"escouade-net"};
  TestCa ca_;
  TestWebServer chat_, v6_, loopback_, intranet_;
  boost::asio::io_context io_;
  policy::EgressGrant grant_;
  std::shared_ptr<Client> client_;
  std::shared_ptr<Pool> pool_;  // what fetch() gives the client; none: a connection each
  std::vector<std::string> notes_;
};

}  // namespace escouade::net
