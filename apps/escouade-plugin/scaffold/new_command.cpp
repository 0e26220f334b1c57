// `escouade-plugin new cpp|wasm|js <dir> [--id ID] [--name NAME]`: a new C++ plugin folder, a
// process or a run.wasm module, or a JavaScript one (scaffold.hpp), then what was written and
// the commands that come next.

#include <CLI/CLI.hpp>
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

int run_new_cpp(const NewArgs& args, bool id_given, bool name_given, bool wasm) {
  scaffold::Request request{args.folder, std::nullopt, std::nullopt};
  if (id_given) request.id = args.id;
  if (name_given) request.name = args.name;
  auto done = wasm ? scaffold::scaffold_wasm(request) : scaffold::scaffold_cpp(request);
  if (!done) {
    std::cerr << "escouade-plugin new: refused\n  " << done.error().message << "\n";
    return 1;
  }
  std::cout << "Wrote " << done->identity.id << " (" << done->identity.name << "), a C++ plugin"
            << (wasm ? " built as run.wasm" : "") << ", in " << done->folder.string() << ":\n";
  for (const auto& f : done->files)
    std::cout << "  " << f << "\n";
  std::cout << "Next: build it ("
            << (wasm ? std::string("its module goes to plugin.wasm")
                     : "its program goes to bin/" + done->identity.target)
            << "), then run the conformance bench on it:\n"
            << "  cd " << shell_word(done->folder.string()) << "\n"
            << "  cmake -S . -B build && cmake --build build\n"
            << "  escouade-plugin test .\n";
  return 0;
}

int run_new_js(const NewArgs& args, bool id_given, bool name_given) {
  scaffold::Request request{args.folder, std::nullopt, std::nullopt};
  if (id_given) request.id = args.id;
  if (name_given) request.name = args.name;
  auto done = scaffold::scaffold_js(request);
  if (!done) {
    std::cerr << "escouade-plugin new: refused\n  " << done.error().message << "\n";
    return 1;
  }
  std::cout << "Wrote " << done->identity.id << " (" << done->identity.name
            << "), a JavaScript plugin that runs inside Escouade, in " << done->folder.string()
            << ":\n";
  for (const auto& f : done->files)
    std::cout << "  " << f << "\n";
  std::cout << "Next: nothing to build; run the conformance bench on it:\n"
            << "  cd " << shell_word(done->folder.string()) << "\n"
            << "  escouade-plugin test .\n";
  return 0;
}

}  // namespace

void add_new_command(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("new", "Makes a new plugin folder that builds as it is");
  cmd->require_subcommand(1);

  for (const bool wasm : {false, true}) {
    auto args = std::make_shared<NewArgs>();
    CLI::App* sub = cmd->add_subcommand(
        wasm ? "wasm" : "cpp",
        wasm ? "A C++ plugin with the SDK built as run.wasm (clang++-14 --target=wasm32-wasi), "
               "which runs inside Escouade, isolated: manifest, src/main.cpp, CMakeLists.txt, "
               "README.md, and the SDK under third_party/"
             : "A C++ process plugin with the SDK: manifest, src/main.cpp, CMakeLists.txt, "
               "README.md, and the SDK headers under third_party/");
    sub->add_option("dir", args->folder,
                    "The new folder; made when missing, refused when not empty")
        ->required();
    CLI::Option* id = sub->add_option(
        "--id", args->id,
        "The plugin's id, reverse-DNS in lower case (default: dev.example.<the folder's name>)");
    CLI::Option* name = sub->add_option("--name", args->name,
                                        "The name shown to the user (default: the folder's name)");
    sub->callback([args, id, name, wasm, &exit_code] {
      exit_code = run_new_cpp(*args, id->count() > 0, name->count() > 0, wasm);
    });
  }

  auto js_args = std::make_shared<NewArgs>();
  CLI::App* js = cmd->add_subcommand(
      "js",
      "A JavaScript plugin that runs inside Escouade: manifest, plugin.mjs (an ES module over "
      "node:readline) and README.md; nothing to build");
  js->add_option("dir", js_args->folder,
                 "The new folder; made when missing, refused when not empty")
      ->required();
  CLI::Option* js_id = js->add_option(
      "--id", js_args->id,
      "The plugin's id, reverse-DNS in lower case (default: dev.example.<the folder's name>)");
  CLI::Option* js_name = js->add_option("--name", js_args->name,
                                        "The name shown to the user (default: the folder's name)");
  js->callback([js_args, js_id, js_name, &exit_code] {
    exit_code = run_new_js(*js_args, js_id->count() > 0, js_name->count() > 0);
  });
}

}  // namespace escouade::cli
