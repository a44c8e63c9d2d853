#!/usr/bin/env bash
# Issue 12, item 4: how a big transcript behaves in real Neovim (0.11, headless, the plugin from
# editors/nvim): builds a transcript of SIZE MB by repeating corpus spotter 258c7280 (like
# `cargo bench --bench scale`), then opens it once as a view from disk (`transcript:` URI) and
# once raw (the JSONL, synced with didOpen), each in a fresh Neovim, and prints time to the
# text and to the outline, the median latency of each request Neovim sends while reading (goal:
# within 50 ms each) and the server's RSS. The input is deleted afterwards.
#
# Usage: tests/big/figures.sh [SIZE_MB (default 1000)] [view|raw|both (default both)]
# Needs tests/e2e/setup.sh (.cache/e2e) and target/release/transcript-ls (or TRANSCRIPT_LS=…).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
C=${TRANSCRIPT_E2E_CACHE:-$ROOT/.cache/e2e}
NVIM=$C/venv/bin/nvim
export TRANSCRIPT_LS=${TRANSCRIPT_LS:-$ROOT/target/release/transcript-ls}
SIZE=${1:-1000}
MODES=${2:-both}
[ "$MODES" = both ] && MODES="view raw"
UNIT=$ROOT/../shared/corpus/marot__spotter/test/fixtures/transcripts/258c7280-ae70-4798-800f-63464d01a85d.jsonl
[ -x "$NVIM" ] || { echo "big: run tests/e2e/setup.sh first" >&2; exit 1; }
[ -x "$TRANSCRIPT_LS" ] || { echo "big: $TRANSCRIPT_LS missing (cargo build --release)" >&2; exit 1; }
[ -f "$UNIT" ] || { echo "big: corpus file $UNIT missing" >&2; exit 1; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/transcript-big.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export XDG_CONFIG_HOME=$TMP/config XDG_DATA_HOME=$TMP/data XDG_STATE_HOME=$TMP/state XDG_CACHE_HOME=$TMP/cache
export BIG_FILE=$TMP/big-${SIZE}MB.jsonl
want=$((SIZE * 1000000))
: >"$BIG_FILE"
while [ "$(stat -c %s "$BIG_FILE")" -lt "$want" ]; do cat "$UNIT" >>"$BIG_FILE"; done
echo "server $TRANSCRIPT_LS; input $(stat -c %s "$BIG_FILE") bytes; load average $(cut -d' ' -f1-3 /proc/loadavg)"
rc=0
for mode in $MODES; do
  BIG_MODE=$mode timeout 1200 "$NVIM" --headless --clean -n --cmd "set rtp^=$ROOT/editors/nvim" \
    -c "luafile $ROOT/tests/big/nvim.lua" || { rc=$?; echo "big: $mode failed (exit $rc)"; tail -20 "$XDG_STATE_HOME/nvim/lsp.log" 2>/dev/null || true; }
done
echo "load average at end $(cut -d' ' -f1-3 /proc/loadavg)"
exit $rc
