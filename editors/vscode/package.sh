#!/usr/bin/env bash
# Packages the VS Code extension as a platform-specific .vsix with the server inside
# (`server/transcript-ls`), as rust-analyzer ships its server: installed from this file, the
# extension needs no `transcript-ls.path` and no server on PATH.
#
#   editors/vscode/package.sh [TARGET]      # -> editors/vscode/transcript-ls-TARGET.vsix
#
# TARGET is a VS Code platform (linux-x64, linux-arm64, darwin-x64, darwin-arm64, win32-x64, …);
# default: this machine's. The server is built with `cargo build --release` unless
# TRANSCRIPT_LS names a binary already built for TARGET. OUT=path sets the output file.
# Needs Node 22+ (vsce, from the extension's devDependencies: `npm ci` is run when they are
# not installed yet) and, without TRANSCRIPT_LS, Rust.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

target=${1:-}
if [ -z "$target" ]; then
  case "$(uname -s)-$(uname -m)" in
    Linux-x86_64) target=linux-x64 ;;
    Linux-aarch64 | Linux-arm64) target=linux-arm64 ;;
    Darwin-x86_64) target=darwin-x64 ;;
    Darwin-arm64) target=darwin-arm64 ;;
    *) echo "package.sh: unknown platform $(uname -s)-$(uname -m); give the target (e.g. linux-x64)" >&2; exit 2 ;;
  esac
fi
exe=transcript-ls
case $target in win32-*) exe=transcript-ls.exe ;; esac

bin=${TRANSCRIPT_LS:-}
if [ -z "$bin" ]; then
  echo "package.sh: building the server (cargo build --release)" >&2
  (cd "$ROOT" && cargo build --release -p transcript-ls --bin transcript-ls >&2)
  bin=${CARGO_TARGET_DIR:-$ROOT/target}/release/$exe
fi
[ -x "$bin" ] || { echo "package.sh: no server binary at $bin" >&2; exit 1; }

cd "$HERE"
if [ ! -x node_modules/.bin/vsce ]; then
  echo "package.sh: installing the extension's dependencies (npm ci)" >&2
  npm ci >&2
fi
rm -rf server
mkdir server
trap 'rm -rf "$HERE/server"' EXIT
cp "$bin" "server/$exe"
chmod 755 "server/$exe"
out=${OUT:-$HERE/transcript-ls-$target.vsix}
npx --no-install vsce package --target "$target" --allow-missing-repository -o "$out" >&2
echo "$out"
