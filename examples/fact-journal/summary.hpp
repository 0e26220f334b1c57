#pragma once

// What the fact journal keeps of one project: how many facts of each name, and the last
// status of each agent. Pure; main.cpp feeds it and logs its line.

#include <cstdint>
#include <map>
#include <string>

#include "escouade/plugin.hpp"

namespace fact_journal {

class Summary {
 public:
  // Counts `f`; an agent.status fact also sets its agent's status (data.status).
  void add(const escouade::Fact& f) {
    ++total_;
    ++counts_[std::string(escouade::to_string(f.name))];
    if (f.name != escouade::FactName::agent_status || !f.agent) return;
    if (const auto* s = f.data.if_contains("status"); s && s->is_string()) {
      statuses_[f.agent->name] = std::string(s->get_string());
    }
  }

  std::int64_t total() const { return total_; }

  // "3 facts: agent.status 2, ticket.column 1; agents: Ada working, Bob idle"
  std::string line() const {
    std::string out = std::to_string(total_) + (total_ == 1 ? " fact" : " facts");
    const char* sep = ": ";
    for (const auto& [name, n] : counts_) {
      out += sep + name + " " + std::to_string(n);
      sep = ", ";
    }
    if (!statuses_.empty()) {
      sep = "; agents: ";
      for (const auto& [agent, status] : statuses_) {
        out += sep + agent + " " + status;
        sep = ", ";
      }
    }
    return out;
  }

 private:
  std::int64_t total_ = 0;
  std::map<std::string, std::int64_t> counts_;
  std::map<std::string, std::string> statuses_;
};

}  // namespace fact_journal
