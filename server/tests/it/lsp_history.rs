//! `transcript/fileHistory` and `transcript/blame` (issue 22 items 3 and 4) through the
//! in-process service, over an index of the `fixtures/history` sessions (a Claude Code and a
//! Codex session editing one file, installed in a temporary directory): exact answers, the
//! buffer's text taking the place of the file's, an unknown file, bad params.

use crate::lsp_common;

use std::time::Duration;

use lsp_common::*;
use serde_json::{Value, json};

async fn indexed(root: &std::path::Path) -> TestClient {
    let (c, _) = TestClient::start(
        client_caps(false),
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

/// The answer with the temporary directory's path written `$DIR`.
fn local(v: &Value, dir: &std::path::Path) -> Value {
    let s = serde_json::to_string(v)
        .unwrap()
        .replace(&*dir.to_string_lossy(), "$DIR");
    serde_json::from_str(&s).unwrap()
}

const CLAUDE: &str = "file://$DIR/root/claude/-proj/5a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d.jsonl";
const CODEX: &str = "file://$DIR/root/codex/2026/05/02/rollout-2026-05-02T09-00-00-019e3c00-1111-7c01-9d02-4b72d3e5c6f8.jsonl";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_history_and_blame_over_the_fixture_sessions() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let fixture = fixtures_dir().join("history");
    let root = transcript_ls::testing::install_history_fixture(&fixture, dir).unwrap();
    let app = dir.join("src/app.py");
    let mut c = indexed(&root).await;

    // By path: newest first; the Codex patch named the file relatively (`src/app.py`).
    let h = c
        .request(
            "transcript/fileHistory",
            json!({"path": app.to_string_lossy()}),
        )
        .await
        .unwrap();
    let claude_title = "Write a CSV line parser in src/app.py";
    let want_history = json!({
        "path": "$DIR/src/app.py",
        "entries": [
            {
                "uri": CODEX, "agent": "codex", "sessionTitle": "Add a count helper",
                "turn": 1, "turnTitle": "Add a count helper",
                "time": "2026-05-02T09:00:00.200Z", "action": "modified",
                "added": 4, "removed": 0, "line": 3,
                "label": "2026-05-02 09:00  codex  \"Add a count helper\"  turn 1 \"Add a count helper\"  M +4 −0"
            },
            {
                "uri": CLAUDE, "agent": "claude-code", "sessionTitle": claude_title,
                "turn": 2, "turnTitle": "Skip empty fields",
                "time": "2026-05-01T10:22:00.000Z", "action": "modified",
                "added": 1, "removed": 1, "line": 4,
                "label": format!("2026-05-01 10:22  claude-code  \"{claude_title}\"  turn 2 \"Skip empty fields\"  M +1 −1")
            },
            {
                "uri": CLAUDE, "agent": "claude-code", "sessionTitle": claude_title,
                "turn": 1, "turnTitle": claude_title,
                "time": "2026-05-01T10:00:00.000Z", "action": "created",
                "added": 11, "removed": 0, "line": 0,
                "label": format!("2026-05-01 10:00  claude-code  \"{claude_title}\"  turn 1 \"{claude_title}\"  A +11 −0")
            }
        ]
    });
    assert_eq!(local(&h, dir), want_history);
    // By URI: the same.
    let by_uri = c
        .request("transcript/fileHistory", json!({"uri": file_uri(&app)}))
        .await
        .unwrap();
    assert_eq!(local(&by_uri, dir), want_history);

    // Blame from the file on disk: the line a person changed (10) is not attributed.
    let b = c
        .request("transcript/blame", json!({"uri": file_uri(&app)}))
        .await
        .unwrap();
    let turn1 = |start: u32, end: u32, end_char: u32| {
        json!({
            "range": {"start": {"line": start, "character": 0}, "end": {"line": end, "character": end_char}},
            "uri": CLAUDE, "agent": "claude-code", "sessionTitle": claude_title,
            "turn": 1, "turnTitle": claude_title, "time": "2026-05-01T10:00:00.000Z",
            "prompt": claude_title, "line": 0,
            "label": format!("claude-code  \"{claude_title}\"  turn 1  2026-05-01 10:00  +11 −0")
        })
    };
    let turn2 = json!({
        "range": {"start": {"line": 5, "character": 0}, "end": {"line": 5, "character": 50}},
        "uri": CLAUDE, "agent": "claude-code", "sessionTitle": claude_title,
        "turn": 2, "turnTitle": "Skip empty fields", "time": "2026-05-01T10:22:00.000Z",
        "prompt": "Skip empty fields", "line": 4,
        "label": format!("claude-code  \"{claude_title}\"  turn 2  2026-05-01 10:22  +1 −1")
    });
    let codex = |start: u32| {
        json!({
            "range": {"start": {"line": start, "character": 0}, "end": {"line": 14, "character": 27}},
            "uri": CODEX, "agent": "codex", "sessionTitle": "Add a count helper",
            "turn": 1, "turnTitle": "Add a count helper", "time": "2026-05-02T09:00:00.200Z",
            "prompt": "Add a count helper", "line": 3,
            "label": "codex  \"Add a count helper\"  turn 1  2026-05-02 09:00  +4 −0"
        })
    };
    assert_eq!(
        local(&b, dir),
        json!({
            "path": "$DIR/src/app.py",
            "ranges": [turn1(0, 4, 27), turn2.clone(), turn1(6, 9, 26), codex(11)]
        })
    );

    // The buffer's text instead: two lines inserted at the top move every range; `main`'s
    // loop edited in the buffer is no longer the agent's.
    let text = format!(
        "#!/usr/bin/env python3\n\n{}",
        std::fs::read_to_string(&app)
            .unwrap()
            .replace("    for line in sys.stdin:", "    for row in sys.stdin:")
    );
    let b = c
        .request(
            "transcript/blame",
            json!({"path": app.to_string_lossy(), "text": text}),
        )
        .await
        .unwrap();
    let mut moved = turn2.clone();
    moved["range"]["start"]["line"] = json!(7);
    moved["range"]["end"]["line"] = json!(7);
    let mut codex_moved = codex(13);
    codex_moved["range"]["end"]["line"] = json!(16);
    assert_eq!(
        local(&b, dir)["ranges"],
        json!([turn1(2, 6, 27), moved, codex_moved])
    );

    // A file no session changed: empty lists (even when it does not exist).
    let other = dir.join("src/other.py");
    let none = c
        .request(
            "transcript/fileHistory",
            json!({"path": other.to_string_lossy()}),
        )
        .await
        .unwrap();
    assert_eq!(
        local(&none, dir),
        json!({"path": "$DIR/src/other.py", "entries": []})
    );
    let none = c
        .request("transcript/blame", json!({"path": other.to_string_lossy()}))
        .await
        .unwrap();
    assert_eq!(
        local(&none, dir),
        json!({"path": "$DIR/src/other.py", "ranges": []})
    );

    // Bad params: InvalidParams with a clear message, and the server goes on.
    let err = c
        .request("transcript/fileHistory", json!({"path": "src/app.py"}))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        (
            -32602,
            "transcript/fileHistory: path must be absolute, got 'src/app.py'".to_string()
        )
    );
    let err = c.request("transcript/blame", json!({})).await.unwrap_err();
    assert_eq!(
        err,
        (
            -32602,
            "transcript/blame needs a path (absolute) or a uri (file:)".to_string()
        )
    );
    let err = c
        .request("transcript/blame", json!({"uri": "untitled:Untitled-1"}))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        (
            -32602,
            "transcript/blame needs a file: URI, got untitled:".to_string()
        )
    );
    let err = c
        .request("transcript/fileHistory", json!({"path": 3}))
        .await
        .unwrap_err();
    assert_eq!(err.0, -32602, "{err:?}");
    // The file is gone: blame cannot read it (its history still answers).
    std::fs::remove_file(&app).unwrap();
    let err = c
        .request("transcript/blame", json!({"path": app.to_string_lossy()}))
        .await
        .unwrap_err();
    assert_eq!(err.0, -32602, "{err:?}");
    assert!(
        err.1.starts_with(&format!(
            "transcript/blame: cannot read {}: ",
            app.display()
        )),
        "{err:?}"
    );
    let h = c
        .request(
            "transcript/fileHistory",
            json!({"path": app.to_string_lossy()}),
        )
        .await
        .unwrap();
    assert_eq!(local(&h, dir), want_history);
    c.shutdown().await;
}
