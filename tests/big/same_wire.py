#!/usr/bin/env python3
"""Issue 24 item 4: two builds of transcript-ls answer the same LSP session with the same bytes.

Runs one session per file and position encoding against each binary over stdio (initialize,
didOpen of the file's text, documentSymbol, foldingRange, semanticTokens/full and /range, codeLens,
inlayHint, hover, a request on an unknown document, the view text, a request without params,
then shutdown + exit sent together) and compares the raw bytes of every response, by id.
Notifications (logs, progress, diagnostics) are timing-dependent and left out. The binary of
main before issue 24 item 4 answers the pipelined shutdown (id 9999) null, RequestCancelled or
not at all, depending on timing; later ones always null.

Usage: tests/big/same_wire.py BEFORE_BINARY AFTER_BINARY FILE...
Exit status 1 when a response differs (each difference printed).
"""
import json, subprocess, sys, os, glob, threading, time

def frame(o):
    b = json.dumps(o).encode()
    return b"Content-Length: %d\r\n\r\n" % len(b) + b

def run(binary, msgs, n_answers):
    p = subprocess.Popen([binary, "--stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = {}
    def reader():
        f = p.stdout
        while True:
            line = f.readline()
            if not line:
                return
            if line.lower().startswith(b"content-length:"):
                n = int(line.split(b":")[1])
                while f.readline() not in (b"\r\n", b"\n"):
                    pass
                body = f.read(n)
                m = json.loads(body)
                if "id" in m and "method" not in m:
                    out[m["id"]] = body
    t = threading.Thread(target=reader, daemon=True); t.start()
    for m in msgs:
        p.stdin.write(frame(m)); p.stdin.flush()
        if m.get("method") == "initialize":
            while 1 not in out: time.sleep(0.01)
    t0 = time.time()
    while len(out) < n_answers and time.time() - t0 < 120:
        time.sleep(0.02)
    p.stdin.write(frame({"jsonrpc": "2.0", "id": 9999, "method": "shutdown"}))
    p.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"})); p.stdin.flush()
    p.wait(timeout=30)
    return out

def session(path, utf8):
    uri = "file://" + path
    text = open(path, encoding="utf-8", errors="replace").read()
    caps = {"general": {"positionEncodings": ["utf-8"] if utf8 else ["utf-16"]},
            "textDocument": {"documentSymbol": {"hierarchicalDocumentSymbolSupport": True}}}
    td = {"textDocument": {"uri": uri}}
    rng = {"start": {"line": 0, "character": 0}, "end": {"line": 10**6, "character": 0}}
    reqs = [("textDocument/documentSymbol", td), ("textDocument/foldingRange", td),
            ("textDocument/semanticTokens/full", td), ("textDocument/codeLens", td),
            ("textDocument/inlayHint", dict(td, range=rng)),
            ("textDocument/semanticTokens/range", dict(td, range=rng)),
            ("textDocument/hover", dict(td, position={"line": 3, "character": 5})),
            ("textDocument/documentSymbol", {"textDocument": {"uri": "file:///nowhere.jsonl"}}),
            ("workspace/textDocumentContent", {"uri": "transcript://" + path})]
    msgs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "capabilities": caps, "initializationOptions": {"fileState": "complete"}}},
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
            {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": uri, "languageId": "jsonl", "version": 1, "text": text}}}]
    for i, (m, p) in enumerate(reqs):
        msgs.append({"jsonrpc": "2.0", "id": 10 + i, "method": m, "params": p})
    msgs.append({"jsonrpc": "2.0", "id": "bad", "method": "textDocument/documentSymbol"})
    return msgs, len(reqs) + 2

a, b = sys.argv[1], sys.argv[2]
files = sys.argv[3:]
diff = 0; total = 0
for f in files:
    for utf8 in (False, True):
        msgs, n = session(f, utf8)
        ra, rb = run(a, msgs, n), run(b, msgs, n)
        for k in sorted(set(ra) | set(rb), key=str):
            total += 1
            if ra.get(k) != rb.get(k):
                diff += 1
                print("DIFF", f, utf8, k, (ra.get(k) or b"")[:200], (rb.get(k) or b"")[:200])
print(f"{len(files)} files x 2 encodings, {total} responses, {diff} differ")
sys.exit(1 if diff else 0)
