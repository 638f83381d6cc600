#!/usr/bin/env bash
# Copies the web app's third-party browser modules, at the versions pinned in
# crates/web/package-lock.json, from the npm registry into crates/web/assets/vendor/ (they are
# committed: serving the app needs no Node step), and checks crates/web/THIRD_PARTY.md names
# each at that version. Run it after changing a version in crates/web/package.json.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
web=$root/crates/web
cd "$web"
npm ci --no-audit --no-fund --silent
vendor=$web/assets/vendor
mkdir -p "$vendor"
# name in the import map -> file in the package
copy() {
  mkdir -p "$(dirname "$vendor/$2")"
  # The source map comment names a file that is not served.
  sed -e '/^\/\/# sourceMappingURL=/d' "node_modules/$1" > "$vendor/$2"
}
copy preact/dist/preact.module.js preact.mjs
copy preact/hooks/dist/hooks.module.js preact-hooks.mjs
copy htm/dist/htm.module.js htm.mjs
# jsdiff has no single-file ES module: its `libesm/` tree is mirrored under `vendor/diff/`
# (so that the relative imports resolve), with only the modules the app imports, since every
# vendored module is preloaded on every page.
copy diff/libesm/diff/array.js diff/diff/array.js
copy diff/libesm/diff/base.js diff/diff/base.js
for package in preact htm diff; do
  version=$(node -p "require('./node_modules/$package/package.json').version")
  grep -q "^## $package $version\$" THIRD_PARTY.md || {
    echo "vendor-web: THIRD_PARTY.md has no section '## $package $version'; add it with the package's licence" >&2
    exit 1
  }
done
echo "vendor-web: crates/web/assets/vendor is up to date"
