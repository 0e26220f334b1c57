// A WebSocket over the connection every exchange makes (connection.hpp): wss only, its
// handshake within the open delay, one coroutine reading and one writing what the caller queued.

#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <deque>

#include "net/connection.hpp"
#include "protocol/gen/errors.hpp"

namespace escouade::net {

namespace websocket = boost::beast::websocket;
using namespace detail;

namespace {

constexpr std::size_t kReadPiece = 64 * 1024;  // the most one read of a message takes

// The headers of the handshake that are the WebSocket's own: the client writes them.
bool handshake_header(const std::string& lower_name) {
  return lower_name == "sec-websocket-key" || lower_name == "sec-websocket-version" ||
         lower_name == "sec-websocket-extensions" || lower_name == "sec-websocket-accept";
}

class WsJob final : public Job, public WebSocket {
 public:
  WsJob(std::shared_ptr<ClientImpl> client, const policy::EgressTarget& target,
        std::vector<Header> headers, WebSocketLimits limits, Note note, WebSocketHandlers handlers)
      : Job(std::move(client), target, std::move(note)),
        headers_(std::move(headers)),
        limits_(limits),
        handlers_(std::move(handlers)) {}

  void start() {
    expire_after(limits_.open,
                 "no answer from " + target_.host + " within " + seconds_text(limits_.open));
  }

  void cancel() override {
    ended_ = true;
    cancel_now();
  }

  Result<void> send(bool text, std::string data) override {
    if (ended_ || closing_) return refused("the socket is closing: nothing more is sent on it");
    if (data.size() > limits_.max_message)
      return refused("a message of " + std::to_string(data.size()) + " bytes passes " +
                     bytes_text(limits_.max_message) + ", the most a WebSocket message may hold");
    if (waiting_ > 0 && waiting_ + data.size() > limits_.max_waiting)
      return refused(std::to_string(waiting_) +
                     " bytes already wait to be sent on this socket: with this message they "
                     "would pass " +
                     bytes_text(limits_.max_waiting) + "; send it once they went");
    waiting_ += data.size();
    queue_.push_back(Outgoing{text, std::move(data)});
    wake_.cancel();
    return {};
  }

  void close() override {
    if (ended_ || closing_) return;
    closing_ = true;
    wake_.cancel();
  }

 private:
  struct Outgoing {
    bool text;
    std::string data;
  };
  using Stream = websocket::stream<beast::ssl_stream<beast::tcp_stream>&>;

  void fail(Error e) override {
    if (!cancelled_ && handlers_.open) handlers_.open(std::move(e));
  }

  awaitable<void> exchange(beast::tcp_stream&) override {
    // judge_url gives a WebSocket wss alone: this is never reached.
    fail(refused("only wss is sent for a WebSocket"));
    co_return;
  }

