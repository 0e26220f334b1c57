#include "policy/commands.hpp"

#include <algorithm>
#include <array>
#include <set>

#include "base/quote.hpp"

namespace escouade::policy {

namespace {

bool grants(const manifest::CommandGrant& grant, std::string_view command,
            const std::vector<std::string>& args) {
  const std::size_t asked = 1 + args.size();
  if (grant.words.empty()) return false;
  if (grant.any_arguments ? asked < grant.words.size() : asked != grant.words.size()) return false;
  if (grant.words.front() != command) return false;
  return std::equal(grant.words.begin() + 1, grant.words.end(), args.begin());
}

// Whether a word is written as a JSON string in what was asked: it would otherwise be missed
// (empty) or read as more than one word.
bool needs_quotes(std::string_view word) {
  if (word.empty()) return true;
  return std::any_of(word.begin(), word.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u <= 0x20 || u == 0x7F || c == '"' || c == '\\';
  });
}

void append_word(std::string& out, std::string_view word) {
  if (!out.empty()) out += ' ';
  if (needs_quotes(word))
    out += quote_name(word);
  else
    out += word;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return out;
}

// A name, or a family when it ends with '*', and why a plugin may not set it (commands.hpp).
struct EnvRule {
  std::string_view pattern;
  std::string_view reason;
};

constexpr std::string_view kEscouade = "ESCOUADE_* are Escouade's own variables, never a plugin's";
constexpr std::string_view kPath = "PATH is chosen by the agent, never by a plugin";
constexpr std::string_view kPathExt =
    "PATHEXT chooses which file a name runs, as PATH does: the agent's, never a plugin's";
constexpr std::string_view kLoader = "LD_* and DYLD_* load code into the program";
constexpr std::string_view kShellStart =
    "the shells' startup and prompt variables (BASH_ENV, ENV, SHELLOPTS, PS4, PROMPT_COMMAND, "
    "ZDOTDIR...) make a shell run code";
constexpr std::string_view kBashFunc = "BASH_FUNC_* (exported functions) replace commands in bash";
constexpr std::string_view kIfs = "IFS changes how a shell splits words";
constexpr std::string_view kShell = "SHELL names the program that others run commands with";
constexpr std::string_view kGitConfig =
    "GIT_CONFIG and GIT_CONFIG_* give git a configuration, which runs commands "
    "(core.fsmonitor, core.sshCommand)";
constexpr std::string_view kGitProgram =
    "GIT_SSH, GIT_EDITOR, GIT_PAGER and their like name programs that git runs";
constexpr std::string_view kGitRepo =
    "GIT_DIR, GIT_WORK_TREE and GIT_COMMON_DIR point git at a repository elsewhere, whose "
    "configuration runs commands";
constexpr std::string_view kGitOther =
    "GIT_* other than a few known harmless (GIT_AUTHOR_NAME, GIT_COMMITTER_EMAIL...) change what "
    "git reads, writes and runs";
constexpr std::string_view kPrograms =
    "EDITOR, PAGER, BROWSER, LESSOPEN, SSH_ASKPASS and their like name programs that programs "
    "run";
constexpr std::string_view kConfigHome =
    "HOME, XDG_CONFIG_* and their like say where configuration is read, and configuration runs "
    "commands (~/.gitconfig, ~/.npmrc)";
constexpr std::string_view kNode = "NODE_OPTIONS and NODE_PATH make node load code";
constexpr std::string_view kNpm =
    "NPM_CONFIG_* and YARN_* configure npm and yarn, which then run commands (script-shell, "
    "yarnPath)";
constexpr std::string_view kPython =
    "PYTHONSTARTUP, PYTHONPATH and their like make python load code";
constexpr std::string_view kPerlRuby =
    "PERL5OPT, PERL5LIB, RUBYOPT, RUBYLIB and their like make perl and ruby load code";
constexpr std::string_view kJvm =
    "JAVA_TOOL_OPTIONS, CLASSPATH and their like make the JVM load code";
constexpr std::string_view kLibc =
    "GCONV_PATH, GLIBC_TUNABLES and MALLOC_* load code into the C library or change how it runs";
constexpr std::string_view kOpenssl =
    "OPENSSL_CONF, OPENSSL_ENGINES and OPENSSL_MODULES make OpenSSL load code";
constexpr std::string_view kCompilers =
    "CC, CXX, CFLAGS and their like choose the compilers and linkers that builds run, and what "
    "they load";
constexpr std::string_view kMake = "MAKEFLAGS and MAKEFILES make make run other commands";
constexpr std::string_view kCmake =
    "CMAKE_* make cmake run scripts and launchers (CMAKE_TOOLCHAIN_FILE)";
constexpr std::string_view kRust =
    "RUSTC, RUSTC_WRAPPER, RUSTFLAGS, RUSTUP_* and CARGO_* name programs that cargo runs";
constexpr std::string_view kNetwork =
    "proxies and trusted certificates: with both, a plugin would read the program's connections";

constexpr std::array kEnvRules = {
    EnvRule{"ESCOUADE_*", kEscouade},
    EnvRule{"PATH", kPath},
    EnvRule{"PATHEXT", kPathExt},
    EnvRule{"LD_*", kLoader},
    EnvRule{"DYLD_*", kLoader},
    EnvRule{"BASH_ENV", kShellStart},
    EnvRule{"ENV", kShellStart},
    EnvRule{"SHELLOPTS", kShellStart},
    EnvRule{"BASHOPTS", kShellStart},
    EnvRule{"PS0", kShellStart},
    EnvRule{"PS1", kShellStart},
    EnvRule{"PS2", kShellStart},
    EnvRule{"PS4", kShellStart},
    EnvRule{"PROMPT_COMMAND", kShellStart},
    EnvRule{"ZDOTDIR", kShellStart},
    EnvRule{"FCEDIT", kShellStart},
    EnvRule{"BASH_FUNC_*", kBashFunc},
    EnvRule{"IFS", kIfs},
    EnvRule{"SHELL", kShell},
    EnvRule{"GIT_CONFIG", kGitConfig},
    EnvRule{"GIT_CONFIG_*", kGitConfig},
    EnvRule{"GIT_SSH", kGitProgram},
    EnvRule{"GIT_SSH_COMMAND", kGitProgram},
    EnvRule{"GIT_ASKPASS", kGitProgram},
    EnvRule{"GIT_EDITOR", kGitProgram},
    EnvRule{"GIT_SEQUENCE_EDITOR", kGitProgram},
    EnvRule{"GIT_PAGER", kGitProgram},
    EnvRule{"GIT_EXEC_PATH", kGitProgram},
    EnvRule{"GIT_TEMPLATE_DIR", kGitProgram},
    EnvRule{"GIT_PROXY_COMMAND", kGitProgram},
    EnvRule{"GIT_EXTERNAL_DIFF", kGitProgram},
    EnvRule{"GIT_DIR", kGitRepo},
    EnvRule{"GIT_WORK_TREE", kGitRepo},
    EnvRule{"GIT_COMMON_DIR", kGitRepo},
    EnvRule{"GIT_*", kGitOther},
    EnvRule{"EDITOR", kPrograms},
    EnvRule{"VISUAL", kPrograms},
    EnvRule{"PAGER", kPrograms},
    EnvRule{"MANPAGER", kPrograms},
    EnvRule{"BROWSER", kPrograms},
    EnvRule{"LESSOPEN", kPrograms},
    EnvRule{"LESSCLOSE", kPrograms},
    EnvRule{"SSH_ASKPASS", kPrograms},
    EnvRule{"SUDO_ASKPASS", kPrograms},
    EnvRule{"HOME", kConfigHome},
    EnvRule{"XDG_CONFIG_HOME", kConfigHome},
    EnvRule{"XDG_CONFIG_DIRS", kConfigHome},
    EnvRule{"USERPROFILE", kConfigHome},
    EnvRule{"APPDATA", kConfigHome},
    EnvRule{"LOCALAPPDATA", kConfigHome},
    EnvRule{"HOMEDRIVE", kConfigHome},
    EnvRule{"HOMEPATH", kConfigHome},
    EnvRule{"NODE_OPTIONS", kNode},
    EnvRule{"NODE_PATH", kNode},
    EnvRule{"NPM_CONFIG_*", kNpm},
    EnvRule{"YARN_*", kNpm},
    EnvRule{"PYTHONSTARTUP", kPython},
    EnvRule{"PYTHONPATH", kPython},
    EnvRule{"PYTHONHOME", kPython},
    EnvRule{"PYTHONUSERBASE", kPython},
    EnvRule{"PYTHONINSPECT", kPython},
    EnvRule{"PYTHONBREAKPOINT", kPython},
    EnvRule{"PYTHONPYCACHEPREFIX", kPython},
    EnvRule{"PERL5OPT", kPerlRuby},
    EnvRule{"PERL5LIB", kPerlRuby},
    EnvRule{"PERLLIB", kPerlRuby},
    EnvRule{"PERL5DB", kPerlRuby},
    EnvRule{"RUBYOPT", kPerlRuby},
    EnvRule{"RUBYLIB", kPerlRuby},
    EnvRule{"GEM_HOME", kPerlRuby},
    EnvRule{"GEM_PATH", kPerlRuby},
    EnvRule{"BUNDLE_GEMFILE", kPerlRuby},
    EnvRule{"JAVA_TOOL_OPTIONS", kJvm},
    EnvRule{"_JAVA_OPTIONS", kJvm},
    EnvRule{"JDK_JAVA_OPTIONS", kJvm},
    EnvRule{"JAVA_OPTS", kJvm},
    EnvRule{"MAVEN_OPTS", kJvm},
    EnvRule{"GRADLE_OPTS", kJvm},
    EnvRule{"CLASSPATH", kJvm},
    EnvRule{"GCONV_PATH", kLibc},
    EnvRule{"GLIBC_TUNABLES", kLibc},
    EnvRule{"MALLOC_*", kLibc},
    EnvRule{"OPENSSL_CONF", kOpenssl},
    EnvRule{"OPENSSL_ENGINES", kOpenssl},
    EnvRule{"OPENSSL_MODULES", kOpenssl},
    EnvRule{"CC", kCompilers},
    EnvRule{"CXX", kCompilers},
    EnvRule{"CPP", kCompilers},
    EnvRule{"LD", kCompilers},
    EnvRule{"AR", kCompilers},
    EnvRule{"AS", kCompilers},
    EnvRule{"CFLAGS", kCompilers},
    EnvRule{"CXXFLAGS", kCompilers},
    EnvRule{"CPPFLAGS", kCompilers},
    EnvRule{"LDFLAGS", kCompilers},
    EnvRule{"MAKEFLAGS", kMake},
    EnvRule{"MFLAGS", kMake},
    EnvRule{"GNUMAKEFLAGS", kMake},
    EnvRule{"MAKEFILES", kMake},
    EnvRule{"CMAKE_*", kCmake},
    EnvRule{"RUSTC", kRust},
    EnvRule{"RUSTC_WRAPPER", kRust},
    EnvRule{"RUSTC_WORKSPACE_WRAPPER", kRust},
    EnvRule{"RUSTDOC", kRust},
    EnvRule{"RUSTFLAGS", kRust},
    EnvRule{"RUSTDOCFLAGS", kRust},
    EnvRule{"RUSTUP_*", kRust},
    EnvRule{"CARGO_*", kRust},
    EnvRule{"HTTP_PROXY", kNetwork},
    EnvRule{"HTTPS_PROXY", kNetwork},
    EnvRule{"ALL_PROXY", kNetwork},
    EnvRule{"FTP_PROXY", kNetwork},
    EnvRule{"NO_PROXY", kNetwork},
    EnvRule{"SSL_CERT_FILE", kNetwork},
    EnvRule{"SSL_CERT_DIR", kNetwork},
    EnvRule{"CURL_CA_BUNDLE", kNetwork},
    EnvRule{"REQUESTS_CA_BUNDLE", kNetwork},
    EnvRule{"NODE_EXTRA_CA_CERTS", kNetwork},
    EnvRule{"NODE_TLS_REJECT_UNAUTHORIZED", kNetwork},
    EnvRule{"PYTHONHTTPSVERIFY", kNetwork},
};

// The GIT_* a plugin may set: who a commit is by, and switches that neither read nor write
// elsewhere nor run anything.
constexpr std::array<std::string_view, 16> kHarmlessGit = {
    "GIT_AUTHOR_NAME",      "GIT_AUTHOR_EMAIL",    "GIT_AUTHOR_DATE",       "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",  "GIT_COMMITTER_DATE",  "GIT_TERMINAL_PROMPT",   "GIT_MERGE_AUTOEDIT",
    "GIT_OPTIONAL_LOCKS",   "GIT_FLUSH",           "GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS",
    "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS", "GIT_REFLOG_ACTION",     "GIT_PROGRESS_DELAY",
};

bool matches(std::string_view pattern, std::string_view upper_name) {
  if (!pattern.empty() && pattern.back() == '*') {
    return upper_name.substr(0, pattern.size() - 1) == pattern.substr(0, pattern.size() - 1);
  }
  return upper_name == pattern;
}

bool is_escouade_variable(std::string_view name) {
  return upper(name.substr(0, 9)) == "ESCOUADE_";
}

}  // namespace

