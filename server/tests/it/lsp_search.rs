//! `transcript/search` (issue 26) through the in-process service over the `fixtures/search`
//! sessions (installed in a temporary directory): exact hits with URIs, view URIs and snippet
//! match ranges in the negotiated encoding, the `roots` filter, an append found after the file
//! watcher indexed it, bad params.

use crate::lsp_common;

use std::time::Duration;

use lsp_common::*;
use serde_json::{Value, json};

fn install(dst: &std::path::Path) -> std::path::PathBuf {
    fn copy(from: &std::path::Path, to: &std::path::Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                copy(&e.path(), &to.join(e.file_name()));
            } else {
                std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
            }
        }
    }
    let root = dst.join("root");
    copy(&fixtures_dir().join("search/root"), &root);
    root
}

async fn indexed(root: &std::path::Path, utf8: bool) -> TestClient {
    let (c, _) = TestClient::start(
        client_caps(utf8),
        json!({"roots": [root.to_string_lossy()]}),
    )
    .await;
    c.wait_for(Duration::from_secs(30), |s| {
        s.method == "$/progress" && s.params["value"]["kind"] == "end"
    })
    .await
    .expect("index progress end");
    c
}

fn local(v: &Value, dir: &std::path::Path) -> Value {
    let s = serde_json::to_string(v)
        .unwrap()
        .replace(&*dir.to_string_lossy(), "$DIR");
    serde_json::from_str(&s).unwrap()
}

const CLAUDE: &str = "$DIR/root/claude/-home-me-app/c1a2b3c4-0000-4000-8000-000000000001.jsonl";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_answers_hits_with_uris_and_marked_snippets() {
    let tmp = tempfile::tempdir().unwrap();
    let root = install(tmp.path());
    let mut c = indexed(&root, false).await;
    let r = c
        .request("transcript/search", json!({"query": "résumé", "limit": 5}))
        .await
        .unwrap();
    let title = "Why does the flaky test in tests/api_test.py fail on CI?";
    assert_eq!(
        local(&r, tmp.path()),
        json!({
            "complete": true,
            "hits": [
                {
                    "uri": format!("file://{CLAUDE}"),
                    "viewUri": format!("transcript://{CLAUDE}"),
                    "title": title, "agent": "claude-code", "project": "/home/me/app",
                    "turn": 2, "turnTitle": "Écris le résumé en français, s'il te plaît",
                    "line": 5, "kind": "prompt",
                    "snippet": {"text": "Écris le résumé en français, s'il te plaît", "matches": [[9, 15]]},
                    "time": "2026-05-01T10:05:04.000Z"
                },
                {
                    "uri": format!("file://{CLAUDE}"),
                    "viewUri": format!("transcript://{CLAUDE}"),
                    "title": title, "agent": "claude-code", "project": "/home/me/app",
                    "turn": 2, "turnTitle": "Écris le résumé en français, s'il te plaît",
                    "line": 6, "kind": "answer",
                    "snippet": {"text": "Résumé : le test échoue à cause de l'horloge. 测试修复完成。", "matches": [[0, 6]]},
                    "time": "2026-05-01T10:05:04.000Z"
                }
            ]
        })
    );
    // A tool result opens the verbose view (the quiet one hides it); roots narrow the search.
    let r = c
        .request(
            "transcript/search",
            json!({"query": "alembic", "roots": [root.join("codex").to_string_lossy()]}),
        )
        .await
        .unwrap();
    let kinds: Vec<(&str, &str)> = r["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| (h["kind"].as_str().unwrap(), h["viewUri"].as_str().unwrap()))
        .map(|(k, v)| (k, v.rsplit('?').next().unwrap()))
        .collect();
    assert_eq!(
        kinds,
        [("tool-input", "verbose=1"), ("tool-result", "verbose=1")]
    );
    let r = c
        .request(
            "transcript/search",
            json!({"query": "alembic", "roots": [root.join("claude").to_string_lossy()]}),
        )
        .await
        .unwrap();
    assert_eq!(r["hits"], json!([]));

    // An append is searchable once the watcher has indexed it.
    let claude = root.join("claude/-home-me-app/c1a2b3c4-0000-4000-8000-000000000001.jsonl");
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&claude)
        .unwrap();
    use std::io::Write;
    writeln!(f, r#"{{"type":"user","message":{{"role":"user","content":"Add a zeppelin mode"}},"parentUuid":"s-07","isSidechain":false,"userType":"external","cwd":"/home/me/app","sessionId":"c1a2b3c4-0000-4000-8000-000000000001","version":"2.1.114","gitBranch":"main","uuid":"s-08","timestamp":"2026-05-04T08:00:00.000Z"}}"#).unwrap();
    drop(f);
    let mut found = Value::Null;
    for _ in 0..100 {
        let r = c
            .request("transcript/search", json!({"query": "zeppelin"}))
            .await
            .unwrap();
        if r["hits"].as_array().is_some_and(|h| !h.is_empty()) {
            found = r;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(found["hits"][0]["turn"], 3);
    assert_eq!(found["hits"][0]["line"], 7);
    assert_eq!(found["hits"][0]["snippet"]["text"], "Add a zeppelin mode");

    // Bad params.
    let e = c
        .request("transcript/search", json!({"query": 3}))
        .await
        .unwrap_err();
    assert_eq!(e.0, -32602);
    let e = c
        .request(
            "transcript/search",
            json!({"query": "x", "roots": ["rel/dir"]}),
        )
        .await
        .unwrap_err();
    assert_eq!(
        e,
        (
            -32602,
            "transcript/search: roots must be absolute paths or file: URIs, got 'rel/dir'"
                .to_string()
        )
    );
    c.shutdown().await;
}

/// Match ranges are in the negotiated encoding: UTF-8 bytes for a client that chose it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn match_ranges_follow_the_position_encoding() {
    let tmp = tempfile::tempdir().unwrap();
    let root = install(tmp.path());
    let mut c = indexed(&root, true).await;
    let r = c
        .request("transcript/search", json!({"query": "résumé", "limit": 1}))
        .await
        .unwrap();
    assert_eq!(r["hits"][0]["snippet"]["matches"], json!([[10, 18]]));
    c.shutdown().await;
}
