#pragma once

// The C++ SDK for Escouade plugins (protocol 1), header-only: docs/authors.md is the guide.
//
//   escouade::Plugin p{"dev.example.guard"};
//   p.on_decide([](const escouade::DecideParams& r, escouade::Context& c) { return escouade::ask();
//   }); return p.run();
//
// A Plugin reads JSON-RPC lines, answers the handshake, dispatches each request and
// notification to its handler, answers a batch with one batch, and stops after answering
// `shutdown` (or at the end of its input). Single-threaded: every handler runs on the thread
// that called run(), one at a time.
//
// Calls to Escouade (Context::secret, settings, file, call) block until their answer comes.
// Meanwhile the Plugin keeps reading: answers are matched to their calls by id, and requests
// or notifications that arrive are queued, then served in their order of arrival once the
// running handler has returned. Handlers are never re-entered, and a call never deadlocks on
// a request of Escouade's: that request simply waits its turn.
//
// With exceptions enabled, an exception that leaves a request's handler answers -32603 with its
// what(); built with -fno-exceptions, nothing here throws or catches.

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/parser.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/serializer.hpp>
#include <boost/json/value_from.hpp>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#include <exception>
#define ESCOUADE_SDK_EXCEPTIONS 1
#endif

#include "escouade/protocol.hpp"
#include "escouade/result.hpp"
#include "escouade/transport.hpp"

namespace escouade {

using Level = LogParamsLevel;
using Verdict = DecisionDecision;

// The three answers to a permission request. The message of a refusal is told to the agent.
inline Decision allow(std::string message = {}) {
  return {Verdict::allow, message.empty() ? std::nullopt : std::optional(std::move(message))};
}
inline Decision deny(std::string message) {
  return {Verdict::deny, message.empty() ? std::nullopt : std::optional(std::move(message))};
}
inline Decision ask(std::string message = {}) {
  return {Verdict::ask, message.empty() ? std::nullopt : std::optional(std::move(message))};
}

class Plugin;

// What net/fetch answered (Context::fetch): its body as bytes, whichever way it came (text, or
// base64 for bytes that are not UTF-8).
struct FetchAnswer {
  std::int64_t status = 0;
  std::map<std::string, std::string> headers;  // lower-case names, a repeated one joined by ", "
  std::string body;
};

namespace detail {

inline bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t n = c < 0x80         ? 1
                          : (c >> 5) == 6  ? 2
                          : (c >> 4) == 14 ? 3
                          : (c >> 3) == 30 ? 4
                                           : 0;
    if (n == 0 || i + n > s.size()) return false;
    std::uint32_t cp = n == 1 ? c : c & (0x7f >> n);
    for (std::size_t k = 1; k < n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d >> 6) != 2) return false;
      cp = cp << 6 | (d & 0x3f);
    }
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
        cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
      return false;
    i += n;
  }
  return true;
}

inline constexpr char kBase64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

inline std::string base64_encode(std::string_view bytes) {
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    std::uint32_t n = static_cast<unsigned char>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) n |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) n |= static_cast<unsigned char>(bytes[i + 2]);
    out += kBase64[n >> 18 & 63];
    out += kBase64[n >> 12 & 63];
    out += i + 1 < bytes.size() ? kBase64[n >> 6 & 63] : '=';
    out += i + 2 < bytes.size() ? kBase64[n & 63] : '=';
  }
  return out;
}

inline std::optional<std::string> base64_decode(std::string_view text) {
  while (!text.empty() && text.back() == '=')
    text.remove_suffix(1);
  std::string out;
  std::uint32_t n = 0;
  int bits = 0;
  for (char c : text) {
    const char* at = std::char_traits<char>::find(kBase64, 64, c);
    if (!at) return std::nullopt;
    n = n << 6 | static_cast<std::uint32_t>(at - kBase64);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>(n >> bits & 0xff);
    }
  }
  return out;
}

}  // namespace detail

