//! Every corpus transcript (`../shared/corpus`) and every shared case through the server, raw
//! and view: no request fails, and the answers keep the protocol's invariants (folds inside the
//! document, tokens on one line, sorted, non-overlapping and equal in UTF-8 and UTF-16, hints at
//! line ends, symbol selections inside their ranges). A snapshot records, per file, how many
//! folding ranges, symbols, tokens, hints, lenses and diagnostics the server gives.

use crate::lsp_common;

use lsp_common::*;
use serde_json::{Value, json};

fn count_symbols(v: &Value) -> usize {
    v.as_array()
        .map(|a| a.iter().map(|s| 1 + count_symbols(&s["children"])).sum())
        .unwrap_or(0)
}

fn check_symbols(v: &Value, path: &str) {
    for s in v.as_array().into_iter().flatten() {
        let r = &s["range"];
        let sel = &s["selectionRange"];
        let pos = |p: &Value| {
            (
                p["line"].as_u64().unwrap(),
                p["character"].as_u64().unwrap(),
            )
        };
        assert!(
            pos(&r["start"]) <= pos(&sel["start"]),
            "{path}: selection before range: {s}"
        );
        assert!(
            pos(&sel["end"]) <= pos(&r["end"]),
            "{path}: selection after range: {s}"
        );
        assert!(
            !s["name"].as_str().unwrap().trim().is_empty(),
            "{path}: empty name"
        );
        check_symbols(&s["children"], path);
    }
}

/// Runs every document request on `uri` and checks the invariants; returns the counts.
async fn exercise(c: &mut TestClient, uri: &str, text: &str, utf8: bool, name: &str) -> Value {
    let td = json!({"textDocument": {"uri": uri}});
    let lines: Vec<&str> = text.split('\n').collect();
    let len_of = |l: usize| -> u64 {
        let s = lines[l].strip_suffix('\r').unwrap_or(lines[l]);
        if utf8 {
            s.len() as u64
        } else {
            s.encode_utf16().count() as u64
        }
    };
    let folds = c
        .request("textDocument/foldingRange", td.clone())
        .await
        .unwrap();
    for f in folds.as_array().unwrap() {
        let (s, e) = (
            f["startLine"].as_u64().unwrap(),
            f["endLine"].as_u64().unwrap(),
        );
        assert!(s < e && (e as usize) < lines.len(), "{name}: fold {f}");
    }
    let symbols = c
        .request("textDocument/documentSymbol", td.clone())
        .await
        .unwrap();
    check_symbols(&symbols, name);
    let tokens = c
        .request("textDocument/semanticTokens/full", td.clone())
        .await
        .unwrap();
    let decoded = decode_tokens(&tokens["data"]);
    let mut prev = (0u32, 0u32, 0u32);
    for &(l, s, n, _, _) in &decoded {
        assert!((l as usize) < lines.len(), "{name}: token on line {l}");
        assert!(
            (s + n) as u64 <= len_of(l as usize),
            "{name}: token past line end at {l}:{s}+{n}"
        );
        assert!(n > 0, "{name}: empty token");
        assert!(
            l > prev.0 || (l == prev.0 && s >= prev.1 + prev.2) || prev == (0, 0, 0),
            "{name}: overlap at {l}:{s}"
        );
        prev = (l, s, n);
    }
    let all =
        json!({"start": {"line": 0, "character": 0}, "end": {"line": lines.len(), "character": 0}});
    let hints = c
        .request(
            "textDocument/inlayHint",
            json!({"textDocument": {"uri": uri}, "range": all}),
        )
        .await
        .unwrap();
    for h in hints.as_array().unwrap() {
        let l = h["position"]["line"].as_u64().unwrap() as usize;
        // Every raw hint at the start of its line: turn hints (issue 7), answer and usage
        // hints (issue 23 item 8: at the end they sat thousands of columns to the right); a
        // view's turn hints at the end of its heading.
        let want = if uri.starts_with("transcript:") {
            len_of(l)
        } else {
            0
        };
        assert_eq!(
            h["position"]["character"].as_u64().unwrap(),
            want,
            "{name}: hint misplaced"
        );
    }
    let lenses = c
        .request("textDocument/codeLens", td.clone())
        .await
        .unwrap();
    // Hover, definition and references on a sample of lines never fail.
    let step = (lines.len() / 25).max(1);
    for l in (0..lines.len()).step_by(step) {
        let p = json!({"textDocument": {"uri": uri}, "position": {"line": l, "character": 3}});
        c.request("textDocument/hover", p.clone()).await.unwrap();
        c.request("textDocument/definition", p.clone())
            .await
            .unwrap();
        let mut r = p.clone();
        r["context"] = json!({"includeDeclaration": true});
        c.request("textDocument/references", r).await.unwrap();
    }
    for cmd in [
        "transcript.nextTurn",
        "transcript.previousTurn",
        "transcript.nextGate",
    ] {
        c.command(cmd, json!({"uri": uri, "line": lines.len() / 2}))
            .await;
    }
    json!({
        "folds": folds.as_array().unwrap().len(),
        "symbols": count_symbols(&symbols),
        "tokens": decoded.len(),
        "hints": hints.as_array().unwrap().len(),
        "lenses": lenses.as_array().unwrap().len(),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corpus_and_cases_through_every_request() {
    let shared = shared_dir();
    let mut files = Vec::new();
    jsonl_files(&shared.join("corpus"), &mut files);
    jsonl_files(&shared.join("cases"), &mut files);
    assert!(
        files.len() >= 30,
        "corpus not found at {}",
        shared.display()
    );
    let mut table = serde_json::Map::new();
    for utf8 in [false, true] {
        let (mut c, _) = TestClient::start(client_caps(utf8), json!({"roots": []})).await;
        for path in &files {
            let name = path
                .strip_prefix(&shared)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let text = String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned();
            let uri = file_uri(path);
            c.open(&uri, &text).await;
            let mut raw = exercise(&mut c, &uri, &text, utf8, &name).await;
            raw["diagnostics"] = json!(c.diagnostics(&uri, 1).await.as_array().unwrap().len());
            let vuri = view_uri(path, Some(true));
            let vtext = c.open_view(&vuri).await;
            let view = exercise(&mut c, &vuri, &vtext, utf8, &format!("{name} (view)")).await;
            c.notify(
                "textDocument/didClose",
                json!({"textDocument": {"uri": uri}}),
            )
            .await;
            c.notify(
                "textDocument/didClose",
                json!({"textDocument": {"uri": vuri}}),
            )
            .await;
            let row = json!({"raw": raw, "view": view});
            if utf8 {
                // Counts do not depend on the encoding.
                assert_eq!(
                    table.get(&name),
                    Some(&row),
                    "{name}: UTF-8 and UTF-16 counts differ"
                );
            } else {
                table.insert(name, row);
            }
        }
        c.shutdown().await;
    }
    insta::assert_json_snapshot!("corpus_counts", Value::Object(table));
}
