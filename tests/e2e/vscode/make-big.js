// Writes a transcript bigger than VS Code's 50 MB sync limit (LSP-NOTES §5.3): the demo session's
// turns repeated with fresh ids and later timestamps, so it reads as one long session.
//
//   node make-big.js DEMO.jsonl OUT.jsonl [MIN_MB=56]   -> prints {path, bytes, copies}
'use strict';
const fs = require('fs');

const [src, out, minMb = '56'] = process.argv.slice(2);
const lines = fs.readFileSync(src, 'utf8').split('\n').filter((l) => l.trim() !== '');
// The conversation without the preamble (lines 1–3), so every copy starts at a prompt.
const body = lines.slice(3).join('\n') + '\n';
const target = Number(minMb) * 1024 * 1024;
const fd = fs.openSync(out, 'w');
let size = 0;
let copies = 0;
for (let k = 0; size < target; k++, copies++) {
  const shiftMs = k * 3600 * 1000;
  const copy = body
    // ids unique per copy: uuids get a copy number in their last group, message and request
    // ids a prefix, tool ids a suffix
    .replace(/"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-)([0-9a-f]{12})"/g, (_, a, b) =>
      `"${a}${(k.toString(16).padStart(6, '0') + b.slice(6))}"`)
    .replace(/"(msg|req|toolu)_([A-Za-z0-9]+)"/g, (_, p, id) => `"${p}_${id}x${k}"`)
    .replace(/"timestamp":"([^"]+)"/g, (_, t) => `"timestamp":"${new Date(Date.parse(t) + shiftMs).toISOString()}"`);
  fs.writeSync(fd, copy);
  size += Buffer.byteLength(copy);
}
fs.closeSync(fd);
console.log(JSON.stringify({ path: out, bytes: size, copies }));
