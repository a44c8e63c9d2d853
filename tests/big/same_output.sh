#!/usr/bin/env bash
# Issue 12: two builds of transcript-ls give the same output on every transcript we have. Runs
# `render`, `render --verbose`, `stats --json` and `outline` of both binaries on every file of
# the corpus (../shared/corpus, or $TRANSCRIPT_LS_CORPUS) and of fixtures/, and compares their
# standard output, standard error and exit status; prints each difference and exits 1 if any.
# For changes that must not change what anyone sees (how files are read, how fast).
#
# Usage: tests/big/same_output.sh BEFORE_BINARY AFTER_BINARY
# (e.g. a copy of target/release/transcript-ls built on main, and the one of your branch)
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CORPUS=${TRANSCRIPT_LS_CORPUS:-$ROOT/../shared/corpus}
[ $# -eq 2 ] && [ -x "$1" ] && [ -x "$2" ] || {
  echo "usage: $0 BEFORE_BINARY AFTER_BINARY" >&2
  exit 2
}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
mapfile -t FILES < <(find "$CORPUS" "$ROOT/fixtures" -type f \
  \( -name '*.jsonl' -o -name '*.jsonl.zst' -o -name '*.json' \) | sort)
run() { # BIN DIR
  local i=0 f
  mkdir -p "$2"
  for f in "${FILES[@]}"; do
    i=$((i + 1))
    for mode in render render-verbose stats outline; do
      case $mode in
      render) set -- "$1" "$2" render "$f" --width 100 --no-pager --color=never ;;
      render-verbose) set -- "$1" "$2" render "$f" --verbose --width 100 --no-pager --color=never ;;
      stats) set -- "$1" "$2" stats "$f" --json ;;
      outline) set -- "$1" "$2" outline "$f" ;;
      esac
      local bin=$1 dir=$2
      shift 2
      TZ=UTC "$bin" "$@" --time-zone UTC >"$dir/$i.$mode.out" 2>"$dir/$i.$mode.err"
      echo "exit $?" >>"$dir/$i.$mode.err"
      set -- "$bin" "$dir"
    done
  done
}
run "$1" "$OUT/before"
run "$2" "$OUT/after"
if diff -r "$OUT/before" "$OUT/after" >"$OUT/diff"; then
  echo "same output: ${#FILES[@]} files x render, render --verbose, stats --json, outline"
else
  for d in $(diff -rq "$OUT/before" "$OUT/after" | grep -o '[0-9]*\.[a-z-]*\.[a-z]*' | sort -u); do
    i=${d%%.*}
    echo "DIFFERENT: ${FILES[$((i - 1))]} (${d#*.})"
  done
  exit 1
fi