  awaitable<void> exchange(beast::ssl_stream<beast::tcp_stream>& s) override {
    auto self = shared_from_this();
    ws_.emplace(s);
    // The reader counts a message's size itself, to close with 1009 past the limit (Beast's own
    // limit ends in a TLS error when the peer goes on sending).
    ws_->read_message_max(0);
    // The deadline of the open delay is the client's own; then none: a quiet socket stays.
    websocket::stream_base::timeout none{};
    none.handshake_timeout = websocket::stream_base::none();
    none.idle_timeout = websocket::stream_base::none();
    none.keep_alive_pings = false;
    ws_->set_option(none);
    ws_->set_option(websocket::stream_base::decorator([this](websocket::request_type& req) {
      bool agent = false;
      for (const Header& h : headers_) {
        const std::string name = ascii_lower(h.name);
        if (handshake_header(name)) continue;
        req.insert(h.name, h.value);
        agent = agent || name == "user-agent";
      }
      if (!agent) req.set(boost::beast::http::field::user_agent, kUserAgent);
    }));
    websocket::response_type answer;
    error_code ec;
    co_await ws_->async_handshake(answer, host_header(target_), target_.path,
                                  asio::redirect_error(asio::use_awaitable, ec));
    if (cancelled_) co_return;
    disarm();
    if (ec == websocket::error::upgrade_declined)
      co_return fail(failed(target_.host + " declined the WebSocket: it answered " +
                            std::to_string(answer.result_int())));
    if (ec) co_return fail(failed(broke("the WebSocket to " + target_.host + " did not open", ec)));
    handlers_.open(Result<void>());
    if (cancelled_) co_return;
    asio::co_spawn(client_executor(), write_loop(self), [](std::exception_ptr e) {
      if (e) std::rethrow_exception(e);
    });
    std::string message;
    bool too_big = false;
    for (;;) {
      beast::flat_buffer in;
      co_await ws_->async_read_some(in, kReadPiece, asio::redirect_error(asio::use_awaitable, ec));
      if (cancelled_) co_return;
      if (ec) break;
      if (message.size() + in.size() > limits_.max_message) {
        too_big = true;
        break;
      }
      message += beast::buffers_to_string(in.data());
      if (!ws_->is_message_done()) continue;
      handlers_.message(ws_->got_text(), std::move(message));
      message.clear();
      if (cancelled_) co_return;
    }
    int code = 1006;
    std::string reason;
    if (too_big) {
      code = 1009;
      reason = "a message over " + bytes_text(limits_.max_message) + " came";
      co_await close_with(websocket::close_reason(websocket::close_code::too_big, reason));
      if (cancelled_) co_return;
    } else if (ec == websocket::error::closed || (closing_ && close_sent_)) {
      // The peer's close, or its answer to the plugin's: its code, 1000 when it gave none.
      const auto& r = ws_->reason();
      code = r.code == websocket::close_code::none ? 1000 : r.code;
      reason.assign(r.reason.data(), r.reason.size());
    } else {
      reason = broke("the connection to " + target_.host + " broke", ec);
    }
    ended_ = true;
    close();
    handlers_.closed(code, std::move(reason));
  }

  // Sends a close frame when no write is under way (Beast allows one at a time), within a
  // delay; the connection is closed after it in any case.
  awaitable<void> close_with(websocket::close_reason why) {
    ended_ = true;
    wake_.cancel();  // the writer stops
    if (writing_) co_return;
    error_code ec;
    expire_after(std::chrono::seconds(5), "");
    co_await ws_->async_close(why, asio::redirect_error(asio::use_awaitable, ec));
  }

  // Sends what was queued, in order; closes with 1000 once asked and nothing waits.
  awaitable<void> write_loop(std::shared_ptr<Job> self) {
    (void)self;  // held in the coroutine's frame: the job outlives the loop
    error_code ec;
    for (;;) {
      while (queue_.empty() && !closing_ && !ended_) {
        wake_.expires_at(asio::steady_timer::time_point::max());
        co_await wake_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      }
      if (ended_) co_return;
      if (queue_.empty()) {
        // The reader sees the peer's answer to the close; past the delay, the connection goes.
        expire_after(std::chrono::seconds(5), "");
        co_await ws_->async_close(websocket::close_code::normal,
                                  asio::redirect_error(asio::use_awaitable, ec));
        close_sent_ = !ec;
        co_return;
      }
      Outgoing next = std::move(queue_.front());
      queue_.pop_front();
      ws_->text(next.text);
      writing_ = true;
      co_await ws_->async_write(asio::buffer(next.data),
                                asio::redirect_error(asio::use_awaitable, ec));
      writing_ = false;
      waiting_ -= next.data.size();
      if (ec) co_return;  // the reader tells how it broke
    }
  }

  const asio::any_io_executor& client_executor() const;

  std::vector<Header> headers_;
  WebSocketLimits limits_;
  WebSocketHandlers handlers_;
  std::optional<Stream> ws_;
  std::deque<Outgoing> queue_;
  std::size_t waiting_ = 0;
  bool closing_ = false;     // the caller asked for the close
  bool close_sent_ = false;  // and it went
  bool writing_ = false;
  bool ended_ = false;
};

const asio::any_io_executor& WsJob::client_executor() const {
  return client_->executor();
}

}  // namespace

namespace detail {

std::shared_ptr<WebSocket> ClientImpl::websocket(const policy::EgressTarget& target,
                                                 std::vector<Header> headers,
                                                 WebSocketLimits limits, Note note,
                                                 WebSocketHandlers handlers) {
  auto job = std::make_shared<WsJob>(shared_from_this(), target, std::move(headers), limits,
                                     std::move(note), std::move(handlers));
  job->start();
  start(job);
  return job;
}

}  // namespace detail

}  // namespace escouade::net
