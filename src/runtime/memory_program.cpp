#include "runtime/memory_program.hpp"

#include <boost/asio/post.hpp>
#include <csignal>

namespace escouade::runtime {

void MemoryPeer::deliver(std::function<void(ProgramEvents&)> event) {
  // Posted with the program's token: nothing reaches its owner once the program is destroyed.
  boost::asio::post(executor_,
                    [self = shared_from_this(), alive = program_alive_, event = std::move(event)] {
                      if (alive) event(self->events_);
                    });
}

void MemoryPeer::say(std::string line) {
  if (!started_ || ended_) return;
  deliver([line = std::move(line)](ProgramEvents& e) {
    if (e.output_line) e.output_line(line);
  });
}

void MemoryPeer::say_error(std::string line) {
  if (!started_ || ended_) return;
  deliver([line = std::move(line)](ProgramEvents& e) {
    if (e.error_line) e.error_line(line);
  });
}

void MemoryPeer::end(ProgramEnd end) {
  if (!started_ || ended_) return;
  ended_ = true;
  deliver([end = std::move(end)](ProgramEvents& e) {
    if (e.exited) e.exited(end);
  });
}

MemoryProgram::MemoryProgram(boost::asio::any_io_executor executor, ProgramSpec spec,
                             std::shared_ptr<MemoryPeer> peer)
    : peer_(std::move(peer)) {
  peer_->spec_ = std::move(spec);
  peer_->executor_ = std::move(executor);
  peer_->program_alive_ = lifeline_.token();
}

MemoryProgram::~MemoryProgram() {
  lifeline_.end();
  peer_->ended_ = true;  // a program destroyed is gone, whatever the test meant to say
}

Result<void> MemoryProgram::start(ProgramEvents events) {
  if (peer_->start_failure) return *peer_->start_failure;
  peer_->events_ = std::move(events);
  peer_->started_ = true;
  return {};
}

void MemoryProgram::write(std::string line, proto::Delivery delivery) {
  if (!peer_->started_ || peer_->ended_) return;
  if (!line.empty() && line.back() == '\n') line.pop_back();
  peer_->received_.push_back(line);
  peer_->deliveries_.push_back(delivery);
  if (peer_->on_line) peer_->on_line(peer_->received_.back());
}

void MemoryProgram::stop() {
  ++peer_->stops_;
  if (peer_->ends_when_stopped)
    peer_->end(ProgramEnd::of_process(ExitStatus{std::nullopt, SIGKILL}));
}

std::unique_ptr<Program> MemoryProgramFactory::make(const ProgramSpec& spec) {
  auto peer = std::make_shared<MemoryPeer>();
  if (prepare) prepare(*peer);
  made_.push_back(peer);
  return std::make_unique<MemoryProgram>(executor_, spec, std::move(peer));
}

}  // namespace escouade::runtime
