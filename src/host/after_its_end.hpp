#pragma once

// A call's completion that, for a call closed by its program's end, runs once the supervisor has
// taken that end in: posted once to the host's executor. Host::unanswered_because() then gives
// the state the plugin ended in and why ("is stopped: its bundle imports ..."), not the state it
// was leaving ("is starting"). Every other outcome runs at once. Held by value in the call's
// CallDone: no allocation of its own but on the closed path.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/post.hpp>
#include <utility>

#include "rpc/session.hpp"

namespace escouade::host {

// The rule itself, for a completion `self` that keeps its own `deferred` flag: a first closed
// outcome is posted once to `executor` with `self` moved into it (true: `self` must return).
template <class Self>
bool posted_after_its_end(Self& self, bool& deferred, rpc::CallOutcome& o,
                          const boost::asio::any_io_executor& executor) {
  if (o.kind != rpc::CallOutcome::Kind::closed || deferred) return false;
  deferred = true;
  auto ex = executor;
  boost::asio::post(ex,
                    [self = std::move(self), o = std::move(o)]() mutable { self(std::move(o)); });
  return true;
}

template <class F>
struct AfterItsEnd {
  F then;
  boost::asio::any_io_executor executor;
  bool deferred = false;

  void operator()(rpc::CallOutcome o) {
    if (posted_after_its_end(*this, deferred, o, executor)) return;
    then(std::move(o));
  }
};

template <class F>
AfterItsEnd<F> after_its_end(F then, boost::asio::any_io_executor executor) {
  return AfterItsEnd<F>{std::move(then), std::move(executor)};
}

}  // namespace escouade::host
