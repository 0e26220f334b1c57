#include "services/run_scope.hpp"

#include <algorithm>

namespace escouade::services {

bool PluginChannel::notify(rpc::Outgoing message) const {
  if (!open()) return false;
  session_->notify(std::move(message));
  return true;
}

bool PluginChannel::open() const {
  return static_cast<bool>(run_) && !session_->closed();
}

std::size_t PluginChannel::input_backlog() const {
  return open() ? scope_->input_backlog() : 0;
}

RunScope::~RunScope() {
  lifeline_.end();
  for (auto& f : on_end_)
    f();
  while (!held_.empty())
    held_.pop_back();  // the last given, first ended
}

void RunScope::release(const void* thing) {
  auto it =
      std::find_if(held_.begin(), held_.end(), [thing](const Held& h) { return h.key == thing; });
  if (it != held_.end()) held_.erase(it);
}

}  // namespace escouade::services
