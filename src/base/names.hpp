#pragma once

// Names a part uses again and again (the methods a session or a supervisor sends), each kept
// once and shared by what refers to it: a call in flight holds its method's name without
// copying it (callgrind: two allocations a call fewer). At most kMax names are kept; past them
// a name is made for its one use, so what an app can make a host keep by calling a plugin by
// ever new names (host/call takes any) stays bounded.
//
// Thread: one (the host's).

#include <cstddef>
#include <memory>
#include <set>
#include <string>
#include <string_view>

namespace escouade {

class Names {
 public:
  using Name = std::shared_ptr<const std::string>;
  static constexpr std::size_t kMax = 64;

  Name of(std::string_view name) {
    if (auto it = kept_.find(name); it != kept_.end()) return *it;
    auto made = std::make_shared<const std::string>(name);
    if (kept_.size() < kMax) kept_.insert(made);
    return made;
  }
  std::size_t kept() const noexcept { return kept_.size(); }

 private:
  struct ByText {
    using is_transparent = void;
    bool operator()(const Name& a, const Name& b) const { return *a < *b; }
    bool operator()(const Name& a, std::string_view b) const { return *a < b; }
    bool operator()(std::string_view a, const Name& b) const { return a < *b; }
  };
  std::set<Name, ByText> kept_;
};

}  // namespace escouade
