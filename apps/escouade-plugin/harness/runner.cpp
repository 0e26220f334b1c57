#include "harness/runner.hpp"

#include <signal.h>
#include <stdlib.h>

#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>
#include <map>

#include "base/event_loop.hpp"
#include "harness/session.hpp"

namespace escouade::harness {

namespace asio = boost::asio;
namespace json = boost::json;
namespace fs = std::filesystem;
namespace hp = proto::host;
namespace method = proto::host::method;
using std::chrono::milliseconds;

namespace {

// Safety nets for the host's answers, far above what each takes: never a timing under test.
constexpr milliseconds kHostLimit{30'000};
constexpr milliseconds kShutdownLimit{15'000};
// How often the journals are looked at.
constexpr milliseconds kJournalPoll{50};

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words)
    out += (out.empty() ? "" : ", ") + w;
  return out;
}

}  // namespace

RunSession::RunSession(asio::io_context& io, const RunOptions& options, const fs::path& data_dir,
                       Printer& printer)
    : io_(io),
      options_(options),
      data_dir_(data_dir),
      print_(printer),
      link_(io, HostEvents{[this](const StatusChange& s) {
                             flush_journals();
                             changes_.push_back(s);
                             print_.status(s.id, s.state, s.reason);
                           },
                           [this](std::string_view line) { print_.host_line(line); },
                           [this](const runtime::ProgramEnd& end) {
                             if (shut_down_) return;
                             fail("escouade-host ended: " + end.reason);
                             if (source_) source_->stop();
                           }}),
      journals_(data_dir / "plugin-logs",
                [this](std::string_view id, std::string_view line) { print_.journal(id, line); }),
      journal_timer_(io) {}

void RunSession::fail(std::string_view why) {
  ++failed_;
  print_.failure(why);
}

void RunSession::flush_journals() {
  if (options_.journal) journals_.poll();
}

void RunSession::follow_journals() {
  following_ = true;
  journal_timer_.expires_after(kJournalPoll);
  journal_timer_.async_wait([this](boost::system::error_code ec) {
    // A cancel() that comes once the wait has completed (its handler already queued, as on a
    // loaded machine) does not reach it: the flag does. Without it, this re-armed itself for
    // ever after finish() and the harness never exited (docs/lifetimes.md).
    if (ec || !following_) return;
    flush_journals();
    follow_journals();
  });
}

void RunSession::close() {
  following_ = false;
  journal_timer_.cancel();
  link_.close();
}

bool RunSession::start_host(const std::vector<std::string>& args) {
  if (options_.journal) {
    journals_.skip_existing();
    follow_journals();
  }
  if (auto started = link_.start(options_.host, args); !started) {
    print_.failure("cannot start escouade-host: " + started.error().message);
    return false;
  }
  return true;
}

hp::HostProject RunSession::project(bool with_folder) const {
  hp::HostProject p;
  p.id = options_.project;
  p.name = options_.project;
  p.private_ = options_.is_private;
  if (with_folder && !options_.project_folder.empty()) {
    p.folder = fs::absolute(options_.project_folder).string();
  }
  return p;
}

asio::awaitable<void> RunSession::setup() {
  for (const auto& folder : options_.folders) {
    const std::string path = fs::absolute(folder).lexically_normal().string();
    print_.step("load " + path);
    // Params are named, never temporaries, in a co_await: GCC 12 destroys such a temporary
    // twice (it did here, a double free).
    const hp::LoadParams params{path};
    auto loaded = co_await link_.call<method::HostLoad>(params, kHostLimit);
    ++steps_;
    if (!loaded.ok()) {
      fail("refused: " + loaded.answer.error_message);
      continue;
    }
    const hp::Loaded& l = loaded.result;
    print_.outcome(l.id + " " + l.version + ", run " +
                   (l.run ? std::string(hp::to_string(*l.run)) : "none (declarative)") +
                   ", activation [" + joined(l.activation) + "]");
    // What the install window says of it: how it runs, then what it asks.
    print_.detail("the install window says: " + l.runs_as);
    for (const auto& asked : l.asks)
      print_.detail("- " + asked);
    context_.plugins.push_back(l.id);
  }
  for (const auto& id : context_.plugins) {
    print_.step("enable " + id + " for project " + options_.project +
                (options_.is_private ? " (private)" : ""));
    ++steps_;
    const hp::EnableParams params{id, project(true)};
    auto enabled = co_await link_.call<method::HostEnable>(params, kHostLimit);
    if (!enabled.ok()) fail(enabled.answer.error_message);
  }
  for (const auto& s : options_.secrets) {
    ++steps_;
    auto a = parse_assignment(s, context_.plugins);
    if (!a) {
      print_.step("secret");
      fail("--secret " + a.error().message);
      continue;
    }
    print_.step("secret " + a->id + ":" + a->name);
    const hp::SecretSetParams params{a->id, a->name, a->value};
    auto kept = co_await link_.call<method::HostSecretsSet>(params, kHostLimit);
    if (!kept.ok()) fail(kept.answer.error_message);
  }
  // One host/settings/set per plugin, all its values at once.
  std::map<std::string, json::object> settings;
  for (const auto& s : options_.settings) {
    auto a = parse_assignment(s, context_.plugins);
    if (!a) {
      ++steps_;
      print_.step("setting");
      fail("--setting " + a.error().message);
      continue;
    }
    settings[a->id][a->name] = setting_value(a->value);
  }
  for (auto& [id, values] : settings) {
    ++steps_;
    print_.step("settings " + id + " " + json::serialize(values));
    const hp::SettingsSetParams params{id, values};
    auto set = co_await link_.call<method::HostSettingsSet>(params, kHostLimit);
    if (!set.ok()) fail(set.answer.error_message);
  }
}

asio::awaitable<void> RunSession::play(LineSource& source) {
  source_ = &source;
  while (!interrupted_ && link_.running()) {
    auto line = co_await source.next();
    if (!line) break;
    auto step = parse_step(line->text, context_);
    if (!step) {
      ++steps_;
      print_.step(line->where + ": " + line->text);
      fail(step.error().message);
      continue;
    }
    if (!*step) continue;
    co_await run_step(**step);
  }
  source_ = nullptr;
}

asio::awaitable<void> RunSession::finish() {
  if (link_.running()) {
    print_.step("shutdown");
    const hp::NoParams none{};
    auto done = co_await link_.call<method::HostShutdown>(none, kShutdownLimit);
    shut_down_ = true;
    if (!done.ok()) fail(done.answer.error_message);
    asio::steady_timer t(io_);
    const auto deadline = std::chrono::steady_clock::now() + kShutdownLimit;
    while (link_.running() && std::chrono::steady_clock::now() < deadline) {
      t.expires_after(milliseconds(10));
      co_await t.async_wait(asio::use_awaitable);
    }
    if (link_.running()) fail("escouade-host did not exit after host/shutdown");
  }
  flush_journals();
  following_ = false;
  journal_timer_.cancel();
}

void RunSession::interrupt(LineSource* source) {
  interrupted_ = true;
  if (source) source->stop();
}

int run_harness(const RunOptions& options, std::ostream& out) {
  Printer print(out, options.color);

  fs::path data_dir = options.data_dir;
  bool temporary = false;
  if (data_dir.empty()) {
    std::string templ = (fs::temp_directory_path() / "escouade-run-XXXXXX").string();
    if (!::mkdtemp(templ.data())) {
      print.failure("cannot make a temporary data dir");
      return 2;
    }
    data_dir = templ;
    temporary = true;
  }
  std::error_code ec;
  fs::create_directories(data_dir / "plugin-logs", ec);
  const std::string keychain =
      options.keychain.empty() ? "file:" + (data_dir / "keychain").string() : options.keychain;

  print.note("escouade-plugin run: " + options.host.string());
  print.note("  data dir " + data_dir.string() +
             (temporary ? " (temporary, removed at the end; --data-dir to keep it)" : ""));
  if (options.keychain.empty()) {
    print.note("  secrets in " + keychain.substr(5) +
               ": a demo file store, not a keychain (--keychain to choose)");
  } else {
    print.note("  secrets in " + keychain);
  }
  print.note("  project " + options.project + (options.is_private ? " (private)" : ""));

  EventLoop loop;  // declared first, destroyed last (base/event_loop.hpp)
  asio::io_context& io = loop.io();
  RunSession session(io, options, data_dir, print);
  // Each journal line on disk before the answer that follows it: shown in order.
  std::vector<std::string> host_args{"--data-dir", data_dir.string(), "--keychain", keychain,
                                     "--journal-at-once"};
  if (!options.trace.empty()) {
    host_args.insert(host_args.end(), {"--trace", fs::absolute(options.trace).string()});
    print.note("  trace in " + options.trace.string() + " (escouade-plugin lint reads it)");
  }
  if (!options.proxy.empty()) host_args.insert(host_args.end(), {"--proxy", options.proxy});
  if (!options.ca_file.empty())
    host_args.insert(host_args.end(), {"--ca-file", fs::absolute(options.ca_file).string()});
  if (!session.start_host(host_args)) return 2;

  std::unique_ptr<LineSource> source;
  if (!options.scenario.empty()) {
    auto file = LineSource::open_file(options.scenario);
    if (!file) {
      print.failure(file.error().message);
      session.fail("no scenario");
    } else {
      source = std::move(*file);
    }
  } else {
    std::function<void()> prompt;
    if (options.interactive) prompt = [&print] { print.prompt(); };
    source = LineSource::standard_input(io, std::move(prompt));
  }

  // Ctrl-C or SIGTERM: the step under way ends, then the host is shut down as at the end.
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](boost::system::error_code e, int) {
    if (e) return;
    print.note("interrupted: shutting the host down");
    session.interrupt(source.get());
  });

  // The run ends with its steps and the host's shutdown, whatever is still queued.
  const std::exception_ptr failure = loop.run([&]() -> asio::awaitable<void> {
    co_await session.setup();
    if (options.interactive) {
      print.note("Type a step (help for the list); Ctrl-D ends.");
    }
    if (source) co_await session.play(*source);
    if (options.interactive) print.text("\n");  // after the prompt Ctrl-D left
    co_await session.finish();
  }());
  signals.cancel();
  if (failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      session.fail(std::string("the harness failed: ") + e.what());
    }
  }
  session.close();
  loop.drain();

  if (session.failed() == 0) {
    print.note("done: " + std::to_string(session.steps()) + " steps, none failed");
  } else {
    print.failure(std::to_string(session.failed()) + " of " + std::to_string(session.steps()) +
                  " steps failed");
  }
  if (temporary) fs::remove_all(data_dir, ec);
  return session.failed() == 0 ? 0 : 1;
}

}  // namespace escouade::harness
