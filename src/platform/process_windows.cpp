// The process layer on Windows: CreateProcessW in a job object. The whole of process.hpp,
// process_tree.hpp and reaper.hpp for that system, in one file, since the job ties them together.
//
// UNTESTED HERE: Linux is the tested target and this file is compiled only on Windows. Written
// from the Win32 documentation of CreateProcessW, STARTUPINFOEXW with
// PROC_THREAD_ATTRIBUTE_HANDLE_LIST, job objects (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
// JobObjectBasicProcessIdList, TerminateJobObject), CreateNamedPipeW and GetProcessMemoryInfo.
//
// How the design maps:
// - Every plugin process runs in a job created for it, with KILL_ON_JOB_CLOSE: its descendants
//   are in the job too (none may break away), so kill_tree is TerminateJobObject, race-free, and
//   when the host dies, even killed, the system closes the job's last handle and ends the tree.
//   The Reaper has nothing to do and stays inactive; there are no orphans to adopt.
// - Spawned's descriptors are C runtime descriptors (_open_osfhandle) over the host's ends of
//   named pipes opened with FILE_FLAG_OVERLAPPED, the kind asio's stream handles need;
//   _get_osfhandle gives the HANDLE back. Windows has no O_NONBLOCK: overlapped I/O is its
//   equivalent. pidfd is -1.
// - ExitStatus always has a code (the process's exit code); kill_tree ends the job with
//   kKilledExitCode. Windows has no process groups: pgid is the leader's pid, and kill_group
//   refuses (the protocol's shutdown message is the polite stop).
// - The program is never run through cmd.exe: argv[0] is resolved here (PATH and the .exe and
//   .com extensions; never .bat or .cmd, which CreateProcess would hand to cmd.exe), and the
//   command line is quoted so that CommandLineToArgvW gives argv back.

#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
// windows.h first
#include <fcntl.h>
#include <io.h>
#include <psapi.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <cwchar>
#include <map>
#include <mutex>
#include <string>
#include <system_error>
#include <utility>

#include "platform/process.hpp"
#include "platform/process_tree.hpp"
#include "platform/reaper.hpp"

namespace escouade::platform {
namespace {

// The exit code of a process ended by kill_tree (STATUS_CONTROL_C_EXIT's low bits are used by
// consoles; 1 is what TerminateProcess callers commonly use).
constexpr UINT kKilledExitCode = 1;

std::string win_message(DWORD error) {
  return std::system_category().message(static_cast<int>(error));
}

Error cannot_start(const std::string& program, const std::string& why) {
  return make_error(kOsError, "cannot start " + program + ": " + why);
}

std::wstring widen(std::string_view utf8) {
  if (utf8.empty()) return {};
  const int n =
      ::MultiByteToWideChar(CP_UTF8, 0, utf8.data(), static_cast<int>(utf8.size()), nullptr, 0);
  std::wstring out(static_cast<std::size_t>(n), L'\0');
  ::MultiByteToWideChar(CP_UTF8, 0, utf8.data(), static_cast<int>(utf8.size()), out.data(), n);
  return out;
}

// One argument as CommandLineToArgvW reads it back: quotes around it when needed, backslashes
// doubled only before a quote.
void append_quoted(std::wstring& line, const std::wstring& arg) {
  if (!arg.empty() && arg.find_first_of(L" \t\n\v\"") == std::wstring::npos) {
    line += arg;
    return;
  }
  line += L'"';
  for (auto it = arg.begin();; ++it) {
    std::size_t backslashes = 0;
    while (it != arg.end() && *it == L'\\') {
      ++it;
      ++backslashes;
    }
    if (it == arg.end()) {
      line.append(backslashes * 2, L'\\');
      break;
    }
    if (*it == L'"') {
      line.append(backslashes * 2 + 1, L'\\');
    } else {
      line.append(backslashes, L'\\');
    }
    line += *it;
  }
  line += L'"';
}

bool is_file(const std::wstring& path) {
  const DWORD attributes = ::GetFileAttributesW(path.c_str());
  return attributes != INVALID_FILE_ATTRIBUTES && !(attributes & FILE_ATTRIBUTE_DIRECTORY);
}

bool has_extension(const std::wstring& name) {
  const std::size_t dot = name.find_last_of(L'.');
  const std::size_t slash = name.find_last_of(L"\\/");
  return dot != std::wstring::npos && (slash == std::wstring::npos || dot > slash);
}

// The file to run for argv[0]: with a separator, relative to the working folder; otherwise in
// PATH (the request's, else the host's). The .exe and .com extensions are tried when it has
// none. Empty when none exists.
std::wstring resolve_program(const std::wstring& program, const std::wstring& folder,
                             const std::wstring& path) {
  const auto with_extensions = [](const std::wstring& base) -> std::wstring {
    if (has_extension(base)) return is_file(base) ? base : std::wstring();
    for (const wchar_t* ext : {L".exe", L".com"}) {
      if (is_file(base + ext)) return base + ext;
    }
    return {};
  };
  if (program.find_first_of(L"\\/:") != std::wstring::npos) {
    const bool absolute = program.size() > 1 && (program[1] == L':' || program[0] == L'\\');
    return with_extensions(absolute || folder.empty() ? program : folder + L"\\" + program);
  }
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find(L';', start), path.size());
    std::wstring dir = path.substr(start, end - start);
    if (!dir.empty()) {
      if (dir.back() != L'\\' && dir.back() != L'/') dir += L'\\';
      if (std::wstring found = with_extensions(dir + program); !found.empty()) return found;
    }
    start = end + 1;
  }
  return {};
}

