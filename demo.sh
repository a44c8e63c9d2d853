#!/usr/bin/env bash
# Builds the server and runs it on the shipped demo transcript: outline, figures, rendered view.
# Times are shown in UTC so they match fixtures/demo/README.md (drop --time-zone for your own).
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v cargo >/dev/null; then
  echo "demo.sh needs a Rust toolchain (cargo 1.88+): https://rustup.rs" >&2
  exit 1
fi
if [ ! -x target/release/transcript-ls ]; then
  echo "building transcript-ls (release; a few minutes the first time)…" >&2
fi
cargo build --release
bin=target/release/transcript-ls
demo=fixtures/demo/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl
echo "== outline: $demo"
"$bin" outline --time-zone UTC "$demo"
echo
echo "== stats"
"$bin" stats --time-zone UTC "$demo"
echo
echo "== rendered view (quiet; add --verbose for everything)"
"$bin" render --time-zone UTC --no-pager "$demo"
