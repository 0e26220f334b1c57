#pragma once

// What proc/spawn may run and with which environment (permissions.commands), judged on the
// request's text: no file is looked at and no program is found here. Deny by default: Commands
// made from nothing allows nothing.

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "manifest/manifest.hpp"

namespace escouade::policy {

// The most of what was asked that a refusal quotes, in bytes: an argument may be long, a
// journal line should not be.
inline constexpr std::size_t kMaxQuotedCommandBytes = 512;

// The entries of one plugin's permissions.commands, made once from its manifest.
//
// Immutable once made: shared by the handlers of the plugin's sessions, on any thread.
class Commands {
 public:
  // Allows nothing.
  Commands() = default;
  explicit Commands(const std::vector<manifest::CommandGrant>& grants);

  // nullopt when `command` followed by `args` equals an entry word for word, byte for byte
  // (more arguments, zero or more, only after an entry ending in " *"); else the reason, quoting
  // what was asked and the entries:
  //   "git log -p" is not one of its permissions.commands ("git status", "git log *")
  // A word that is empty or holds a space, a quote, a backslash or a control character is
  // written as a JSON string inside what was asked (git commit -m "a b"), so that "a b" is not
  // read as two words; the whole is then quoted as quote_name() does, cut past
  // kMaxQuotedCommandBytes. `command` is one word: "git status" matches no entry.
  std::optional<std::string> refusal(std::string_view command,
                                     const std::vector<std::string>& args) const;

