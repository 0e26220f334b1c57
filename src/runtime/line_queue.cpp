#include "runtime/line_queue.hpp"

#include <utility>

namespace escouade::runtime {

bool LineQueue::make_room(std::size_t size, bool droppable, std::size_t held) {
  // A droppable line that would not fit beside the kept ones alone is the one to go: dropping
  // older ones would not make room for it.
  if (droppable && held + kept_bytes_ + size > bound_) {
    ++dropped_;
    return false;
  }
  const auto over = [&] { return held + bytes_ + size > bound_; };
  for (auto it = lines_.begin(); it != lines_.end() && over();) {
    if (it->delivery != proto::Delivery::droppable) {
      ++it;
      continue;
    }
    forget(*it);
    it = lines_.erase(it);
    ++dropped_;
  }
  bytes_ += size;
  if (!droppable) kept_bytes_ += size;
  return true;
}

bool LineQueue::push(std::string text, proto::Delivery delivery, std::size_t held) {
  if (!make_room(text.size(), delivery == proto::Delivery::droppable, held)) return false;
  lines_.push_back(Line{std::move(text), delivery, nullptr});
  return true;
}

bool LineQueue::push(std::shared_ptr<const std::string> text, proto::Delivery delivery,
                     std::size_t held) {
  if (!make_room(text->size(), delivery == proto::Delivery::droppable, held)) return false;
  lines_.push_back(Line{std::string(), delivery, std::move(text)});
  return true;
}

void LineQueue::take_joined(std::string& out, std::size_t limit) {
  if (lines_.empty()) return;
  if (out.empty() && !lines_.front().shared && out.capacity() < lines_.front().text.size() &&
      (lines_.size() == 1 || lines_.front().text.size() >= limit)) {
    out = take(0);
    return;
  }
  // Grown, when it must, to no more than `limit` (its owner keeps a buffer that size), and
  // exactly: std::string's reserve may double instead, and a buffer past its owner's room was
  // given back after each write and faulted in anew for the next (bench_host facts 10: 15,000
  // page faults in the run, nearly all in this copy).
  const std::size_t want = out.size() + (bytes_ < limit ? bytes_ : limit);
  if (out.capacity() < want) {
    const std::size_t doubled = 2 * out.capacity();
    std::string bigger;
    bigger.reserve(doubled > want && doubled <= limit ? doubled : want);
    bigger += out;
    out.swap(bigger);
  }
  // Whole lines while they fit (the first one always goes).
  do {
    out += lines_.front().view();
    forget(lines_.front());
    lines_.pop_front();
  } while (!lines_.empty() && out.size() + lines_.front().view().size() <= limit);
}

std::string LineQueue::take(std::size_t at) {
  forget(lines_[at]);
  std::string text =
      lines_[at].shared ? std::string(*lines_[at].shared) : std::move(lines_[at].text);
  lines_.erase(lines_.begin() + static_cast<std::ptrdiff_t>(at));
  return text;
}

void LineQueue::clear() noexcept {
  lines_.clear();
  bytes_ = 0;
  kept_bytes_ = 0;
}

void LineQueue::forget(const Line& line) noexcept {
  const std::size_t size = line.view().size();
  bytes_ -= size;
  if (line.delivery != proto::Delivery::droppable) kept_bytes_ -= size;
}

std::size_t LineQueue::take_dropped() noexcept {
  return std::exchange(dropped_, 0);
}

}  // namespace escouade::runtime