Commands::Commands(const std::vector<manifest::CommandGrant>& grants) : grants_(grants) {}

std::optional<std::string> Commands::refusal(std::string_view command,
                                             const std::vector<std::string>& args) const {
  for (const auto& grant : grants_) {
    if (grants(grant, command, args)) return std::nullopt;
  }
  std::string asked;
  append_word(asked, command);
  for (const auto& arg : args)
    append_word(asked, arg);
  std::string reason =
      quote_name(asked, kMaxQuotedCommandBytes) + " is not one of its permissions.commands";
  if (grants_.empty()) return reason + ", which names none";
  reason += " (";
  for (std::size_t i = 0; i < grants_.size(); ++i) {
    if (i > 0) reason += ", ";
    reason += quote_name(grants_[i].text);
  }
  return reason + ")";
}

std::optional<std::string> program_name_refusal(std::string_view name) {
  if (name.empty()) return "an empty program name";
  if (name.find('\0') != std::string_view::npos) return "a NUL character in the program's name";
  if (name.find_first_of("/\\") != std::string_view::npos) {
    return "a path, not a name: the program is found on the PATH";
  }
  if (name.find(':') != std::string_view::npos) {
    return "a ':' in the program's name (C:git is a path on Windows; ':' separates PATH's "
           "folders)";
  }
  if (name == "." || name == "..") return "a folder, not a program's name";
  if (name.front() == '-') return "a program's name beginning with '-' (it reads as an option)";
  if (name.size() > 255) return "a program's name longer than 255 bytes";
  return std::nullopt;
}

