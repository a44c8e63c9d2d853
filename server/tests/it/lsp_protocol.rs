//! Protocol-level behaviour of the server through the in-process service: capabilities and
//! encoding negotiation, document sync (incremental, in order, stale versions dropped), bad
//! requests answered with errors while the server keeps serving, non-transcripts, views
//! served through `workspace/textDocumentContent` and its alias.

use crate::lsp_common;

use lsp_common::*;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_negotiates_encoding_and_advertises_everything() {
    let (c, init) = TestClient::start(client_caps(false), json!({})).await;
    let caps = &init["capabilities"];
    assert_eq!(caps["positionEncoding"], "utf-16");
    insta::assert_json_snapshot!("initialize_utf16", init);
    c.shutdown().await;

    let (c, init) =
        TestClient::start(client_caps(true), json!({"semanticTokens": "standard"})).await;
    let caps = &init["capabilities"];
    assert_eq!(caps["positionEncoding"], "utf-8");
    assert_eq!(
        caps["semanticTokensProvider"]["legend"]["tokenTypes"],
        json!([
            "keyword", "string", "comment", "function", "regexp", "macro"
        ])
    );
    assert_eq!(
        caps["workspace"]["textDocumentContent"]["schemes"],
        json!(["transcript"])
    );
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_errors_and_the_server_keeps_serving() {
    let (mut c, _) = TestClient::start(client_caps(false), json!({})).await;
    const INVALID_PARAMS: i64 = -32602;

    // Unknown document.
    let err = c
        .request(
            "textDocument/foldingRange",
            json!({"textDocument": {"uri": "file:///nowhere/x.jsonl"}}),
        )
        .await
        .unwrap_err();
    assert_eq!(err.0, INVALID_PARAMS);
    assert!(
        err.1.contains("unknown document file:///nowhere/x.jsonl"),
        "{}",
        err.1
    );

    // A view of a file that does not exist.
    let err = c
        .request(
            "workspace/textDocumentContent",
            json!({"uri": "transcript:///nowhere/x.jsonl"}),
        )
        .await
        .unwrap_err();
    assert_eq!(err.0, INVALID_PARAMS);
    assert!(
        err.1.starts_with("cannot read /nowhere/x.jsonl"),
        "{}",
        err.1
    );

    // Out-of-range position and range.
    let uri = "file:///tmp/transcript-ls-test/a.jsonl";
    c.open(uri, "{\"type\":\"user\",\"uuid\":\"u1\",\"sessionId\":\"s\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n").await;
    let err = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": 99, "character": 0}}),
        )
        .await
        .unwrap_err();
    assert_eq!(err.0, INVALID_PARAMS);
    assert_eq!(
        err.1,
        "position 99:0 is out of range (the document has 2 lines)"
    );
    let err = c
        .request(
            "textDocument/semanticTokens/range",
            json!({"textDocument": {"uri": uri},
                   "range": {"start": {"line": 7, "character": 0}, "end": {"line": 8, "character": 0}}}),
        )
        .await
        .unwrap_err();
    assert_eq!(err.0, INVALID_PARAMS);

    // Malformed params.
    let err = c
        .request("textDocument/hover", json!({"textDocument": {"uri": uri}}))
        .await
        .unwrap_err();
    assert_eq!(err.0, INVALID_PARAMS);
    let err = c
        .request("textDocument/documentSymbol", json!({"textDocument": 42}))
        .await
        .unwrap_err();
    assert_eq!(err.0, INVALID_PARAMS);

    // Unknown and malformed commands.
    let err = c
        .request(
            "workspace/executeCommand",
            json!({"command": "transcript.explode", "arguments": []}),
        )
        .await
        .unwrap_err();
    assert_eq!(
        (err.0, err.1.as_str()),
        (INVALID_PARAMS, "unknown command \"transcript.explode\"")
    );
    let err = c
        .request(
            "workspace/executeCommand",
            json!({"command": "transcript.nextTurn", "arguments": [{"uri": 5}]}),
        )
        .await
        .unwrap_err();
    assert_eq!(err.0, INVALID_PARAMS);
    let err = c
        .request(
            "workspace/executeCommand",
            json!({"command": "transcript.nextTurn", "arguments": []}),
        )
        .await
        .unwrap_err();
    assert_eq!(err.1, "transcript.nextTurn needs a `uri` argument");
    // A line that is no line is refused, not read as line 0 (issue 25, Low list).
    let err = c
        .request(
            "workspace/executeCommand",
            json!({"command": "transcript.nextTurn", "arguments": [{"uri": uri, "line": -1}]}),
        )
        .await
        .unwrap_err();
    assert_eq!(
        (err.0, err.1.as_str()),
        (
            INVALID_PARAMS,
            "`line` must be a 0-based line number, got -1"
        )
    );

    // Still serving.
    let r = c
        .request(
            "textDocument/foldingRange",
            json!({"textDocument": {"uri": uri}}),
        )
        .await
        .unwrap();
    assert!(r.is_array());
    c.shutdown().await;
}

