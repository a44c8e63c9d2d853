//! Defects found by attacking the server (issue 8), each reproduced through the in-process
//! service: the editor's text and the server's must not diverge, a document that starts badly
//! recovers, `$/` requests are answered, and a panicking handler leaves the server answering.

use crate::lsp_common;

use lsp_common::*;
use serde_json::{Value, json};
use tower::{Service, ServiceExt};
use tower_lsp_server::jsonrpc::Request;

/// A two-record Claude Code transcript (one turn), each record on its own line.
fn turn(n: usize, prompt: &str) -> String {
    let u = json!({"type":"user","uuid":format!("u{n}"),"parentUuid":null,"sessionId":"s",
        "timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":prompt}});
    let a = json!({"type":"assistant","uuid":format!("a{n}"),"parentUuid":format!("u{n}"),
        "sessionId":"s","timestamp":"2026-01-01T00:00:05Z",
        "message":{"role":"assistant","model":"m","content":[{"type":"text","text":"ok"}],
                   "stop_reason":"end_turn"}});
    format!("{u}\n{a}\n")
}

/// The server's text of a raw document.
fn server_text(c: &TestClient, uri: &str) -> String {
    c.service
        .shared()
        .host
        .raw_source(&transcript_ls::store::host::DocId::new(uri))
        .expect("open")
        .text()
        .to_string()
}

fn symbol_names(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|s| s["name"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Defect 1: a raw U+2028 (written unescaped by Node's `JSON.stringify`) is line content, not a
/// line break; an incremental edit on a later line lands where the editor put it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn incremental_edit_after_raw_line_separator() {
    let (mut c, _) = TestClient::start(client_caps(false), json!({"roots": []})).await;
    let uri = "file:///tmp/sep.jsonl";
    let text = "{\"a\":\"x\u{2028}y\u{2029}z\u{85}w\rv\u{b}\u{c}\"}\n{\"b\":1}\n";
    c.open(uri, text).await;
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2},
               "contentChanges": [
                   {"range": {"start": {"line": 1, "character": 1}, "end": {"line": 1, "character": 4}},
                    "text": "\"c\""},
                   {"range": {"start": {"line": 2, "character": 0}, "end": {"line": 2, "character": 0}},
                    "text": "{\"d\":2}\n"}]}),
    )
    .await;
    assert_eq!(
        server_text(&c, uri),
        "{\"a\":\"x\u{2028}y\u{2029}z\u{85}w\rv\u{b}\u{c}\"}\n{\"c\":1}\n{\"d\":2}\n"
    );
    c.shutdown().await;
}

/// Defect 2: a document whose first line is not a record is not "not a transcript" forever:
/// once records are appended it reads as a fresh server reads the same text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_line_not_a_record_recovers_after_append() {
    for first in ["garbage", "{}", "[1]", "\u{feff}"] {
        let (mut c, _) = TestClient::start(client_caps(false), json!({"roots": []})).await;
        let uri = "file:///tmp/late.jsonl";
        let start = format!("{first}\n");
        c.open(uri, &start).await;
        let before = c
            .request(
                "textDocument/documentSymbol",
                json!({"textDocument": {"uri": uri}}),
            )
            .await
            .unwrap();
        assert!(symbol_names(&before).is_empty(), "{first:?}: {before}");
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": 2},
                   "contentChanges": [{"range": {"start": {"line": 1, "character": 0},
                                                 "end": {"line": 1, "character": 0}},
                                       "text": turn(1, "first question")}]}),
        )
        .await;
        let after = c
            .request(
                "textDocument/documentSymbol",
                json!({"textDocument": {"uri": uri}}),
            )
            .await
            .unwrap();
        // A fresh server on the same text.
        let (mut fresh, _) = TestClient::start(client_caps(false), json!({"roots": []})).await;
        fresh.open(uri, &server_text(&c, uri)).await;
        let expected = fresh
            .request(
                "textDocument/documentSymbol",
                json!({"textDocument": {"uri": uri}}),
            )
            .await
            .unwrap();
        assert_eq!(after, expected, "{first:?}");
        assert!(
            symbol_names(&after).contains(&"Turn 1: first question".to_string()),
            "{first:?}: {after}"
        );
        c.shutdown().await;
        fresh.shutdown().await;
    }
}

