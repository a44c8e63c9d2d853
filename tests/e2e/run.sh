#!/usr/bin/env bash
# Runs the editor end-to-end suites against the release server: real headless Neovim 0.11.4
# (tests/e2e/nvim) and a real VS Code (code-server + Chromium, tests/e2e/vscode). Installs what
# they need first (tests/e2e/setup.sh, cached in .cache/e2e) and builds the server.
#
#   bash tests/e2e/run.sh            # both suites
#   bash tests/e2e/run.sh nvim       # one suite (nvim | vscode)
#
# Environment: TRANSCRIPT_LS=path uses that server binary instead of building one;
# E2E_SKIP_SETUP=1 skips the install check. Screenshots: tests/e2e/artifacts/vscode/.
# Exit status: non-zero when a suite failed. Last line: `e2e: N passed, M failed` (checks).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(nvim vscode)

if [ -z "${E2E_SKIP_SETUP:-}" ]; then
  bash tests/e2e/setup.sh || { echo "e2e: setup failed" >&2; exit 1; }
fi
if [ -z "${TRANSCRIPT_LS:-}" ]; then
  cargo build --release -p transcript-ls --bin transcript-ls 2>&1 | tail -1 || exit 1
  export TRANSCRIPT_LS=$ROOT/target/release/transcript-ls
fi
[ -x "$TRANSCRIPT_LS" ] || { echo "e2e: no server binary at $TRANSCRIPT_LS" >&2; exit 1; }
echo "e2e: server $("$TRANSCRIPT_LS" --version 2>&1 | head -1) ($TRANSCRIPT_LS)"

mkdir -p tests/e2e/artifacts
rc=0 passed=0 failed=0 summary=()
for s in "${suites[@]}"; do
  case $s in
    nvim | vscode) ;;
    *) echo "e2e: unknown suite $s (nvim | vscode)" >&2; exit 2 ;;
  esac
  log=tests/e2e/artifacts/$s.log
  start=$(date +%s%N)
  timeout 900 bash "tests/e2e/$s/run.sh" >"$log" 2>&1
  src=$?
  secs=$(( ($(date +%s%N) - start) / 1000000 ))
  cat "$log"
  # A suite may run more than one editor process (Neovim's agents block): its counts add up.
  counts=$(grep -E "^ *[0-9]+ms $s: [0-9]+ passed, [0-9]+ failed" "$log" \
    | sed -nE 's/.* ([0-9]+) passed, ([0-9]+) failed.*/\1 \2/p')
  p= f= line=
  if [ -n "$counts" ]; then
    p=$(awk '{s += $1} END {print s}' <<<"$counts")
    f=$(awk '{s += $2} END {print s}' <<<"$counts")
    line="$s: $p passed, $f failed"
  fi
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0}))
  if [ "$src" -ne 0 ]; then
    rc=1
    [ "${f:-0}" -gt 0 ] || failed=$((failed + 1)) # a suite that died before counting
    summary+=("$(printf '%-7s FAIL %6.1fs  %s' "$s" "${secs}e-3" "${line:-(no result line; see $log)}")")
  else
    summary+=("$(printf '%-7s PASS %6.1fs  %s' "$s" "${secs}e-3" "$line")")
  fi
done
echo "---"
printf '%s\n' "${summary[@]}"
echo "e2e: $passed passed, $failed failed"
exit "$rc"
