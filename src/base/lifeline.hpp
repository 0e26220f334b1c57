#pragma once

// The project's one guard for work that may outlive the object that started it
// (docs/lifetimes.md). An object that hands `this` to an asynchronous handler (a timer, a read,
// a posted completion, a callback given to another object) owns a Lifeline; each such handler
// is made with `lifeline_.guard(f)`, which calls `f` only while the owner still exists and does
// nothing once it is gone. A guarded handler may therefore be run or destroyed after its owner:
// by an io_context drained or destroyed later, by a program that outlives a session.
//
// Thread: the owner's. `end()` and the destructor run on the thread that runs the guarded
// handlers (the host's thread): a check and the owner's destruction never race.

#include <memory>
#include <type_traits>
#include <utility>

namespace escouade {

class Lifeline {
 public:
  // Whether the owner still exists, as a handler holds it.
  class Token {
   public:
    explicit operator bool() const noexcept { return !owner_.expired(); }

   private:
    friend class Lifeline;
    explicit Token(std::weak_ptr<const char> owner) : owner_(std::move(owner)) {}
    std::weak_ptr<const char> owner_;
  };

  Lifeline() : owner_(std::make_shared<const char>('\0')) {}
  ~Lifeline() = default;
  Lifeline(const Lifeline&) = delete;
  Lifeline& operator=(const Lifeline&) = delete;

  Token token() const { return Token(owner_); }

  // `f`, called only while the owner lives; its result, when it has one, is dropped.
  template <class F>
  auto guard(F f) const {
    return [token = token(), f = std::move(f)](auto&&... args) mutable {
      if (token) f(std::forward<decltype(args)>(args)...);
    };
  }

  // From now on every guarded handler does nothing: the first line of a destructor whose body
  // still runs code that could complete handlers (closing a session completes its calls).
  void end() noexcept { owner_.reset(); }
  bool ended() const noexcept { return owner_ == nullptr; }

 private:
  std::shared_ptr<const char> owner_;
};

}  // namespace escouade
