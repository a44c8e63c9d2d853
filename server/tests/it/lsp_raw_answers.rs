//! Answers made as JSON bytes (issue 12): `textDocument/documentSymbol` is assembled from
//! per-turn cached JSON, folding ranges, full semantic tokens and code lenses are serialised
//! straight to bytes, and the transport frames them as they are. Their JSON must
//! equal what tower-lsp-server writes for the typed answer made from scratch (the server's
//! `reference_answers` mode), on every corpus transcript, in both position encodings, nested
//! and flat, and after every append of a growing document (the cache keeps the turns an
//! append did not change); over stdio, the frames the transport writes are well formed, carry
//! the same JSON, also when a request is cancelled.

use crate::lsp_common;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::Ordering;

use lsp_common::*;
use serde_json::{Value, json};

fn corpus_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    jsonl_files(&shared_dir().join("corpus"), &mut files);
    assert!(files.len() > 20, "corpus not found: {}", files.len());
    files
}

/// Client capabilities: VS Code-like (UTF-16) or Neovim-like (UTF-8), with or without
/// hierarchical document symbols.
fn caps(utf8: bool, hierarchical: bool) -> Value {
    let mut c = client_caps(utf8);
    c["textDocument"]["documentSymbol"]["hierarchicalDocumentSymbolSupport"] = json!(hierarchical);
    c
}

/// A server answering from its caches (as served) and one answering from scratch through
/// tower-lsp-server's typed path (the reference).
async fn pair(utf8: bool, hierarchical: bool) -> (TestClient, TestClient) {
    let opts = json!({"fileState": "complete"});
    let (served, _) = TestClient::start(caps(utf8, hierarchical), opts.clone()).await;
    let (reference, _) = TestClient::start(caps(utf8, hierarchical), opts).await;
    reference
        .service
        .shared()
        .reference_answers
        .store(true, Ordering::SeqCst);
    (served, reference)
}

async fn symbols(c: &mut TestClient, uri: &str) -> Value {
    c.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": uri}}),
    )
    .await
    .unwrap_or_else(|e| panic!("documentSymbol {uri}: {e:?}"))
}

/// The other whole-document requests answered as JSON bytes (inlay hints of the whole
/// document, as Neovim asks for them, and of a few lines in the middle).
const WHOLE_DOCUMENT: [&str; 5] = [
    "textDocument/foldingRange",
    "textDocument/semanticTokens/full",
    "textDocument/inlayHint",
    "textDocument/codeLens",
    INLAY_HINTS_IN_THE_MIDDLE,
];

/// `textDocument/inlayHint` on lines 30–90 (see [`ask`]).
const INLAY_HINTS_IN_THE_MIDDLE: &str = "textDocument/inlayHint (lines 30-90)";

/// The method and params of one of [`WHOLE_DOCUMENT`] on `uri`.
fn request_of(method: &str, uri: &str) -> (&'static str, Value) {
    let doc = json!({"uri": uri});
    let range = |from: u32, to: u32| json!({"start": {"line": from, "character": 3}, "end": {"line": to, "character": 0}});
    match method {
        "textDocument/inlayHint" => (
            "textDocument/inlayHint",
            json!({"textDocument": doc, "range": range(0, 1_000_000)}),
        ),
        INLAY_HINTS_IN_THE_MIDDLE => (
            "textDocument/inlayHint",
            json!({"textDocument": doc, "range": range(30, 90)}),
        ),
        _ => {
            let m = WHOLE_DOCUMENT
                .into_iter()
                .find(|m| *m == method)
                .unwrap_or_else(|| panic!("not a whole-document request: {method}"));
            (m, json!({"textDocument": doc}))
        }
    }
}

async fn ask(c: &mut TestClient, method: &str, uri: &str) -> Value {
    let middle = method == INLAY_HINTS_IN_THE_MIDDLE;
    let (method, params) = request_of(method, uri);
    match c.request(method, params).await {
        Ok(v) => v,
        // A document shorter than the range's start: the error must be the same.
        Err(e) if middle => json!({"error": e.0, "message": e.1}),
        Err(e) => panic!("{method} {uri}: {e:?}"),
    }
}

