#!/usr/bin/env bash
# Installs, with apt-get, every Debian 12 package the build, the tests, the fuzzer and the
# benchmarks use, then the npm packages of package-lock.json (npm ci: the TypeScript SDK's
# esbuild, TypeScript, Node's types). Safe to run again: it only asks apt for what is missing,
# and npm only when the lockfile changed. Run as root.
set -euo pipefail

packages=(
  # toolchains and build
  build-essential cmake ninja-build ccache pkg-config git lld
  clang-14 libclang-rt-14-dev clang-format-14
  # libraries
  libboost1.81-dev libboost-json1.81-dev libssl-dev
  libvalijson-dev libfmt-dev libcli11-dev
  libyaml-cpp-dev libsecret-1-dev
  # the engine of the sandbox (run.js, run.wasm): SpiderMonkey ESR 102, run in helper processes
  # locked down with a seccomp-bpf filter
  libmozjs-102-dev libseccomp-dev
  # run.wasm modules (the tests' fixtures, C++ plugins): clang-14 --target=wasm32-wasi, wat2wasm
  wasi-libc libclang-rt-14-dev-wasm32 lld-14 libc++-14-dev-wasm32 libc++abi-14-dev-wasm32 wabt
  # the keychain the tests use: a real Secret Service in a private D-Bus session
  dbus-daemon gnome-keyring
  # the network lab of the net tests: addresses put on lo in a private namespace, certificates
  iproute2 ca-certificates
  # tests and benchmarks; Node parses the run.js prelude in the tests (node --check), runs the
  # TypeScript SDK's build and tests, and runs TypeScript plugins as processes
  libgtest-dev libgmock-dev libbenchmark-dev nodejs
)
# npm comes with a Node.js from elsewhere (NodeSource's package holds it); Debian's own Node.js
# has it in a package of its own.
command -v npm >/dev/null 2>&1 || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# The npm packages, exactly as package-lock.json has them, into node_modules at the root (the
# SDK, the TypeScript examples and the tools they build with: npm workspaces).
cd "$(dirname "$0")/.."
stamp=node_modules/.escouade-lock
lock_sum=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$lock_sum" ]; then
  echo "install-deps: node_modules matches package-lock.json"
else
  echo "install-deps: npm ci (package-lock.json)"
  npm ci --no-audit --no-fund
  echo "$lock_sum" >"$stamp"
fi
