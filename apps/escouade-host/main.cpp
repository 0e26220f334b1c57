// escouade-host: the host as a program. An app drives it with JSON-RPC 2.0 on stdin/stdout,
// one message per line (docs/host-protocol.md); its diagnostics go to stderr.

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "app_server.hpp"
#include "base/event_loop.hpp"
#include "common/command_line.hpp"
#include "host/host.hpp"
#include "platform/keychain.hpp"
#include "platform/process.hpp"
#include "platform/reaper.hpp"
#include "runtime/process_program.hpp"
#include "sandbox/sandbox_program.hpp"
#include "supervisor/handshake.hpp"

extern char** environ;

namespace {

// After the host closed, how long the app is given to read the last answers and notifications.
constexpr std::chrono::milliseconds kFlushBound{2000};

std::filesystem::path default_data_dir() {
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home && *home ? home : ".") / ".escouade";
}

}  // namespace

int main(int argc, char** argv) {
  namespace asio = boost::asio;
  using namespace escouade;

  CLI::App cli{
      "escouade-host: runs Escouade's plugins; an app drives it with JSON-RPC 2.0 "
      "on stdin and stdout (host/* methods, see docs/host-protocol.md)"};
  std::string data_dir = default_data_dir().string();
  std::string lang = "en";
  std::string escouade_version{supervisor::kEscouadeVersion};
  std::uint64_t memory_limit_mb = 1024;
  cli.add_option("--data-dir", data_dir,
                 "Where journals (plugin-logs/) and compiled bundles (sandbox-cache/) are kept")
      ->capture_default_str();
  cli.add_option("--lang", lang, "The interface's language, given to plugins")
      ->capture_default_str();
  cli.add_option("--escouade-version", escouade_version, "Escouade's version, given to plugins")
      ->capture_default_str();
  cli.add_option("--memory-limit-mb", memory_limit_mb,
                 "A plugin past this resident memory (its whole process tree) is stopped")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  bool journal_at_once = false;
  cli.add_flag("--journal-at-once", journal_at_once,
               "Write each journal line before going on, not about 10 ms later on a thread of "
               "its own: for one who follows the files and wants each line before what follows "
               "it (escouade-plugin run)");
  std::string trace_path;
  cli.add_option("--trace", trace_path,
                 "Write every line between the host and each plugin, both ways, with its time "
                 "and the plugin's id, masked, to this file (escouade-plugin lint reads it)");
  net::Settings network;
  cli.add_option("--proxy", network.proxy,
                 "An HTTP proxy, http://HOST:PORT, for the network of sandboxed plugins (CONNECT; "
                 "only a host's name is judged through it)");
  cli.add_option("--ca-file", network.ca_file,
                 "Certificates (PEM) trusted beside the system's for the network of sandboxed "
                 "plugins");
  std::string keychain_choice = "secret-service";
  cli.add_option("--keychain", keychain_choice,
                 "Where plugins' secrets are kept: secret-service (the system's keychain), or "
                 "file:DIR, a plain file store for demos (not a keychain). Never one for the "
                 "other silently.")
      ->capture_default_str();
  // A usage error ends at 2, as a bad --keychain does.
  if (auto ended = escouade::cli::parse_command_line(cli, "escouade-host", argc, argv))
    return *ended;

  std::unique_ptr<platform::Keychain> keychain;
  if (keychain_choice == "secret-service") {
    keychain = platform::make_secret_service_keychain();
  } else if (keychain_choice.rfind("file:", 0) == 0 && keychain_choice.size() > 5) {
    keychain = platform::make_file_keychain(keychain_choice.substr(5));
  } else {
    std::cerr << "escouade-host: --keychain: " << keychain_choice
              << ": expected secret-service or file:DIR\n";
    return 2;
  }
  std::cerr << "escouade-host: secrets are kept in " << keychain->describe() << "\n";

  // A plugin that closes its input must not kill the host with SIGPIPE.
  ::signal(SIGPIPE, SIG_IGN);
  // The watchdog that ends every plugin's tree if this process dies: forked before any thread.
  auto reaper = platform::start_reaper();
  if (!reaper) {
    std::cerr << "escouade-host: no watchdog for the plugins' processes: " << reaper.error().message
              << "\n";
    return 1;
  }
  // What a dead plugin leaves behind comes to this process, to be ended.
  if (auto sub = platform::become_subreaper(); !sub) {
    std::cerr << "escouade-host: " << sub.error().message << "\n";
  }

  // Declared first, destroyed last (base/event_loop.hpp).
  EventLoop loop;
  runtime::ProcessContext context;
  context.reaper = &*reaper;
  context.known_children.insert(reaper->pid());
  // Trees end off the loop's thread; destroyed after the host, it finishes what the host asked.
  runtime::TreeEnder ender(loop.executor());
  context.ender = &ender;
  runtime::ProcessProgramFactory processes(loop.executor(), context);
  // run.js and run.wasm plugins run in the sandbox: each in a helper process of its own
  // (escouade-sandbox, beside this program when installed). Compiled bundles are kept under the
  // data folder, for the next run of the host.
  sandbox::SandboxProgramFactory sandboxed(
      loop.executor(), context,
      sandbox::SandboxOptions::installed(std::filesystem::path(data_dir) / "sandbox-cache"));
  runtime::ProgramRouter programs;
  programs.route(runtime::RunKind::command, &processes);
  programs.route(runtime::RunKind::js, &sandboxed);
  programs.route(runtime::RunKind::wasm, &sandboxed);

  host::HostConfig config;
  config.data_dir = data_dir;
  config.lang = lang;
  config.escouade_version = escouade_version;
  config.memory_limit_mb = memory_limit_mb;
  config.journal_at_once = journal_at_once;
  if (!trace_path.empty()) {
    auto trace = TraceFile::open(trace_path);
    if (!trace) {
      std::cerr << "escouade-host: --trace: " << trace.error().message << "\n";
      return 2;
    }
    config.trace = *trace;
  }
  {
    // Settings that cannot be used stop the program now, not each plugin's first fetch.
    boost::asio::io_context probe;
    if (auto client = net::Client::make(probe.get_executor(), network); !client) {
      std::cerr << "escouade-host: " << client.error().message << "\n";
      return 2;
    }
    config.network = network;
  }
  for (char** e = environ; e && *e; ++e)
    config.base_env.emplace_back(*e);
  config.check_environment = manifest::process_environment();
  config.keychain = keychain.get();
  config.processes = &context;

  // Once the host has closed, the last answers go out to the app, within a bound: an app that
  // stopped reading is not waited for.
  asio::steady_timer flush_bound(loop.io());
  bool closed = false;
  std::function<void()> host_closed;  // set once the server exists
  const int in_fd = ::dup(STDIN_FILENO);
  const int out_fd = ::dup(STDOUT_FILENO);
  app::AppServer server(loop.io(), in_fd, out_fd, [&] { host_closed(); });
  host_closed = [&] {
    if (closed) return;
    closed = true;
    server.when_drained([&] { loop.stop(); });
    flush_bound.expires_after(kFlushBound);
    flush_bound.async_wait([&](boost::system::error_code ec) {
      if (ec) return;
      std::cerr << "escouade-host: the app did not read its last answers within "
                << kFlushBound.count() << " ms; closing without them\n";
      loop.stop();
    });
  };
  {
    host::Host host(loop.executor(), config, programs,
                    [&](const supervisor::Status& s) { server.status_changed(s); });
    server.bind(host);
    server.start();

    // SIGTERM or SIGINT: close as host/shutdown does (each plugin gets shutdown, one second for
    // all), rather than leaving the plugins to the watchdog.
    asio::signal_set signals(loop.io(), SIGINT, SIGTERM);
    signals.async_wait([&](boost::system::error_code ec, int) {
      if (ec || closed) return;
      host.shutdown([&] { host_closed(); });
    });

    loop.run();
    signals.cancel();
    flush_bound.cancel();
    server.close();
    // Then the host: its plugins' trees end, its workers close (bounded).
  }
  // Completions still queued meet a closed app session and closed plugin sessions.
  loop.drain();
  reaper->close();
  return 0;
}