/// Defect 6: a request whose method starts with `$/` is answered with MethodNotFound (LSP
/// 3.17 "$ Notifications and Requests"); a `$/` notification stays unanswered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dollar_requests_get_method_not_found() {
    let (mut c, _) = TestClient::start(client_caps(false), json!({"roots": []})).await;
    let req = Request::build("$/unknownThing")
        .id(77)
        .params(json!({}))
        .finish();
    let resp = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        c.service.ready().await.unwrap().call(req),
    )
    .await
    .expect("answered in time")
    .expect("service call")
    .expect("a response");
    let (id, body) = resp.into_parts();
    assert_eq!(id, tower_lsp_server::jsonrpc::Id::Number(77));
    assert_eq!(body.unwrap_err().code.code(), -32601);
    c.notify("$/unknownNotification", json!({})).await;
    // The server still answers.
    c.open("file:///tmp/d.jsonl", &turn(1, "q")).await;
    let syms = c
        .request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": "file:///tmp/d.jsonl"}}),
        )
        .await
        .unwrap();
    assert_eq!(symbol_names(&syms), vec!["Turn 1: q"]);
    c.shutdown().await;
}

/// Defect 12: past the cap, one more diagnostic says how many problems were left out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diagnostics_cap_ends_with_a_marker() {
    let (mut c, _) = TestClient::start(client_caps(false), json!({"roots": []})).await;
    let uri = "file:///tmp/many.jsonl";
    let mut text = turn(1, "q");
    for _ in 0..1500 {
        text.push_str("not json\n");
    }
    c.open(uri, &text).await;
    let d = c.diagnostics(uri, 1).await;
    let shown = show_diagnostics(&d);
    assert_eq!(shown.len(), 1001);
    assert_eq!(
        shown[1000],
        "L1003:1-L1003:2 information truncated: 500 more problems from line 1003 on are not shown (at most 1000 are published per document)"
    );
    assert!(
        shown[999].starts_with("L1002:1-L1002:2 warning invalid-line"),
        "{}",
        shown[999]
    );
    c.shutdown().await;
}

/// Defect 9: bidi overrides and zero-width characters never reach a title, a symbol name or
/// the view as themselves: they are shown as `<U+202E>` escapes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invisible_controls_are_escaped_in_titles_symbols_and_view() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spoof.jsonl");
    let prompt = "review \u{202E}txt.exe\u{202C} and \u{2066}x\u{2069}\u{200B}\u{FEFF}";
    std::fs::write(&path, turn(1, prompt)).unwrap();
    let (mut c, _) = TestClient::start(client_caps(false), json!({"roots": []})).await;
    let uri = c.open_file(&path).await;
    let syms = c
        .request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": uri}}),
        )
        .await
        .unwrap();
    let expected = "Turn 1: review <U+202E>txt.exe<U+202C> and <U+2066>x<U+2069><U+200B><U+FEFF>";
    assert_eq!(symbol_names(&syms), vec![expected]);
    let view = c.open_view(&view_uri(&path, None)).await;
    let bad = |s: &str| {
        s.chars()
            .any(|c| matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200B}'..='\u{200D}' | '\u{FEFF}'))
    };
    assert!(!bad(&view), "{view}");
    assert!(view.contains("review <U+202E>txt.exe<U+202C>"), "{view}");
    c.shutdown().await;
}

/// Defect 4: a view of a FIFO is refused at once (it used to be never answered, and the
/// blocked read kept the process alive after `exit`).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn view_of_a_fifo_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.jsonl");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let (mut c, _) = TestClient::start(client_caps(false), json!({"roots": []})).await;
    let r = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        c.request(
            "workspace/textDocumentContent",
            json!({"uri": view_uri(&fifo, None)}),
        ),
    )
    .await
    .expect("answered");
    let (_, msg) = r.unwrap_err();
    assert!(
        msg.contains("is a FIFO (named pipe), not a regular file"),
        "{msg}"
    );
    c.shutdown().await;
}

