#!/usr/bin/env bash
# Runs every test of the project: the Rust unit, snapshot, conformance and LSP tests.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -d ../shared/corpus ]; then
  echo "tests need ../shared (corpus and cases) beside the project" >&2
  exit 1
fi
cargo test --workspace --all-targets
