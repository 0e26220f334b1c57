#include "harness/line_source.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <fstream>
#include <iostream>

#include "protocol/gen/errors.hpp"

namespace escouade::harness {

namespace asio = boost::asio;

namespace {

void split_lines(std::istream& in, std::deque<std::string>& out) {
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back(std::move(line));
  }
}

}  // namespace

Result<std::unique_ptr<LineSource>> LineSource::open_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return Error{proto::ErrorCode::not_found, "cannot read the scenario " + file.string()};
  std::unique_ptr<LineSource> s(new LineSource());
  s->name_ = file.filename().string();
  split_lines(in, s->lines_);
  s->at_end_ = true;
  return s;
}

std::unique_ptr<LineSource> LineSource::standard_input(asio::io_context& io,
                                                       std::function<void()> prompt) {
  std::unique_ptr<LineSource> s(new LineSource());
  s->name_ = "stdin";
  s->prompt_ = std::move(prompt);
  struct stat st {};
  const bool streams =
      ::fstat(STDIN_FILENO, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) ||
                                          (S_ISCHR(st.st_mode) && ::isatty(STDIN_FILENO)));
  if (streams) {
    // A pipe or a terminal waits in the event loop; a file or /dev/null is read at once.
    s->input_ = std::make_unique<asio::posix::stream_descriptor>(io, ::dup(STDIN_FILENO));
  } else {
    split_lines(std::cin, s->lines_);
    s->at_end_ = true;
  }
  return s;
}

void LineSource::stop() {
  at_end_ = true;
  lines_.clear();
  if (input_) {
    boost::system::error_code ignored;
    input_->cancel(ignored);
  }
}

asio::awaitable<std::optional<SourceLine>> LineSource::next() {
  if (lines_.empty() && !at_end_ && prompt_) prompt_();
  while (lines_.empty() && !at_end_ && input_) {
    std::array<char, 4096> buf;
    auto [ec, n] =
        co_await input_->async_read_some(asio::buffer(buf), asio::as_tuple(asio::use_awaitable));
    if (at_end_) break;  // stopped meanwhile
    // Empty lines are dropped by the framer: they count for nothing in a scenario either.
    framer_.feed(
        std::string_view(buf.data(), n), [&](std::string_view l) { lines_.emplace_back(l); },
        [&](std::size_t limit) {
          // Not a step: it fails, and says so.
          lines_.emplace_back("line-longer-than-" + std::to_string(limit) + "-bytes");
        });
    if (ec) {
      if (std::string rest = framer_.finish(); !rest.empty()) lines_.push_back(std::move(rest));
      at_end_ = true;
    }
  }
  if (lines_.empty()) co_return std::nullopt;
  SourceLine l{std::move(lines_.front()), name_ + ":" + std::to_string(++number_)};
  lines_.pop_front();
  co_return l;
}

}  // namespace escouade::harness
