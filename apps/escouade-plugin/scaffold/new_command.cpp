// `escouade-plugin new cpp|wasm|js|ts <dir> [--id ID] [--name NAME]`: a new C++ plugin folder,
// a process or a run.wasm module, a JavaScript one or a TypeScript one (scaffold.hpp), then what
// was written and the commands that come next.

#include <CLI/CLI.hpp>
#include <functional>
#include <iostream>
#include <memory>
#include <string>

#include "commands.hpp"
#include "scaffold/scaffold.hpp"

namespace escouade::cli {

namespace {

struct NewArgs {
  std::string folder;
  std::string id;
  std::string name;
};

// `text` as one word of a POSIX shell: as it is when it needs no quoting, else in single quotes.
std::string shell_word(const std::string& text) {
  const bool plain = !text.empty() && text.find_first_not_of(
                                          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                          "0123456789_-+=.,/:@%") == std::string::npos;
  if (plain) return text;
  std::string quoted = "'";
  for (char c : text)
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

int refused(const Error& error) {
  std::cerr << "escouade-plugin new: refused\n  " << error.message << "\n";
  return 1;
}

void print_written(const scaffold::Scaffolded& done, std::string_view what) {
  std::cout << "Wrote " << done.identity.id << " (" << done.identity.name << "), " << what
            << ", in " << done.folder.string() << ":\n";
  for (const auto& f : done.files)
    std::cout << "  " << f << "\n";
}

int run_new_cpp(const scaffold::Request& request, bool wasm) {
  auto done = wasm ? scaffold::scaffold_wasm(request) : scaffold::scaffold_cpp(request);
  if (!done) return refused(done.error());
  print_written(*done, wasm ? "a C++ plugin built as run.wasm" : "a C++ plugin");
  std::cout << "Next: build it ("
            << (wasm ? std::string("its module goes to plugin.wasm")
                     : "its program goes to bin/" + done->identity.target)
            << "), then run the conformance bench on it:\n"
            << "  cd " << shell_word(done->folder.string()) << "\n"
            << "  cmake -S . -B build && cmake --build build\n"
            << "  escouade-plugin test .\n";
  return 0;
}

int run_new_js(const scaffold::Request& request) {
  auto done = scaffold::scaffold_js(request);
  if (!done) return refused(done.error());
  print_written(*done, "a JavaScript plugin that runs inside Escouade");
  std::cout << "Next: nothing to build; run the conformance bench on it:\n"
            << "  cd " << shell_word(done->folder.string()) << "\n"
            << "  escouade-plugin test .\n";
  return 0;
}

int run_new_ts(const scaffold::Request& request) {
  auto done = scaffold::scaffold_ts(request);
  if (!done) return refused(done.error());
  print_written(*done, "a TypeScript plugin with @escouade-dev/plugin (under " +
                           std::string(scaffold::kTsSdkFolder) + ")");
  std::cout << "Next: install what its package-lock.json names (esbuild, TypeScript), build "
               "dist/plugin.mjs, then run the conformance bench on it:\n"
            << "  cd " << shell_word(done->folder.string())
            << " && npm install && npm run build && escouade-plugin test .\n";
  return 0;
}

// `new <kind> <dir> [--id ID] [--name NAME]`: `run` with what was given, its exit code kept.
void add_kind(CLI::App& parent, const std::string& kind, const std::string& description,
              std::function<int(const scaffold::Request&)> run, int& exit_code) {
  auto args = std::make_shared<NewArgs>();
  CLI::App* sub = parent.add_subcommand(kind, description);
  sub->add_option("dir", args->folder, "The new folder; made when missing, refused when not empty")
      ->required();
  CLI::Option* id = sub->add_option(
      "--id", args->id,
      "The plugin's id, reverse-DNS in lower case (default: dev.example.<the folder's name>)");
  CLI::Option* name = sub->add_option("--name", args->name,
                                      "The name shown to the user (default: the folder's name)");
  sub->callback([args, id, name, run = std::move(run), &exit_code] {
    scaffold::Request request{args->folder, std::nullopt, std::nullopt};
    if (id->count() > 0) request.id = args->id;
    if (name->count() > 0) request.name = args->name;
    exit_code = run(request);
  });
}

}  // namespace

void add_new_command(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("new", "Makes a new plugin folder that builds as it is");
  cmd->require_subcommand(1);

  add_kind(
      *cmd, "cpp",
      "A C++ process plugin with the SDK: manifest, src/main.cpp, CMakeLists.txt, "
      "README.md, and the SDK headers under third_party/",
      [](const scaffold::Request& r) { return run_new_cpp(r, false); }, exit_code);
  add_kind(
      *cmd, "wasm",
      "A C++ plugin with the SDK built as run.wasm (clang++-14 --target=wasm32-wasi), "
      "which runs inside Escouade, isolated: manifest, src/main.cpp, CMakeLists.txt, "
      "README.md, and the SDK under third_party/",
      [](const scaffold::Request& r) { return run_new_cpp(r, true); }, exit_code);
  add_kind(*cmd, "js",
           "A JavaScript plugin that runs inside Escouade: manifest, plugin.mjs (an ES module "
           "over node:readline) and README.md; nothing to build",
           run_new_js, exit_code);
  add_kind(*cmd, "ts",
           "A TypeScript plugin with @escouade-dev/plugin, bundled into dist/plugin.mjs, which "
           "runs inside Escouade or under Node: manifest, package.json and its lockfile, "
           "tsconfig.json, src/, test/, README.md, and the SDK under vendor/; then npm install "
           "&& npm run build",
           run_new_ts, exit_code);
}

}  // namespace escouade::cli