fn text_of(c: &TestClient, uri: &str) -> String {
    c.service
        .shared()
        .host
        .raw_source(&transcript_ls::store::host::DocId::new(uri))
        .expect("open")
        .text()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn incremental_changes_apply_in_order_and_stale_ones_are_dropped() {
    for utf8 in [false, true] {
        let (mut c, _) = TestClient::start(client_caps(utf8), json!({})).await;
        let uri = "file:///tmp/transcript-ls-test/edit.jsonl";
        c.open(uri, "{\"a\":\"😀x\"}\n").await;
        // Replace the `x` after the emoji: UTF-16 column 8, UTF-8 column 10.
        let col = if utf8 { 10 } else { 8 };
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": 3},
                   "contentChanges": [{"range": {"start": {"line": 0, "character": col},
                                                 "end": {"line": 0, "character": col + 1}},
                                       "text": "é\\n"}]}),
        )
        .await;
        // A stale change (version 2 < 3) is dropped.
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": 2},
                   "contentChanges": [{"text": "stale"}]}),
        )
        .await;
        // Two changes in one notification apply in order; then an append.
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": 4},
                   "contentChanges": [
                       {"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 0}}, "text": "{}\n"},
                       {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "text": "["}
                   ]}),
        )
        .await;
        assert_eq!(text_of(&c, uri), "[\"a\":\"😀é\\n\"}\n{}\n", "utf8={utf8}");
        c.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_transcripts_get_empty_results_and_one_log_line() {
    let (mut c, _) = TestClient::start(client_caps(false), json!({})).await;
    let uri = c
        .open_file(&fixtures_dir().join("rules/non-transcript.jsonl"))
        .await;
    let td = json!({"textDocument": {"uri": uri}});
    for m in [
        "textDocument/foldingRange",
        "textDocument/documentSymbol",
        "textDocument/codeLens",
    ] {
        assert_eq!(c.request(m, td.clone()).await.unwrap(), json!([]), "{m}");
    }
    let toks = c
        .request("textDocument/semanticTokens/full", td.clone())
        .await
        .unwrap();
    assert_eq!(toks["data"], json!([]));
    let hints = c
        .request(
            "textDocument/inlayHint",
            json!({"textDocument": {"uri": uri},
                   "range": {"start": {"line": 0, "character": 0}, "end": {"line": 3, "character": 0}}}),
        )
        .await
        .unwrap();
    assert_eq!(hints, json!([]));
    assert_eq!(c.diagnostics(&uri, 1).await, json!([]));
    let logs: Vec<String> = c
        .sent()
        .into_iter()
        .filter(|s| s.method == "window/logMessage")
        .map(|s| s.params["message"].as_str().unwrap_or("").to_string())
        .filter(|m| {
            m.contains(&format!(
                "is not a {} transcript",
                transcript_ls::formats::agents::names("or")
            ))
        })
        .collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn views_are_served_by_content_request_and_alias() {
    let (mut c, _) = TestClient::start(client_caps(false), json!({})).await;
    let path = fixtures_dir().join("demo/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl");
    let uri = view_uri(&path, None);
    let a = c
        .request("workspace/textDocumentContent", json!({"uri": uri}))
        .await
        .unwrap();
    let b = c
        .request(
            "transcript/virtualDocument",
            json!({"textDocument": {"uri": uri}}),
        )
        .await
        .unwrap();
    let b2 = c
        .request("transcript/virtualDocument", json!({"uri": uri}))
        .await
        .unwrap();
    assert_eq!(a, b);
    assert_eq!(a, b2);
    assert!(a["text"].is_string());
    // openView gives the URI of a file's view.
    let r = c
        .request(
            "workspace/executeCommand",
            json!({"command": "transcript.openView", "arguments": [{"uri": file_uri(&path), "verbose": true}]}),
        )
        .await
        .unwrap();
    assert_eq!(r["uri"], Value::String(view_uri(&path, Some(true))));
    // A file: URI is not a view.
    let err = c
        .request(
            "workspace/textDocumentContent",
            json!({"uri": file_uri(&path)}),
        )
        .await
        .unwrap_err();
    assert!(err.1.starts_with("not a transcript: URI"), "{}", err.1);
    c.shutdown().await;
}