// What a handler reaches Escouade through. Given by the Plugin to every handler; valid while
// run() runs. Each call blocks until Escouade answers (see the top of this file).
class Context {
 public:
  // secrets/get: the secret kept under `key` (a key of permissions.secrets), or nullopt when
  // none is kept. -32001 for a key that is not the plugin's, -32002 for a keychain out of reach.
  Result<std::optional<std::string>> secret(std::string_view key);
  // settings/get: the values of contributes.settings, with `project`'s .escouade.yml over them.
  Result<boost::json::object> settings(std::optional<std::string_view> project = std::nullopt);
  // files/read: a file of the plugin's own folder as UTF-8 text ("rules.json", "data/x.txt").
  Result<std::string> file(std::string_view path);
  // The log notification: a line of the plugin's journal.
  void log(Level level, std::string_view message);
  // net/fetch, for a run.wasm plugin (a process has its own network: -32601). Escouade sends it
  // under the manifest's permissions.network and limits (10 s and 1 MiB unless they say more),
  // follows no redirect, and answers -32003 for a refusal, -32004 for a failure on the way,
  // each with its sentence. `body` is bytes: it goes as text when it is UTF-8, else as base64.
  Result<FetchAnswer> fetch(std::string_view url, std::string_view method = "GET",
                            std::map<std::string, std::string> headers = {},
                            std::optional<std::string> body = std::nullopt);

  // fs/*, for a run.wasm plugin (a process reaches files by itself: -32601): a file under a root
  // of permissions.files, named by FsPath {agent, root, path}. Escouade judges
  // the path and the file it opens: -32003 refused with its sentence (a root not declared, a
  // "..", a link out of the agent's roots, a private project's agent), -32005 not found, -32004
  // failed (past limits.fileBytes, 256 KiB unless the manifest says up to 4 MiB).
  // read_file: its bytes, whichever way they came (text, or base64).
  Result<std::string> read_file(const FsPath& where);
  // fs/write: the folders it needs made, 4 MiB at most, appended when `append`; its real path and
  // size. `bytes` go as text when UTF-8, else as base64.
  Result<FsWriteResult> write_file(const FsPath& where, std::string_view bytes,
                                   bool append = false);
  Result<FsStatResult> stat(const FsPath& where);
  // At most 4096 entries, `truncated` past them; a link is a link, never followed.
  Result<FsListResult> list(const FsPath& where);
  // The real path, links followed.
  Result<std::string> canon(const FsPath& where);
  // proc/spawn, for a run.wasm plugin: a program of permissions.commands, word for word; its
  // number. Its output comes as proc/out notifications and its end as proc/exit (serve them:
  // serve<method::ProcOut>, serve<method::ProcExit>), which may come before this returns: they are
  // served once the handler that called spawn has returned.
  Result<std::int64_t> spawn(ProcSpawnParams params);
  // proc/write: on its input; `close` ends that input after `data`. -32004 past 1 MiB unread.
  Result<void> write_input(std::int64_t proc, std::string_view data, bool close = false);
  // proc/kill: it and what it started end; proc/exit follows with a null code.
  Result<void> kill(std::int64_t proc);

  // Any method of Escouade's, typed: call<method::SecretsGet>({"token"}).
  template <class M>
  Result<typename M::Result> call(const typename M::Params& params);
  // Any method by name, untyped.
  Result<boost::json::value> call(std::string_view method, boost::json::value params);
  // A notification to Escouade.
  void notify(std::string_view method, boost::json::value params);

  // What Escouade said at the handshake (its version, lang, capabilities); empty before it.
  const InitializeParams& initialize() const;
  // The id the Plugin was made with.
  const std::string& plugin_id() const;

 private:
  friend class Plugin;
  explicit Context(Plugin& plugin) : plugin_(plugin) {}
  Plugin& plugin_;
};

class Plugin {
 public:
  // A request's handler: params (null when the message had none) to a result or an Error.
  using RequestHandler =
      std::function<Result<boost::json::value>(const boost::json::value& params, Context&)>;
  using NotificationHandler = std::function<void(const boost::json::value& params, Context&)>;

  // `id` is the plugin's id, as its manifest says; a different id in initialize is logged.
  explicit Plugin(std::string id) : id_(std::move(id)), context_(*this) {}
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

