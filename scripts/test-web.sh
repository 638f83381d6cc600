#!/usr/bin/env bash
# The web app's checks: the npm tooling pinned by crates/web/package-lock.json (npm ci), the
# vendored modules against it, the type check (tsc --noEmit --checkJs), and the tests of
# crates/web/tests/: the browser tests in Debian's Chromium against the release binary and the
# OpenAI-wire fake (crates/fake-llm), each built when missing, and the tests of pure modules
# such as the redline, which need no browser.
#   [REDLINE_FAKE_LLM_BIN=path/to/redline-fake-llm] scripts/test-web.sh [path/to/redline]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
target=${CARGO_TARGET_DIR:-$root/target}
binary=${1:-$target/release/redline}
fake_llm=${REDLINE_FAKE_LLM_BIN:-$target/release/redline-fake-llm}
missing=()
[ -x "$binary" ] || missing+=(-p redline-app)
[ -x "$fake_llm" ] || missing+=(-p redline-fake-llm)
if [ ${#missing[@]} -gt 0 ]; then cargo build --release "${missing[@]}"; fi
chromium=${REDLINE_CHROMIUM:-/usr/bin/chromium}

if ! command -v npm >/dev/null 2>&1; then
  if [ "${CI:-false}" = true ]; then echo "web: npm is required under CI=true" >&2; exit 1; fi
  printf '\n!! web: SKIPPED. Node.js and npm are missing (apt-get install nodejs npm).\n\n' >&2
  exit 0
fi
(cd crates/web && npm ci --no-audit --no-fund --silent)
# The committed vendor files are the pinned versions, unchanged (scripts/vendor-web.sh copies
# them), and so are the licence files copied with them.
for pair in "preact/dist/preact.module.js preact.mjs" "preact/hooks/dist/hooks.module.js preact-hooks.mjs" \
  "htm/dist/htm.module.js htm.mjs" "diff/libesm/diff/array.js diff/diff/array.js" \
  "diff/libesm/diff/base.js diff/diff/base.js" \
  "swagger-ui-dist/swagger-ui-bundle.js swagger-ui/swagger-ui-bundle.js" \
  "swagger-ui-dist/swagger-ui.css swagger-ui/swagger-ui.css"; do
  set -- $pair
  if ! sed -e '/^\/\/# sourceMappingURL=/d' -e '/^\/\*# sourceMappingURL=.*\*\/$/d' "crates/web/node_modules/$1" \
    | cmp -s - "crates/web/assets/vendor/$2"; then
    echo "web: crates/web/assets/vendor/$2 differs from the pinned npm package; run scripts/vendor-web.sh" >&2
    exit 1
  fi
done
for pair in "swagger-ui-dist/LICENSE swagger-ui-Apache-2.0.txt" "swagger-ui-dist/NOTICE swagger-ui-NOTICE.txt" \
  "swagger-ui-dist/swagger-ui-bundle.js.LICENSE.txt swagger-ui-bundle-notices.txt"; do
  set -- $pair
  if ! cmp -s "crates/web/node_modules/$1" "crates/web/licenses/$2"; then
    echo "web: crates/web/licenses/$2 differs from the pinned npm package; run scripts/vendor-web.sh" >&2
    exit 1
  fi
done
echo "   web: type check (tsc --noEmit --checkJs)"
(cd crates/web && npx --no-install tsc -p tsconfig.json)

if [ ! -x "$chromium" ]; then
  if [ "${CI:-false}" = true ]; then echo "web: Chromium is required under CI=true ($chromium)" >&2; exit 1; fi
  printf '\n!! web: browser tests SKIPPED. Chromium is missing at %s (apt-get install chromium).\n\n' "$chromium" >&2
  # The tests of pure modules need no browser: they still run.
  echo "   web: tests without a browser"
  node --test crates/web/tests/redline.test.mjs crates/web/tests/describe.test.mjs
  exit 0
fi
echo "   web: browser tests (Chromium $("$chromium" --version 2>/dev/null | awk '{print $2}'))"
REDLINE_BIN=$binary REDLINE_FAKE_LLM_BIN=$fake_llm node --test --test-concurrency=1 crates/web/tests/