/// Defect 8: the watcher and the index agree: a symlinked directory under a root is not
/// followed (its files never reach workspace symbols, even when they change), while a new
/// file in a real subdirectory is indexed.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn symlinked_directories_are_neither_indexed_nor_watched() {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let root_path = std::fs::canonicalize(root.path()).unwrap();
    std::fs::create_dir(root_path.join("real")).unwrap();
    std::fs::write(root_path.join("real/a.jsonl"), turn(1, "inside alpha")).unwrap();
    std::fs::write(outside.path().join("b.jsonl"), turn(1, "outside beta")).unwrap();
    std::os::unix::fs::symlink(outside.path(), root_path.join("link")).unwrap();
    let (mut c, _) = TestClient::start(
        client_caps(false),
        json!({"roots": [root_path.to_str().unwrap()]}),
    )
    .await;
    let names = |v: Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap().to_string())
            .collect()
    };
    c.wait_for(std::time::Duration::from_secs(20), |s| {
        s.method == "$/progress" && s.params["value"]["kind"] == "end"
    })
    .await
    .expect("index built");
    let all = names(
        c.request("workspace/symbol", json!({"query": ""}))
            .await
            .unwrap(),
    );
    assert_eq!(all, vec!["Turn 1: inside alpha"]);
    // Change the file behind the symlink, and add a file in the real directory.
    std::fs::write(
        outside.path().join("b.jsonl"),
        turn(1, "outside beta") + &turn(2, "outside gamma"),
    )
    .unwrap();
    std::fs::write(root_path.join("real/c.jsonl"), turn(1, "inside delta")).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let all = loop {
        let all = names(
            c.request("workspace/symbol", json!({"query": ""}))
                .await
                .unwrap(),
        );
        if all.len() >= 2 || std::time::Instant::now() > deadline {
            break all;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    // Give a wrongly followed symlink time to show up too.
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let again = names(
        c.request("workspace/symbol", json!({"query": ""}))
            .await
            .unwrap(),
    );
    assert_eq!(all, vec!["Turn 1: inside alpha", "Turn 1: inside delta"]);
    assert_eq!(again, all);
    c.shutdown().await;
}

async fn folds(c: &mut TestClient, uri: &str) -> Value {
    c.request(
        "textDocument/foldingRange",
        json!({"textDocument": {"uri": uri}}),
    )
    .await
    .unwrap()
}

/// Panic isolation (issue 8): a handler that panics, in its future or on the blocking pool, is
/// answered with an InternalError naming the request, the panic is logged, and the server and
/// the document go on answering as before (also after an edit). `transcript/debugPanic`
/// exists in debug builds only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_request_leaves_the_server_and_document_intact() {
    let (mut c, _) = TestClient::start(client_caps(false), json!({"roots": []})).await;
    let uri = "file:///tmp/panic.jsonl";
    c.open(uri, &turn(1, "before")).await;
    let before = folds(&mut c, uri).await;
    let syms_before = c
        .request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": uri}}),
        )
        .await
        .unwrap();
    for at in ["inline", "blocking"] {
        let err = c
            .request("transcript/debugPanic", json!({"uri": uri, "where": at}))
            .await
            .unwrap_err();
        assert_eq!(err.0, -32603, "{at}: {err:?}");
        assert!(
            err.1.starts_with(
                "request transcript/debugPanic failed: internal error (deliberate panic"
            ),
            "{at}: {err:?}"
        );
        let log = c
            .wait_for(std::time::Duration::from_secs(5), |s| {
                s.method == "window/logMessage"
                    && s.params["message"].as_str().is_some_and(|m| {
                        m.starts_with("request transcript/debugPanic panicked: deliberate panic")
                    })
            })
            .await;
        assert!(
            log.is_some(),
            "{at}: the panic is logged with the request's name"
        );
        c.clear_sent();
        assert_eq!(folds(&mut c, uri).await, before, "{at}");
        let syms = c
            .request(
                "textDocument/documentSymbol",
                json!({"textDocument": {"uri": uri}}),
            )
            .await
            .unwrap();
        assert_eq!(syms, syms_before, "{at}");
    }
    // Edits still apply and are seen.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2},
               "contentChanges": [{"range": {"start": {"line": 2, "character": 0},
                                             "end": {"line": 2, "character": 0}},
                                   "text": turn(2, "after")}]}),
    )
    .await;
    let syms = c
        .request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": uri}}),
        )
        .await
        .unwrap();
    assert_eq!(symbol_names(&syms), vec!["Turn 1: before", "Turn 2: after"]);
    c.shutdown().await;
}

/// Removes every `resultId` (semantic tokens number their results) so that two answers to the
/// same request can be compared.
fn without_result_ids(mut v: Value) -> Value {
    match &mut v {
        Value::Object(o) => {
            o.remove("resultId");
            for x in o.values_mut() {
                *x = without_result_ids(x.take());
            }
        }
        Value::Array(a) => {
            for x in a.iter_mut() {
                *x = without_result_ids(x.take());
            }
        }
        _ => {}
    }
    v
}

