#include "policy/commands.hpp"

#include <gtest/gtest.h>

#include <string>

namespace escouade::policy {
namespace {

// An entry as the manifest reads it: words between single spaces, a last "*" for any arguments.
manifest::CommandGrant entry(std::string_view text) {
  return manifest::command_of(text);
}

const Commands kGit({entry("git status"), entry("git log *"), entry("echo a b"), entry("ls")});

bool allowed(const Commands& commands, std::string_view command, std::vector<std::string> args) {
  return !commands.refusal(command, args).has_value();
}

TEST(Commands, AllowNothingMadeFromNothing) {
  const Commands none;
  EXPECT_EQ(none.refusal("git", {"status"}),
            "\"git status\" is not one of its permissions.commands, which names none");
  EXPECT_TRUE(none.refusal("", {}));
}

TEST(Commands, AnEntryIsMatchedWordForWord) {
  EXPECT_TRUE(allowed(kGit, "git", {"status"}));
  EXPECT_TRUE(allowed(kGit, "ls", {}));
  EXPECT_FALSE(allowed(kGit, "git", {"status", "--porcelain"}));  // one word too many
  EXPECT_FALSE(allowed(kGit, "git", {}));                         // one word too few
  EXPECT_FALSE(allowed(kGit, "ls", {"-a"}));
  EXPECT_FALSE(allowed(kGit, "git", {"Status"}));  // byte for byte
  EXPECT_FALSE(allowed(kGit, "Git", {"status"}));
  EXPECT_FALSE(allowed(kGit, "git", {"status "}));
  EXPECT_FALSE(allowed(kGit, "git", {"stat"}));
}

TEST(Commands, TheCommandIsOneWord) {
  EXPECT_FALSE(allowed(kGit, "git status", {}));
  EXPECT_FALSE(allowed(kGit, "git log", {"-p"}));
}

TEST(Commands, AnArgumentWithASpaceIsOneWord) {
  EXPECT_TRUE(allowed(kGit, "echo", {"a", "b"}));
  EXPECT_FALSE(allowed(kGit, "echo", {"a b"}));
  EXPECT_FALSE(allowed(kGit, "echo", {"a", "b", ""}));
}

TEST(Commands, AStarTakesZeroOrMoreArguments) {
  EXPECT_TRUE(allowed(kGit, "git", {"log"}));
  EXPECT_TRUE(allowed(kGit, "git", {"log", "-p"}));
  EXPECT_TRUE(allowed(kGit, "git", {"log", "-p", "--stat", "a b", ""}));
  EXPECT_FALSE(allowed(kGit, "git", {"show", "-p"}));
  EXPECT_FALSE(allowed(kGit, "git", {"-p", "log"}));
  // A "*" is not a word of the entry: "git log" does not begin with "git *".
  EXPECT_FALSE(allowed(kGit, "git", {"*"}));
}

TEST(Commands, AnEntryWithoutAStarTakesNoMore) {
  const Commands log_only({entry("git status"), entry("git log")});
  EXPECT_EQ(log_only.refusal("git", {"log", "-p"}),
            "\"git log -p\" is not one of its permissions.commands (\"git status\", \"git log\")");
}

TEST(Commands, TheRefusalQuotesWordsThatWouldReadAsOthers) {
  const Commands ls_only({entry("ls")});
  EXPECT_EQ(
      ls_only.refusal("echo", {"a b", "", "say \"hi\"", "x\ny"}),
      "\"echo \\\"a b\\\" \\\"\\\" \\\"say \\\\\\\"hi\\\\\\\"\\\" \\\"x\\\\ny\\\"\" is not one "
      "of its permissions.commands (\"ls\")");
  EXPECT_EQ(ls_only.refusal("git status", {}),
            "\"\\\"git status\\\"\" is not one of its permissions.commands (\"ls\")");
}

TEST(Commands, TheRefusalQuotesALongArgumentCut) {
  const auto reason = kGit.refusal("cat", {std::string(100000, 'a')});
  ASSERT_TRUE(reason);
  EXPECT_LT(reason->size(), kMaxQuotedCommandBytes + 200);
}

TEST(ProgramName, ABareNameIsOne) {
  for (const char* name : {"git", "npm", "python3", "g++", "x.y", "a-b", "é", "...", ".git"}) {
    EXPECT_EQ(program_name_refusal(name), std::nullopt) << name;
  }
}

TEST(ProgramName, APathOrAFolderIsNot) {
  const std::string path = "a path, not a name: the program is found on the PATH";
  for (const char* name : {"/usr/bin/git", "./git", "bin/git", "git/", "..\\git", "git\\x"}) {
    EXPECT_EQ(program_name_refusal(name), path) << name;
  }
  EXPECT_EQ(program_name_refusal(""), "an empty program name");
  EXPECT_EQ(program_name_refusal("."), "a folder, not a program's name");
  EXPECT_EQ(program_name_refusal(".."), "a folder, not a program's name");
  EXPECT_EQ(program_name_refusal(std::string_view("git\0x", 5)),
            "a NUL character in the program's name");
  EXPECT_TRUE(program_name_refusal("C:git"));
  EXPECT_EQ(program_name_refusal("-rf"),
            "a program's name beginning with '-' (it reads as an option)");
  EXPECT_TRUE(program_name_refusal(std::string(256, 'a')));
  EXPECT_FALSE(program_name_refusal(std::string(255, 'a')));
}

TEST(SearchFolders, OnlyAbsoluteFoldersInOrder) {
  using V = std::vector<std::string>;
  EXPECT_EQ(search_folders(""), V{});
  EXPECT_EQ(search_folders("."), V{});
  EXPECT_EQ(search_folders("bin"), V{});
  EXPECT_EQ(search_folders("/usr/bin"), V{"/usr/bin"});
  EXPECT_EQ(search_folders("::/bin:"), V{"/bin"});
  EXPECT_EQ(search_folders("/usr/local/bin:.:bin:/usr/bin:./x:/bin"),
            (V{"/usr/local/bin", "/usr/bin", "/bin"}));
  EXPECT_EQ(search_folders("/usr/bin:/bin:/usr/bin"), (V{"/usr/bin", "/bin"}));
}

TEST(EnvEntryForm, NamesThatCannotBeVariables) {
  EXPECT_EQ(env_entry_form_problem("", "x"), "an empty variable name");
  EXPECT_EQ(env_entry_form_problem("A=B", "x"), "a '=' in a variable's name");
  EXPECT_EQ(env_entry_form_problem("=", "x"), "a '=' in a variable's name");
  EXPECT_EQ(env_entry_form_problem(std::string_view("A\0B", 3), "x"),
            "a NUL character in a variable's name");
  EXPECT_EQ(env_entry_form_problem("A", std::string_view("x\0y", 3)),
            "a NUL character in a variable's value");
  EXPECT_EQ(env_entry_form_problem("A", ""), std::nullopt);
  EXPECT_EQ(env_entry_form_problem("MY_VAR", "a=b"), std::nullopt);
}

// Every name commands.hpp lists, and some of each family.
const std::vector<std::string> kForbidden = {"ESCOUADE_TOKEN",
                                             "ESCOUADE_",
                                             "ESCOUADE_PLUGIN_ID",
                                             "PATH",
                                             "PATHEXT",
                                             "LD_PRELOAD",
                                             "LD_LIBRARY_PATH",
                                             "LD_AUDIT",
                                             "DYLD_INSERT_LIBRARIES",
                                             "DYLD_LIBRARY_PATH",
                                             "BASH_ENV",
                                             "ENV",
                                             "SHELLOPTS",
                                             "BASHOPTS",
                                             "PS0",
                                             "PS1",
                                             "PS2",
                                             "PS4",
                                             "PROMPT_COMMAND",
                                             "ZDOTDIR",
                                             "FCEDIT",
                                             "BASH_FUNC_ls%%",
                                             "BASH_FUNC_git()",
                                             "IFS",
                                             "SHELL",
                                             "GIT_CONFIG",
                                             "GIT_CONFIG_COUNT",
                                             "GIT_CONFIG_KEY_0",
                                             "GIT_CONFIG_VALUE_0",
                                             "GIT_CONFIG_GLOBAL",
                                             "GIT_CONFIG_SYSTEM",
                                             "GIT_CONFIG_PARAMETERS",
                                             "GIT_CONFIG_NOSYSTEM",
                                             "GIT_SSH",
                                             "GIT_SSH_COMMAND",
                                             "GIT_ASKPASS",
                                             "GIT_EDITOR",
                                             "GIT_SEQUENCE_EDITOR",
                                             "GIT_PAGER",
                                             "GIT_EXEC_PATH",
                                             "GIT_TEMPLATE_DIR",
                                             "GIT_PROXY_COMMAND",
                                             "GIT_EXTERNAL_DIFF",
                                             "GIT_DIR",
                                             "GIT_WORK_TREE",
                                             "GIT_COMMON_DIR",
                                             "GIT_TRACE",
                                             "GIT_TRACE_PACKET",
                                             "GIT_INDEX_FILE",
                                             "GIT_OBJECT_DIRECTORY",
                                             "GIT_ALTERNATE_OBJECT_DIRECTORIES",
                                             "GIT_SSL_NO_VERIFY",
                                             "SSH_ASKPASS",
                                             "SUDO_ASKPASS",
                                             "EDITOR",
                                             "VISUAL",
                                             "PAGER",
                                             "MANPAGER",
                                             "BROWSER",
                                             "LESSOPEN",
                                             "LESSCLOSE",
                                             "HOME",
                                             "XDG_CONFIG_HOME",
                                             "XDG_CONFIG_DIRS",
                                             "USERPROFILE",
                                             "APPDATA",
                                             "LOCALAPPDATA",
                                             "HOMEDRIVE",
                                             "HOMEPATH",
                                             "NODE_OPTIONS",
                                             "NODE_PATH",
                                             "NPM_CONFIG_SCRIPT_SHELL",
                                             "npm_config_script_shell",
                                             "npm_config_node_options",
                                             "YARN_YARN_PATH",
                                             "PYTHONSTARTUP",
                                             "PYTHONPATH",
                                             "PYTHONHOME",
                                             "PYTHONUSERBASE",
                                             "PYTHONINSPECT",
                                             "PYTHONBREAKPOINT",
                                             "PYTHONPYCACHEPREFIX",
                                             "PERL5OPT",
                                             "PERL5LIB",
                                             "PERLLIB",
                                             "PERL5DB",
                                             "RUBYOPT",
                                             "RUBYLIB",
                                             "GEM_HOME",
                                             "GEM_PATH",
                                             "BUNDLE_GEMFILE",
                                             "JAVA_TOOL_OPTIONS",
                                             "_JAVA_OPTIONS",
                                             "JDK_JAVA_OPTIONS",
                                             "JAVA_OPTS",
                                             "MAVEN_OPTS",
                                             "GRADLE_OPTS",
                                             "CLASSPATH",
                                             "GCONV_PATH",
                                             "GLIBC_TUNABLES",
                                             "MALLOC_CHECK_",
                                             "MALLOC_PERTURB_",
                                             "OPENSSL_CONF",
                                             "OPENSSL_ENGINES",
                                             "OPENSSL_MODULES",
                                             "CC",
                                             "CXX",
                                             "CPP",
                                             "LD",
                                             "AR",
                                             "AS",
                                             "CFLAGS",
                                             "CXXFLAGS",
                                             "CPPFLAGS",
                                             "LDFLAGS",
                                             "MAKEFLAGS",
                                             "MFLAGS",
                                             "GNUMAKEFLAGS",
                                             "MAKEFILES",
                                             "CMAKE_TOOLCHAIN_FILE",
                                             "CMAKE_C_COMPILER_LAUNCHER",
                                             "RUSTC",
                                             "RUSTC_WRAPPER",
                                             "RUSTC_WORKSPACE_WRAPPER",
                                             "RUSTDOC",
                                             "RUSTFLAGS",
                                             "RUSTDOCFLAGS",
                                             "RUSTUP_TOOLCHAIN",
                                             "RUSTUP_HOME",
                                             "CARGO_HOME",
                                             "CARGO_BUILD_RUSTC_WRAPPER",
                                             "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER",
                                             "HTTP_PROXY",
                                             "HTTPS_PROXY",
                                             "ALL_PROXY",
                                             "FTP_PROXY",
                                             "NO_PROXY",
                                             "SSL_CERT_FILE",
                                             "SSL_CERT_DIR",
                                             "CURL_CA_BUNDLE",
                                             "REQUESTS_CA_BUNDLE",
                                             "NODE_EXTRA_CA_CERTS",
                                             "NODE_TLS_REJECT_UNAUTHORIZED",
                                             "PYTHONHTTPSVERIFY"};

std::string lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

std::string mixed(std::string s) {
  for (std::size_t i = 0; i < s.size(); i += 2)
    if (s[i] >= 'A' && s[i] <= 'Z') s[i] = static_cast<char>(s[i] - 'A' + 'a');
  return s;
}

TEST(EnvRefusal, EveryFamilyIsRefusedInAnyCase) {
  for (const std::string& name : kForbidden) {
    const auto reason = env_refusal(name);
    ASSERT_TRUE(reason) << name << " may be set";
    EXPECT_FALSE(reason->empty()) << name;
    EXPECT_EQ(env_refusal(lower(name)), reason) << lower(name);
    EXPECT_EQ(env_refusal(mixed(name)), reason) << mixed(name);
  }
}

TEST(EnvRefusal, OtherNamesMayBeSet) {
  for (const char* name : {"GIT_AUTHOR_NAME",
                           "GIT_AUTHOR_EMAIL",
                           "GIT_AUTHOR_DATE",
                           "GIT_COMMITTER_NAME",
                           "git_committer_email",
                           "GIT_COMMITTER_DATE",
                           "GIT_TERMINAL_PROMPT",
                           "GIT_MERGE_AUTOEDIT",
                           "GIT_OPTIONAL_LOCKS",
                           "GIT_FLUSH",
                           "GIT_LITERAL_PATHSPECS",
                           "GIT_GLOB_PATHSPECS",
                           "GIT_NOGLOB_PATHSPECS",
                           "GIT_ICASE_PATHSPECS",
                           "GIT_REFLOG_ACTION",
                           "GIT_PROGRESS_DELAY",
                           "LANG",
                           "LC_ALL",
                           "TERM",
                           "CI",
                           "MY_VAR",
                           "TZ",
                           "NODE_ENV",
                           "RUST_LOG",
                           "RUST_BACKTRACE",
                           "PYTHONUNBUFFERED",
                           "PYTHONIOENCODING",
                           "NO_COLOR",
                           "FORCE_COLOR",
                           "COLUMNS",
                           "DEBUG",
                           "LESS",
                           "ENVIRONMENT",
                           "PATH_INFO",
                           "HOMEBREW_NO_ANALYTICS",
                           "CCACHE_DIR",
                           "LDX",
                           "ASDF",
                           "ESCOUADE",
                           "MALLOCNANOZONE",
                           "GIT",
                           "GITHUB_TOKEN",
                           "CARGO",
                           "SHELL_X"}) {
    EXPECT_EQ(env_refusal(name), std::nullopt) << name;
  }
}

TEST(EnvRefusal, EachReasonNamesItsFamily) {
  EXPECT_EQ(env_refusal("PATH"), "PATH is chosen by the agent, never by a plugin");
  EXPECT_EQ(env_refusal("Path"), "PATH is chosen by the agent, never by a plugin");
  EXPECT_EQ(env_refusal("LD_PRELOAD"), "LD_* and DYLD_* load code into the program");
  EXPECT_EQ(env_refusal("DYLD_INSERT_LIBRARIES"), "LD_* and DYLD_* load code into the program");
  EXPECT_EQ(env_refusal("ESCOUADE_TOKEN"),
            "ESCOUADE_* are Escouade's own variables, never a plugin's");
  EXPECT_EQ(env_refusal("NODE_OPTIONS"), "NODE_OPTIONS and NODE_PATH make node load code");
  EXPECT_NE(env_refusal("npm_config_script_shell")->find("NPM_CONFIG_*"), std::string::npos);
  EXPECT_NE(env_refusal("GIT_CONFIG_KEY_0")->find("GIT_CONFIG"), std::string::npos);
  EXPECT_NE(env_refusal("GIT_SSH_COMMAND")->find("GIT_SSH"), std::string::npos);
  EXPECT_NE(env_refusal("GIT_DIR")->find("GIT_DIR"), std::string::npos);
  EXPECT_NE(env_refusal("GIT_TRACE")->find("GIT_*"), std::string::npos);
  EXPECT_NE(env_refusal("BASH_FUNC_ls%%")->find("BASH_FUNC_*"), std::string::npos);
  EXPECT_NE(env_refusal("SHELL")->find("SHELL"), std::string::npos);
  EXPECT_NE(env_refusal("IFS")->find("IFS"), std::string::npos);
  EXPECT_NE(env_refusal("HOME")->find("HOME"), std::string::npos);
  EXPECT_NE(env_refusal("PYTHONPATH")->find("python"), std::string::npos);
  EXPECT_NE(env_refusal("CLASSPATH")->find("JVM"), std::string::npos);
  EXPECT_NE(env_refusal("CARGO_HOME")->find("CARGO_*"), std::string::npos);
  EXPECT_NE(env_refusal("CC")->find("CC"), std::string::npos);
  EXPECT_NE(env_refusal("https_proxy")->find("proxies"), std::string::npos);
}

TEST(ProgramEnvironment, TheAgentsWithoutEscouadesThenTheExtraOverIt) {
  const std::vector<std::string> agent = {"HOME=/home/k", "ESCOUADE_TOKEN=secret",
                                          "escouade_x=y", "PATH=/usr/bin",
                                          "BROKEN",       "LANG=C",
                                          "LANG=fr_FR",   "EMPTY=",
                                          "EQ=a=b"};
  EXPECT_EQ(
      program_environment(agent, {}),
      (std::vector<std::string>{"HOME=/home/k", "PATH=/usr/bin", "LANG=C", "EMPTY=", "EQ=a=b"}));
  EXPECT_EQ(program_environment(agent, {{"LANG", "en_US"}, {"B", "2"}, {"A", "1"}, {"EMPTY", "x"}}),
            (std::vector<std::string>{"HOME=/home/k", "PATH=/usr/bin", "LANG=en_US", "EMPTY=x",
                                      "EQ=a=b", "A=1", "B=2"}));
  EXPECT_EQ(program_environment({}, {{"CI", "1"}}), (std::vector<std::string>{"CI=1"}));
  EXPECT_EQ(program_environment({}, {}), (std::vector<std::string>{}));
}

}  // namespace
}  // namespace escouade::policy