/// `textDocument/semanticTokens/full/delta` on the last full answer `previous` (its
/// `resultId`).
async fn delta(c: &mut TestClient, uri: &str, previous: &Value) -> Value {
    let id = previous["resultId"].as_str().expect("a resultId");
    c.request(
        "textDocument/semanticTokens/full/delta",
        json!({"textDocument": {"uri": uri}, "previousResultId": id}),
    )
    .await
    .unwrap_or_else(|e| panic!("semanticTokens/full/delta {uri}: {e:?}"))
}

fn count(v: &Value) -> usize {
    v.as_array()
        .map(|a| a.iter().map(|s| 1 + count(&s["children"])).sum())
        .unwrap_or(0)
}

/// Every corpus transcript, raw and as a view, in both encodings, nested and flat: the JSON
/// answer equals the typed one (asked twice on the raw document, the second from the cache);
/// so do folding ranges, full semantic tokens and code lenses.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn document_symbols_as_json_equal_the_typed_answers_on_the_corpus() {
    let files = corpus_files();
    let mut symbols_seen = 0;
    for (utf8, hierarchical) in [(false, true), (true, true), (false, false)] {
        let (mut served, mut reference) = pair(utf8, hierarchical).await;
        for path in &files {
            let name = path.display().to_string();
            let uri = served.open_file(path).await;
            reference.open_file(path).await;
            let want = symbols(&mut reference, &uri).await;
            assert_eq!(symbols(&mut served, &uri).await, want, "{name}");
            assert_eq!(symbols(&mut served, &uri).await, want, "{name} (cached)");
            symbols_seen += count(&want);
            for method in WHOLE_DOCUMENT {
                let want = ask(&mut reference, method, &uri).await;
                assert_eq!(
                    ask(&mut served, method, &uri).await,
                    want,
                    "{name} {method}"
                );
                // Folding ranges asked again of the same snapshot: the last answer kept.
                // (Full semantic tokens carry a new result id each time.)
                if method == "textDocument/foldingRange" {
                    assert_eq!(
                        ask(&mut served, method, &uri).await,
                        want,
                        "{name} {method} (again)"
                    );
                }
            }
            if hierarchical && !utf8 {
                let view = view_uri(path, None);
                served.open_view(&view).await;
                reference.open_view(&view).await;
                let want = symbols(&mut reference, &view).await;
                assert_eq!(symbols(&mut served, &view).await, want, "{name} view");
                for method in WHOLE_DOCUMENT {
                    let want = ask(&mut reference, method, &view).await;
                    assert_eq!(
                        ask(&mut served, method, &view).await,
                        want,
                        "{name} view {method}"
                    );
                }
            }
            for c in [&mut served, &mut reference] {
                c.notify(
                    "textDocument/didClose",
                    json!({"textDocument": {"uri": uri}}),
                )
                .await;
            }
        }
    }
    assert!(symbols_seen > 1_500, "{symbols_seen} symbols compared");
}

/// The `didChange` that appends `text` at line `line` (the end of a text ending in `\n`).
fn append(uri: &str, version: i64, line: usize, text: &str) -> Value {
    json!({
        "textDocument": {"uri": uri, "version": version},
        "contentChanges": [{
            "range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}},
            "text": text
        }]
    })
}

/// Lines of a transcript, each with its `\n`.
fn lines_of(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .split_inclusive('\n')
        .map(|l| {
            if l.ends_with('\n') {
                l.to_string()
            } else {
                format!("{l}\n")
            }
        })
        .collect()
}

/// Files of several formats whose outline changes as they grow.
fn growing_files() -> Vec<PathBuf> {
    let files = corpus_files();
    let pick = |needle: &str| {
        files
            .iter()
            .find(|p| p.to_string_lossy().contains(needle))
            .unwrap_or_else(|| panic!("no corpus file matching {needle}"))
            .clone()
    };
    vec![
        pick("/258c7280-ae70-4798-800f-63464d01a85d.jsonl"), // Claude Code, 2.8 MB
        pick("codex/regressions"),                           // Codex
        pick("pi/regressions"),                              // Pi, 2.5 MB
        pick("copilot/scenarios/1-4"),                       // Copilot CLI
        pick("images-in-tool-results"),                      // Claude Code, images
    ]
}

