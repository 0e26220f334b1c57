#!/usr/bin/env bash
# Regenerates the SDKs' checked-in protocol files from schema/plugin-protocol-1.json: the C++
# SDK's header (sdk/cpp/include/escouade/protocol.hpp) and the TypeScript SDK's types and
# checkers (sdk/typescript/src/protocol.ts). Builds escouade-codegen first when it is out of
# date, in a build folder that is already configured (cmake --preset asan makes build/asan).
# Usage: scripts/regen-sdk.sh [build dir]   (build/asan by default)
# sdk_test fails while either file differs from what the schema gives (docs/codegen.md).
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir="${1:-build/asan}"
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  echo "regen-sdk.sh: $build_dir is not a configured build folder; run cmake --preset asan," \
    "or give one as the first argument" >&2
  exit 1
fi
cmake --build "$build_dir" --target escouade-codegen

codegen="$build_dir/tools/codegen/escouade-codegen"
schema=schema/plugin-protocol-1.json
"$codegen" --sdk "$schema" sdk/cpp/include/escouade/protocol.hpp
"$codegen" --ts "$schema" sdk/typescript/src/protocol.ts
echo "regen-sdk.sh: sdk/cpp/include/escouade/protocol.hpp and sdk/typescript/src/protocol.ts" \
  "are what $schema gives"
