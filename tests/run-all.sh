#!/usr/bin/env bash
# Runs every test of the project: the Rust unit, snapshot, conformance and LSP tests, then the
# real-editor end-to-end suites (headless Neovim 0.11.4 and VS Code via code-server). The first
# run installs the editors into .cache/e2e (needs root for apt; see tests/e2e/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -d ../shared/corpus ]; then
  echo "tests need ../shared (corpus and cases) beside the project" >&2
  exit 1
fi
# The CLI's pager test runs `render` on a pseudo-terminal from script(1) (util-linux; Debian's
# bsdutils, installed everywhere but minimal images).
if ! command -v script >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q bsdutils >/dev/null
fi
# Tests and benches apart: `--skip` is libtest's flag, and the benches (harness = false, criterion)
# refuse an argument they do not know (CI failed on `--skip` reaching benches/read.rs).
cargo test --workspace --lib --bins --tests -- --skip a_soak_of_file_system_changes
# The benches as `cargo test` runs them (criterion: each benchmark once), so they keep building.
cargo test --workspace --benches
# The live-file soak (issue 25): 120 s of random file-system changes under followed views and
# an index root, then every answer compared with a fresh server's; its seed and counts shown.
cargo test --test it lsp_live::a_soak_of_file_system_changes -- --nocapture 2>&1 \
  | grep -E '^soak:|^test result|panicked|FAILED|SOAK_SEED'
bash tests/e2e/run.sh
