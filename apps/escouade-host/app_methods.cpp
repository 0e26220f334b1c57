// The host/* methods (schema/host-protocol-1.json, docs/host-protocol.md), each bound with its
// generated types to one small function: params that do not read into M::Params are answered
// invalidParams naming the field by Session::serve, before any of these runs.

#include <boost/json/value_from.hpp>

#include "app_server.hpp"
#include "protocol/gen/host_methods.hpp"

namespace escouade::app {

namespace json = boost::json;
namespace hp = proto::host;
namespace method = proto::host::method;

namespace {

constexpr std::size_t kJournalLines = 500;  // the Journal tab's, and the most host/journal gives

template <class M>
void answer(rpc::Reply<M>& reply, const Result<void>& r) {
  if (r) {
    reply.result(nullptr);
  } else {
    reply.error(r.error());
  }
}

hp::PluginState state_of(supervisor::State s) {
  return *hp::plugin_state_from_string(supervisor::to_string(s));
}

host::Project project_of(const hp::HostProject& p) {
  return host::Project{p.id, p.name, p.private_, p.folder.value_or(std::string())};
}

hp::HostDecision decision_of(const policy::Verdict& v) {
  hp::HostDecision out;
  out.decision = *hp::host_decision_decision_from_string(proto::to_string(v.decision));
  out.message = v.message;
  for (const auto& x : v.by) {
    hp::Vote vote;
    vote.id = x.id;
    vote.decision = *hp::vote_decision_from_string(policy::to_string(x.kind));
    vote.message = x.message;
    if (!x.reason.empty()) vote.reason = x.reason;
    out.by.push_back(std::move(vote));
  }
  return out;
}

hp::PluginStatus plugin_status(const supervisor::Status& s) {
  hp::PluginStatus out;
  out.id = s.id;
  out.state = state_of(s.state);
  if (s.pid) out.pid = *s.pid;
  out.crashes = s.crashes;
  if (!s.reason.empty()) out.reason = s.reason;
  return out;
}

void load(host::Host& host, const hp::LoadParams& p, rpc::Reply<method::HostLoad> reply) {
  auto loaded = host.load(p.folder, p.sha256);
  if (!loaded) return reply.error(loaded.error());
  hp::Loaded out;
  out.id = loaded->id;
  out.version = loaded->version;
  if (loaded->run) out.run = hp::loaded_run_from_string(*loaded->run);
  out.activation = loaded->activation;
  out.runs_as = loaded->runs_as;
  out.asks = loaded->asks;
  reply.result(out);
}

void enable(host::Host& host, const hp::EnableParams& p, rpc::Reply<method::HostEnable> reply) {
  answer(reply, host.enable(p.id, project_of(p.project)));
}

void disable(host::Host& host, const hp::DisableParams& p, rpc::Reply<method::HostDisable> reply) {
  const std::string* id = std::get_if<std::string>(&p.project);
  answer(reply, host.disable(p.id, id ? *id : std::get<hp::HostProject>(p.project).id));
}

void publish(host::Host& host, const hp::PublishParams& p, rpc::Reply<method::HostPublish> reply) {
  auto delivered = host.publish(p.fact);
  if (!delivered) {
    return reply.error(Error{delivered.error().code, "params." + delivered.error().message});
  }
  reply.result(hp::Published{*delivered});
}

// `payload`: params.params as the line gave it (AppServer::take_payload), else nullopt.
void call(host::Host& host, hp::CallParams& p, std::optional<std::string_view> payload,
          rpc::Reply<method::HostCall> reply) {
  std::optional<std::chrono::milliseconds> timeout;
  if (p.timeout_ms) {
    if (*p.timeout_ms <= 0) {
      return reply.error(proto::ErrorCode::invalid_params,
                         "params.timeoutMs: a positive integer of milliseconds");
    }
    timeout = std::chrono::milliseconds(*p.timeout_ms);
  }
  // The payload goes to the plugin, and its result to the app, as JSON text: neither is built
  // into values on the way (docs/PERFORMANCE.md).
  auto request = payload ? rpc::Outgoing::request_text(p.method, *payload)
                 : p.params && !p.params->is_null()
                     ? rpc::Outgoing::request_value(p.method, *p.params, rpc::ResultForm::text)
                     : rpc::Outgoing::request_text(p.method, std::string_view());
  if (!request) {
    return reply.error(proto::ErrorCode::invalid_params,
                       "params.params: " + request.error().message);
  }
  auto shared = std::make_shared<decltype(reply)>(std::move(reply));
  host.call(p.id, std::move(*request), timeout, [shared](Result<host::Answer> r) {
    if (r) {
      shared->result_text(std::move(r->text));
    } else {
      shared->error(r.error());
    }
  });
}

void decide(host::Host& host, const proto::DecideParams& p, rpc::Reply<method::HostDecide> reply) {
  auto shared = std::make_shared<decltype(reply)>(std::move(reply));
  host.decide(p, [shared](Result<policy::Verdict> v) {
    if (v) {
      shared->result(decision_of(*v));
    } else {
      shared->error(v.error());
    }
  });
}

void set_secret(host::Host& host, const hp::SecretSetParams& p,
                rpc::Reply<method::HostSecretsSet> reply) {
  auto shared = std::make_shared<decltype(reply)>(std::move(reply));
  host.set_secret(p.id, p.key, p.value, [shared](Result<void> r) { answer(*shared, r); });
}

void delete_secret(host::Host& host, const hp::SecretParams& p,
                   rpc::Reply<method::HostSecretsDelete> reply) {
  auto shared = std::make_shared<decltype(reply)>(std::move(reply));
  host.delete_secret(p.id, p.key, [shared](Result<void> r) { answer(*shared, r); });
}

void set_settings(host::Host& host, const hp::SettingsSetParams& p,
                  rpc::Reply<method::HostSettingsSet> reply) {
  answer(reply, host.set_settings(p.id, p.values));
}

void set_accounts(host::Host& host, const hp::AccountsSetParams& p,
                  rpc::Reply<method::HostAccountsSet> reply) {
  answer(reply, host.set_account_hosts(p.id, p.hosts));
}

void set_shared(host::Host& host, const hp::SharedSetParams& p,
                rpc::Reply<method::HostSharedSet> reply) {
  answer(reply, host.set_shared_port(p.id, p.port));
}

void set_agent(host::Host& host, const hp::AgentsSetParams& p,
               rpc::Reply<method::HostAgentsSet> reply) {
  policy::Agent agent;
  agent.key = p.key;
  agent.project = p.project;
  agent.agent = p.roots.agent;
  agent.agent_repo = p.roots.agent_repo;
  agent.agent_home = p.roots.agent_home;
  if (p.env)
    for (const auto& [name, value] : *p.env)
      agent.env.push_back(name + "=" + value);
  answer(reply, host.set_agent(std::move(agent)));
}

void remove_agent(host::Host& host, const hp::AgentRef& p,
                  rpc::Reply<method::HostAgentsRemove> reply) {
  answer(reply, host.remove_agent(p.key));
}

void restart(host::Host& host, const hp::PluginRef& p, rpc::Reply<method::HostRestart> reply) {
  answer(reply, host.restart(p.id));
}

void status(host::Host& host, const hp::StatusParams& p, rpc::Reply<method::HostStatus> reply) {
  auto all = host.status(p.id ? std::optional<std::string_view>(*p.id) : std::nullopt);
  if (!all) return reply.error(all.error());
  std::vector<hp::PluginStatus> out;
  for (const auto& s : *all)
    out.push_back(plugin_status(s));
  reply.result(out);
}

void journal(host::Host& host, const hp::JournalParams& p, rpc::Reply<method::HostJournal> reply) {
  std::size_t lines = kJournalLines;
  if (p.lines) {
    if (*p.lines <= 0)
      return reply.error(proto::ErrorCode::invalid_params, "params.lines: a positive integer");
    lines = static_cast<std::size_t>(*p.lines);
  }
  auto tail = host.journal(p.id, std::min(lines, kJournalLines));
  if (!tail) return reply.error(tail.error());
  reply.result(hp::JournalLines{*tail});
}

}  // namespace

void AppServer::bind(host::Host& h) {
  host_ = &h;
  const auto on = [&h](auto f) {
    // The params are the handler's to take (host/call moves its payload on, never copies it).
    return [&h, f](auto& params, auto reply) { f(h, params, std::move(reply)); };
  };
  session_.serve<method::HostLoad>(on(load));
  session_.serve<method::HostEnable>(on(enable));
  session_.serve<method::HostDisable>(on(disable));
  session_.serve<method::HostPublish>(on(publish));
  session_.serve<method::HostCall>(
      [this, &h](hp::CallParams& params, rpc::Reply<method::HostCall> reply) {
        call(h, params, take_payload(), std::move(reply));
      });
  session_.serve<method::HostDecide>(on(decide));
  session_.serve<method::HostSecretsSet>(on(set_secret));
  session_.serve<method::HostSecretsDelete>(on(delete_secret));
  session_.serve<method::HostSettingsSet>(on(set_settings));
  session_.serve<method::HostAccountsSet>(on(set_accounts));
  session_.serve<method::HostSharedSet>(on(set_shared));
  session_.serve<method::HostAgentsSet>(on(set_agent));
  session_.serve<method::HostAgentsRemove>(on(remove_agent));
  session_.serve<method::HostRestart>(on(restart));
  session_.serve<method::HostStatus>(on(status));
  session_.serve<method::HostJournal>(on(journal));
  session_.serve<method::HostShutdown>([this](const auto&, rpc::Reply<method::HostShutdown> reply) {
    auto shared = std::make_shared<decltype(reply)>(std::move(reply));
    closing_ = true;
    host_->shutdown([this, shared] {
      shared->result(nullptr);
      close_host();
    });
  });
}

void AppServer::status_changed(const supervisor::Status& s) {
  hp::StatusChange change;
  change.id = s.id;
  change.state = state_of(s.state);
  if (!s.reason.empty()) change.reason = s.reason;
  // A status change is news a later one makes old: it may be dropped (its method says so).
  if (auto message = rpc::Outgoing::notification<method::HostStatusChanged>(change)) {
    session_.notify(std::move(*message));
  }
}

}  // namespace escouade::app