  // Runs once, right after the answer to initialize is written.
  Plugin& on_start(std::function<void(Context&)> handler) {
    on_start_ = std::move(handler);
    return *this;
  }
  // permissions/decide (the manifest needs permissions.decide).
  Plugin& on_decide(std::function<Decision(const DecideParams&, Context&)> handler) {
    return serve<method::PermissionsDecide>(
        [h = std::move(handler)](const DecideParams& p, Context& c) -> Result<Decision> {
          return h(p, c);
        });
  }
  // events/fact (the facts of permissions.events).
  Plugin& on_fact(std::function<void(const Fact&, Context&)> handler) {
    fact_ = std::move(handler);
    return serve_facts();
  }
  // A fact of a name this SDK does not know (one Escouade added after it was built), as it
  // came: facts grow, and a plugin keeps working. Without this handler such a fact is passed
  // over quietly; a fact of a known name whose fields do not hold is still logged.
  Plugin& on_other_fact(std::function<void(const boost::json::object& fact, Context&)> handler) {
    other_fact_ = std::move(handler);
    return serve_facts();
  }
  // Runs when shutdown comes, before its answer (after it, the plugin's output is lost), or
  // when the input ends without one.
  Plugin& on_shutdown(std::function<void(Context&)> handler) {
    on_shutdown_ = std::move(handler);
    return *this;
  }
  // A request of any other name (host/call reaches them).
  Plugin& on(std::string method, RequestHandler handler) {
    requests_[std::move(method)] = {std::move(handler), false};
    return *this;
  }
  Plugin& on_notification(std::string method, NotificationHandler handler) {
    notifications_[std::move(method)] = {std::move(handler), false};
    return *this;
  }
  // A method of the protocol, typed by its traits (method::X). For a request, `handler` is
  // (const M::Params&, Context&) -> Result<M::Result>; for a notification it returns nothing.
  // Params that do not hold answer -32602 naming the field (a notification's are logged).
  template <class M, class F>
  Plugin& serve(F handler);

  // Serves Escouade on stdin and stdout (stdout kept for the protocol: see stdio_transport)
  // until shutdown or the end of input. Returns the exit code for main: 0.
  int run() {
    auto transport = stdio_transport();
    return run(*transport);
  }
  // The same on any transport: the seam for tests.
  int run(Transport& transport);

  const std::string& id() const { return id_; }
  const InitializeParams& initialize_params() const { return init_; }

 private:
  friend class Context;

  // One thing read: a message or batch, or the reason its line was not JSON. Its message is
  // parsed into the storage it was made with.
  struct Incoming {
    boost::json::value message;
    std::optional<std::string> parse_error;
  };

  // The message run() reads and what answers it (the JSON of its result) live in an arena that
  // is emptied before the next one: serving a message makes no malloc or free for its JSON.
  // Its first kArenaBytes are allocated once; a larger message takes more from the heap, given
  // back when the next one comes. What handlers keep is never there: a typed handler gets its
  // params converted, an untyped one a copy on the heap (a copy of an arena value would share
  // the arena, and die with the message). Messages read while a call waits are queued, or kept
  // for their call, so they are parsed on the heap.
  static constexpr std::size_t kArenaBytes = 16 * 1024;
  // A line longer than this does not keep its memory once it is served.
  static constexpr std::size_t kKeptLineBytes = 1024 * 1024;

  bool in_arena(const boost::json::value& v) const {
    return arena_ && v.storage().get() == &*arena_;
  }
  // `v` where a handler may keep it: itself, or its copy on the heap in `copy`.
  const boost::json::value& kept(const boost::json::value& v,
                                 std::optional<boost::json::value>& copy) const {
    if (!in_arena(v)) return v;
    return copy.emplace(v, boost::json::storage_ptr());
  }
  // Where the JSON of an answer is made: the arena while run() serves a message.
  boost::json::storage_ptr answer_storage() {
    return arena_ ? boost::json::storage_ptr(&*arena_) : boost::json::storage_ptr();
  }

  // Appends `v` to `out` as boost::json::serialize writes it, through one serializer kept from
  // line to line (its stack grows once).
  void put_json(std::string& out, const boost::json::value& v) {
    serializer_.reset(&v);
    put_serialized(out);
  }
  void put_json(std::string& out, std::string_view s) {
    serializer_.reset(s);
    put_serialized(out);
  }
  void put_serialized(std::string& out) {
    char chunk[512];
    while (!serializer_.done()) {
      const auto part = serializer_.read(chunk, sizeof chunk);
      out.append(part.data(), part.size());
    }
  }

  // The answer's line, written straight from the id and the result: the bytes of
  // serialize(object{{"jsonrpc", "2.0"}, {"id", id}, {"result" or "error", ...}}), without
  // building that object.
  void put_reply(std::string& out, const boost::json::value& id,
                 const Result<boost::json::value>& r) {
    out += R"({"jsonrpc":"2.0","id":)";
    put_json(out, id);
    if (r) {
      out += R"(,"result":)";
      put_json(out, *r);
    } else {
      out += R"(,"error":{"code":)";
      out += std::to_string(r.error().code);
      out += R"(,"message":)";
      put_json(out, std::string_view(r.error().message));
      out += '}';
    }
    out += '}';
  }

