#pragma once

// The host's side of one sandbox helper (escouade-sandbox, helper_main.cpp): a process of the
// host's run as a plugin's process is (runtime::ProcessProgram: its own process group, its pipes
// read and written on the host's loop, its output not read while its input is full, its end
// learnt from a pidfd, its tree ended with it and by the host's watchdog if the host dies), with
// two more descriptors: its control pipe, whose records (sandbox/wire.hpp) come here, and its
// status page (sandbox/status_page.hpp), mapped here too.
//
// A helper starts before it knows what it runs (a spare): until bind(), nothing it does goes
// anywhere but its end, which marks it gone. bind() hands its events, and its control records, to
// the plugin that takes it.
//
// Thread: the host's, as its ProcessProgram's.

#include <boost/asio/any_io_executor.hpp>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "base/lifeline.hpp"
#include "base/result.hpp"
#include "runtime/process_program.hpp"
#include "sandbox/status_page.hpp"
#include "sandbox/wire.hpp"

namespace escouade::sandbox {

// What the helper says on its control pipe, as it comes.
struct ControlEvents {
  std::function<void()> ready;                     // its module compiled or decoded
  std::function<void(const wire::Ended&)> ended;   // how it ended, in its words
  std::function<void(std::size_t)> input_full;     // bytes it held, reading ahead
  std::function<void(std::size_t)> input_drained;  // notifications it dropped meanwhile
  std::function<void(std::string)> stencil;        // a compile helper's result
  std::function<void()> stale_stencil;             // the stencil it got did not decode
  std::function<void(std::string_view)> broken;    // it wrote what is no record of ours
};

class HelperProcess {
 public:
  // A control record longer than this is no helper's: a stencil of the largest bundle fits.
  static constexpr std::size_t kMaxControlRecordBytes = 128u * 1024u * 1024u;

  // Starts `helper` (escouade-sandbox, absolute), its environment empty, in "/", its instance's
  // local time in `time_zone` (an IANA name, given as its arguments `--time-zone NAME`).
  static Result<std::unique_ptr<HelperProcess>> start(boost::asio::any_io_executor executor,
                                                      runtime::ProcessContext& context,
                                                      const std::filesystem::path& helper,
                                                      const std::string& time_zone = "UTC");
  ~HelperProcess();
  HelperProcess(const HelperProcess&) = delete;
  HelperProcess& operator=(const HelperProcess&) = delete;

  // From now on its events and control records go to these. Its `exited` comes once every
  // record it wrote was delivered.
  void bind(runtime::ProgramEvents events, ControlEvents control);
  // Whether it ended (before or after bind).
  bool ended() const noexcept;

  runtime::ProcessProgram& process() { return *process_; }
  const StatusPage& status() const { return *page_; }

  struct Shared;

 private:
  HelperProcess() = default;

  Lifeline lifeline_;
  std::shared_ptr<Shared> shared_;
  std::unique_ptr<runtime::ProcessProgram> process_;
  StatusPage* page_ = nullptr;
};

}  // namespace escouade::sandbox