std::vector<std::string> search_folders(std::string_view path_value) {
  std::vector<std::string> folders;
  std::size_t start = 0;
  while (start <= path_value.size()) {
    std::size_t end = path_value.find(':', start);
    if (end == std::string_view::npos) end = path_value.size();
    const std::string_view folder = path_value.substr(start, end - start);
    if (!folder.empty() && folder.front() == '/' &&
        std::find(folders.begin(), folders.end(), folder) == folders.end()) {
      folders.emplace_back(folder);
    }
    start = end + 1;
  }
  return folders;
}

std::optional<std::string> env_entry_form_problem(std::string_view name, std::string_view value) {
  if (name.empty()) return "an empty variable name";
  if (name.find('=') != std::string_view::npos) return "a '=' in a variable's name";
  if (name.find('\0') != std::string_view::npos) return "a NUL character in a variable's name";
  if (value.find('\0') != std::string_view::npos) return "a NUL character in a variable's value";
  return std::nullopt;
}

std::optional<std::string> env_refusal(std::string_view name) {
  const std::string upper_name = upper(name);
  if (std::find(kHarmlessGit.begin(), kHarmlessGit.end(), upper_name) != kHarmlessGit.end()) {
    return std::nullopt;
  }
  for (const EnvRule& rule : kEnvRules) {
    if (matches(rule.pattern, upper_name)) return std::string(rule.reason);
  }
  return std::nullopt;
}

std::vector<std::string> program_environment(
    const std::vector<std::string>& agent_env,
    const std::map<std::string, std::string, std::less<>>& extra) {
  std::vector<std::string> out;
  std::set<std::string_view> seen;
  for (const std::string& entry : agent_env) {
    const std::size_t equals = entry.find('=');
    if (equals == std::string::npos) continue;
    const std::string_view name = std::string_view(entry).substr(0, equals);
    if (is_escouade_variable(name)) continue;
    if (!seen.insert(name).second) continue;
    if (const auto over = extra.find(name); over != extra.end()) {
      out.push_back(std::string(name) + "=" + over->second);
    } else {
      out.push_back(entry);
    }
  }
  for (const auto& [name, value] : extra) {
    if (seen.count(name) == 0) out.push_back(name + "=" + value);
  }
  return out;
}

}  // namespace escouade::policy
