#!/usr/bin/env bash
# Prints the figures of issue 8's defects for one transcript-ls binary: render time of a
# one-line prompt of 2..32 MB (defect 5), peak memory (max RSS) of `stats` on one million
# `{}` lines and on one million tiny prompts (defect 10), and the exit code and time of
# `stats` on a FIFO and on /dev/zero (defect 4, 10 s limit).
# Usage: tests/attack/figures.sh path/to/transcript-ls [sizes in MB...]
set -u
bin=${1:?usage: figures.sh BINARY [MB...]}
shift
sizes=${*:-2 4 8 16 32}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

rec() { # one Claude Code record: user prompt of the given text
  printf '{"type":"user","uuid":"u%s","parentUuid":null,"sessionId":"s","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"%s"}}\n' "$1" "$2"
}

measure() { # label, command...: prints seconds, max RSS and exit code
  local label=$1; shift
  local out
  out=$( { /usr/bin/time -f '%e %M' timeout 120 "$@" >/dev/null 2>/dev/null; } 2>&1 | tail -1)
  read -r secs kb <<<"$out"
  printf '%-34s %8ss %8s MB\n' "$label" "$secs" "$((kb / 1024))"
}

echo "binary: $bin"
for mb in $sizes; do
  f=$dir/line-$mb.jsonl
  python3 - "$f" "$mb" <<'PY'
import sys
path, mb = sys.argv[1], int(sys.argv[2])
words = ("lorem ipsum dolor sit amet " * (mb * 1024 * 1024 // 27 + 1))[: mb * 1024 * 1024]
with open(path, "w") as f:
    f.write('{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":"%s"}}\n' % words)
PY
  measure "render, one ${mb} MB line" "$bin" render --complete "$f"
done

python3 - "$dir/empty.jsonl" "$dir/tiny.jsonl" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write('{"type":"summary","summary":"s","leafUuid":"x"}\n')
    f.write("{}\n" * 1_000_000)
with open(sys.argv[2], "w") as f:
    for i in range(1_000_000):
        f.write('{"type":"user","uuid":"u%d","sessionId":"s","message":{"role":"user","content":"hi %d"}}\n' % (i, i))
PY
printf 'sizes: {} lines %s MB, tiny prompts %s MB\n' \
  "$(( $(stat -c %s "$dir/empty.jsonl") / 1048576 ))" "$(( $(stat -c %s "$dir/tiny.jsonl") / 1048576 ))"
measure "stats, 1M {} lines" "$bin" stats --complete "$dir/empty.jsonl"
measure "stats, 1M tiny prompts" "$bin" stats --complete "$dir/tiny.jsonl"

mkfifo "$dir/pipe.jsonl"
for f in "$dir/pipe.jsonl" /dev/zero; do
  t0=$(date +%s.%N)
  # At most 2 GB of address space: an unbounded read fails instead of exhausting memory.
  (ulimit -v 2000000; timeout 10 "$bin" stats "$f" >/dev/null 2>&1)
  code=$?
  t1=$(date +%s.%N)
  printf '%-34s exit %s after %.2fs%s\n' "stats $(basename "$f")" "$code" "$(echo "$t1 - $t0" | bc)" \
    "$([ "$code" = 124 ] && echo ' (killed by the 10 s limit)')"
done