/// Panic isolation for every request family (issue 8): `transcript/debugPanic` with `arm`
/// makes the next request of a method panic on the blocking pool, where every handler runs.
/// Each family answers an InternalError naming the request, logs the panic, and then answers
/// exactly as before; the raw document still takes edits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_in_any_request_family_leaves_the_server_answering() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("families.jsonl");
    // Turn 1; turn 2 runs one tool (lines 2-5): a tool_use and its tool_result.
    let call = json!({"type":"assistant","uuid":"a2","parentUuid":"u2","sessionId":"s",
        "timestamp":"2026-01-01T00:00:06Z",
        "message":{"role":"assistant","model":"m","content":[
            {"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}]}});
    let result = json!({"type":"user","uuid":"r2","parentUuid":"a2","sessionId":"s",
        "timestamp":"2026-01-01T00:00:07Z",
        "message":{"role":"user","content":[
            {"type":"tool_result","tool_use_id":"toolu_1","content":"a.txt"}]}});
    let answer = json!({"type":"assistant","uuid":"a3","parentUuid":"r2","sessionId":"s",
        "timestamp":"2026-01-01T00:00:08Z",
        "message":{"role":"assistant","model":"m","content":[{"type":"text","text":"done"}],
                   "stop_reason":"end_turn"}});
    let prompt = json!({"type":"user","uuid":"u2","parentUuid":"a1","sessionId":"s",
        "timestamp":"2026-01-01T00:00:05Z","message":{"role":"user","content":"second"}});
    std::fs::write(
        &path,
        format!("{}{prompt}\n{call}\n{result}\n{answer}\n", turn(1, "first")),
    )
    .unwrap();
    let (mut c, _) = TestClient::start(client_caps(false), json!({"roots": []})).await;
    let raw = c.open_file(&path).await;
    let view = view_uri(&path, None);
    c.open_view(&view).await;
    let doc = |uri: &str| json!({"textDocument": {"uri": uri}});
    let at = |uri: &str, line: u32| {
        json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": 2},
               "context": {"includeDeclaration": true}})
    };
    let whole = |uri: &str| {
        json!({"textDocument": {"uri": uri},
               "range": {"start": {"line": 0, "character": 0}, "end": {"line": 3, "character": 0}}})
    };
    let requests: Vec<(&str, Value)> = vec![
        ("textDocument/foldingRange", doc(&raw)),
        ("textDocument/foldingRange", doc(&view)),
        ("textDocument/documentSymbol", doc(&raw)),
        ("textDocument/semanticTokens/full", doc(&view)),
        (
            "textDocument/semanticTokens/full/delta",
            json!({"textDocument": {"uri": raw}, "previousResultId": "none"}),
        ),
        ("textDocument/semanticTokens/range", whole(&raw)),
        ("textDocument/inlayHint", whole(&raw)),
        ("textDocument/hover", at(&raw, 0)),
        ("textDocument/references", at(&raw, 3)),
        ("textDocument/definition", at(&raw, 4)),
        ("textDocument/definition", at(&view, 2)),
        ("textDocument/codeLens", doc(&raw)),
        ("workspace/symbol", json!({"query": ""})),
        (
            "workspace/executeCommand",
            json!({"command": "transcript.nextTurn", "arguments": [{"uri": raw, "line": 0}]}),
        ),
        ("workspace/textDocumentContent", json!({"uri": view})),
        ("transcript/virtualDocument", json!({"uri": view})),
        ("transcript/sessions", json!({})),
        ("transcript/stats", json!({"uri": raw})),
    ];
    for (method, params) in &requests {
        let before = c
            .request(method, params.clone())
            .await
            .unwrap_or_else(|e| panic!("{method}: {e:?}"));
        let armed = c
            .request("transcript/debugPanic", json!({"arm": method}))
            .await;
        assert_eq!(armed, Ok(Value::Null), "{method}");
        let err = c.request(method, params.clone()).await.unwrap_err();
        assert_eq!(err.0, -32603, "{method}: {err:?}");
        assert!(
            err.1.starts_with(&format!(
                "request {method} failed: internal error (deliberate panic in {method}"
            )),
            "{method}: {err:?}"
        );
        let logged = c
            .wait_for(std::time::Duration::from_secs(5), |s| {
                s.method == "window/logMessage"
                    && s.params["message"]
                        .as_str()
                        .is_some_and(|m| m.starts_with(&format!("request {method} panicked")))
            })
            .await;
        assert!(logged.is_some(), "{method}: the panic is logged");
        c.clear_sent();
        let after = c
            .request(method, params.clone())
            .await
            .unwrap_or_else(|e| panic!("{method} after the panic: {e:?}"));
        assert_eq!(
            without_result_ids(after),
            without_result_ids(before),
            "{method}"
        );
    }
    // The raw document still takes edits.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": raw, "version": 2},
               "contentChanges": [{"range": {"start": {"line": 6, "character": 0},
                                             "end": {"line": 6, "character": 0}},
                                   "text": turn(3, "third")}]}),
    )
    .await;
    let syms = c
        .request("textDocument/documentSymbol", doc(&raw))
        .await
        .unwrap();
    assert_eq!(
        symbol_names(&syms),
        vec!["Turn 1: first", "Turn 2: second", "Turn 3: third"]
    );
    c.shutdown().await;
}