 private:
  std::vector<manifest::CommandGrant> grants_;
};

// Why `name` is not a program's name, or nullopt. proc/spawn runs a bare name found on the
// PATH (search_folders), never a path. Refused, in this order: an empty name; a NUL (it would
// cut the name short); a '/' or a '\\' (a path: /usr/bin/git, ./git, bin/git); a ':' (C:git is
// a path on Windows, and no PATH lookup finds a name holding the PATH separator); "." and ".."
// (folders); a name beginning with '-' (a launcher or a shell would read it as an option, and
// no program of an entry needs one); a name over 255 bytes (no file has one). The caller
// answers refused (-32003): the name is of the params' form but not one that may run.
std::optional<std::string> program_name_refusal(std::string_view name);

// The folders of a PATH value (':' between them) to search, in order: only absolute ones (a
// leading '/'); empty and relative entries are dropped (they would mean the working folder,
// where a plugin may write); a folder already listed is not listed again.
std::vector<std::string> search_folders(std::string_view path_value);

// proc/spawn's env, one entry: why it cannot be a variable at all, or nullopt. The caller
// answers invalidParams (-32602) for these, before env_refusal: an empty name, a name holding
// '=' (it would end the name), a NUL in the name or the value (it would cut them short).
std::optional<std::string> env_entry_form_problem(std::string_view name, std::string_view value);

// proc/spawn's env: why a plugin may not set `name` (refused, -32003), or nullopt. The name is
// matched without regard to ASCII case (Windows' Path is PATH; npm reads npm_config_*). Each
// family, with its reason:
//   - ESCOUADE_*: Escouade's own variables (the spec);
//   - PATH, PATHEXT: which program a name runs; the agent's, never a plugin's (the spec);
//   - LD_*, DYLD_*: load code into the program (the spec);
//   - the shells' startup and prompts: BASH_ENV, ENV, SHELLOPTS, BASHOPTS, PS0, PS1, PS2, PS4,
//     PROMPT_COMMAND, ZDOTDIR, FCEDIT run code in a shell the program starts; BASH_FUNC_*
//     (exported functions) replace commands inside bash; IFS changes how a shell splits words;
//     SHELL is the program many others run commands with (make, npm, editors);
//   - git: GIT_CONFIG and GIT_CONFIG_* (COUNT, KEY_n, VALUE_n, GLOBAL, SYSTEM, PARAMETERS) give
//     git a configuration, which runs commands (core.fsmonitor, core.sshCommand, aliases);
//     GIT_SSH, GIT_SSH_COMMAND, GIT_ASKPASS, GIT_EDITOR, GIT_SEQUENCE_EDITOR, GIT_PAGER,
//     GIT_EXEC_PATH, GIT_TEMPLATE_DIR (hooks), GIT_PROXY_COMMAND, GIT_EXTERNAL_DIFF name
//     programs git runs; GIT_DIR, GIT_WORK_TREE, GIT_COMMON_DIR point git at a repository
//     elsewhere, whose configuration runs commands; and every other GIT_* but a short list
//     known harmless (the author's and committer's name, email and date, GIT_TERMINAL_PROMPT,
//     GIT_MERGE_AUTOEDIT, GIT_OPTIONAL_LOCKS, GIT_FLUSH, GIT_*_PATHSPECS, GIT_REFLOG_ACTION,
//     GIT_PROGRESS_DELAY): git reads many more (GIT_TRACE* write to a file they name,
//     GIT_INDEX_FILE and GIT_OBJECT_DIRECTORY read and write elsewhere, GIT_SSL_* turn TLS
//     checks off) and new ones come with each release, so the rest is refused;
//   - programs that programs run: EDITOR, VISUAL, PAGER, MANPAGER, BROWSER, LESSOPEN,
//     LESSCLOSE, SSH_ASKPASS, SUDO_ASKPASS;
//   - where configuration is read: HOME, XDG_CONFIG_HOME, XDG_CONFIG_DIRS and Windows'
//     USERPROFILE, APPDATA, LOCALAPPDATA, HOMEDRIVE, HOMEPATH (~/.gitconfig, ~/.npmrc,
//     ~/.bashrc run commands);
//   - node and its package managers: NODE_OPTIONS (--require), NODE_PATH load code;
//     NPM_CONFIG_* (script-shell, node-options) and YARN_* (yarnPath, plugins) are their
//     configuration, which runs commands;
//   - python: PYTHONSTARTUP, PYTHONPATH, PYTHONHOME, PYTHONUSERBASE, PYTHONINSPECT,
//     PYTHONBREAKPOINT, PYTHONPYCACHEPREFIX (compiled code read from elsewhere) load code;
//   - perl and ruby: PERL5OPT, PERL5LIB, PERLLIB, PERL5DB, RUBYOPT, RUBYLIB, GEM_HOME, GEM_PATH,
//     BUNDLE_GEMFILE (a Gemfile is Ruby) load code;
//   - the JVM: JAVA_TOOL_OPTIONS, _JAVA_OPTIONS, JDK_JAVA_OPTIONS, JAVA_OPTS, MAVEN_OPTS,
//     GRADLE_OPTS (-javaagent), CLASSPATH load code;
//   - the C library and OpenSSL: GCONV_PATH (a charset module), GLIBC_TUNABLES and MALLOC_*
//     (the allocator's settings, the tunables' parser once overflowed: CVE-2023-4911),
//     OPENSSL_CONF, OPENSSL_ENGINES, OPENSSL_MODULES (engines and providers) load code or
//     change how it runs;
//   - builds: CC, CXX, CPP, LD, AR, AS name the compilers and linkers that make, cmake, cargo,
//     node-gyp and pip run; CFLAGS, CXXFLAGS, CPPFLAGS, LDFLAGS (-fplugin, -B) make them load
//     or run other code; MAKEFLAGS, MFLAGS, GNUMAKEFLAGS (SHELL=...), MAKEFILES (a makefile
//     read first) make make run other commands; CMAKE_* (CMAKE_TOOLCHAIN_FILE,
//     CMAKE_<LANG>_COMPILER_LAUNCHER) make cmake run scripts and launchers; RUSTC,
//     RUSTC_WRAPPER, RUSTC_WORKSPACE_WRAPPER, RUSTDOC, RUSTFLAGS, RUSTDOCFLAGS, RUSTUP_*
//     (another toolchain) and CARGO_* (cargo's configuration: runners, linkers, wrappers,
//     CARGO_HOME) name programs cargo runs. A plugin that needs another compiler declares a
//     command that names it;
//   - the network path and what it trusts: HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, FTP_PROXY,
//     NO_PROXY and SSL_CERT_FILE, SSL_CERT_DIR, CURL_CA_BUNDLE, REQUESTS_CA_BUNDLE,
//     NODE_EXTRA_CA_CERTS, NODE_TLS_REJECT_UNAUTHORIZED, PYTHONHTTPSVERIFY: with a proxy of its
//     own and a certificate it trusts, a plugin would read the program's connections (an
//     agent's credentials among them).
// Any other name may be set (GIT_AUTHOR_NAME, LANG, TERM, CI, MY_VAR).
std::optional<std::string> env_refusal(std::string_view name);

// The program's environment: the agent's ("K=V"), in its order, without any ESCOUADE_*
// variable (any case), entries without '=' and later repeats of a name (getenv sees the first);
// each of `extra` set over it, replacing the agent's value in place, the others following in
// name order. Names are compared byte for byte. `extra` has passed env_entry_form_problem and
// env_refusal.
std::vector<std::string> program_environment(
    const std::vector<std::string>& agent_env,
    const std::map<std::string, std::string, std::less<>>& extra);

}  // namespace escouade::policy
