#!/usr/bin/env bash
# Installs, with apt-get, every Debian 12 package the build, the tests, the fuzzer and the
# benchmarks use. Safe to run again: it only asks apt for what is missing. Run as root.
set -euo pipefail

packages=(
  # toolchains and build
  build-essential cmake ninja-build ccache pkg-config git
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
  # tests and benchmarks; Node parses the run.js prelude in the tests (node --check)
  libgtest-dev libgmock-dev libbenchmark-dev nodejs
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
