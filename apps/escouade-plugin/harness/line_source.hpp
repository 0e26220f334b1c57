#pragma once

// Where the steps of a run come from: a scenario file, read whole at the start, or the
// standard input, read as it comes (a pipe or a terminal; a prompt before each line on a
// terminal). Each line comes with where it was, for messages ("scenario.jsonl:4").
//
// Thread: the io_context's thread.

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "base/result.hpp"
#include "protocol/framing.hpp"

namespace escouade::harness {

struct SourceLine {
  std::string text;
  std::string where;  // "<name>:<line number>"
};

class LineSource {
 public:
  // The lines of a file.
  static Result<std::unique_ptr<LineSource>> open_file(const std::filesystem::path& file);
  // The standard input. `prompt`, when set, is called before each line is waited for.
  static std::unique_ptr<LineSource> standard_input(boost::asio::io_context& io,
                                                    std::function<void()> prompt);

  // The next line; nullopt at the end (or once stop() was called).
  boost::asio::awaitable<std::optional<SourceLine>> next();
  // Ends the source now: a wait for a line under way ends with nullopt.
  void stop();

 private:
  LineSource() = default;

  std::string name_;
  std::size_t number_ = 0;
  std::deque<std::string> lines_;
  bool at_end_ = false;
  std::unique_ptr<boost::asio::posix::stream_descriptor> input_;  // null: lines_ is all
  proto::LineFramer framer_{1024 * 1024};
  std::function<void()> prompt_;
};

}  // namespace escouade::harness
