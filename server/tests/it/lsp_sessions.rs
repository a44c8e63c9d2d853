//! `transcript/sessions` (issue 7) through the in-process service: the list from the index
//! built at `initialized`, fuzzy queries, the project filter, the limit, bad params, and the
//! watcher keeping it current after an append and a deletion.

use crate::lsp_common;

use std::time::{Duration, Instant};

use lsp_common::*;
use serde_json::{Value, json};

const DEMO: &str = "demo/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl";

async fn indexed(roots: &[std::path::PathBuf]) -> TestClient {
    let (c, _) = TestClient::start(
        client_caps(false),
        json!({"roots": roots.iter().map(|p| p.to_string_lossy()).collect::<Vec<_>>()}),
    )
    .await;
    c.wait_for(Duration::from_secs(30), |s| {
        s.method == "$/progress" && s.params["value"]["kind"] == "end"
    })
    .await
    .expect("index progress end");
    c
}

fn name(uri: &Value) -> String {
    uri.as_str()
        .map(|u| u.rsplit('/').next().unwrap_or("").to_string())
        .unwrap_or_else(|| "-".into())
}

fn show(r: &Value) -> Vec<String> {
    r["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            format!(
                "{} | {} | {} ({}) | {} | {} turns | {} B | {} .. {} | live {} | parent {} | children {:?}",
                name(&s["uri"]),
                s["format"].as_str().unwrap(),
                s["title"].as_str().unwrap(),
                s["titleSource"].as_str().unwrap(),
                s["project"].as_str().unwrap_or("-"),
                s["turns"],
                s["bytes"],
                s["started"].as_str().unwrap_or("-"),
                s["ended"].as_str().unwrap_or("-"),
                s["live"],
                name(&s["parent"]),
                s["children"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(name)
                    .collect::<Vec<_>>()
            )
        })
        .collect()
}