// The processes started here: their handle and their job, by pid.
struct Child {
  HANDLE process = nullptr;
  HANDLE job = nullptr;
};
std::mutex children_mutex;
std::map<int, Child> children;

Child find_child(int pid) {
  std::lock_guard lock(children_mutex);
  const auto it = children.find(pid);
  return it == children.end() ? Child{} : it->second;
}

// Closes what the host held for a reaped child. Closing the job ends whatever the leader left
// running in it (KILL_ON_JOB_CLOSE), as adopted orphans are ended on Linux.
void forget_child(int pid) {
  std::lock_guard lock(children_mutex);
  const auto it = children.find(pid);
  if (it == children.end()) return;
  ::CloseHandle(it->second.process);
  ::CloseHandle(it->second.job);
  children.erase(it);
}

struct Handle {
  HANDLE h = INVALID_HANDLE_VALUE;
  Handle() = default;
  explicit Handle(HANDLE value) : h(value) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }
  void reset() {
    if (h != INVALID_HANDLE_VALUE && h != nullptr) ::CloseHandle(h);
    h = INVALID_HANDLE_VALUE;
  }
  HANDLE release() { return std::exchange(h, INVALID_HANDLE_VALUE); }
  bool ok() const { return h != INVALID_HANDLE_VALUE && h != nullptr; }
};

// A pipe whose host end is overlapped and not inherited, and whose child end is inheritable.
// `host_reads`: the host reads (the child's stdout or stderr), else it writes (stdin).
bool make_pipe(bool host_reads, Handle& host_end, Handle& child_end) {
  static std::atomic<unsigned> serial{0};
  const std::wstring name = L"\\\\.\\pipe\\escouade-" + std::to_wstring(::GetCurrentProcessId()) +
                            L"-" + std::to_wstring(serial++);
  const DWORD open_mode = (host_reads ? PIPE_ACCESS_INBOUND : PIPE_ACCESS_OUTBOUND) |
                          FILE_FLAG_OVERLAPPED | FILE_FLAG_FIRST_PIPE_INSTANCE;
  host_end.h = ::CreateNamedPipeW(name.c_str(), open_mode,
                                  PIPE_TYPE_BYTE | PIPE_WAIT | PIPE_REJECT_REMOTE_CLIENTS, 1, 65536,
                                  65536, 0, nullptr);
  if (!host_end.ok()) return false;
  SECURITY_ATTRIBUTES inherit{sizeof(SECURITY_ATTRIBUTES), nullptr, TRUE};
  child_end.h = ::CreateFileW(name.c_str(), host_reads ? GENERIC_WRITE : GENERIC_READ, 0, &inherit,
                              OPEN_EXISTING, 0, nullptr);
  return child_end.ok();
}

