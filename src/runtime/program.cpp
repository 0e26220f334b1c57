#include "runtime/program.hpp"

namespace escouade::runtime {

std::string_view to_string(RunKind k) noexcept {
  switch (k) {
    case RunKind::command:
      return "command";
    case RunKind::js:
      return "js";
    case RunKind::wasm:
      return "wasm";
  }
  return "command";
}

ManifestProgram program_of(const manifest::Manifest& m) {
  ManifestProgram out;
  out.spec.plugin_id = m.id;
  out.spec.folder = m.folder;
  out.spec.limits.net_bytes = static_cast<std::uint64_t>(m.limits.net_bytes);
  switch (m.run.kind) {
    case manifest::RunKind::command:
      out.spec.kind = RunKind::command;
      out.spec.command = m.run.command;
      out.spec.executable = m.run.resolved;
      out.runs = true;
      break;
    case manifest::RunKind::js:
      out.spec.kind = RunKind::js;
      out.spec.module = m.folder / m.run.path;
      out.runs = true;
      break;
    case manifest::RunKind::wasm:
      // run.wasm names the author's build file; the module lies beside the manifest.
      out.spec.kind = RunKind::wasm;
      out.spec.module = m.folder / "plugin.wasm";
      out.runs = true;
      break;
    case manifest::RunKind::none:
      break;
  }
  return out;
}

void ProgramRouter::route(RunKind kind, ProgramFactory* factory) {
  routes_[static_cast<std::size_t>(kind)] = factory;
}

bool ProgramRouter::runs(RunKind kind) const {
  ProgramFactory* f = routes_[static_cast<std::size_t>(kind)];
  return f && f->runs(kind);
}

std::unique_ptr<Program> ProgramRouter::make(const ProgramSpec& spec) {
  if (!runs(spec.kind)) return nullptr;
  return routes_[static_cast<std::size_t>(spec.kind)]->make(spec);
}

void ProgramRouter::prepare(const ProgramSpec& spec, Tell tell) {
  if (runs(spec.kind)) routes_[static_cast<std::size_t>(spec.kind)]->prepare(spec, std::move(tell));
}

ProcessContext* ProgramRouter::process_context() {
  for (ProgramFactory* f : routes_) {
    if (!f) continue;
    if (ProcessContext* c = f->process_context()) return c;
  }
  return nullptr;
}

}  // namespace escouade::runtime
