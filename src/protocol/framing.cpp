#include "protocol/framing.hpp"

namespace escouade::proto {

std::string LineFramer::finish() {
  std::string rest;
  if (!skipping_) rest.swap(pending_);
  if (!rest.empty() && rest.back() == '\r') rest.pop_back();
  pending_.clear();
  skipping_ = false;
  return rest;
}

}  // namespace escouade::proto