  static bool is_response(const boost::json::value& v) {
    const auto* o = v.if_object();
    return o && !o->contains("method") && o->contains("id") &&
           (o->contains("result") || o->contains("error"));
  }

  void write(const boost::json::value& v) {
    out_.clear();
    put_json(out_, v);
    write_out();
  }

  void write_out() {
    if (transport_ && !transport_->write_line(out_)) output_closed_ = true;
    if (out_.capacity() > kKeptLineBytes) out_ = std::string();
  }

  void trace(std::string_view what) {
    std::fprintf(stderr, "%s: %.*s\n", id_.c_str(), static_cast<int>(what.size()), what.data());
  }

  // The next line of input, parsed into out.message's storage; false at its end.
  bool read_incoming(Incoming& out) {
    for (;;) {
      if (input_closed_ || !transport_ || !transport_->read_line(line_)) {
        input_closed_ = true;
        return false;
      }
      if (line_.find_first_not_of(" \t\r") == std::string::npos) continue;
      // As boost::json::parse, with the parser's stacks kept from line to line.
      boost::json::error_code ec;
      parser_.reset(out.message.storage());
      parser_.write(line_, ec);
      // Moved, not copied: the parser made it in the same storage.
      if (ec)
        out.message = nullptr;
      else
        out.message = parser_.release();
      out.parse_error.reset();
      if (ec) out.parse_error = "parse error: " + ec.message();
      if (line_.capacity() > kKeptLineBytes) line_ = std::string();
      return true;
    }
  }

  // While a call waits: answers go to answers_, everything else to the queue.
  void sort_incoming(Incoming in) {
    if (auto* batch = in.message.if_array(); batch && !in.parse_error && !batch->empty()) {
      boost::json::array rest;
      for (auto& m : *batch) {
        if (is_response(m)) {
          take_answer(m.get_object());
        } else {
          rest.push_back(std::move(m));
        }
      }
      if (rest.empty()) return;
      in.message = std::move(rest);
    } else if (!in.parse_error && is_response(in.message)) {
      take_answer(in.message.get_object());
      return;
    }
    queue_.push_back(std::move(in));
  }

  void take_answer(const boost::json::object& answer) {
    const auto* id = answer.if_contains("id");
    if (id && id->is_int64() && waiting_.count(id->get_int64())) {
      answers_[id->get_int64()] = answer;
      return;
    }
    trace("an answer to no call of ours: " + boost::json::serialize(answer));
  }

