#!/usr/bin/env bash
# Builds the server and runs it on the shipped demo transcript: outline, figures, rendered view.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v cargo >/dev/null; then
  echo "demo.sh needs a Rust toolchain (cargo 1.88+): https://rustup.rs" >&2
  exit 1
fi
cargo build --release --quiet
bin=target/release/transcript-ls
demo=fixtures/demo/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl
echo "== outline: $demo"
"$bin" outline "$demo"
echo
echo "== stats"
"$bin" stats "$demo"
echo
echo "== rendered view (quiet; add --verbose for everything)"
"$bin" render "$demo"