int to_crt_fd(Handle& h, int flags) {
  const int fd = ::_open_osfhandle(reinterpret_cast<intptr_t>(h.h), flags | _O_BINARY);
  if (fd >= 0) h.release();  // the descriptor owns the handle now
  return fd;
}

}  // namespace

Result<Spawned> spawn(const SpawnRequest& request) {
  if (request.argv.empty() || request.argv.front().empty()) {
    return make_error(kOsError, "cannot start a program: the command is empty");
  }
  const std::string& program = request.argv.front();

  const std::wstring folder = request.cwd.empty() ? std::wstring() : request.cwd.wstring();
  if (!folder.empty()) {
    const DWORD attributes = ::GetFileAttributesW(folder.c_str());
    if (attributes == INVALID_FILE_ATTRIBUTES || !(attributes & FILE_ATTRIBUTE_DIRECTORY)) {
      return cannot_start(program, "cannot enter its folder " + request.cwd.string() + ": " +
                                       win_message(ERROR_DIRECTORY));
    }
  }
  std::wstring path;
  bool path_given = false;
  for (const std::string& entry : request.env) {
    if (entry.size() >= 5 && _strnicmp(entry.c_str(), "PATH=", 5) == 0) {
      path = widen(std::string_view(entry).substr(5));
      path_given = true;
      break;
    }
  }
  if (!path_given) {
    const DWORD n = ::GetEnvironmentVariableW(L"PATH", nullptr, 0);
    if (n > 0) {
      path.resize(n);
      path.resize(::GetEnvironmentVariableW(L"PATH", path.data(), n));
    }
  }
  const std::wstring executable = request.executable.empty()
                                      ? resolve_program(widen(program), folder, path)
                                      : widen(request.executable.string());
  if (executable.empty()) return cannot_start(program, win_message(ERROR_FILE_NOT_FOUND));
  const std::wstring extension = executable.substr(executable.find_last_of(L'.'));
  if (_wcsicmp(extension.c_str(), L".exe") != 0 && _wcsicmp(extension.c_str(), L".com") != 0) {
    // .bat and .cmd would run in cmd.exe: a shell.
    return cannot_start(program, win_message(ERROR_BAD_EXE_FORMAT));
  }

  std::wstring command_line;
  for (const std::string& arg : request.argv) {
    if (!command_line.empty()) command_line += L' ';
    append_quoted(command_line, widen(arg));
  }
  // "K=V\0K=V\0\0". An empty environment still needs its two NULs.
  std::wstring environment;
  for (const std::string& entry : request.env) {
    environment += widen(entry);
    environment += L'\0';
  }
  if (environment.empty()) environment += L'\0';
  environment += L'\0';

  Handle stdin_host, stdin_child, stdout_host, stdout_child, stderr_host, stderr_child;
  if (!make_pipe(false, stdin_host, stdin_child) || !make_pipe(true, stdout_host, stdout_child) ||
      !make_pipe(true, stderr_host, stderr_child)) {
    return cannot_start(program, "pipe: " + win_message(::GetLastError()));
  }

  // Only the three child ends are inherited, whatever else the host has made inheritable.
  HANDLE inherited[3] = {stdin_child.h, stdout_child.h, stderr_child.h};
  SIZE_T attribute_size = 0;
  ::InitializeProcThreadAttributeList(nullptr, 1, 0, &attribute_size);
  std::string attribute_storage(attribute_size, '\0');
  auto* attributes = reinterpret_cast<LPPROC_THREAD_ATTRIBUTE_LIST>(attribute_storage.data());
  if (!::InitializeProcThreadAttributeList(attributes, 1, 0, &attribute_size) ||
      !::UpdateProcThreadAttribute(attributes, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, inherited,
                                   sizeof inherited, nullptr, nullptr)) {
    return cannot_start(program, win_message(::GetLastError()));
  }
  struct AttributeListGuard {
    LPPROC_THREAD_ATTRIBUTE_LIST list;
    ~AttributeListGuard() { ::DeleteProcThreadAttributeList(list); }
  } attribute_guard{attributes};

  STARTUPINFOEXW startup{};
  startup.StartupInfo.cb = sizeof startup;
  startup.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
  startup.StartupInfo.hStdInput = stdin_child.h;
  startup.StartupInfo.hStdOutput = stdout_child.h;
  startup.StartupInfo.hStdError = stderr_child.h;
  startup.lpAttributeList = attributes;

  Handle job(::CreateJobObjectW(nullptr, nullptr));
  if (!job.ok()) return cannot_start(program, "job: " + win_message(::GetLastError()));
  JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits{};
  limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
  if (!::SetInformationJobObject(job.h, JobObjectExtendedLimitInformation, &limits,
                                 sizeof limits)) {
    return cannot_start(program, "job: " + win_message(::GetLastError()));
  }

  // Suspended until it is in the job, so that nothing it starts can be born outside it.
  PROCESS_INFORMATION info{};
  const DWORD flags = CREATE_UNICODE_ENVIRONMENT | CREATE_SUSPENDED | CREATE_NEW_PROCESS_GROUP |
                      CREATE_NO_WINDOW | EXTENDED_STARTUPINFO_PRESENT;
  if (!::CreateProcessW(executable.c_str(), command_line.data(), nullptr, nullptr, TRUE, flags,
                        environment.data(), folder.empty() ? nullptr : folder.c_str(),
                        &startup.StartupInfo, &info)) {
    return cannot_start(program, win_message(::GetLastError()));
  }
  Handle process(info.hProcess);
  Handle thread(info.hThread);
  if (!::AssignProcessToJobObject(job.h, process.h)) {
    const DWORD error = ::GetLastError();
    ::TerminateProcess(process.h, kKilledExitCode);
    return cannot_start(program, "job: " + win_message(error));
  }
  ::ResumeThread(thread.h);

  stdin_child.reset();
  stdout_child.reset();
  stderr_child.reset();
  Spawned s;
  s.pid = static_cast<int>(info.dwProcessId);
  s.stdin_fd = to_crt_fd(stdin_host, _O_WRONLY | _O_NOINHERIT);
  s.stdout_fd = to_crt_fd(stdout_host, _O_RDONLY | _O_NOINHERIT);
  s.stderr_fd = to_crt_fd(stderr_host, _O_RDONLY | _O_NOINHERIT);
  s.pidfd = -1;
  {
    std::lock_guard lock(children_mutex);
    children[s.pid] = Child{process.release(), job.release()};
  }
  return s;
}

