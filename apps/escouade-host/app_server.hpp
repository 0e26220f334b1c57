#pragma once

// escouade-host's side of the conversation with the app: JSON-RPC 2.0 on its stdin and stdout,
// one message per line, through the same codec and rpc session plugins are spoken to with.
// The host/* methods (app_methods.cpp) are bound onto a Host with the types generated from
// schema/host-protocol-1.json; docs/host-protocol.md describes them.
//
// Thread: the io_context's single thread.

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "host/host.hpp"
#include "protocol/encode.hpp"
#include "protocol/framing.hpp"
#include "rpc/session.hpp"
#include "runtime/line_queue.hpp"

namespace escouade::app {

class AppServer {
 public:
  // Reads requests from `in_fd` and writes answers and notifications to `out_fd` (both taken
  // over). `stopped` is called once the host has closed (host/shutdown, or the input's end).
  AppServer(boost::asio::io_context& io, int in_fd, int out_fd, std::function<void()> stopped);

  // Binds the host/* methods on `host`; call once, before start().
  void bind(host::Host& host);
  // The payload of the host/call being dispatched, when its line carried one as text; taken
  // once (by app_methods.cpp's host/call).
  // A view into the line being read: valid until the handler that takes it returns.
  std::optional<std::string_view> take_payload() { return std::exchange(payload_, std::nullopt); }
  void start();
  // Stops reading the app and closes the session with it: from now on nothing reaches the
  // host, and answers still owed go nowhere. Before the host is destroyed.
  void close();
  // What the host reports on its own: host/statusChanged.
  void status_changed(const supervisor::Status& s);
  // Whether everything written to the app has gone out (or cannot: the app is gone).
  bool drained() const noexcept { return pending_.empty() && !writing_; }
  // What waits to go to the app, in bytes.
  std::size_t backlog() const noexcept { return pending_.bytes(); }

  // Past this backlog (an app that does not read its input) the host reads no more requests
  // from it, and notifications are dropped, the oldest first; reading resumes at half.
  static constexpr std::size_t kMaxBacklog = 16 * 1024 * 1024;
  // The most bytes of lines one write to the app takes, and the room its buffer keeps between
  // writes (a longer line's is given back).
  static constexpr std::size_t kKeptWriteRoom = 256 * 1024;
  // Calls `done` once drained(): at once when it is already.
  void when_drained(std::function<void()> done);

 private:
  void read();
  // One line of the app's: a host/call's payload taken out as text (payload_), the rest to the
  // session.
  void take_line(std::string_view line);
  // A droppable line (host/statusChanged) may be dropped when the app does not read.
  void write(std::string line, proto::Delivery delivery);
  void write_next();
  void close_host();

  boost::asio::posix::stream_descriptor in_;
  boost::asio::posix::stream_descriptor out_;
  std::function<void()> stopped_;
  host::Host* host_ = nullptr;
  rpc::Session session_;
  proto::LineFramer framer_;
  std::array<char, 64 * 1024> buffer_{};
  // The payload of the host/call being dispatched, taken out of its line as checked JSON text
  // (its place in the line given to the session holds null); nullopt for any other line.
  std::optional<std::string_view> payload_;
  // What goes to the app: gathered while a write is in flight, then sent in one write; past
  // kMaxBacklog, droppable lines go, the oldest first (LineQueue).
  runtime::LineQueue pending_{kMaxBacklog};
  std::string in_flight_;
  bool writing_ = false;
  bool paused_ = false;  // not reading the app: its input waits for the backlog to go
  bool closing_ = false;
  std::function<void()> drained_;
};

}  // namespace escouade::app
