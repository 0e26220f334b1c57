#include "services/timer_pacer.hpp"

#include <algorithm>
#include <cmath>

namespace escouade::services {

namespace {

using Seconds = std::chrono::duration<double>;

}  // namespace

TimerPacer::TimerPacer(boost::asio::any_io_executor executor, Clock& clock, Rates rates)
    : clock_(clock),
      rates_(rates),
      all_{rates.all_burst, clock.now()},
      timer_(clock.make_timer(std::move(executor))) {}

TimerPacer::~TimerPacer() {
  lifeline_.end();
  timer_->cancel();
}

void TimerPacer::refill(Bucket& b, double rate, double burst, Clock::TimePoint now) const {
  if (now > b.at) {
    b.tokens = std::min(burst, b.tokens + rate * Seconds(now - b.at).count());
    b.at = now;
  }
}

void TimerPacer::deliver(const void* run, std::function<void()> fire) {
  const auto now = clock_.now();
  auto [it, made] = runs_.try_emplace(run, Run{Bucket{rates_.per_run_burst, now}, {}});
  Run& r = it->second;
  refill(r.bucket, rates_.per_run, rates_.per_run_burst, now);
  refill(all_, rates_.all, rates_.all_burst, now);
  if (r.waiting.empty() && r.bucket.tokens >= 1 && all_.tokens >= 1) {
    r.bucket.tokens -= 1;
    all_.tokens -= 1;
    fire();
    return;
  }
  if (r.waiting.empty()) turns_.push_back(run);
  r.waiting.push_back(std::move(fire));
  arm(now);
}

void TimerPacer::forget(const void* run) {
  runs_.erase(run);
  turns_.remove(run);
}

std::size_t TimerPacer::waiting() const {
  std::size_t n = 0;
  for (const auto& [run, r] : runs_)
    n += r.waiting.size();
  return n;
}

void TimerPacer::serve() {
  const auto now = clock_.now();
  refill(all_, rates_.all, rates_.all_burst, now);
  // Turns in order: a run that fired goes to the back of the line; one that has no token yet
  // keeps its place for the next round.
  bool fired = true;
  while (fired && all_.tokens >= 1 && !turns_.empty()) {
    fired = false;
    for (auto it = turns_.begin(); it != turns_.end() && all_.tokens >= 1;) {
      Run& r = runs_.at(*it);
      refill(r.bucket, rates_.per_run, rates_.per_run_burst, now);
      if (r.bucket.tokens < 1) {
        ++it;
        continue;
      }
      r.bucket.tokens -= 1;
      all_.tokens -= 1;
      auto fire = std::move(r.waiting.front());
      r.waiting.pop_front();
      const void* run = *it;
      it = turns_.erase(it);
      if (!r.waiting.empty()) turns_.push_back(run);
      fired = true;
      // It may deliver, or forget a run, again: the loop reads the line afresh after it.
      fire();
      break;
    }
  }
  if (!turns_.empty()) arm(now);
}

void TimerPacer::arm(Clock::TimePoint now) {
  if (armed_) return;
  // When the next token of all, or of the first run that lacks one, comes.
  double wait = all_.tokens >= 1 ? 0 : (1 - all_.tokens) / rates_.all;
  double run_wait = 1.0 / rates_.per_run;
  for (const void* run : turns_) {
    const Run& r = runs_.at(run);
    run_wait =
        std::min(run_wait, r.bucket.tokens >= 1 ? 0 : (1 - r.bucket.tokens) / rates_.per_run);
  }
  wait = std::max(wait, run_wait);
  armed_ = true;
  const auto at = now + std::chrono::duration_cast<Clock::Duration>(
                            Seconds(std::max(wait, 0.0005)));  // at least half a millisecond
  timer_->wait_until(at, lifeline_.guard([this](bool done) {
    armed_ = false;
    if (done) serve();
  }));
}

}  // namespace escouade::services
