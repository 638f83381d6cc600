#!/usr/bin/env bash
# Every check and test of Redline, in the order a failure is cheapest to see. This is the
# command README.md names and CI (.ci/run) calls. It sets up what the tests need first
# (scripts/setup-tests.sh). One build profile (release) serves the Rust tests and the
# conformance suite.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}
target=${CARGO_TARGET_DIR:-$root/target}

step() { printf '\n== %s\n' "$*"; }

step "set-up"
scripts/setup-tests.sh

step "format"
cargo fmt --all -- --check

step "clippy (warnings are errors)"
cargo clippy --release --workspace --all-targets -- -D warnings

step "cargo-deny (bans, licenses, sources)"
cargo deny --log-level error check bans licenses sources

step "cargo-machete (no unused dependencies)"
cargo machete

step "Rust tests: unit, storage contract (SQLite + PostgreSQL), API, xtask checks"
cargo test --release --workspace

step "the OpenAPI document: Schemathesis (every phase, fixed seed) and a generated client"
# The browser tests' OpenAI-wire fake is built here too: one command, and redline-app's
# features as they are when it is built alone.
cargo build --release -p redline-app -p redline-fake-llm
# Any finding fails the run; the seed and the report folder are printed to reproduce it.
scripts/schemathesis.sh "$target/release/redline"
scripts/openapi-client-check.sh "$target/release/redline"

step "the AI with a real model: the evaluation's smoke tasks (Qwen2.5-Coder-1.5B, llama-server)"
scripts/test-model.sh "$target/release/redline"

step "the Debian package: install, serve from the unit's command line, purge"
scripts/test-package.sh "$target/release/redline"

step "the web app: type check and browser tests (Chromium)"
REDLINE_FAKE_LLM_BIN="$target/release/redline-fake-llm" scripts/test-web.sh "$target/release/redline"

step "conformance suite against the release binary (SQLite)"
suite=${REDLINE_CONFORMANCE_DIR:-$root/../shared/conformance}
if [ -d "$suite" ]; then
  scripts/conformance.sh "$target/release/redline"
elif [ "${CI:-false}" = true ]; then
  echo "conformance: the suite is required under CI=true and was not found at $suite" >&2
  exit 1
else
  printf '\n!! conformance: SKIPPED. The external suite was not found at %s.\n' "$suite" >&2
  printf '!! Set REDLINE_CONFORMANCE_DIR to run it; every Rust test above ran.\n\n' >&2
fi