/// A document grown record by record from the editor (both encodings, nested and flat): after
/// every append the JSON answer
/// (served from the per-turn cache, re-serialising only what changed) equals the typed answer
/// made from scratch; an edit inside the text (not an append) and a whole-text change too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn appends_keep_the_json_answer_exact() {
    for (utf8, hierarchical) in [(false, true), (true, true), (false, false)] {
        let (mut served, mut reference) = pair(utf8, hierarchical).await;
        for path in growing_files() {
            let name = path.display().to_string();
            let lines = lines_of(&path);
            let uri = file_uri(&path);
            let start = lines.len() / 3;
            let head: String = lines[..start].concat();
            served.open(&uri, &head).await;
            reference.open(&uri, &head).await;
            assert_eq!(
                symbols(&mut served, &uri).await,
                symbols(&mut reference, &uri).await
            );
            // Every record up to 120 appends, then larger steps to the end.
            let mut at = start;
            let mut version = 1;
            let mut checked = 0;
            let mut last_tokens: Option<Value> = None;
            while at < lines.len() {
                let step = if at < start + 120 { 1 } else { 25 };
                let chunk: String = lines[at..(at + step).min(lines.len())].concat();
                version += 1;
                let change = append(&uri, version, at, &chunk);
                served
                    .notify("textDocument/didChange", change.clone())
                    .await;
                reference.notify("textDocument/didChange", change).await;
                at += step;
                let want = symbols(&mut reference, &uri).await;
                assert_eq!(
                    symbols(&mut served, &uri).await,
                    want,
                    "{name}: after line {at}"
                );
                // Folding ranges, semantic tokens and inlay hints of the whole document after
                // every append (cached per turn, issue 12), the others now and then, and
                // the tokens' delta on the previous full answer.
                let every = if checked % 10 == 0 { 5 } else { 3 };
                {
                    for method in &WHOLE_DOCUMENT[..every] {
                        // The delta on the last full answer (then a full one for the next).
                        if method.ends_with("semanticTokens/full")
                            && let Some(previous) = &last_tokens
                        {
                            let want = delta(&mut reference, &uri, previous).await;
                            assert_eq!(
                                delta(&mut served, &uri, previous).await,
                                want,
                                "{name} semanticTokens/full/delta after line {at}"
                            );
                            assert!(want.get("edits").is_some(), "{name}: a delta: {want}");
                        }
                        let want = ask(&mut reference, method, &uri).await;
                        assert_eq!(
                            ask(&mut served, method, &uri).await,
                            want,
                            "{name} {method} after line {at}"
                        );
                        if method.ends_with("semanticTokens/full") {
                            last_tokens = Some(want);
                        }
                    }
                }
                checked += 1;
            }
            assert!(checked > 0, "{name}: {checked} appends");
            // An edit inside the text: the first line's first character doubled.
            version += 1;
            let edit = json!({
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{
                    "range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 1}},
                    "text": "{ "
                }]
            });
            served.notify("textDocument/didChange", edit.clone()).await;
            reference.notify("textDocument/didChange", edit).await;
            let want = symbols(&mut reference, &uri).await;
            assert_eq!(symbols(&mut served, &uri).await, want, "{name}: edit");
            for method in WHOLE_DOCUMENT {
                let want = ask(&mut reference, method, &uri).await;
                assert_eq!(
                    ask(&mut served, method, &uri).await,
                    want,
                    "{name}: edit {method}"
                );
            }
            // A record in the middle replaced by the one before it: the same lines, other
            // content (the snapshot is built afresh; no turn's cached piece may be reused).
            let mid = lines.len() / 2;
            version += 1;
            let swap = json!({
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{
                    "range": {"start": {"line": mid, "character": 0}, "end": {"line": mid + 1, "character": 0}},
                    "text": lines[mid - 1]
                }]
            });
            served.notify("textDocument/didChange", swap.clone()).await;
            reference.notify("textDocument/didChange", swap).await;
            let want = symbols(&mut reference, &uri).await;
            assert_eq!(symbols(&mut served, &uri).await, want, "{name}: swapped");
            for method in WHOLE_DOCUMENT {
                let want = ask(&mut reference, method, &uri).await;
                assert_eq!(
                    ask(&mut served, method, &uri).await,
                    want,
                    "{name}: swapped {method}"
                );
            }
            // The whole text replaced by its first half.
            version += 1;
            let half = json!({
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"text": lines[..lines.len() / 2].concat()}]
            });
            served.notify("textDocument/didChange", half.clone()).await;
            reference.notify("textDocument/didChange", half).await;
            let want = symbols(&mut reference, &uri).await;
            assert_eq!(symbols(&mut served, &uri).await, want, "{name}: replaced");
            for method in WHOLE_DOCUMENT {
                let want = ask(&mut reference, method, &uri).await;
                assert_eq!(
                    ask(&mut served, method, &uri).await,
                    want,
                    "{name}: replaced {method}"
                );
            }
            for c in [&mut served, &mut reference] {
                c.notify(
                    "textDocument/didClose",
                    json!({"textDocument": {"uri": uri}}),
                )
                .await;
            }
        }
    }
}

