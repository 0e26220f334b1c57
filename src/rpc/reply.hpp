#pragma once

// The answer owed to one incoming request. Move-only: it answers exactly once. A Reply dropped
// without answering sends internal (-32603) and reports it, so the peer never waits forever;
// answering twice is a bug and the second answer is refused.
//
// Reply<M> is the answer to a request of the protocol's method M (what Session::serve<M> gives
// its handler): its result is an M::Result, written by the generated writer. Reply<> is the
// answer to a request bound by name (Session::handle): its result is any JSON value.

#include <boost/json/value.hpp>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "base/result.hpp"
#include "protocol/gen/errors.hpp"
#include "protocol/json_write.hpp"
#include "protocol/message.hpp"

namespace escouade::rpc {

class ReplySink;

template <class M = void>
class Reply;

template <>
class Reply<void> {
 public:
  Reply() = default;
  Reply(std::shared_ptr<ReplySink> sink, boost::json::value id, std::string method);
  Reply(Reply&&) noexcept = default;
  Reply& operator=(Reply&& other) noexcept;
  Reply(const Reply&) = delete;
  Reply& operator=(const Reply&) = delete;
  ~Reply();

  void result(boost::json::value value);
  // The result as JSON text taken as it came (rpc::ResultForm::text), written as it is.
  void result_text(std::string json);
  void error(proto::ErrorCode code, std::string message);
  // An error of the project's (base/result.hpp): its code as proto::wire_code gives it.
  void error(const Error& e);
  // Whether an answer is still owed.
  bool pending() const noexcept { return sink_ != nullptr; }
  const std::string& method() const noexcept { return method_; }
  const boost::json::value& id() const noexcept { return id_; }

 private:
  void send(proto::Message answer);

  std::shared_ptr<ReplySink> sink_;
  boost::json::value id_;
  std::string method_;
};

// The room to give Reply::result for a result holding `bytes` of text: JSON's escapes (a line
// break is two bytes) take a few percent more, its members a few dozen bytes, and the answer's
// envelope, which a long result gets in front of it in the same buffer
// (proto::take_long_answer_line), a few dozen more.
constexpr std::size_t room_for_text(std::size_t bytes) noexcept {
  return bytes + bytes / 8 + 256;
}

template <class M>
class Reply {
 public:
  explicit Reply(Reply<> reply) : reply_(std::move(reply)) {}

  // `room`: the bytes its JSON is expected to take, when a result may be long (a file's text),
  // so that it is written into one allocation instead of growing by doubling through several.
  void result(const typename M::Result& value, std::size_t room = 64) {
    std::string json;
    json.reserve(room);
    using proto::write_json;  // and, by ADL, that of M's own namespace
    write_json(json, value);
    reply_.result_text(std::move(json));
  }
  // A free-form result (M::Result is a JSON value: host/call's), given as the checked JSON text
  // it came as (rpc::ResultForm::text).
  void result_text(
      std::string json) requires std::is_same_v<typename M::Result, boost::json::value> {
    reply_.result_text(std::move(json));
  }
  void error(proto::ErrorCode code, std::string message) { reply_.error(code, std::move(message)); }
  void error(const Error& e) { reply_.error(e); }
  bool pending() const noexcept { return reply_.pending(); }
  const std::string& method() const noexcept { return reply_.method(); }

 private:
  Reply<> reply_;
};

// Where answers go: the session sends a single answer at once, and holds a batch's answers
// until the last of them is given, then sends them as one array.
class ReplySink {
 public:
  virtual ~ReplySink() = default;
  virtual void deliver(proto::Message answer) = 0;
  // A Reply was dropped without an answer (its method), before the internal error goes out.
  virtual void dropped(const std::string& method) = 0;
};

}  // namespace escouade::rpc
