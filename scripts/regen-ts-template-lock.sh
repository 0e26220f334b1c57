#!/usr/bin/env bash
# Regenerates apps/escouade-plugin/scaffold/template-ts/package-lock.json, the lockfile that
# `escouade-plugin new ts` writes: npm install, once, in a scratch copy of template-ts/ with the
# SDK vendored as `new ts` vendors it (sdk/typescript's package.json, README.md, src/ and bin/
# under vendor/escouade-dev-plugin), then the lockfile back with @TARGET@ for the package's name.
# Run it after changing template-ts/package.json or sdk/typescript/package.json (its version,
# its dependencies): scaffold_test fails while the lockfile's SDK entry differs from
# sdk/typescript/package.json (ScaffoldEmbedded.TheTsLockfileHoldsTheSdkOfTheSourceTree).
# Needs node and npm, and the registry or an npm cache holding the packages.
# Usage: scripts/regen-ts-template-lock.sh
set -euo pipefail
cd "$(dirname "$0")/.."

template=apps/escouade-plugin/scaffold/template-ts
sdk=sdk/typescript
# The package's name while npm runs (@TARGET@ is not a name npm takes), then @TARGET@ again.
stand_in=escouade-template-ts-stand-in

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

cp "$template/package.json" "$scratch/package.json"
sed -i "s/\"@TARGET@\"/\"$stand_in\"/" "$scratch/package.json"
vendor="$scratch/vendor/escouade-dev-plugin"
mkdir -p "$vendor"
cp -r "$sdk/package.json" "$sdk/README.md" "$sdk/src" "$sdk/bin" "$vendor/"

# No registry URL in the lockfile (npm ci takes the registry it is configured with), as in the
# repository's own package-lock.json; no install scripts: the lockfile is all that is kept.
(cd "$scratch" && npm install --no-audit --no-fund --ignore-scripts \
  --omit-lockfile-registry-resolved --prefer-offline >/dev/null)

sed "s/\"$stand_in\"/\"@TARGET@\"/" "$scratch/package-lock.json" >"$template/package-lock.json"
if grep -q "$stand_in" "$template/package-lock.json"; then
  echo "regen-ts-template-lock.sh: $stand_in left in the lockfile" >&2
  exit 1
fi
echo "regen-ts-template-lock.sh: $template/package-lock.json made by npm $(npm --version)" \
  "for $sdk $(node -p "require('./$sdk/package.json').version")"