/// The requests answered as JSON bytes are served by the seam (`TranscriptService`), not by
/// tower-lsp-server's handlers (issue 24 item 4): they are refused as tower-lsp-server refuses
/// its own methods in the same state (`textDocument/hover` is the witness: `-32002` before
/// `initialize` is answered, `InvalidRequest` after `shutdown`), and there is no internal
/// method name left for a client to call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_answered_requests_follow_the_servers_state() {
    use tower::{Service, ServiceExt};
    use tower_lsp_server::jsonrpc::Request;
    async fn code(
        s: &mut transcript_ls::lsp::TranscriptService,
        method: &str,
        params: Value,
    ) -> Value {
        let req = Request::build(method.to_string())
            .id(1)
            .params(params)
            .finish();
        let resp = s.ready().await.unwrap().call(req).await.unwrap();
        serde_json::to_value(resp).unwrap()["error"]["code"].clone()
    }
    let (mut s, _socket) = transcript_ls::lsp::build_service();
    let doc = json!({"textDocument": {"uri": "file:///nowhere.jsonl"},
        "position": {"line": 0, "character": 0},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}});
    let states = ["before initialize", "initialized", "after shutdown"];
    for state in states {
        match state {
            "initialized" => {
                let init = json!({"capabilities": client_caps(false)});
                assert_eq!(code(&mut s, "initialize", init).await, Value::Null);
            }
            "after shutdown" => {
                assert_eq!(code(&mut s, "shutdown", Value::Null).await, Value::Null);
            }
            _ => {}
        }
        let witness = code(&mut s, "textDocument/hover", doc.clone()).await;
        for method in transcript_ls::lsp::dispatch::RAW_ANSWERED {
            let got = code(&mut s, method, doc.clone()).await;
            assert_eq!(got, witness, "{method} {state}");
        }
        let internal = "transcript/internal/raw/textDocument/documentSymbol";
        let got = code(&mut s, internal, doc.clone()).await;
        assert_eq!(got, json!(-32601), "{internal} {state}");
    }
}

/// The release or debug binary over stdio.
struct Wire {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    out: BufReader<std::process::ChildStdout>,
}

impl Wire {
    fn start() -> Wire {
        let mut child = Command::new(env!("CARGO_BIN_EXE_transcript-ls"))
            .arg("--stdio")
            .stdin(Stdio_::piped())
            .stdout(Stdio_::piped())
            .stderr(Stdio_::null())
            .spawn()
            .expect("start the server");
        let stdin = child.stdin.take().unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        Wire { child, stdin, out }
    }