  Result<boost::json::value> call_raw(std::string_view method, boost::json::value params) {
    if (!transport_)
      return Error(ErrorCode::failed, std::string(method) + ": the plugin is not running");
    const std::int64_t id = next_id_++;
    write(boost::json::object{
        {"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}});
    waiting_.insert(id);
    for (;;) {
      if (auto it = answers_.find(id); it != answers_.end()) {
        boost::json::object answer = std::move(it->second);
        answers_.erase(it);
        waiting_.erase(id);
        return unpack(method, answer);
      }
      Incoming in;
      if (!read_incoming(in)) {
        waiting_.erase(id);
        return Error(ErrorCode::failed,
                     std::string(method) + ": the input ended before Escouade answered");
      }
      sort_incoming(std::move(in));
    }
  }

  static Result<boost::json::value> unpack(std::string_view method, boost::json::object& answer) {
    if (auto* e = answer.if_contains("error")) {
      Error err(ErrorCode::internal, std::string(method) + ": an error without a message");
      if (const auto* eo = e->if_object()) {
        if (const auto* c = eo->if_contains("code"); c && c->is_int64())
          err.code = static_cast<int>(c->get_int64());
        if (const auto* m = eo->if_contains("message"); m && m->is_string())
          err.message = std::string(m->get_string());
      }
      return err;
    }
    return std::move(answer["result"]);
  }

  void notify_raw(std::string_view method, boost::json::value params) {
    write(
        boost::json::object{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}});
  }

  void serve_incoming(Incoming& in) {
    static const boost::json::value kNull;
    // The answers go to answer_, not out_, which the handlers' own calls and logs write through
    // meanwhile.
    answer_.clear();
    if (in.parse_error) {
      put_reply(answer_, kNull, Error(ErrorCode::parse, *in.parse_error));
    } else if (auto* batch = in.message.if_array()) {
      if (batch->empty()) {
        put_reply(answer_, kNull, Error(ErrorCode::invalid_request, "an empty batch"));
      } else {
        // The answers in one line, as serialize(array) of them writes it: "[a,b]".
        for (const auto& m : *batch) {
          if (is_response(m)) {
            take_answer(m.get_object());
            continue;
          }
          const std::size_t before = answer_.size();
          answer_ += answer_.empty() ? '[' : ',';
          if (!serve_message(m, answer_)) answer_.resize(before);
        }
        if (!answer_.empty()) answer_ += ']';
      }
    } else if (is_response(in.message)) {
      take_answer(in.message.get_object());
    } else {
      serve_message(in.message, answer_);
    }
    if (answer_.empty()) return;
    if (transport_ && !transport_->write_line(answer_)) output_closed_ = true;
    if (answer_.capacity() > kKeptLineBytes) answer_ = std::string();
  }

  // Serves one request or notification, and appends its answer to `out`; false for a
  // notification, which has none.
  bool serve_message(const boost::json::value& v, std::string& out) {
    static const boost::json::value kNull;
    const auto* o = v.if_object();
    const boost::json::value* id = o ? o->if_contains("id") : nullptr;
    const bool id_ok =
        id && (id->is_string() || id->is_int64() || id->is_uint64() || id->is_null());
    const auto* version = o ? o->if_contains("jsonrpc") : nullptr;
    const auto* name = o ? o->if_contains("method") : nullptr;
    if (!o || !version || *version != "2.0" || !name || !name->is_string() || (id && !id_ok)) {
      put_reply(out, id_ok ? *id : kNull,
                Error(ErrorCode::invalid_request, "not a JSON-RPC 2.0 request"));
      return true;
    }
    const std::string_view method = name->get_string();
    const boost::json::value* found = o->if_contains("params");
    const boost::json::value& params = found ? *found : kNull;
    if (!id) {
      if (auto h = notifications_.find(method); h != notifications_.end()) {
        std::optional<boost::json::value> copy;
        h->second.handler(h->second.typed ? params : kept(params, copy), context_);
      } else {
        trace("a notification no handler takes: " + std::string(method));
      }
      return false;
    }
    put_reply(out, *id, serve_request(method, params));
    return true;
  }

  Result<boost::json::value> serve_request(std::string_view method,
                                           const boost::json::value& params) {
    if (method == method::Initialize::kName) return initialize(params);
    if (method == method::Shutdown::kName) {
      stopping_ = true;
      run_shutdown();
      return boost::json::value(nullptr);
    }
    auto h = requests_.find(method);
    if (h == requests_.end()) {
      return Error(ErrorCode::method_not_found, std::string(method) + ": not a method of " + id_);
    }
    std::optional<boost::json::value> copy;
    const boost::json::value& given = h->second.typed ? params : kept(params, copy);
#ifdef ESCOUADE_SDK_EXCEPTIONS
    try {
      return h->second.handler(given, context_);
    } catch (const std::exception& e) {
      return Error(ErrorCode::internal, std::string(method) + ": " + e.what());
    } catch (...) {
      return Error(ErrorCode::internal, std::string(method) + ": the handler failed");
    }
#else
    return h->second.handler(given, context_);
#endif
  }

  Result<boost::json::value> initialize(const boost::json::value& params) {
    InitializeParams p;
    if (auto why = read(params, p)) return Error(ErrorCode::invalid_params, *why);
    init_ = std::move(p);
    start_pending_ = true;
    if (init_.plugin.id != id_) {
      trace("built as " + id_ + ", started as " + init_.plugin.id + " (its manifest's id)");
    }
    InitializeResult result{kProtocolVersion, boost::json::object{{"batch", true}}};
    return boost::json::value_from(result);
  }

  void run_shutdown() {
    if (shutdown_ran_) return;
    shutdown_ran_ = true;
    if (on_shutdown_) on_shutdown_(context_);
  }

  std::string id_;
  Context context_;
  Transport* transport_ = nullptr;
  InitializeParams init_{};
  std::function<void(Context&)> on_start_;
  std::function<void(Context&)> on_shutdown_;
  std::function<void(const Fact&, Context&)> fact_;
  std::function<void(const boost::json::object&, Context&)> other_fact_;
  Plugin& serve_facts();
  // A handler, and whether it is the SDK's own typed one, which converts its params and keeps
  // nothing of them (see kArenaBytes).
  template <class H>
  struct Served {
    H handler;
    bool typed = false;
  };
  std::map<std::string, Served<RequestHandler>, std::less<>> requests_;
  std::map<std::string, Served<NotificationHandler>, std::less<>> notifications_;
  std::deque<Incoming> queue_;                           // read while a call waited; served next
  std::set<std::int64_t> waiting_;                       // ids of our calls still waiting
  std::map<std::int64_t, boost::json::object> answers_;  // answers not yet taken by their call
  std::int64_t next_id_ = 1;
  bool start_pending_ = false;
  bool stopping_ = false;
  bool shutdown_ran_ = false;
  bool input_closed_ = false;
  bool output_closed_ = false;
  std::unique_ptr<unsigned char[]> arena_bytes_;
  std::optional<boost::json::monotonic_resource> arena_;  // while run() runs
  boost::json::parser parser_;
  boost::json::serializer serializer_;
  std::string line_;    // the line read last
  std::string out_;     // the last call or notification written
  std::string answer_;  // the last answer written
};

template <class M, class F>
Plugin& Plugin::serve(F handler) {
  static_assert(M::kToPlugin, "serve<M>: M is a method Escouade serves, not the plugin");
  const std::string name(M::kName);
  if constexpr (M::kNotification) {
    notifications_[name] = {[h = std::move(handler)](const boost::json::value& params, Context& c) {
                              typename M::Params p{};
                              if (auto why = read(params, p)) {
                                c.log(Level::warn, std::string(M::kName) + ": ignored: " + *why);
                                return;
                              }
                              h(p, c);
                            },
                            true};
  } else {
    requests_[name] = {[this, h = std::move(handler)](const boost::json::value& params,
                                                      Context& c) -> Result<boost::json::value> {
                         typename M::Params p{};
                         if (auto why = read(params, p))
                           return Error(ErrorCode::invalid_params, *why);
                         Result<typename M::Result> r = h(p, c);
                         if (!r) return r.error();
                         // Serialized right away by the caller: made in the arena.
                         return boost::json::value_from(*r, answer_storage());
                       },
                       true};
  }
  return *this;
}

inline Plugin& Plugin::serve_facts() {
  auto serve = [this](const boost::json::value& params, Context& c) {
    // A name that is a string this SDK does not know: the catch-all's, never a warning.
    const boost::json::object* o = params.if_object();
    const boost::json::value* name = o ? o->if_contains("name") : nullptr;
    if (name && name->is_string() && !fact_name_from_string(name->get_string())) {
      std::optional<boost::json::value> copy;
      if (other_fact_) other_fact_(kept(params, copy).get_object(), c);
      return;
    }
    Fact f{};
    if (auto why = read(params, f)) {
      c.log(Level::warn, std::string(method::EventsFact::kName) + ": ignored: " + *why);
      return;
    }
    if (fact_) fact_(f, c);
  };
  notifications_[std::string(method::EventsFact::kName)] = {std::move(serve), true};
  return *this;
}

inline int Plugin::run(Transport& transport) {
  transport_ = &transport;
  if (!arena_bytes_) arena_bytes_ = std::make_unique<unsigned char[]>(kArenaBytes);
  arena_.emplace(arena_bytes_.get(), kArenaBytes);
  const boost::json::storage_ptr arena(&*arena_);
  while (!stopping_ && !output_closed_) {
    if (!queue_.empty()) {
      // On the heap: it was read while a call waited.
      Incoming in = std::move(queue_.front());
      queue_.pop_front();
      serve_incoming(in);
    } else {
      Incoming in{boost::json::value(arena), std::nullopt};
      if (!read_incoming(in)) break;
      serve_incoming(in);
    }
    if (start_pending_) {
      start_pending_ = false;
      if (on_start_) on_start_(context_);
    }
    // The message served and its answer are gone: the arena is empty again.
    arena_->release();
  }
  if (!stopping_) run_shutdown();
  transport.flush();
  transport_ = nullptr;
  arena_.reset();
  return 0;
}

inline Result<std::optional<std::string>> Context::secret(std::string_view key) {
  return call<method::SecretsGet>(SecretsGetParams{std::string(key)});
}

inline Result<boost::json::object> Context::settings(std::optional<std::string_view> project) {
  SettingsGetParams p;
  if (project) p.project = std::string(*project);
  return call<method::SettingsGet>(p);
}

inline Result<std::string> Context::file(std::string_view path) {
  return call<method::FilesRead>(FilesReadParams{std::string(path)});
}

inline Result<FetchAnswer> Context::fetch(std::string_view url, std::string_view method,
                                          std::map<std::string, std::string> headers,
                                          std::optional<std::string> body) {
  NetFetchParams p;
  p.url = std::string(url);
  p.method = std::string(method);
  if (!headers.empty()) p.headers = std::move(headers);
  if (body && detail::valid_utf8(*body))
    p.body = std::move(body);
  else if (body)
    p.body_base64 = detail::base64_encode(*body);
  auto r = call<method::NetFetch>(p);
  if (!r) return r.error();
  FetchAnswer a{r->status, std::move(r->headers), {}};
  if (r->body) {
    a.body = std::move(*r->body);
  } else if (r->body_base64) {
    auto bytes = detail::base64_decode(*r->body_base64);
    if (!bytes) return Error{ErrorCode::internal, "net/fetch: result.bodyBase64 is not base64"};
    a.body = std::move(*bytes);
  }
  return a;
}

inline Result<std::string> Context::read_file(const FsPath& where) {
  auto r = call<method::FsRead>(where);
  if (!r) return r.error();
  if (r->text) return std::move(*r->text);
  if (!r->data_base64) return std::string();
  auto bytes = detail::base64_decode(*r->data_base64);
  if (!bytes) return Error{ErrorCode::internal, "fs/read: result.dataBase64 is not base64"};
  return std::move(*bytes);
}

inline Result<FsWriteResult> Context::write_file(const FsPath& where, std::string_view bytes,
                                                 bool append) {
  FsWriteParams p;
  p.agent = where.agent;
  p.path = where.path;
  if (where.root) p.root = static_cast<FsWriteParamsRoot>(*where.root);
  if (detail::valid_utf8(bytes))
    p.text = std::string(bytes);
  else
    p.data_base64 = detail::base64_encode(bytes);
  if (append) p.append = true;
  return call<method::FsWrite>(p);
}

inline Result<FsStatResult> Context::stat(const FsPath& where) {
  return call<method::FsStat>(where);
}

inline Result<FsListResult> Context::list(const FsPath& where) {
  return call<method::FsList>(where);
}

inline Result<std::string> Context::canon(const FsPath& where) {
  auto r = call<method::FsCanon>(where);
  if (!r) return r.error();
  return std::move(r->path);
}

inline Result<std::int64_t> Context::spawn(ProcSpawnParams params) {
  auto r = call<method::ProcSpawn>(params);
  if (!r) return r.error();
  return r->proc;
}

inline Result<void> Context::write_input(std::int64_t proc, std::string_view data, bool close) {
  ProcWriteParams p;
  p.proc = proc;
  p.data = std::string(data);
  if (close) p.close = true;
  auto r = call<method::ProcWrite>(p);
  if (!r) return r.error();
  return {};
}

inline Result<void> Context::kill(std::int64_t proc) {
  auto r = call<method::ProcKill>(ProcRef{proc});
  if (!r) return r.error();
  return {};
}

inline void Context::log(Level level, std::string_view message) {
  notify(method::Log::kName, boost::json::value_from(LogParams{level, std::string(message)}));
}

template <class M>
Result<typename M::Result> Context::call(const typename M::Params& params) {
  static_assert(!M::kToPlugin && !M::kNotification,
                "call<M>: M is a request Escouade serves (secrets/get, settings/get...)");
  auto answer = plugin_.call_raw(M::kName, boost::json::value_from(params));
  if (!answer) return answer.error();
  typename M::Result out{};
  if (auto why = read(*answer, out, "result")) {
    return Error(ErrorCode::invalid_params, std::string(M::kName) + ": " + *why);
  }
  return out;
}

inline Result<boost::json::value> Context::call(std::string_view method,
                                                boost::json::value params) {
  return plugin_.call_raw(method, std::move(params));
}

inline void Context::notify(std::string_view method, boost::json::value params) {
  plugin_.notify_raw(method, std::move(params));
}

inline const InitializeParams& Context::initialize() const {
  return plugin_.init_;
}
inline const std::string& Context::plugin_id() const {
  return plugin_.id_;
}

}  // namespace escouade
