#include "services/bind.hpp"

#include "services/files.hpp"
#include "services/fs.hpp"
#include "services/log.hpp"
#include "services/net.hpp"
#include "services/proc.hpp"
#include "services/secrets.hpp"
#include "services/settings.hpp"
#include "services/timers.hpp"
#include "services/ws.hpp"

namespace escouade::services {

namespace {

using Plugin = std::shared_ptr<ServedPlugin>;

// The families of methods the host serves, and the kinds of run each is served to. A family
// absent for a kind is not bound: its methods are answered -32601, as any unknown method is.
// A sandboxed plugin has no clock of its own to wait on, so the host keeps its timers; a process
// has one (the schema, net/fetch: "the same for ... timer/*"). fs/* and proc/* are served to
// both: a process has the user's rights already, but only the host knows where an agent's roots
// are, and the SDKs give one API for a plugin run either way (docs/files-and-programs.md).
struct Service {
  const char* family;
  bool process;    // run.command
  bool sandboxed;  // run.js, run.wasm
  void (*bind)(rpc::Session&, RunScope&, const ServiceContext&, const Plugin&);
};

const Service kServices[] = {
    {"secrets", true, true,
     [](rpc::Session& s, RunScope& run, const ServiceContext& ctx, const Plugin& p) {
       serve_secrets(s, run, ctx.secrets, p);
     }},
    {"settings", true, true,
     [](rpc::Session& s, RunScope&, const ServiceContext& ctx, const Plugin& p) {
       if (ctx.settings.store) serve_settings(s, ctx.settings, p);
     }},
    {"files", true, true,
     [](rpc::Session& s, RunScope&, const ServiceContext& ctx, const Plugin& p) {
       serve_files(s, ctx.files, p);
     }},
    {"log", true, true,
     [](rpc::Session& s, RunScope&, const ServiceContext&, const Plugin& p) {
       serve_log(s, p->journal);
     }},
    {"timer", false, true,
     [](rpc::Session& s, RunScope& run, const ServiceContext& ctx, const Plugin& p) {
       serve_timers(s, run, ctx.timers, p);
     }},
    // A process has its own network (the schema's net/fetch); a sandboxed plugin has only this.
    {"net", false, true,
     [](rpc::Session& s, RunScope& run, const ServiceContext& ctx, const Plugin& p) {
       serve_net(s, run, ctx.net, p);
     }},
    {"ws", false, true,
     [](rpc::Session& s, RunScope& run, const ServiceContext& ctx, const Plugin& p) {
       serve_ws(s, run, ctx.net, p);
     }},
    {"fs", true, true,
     [](rpc::Session& s, RunScope&, const ServiceContext& ctx, const Plugin& p) {
       if (ctx.fs.workers) serve_fs(s, ctx.fs, p);
     }},
    {"proc", true, true,
     [](rpc::Session& s, RunScope& run, const ServiceContext& ctx, const Plugin& p) {
       if (ctx.proc.workers && ctx.proc.processes) serve_proc(s, run, ctx.proc, p);
     }},
};

bool served_to(const Service& service, manifest::RunKind kind) {
  switch (kind) {
    case manifest::RunKind::command:
      return service.process;
    case manifest::RunKind::js:
    case manifest::RunKind::wasm:
      return service.sandboxed;
    case manifest::RunKind::none:
      break;
  }
  return false;
}

}  // namespace

std::vector<std::string> service_families(manifest::RunKind kind) {
  std::vector<std::string> out;
  for (const Service& s : kServices)
    if (served_to(s, kind)) out.emplace_back(s.family);
  return out;
}

void bind_services(rpc::Session& session, RunScope& run, const ServiceContext& ctx,
                   std::shared_ptr<ServedPlugin> plugin) {
  const auto kind = plugin->manifest.run.kind;
  for (const Service& s : kServices)
    if (served_to(s, kind)) s.bind(session, run, ctx, plugin);
}

}  // namespace escouade::services
