// request_wire: the bytes of a request, the same as Beast's serializer writes for it.

#include "net/request_wire.hpp"

#include <gtest/gtest.h>

#include <boost/beast/http/write.hpp>
#include <sstream>

namespace escouade::net::detail {
namespace {

namespace http = boost::beast::http;
using Request = http::request<http::string_body>;

// What Beast's serializer writes for `request`.
std::string serialized(const Request& request) {
  std::ostringstream out;
  out << request;
  return out.str();
}

Request get(const std::string& target) {
  Request r{http::verb::get, target, 11};
  r.set(http::field::host, "chat.example.com");
  r.set(http::field::user_agent, "Escouade");
  r.prepare_payload();
  return r;
}

TEST(RequestWire, AGetIsItsStartLineItsFieldsAndAnEmptyLine) {
  const Request r = get("/hello?a=1&b=%20");
  EXPECT_EQ(
      request_wire(r).value(),
      "GET /hello?a=1&b=%20 HTTP/1.1\r\nHost: chat.example.com\r\nUser-Agent: Escouade\r\n\r\n");
  EXPECT_EQ(request_wire(r).value(), serialized(r));
}

TEST(RequestWire, EachRequestIsWhatBeastsSerializerWrites) {
  std::vector<Request> requests;
  {
    Request r{http::verb::post, "/v1/messages", 11};
    r.set(http::field::host, "api.example.com:8443");
    r.insert("Content-Type", "application/json; charset=utf-8");
    r.insert("X-Tag", "a");
    r.insert("x-tag", "b, c");  // the same name again, kept in its order
    r.insert("X-Value", "caf\xc3\xa9 \t spaced");
    r.body() = R"({"text":"bonjour\n"})";
    r.prepare_payload();  // Content-Length
    requests.push_back(r);
  }
  {
    Request r{http::verb::unknown, "/purge/me", 11};
    r.method_string("PURGE");  // a method Beast does not know
    r.set(http::field::host, "[2001:db8::1]");
    r.set(http::field::connection, "close");
    r.prepare_payload();
    requests.push_back(r);
  }
  {
    Request r{http::verb::put, "/empty", 11};
    r.set(http::field::host, "h");
    r.body() = "";
    r.prepare_payload();  // Content-Length: 0
    requests.push_back(r);
  }
  {
    Request r = get("/");
    r.version(10);
    requests.push_back(r);
  }
  {
    Request r{http::verb::delete_, "/big", 11};
    r.set(http::field::host, "h");
    r.body() = std::string(100000, 'x');
    r.prepare_payload();
    requests.push_back(r);
  }
  for (const Request& r : requests) {
    const auto wire = request_wire(r);
    ASSERT_TRUE(wire) << serialized(r);
    EXPECT_EQ(*wire, serialized(r));
  }
}

TEST(RequestWire, AChunkedRequestIsLeftToTheSerializer) {
  Request r{http::verb::post, "/stream", 11};
  r.set(http::field::host, "h");
  r.chunked(true);
  r.body() = "some";
  EXPECT_EQ(request_wire(r), std::nullopt);
  Request old = get("/");
  old.version(9);
  EXPECT_EQ(request_wire(old), std::nullopt) << "neither HTTP/1.0 nor 1.1";
}

}  // namespace
}  // namespace escouade::net::detail
