#pragma once

// A real HTTP/1.1 server for the network tests, over TLS (a certificate of a TestCa) or not,
// listening on one of the lab's addresses: a thread accepts, a thread a connection answers one
// request. Its routes are what the tests need of the world:
//   /hello             200, "hello from <Host>"
//   /api/chat.postMessage  Slack's: {"ok":true,...} with a bearer token xoxb-..., else
//                      {"ok":false,"error":"not_authed"}
//   /echo              200, JSON {method, target, host, headers, body} of the request
//   /status?code=N     N, with Location: https://other.example.org/ for a 3xx
//   /slow?ms=N         200 after N ms
//   /big?bytes=N       200 with N bytes of 'x' (Content-Length)
//   /binary            200, bytes that are not UTF-8
//   /chunked           200, chunked, in three pieces, "é" cut between two of them
//   /stream?bytes=N    200, chunked: N bytes of 'y' in pieces of 16 KiB
//   /sse               200 text/event-stream: two events, then silence until the client goes
//   /silent            200, the headers, then nothing until the client goes
//   /ws                a WebSocket: a text message comes back as "echo:<it>", a binary one as it
//                      is; "big:N" gets N bytes back, "close" a close (1001, "bye"), "drop" the
//                      connection cut without a close
// Every request is recorded (seen()). Each answer says `Connection: close` and its connection
// closes after it, unless keep_alive(true) was called: then the answers of the routes above but
// /sse, /silent and /ws keep their connection open for the next request when the client did not
// ask to close it, and for those a query may say what the server does after its answer:
//   close=1            says `Connection: close` and closes, as without keep_alive
//   then=close         closes the connection at once, without saying it (as a server whose idle
//                      delay passed)
//   then=drop          reads the next request (recorded) and closes the connection unanswered
//   keep=N             says `Keep-Alive: timeout=N`

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "support/test_ca.hpp"

namespace escouade::test {

struct SeenRequest {
  std::string method;
  std::string target;
  std::string host;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

class TestWebServer {
 public:
  // Listens on `address`:`port` (port 0: one the kernel picks). `tls`: the certificate to
  // present; none: plain http.
  TestWebServer(const std::string& address, std::uint16_t port, std::optional<TestCertificate> tls);
  ~TestWebServer();
  TestWebServer(const TestWebServer&) = delete;
  TestWebServer& operator=(const TestWebServer&) = delete;

  std::uint16_t port() const;
  std::vector<SeenRequest> seen() const;
  // Forgets the requests seen so far, keeping their room: a benchmark's requests after it are
  // recorded without the record growing (a growth faults new pages in while a request waits).
  void forget_seen();
  // How many connections were accepted.
  int connections() const;
  // How many of them ended (closed by either side).
  int ended() const;
  // Whether answers may keep their connection open (see above); false at first.
  void keep_alive(bool on);
  // Bytes /stream wrote to its socket so far.
  std::uint64_t streamed() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace escouade::test