/// Copies `src` into `dst` (recursively), every file last modified an hour ago: `live` then
/// does not depend on when the repository was checked out (a fresh clone's files are new).
fn copy_settled(src: &std::path::Path, dst: &std::path::Path) {
    let hour_ago = std::time::SystemTime::now() - Duration::from_secs(3600);
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let to = dst.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_settled(&e.path(), &to);
        } else {
            std::fs::copy(e.path(), &to).unwrap();
            std::fs::File::options()
                .write(true)
                .open(&to)
                .unwrap()
                .set_modified(hour_ago)
                .unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_of_the_fixture_roots() {
    let tmp = tempfile::tempdir().unwrap();
    let roots = [tmp.path().join("demo"), tmp.path().join("cases")];
    copy_settled(&fixtures_dir().join("demo"), &roots[0]);
    copy_settled(&fixtures_dir().join("cases"), &roots[1]);
    let mut c = indexed(&roots).await;
    let all = c.request("transcript/sessions", json!({})).await.unwrap();
    assert_eq!(all["complete"], true);
    insta::assert_yaml_snapshot!("fixture_sessions", show(&all));
    // No params at all: the same list.
    let none = c.request("transcript/sessions", Value::Null).await.unwrap();
    assert_eq!(none["sessions"], all["sessions"]);

    // Fuzzy on the first prompt: the demo session's prompt names the currency parser.
    let hit = c
        .request("transcript/sessions", json!({"query": "currency"}))
        .await
        .unwrap();
    let names: Vec<String> = hit["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| name(&s["uri"]))
        .collect();
    assert_eq!(names[0], "3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl");
    let demo = &hit["sessions"][0];
    assert!(demo["uri"].as_str().unwrap().starts_with("file:///"));
    assert!(demo["uri"].as_str().unwrap().ends_with(DEMO));

    // Project filter and limit.
    let project = demo["project"].as_str().unwrap().to_string();
    let in_project = c
        .request(
            "transcript/sessions",
            json!({"project": project, "limit": 100}),
        )
        .await
        .unwrap();
    assert!(
        in_project["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["project"] == json!(project))
    );
    let one = c
        .request("transcript/sessions", json!({"limit": 1}))
        .await
        .unwrap();
    assert_eq!(one["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(one["sessions"][0], all["sessions"][0]);

    // Nothing matches: an empty list, not an error.
    let none = c
        .request("transcript/sessions", json!({"query": "zzqqxx"}))
        .await
        .unwrap();
    assert_eq!(none["sessions"], json!([]));

    // Bad params: InvalidParams with a message, and the server goes on.
    let err = c
        .request("transcript/sessions", json!({"limit": "ten"}))
        .await
        .unwrap_err();
    assert_eq!(err.0, -32602, "{err:?}");
    assert!(c.request("transcript/sessions", json!({})).await.is_ok());
    c.shutdown().await;
}

async fn turns_of(c: &mut TestClient, uri: &str) -> Option<u64> {
    let r = c.request("transcript/sessions", json!({})).await.unwrap();
    r["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["uri"] == json!(uri))
        .and_then(|s| s["turns"].as_u64())
}

async fn poll(c: &mut TestClient, uri: &str, want: Option<u64>) -> Option<u64> {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let got = turns_of(c, uri).await;
        if got == want || Instant::now() > deadline {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watcher_keeps_the_list_current() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("projects/-home-me-app");
    std::fs::create_dir_all(&root).unwrap();
    let text = std::fs::read_to_string(fixtures_dir().join(DEMO)).unwrap();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    // Cut just before the line that opens turn 3 (the demo's 3rd human prompt).
    let cut = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.contains(r#""type":"user""#) && !l.contains("tool_result"))
        .map(|(i, _)| i)
        .nth(2)
        .unwrap();
    let path = root.join("s.jsonl");
    std::fs::write(&path, lines[..cut].concat()).unwrap();
    let mut c = indexed(&[dir.path().join("projects")]).await;
    let uri = file_uri(&path);
    assert_eq!(turns_of(&mut c, &uri).await, Some(2));
    // The agent goes on: the rest of the session is appended.
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(lines[cut..].concat().as_bytes()).unwrap();
    }
    let full = transcript_ls::index::summary::read_whole(&text).turns as u64;
    assert!(full > 2);
    assert_eq!(poll(&mut c, &uri, Some(full)).await, Some(full));
    // A new session appears, then the first one is deleted.
    let other = root.join("t.jsonl");
    std::fs::write(&other, &text).unwrap();
    assert_eq!(
        poll(&mut c, &file_uri(&other), Some(full)).await,
        Some(full)
    );
    std::fs::remove_file(&path).unwrap();
    assert_eq!(poll(&mut c, &uri, None).await, None);
    c.shutdown().await;
}

fn uris(r: &Value) -> Vec<String> {
    let mut v: Vec<String> = r["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["uri"].as_str().unwrap().to_string())
        .collect();
    v.sort();
    v
}

async fn poll_uris(c: &mut TestClient, want: &[String]) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let r = c.request("transcript/sessions", json!({})).await.unwrap();
        let got = uris(&r);
        if got == want || Instant::now() > deadline {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn folder(p: &std::path::Path) -> Value {
    json!({"uri": file_uri(p), "name": p.file_name().unwrap().to_string_lossy()})
}

/// Issue 7: the default roots include the workspace folders' own transcripts; dependency and
/// VCS folders are not entered; the watcher follows them; folders added and removed by
/// `workspace/didChangeWorkspaceFolders` change the list; `workspaceFolders: false` leaves them
/// out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workspace_folders_are_indexed_too() {
    let tmp = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixtures_dir().join(DEMO)).unwrap();
    let agents = tmp.path().join("agents");
    let ws = tmp.path().join("app");
    let ws2 = tmp.path().join("lib");
    for d in [
        agents.join("-home-me-app"),
        ws.join("notes/sessions"),
        ws.join("node_modules/pkg"),
        ws.join(".git/x"),
        ws2.clone(),
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    let in_agents = agents.join("-home-me-app/a.jsonl");
    let in_ws = ws.join("notes/sessions/b.jsonl");
    std::fs::write(&in_agents, &text).unwrap();
    std::fs::write(&in_ws, &text).unwrap();
    std::fs::write(ws.join("node_modules/pkg/c.jsonl"), &text).unwrap();
    std::fs::write(ws.join(".git/x/d.jsonl"), &text).unwrap();
    std::fs::write(ws2.join("e.jsonl"), &text).unwrap();
    let u = |p: &std::path::Path| file_uri(p);

    let (mut c, init) = TestClient::start_in(
        client_caps(false),
        json!({"roots": [agents.to_string_lossy()]}),
        json!([folder(&ws)]),
    )
    .await;
    assert_eq!(
        init["capabilities"]["workspace"]["workspaceFolders"],
        json!({"supported": true, "changeNotifications": true})
    );
    c.wait_for(Duration::from_secs(30), |s| {
        s.method == "$/progress" && s.params["value"]["kind"] == "end"
    })
    .await
    .expect("index progress end");
    let mut want = vec![u(&in_agents), u(&in_ws)];
    want.sort();
    assert_eq!(poll_uris(&mut c, &want).await, want);

    // A transcript written into the workspace later, in a new folder: the watcher sees it;
    // one written under node_modules is still left out.
    std::fs::create_dir_all(ws.join("logs")).unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let later = ws.join("logs/f.jsonl");
    std::fs::write(&later, &text).unwrap();
    std::fs::write(ws.join("node_modules/pkg/g.jsonl"), &text).unwrap();
    want.push(u(&later));
    want.sort();
    assert_eq!(poll_uris(&mut c, &want).await, want);

    // The client adds one folder and removes the other.
    c.notify(
        "workspace/didChangeWorkspaceFolders",
        json!({"event": {"added": [folder(&ws2)], "removed": [folder(&ws)]}}),
    )
    .await;
    let mut want = vec![u(&in_agents), u(&ws2.join("e.jsonl"))];
    want.sort();
    assert_eq!(poll_uris(&mut c, &want).await, want);

    // Turned off: only the configured roots.
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"transcript": {"roots": [agents.to_string_lossy()],
            "workspaceFolders": false}}}),
    )
    .await;
    assert_eq!(
        poll_uris(&mut c, &[u(&in_agents)]).await,
        vec![u(&in_agents)]
    );
    c.shutdown().await;
}

/// Issue 25 item 1: a small zstd file that decompresses to millions of `{}` lines (the
/// issue's 96 KB file grew the build to a 7.5 GB allocation) is left out of the index with a
/// warning naming it, and the other transcripts of the root are indexed as ever. The text
/// would take more than the index's 256 MiB: 2.6 M lines × 112 bytes (`zstd::LINE_COST`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zstd_bomb_is_left_out_with_a_warning() {
    use ruzstd::encoding::{CompressionLevel, compress_to_vec};
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sessions");
    std::fs::create_dir_all(&root).unwrap();
    let text = std::fs::read_to_string(fixtures_dir().join(DEMO)).unwrap();
    let plain = root.join("plain.jsonl");
    std::fs::write(&plain, &text).unwrap();
    // A session, then the same frame of 100 000 `{}` lines 26 times (frames concatenate).
    let mut bomb = compress_to_vec(text.as_bytes(), CompressionLevel::Fastest);
    let empties = "{}\n".repeat(100_000);
    let frame = compress_to_vec(empties.as_bytes(), CompressionLevel::Fastest);
    for _ in 0..26 {
        bomb.extend_from_slice(&frame);
    }
    assert!(bomb.len() < 200_000, "{}", bomb.len());
    let zst = root.join("rollout-x.jsonl");
    std::fs::write(&zst, &bomb).unwrap();
    let mut c = indexed(std::slice::from_ref(&root)).await;
    let r = c.request("transcript/sessions", json!({})).await.unwrap();
    assert_eq!(uris(&r), vec![file_uri(&plain)]);
    let warned = c
        .sent()
        .into_iter()
        .filter(|s| s.method == "window/logMessage" && s.params["type"] == 2)
        .map(|s| s.params["message"].as_str().unwrap().to_string())
        .find(|m| m.contains("rollout-x.jsonl"));
    assert_eq!(
        warned.as_deref(),
        Some(
            format!(
                "cannot index {}: decompresses to more than the 256 MiB a compressed transcript \
                 may take in memory (2343790 lines, 7152796 bytes so far): not read; left out",
                zst.display()
            )
            .as_str()
        )
    );
    c.shutdown().await;
}

/// Issue 25 item 8: a file whose records would take more than the index gives one file
/// (1 GiB as `source::room` counts them: 12 M `{}` lines, 36 MB, take 1,380 MB = 1,317 MiB) is left
/// out with a warning naming it and its lines, before it is read (it took 1.3 GB in the
/// build before); the other transcripts of the root are indexed as ever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_of_too_many_records_is_left_out_of_the_index_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sessions");
    std::fs::create_dir_all(&root).unwrap();
    let plain = root.join("plain.jsonl");
    std::fs::copy(fixtures_dir().join(DEMO), &plain).unwrap();
    let many = root.join("many.jsonl");
    // `{}` and `[]` lines by turns: a `{}` after another would be one entry with it.
    std::fs::write(&many, "{}\n[]\n".repeat(6_000_000)).unwrap();
    let mut c = indexed(std::slice::from_ref(&root)).await;
    let r = c.request("transcript/sessions", json!({})).await.unwrap();
    assert_eq!(uris(&r), vec![file_uri(&plain)]);
    let warned = c
        .sent()
        .into_iter()
        .filter(|s| s.method == "window/logMessage" && s.params["type"] == 2)
        .map(|s| s.params["message"].as_str().unwrap().to_string())
        .find(|m| m.contains("many.jsonl"));
    assert_eq!(
        warned.as_deref(),
        Some(
            format!(
                "cannot index {}: has 12000000 lines, which would take about 1317 MiB of memory \
                 once read, more than the 1024 MiB that can be taken now: not read; left out",
                many.display()
            )
            .as_str()
        )
    );
    c.shutdown().await;
}

/// Issue 25 item 5, on a real file system with the real watcher: a folder under an index
/// root deleted and made again, then the root itself: a transcript written in the new
/// folder appears in `transcript/sessions` (it never did until a restart), the deleted ones
/// leave it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_index_folder_made_again_is_watched_again() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("projects");
    let app = root.join("-home-me-app");
    std::fs::create_dir_all(&app).unwrap();
    let text = std::fs::read_to_string(fixtures_dir().join(DEMO)).unwrap();
    let first = app.join("s.jsonl");
    std::fs::write(&first, &text).unwrap();
    let mut c = indexed(std::slice::from_ref(&root)).await;
    assert_eq!(
        poll_uris(&mut c, &[file_uri(&first)]).await,
        vec![file_uri(&first)]
    );

    std::fs::remove_dir_all(&app).unwrap();
    assert_eq!(poll_uris(&mut c, &[]).await, Vec::<String>::new());
    std::fs::create_dir(&app).unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let second = app.join("t.jsonl");
    std::fs::write(&second, &text).unwrap();
    assert_eq!(
        poll_uris(&mut c, &[file_uri(&second)]).await,
        vec![file_uri(&second)]
    );

    std::fs::remove_dir_all(&root).unwrap();
    assert_eq!(poll_uris(&mut c, &[]).await, Vec::<String>::new());
    std::fs::create_dir_all(&app).unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let third = app.join("u.jsonl");
    std::fs::write(&third, &text).unwrap();
    assert_eq!(
        poll_uris(&mut c, &[file_uri(&third)]).await,
        vec![file_uri(&third)]
    );
    c.shutdown().await;
}

/// Issue 25 item 6: quick `roots` changes run one index build at a time, a newer one
/// superseding (stopping) the running one: started on a root of 300 transcripts, then
/// changed to another big root, back, and to a root of one, the index ends with the last
/// roots' single transcript, the superseded builds log that they stopped before reading
/// every file, and only the last build reports `indexed`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newer_roots_change_supersedes_the_running_index_build() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixtures_dir().join(DEMO)).unwrap();
    let (big, big2, small) = (
        dir.path().join("big"),
        dir.path().join("big2"),
        dir.path().join("small"),
    );
    for (root, n) in [(&big, 300), (&big2, 300), (&small, 1)] {
        std::fs::create_dir_all(root).unwrap();
        for i in 0..n {
            std::fs::write(root.join(format!("s{i:03}.jsonl")), &text).unwrap();
        }
    }
    let roots = |r: &std::path::Path| json!({"settings": {"transcript": {"roots": [r.to_string_lossy()], "indexCache": false}}});
    let (mut c, _) = TestClient::start(
        client_caps(false),
        json!({"roots": [big.to_string_lossy()], "indexCache": false}),
    )
    .await;
    // The first build has begun reading its files.
    c.wait_for(Duration::from_secs(30), |s| {
        s.method == "$/progress" && s.params["value"]["kind"] == "begin"
    })
    .await
    .expect("index progress begin");
    for r in [&big2, &big, &small] {
        c.notify("workspace/didChangeConfiguration", roots(r)).await;
    }
    let last = c
        .wait_for(Duration::from_secs(60), |s| {
            s.method == "window/logMessage"
                && s.params["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("indexed "))
        })
        .await
        .expect("an index build ends");
    assert_eq!(last.params["message"], "indexed 1 transcripts, 9 turns");
    let want = vec![file_uri(&small.join("s000.jsonl"))];
    assert_eq!(poll_uris(&mut c, &want).await, want);
    let logs: Vec<String> = c
        .sent()
        .into_iter()
        .filter(|s| s.method == "window/logMessage")
        .map(|s| s.params["message"].as_str().unwrap().to_string())
        .collect();
    let indexed: Vec<&String> = logs.iter().filter(|m| m.starts_with("indexed ")).collect();
    assert_eq!(indexed, vec!["indexed 1 transcripts, 9 turns"], "{logs:#?}");
    let stopped: Vec<usize> = logs
        .iter()
        .filter_map(|m| m.strip_prefix("index build superseded after "))
        // Builds of the two big roots (a build the client's first configuration answer
        // started before these may have another total; it is not counted).
        .filter_map(|m| {
            let (read, total) = m
                .strip_suffix(" files")
                .unwrap()
                .split_once(" of ")
                .unwrap();
            (total == "300").then(|| read.parse().unwrap())
        })
        .collect();
    // The first build (of `big`) was running when the changes came; the others may have
    // been superseded before they began (they then log nothing) or while they ran.
    assert!(!stopped.is_empty(), "{logs:#?}");
    assert!(stopped.iter().all(|&n| n < 300), "{stopped:?}");
    eprintln!("superseded builds read {stopped:?} of 300 files");
    c.shutdown().await;
}

/// Issue 25, Low list: a transcript whose file name is not UTF-8 is indexed, its URI
/// percent-encoding the bytes as written (it was left out of `transcript/sessions` without
/// a word: its path did not serialize), and its view opens from that URI.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_name_that_is_not_utf8_is_indexed() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sessions");
    std::fs::create_dir_all(&root).unwrap();
    let odd = root.join(std::ffi::OsStr::from_bytes(b"caf\xe9.jsonl"));
    std::fs::copy(fixtures_dir().join(DEMO), &odd).unwrap();
    let mut c = indexed(std::slice::from_ref(&root)).await;
    let r = c.request("transcript/sessions", json!({})).await.unwrap();
    let got = uris(&r);
    let logs: Vec<String> = c
        .sent()
        .into_iter()
        .filter(|s| s.method == "window/logMessage")
        .map(|s| s.params["message"].to_string())
        .collect();
    assert_eq!(got.len(), 1, "{r} {logs:?}");
    assert!(got[0].ends_with("/sessions/caf%E9.jsonl"), "{got:?}");
    // Its view opens from that URI (the bytes read back as written).
    let view = got[0].replacen("file://", "transcript://", 1);
    let v = c
        .request("workspace/textDocumentContent", json!({"uri": view}))
        .await
        .unwrap();
    assert!(v["text"].as_str().unwrap().contains("## Turn 1"), "{v}");
    c.shutdown().await;
}

