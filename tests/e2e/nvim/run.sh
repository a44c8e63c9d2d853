#!/usr/bin/env bash
# Neovim end-to-end suite: headless Neovim 0.11.4 with the plugin from editors/nvim against the
# release server. Exits non-zero when a check fails. Needs tests/e2e/setup.sh and a built
# target/release/transcript-ls (the run.sh in the folder above does both).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
C=${TRANSCRIPT_E2E_CACHE:-$ROOT/.cache/e2e}
NVIM=$C/venv/bin/nvim
export TRANSCRIPT_LS=${TRANSCRIPT_LS:-$ROOT/target/release/transcript-ls}
[ -x "$NVIM" ] || { echo "nvim e2e: run tests/e2e/setup.sh first" >&2; exit 1; }
[ -x "$TRANSCRIPT_LS" ] || { echo "nvim e2e: server binary $TRANSCRIPT_LS missing (cargo build --release)" >&2; exit 1; }
[ -d "$ROOT/../shared/corpus" ] || { echo "nvim e2e: ../shared/corpus missing beside the project" >&2; exit 1; }

export E2E_ROOT=$ROOT E2E_TMP
E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/transcript-nvim-e2e.XXXXXX")
trap 'rm -rf "$E2E_TMP"' EXIT
# Keep Neovim out of ~ (lsp.log, shada, swap files live under these).
export XDG_CONFIG_HOME=$E2E_TMP/config XDG_DATA_HOME=$E2E_TMP/data XDG_STATE_HOME=$E2E_TMP/state XDG_CACHE_HOME=$E2E_TMP/cache
"$NVIM" --version | head -1
# The detection table shared with the server's tests (fixtures/detection-cases.json).
"$NVIM" --headless --clean -l "$ROOT/editors/nvim/tests/detect_spec.lua" 2>&1 | tail -1
"$NVIM" --headless --clean -l "$ROOT/editors/nvim/tests/detect_spec.lua" >/dev/null 2>&1 \
  || { echo "nvim: detection table failed (run editors/nvim/tests/detect_spec.lua)" >&2; exit 1; }
rc=0
timeout 180 "$NVIM" --headless --clean -n --cmd "set rtp^=$ROOT/editors/nvim" \
  -c "luafile $ROOT/tests/e2e/nvim/test.lua" || rc=$?
if [ "$rc" -ne 0 ]; then
  echo "--- lsp.log (last 40 lines)" >&2
  tail -40 "$XDG_STATE_HOME/nvim/lsp.log" >&2 2>/dev/null || true
fi
# The registry's newer agents from their default roots (issue 21): a Neovim of its own whose
# HOME is a scratch folder the block fills with one recorded session of each.
rc2=0
mkdir -p "$E2E_TMP/home"
HOME=$E2E_TMP/home timeout 120 "$NVIM" --headless --clean -n --cmd "set rtp^=$ROOT/editors/nvim" \
  -c "luafile $ROOT/tests/e2e/nvim/agents.lua" || rc2=$?
if [ "$rc2" -ne 0 ]; then
  echo "--- agents block: lsp.log (last 40 lines)" >&2
  tail -40 "$XDG_STATE_HOME/nvim/lsp.log" >&2 2>/dev/null || true
  [ "$rc" -ne 0 ] || rc=$rc2
fi
exit "$rc"
