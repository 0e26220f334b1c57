#pragma once

// The answer owed to one incoming request. Move-only: it answers exactly once. A Reply dropped
// without answering sends internal (-32603) and reports it, so the peer never waits forever;
// answering twice is a bug and the second answer is refused.

#include <boost/json/value.hpp>
#include <memory>
#include <string>

#include "base/result.hpp"
#include "protocol/gen/errors.hpp"
#include "protocol/message.hpp"

namespace escouade::rpc {

class ReplySink;

class Reply {
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
