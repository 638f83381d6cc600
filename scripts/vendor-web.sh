#!/usr/bin/env bash
# Copies the web app's third-party browser code, at the versions pinned in
# crates/web/package-lock.json, from the npm registry into crates/web/assets/vendor/ (it is
# committed: serving the app needs no Node step), with the licence files that must travel with
# it into crates/web/licenses/, and checks crates/web/THIRD_PARTY.md names each package at that
# version. Run it after changing a version in crates/web/package.json.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
web=$root/crates/web
cd "$web"
npm ci --no-audit --no-fund --silent
vendor=$web/assets/vendor
mkdir -p "$vendor"
# file in the package -> file under assets/vendor/
copy() {
  mkdir -p "$(dirname "$vendor/$2")"
  # The source map comment (JavaScript's or CSS's) names a file that is not served.
  sed -e '/^\/\/# sourceMappingURL=/d' -e '/^\/\*# sourceMappingURL=.*\*\/$/d' "node_modules/$1" > "$vendor/$2"
}
copy preact/dist/preact.module.js preact.mjs
copy preact/hooks/dist/hooks.module.js preact-hooks.mjs
copy htm/dist/htm.module.js htm.mjs
# jsdiff has no single-file ES module: its `libesm/` tree is mirrored under `vendor/diff/`
# (so that the relative imports resolve), with only the modules the app imports, since every
# vendored module is preloaded on every page.
copy diff/libesm/diff/array.js diff/diff/array.js
copy diff/libesm/diff/base.js diff/diff/base.js
# Swagger UI, the API reference at /docs (not a module of the app: a classic script and its
# style sheet, loaded by that page only). Its bundle's third-party notices and the package's
# NOTICE go with its licence.
copy swagger-ui-dist/swagger-ui-bundle.js swagger-ui/swagger-ui-bundle.js
copy swagger-ui-dist/swagger-ui.css swagger-ui/swagger-ui.css
cp node_modules/swagger-ui-dist/LICENSE licenses/swagger-ui-Apache-2.0.txt
cp node_modules/swagger-ui-dist/NOTICE licenses/swagger-ui-NOTICE.txt
cp node_modules/swagger-ui-dist/swagger-ui-bundle.js.LICENSE.txt licenses/swagger-ui-bundle-notices.txt
for package in preact htm diff swagger-ui-dist; do
  version=$(node -p "require('./node_modules/$package/package.json').version")
  grep -q "^## $package $version\$" THIRD_PARTY.md || {
    echo "vendor-web: THIRD_PARTY.md has no section '## $package $version'; add it with the package's licence" >&2
    exit 1
  }
done
echo "vendor-web: crates/web/assets/vendor is up to date"
