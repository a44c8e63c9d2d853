#!/usr/bin/env bash
# VS Code end-to-end suite: a real VS Code workbench (code-server 4.139.1 = Code 1.139.1) with the
# packaged extension (.vsix) and the release server, driven by playwright-core in Debian's
# Chromium. Screenshots go to tests/e2e/artifacts/vscode/. Exits non-zero when a check fails.
#
# Needs tests/e2e/setup.sh to have run and target/release/transcript-ls to be built (run.sh in
# the folder above does both).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
C=${TRANSCRIPT_E2E_CACHE:-$ROOT/.cache/e2e}
SERVER=${TRANSCRIPT_LS:-$ROOT/target/release/transcript-ls}
ART=$ROOT/tests/e2e/artifacts/vscode
export PATH=$C/bin:$PATH npm_config_cache=$C/npm-cache npm_config_update_notifier=false

[ -x "$SERVER" ] || { echo "vscode e2e: server binary $SERVER missing (cargo build --release)" >&2; exit 1; }
[ -x "$C/npm/node_modules/.bin/code-server" ] || { echo "vscode e2e: run tests/e2e/setup.sh first" >&2; exit 1; }

mkdir -p "$C/runs" "$ART"
rm -f "$ART"/*.png "$ART"/*.log "$ART"/*.json
RUN=$(mktemp -d "$C/runs/vscode.XXXXXX")
# Everything code-server, Chromium and the extension host write stays in the run folder.
export HOME=$RUN/home XDG_CONFIG_HOME=$RUN/home/.config XDG_DATA_HOME=$RUN/home/.local/share \
  XDG_CACHE_HOME=$RUN/home/.cache XDG_STATE_HOME=$RUN/home/.local/state
mkdir -p "$HOME" "$RUN/data/User" "$RUN/ext" "$RUN/ws"

# The workspace: a copy of the demo session (main file + sub-agent folder).
cp -r "$ROOT/fixtures/demo/." "$RUN/ws/"
rm -f "$RUN/ws/README.md"
# ... a real finished session from the corpus (issue 11): last modified ten minutes ago, so the
# server reads it as finished (file-age rule) ...
cp "$ROOT/../shared/corpus/iansherr__claude-code-log/test/test_data/real_projects/-experiments-ideas/03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl" "$RUN/ws/finished-session.jsonl"
touch -d '10 minutes ago' "$RUN/ws/finished-session.jsonl"
# ... a real session with file edits (one Write, four Edits) for Show diff (issue 11) ...
cp "$ROOT/../shared/corpus/iansherr__claude-code-log/test/test_data/real_projects/-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1/subagents/agent-a4ca7529859c158c2.jsonl" "$RUN/ws/edits-session.jsonl"
touch -d '10 minutes ago' "$RUN/ws/edits-session.jsonl"
# ... a real session whose turns changed eleven files, one edit rejected (issue 22) ...
cp "$ROOT/../shared/corpus/iansherr__claude-code-log/test/test_data/real_projects/-Users-dain-workspace-JSSoundRecorder/7acd37a8-2745-4b58-a8a9-46164b22ad9e.jsonl" "$RUN/ws/changes-session.jsonl"
touch -d '10 minutes ago' "$RUN/ws/changes-session.jsonl"
# ... two sessions that wrote history/src/app.py, with their absolute paths (issue 22), moved
# to May 2020 so that "Open Latest Session" still finds the session recorded-here.jsonl ...
(cd "$ROOT/fixtures/history" && find root src -type f ! -name README.md) | while read -r f; do
  mkdir -p "$(dirname "$RUN/ws/history/$f")"
  sed -e "s#@ROOT@#$RUN/ws/history#g" -e 's/2026-05-0/2020-05-0/g' "$ROOT/fixtures/history/$f" >"$RUN/ws/history/$f"
done
# ... a 2.8 MB real session (corpus spotter 258c7280) for the open -> outline figure (issue 12) ...
cp "$ROOT/../shared/corpus/marot__spotter/test/fixtures/transcripts/258c7280-ae70-4798-800f-63464d01a85d.jsonl" "$RUN/ws/spotter-session.jsonl"
touch -d '10 minutes ago' "$RUN/ws/spotter-session.jsonl"
# ... a real session whose prompt holds a screenshot (785 KB PNG) and one whose tool results
# hold screenshots (issue 23 item 6: the Markdown preview shows them; the gist's two comment
# lines before the records left out) ...
cp "$ROOT/../shared/corpus/iansherr__claude-code-log/test/test_data/real_projects/-Users-dain-workspace-claude-code-log-sample/0d3a8e6f-290f-4105-a327-a2496e5e2a83.jsonl" "$RUN/ws/image-session.jsonl"
touch -d '10 minutes ago' "$RUN/ws/image-session.jsonl"
grep -v '^//' "$ROOT/../shared/corpus/moredip__session-share/session-viewer/test/INTEGRATION/fixtures/images-in-tool-results.jsonl" >"$RUN/ws/tool-images-session.jsonl"
touch -d '10 minutes ago' "$RUN/ws/tool-images-session.jsonl"
# ... a Pi session and a Copilot CLI log under its own name (issue 10) ...
IRR=$ROOT/../shared/corpus/ingo-eichhorst__Irrlicht/replaydata/agents
cp "$IRR/pi/regressions/01-example-session/recordings/2026-04-06-16-22-10_irrlichd-unknown/transcript.jsonl" "$RUN/ws/pi-session.jsonl"
mkdir -p "$RUN/ws/copilot-state/5ec41487"
cp "$IRR/copilot/scenarios/2-8_autonomous-loop-iteration-limit/recordings/2026-08-05-09-54-17_irrlichd-0.5.9+24afe21/transcript.jsonl" "$RUN/ws/copilot-state/5ec41487/events.jsonl"
# ... a Codex sub-agent rollout that replays its parent's history (issue 9) ...
cp "$ROOT/fixtures/rules/codex-subagent-inherited.jsonl" "$RUN/ws/inherited-subagent.jsonl"
# ... and a 56 MiB session, over VS Code's 50 MB limit for syncing documents to extensions.
BIG=$(node "$ROOT/tests/e2e/vscode/make-big.js" "$RUN/ws/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl" "$RUN/ws/big-session.jsonl")
# ... one recorded session of each of Gemini CLI, Antigravity CLI, Kiro CLI and Mistral Vibe in
# its agent's default root under this HOME (issue 21; agents.js drops `transcript.roots` to see
# them), recorded an hour ago ...
for a in gemini-cli:.gemini/tmp/4f2a9c1e/chats/session-2026-06-11T21-05-be8dae6d.jsonl \
  antigravity:.gemini/antigravity-cli/brain/7e1ff85c-2de4-47c2-a48f-2a029dcfeae4/.system_generated/logs/transcript.jsonl \
  kiro-cli:.kiro/sessions/cli/0b6f3f5e-1c2d-4e5f-8a9b-0c1d2e3f4a5b.jsonl \
  mistral-vibe:.vibe/logs/session/session_20260707_163450_0682560a/messages.jsonl; do
  src=$(ls "$IRR/${a%%:*}"/scenarios/2-2_auto-executed-tool-call/recordings/*/transcript.jsonl)
  mkdir -p "$(dirname "$HOME/${a#*:}")"
  cp "$src" "$HOME/${a#*:}"
  touch -d '1 hour ago' "$HOME/${a#*:}"
done
# ... and a session recorded in the workspace folder itself (its cwd), for "Open Latest Session".
sed "s#\"cwd\":\"[^\"]*\"#\"cwd\":\"$RUN/ws\"#g" "$ROOT/fixtures/cases/07-queued-prompt-typed-while-working.jsonl" >"$RUN/ws/recorded-here.jsonl"

cat >"$RUN/data/User/settings.json" <<EOF
{
  "transcript-ls.openAs": "raw",
  "transcript.roots": ["$RUN/ws"],
  "transcript.timeZone": "UTC",
  "transcript-ls.viewMode": "quiet",
  "[transcript-jsonl]": { "editor.wordWrap": "off" },
  "workbench.startupEditor": "none",
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "workbench.tips.enabled": false,
  "workbench.enableExperiments": false,
  "chat.disableAIFeatures": true,
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": "off",
  "security.workspace.trust.enabled": false,
  "editor.minimap.enabled": false,
  "editor.showFoldingControls": "always",
  "editor.inlayHints.enabled": "on",
  "editor.codeLens": true,
  "outline.collapseItems": "alwaysCollapse",
  "breadcrumbs.enabled": true,
  "git.enabled": false
}
EOF

t0=$(date +%s%N)
ts() { printf '%6.1fs %s\n' "$(( ($(date +%s%N) - t0) / 1000000 ))e-3" "$*"; }

# Package the extension exactly as a user gets it: the platform-specific .vsix with the server
# inside (editors/vscode/package.sh), and install it. No `transcript-ls.path` is set: the
# extension finds the server it ships.
(TRANSCRIPT_LS=$SERVER OUT=$RUN/transcript-ls.vsix bash "$ROOT/editors/vscode/package.sh" </dev/null >"$RUN/vsce.log" 2>&1) || {
  cat "$RUN/vsce.log" >&2
  exit 1
}
# ... and no other transcript-ls on the PATH code-server and the extension host see (the
# "server not found" check at the end relies on it).
PATH=$(tr ':' '\n' <<<"$PATH" | while read -r d; do [ -e "$d/transcript-ls" ] || printf '%s\n' "$d"; done | paste -sd: -)
CS=("$C/npm/node_modules/.bin/code-server" --auth none --disable-telemetry --disable-update-check
  --disable-workspace-trust --disable-getting-started-override --user-data-dir "$RUN/data" --extensions-dir "$RUN/ext")
"${CS[@]}" --install-extension "$RUN/transcript-ls.vsix" </dev/null >"$RUN/install.log" 2>&1 || {
  cat "$RUN/install.log" >&2
  exit 1
}
ts "packaged and installed $(ls "$RUN/ext" | grep transcript-ls)"

# A free port on loopback.
PORT=${PORT:-$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')}
setsid "${CS[@]}" --bind-addr "127.0.0.1:$PORT" "$RUN/ws" >"$RUN/code-server.log" 2>&1 &
CSPID=$!
cleanup() {
  # setsid: the process group holds code-server, its extension host and the language server.
  kill -- -"$CSPID" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 -- -"$CSPID" 2>/dev/null || break; sleep 0.1; done
  kill -9 -- -"$CSPID" 2>/dev/null || true
  cp "$RUN/code-server.log" "$ART/code-server.log" 2>/dev/null || true
  find "$RUN/data/logs" -name '*Transcript*' -exec cp {} "$ART/" \; 2>/dev/null || true
  [ -n "${E2E_KEEP_RUN:-}" ] || rm -rf "$RUN"
}
trap cleanup EXIT
for _ in $(seq 1 150); do
  curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break
  sleep 0.2
done
ts "code-server up on :$PORT"

rc=0
NODE_PATH=$C/npm/node_modules node "$ROOT/tests/e2e/vscode/drive.js" \
  --url "http://127.0.0.1:$PORT/?folder=$RUN/ws" --ws "$RUN/ws" --art "$ART" --big "$BIG" \
  --settings "$RUN/data/User/settings.json" || rc=$?
ts "drive.js exit $rc; screenshots in $ART"
exit "$rc"
