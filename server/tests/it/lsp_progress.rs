//! Work-done progress while a big transcript loads (issue 12, item 4): a `didOpen` of at least
//! 8 MiB (PROTOCOL.md `$/progress`) and the view of such a file from disk send
//! `window/workDoneProgress/create`, then `$/progress` begin / reports / end on that token;
//! a small document sends none, nor does a client without `window.workDoneProgress`.

use crate::lsp_common;

use std::time::Duration;

use lsp_common::*;
use serde_json::{Value, json};

/// The `$/progress` values sent on load tokens, grouped by token, in order.
fn load_progress(c: &TestClient) -> Vec<(String, Vec<Value>)> {
    let mut out: Vec<(String, Vec<Value>)> = Vec::new();
    for s in c.sent() {
        if s.method != "$/progress" {
            continue;
        }
        let token = s.params["token"].as_str().unwrap_or("").to_string();
        if !token.starts_with("transcript-ls/load/") {
            continue;
        }
        match out.iter_mut().find(|(t, _)| *t == token) {
            Some((_, v)) => v.push(s.params["value"].clone()),
            None => out.push((token, vec![s.params["value"].clone()])),
        }
    }
    out
}

/// Waits until `n` loads ended.
async fn ended(c: &TestClient, n: usize) -> Vec<(String, Vec<Value>)> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let p = load_progress(c);
        let done = p
            .iter()
            .filter(|(_, v)| v.last().is_some_and(|l| l["kind"] == "end"))
            .count();
        if done >= n || tokio::time::Instant::now() >= deadline {
            return p;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Checks one load's sequence: created first, begin (title, 0 %), reports with growing
/// percentages, end; returns the reports' messages.
fn check_sequence(c: &TestClient, token: &str, values: &[Value], title: &str) -> Vec<String> {
    let created = c
        .sent()
        .iter()
        .position(|s| s.method == "window/workDoneProgress/create" && s.params["token"] == token);
    let first = c
        .sent()
        .iter()
        .position(|s| s.method == "$/progress" && s.params["token"] == token);
    assert!(
        created.is_some() && created < first,
        "{token} created before use"
    );
    assert_eq!(values[0]["kind"], "begin");
    assert_eq!(values[0]["title"], title);
    assert_eq!(values[0]["percentage"], 0);
    assert_eq!(values.last().unwrap()["kind"], "end");
    let reports = &values[1..values.len() - 1];
    let percents: Vec<u64> = reports
        .iter()
        .map(|r| {
            assert_eq!(r["kind"], "report");
            r["percentage"].as_u64().unwrap()
        })
        .collect();
    assert!(percents.windows(2).all(|w| w[0] <= w[1]), "{percents:?}");
    assert!(percents.iter().all(|p| *p <= 100), "{percents:?}");
    reports
        .iter()
        .map(|r| r["message"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_big_did_open_reports_progress_a_small_one_none() {
    let (mut c, _) = TestClient::start(client_caps(true), json!({})).await;
    let dir = tempfile::tempdir().unwrap();

    let small = dir.path().join("small.jsonl");
    std::fs::write(
        &small,
        transcript_ls::testing::synth_claude_transcript(1_000_000, 3),
    )
    .unwrap();
    let uri = c.open_file(&small).await;
    let r = c
        .request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": uri}}),
        )
        .await
        .unwrap();
    assert!(!r.as_array().unwrap().is_empty());
    assert_eq!(load_progress(&c), vec![], "no progress for 1 MB");

    let big = dir.path().join("big.jsonl");
    let text = transcript_ls::testing::synth_claude_transcript(9_000_000, 7);
    assert!(text.len() >= 8 << 20);
    std::fs::write(&big, &text).unwrap();
    let records = text.lines().count();
    let uri = c.open_file(&big).await;
    c.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": uri}}),
    )
    .await
    .unwrap();
    let p = ended(&c, 1).await;
    assert_eq!(p.len(), 1, "one load: {p:?}");
    let (token, values) = &p[0];
    let messages = check_sequence(&c, token, values, "Reading big.jsonl");
    assert_eq!(values[0]["message"], "9 MB");
    // Reports every 5 % of the reading (90 % of the bar), then the analysis.
    assert!(messages.len() >= 3, "{messages:?}");
    assert!(messages[0].ends_with(" / 9 MB"), "{messages:?}");
    assert_eq!(messages.last().unwrap(), "analysing");
    assert_eq!(
        values.last().unwrap()["message"],
        format!("{records} records")
    );

    // An append of one record to the big document reads a few bytes: no progress.
    c.clear_sent();
    let line = text.lines().next().unwrap();
    let n = text.lines().count() as u32;
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2},
               "contentChanges": [{"range": {"start": {"line": n, "character": 0},
                                             "end": {"line": n, "character": 0}},
                                   "text": format!("{line}\n")}]}),
    )
    .await;
    c.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": uri}}),
    )
    .await
    .unwrap();
    assert_eq!(load_progress(&c), vec![], "no progress for an append");
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_big_view_from_disk_reports_reading_and_rendering() {
    let (mut c, _) = TestClient::start(client_caps(false), json!({})).await;
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("disk.jsonl");
    std::fs::write(
        &big,
        transcript_ls::testing::synth_claude_transcript(9_000_000, 5),
    )
    .unwrap();
    let text = c
        .request(
            "workspace/textDocumentContent",
            json!({"uri": view_uri(&big, Some(false))}),
        )
        .await
        .unwrap()["text"]
        .as_str()
        .unwrap()
        .to_string();
    let p = ended(&c, 2).await;
    assert_eq!(p.len(), 2, "{p:?}");
    check_sequence(&c, &p[0].0, &p[0].1, "Reading disk.jsonl");
    let rendering = check_sequence(&c, &p[1].0, &p[1].1, "Rendering disk.jsonl");
    assert_eq!(
        rendering,
        Vec::<String>::new(),
        "no percentage while rendering"
    );
    assert_eq!(
        p[1].1.last().unwrap()["message"],
        format!("{} lines", text.split('\n').count())
    );
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_progress_for_a_client_without_work_done_progress() {
    let mut caps = client_caps(true);
    caps["window"]["workDoneProgress"] = json!(false);
    let (mut c, _) = TestClient::start(caps, json!({})).await;
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.jsonl");
    std::fs::write(
        &big,
        transcript_ls::testing::synth_claude_transcript(9_000_000, 7),
    )
    .unwrap();
    let uri = c.open_file(&big).await;
    c.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": uri}}),
    )
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !c.sent()
            .iter()
            .any(|s| s.method == "window/workDoneProgress/create" || s.method == "$/progress"),
        "nothing about progress"
    );
    c.shutdown().await;
}
