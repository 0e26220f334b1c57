#pragma once

// What one run of a plugin's program owns: made when the program's session is bound, ended when
// the program ends (a crash, a stop, a restart: each new program gets a new scope). A service
// that opens something for the plugin (a timer of timer/set, a stream of net/stream, a socket of
// ws/open, a child of proc/spawn) gives it to the scope, and it goes with the instance (spec:
// timer/set, "It goes with the instance"). A handler that answers and later has more to say (a
// timer that fires, a chunk that arrives) keeps a PluginChannel: it sends notifications to the
// plugin of that run after the handler returned, and does nothing once the run has ended.
//
// Thread: the host's. A RunScope lives no longer than the session it was made for.

#include <boost/json/value.hpp>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "base/lifeline.hpp"
#include "rpc/session.hpp"

namespace escouade::services {

class RunScope;

// The plugin of one run, as a handler keeps it. Copyable; outlives its scope harmlessly.
class PluginChannel {
 public:
  // Sends a notification to the plugin (`message` is one; its delivery is its method's); false,
  // and nothing sent, once the run has ended.
  bool notify(rpc::Outgoing message) const;
  // The same, made from the generated params of the protocol's notification M (timer/fired,
  // net/chunk...); false too, and nothing sent, when they cannot be written (text that is not
  // UTF-8).
  template <class M>
  bool notify(const typename M::Params& params) const {
    if (!open()) return false;
    auto message = rpc::Outgoing::notification<M>(params);
    return message && notify(std::move(*message));
  }
  // Whether the run it was made for still goes on.
  bool open() const;
  // The bytes sent to the plugin that wait to be written to its input (RunScope's); 0 once the
  // run has ended.
  std::size_t input_backlog() const;

 private:
  friend class RunScope;
  PluginChannel(Lifeline::Token run, rpc::Session* session, const RunScope* scope)
      : run_(std::move(run)), session_(session), scope_(scope) {}
  Lifeline::Token run_;
  rpc::Session* session_;
  const RunScope* scope_;
};

class RunScope {
 public:
  explicit RunScope(rpc::Session& session) : session_(session) {}
  // Ends the run: every channel closes first, then what was given is ended, the last given
  // first.
  ~RunScope();
  RunScope(const RunScope&) = delete;
  RunScope& operator=(const RunScope&) = delete;

  PluginChannel channel() const { return PluginChannel(lifeline_.token(), &session_, this); }

  // How many bytes sent to the plugin wait to be written to its input (its Program's), for a
  // service that slows what it sends rather than drop it (proc/out). Set by the supervisor.
  void set_input_backlog(std::function<std::size_t()> f) { backlog_ = std::move(f); }
  std::size_t input_backlog() const { return backlog_ ? backlog_() : 0; }

  // Keeps `thing` until the run ends (or until release() gives it back); returns it.
  template <class T>
  T& hold(std::unique_ptr<T> thing) {
    T& kept = *thing;
    held_.push_back(Held{thing.get(), std::shared_ptr<void>(std::move(thing))});
    return kept;
  }
  // Ends `thing` before the run does (a timer cancelled, a stream closed by the plugin).
  void release(const void* thing);
  std::size_t holding() const noexcept { return held_.size(); }

  // Called once when the run ends, before what is held is ended: a service's own bookkeeping.
  void on_end(std::function<void()> f) { on_end_.push_back(std::move(f)); }

  // The plugin answered initialize with protocol 1. Until then it may not have its secrets: a
  // plugin that has not agreed to speak the protocol gets nothing it could quote back in a
  // refusal (docs/SECURITY.md).
  void mark_ready() noexcept { ready_ = true; }
  bool ready() const noexcept { return ready_; }

 private:
  struct Held {
    const void* key;
    std::shared_ptr<void> thing;
  };
  rpc::Session& session_;
  std::vector<Held> held_;
  std::vector<std::function<void()>> on_end_;
  std::function<std::size_t()> backlog_;
  bool ready_ = false;
  Lifeline lifeline_;
};

}  // namespace escouade::services