/// Issue 23 item 9: a followed live session whose turn finishes is told to the client's session
/// list with `transcript/didChangeSessions` once the index holds it, and `transcript/sessions`
/// then agrees with the view (not live; the answer shown), instead of a tree polling on a timer
/// and keeping its live dot after the view showed the turn finished.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_followed_session_that_finishes_is_told_to_the_session_list() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    std::fs::create_dir_all(&root).unwrap();
    let path = root.join("in-flight.jsonl");
    // Turn 2 waits on its Bash call (fixtures/rules/README.md): written now, so it is live.
    std::fs::copy(fixtures_dir().join("rules/in-flight.jsonl"), &path).unwrap();
    let mut c = indexed(std::slice::from_ref(&root)).await;
    let live = |r: &Value| -> Vec<bool> {
        r["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["live"].as_bool().unwrap())
            .collect()
    };
    let before = c.request("transcript/sessions", json!({})).await.unwrap();
    assert_eq!(live(&before), [true]);
    let view = view_uri(&path, None);
    let text = c.open_view(&view).await;
    assert!(text.contains("… working"), "{text}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    c.clear_sent();

    let sid = "c607ff1c-764f-49b0-864e-b6e91cd9e1d9";
    let result = json!({"parentUuid":"if-06","isSidechain":false,"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_01tBmNHgJzBphsPZCroa9iwW","type":"tool_result","content":"Finished `release` profile [optimized] target(s) in 41.2s","is_error":false}]},"uuid":"if-07","timestamp":"2026-05-13T11:21:20.000Z","sessionId":sid,"version":"2.1.114","cwd":"/home/user/project","userType":"external"});
    let answer = json!({"parentUuid":"if-07","isSidechain":false,"message":{"model":"claude-sonnet-4-5-20250929","id":"msg_01FinishedBuildAnswer0001","type":"message","role":"assistant","content":[{"type":"text","text":"The release binary is at target/release/app."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":3,"cache_creation_input_tokens":0,"cache_read_input_tokens":17400,"output_tokens":12}},"requestId":"req_01FinishedBuild0001","type":"assistant","uuid":"if-08","timestamp":"2026-05-13T11:21:22.000Z","sessionId":sid,"version":"2.1.114","cwd":"/home/user/project","userType":"external"});
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        writeln!(f, "{result}\n{answer}").unwrap();
    }
    let uri = file_uri(&path);
    let told = c
        .wait_for(Duration::from_secs(10), |s| {
            s.method == "transcript/didChangeSessions"
                && s.params["uris"]
                    .as_array()
                    .is_some_and(|u| u.iter().any(|u| u == uri.as_str()))
        })
        .await;
    assert!(
        told.is_some(),
        "no transcript/didChangeSessions: {:?}",
        c.sent()
    );
    let after = c.request("transcript/sessions", json!({})).await.unwrap();
    assert_eq!(live(&after), [false]);
    let text = c
        .request("workspace/textDocumentContent", json!({"uri": view}))
        .await
        .unwrap();
    let text = text["text"].as_str().unwrap();
    assert!(
        text.contains("The release binary is at target/release/app.")
            && !text.contains("… working"),
        "{text}"
    );
}

/// Issue 23 item 10: a session whose agent asked a question says so in `transcript/sessions`
/// (`waiting`), and the answer appended ends it, told by `transcript/didChangeSessions`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_waiting_for_an_answer_says_so_until_it_comes() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    std::fs::create_dir_all(&root).unwrap();
    let path = root.join("asks.jsonl");
    std::fs::copy(
        fixtures_dir().join("rules/waiting-claude-question.jsonl"),
        &path,
    )
    .unwrap();
    let mut c = indexed(std::slice::from_ref(&root)).await;
    let waiting = |r: &Value| -> Vec<Value> {
        r["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["waiting"].clone())
            .collect()
    };
    let before = c.request("transcript/sessions", json!({})).await.unwrap();
    assert_eq!(
        waiting(&before),
        [
            json!({"kind": "question", "detail": "Should the release build strip debug symbols?", "turn": 2, "line": 5})
        ]
    );
    let view = view_uri(&path, None);
    c.open_view(&view).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    c.clear_sent();
    let sid = "c607ff1c-764f-49b0-864e-b6e91cd9e1d9";
    let answer = json!({"parentUuid":"if-06","isSidechain":false,"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_01AskProfileQuestion0001","type":"tool_result","content":"User has answered your questions: \"Should the release build strip debug symbols?\"=\"Strip\"."}]},"uuid":"if-07","timestamp":"2026-05-13T11:21:20.000Z","sessionId":sid,"version":"2.1.114","cwd":"/home/user/project","userType":"external"});
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        writeln!(f, "{answer}").unwrap();
    }
    let uri = file_uri(&path);
    let told = c
        .wait_for(Duration::from_secs(10), |s| {
            s.method == "transcript/didChangeSessions"
                && s.params["uris"]
                    .as_array()
                    .is_some_and(|u| u.iter().any(|u| u == uri.as_str()))
        })
        .await;
    assert!(
        told.is_some(),
        "no transcript/didChangeSessions: {:?}",
        c.sent()
    );
    let after = c.request("transcript/sessions", json!({})).await.unwrap();
    assert_eq!(waiting(&after), [Value::Null]);
}