void close_fds(Spawned& s) {
  for (int* fd : {&s.stdin_fd, &s.stdout_fd, &s.stderr_fd}) {
    if (*fd >= 0) ::_close(*fd);
    *fd = -1;
  }
  s.pidfd = -1;
}

namespace {

std::optional<ExitStatus> wait_for(int pid, DWORD timeout_ms) {
  const Child child = find_child(pid);
  if (child.process == nullptr) return std::nullopt;
  if (::WaitForSingleObject(child.process, timeout_ms) != WAIT_OBJECT_0) return std::nullopt;
  DWORD code = 0;
  ::GetExitCodeProcess(child.process, &code);
  forget_child(pid);
  return ExitStatus{static_cast<int>(code), std::nullopt};
}

std::vector<int> job_pids(HANDLE job) {
  // The list's size is not known in advance: grow it until it holds them all.
  for (DWORD capacity = 64; capacity <= 65536; capacity *= 4) {
    std::string storage(sizeof(JOBOBJECT_BASIC_PROCESS_ID_LIST) + capacity * sizeof(ULONG_PTR),
                        '\0');
    auto* list = reinterpret_cast<JOBOBJECT_BASIC_PROCESS_ID_LIST*>(storage.data());
    if (::QueryInformationJobObject(job, JobObjectBasicProcessIdList, list,
                                    static_cast<DWORD>(storage.size()), nullptr) ||
        ::GetLastError() == ERROR_MORE_DATA) {
      if (list->NumberOfAssignedProcesses > list->NumberOfProcessIdsInList) continue;
      std::vector<int> pids;
      for (DWORD i = 0; i < list->NumberOfProcessIdsInList; ++i) {
        pids.push_back(static_cast<int>(list->ProcessIdList[i]));
      }
      return pids;
    }
    return {};
  }
  return {};
}

}  // namespace