    fn send(&mut self, msg: Value) {
        let body = msg.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next message, its body as sent (the header's `Content-Length` must be exact: the
    /// next header is read right after it).
    fn recv(&mut self) -> (Value, Vec<u8>) {
        let mut len = None;
        loop {
            let mut line = String::new();
            assert!(
                self.out.read_line(&mut line).unwrap() > 0,
                "server closed stdout"
            );
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            let (name, value) = line.split_once(':').expect("a header line");
            assert!(name.eq_ignore_ascii_case("content-length"), "header {line}");
            len = Some(value.trim().parse::<usize>().unwrap());
        }
        let mut body = vec![0; len.expect("Content-Length")];
        self.out.read_exact(&mut body).unwrap();
        let v = serde_json::from_slice(&body).expect("a JSON body");
        (v, body)
    }

    /// Responses (by id) until the one with `id`; server requests answered `null`. Panics if
    /// any message carries a placeholder.
    fn until(&mut self, id: i64) -> Vec<Value> {
        let mut got = Vec::new();
        loop {
            let (m, body) = self.recv();
            assert!(
                memchr_find(&body, b"transcript-ls raw result").is_none(),
                "a placeholder reached the client: {m}"
            );
            if let (Some(rid), Some(_)) = (m.get("id"), m.get("method")) {
                let rid = rid.clone();
                self.send(json!({"jsonrpc": "2.0", "id": rid, "result": null}));
                continue;
            }
            if m.get("method").is_some() {
                continue;
            }
            let done = m["id"] == json!(id);
            got.push(m);
            if done {
                return got;
            }
        }
    }
}

use std::process::Stdio as Stdio_;

/// Where `needle` occurs in `hay`.
fn memchr_find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

impl Drop for Wire {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Over stdio, the transport writes the JSON answers in place of their placeholders: the
/// frames parse with their `Content-Length`, and the answers equal the typed ones while the
/// document grows; a request cancelled at once is answered (a result or `RequestCancelled`)
/// without a placeholder, and the server keeps answering.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spliced_answers_over_stdio_equal_the_typed_ones() {
    let path = growing_files().remove(0);
    let lines = lines_of(&path);
    let uri = file_uri(&path);
    let (_, mut reference) = pair(false, true).await;
    let mut s = Wire::start();
    s.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"processId": null, "rootUri": null, "capabilities": caps(false, true),
                   "initializationOptions": {"fileState": "complete", "indexCache": false}}}));
    s.until(1);
    s.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    let start = lines.len() / 2;
    let head: String = lines[..start].concat();
    let open =
        json!({"textDocument": {"uri": uri, "languageId": "jsonl", "version": 1, "text": head}});
    s.send(json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": open}));
    reference.notify("textDocument/didOpen", open).await;
    let td = json!({"textDocument": {"uri": uri}});
    let mut id = 10;
    let mut version = 1;
    for at in start..start + 40 {
        if at > start {
            version += 1;
            let change = append(&uri, version, at - 1, &lines[at - 1]);
            s.send(json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": change}));
            reference.notify("textDocument/didChange", change).await;
        }
        id += 1;
        s.send(json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/documentSymbol", "params": td}));
        let got = s.until(id).pop().unwrap();
        let want = symbols(&mut reference, &uri).await;
        assert!(count(&want) > 20, "{}", want);
        assert_eq!(got["result"], want, "after line {at}");
    }
    // Cancelled at once, several times over; then a request that must be answered whole.
    for _ in 0..5 {
        id += 1;
        s.send(json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/documentSymbol", "params": td}));
        s.send(json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": id}}));
    }
    id += 1;
    s.send(
        json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/documentSymbol", "params": td}),
    );
    let got = s.until(id);
    for m in &got[..got.len() - 1] {
        assert!(
            m.get("result").is_some() || m["error"]["code"] == json!(-32800),
            "{m}"
        );
    }
    let want = symbols(&mut reference, &uri).await;
    assert_eq!(got.last().unwrap()["result"], want);
    for method in WHOLE_DOCUMENT {
        id += 1;
        let (m, params) = request_of(method, &uri);
        s.send(json!({"jsonrpc": "2.0", "id": id, "method": m, "params": params}));
        let got = s.until(id).pop().unwrap();
        assert_eq!(
            got["result"],
            ask(&mut reference, method, &uri).await,
            "{method}"
        );
    }
    s.send(json!({"jsonrpc": "2.0", "id": 99, "method": "shutdown"}));
    s.until(99);
    s.send(json!({"jsonrpc": "2.0", "method": "exit"}));
}
