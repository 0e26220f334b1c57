#include "services/ws.hpp"

#include <map>
#include <set>
#include <string>

#include "base/base64.hpp"
#include "base/lifeline.hpp"
#include "net/client.hpp"
#include "protocol/gen/errors.hpp"
#include "protocol/gen/methods.hpp"
#include "services/net.hpp"

namespace escouade::services {

namespace method = proto::method;

namespace {

// The sockets of one run. Held by its RunScope: when the run ends each is cut (no ws/closed
// follows: no one is left to hear it). Thread: the host's.
class RunSockets {
 public:
  RunSockets(const NetContext& ctx, PluginChannel channel, std::shared_ptr<ServedPlugin> plugin)
      : ctx_(ctx), channel_(std::move(channel)), plugin_(std::move(plugin)) {}
  ~RunSockets() {
    lifeline_.end();
    for (auto& [id, socket] : sockets_)
      socket->cancel();
  }
  RunSockets(const RunSockets&) = delete;
  RunSockets& operator=(const RunSockets&) = delete;

  void open(const proto::WsOpenParams& p, rpc::Reply<method::WsOpen> reply) {
    auto target = policy::judge_url(plugin_->egress, p.url, policy::UrlUse::websocket);
    if (!target) return answer_error(target.error(), reply);
    net::Request handshake;  // its headers checked as a request's are
    if (p.headers)
      for (const auto& [name, value] : *p.headers)
        handshake.headers.push_back(net::Header{name, value});
    if (auto checked = net::check_request(handshake); !checked)
      return answer_error(checked.error(), reply);
    if (!ctx_.client) return answer_error(no_network(ctx_), reply);
    if (sockets_.size() >= kSocketsAtOnce)
      return answer_error(make_error(proto::ErrorCode::refused,
                                     std::to_string(kSocketsAtOnce) +
                                         " WebSockets are already open, the most a sandboxed "
                                         "plugin may have at once; one must close first"),
                          reply);
    const std::int64_t id = next_++;
    auto held = std::make_shared<rpc::Reply<method::WsOpen>>(std::move(reply));
    net::WebSocketLimits limits;
    limits.open = std::chrono::milliseconds(plugin_->manifest.limits.net_timeout_ms);
    net::WebSocketHandlers handlers{
        lifeline_.guard([this, id, held](Result<void> opened) {
          if (!opened) {
            sockets_.erase(id);
            return answer_error(opened.error(), *held);
          }
          held->result(proto::WsOpenResult{id});
        }),
        lifeline_.guard([this, id](bool text, std::string data) {
          proto::WsMessageParams m;
          m.socket = id;
          if (text)
            m.text = std::move(data);
          else
            m.data_base64 = base64_encode(data);
          channel_.notify<method::WsMessage>(m);
        }),
        lifeline_.guard([this, id](int code, std::string reason) {
          sockets_.erase(id);
          if (code == 1006 || code == 1009)
            plugin_->journal->warn("ws/open: socket " + std::to_string(id) + " ended (" +
                                   std::to_string(code) + "): " + reason);
          channel_.notify<method::WsClosed>(proto::WsClosedParams{id, code, std::move(reason)});
        }),
    };
    sockets_[id] = ctx_.client->websocket(*target, std::move(handshake.headers), limits,
                                          lifeline_.guard([this](const std::string& text) {
                                            if (said_.insert(text).second)
                                              plugin_->journal->info("ws/open: " + text);
                                          }),
                                          std::move(handlers));
  }

  void send(const proto::WsSendParams& p, rpc::Reply<method::WsSend> reply) {
    if (p.text.has_value() == p.data_base64.has_value())
      return reply.error(proto::ErrorCode::invalid_params,
                         "params: text or dataBase64, one of them");
    auto it = sockets_.find(p.socket);
    if (it == sockets_.end())
      return reply.error(proto::ErrorCode::invalid_params,
                         "params.socket: no open socket " + std::to_string(p.socket));
    std::string data;
    if (p.data_base64) {
      auto bytes = base64_decode(*p.data_base64);
      if (!bytes)
        return reply.error(proto::ErrorCode::invalid_params, "params.dataBase64 is not base64");
      data = std::move(*bytes);
    } else {
      data = *p.text;
    }
    auto sent = it->second->send(p.text.has_value(), std::move(data));
    if (!sent) {
      // Said once per stretch of refusals: a plugin that insists does not flood its journal.
      if (!told_full_) plugin_->journal->warn("ws/send refused: " + sent.error().message);
      told_full_ = true;
      return reply.error(sent.error());
    }
    told_full_ = false;
    reply.result(nullptr);
  }

  void close(const proto::WsCloseParams& p, rpc::Reply<method::WsClose> reply) {
    auto it = sockets_.find(p.socket);
    if (it == sockets_.end())
      return reply.error(proto::ErrorCode::invalid_params,
                         "params.socket: no open socket " + std::to_string(p.socket));
    it->second->close();  // ws/closed follows
    reply.result(nullptr);
  }

 private:
  template <class Reply>
  void answer_error(const Error& e, Reply& reply) {
    journal_error(*plugin_->journal, "ws/open", e);
    reply.error(e);
  }

  NetContext ctx_;
  PluginChannel channel_;
  std::shared_ptr<ServedPlugin> plugin_;
  std::map<std::int64_t, std::shared_ptr<net::WebSocket>> sockets_;
  std::set<std::string> said_;
  std::int64_t next_ = 1;
  bool told_full_ = false;
  Lifeline lifeline_;
};

}  // namespace

void serve_ws(rpc::Session& session, RunScope& run, const NetContext& ctx,
              std::shared_ptr<ServedPlugin> plugin) {
  RunSockets& sockets =
      run.hold(std::make_unique<RunSockets>(ctx, run.channel(), std::move(plugin)));
  // `sockets` lives as long as `run`, which outlives every call its session dispatches.
  session.serve<method::WsOpen>(
      [s = &sockets](const proto::WsOpenParams& p, rpc::Reply<method::WsOpen> r) {
        s->open(p, std::move(r));
      });
  session.serve<method::WsSend>(
      [s = &sockets](const proto::WsSendParams& p, rpc::Reply<method::WsSend> r) {
        s->send(p, std::move(r));
      });
  session.serve<method::WsClose>(
      [s = &sockets](const proto::WsCloseParams& p, rpc::Reply<method::WsClose> r) {
        s->close(p, std::move(r));
      });
}

}  // namespace escouade::services