std::optional<ExitStatus> wait_exit(const Spawned& s) {
  return wait_for(s.pid, INFINITE);
}

std::optional<ExitStatus> try_wait(int pid) {
  return wait_for(pid, 0);
}

Result<void> become_subreaper() {
  return make_error(kOsError, "Windows has no child subreaper: job objects hold the trees");
}

bool is_subreaper() {
  return false;
}

std::vector<int> process_tree(int leader) {
  const Child child = find_child(leader);
  if (child.job == nullptr) return {};
  std::vector<int> pids = job_pids(child.job);
  // The leader first, as on the other systems, when it still runs.
  std::vector<int> out;
  for (int pid : pids) {
    if (pid == leader) out.push_back(pid);
  }
  for (int pid : pids) {
    if (pid != leader) out.push_back(pid);
  }
  return out;
}

std::uint64_t tree_resident_bytes(int leader) {
  std::uint64_t total = 0;
  for (int pid : process_tree(leader)) {
    HANDLE process =
        ::OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, static_cast<DWORD>(pid));
    if (process == nullptr) continue;
    PROCESS_MEMORY_COUNTERS counters{};
    if (::GetProcessMemoryInfo(process, &counters, sizeof counters)) {
      total += counters.WorkingSetSize;
    }
    ::CloseHandle(process);
  }
  return total;
}

void kill_tree(int leader) {
  const Child child = find_child(leader);
  if (child.job != nullptr) ::TerminateJobObject(child.job, kKilledExitCode);
}

void kill_trees(const std::vector<int>& leaders) {
  for (int leader : leaders)
    kill_tree(leader);
}

bool kill_group(int, int) {
  return false;
}

std::vector<int> adopted_orphans_of(std::string_view, const std::set<int>&) {
  return {};
}

std::vector<int> reap_adopted(const std::set<int>&) {
  return {};
}

// The Reaper stays inactive on Windows: KILL_ON_JOB_CLOSE does its work.
Reaper::Reaper(Reaper&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      fd_(std::exchange(other.fd_, -1)),
      registered_(std::move(other.registered_)) {}

Reaper& Reaper::operator=(Reaper&& other) noexcept {
  if (this != &other) {
    pid_ = std::exchange(other.pid_, -1);
    fd_ = std::exchange(other.fd_, -1);
    registered_ = std::move(other.registered_);
  }
  return *this;
}

Reaper::~Reaper() = default;

Result<void> Reaper::send_line(const char*, int, std::span<const int>) {
  return {};
}

Result<void> Reaper::add(int, std::span<const int>) {
  return {};
}

Result<void> Reaper::remove(int) {
  return {};
}

std::optional<ExitStatus> Reaper::close() {
  return std::nullopt;
}

Result<Reaper> start_reaper() {
  return Reaper();
}

// Windows has no SIGPIPE: a write to a closed pipe is an error of that write.
void ignore_default_sigpipe() {}

}  // namespace escouade::platform