/// Issue 25 (a lone `\r` ends a line), the leftover of the store's loader: in a file holding
/// invalid UTF-8, the lines the loader checks on disk are numbered as the editor's are (LSP
/// 3.17: `\n`, `\r\n` and a lone `\r` each end a line), so the warning sits on the line
/// of the U+FFFD. Before, the loader counted `\n` only and put it one line higher, at the
/// start of the user's prompt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_utf8_after_a_lone_cr_is_warned_on_the_editors_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cr.jsonl");
    // A junk line holding a lone `\r`, then a turn whose answer holds two invalid bytes.
    let bad = turn(1, "hello").replacen("\"text\":\"ok\"", "\"text\":\"o\u{1}k\"", 1);
    let mut bytes = b"junk one\rjunk two\r\n".to_vec();
    bytes.extend_from_slice(bad.as_bytes());
    let at = bytes.iter().position(|&b| b == 1).unwrap();
    bytes.splice(at..at + 1, [0xFF, 0xFE]);
    std::fs::write(&path, &bytes).unwrap();
    let (mut c, _) = TestClient::start(client_caps(false), json!({"roots": []})).await;

    let uri = file_uri(&path);
    let lossy = String::from_utf8_lossy(&bytes).into_owned();
    c.open(&uri, &lossy).await;
    // The editor's lines: `junk one`, `junk two`, the prompt, the answer with the U+FFFD.
    let editor: Vec<&str> = lossy
        .split("\r\n")
        .flat_map(|l| l.split(['\n', '\r']))
        .collect();
    assert_eq!(&editor[..2], &["junk one", "junk two"]);
    let line = editor.iter().position(|l| l.contains('\u{fffd}')).unwrap();
    assert_eq!(line, 3);
    let col = editor[line].find('\u{fffd}').unwrap();
    let d = c.diagnostics(&uri, 1).await;
    let utf8: Vec<String> = show_diagnostics(&d)
        .into_iter()
        .filter(|s| s.contains("invalid-utf8"))
        .collect();
    assert_eq!(
        utf8,
        vec![format!(
            "L4:{col}-L4:{} warning invalid-utf8: invalid UTF-8: 2 bytes replaced by U+FFFD",
            col + 1
        )]
    );
    c.shutdown().await;
}

