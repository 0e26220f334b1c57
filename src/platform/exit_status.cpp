// ExitStatus and signal names: the same on every system (Windows has only the C signals).

#include <csignal>
#include <string>

#include "platform/process.hpp"

namespace escouade::platform {

std::string ExitStatus::describe() const {
  if (code) return "exit code " + std::to_string(*code);
  if (signal) {
    const std::string name = signal_name(*signal);
    std::string text = "killed by signal " + std::to_string(*signal);
    if (!name.empty()) text += " (" + name + ")";
    return text;
  }
  return "ended";
}

std::string signal_name(int signal) {
  // Numbers differ between systems (SIGBUS is 7 on Linux, 10 on macOS): name them by macro.
  struct Named {
    int number;
    const char* name;
  };
  static constexpr Named kNames[] = {
      {SIGABRT, "SIGABRT"},   {SIGFPE, "SIGFPE"},   {SIGILL, "SIGILL"},       {SIGINT, "SIGINT"},
      {SIGSEGV, "SIGSEGV"},   {SIGTERM, "SIGTERM"},
#ifndef _WIN32
      {SIGHUP, "SIGHUP"},     {SIGQUIT, "SIGQUIT"}, {SIGTRAP, "SIGTRAP"},     {SIGBUS, "SIGBUS"},
      {SIGKILL, "SIGKILL"},   {SIGUSR1, "SIGUSR1"}, {SIGUSR2, "SIGUSR2"},     {SIGPIPE, "SIGPIPE"},
      {SIGALRM, "SIGALRM"},   {SIGCHLD, "SIGCHLD"}, {SIGCONT, "SIGCONT"},     {SIGSTOP, "SIGSTOP"},
      {SIGTSTP, "SIGTSTP"},   {SIGTTIN, "SIGTTIN"}, {SIGTTOU, "SIGTTOU"},     {SIGURG, "SIGURG"},
      {SIGXCPU, "SIGXCPU"},   {SIGXFSZ, "SIGXFSZ"}, {SIGVTALRM, "SIGVTALRM"}, {SIGPROF, "SIGPROF"},
      {SIGWINCH, "SIGWINCH"}, {SIGSYS, "SIGSYS"},
#endif
  };
  for (const Named& n : kNames) {
    if (n.number == signal) return n.name;
  }
#if defined(SIGRTMIN) && defined(SIGRTMAX)
  if (signal >= SIGRTMIN && signal <= SIGRTMAX) {
    return signal == SIGRTMIN ? "SIGRTMIN" : "SIGRTMIN+" + std::to_string(signal - SIGRTMIN);
  }
#endif
  return "";
}

}  // namespace escouade::platform
