#include "services/net.hpp"

#include <map>
#include <set>
#include <string>

#include "base/base64.hpp"
#include "base/lifeline.hpp"
#include "base/utf8.hpp"
#include "net/client.hpp"
#include "protocol/gen/errors.hpp"
#include "protocol/gen/methods.hpp"

namespace escouade::services {

namespace method = proto::method;

namespace {

// What net/fetch and net/stream have in common: the URL judged, the request made.
struct Prepared {
  policy::EgressTarget target;
  net::Request request;
};

template <class Params>
Result<Prepared> prepare(const Params& p, const policy::EgressGrant& grant) {
  if (p.body && p.body_base64)
    return make_error(proto::ErrorCode::invalid_params, "params: body or bodyBase64, not both");
  auto target = policy::judge_url(grant, p.url, policy::UrlUse::fetch);
  if (!target) return target.error();
  net::Request request;
  if (p.method) request.method = *p.method;
  if (p.headers)
    for (const auto& [name, value] : *p.headers)
      request.headers.push_back(net::Header{name, value});
  if (p.body) request.body = *p.body;
  if (p.body_base64) {
    auto bytes = base64_decode(*p.body_base64);
    if (!bytes)
      return make_error(proto::ErrorCode::invalid_params, "params.bodyBase64 is not base64");
    request.body = std::move(*bytes);
  }
  if (auto checked = net::check_request(request); !checked) return checked.error();
  return Prepared{std::move(*target), std::move(request)};
}

std::map<std::string, std::string> header_map(const net::Head& head) {
  std::map<std::string, std::string> out;
  for (const auto& h : head.headers)
    out[h.name] = h.value;
  return out;
}

// The net/* of one run. Held by its RunScope: when the run ends every exchange is cancelled
// (its connection closed) and no handler of theirs runs, and the connections it kept alive
// close. Thread: the host's.
class RunNet {
 public:
  RunNet(const NetContext& ctx, PluginChannel channel, std::shared_ptr<ServedPlugin> plugin)
      : ctx_(ctx),
        channel_(std::move(channel)),
        plugin_(std::move(plugin)),
        pool_(ctx_.client ? ctx_.client->pool() : nullptr) {}
  ~RunNet() {
    lifeline_.end();
    for (auto& [id, x] : fetches_)
      x->cancel();
    for (auto& [id, s] : streams_)
      s.exchange->cancel();
    pool_.reset();  // its idle connections close: none outlives the run
  }
  RunNet(const RunNet&) = delete;
  RunNet& operator=(const RunNet&) = delete;

  void fetch(const proto::NetFetchParams& p, rpc::Reply<method::NetFetch> reply) {
    auto prepared = prepare(p, plugin_->egress);
    if (!prepared) return answer_error("net/fetch", prepared.error(), reply);
    if (!ctx_.client) return answer_error("net/fetch", no_network(ctx_), reply);
    const auto& limits = plugin_->manifest.limits;
    const std::int64_t id = next_fetch_++;
    auto held = std::make_shared<rpc::Reply<method::NetFetch>>(std::move(reply));
    fetches_[id] = ctx_.client->fetch(
        pool_, prepared->target, std::move(prepared->request),
        net::FetchLimits{std::chrono::milliseconds(limits.net_timeout_ms),
                         static_cast<std::uint64_t>(limits.net_bytes)},
        note("net/fetch"), lifeline_.guard([this, id, held](Result<net::Response> r) {
          fetches_.erase(id);
          if (!r) return answer_error("net/fetch", r.error(), *held);
          proto::NetFetchResult result;
          result.status = r->head.status;
          result.headers = header_map(r->head);
          if (is_valid_utf8(r->body))
            result.body = std::move(r->body);
          else
            result.body_base64 = base64_encode(r->body);
          held->result(result, rpc::room_for_text(result.body ? result.body->size()
                                                              : result.body_base64->size()));
        }));
  }

  void stream(const proto::NetStreamParams& p, rpc::Reply<method::NetStream> reply) {
    auto prepared = prepare(p, plugin_->egress);
    if (!prepared) return answer_error("net/stream", prepared.error(), reply);
    if (!ctx_.client) return answer_error("net/stream", no_network(ctx_), reply);
    if (streams_.size() >= kStreamsAtOnce) {
      return answer_error(
          "net/stream",
          make_error(proto::ErrorCode::refused,
                     std::to_string(kStreamsAtOnce) +
                         " streams are already open, the most a sandboxed plugin may "
                         "have at once; one must end or be cancelled first"),
          reply);
    }
    const std::int64_t id = next_stream_++;
    auto held = std::make_shared<rpc::Reply<method::NetStream>>(std::move(reply));
    const bool sse = p.sse.value_or(false);
    net::StreamHandlers handlers{
        lifeline_.guard([this, id, held](Result<net::Head> head) {
          if (!head) {
            streams_.erase(id);
            return answer_error("net/stream", head.error(), *held);
          }
          held->result(proto::NetStreamResult{id, head->status, header_map(*head)});
        }),
        lifeline_.guard([this, id](std::string_view piece) { chunk(id, piece); }),
        lifeline_.guard([this, id](std::optional<std::string> why) { end(id, std::move(why)); }),
    };
    net::StreamLimits limits{
        std::chrono::milliseconds(plugin_->manifest.limits.net_timeout_ms),
        sse ? std::nullopt : std::optional<std::chrono::milliseconds>(kStreamIdle), kStreamWindow};
    auto exchange = ctx_.client->stream(pool_, prepared->target, std::move(prepared->request),
                                        limits, note("net/stream"), std::move(handlers));
    streams_[id] = Stream{std::move(exchange), {}};
  }