/// Defect 11, the editor's half: an editor decodes a file with invalid UTF-8 itself (VS Code
/// puts U+FFFD in its buffer, Neovim may read it as Latin-1), so its buffer cannot tell. For
/// a `file:` document the server checks the bytes on disk with the one loader and publishes
/// the CLI's warning, one per line, on the buffer's line (at the U+FFFD when the buffer has
/// one). Once the file on disk is valid again, the warning goes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_utf8_on_disk_is_a_warning_on_the_editor_buffer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bytes.jsonl");
    // Line 2 (the answer) holds two invalid bytes inside its text.
    let good = turn(1, "hello");
    let bad = good.replacen("\"text\":\"ok\"", "\"text\":\"o\u{1}k\"", 1);
    let mut bytes = bad.into_bytes();
    let at = bytes.iter().position(|&b| b == 1).unwrap();
    bytes.splice(at..at + 1, [0xFF, 0xFE]);
    std::fs::write(&path, &bytes).unwrap();
    let (mut c, _) = TestClient::start(client_caps(false), json!({"roots": []})).await;

    // As VS Code shows it: U+FFFD for each invalid byte.
    let uri = file_uri(&path);
    let lossy = String::from_utf8_lossy(&bytes).into_owned();
    c.open(&uri, &lossy).await;
    let col = lossy.lines().nth(1).unwrap().find('\u{fffd}').unwrap();
    let d = c.diagnostics(&uri, 1).await;
    assert_eq!(
        show_diagnostics(&d),
        vec![format!(
            "L2:{col}-L2:{} warning invalid-utf8: invalid UTF-8: 2 bytes replaced by U+FFFD",
            col + 1
        )]
    );

    // As Neovim may show it (Latin-1): no U+FFFD in the buffer; the warning opens the line.
    let latin1: String = bytes.iter().map(|&b| b as char).collect();
    let other = file_uri(&path).replace("bytes.jsonl", "./bytes.jsonl");
    c.open(&other, &latin1).await;
    let d = c.diagnostics(&other, 1).await;
    assert_eq!(
        show_diagnostics(&d)
            .iter()
            .map(|s| s.split_once(' ').unwrap().1.to_string())
            .collect::<Vec<_>>(),
        vec!["warning invalid-utf8: invalid UTF-8: 2 bytes replaced by U+FFFD"]
    );
    assert_eq!(d[0]["range"]["start"], json!({"line": 1, "character": 0}));

    // A buffer not backed by a file: nothing to check.
    c.open("untitled:Untitled-1", &lossy).await;
    assert_eq!(c.diagnostics("untitled:Untitled-1", 1).await, json!([]));

    // The file is saved valid: the warning goes (the buffer itself did not change).
    c.clear_sent();
    std::fs::write(&path, &good).unwrap();
    let cleared = c
        .wait_for(std::time::Duration::from_secs(10), |s| {
            s.method == "textDocument/publishDiagnostics"
                && s.params["uri"] == uri.as_str()
                && s.params["diagnostics"] == json!([])
        })
        .await;
    assert!(
        cleared.is_some(),
        "diagnostics published again: {:?}",
        c.sent()
    );
    c.shutdown().await;
}

/// Issue 25 item 8: a run of bare records (`{}` lines) is one entry inside the server, and
/// the editor sees every line of it: the turn's fold, symbol and figures reach the run's last
/// line, a hover on any of its lines names the run, `transcript/stats` counts each record;
/// the run grown by an append answers as a fresh server opening the grown text does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_of_bare_records_answers_for_every_line() {
    let (mut c, _) = TestClient::start(client_caps(false), json!({"roots": []})).await;
    let uri = "file:///tmp/runs.jsonl";
    let text = format!(
        "{}{{}}\n{{}}\n\n{{}}\n{}{{}}\n",
        turn(1, "one"),
        turn(2, "two")
    );
    c.open(uri, &text).await;
    let got = c.features(uri, &text, false).await;
    assert_eq!(
        got["folding"],
        json!([
            "L1-L6 region: Turn 1: one · no activity",
            "L7-L9 region: Turn 2: two · no activity"
        ])
    );
    assert_eq!(
        got["symbols"],
        json!([
            "L1-L6 (sel L1) [24] Turn 1: one — no activity · 5s · 12:00 am",
            "  L2-L2 (sel L2) [15] Final answer — ok",
            "L7-L9 (sel L7) [24] Turn 2: two — no activity · 5s · 12:00 am",
            "  L8-L8 (sel L8) [15] Final answer — ok"
        ])
    );
    let hover = c.hover(uri, 4, 0).await;
    let hover = hover.as_str().unwrap_or("");
    assert!(
        hover.starts_with("**Other record** · `unknown` · turn 1 · 3 records alike, lines 3–6"),
        "{hover}"
    );
    assert_eq!(c.hover(uri, 2, 1).await, c.hover(uri, 5, 1).await);
    let stats = c
        .request("transcript/stats", json!({"uri": uri}))
        .await
        .unwrap();
    assert_eq!(stats["records"], 8);
    assert_eq!(stats["turn_list"][0]["records"], 5);
    // Appended: the last run grows (and a record of another kind follows it).
    let more = format!("{text}{{}}\n{{}}\n{{\"type\":\"zzz\"}}\n");
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2},
               "contentChanges": [{"range": {"start": {"line": 9, "character": 0},
                                             "end": {"line": 9, "character": 0}},
                                   "text": "{}\n{}\n{\"type\":\"zzz\"}\n"}]}),
    )
    .await;
    assert_eq!(server_text(&c, uri), more);
    let grown = c.features(uri, &more, false).await;
    let stats = c
        .request("transcript/stats", json!({"uri": uri}))
        .await
        .unwrap();
    c.shutdown().await;
    let (mut fresh, _) = TestClient::start(client_caps(false), json!({"roots": []})).await;
    fresh.open(uri, &more).await;
    assert_eq!(grown, fresh.features(uri, &more, false).await);
    let want = fresh
        .request("transcript/stats", json!({"uri": uri}))
        .await
        .unwrap();
    assert_eq!(stats, want);
    assert_eq!(stats["records"], 11);
    assert_eq!(
        grown["folding"][1],
        json!("L7-L12 region: Turn 2: two · no activity")
    );
    fresh.shutdown().await;
}

