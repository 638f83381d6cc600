#!/usr/bin/env bash
# Every check and test of Redline, in the order a failure is cheapest to see.
# This is the command README.md names and CI (.ci/run) calls. One build profile (release)
# serves the Rust tests and the conformance suite.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}
target=${CARGO_TARGET_DIR:-$root/target}

step() { printf '\n== %s\n' "$*"; }

step "format"
cargo fmt --all -- --check

step "clippy (warnings are errors)"
cargo clippy --release --workspace --all-targets -- -D warnings

step "cargo-deny (bans, licenses, sources)"
cargo deny --log-level error check bans licenses sources

step "PostgreSQL for the storage tests"
if pg_isready -q -h 127.0.0.1 -p 5432; then echo "reachable"; else
  echo "PostgreSQL is not reachable at 127.0.0.1:5432; under CI=true the storage tests fail" >&2
fi

step "Rust tests: unit, storage contract (SQLite + PostgreSQL), API, xtask checks"
cargo test --release --workspace

step "conformance suite against target/release/redline (SQLite)"
cargo build --release -p redline-app
scripts/conformance.sh "$target/release/redline"