  void credit(const proto::NetCreditParams& p) {
    // An unknown stream (ended, cancelled, never opened) is no fault: nothing to do.
    if (auto it = streams_.find(p.stream); it != streams_.end() && p.bytes > 0)
      it->second.exchange->credit(static_cast<std::uint64_t>(p.bytes));
  }

  void cancel(const proto::NetCancelParams& p) {
    auto it = streams_.find(p.stream);
    if (it == streams_.end()) return;
    it->second.exchange->cancel();  // its connection closes; no net/end follows
    streams_.erase(it);
  }

 private:
  struct Stream {
    std::shared_ptr<net::StreamExchange> exchange;
    std::string carry;  // the start of a character a read cut, waiting for its end
  };

  void chunk(std::int64_t id, std::string_view piece) {
    auto it = streams_.find(id);
    if (it == streams_.end()) return;
    std::string data = std::move(it->second.carry);
    data += piece;
    it->second.carry.clear();
    proto::NetChunkParams chunk;
    chunk.stream = id;
    const std::size_t whole = utf8_complete_prefix(data);
    if (is_valid_utf8(std::string_view(data).substr(0, whole))) {
      it->second.carry = data.substr(whole);
      data.resize(whole);
      if (data.empty()) return;
      chunk.data = std::move(data);
    } else {
      chunk.data_base64 = base64_encode(data);
    }
    channel_.notify<method::NetChunk>(chunk);
  }

  void end(std::int64_t id, std::optional<std::string> why) {
    auto it = streams_.find(id);
    if (it == streams_.end()) return;
    if (!it->second.carry.empty()) {
      // A character never completed: its bytes go as they are.
      proto::NetChunkParams rest;
      rest.stream = id;
      rest.data_base64 = base64_encode(it->second.carry);
      channel_.notify<method::NetChunk>(rest);
    }
    streams_.erase(it);
    if (why) plugin_->journal->warn("net/stream failed: " + *why);
    channel_.notify<method::NetEnd>(proto::NetEndParams{id, std::move(why)});
  }

  // What the client notes on the way goes to the journal, each sentence once a run.
  net::Note note(const char* method) {
    return lifeline_.guard([this, method](const std::string& text) {
      if (said_.insert(text).second) plugin_->journal->info(std::string(method) + ": " + text);
    });
  }

  template <class Reply>
  void answer_error(const char* method, const Error& e, Reply& reply) {
    journal_error(*plugin_->journal, method, e);
    reply.error(e);
  }

  NetContext ctx_;
  PluginChannel channel_;
  std::shared_ptr<ServedPlugin> plugin_;
  // The connections this run keeps alive (client.hpp): its own, never another plugin's or run's.
  std::shared_ptr<net::Pool> pool_;
  std::map<std::int64_t, std::shared_ptr<net::Exchange>> fetches_;
  std::map<std::int64_t, Stream> streams_;
  std::set<std::string> said_;
  std::int64_t next_fetch_ = 1;
  std::int64_t next_stream_ = 1;
  Lifeline lifeline_;
};

}  // namespace

void journal_error(Journal& journal, std::string_view method, const Error& e) {
  const char* what = e.code == proto::ErrorCode::refused  ? " refused: "
                     : e.code == proto::ErrorCode::failed ? " failed: "
                                                          : ": ";
  journal.warn(std::string(method) + what + e.message);
}

Error no_network(const NetContext& ctx) {
  return make_error(proto::ErrorCode::failed,
                    ctx.why_none.empty() ? "Escouade has no network to give" : ctx.why_none);
}

void serve_net(rpc::Session& session, RunScope& run, const NetContext& ctx,
               std::shared_ptr<ServedPlugin> plugin) {
  RunNet& net = run.hold(std::make_unique<RunNet>(ctx, run.channel(), std::move(plugin)));
  // `net` lives as long as `run`, which outlives every call its session dispatches.
  session.serve<method::NetFetch>(
      [n = &net](const proto::NetFetchParams& p, rpc::Reply<method::NetFetch> r) {
        n->fetch(p, std::move(r));
      });
  session.serve<method::NetStream>(
      [n = &net](const proto::NetStreamParams& p, rpc::Reply<method::NetStream> r) {
        n->stream(p, std::move(r));
      });
  session.serve_notification<method::NetCredit>(
      [n = &net](const proto::NetCreditParams& p) { n->credit(p); });
  session.serve_notification<method::NetCancel>(
      [n = &net](const proto::NetCancelParams& p) { n->cancel(p); });
}

}  // namespace escouade::services