/// Issue 25 item 8: an append of `{}` lines only grows the last run (no new entry): every
/// answer (folds, symbols, tokens, hints, lenses, stats) still follows it, as a fresh server
/// opening the grown text answers, although the turn's entries did not change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_append_that_only_grows_a_run_is_answered_in_full() {
    let (mut c, _) = TestClient::start(client_caps(false), json!({"roots": []})).await;
    let uri = "file:///tmp/runs-grow.jsonl";
    let text = format!("{}{{}}\n{{}}\n", turn(1, "one"));
    c.open(uri, &text).await;
    let before = c.features(uri, &text, false).await;
    assert_eq!(
        before["folding"],
        json!(["L1-L4 region: Turn 1: one · no activity"])
    );
    let mut version = 1;
    let mut grown = text.clone();
    for _ in 0..3 {
        let line = grown.lines().count();
        version += 1;
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version},
                   "contentChanges": [{"range": {"start": {"line": line, "character": 0},
                                                 "end": {"line": line, "character": 0}},
                                       "text": "{}\n{}\n"}]}),
        )
        .await;
        grown.push_str("{}\n{}\n");
        let got = c.features(uri, &grown, false).await;
        let stats = c
            .request("transcript/stats", json!({"uri": uri}))
            .await
            .unwrap();
        let (mut fresh, _) = TestClient::start(client_caps(false), json!({"roots": []})).await;
        fresh.open(uri, &grown).await;
        assert_eq!(got, fresh.features(uri, &grown, false).await);
        let want = fresh
            .request("transcript/stats", json!({"uri": uri}))
            .await
            .unwrap();
        assert_eq!(stats, want);
        fresh.shutdown().await;
    }
    let last = c.features(uri, &grown, false).await;
    assert_eq!(
        last["folding"],
        json!(["L1-L10 region: Turn 1: one · no activity"])
    );
    c.shutdown().await;
}

/// Issue 25 item 8: past `model::MAX_PROBLEMS` (10,000) problems are counted, not kept (one
/// took some 140 bytes, more than a line is counted for); every invalid line is still a
/// record of the file, and the diagnostics' marker counts the ones left out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn problems_past_the_cap_are_counted_not_kept() {
    let (mut c, _) = TestClient::start(client_caps(false), json!({"roots": []})).await;
    let uri = "file:///tmp/invalid.jsonl";
    let text = format!("{}{}", turn(1, "q"), "[]\n".repeat(12_000));
    c.open(uri, &text).await;
    let d = c.diagnostics(uri, 1).await;
    let shown = show_diagnostics(&d);
    assert_eq!(shown.len(), 1001);
    assert_eq!(
        shown[1000],
        "L1003:0-L1003:2 information truncated: 11000 more problems from line 1003 on are not \
         shown (at most 1000 are published per document)"
    );
    let stats = c
        .request("transcript/stats", json!({"uri": uri}))
        .await
        .unwrap();
    assert_eq!(
        stats["invalid_lines"].as_array().map(Vec::len),
        Some(12_000)
    );
    assert_eq!(stats["invalid_lines"][11_999], 12_002);
    c.shutdown().await;
    let t = transcript_ls::formats::read(&text);
    assert_eq!((t.problems.len(), t.problems_left_out), (10_000, 2_000));
}
