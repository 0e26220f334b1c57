#include "services/log.hpp"

#include "protocol/gen/methods.hpp"

namespace escouade::services {

namespace {

JournalLevel level_of(proto::LogParamsLevel l) {
  switch (l) {
    case proto::LogParamsLevel::debug:
      return JournalLevel::debug;
    case proto::LogParamsLevel::info:
      return JournalLevel::info;
    case proto::LogParamsLevel::warn:
      return JournalLevel::warn;
    case proto::LogParamsLevel::error:
      return JournalLevel::error;
  }
  return JournalLevel::info;
}

}  // namespace

void serve_log(rpc::Session& session, std::shared_ptr<Journal> journal) {
  session.serve_notification<proto::method::Log>([journal](const proto::LogParams& p) {
    journal->write(level_of(p.level), "log: " + p.message);
  });
}

}  // namespace escouade::services
