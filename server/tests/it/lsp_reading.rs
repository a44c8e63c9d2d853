//! Reading a session in the editor (issue 11): what the view and the raw document show of a
//! real session, checked through the LSP surface.
//!
//! * The file-age rule: a file nobody wrote to for two minutes is read as finished, so its
//!   last turn's answer is shown (not `… working`); a fresh file is still in flight.

use crate::lsp_common;

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use lsp_common::*;
use serde_json::json;

/// A real Claude Code session whose last turn carries no completion evidence of its own: read
/// as growing it ends in `… working`, read as finished it ends with its answer.
fn ideas_session() -> PathBuf {
    shared_dir().join(
        "corpus/iansherr__claude-code-log/test/test_data/real_projects/-experiments-ideas/\
         03eb5929-52b3-4b13-ada3-b93ae35806b8.jsonl",
    )
}

const LAST_ANSWER: &str = "The `dev-docs/` vs `work/` split works best";

/// Copies `src` into a new temporary folder and sets its modification time `age` ago.
fn copy_aged(src: &Path, age: Duration) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let dst = dir.path().join(src.file_name().unwrap());
    std::fs::copy(src, &dst).unwrap();
    let f = std::fs::File::options().write(true).open(&dst).unwrap();
    f.set_modified(SystemTime::now() - age).unwrap();
    (dir, dst)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_session_shows_its_last_answer() {
    let (_dir, old) = copy_aged(&ideas_session(), Duration::from_secs(600));
    let (mut c, _) = TestClient::start(
        client_caps(false),
        json!({"roots": [], "fileState": "auto"}),
    )
    .await;
    let text = c.open_view(&view_uri(&old, None)).await;
    let tail: Vec<&str> = text.lines().rev().take(12).collect();
    assert!(text.contains(LAST_ANSWER), "last answer missing: {tail:#?}");
    assert!(!text.contains("… working"), "{tail:#?}");
    assert_eq!(text.matches("**Answer**").count(), 7, "one answer per turn");

    // The raw document: the last turn's hint has no in-flight marker, and the stats say so.
    let uri = c.open_file(&old).await;
    let symbols = c
        .request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": uri}}),
        )
        .await
        .unwrap();
    let shown = show_symbols(&symbols);
    assert!(
        shown.iter().any(|s| s.contains("Final answer"))
            && !shown.iter().any(|s| s.contains("working")),
        "{shown:#?}"
    );
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_session_is_still_in_flight() {
    let (_dir, fresh) = copy_aged(&ideas_session(), Duration::ZERO);
    let (mut c, _) = TestClient::start(
        client_caps(false),
        json!({"roots": [], "fileState": "auto"}),
    )
    .await;
    let text = c.open_view(&view_uri(&fresh, None)).await;
    assert!(!text.contains(LAST_ANSWER));
    assert!(
        text.trim_end().ends_with("… working"),
        "{}",
        &text[text.len() - 200..]
    );
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_state_setting_overrides_the_age() {
    let (_dir, old) = copy_aged(&ideas_session(), Duration::from_secs(600));
    let (mut c, _) = TestClient::start(
        client_caps(false),
        json!({"roots": [], "fileState": "growing"}),
    )
    .await;
    let text = c.open_view(&view_uri(&old, None)).await;
    assert!(!text.contains(LAST_ANSWER));
    c.shutdown().await;
    let (_dir2, fresh) = copy_aged(&ideas_session(), Duration::ZERO);
    let (mut c, _) = TestClient::start(
        client_caps(false),
        json!({"roots": [], "fileState": "complete"}),
    )
    .await;
    let text = c.open_view(&view_uri(&fresh, None)).await;
    assert!(text.contains(LAST_ANSWER));
    c.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_that_settles_while_open_shows_its_answer() {
    let (_dir, path) = copy_aged(&ideas_session(), Duration::ZERO);
    let (mut c, _) = TestClient::start(
        client_caps(false),
        json!({"roots": [], "fileState": "auto"}),
    )
    .await;
    let uri = view_uri(&path, None);
    assert!(!c.open_view(&uri).await.contains(LAST_ANSWER));
    // Nobody writes to it for ten minutes: the next read of the view rebuilds it as finished.
    let f = std::fs::File::options().write(true).open(&path).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(600))
        .unwrap();
    let text = c.resync_view(&uri, 2).await;
    assert!(text.contains(LAST_ANSWER));
    c.shutdown().await;
}

/// Folds of a document as `L3-L9 kind: label` lines.
async fn folds(c: &mut TestClient, uri: &str) -> Vec<String> {
    let v = c
        .request(
            "textDocument/foldingRange",
            json!({"textDocument": {"uri": uri}}),
        )
        .await
        .unwrap();
    show_folds(&v)
}

/// Start lines held by more than one fold (Neovim shows one label per start line: the last
/// range's; VS Code keeps one range per start line).
fn shared_starts(folds: &[String]) -> Vec<String> {
    let start = |f: &String| f.split('-').next().unwrap().to_string();
    let mut out: Vec<String> = folds
        .windows(2)
        .filter(|w| start(&w[0]) == start(&w[1]))
        .map(|w| format!("{} | {}", w[0], w[1]))
        .collect();
    out.dedup();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_fold_label_describes_its_own_fold() {
    let (mut c, _) = TestClient::start(client_caps(false), json!({"roots": []})).await;
    let demo = fixtures_dir().join("demo/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl");
    let uri = c.open_file(&demo).await;
    let raw = folds(&mut c, &uri).await;
    // Turn 9's activity and its first work run both start on line 94: the activity's fold
    // (and label) is the one sent for that line.
    assert_eq!(
        raw[raw.len() - 3..],
        [
            "L93-L100 region: Turn 9: Sorry, keep the demo for now. Instead, get a reviewer \
             agent to look over the wh… · 1 comment · 2 tool calls",
            "L94-L98 comment: 1 comment · 2 tool calls",
            "L97-L98 region: Sub-agent: Review currency branch (a6e2b9f04c71d3a58)",
        ]
    );
    assert_eq!(raw.len(), 30);
    let view = folds(&mut c, &view_uri(&demo, Some(true))).await;
    assert_eq!(shared_starts(&raw), Vec::<String>::new());
    assert_eq!(shared_starts(&view), Vec::<String>::new());
    c.shutdown().await;
}

/// `transcript-ls stats --json [extra] FILE` through the CLI's entry point.
fn cli_stats(path: &Path, extra: &[&str]) -> serde_json::Value {
    let mut args: Vec<std::ffi::OsString> = vec!["stats".into(), "--json".into()];
    args.extend(extra.iter().map(Into::into));
    args.push(path.into());
    let (mut out, mut err) = (Vec::new(), Vec::new());
    assert_eq!(transcript_ls::cli::run(args, &mut out, &mut err), 0);
    serde_json::from_slice(&out).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stats_request_gives_the_cli_figures() {
    let (_dir, old) = copy_aged(&ideas_session(), Duration::from_secs(600));
    let demo = fixtures_dir().join("demo/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl");
    let (mut c, _) = TestClient::start(
        client_caps(false),
        json!({"roots": [], "fileState": "auto"}),
    )
    .await;
    // A file not open, by its file: URI; the same file by its view URI.
    let mut got = c
        .request("transcript/stats", json!({"uri": file_uri(&old)}))
        .await
        .unwrap();
    let mut want = cli_stats(&old, &[]);
    assert_eq!(got["turns"], 7);
    assert_eq!(got["final_answers"], 7);
    assert_eq!(got["usage"]["output"], want["usage"]["output"]);
    let by_view = c
        .request(
            "transcript/stats",
            json!({"uri": view_uri(&old, Some(true))}),
        )
        .await
        .unwrap();
    assert_eq!(by_view, got);
    got["file"] = json!(null);
    want["file"] = json!(null);
    assert_eq!(got, want);

    // An open raw document: the demo (its `stats` figures: 9 turns, 30 steps, 24 tool calls,
    // 6,701 output tokens).
    let uri = c.open_file(&demo).await;
    let got = c
        .request("transcript/stats", json!({"uri": uri}))
        .await
        .unwrap();
    assert_eq!(
        got["turn_list"],
        cli_stats(&demo, &["--growing"])["turn_list"]
    );
    assert_eq!(
        (
            &got["turns"],
            &got["steps"],
            &got["tool_calls"],
            &got["usage"]["output"]
        ),
        (&json!(9), &json!(30), &json!(24), &json!(6701))
    );

    // Errors: not a transcript, a missing file, another scheme.
    let readme = fixtures_dir().join("demo/README.md");
    let e = c
        .request("transcript/stats", json!({"uri": file_uri(&readme)}))
        .await
        .unwrap_err();
    assert!(e.1.starts_with("not a transcript"), "{e:?}");
    let e = c
        .request(
            "transcript/stats",
            json!({"uri": "file:///nonexistent/x.jsonl"}),
        )
        .await
        .unwrap_err();
    assert!(e.1.contains("cannot read /nonexistent/x.jsonl"), "{e:?}");
    let e = c
        .request("transcript/stats", json!({"uri": "untitled:Untitled-1"}))
        .await
        .unwrap_err();
    assert!(e.1.contains("needs a file: or transcript: URI"), "{e:?}");
    c.shutdown().await;
}

/// Every file edit of the corpus's real sessions (Claude Code Edit / MultiEdit / Write /
/// NotebookEdit, Codex apply_patch) renders as a diff in the verbose view: one diff fold per
/// edit call, none left as a bare "…has been updated" line.
#[test]
fn every_corpus_edit_renders_as_a_diff() {
    use transcript_ls::model::BlockKind;
    let mut files = Vec::new();
    jsonl_files(&shared_dir().join("corpus"), &mut files);
    let (mut edits_total, mut diffs_total, mut files_with_edits) = (0, 0, 0);
    for path in &files {
        let Ok(l) = transcript_ls::cli::load(path, &Default::default(), Some(true)) else {
            continue;
        };
        let edits = l
            .transcript
            .entries
            .iter()
            .flat_map(|e| &e.blocks)
            .filter(|b| match &b.kind {
                BlockKind::ToolUse(u) => {
                    matches!(
                        &*u.name,
                        "Edit"
                            | "MultiEdit"
                            | "Write"
                            | "NotebookEdit"
                            | "apply_patch"
                            | "edit"
                            | "write"
                    )
                    // A Pi `edit` with no new text is a malformed call that changed nothing
                    // (the Pi v1 corpus file's line 843: `{path, oldText}`, never run): no diff.
                    && !(&*u.name == "edit" && {
                        let raw = &l.source[u.input.clone()];
                        !raw.contains("\"newText\"") && !raw.contains("\"edits\"")
                    })
                }
                _ => false,
            })
            .count();
        if edits == 0 {
            continue;
        }
        let v = transcript_ls::view::render(
            &l.transcript,
            &l.analysis,
            &l.source,
            &transcript_ls::view::ViewOptions { verbose: true },
        );
        let diffs = v
            .regions
            .iter()
            .filter(|r| r.label.starts_with("diff"))
            .count();
        // A work run or sub-agent section lists at most 40 items, but never leaves an edit
        // out (issue 11, item 2): every edit call renders as a diff.
        assert_eq!(diffs, edits, "{}: edit calls vs diffs", path.display());
        // Each opens in the editor's diff (issue 11, item 3): a `Show diff` lens per call in
        // the raw file, with two readable sides.
        let calls = transcript_ls::view::edits::edit_calls(&l.transcript, &l.analysis, &l.source);
        assert_eq!(calls.len(), edits, "{}", path.display());
        for c in &calls {
            let s = transcript_ls::view::edits::sides(&l.transcript, &l.source, c);
            assert!(
                s.is_some_and(|s| s.before != s.after || c.added + c.removed == 0),
                "{}: {c:?}",
                path.display()
            );
        }
        let raw_lenses = transcript_ls::ide::code_lens::edit_lenses(&calls, |e, _| {
            l.transcript.entries.get(e).map(|x| x.line)
        });
        assert_eq!(raw_lenses.len(), edits);
        edits_total += edits;
        diffs_total += diffs;
        files_with_edits += 1;
    }
    // 5 edits of one file sit past the 40-item cap of its sub-agent sections and 6 of the Pi
    // session's 25 `edit` / `write` calls past the cap of its work runs: shown all the same.
    // The Pi v1 file (issue 20 item 4) adds 148 (145 `edit`, 3 `write`; 1 malformed left out).
    assert_eq!((files_with_edits, edits_total, diffs_total), (9, 331, 331));
}

/// `transcript-ls render -` reads the transcript from standard input (issue 11, item 6), as
/// a finished file.
#[test]
fn render_reads_standard_input() {
    use std::io::Write as _;
    use std::process::{Command, Stdio};
    let demo = fixtures_dir().join("demo/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl");
    let bin = env!("CARGO_BIN_EXE_transcript-ls");
    let mut child = Command::new(bin)
        .args(["render", "--verbose", "--time-zone", "UTC", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&std::fs::read(&demo).unwrap())
        .unwrap();
    let piped = child.wait_with_output().unwrap();
    assert!(piped.status.success());
    let file = Command::new(bin)
        .args(["render", "--verbose", "--time-zone", "UTC", "--complete"])
        .arg(&demo)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&piped.stdout),
        String::from_utf8_lossy(&file.stdout)
    );
    assert!(piped.stdout.starts_with(b"# GET /accounts?currency=usd"));
    // Not a transcript on standard input: a one-line reason naming `-`, exit 1.
    let mut child = Command::new(bin)
        .args(["stats", "-"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"{\"a\":1}\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).starts_with("transcript-ls: -: not a transcript"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `render --color`: ANSI colours on the view's spans, the same text once they are removed;
/// none with `--color=never` or when standard output is not a terminal (`auto`).
#[test]
fn render_colours_on_request() {
    use std::process::Command;
    let demo = fixtures_dir().join("demo/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl");
    let bin = env!("CARGO_BIN_EXE_transcript-ls");
    let run = |color: &str| {
        let out = Command::new(bin)
            .args(["render", "--verbose", "--time-zone", "UTC", color])
            .arg(&demo)
            .env_remove("NO_COLOR")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let plain = run("--color=never");
    let colored = run("--color=always");
    let auto = run("--color=auto"); // a pipe, not a terminal
    assert!(!plain.contains('\x1b') && !auto.contains('\x1b'));
    assert_eq!(auto, plain);
    assert!(colored.contains("\x1b[1mFixed. Two problems combined into the 500:\x1b[0m"));
    assert!(colored.contains("\x1b[31m-        match s {\x1b[0m"));
    assert!(colored.contains("\x1b[32m+        match s.to_ascii_uppercase"));
    let mut stripped = String::new();
    let mut rest = colored.as_str();
    while let Some(i) = rest.find('\x1b') {
        stripped.push_str(&rest[..i]);
        rest = &rest[i + rest[i..].find('m').unwrap() + 1..];
    }
    stripped.push_str(rest);
    assert_eq!(stripped, plain);
    let bad = Command::new(bin)
        .args(["render", "--color=sometimes"])
        .arg(&demo)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

/// The text of a `transcript:` URI (`workspace/textDocumentContent`).
async fn text(c: &mut TestClient, uri: String) -> Result<String, (i64, String)> {
    c.request("workspace/textDocumentContent", json!({ "uri": uri }))
        .await
        .map(|v| v["text"].as_str().unwrap().to_string())
}

/// A real Claude Code sub-agent session with one `Write` (a new file) and four `Edit`s.
fn worktree_agent() -> PathBuf {
    shared_dir().join(
        "corpus/iansherr__claude-code-log/test/test_data/real_projects/-experiments-worktrees/\
         ef958aa1-0e93-49f0-bb71-150f63befcd1/subagents/agent-a4ca7529859c158c2.jsonl",
    )
}

/// Issue 11, item 3: a `Show diff` code lens on each file edit, in the raw file and in the
/// verbose view; `transcript.showDiff` names the two sides by `transcript:` URIs whose text
/// is the change's before / after (a new file against empty).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn show_diff_lenses_and_sides() {
    let path = worktree_agent();
    let (mut c, _) = TestClient::start(client_caps(false), json!({"roots": []})).await;
    let raw = c.open_file(&path).await;
    let lenses = c
        .request(
            "textDocument/codeLens",
            json!({"textDocument": {"uri": raw}}),
        )
        .await
        .unwrap();
    let diffs: Vec<String> = show_lenses(&lenses)
        .into_iter()
        .filter(|l| l.contains("transcript.showDiff"))
        .collect();
    assert_eq!(
        diffs,
        [
            "L31 Show diff · +106 −0 -> transcript.showDiff([{\"line\":30,\"uri\":\"file:…/agent-a4ca7529859c158c2.jsonl\"}])",
            "L36 Show diff · +3 −4 -> transcript.showDiff([{\"line\":35,\"uri\":\"file:…/agent-a4ca7529859c158c2.jsonl\"}])",
            "L38 Show diff · +5 −6 -> transcript.showDiff([{\"line\":37,\"uri\":\"file:…/agent-a4ca7529859c158c2.jsonl\"}])",
            "L40 Show diff · +3 −3 -> transcript.showDiff([{\"line\":39,\"uri\":\"file:…/agent-a4ca7529859c158c2.jsonl\"}])",
            "L45 Show diff · +10 −10 -> transcript.showDiff([{\"line\":44,\"uri\":\"file:…/agent-a4ca7529859c158c2.jsonl\"}])",
        ]
    );
    // The Write: a new file against empty.
    let first = &lenses
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["command"]["command"] == "transcript.showDiff")
        .unwrap()["command"]["arguments"][0];
    let r = c.command("transcript.showDiff", first.clone()).await;
    assert_eq!(
        r["title"],
        "work/research-plan-mode.md · Write (before ↔ after)"
    );
    let before = r["before"].as_str().unwrap().to_string();
    let after = r["after"].as_str().unwrap().to_string();
    assert!(
        before.starts_with("transcript:/")
            && before.contains("research-plan-mode.md?call=toolu_")
            && before.contains("&side=before&path=/"),
        "{before}"
    );
    assert_eq!(text(&mut c, before).await.unwrap(), "");
    let a = text(&mut c, after).await.unwrap();
    assert_eq!(a.lines().count(), 106);
    assert!(
        a.starts_with("# Plan Mode in Claude Code\n"),
        "{}",
        &a[..80]
    );

    // The verbose view: the same five lenses, on the tool call lines; running one from a diff
    // line under the call gives the same sides; the texts are the Edit's old / new strings.
    let view = view_uri(&path, Some(true));
    let vtext = c.open_view(&view).await;
    let lenses = c
        .request(
            "textDocument/codeLens",
            json!({"textDocument": {"uri": view}}),
        )
        .await
        .unwrap();
    let lines: Vec<u64> = lenses
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["command"]["command"] == "transcript.showDiff")
        .map(|l| l["range"]["start"]["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines.len(), 5);
    let vlines: Vec<&str> = vtext.lines().collect();
    for &l in &lines {
        assert!(
            vlines[l as usize].contains("⚙ Write") || vlines[l as usize].contains("⚙ Edit"),
            "{}",
            vlines[l as usize]
        );
    }
    let second = c
        .command(
            "transcript.showDiff",
            json!({"uri": view, "line": lines[1] + 2}),
        )
        .await;
    assert_eq!(
        second["title"],
        "work/research-plan-mode.md · Edit (before ↔ after)"
    );
    let b = text(&mut c, second["before"].as_str().unwrap().to_string())
        .await
        .unwrap();
    let a = text(&mut c, second["after"].as_str().unwrap().to_string())
        .await
        .unwrap();
    assert_eq!(
        (b.lines().count(), a.lines().count()),
        (7, 6),
        "{b}\n---\n{a}"
    );
    // Nothing to diff on a prompt line; a side URI has text only.
    assert_eq!(
        c.command("transcript.showDiff", json!({"uri": view, "line": 0}))
            .await,
        serde_json::Value::Null
    );
    let e = c
        .request(
            "textDocument/foldingRange",
            json!({"textDocument": {"uri": second["before"]}}),
        )
        .await
        .unwrap_err();
    assert!(e.1.contains("one side of a file edit's diff"), "{e:?}");
    let e = c
        .request(
            "workspace/textDocumentContent",
            json!({"uri": second["before"].as_str().unwrap().replace("call=toolu_", "call=nope_")}),
        )
        .await
        .unwrap_err();
    assert!(e.1.contains("no file edit nope_"), "{e:?}");
    c.shutdown().await;
}

/// Issue 11, item 5: the quiet view's hidden activity is one lens away. Each turn with
/// activity has a `Show activity: …` lens on its heading (a turn without an answer on its
/// `(no reply — …)` line) that opens the verbose view at that turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quiet_view_lenses_open_the_verbose_view_at_the_turn() {
    let demo = fixtures_dir().join("demo/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl");
    let (mut c, _) = TestClient::start(client_caps(false), json!({"roots": []})).await;
    let quiet = view_uri(&demo, Some(false));
    let text = c.open_view(&quiet).await;
    let lines: Vec<&str> = text.lines().collect();
    let lenses = c
        .request(
            "textDocument/codeLens",
            json!({"textDocument": {"uri": quiet}}),
        )
        .await
        .unwrap();
    let shown: Vec<String> = lenses
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| {
            l["command"]["title"]
                .as_str()
                .unwrap()
                .starts_with("Show activity")
        })
        .map(|l| {
            let line = l["range"]["start"]["line"].as_u64().unwrap() as usize;
            format!(
                "{} | {}",
                lines[line],
                l["command"]["title"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            "## Turn 1 | Show activity: 2 comments · 5 tool calls",
            "## Turn 2 | Show activity: 2 comments · 3 tool calls",
            "## Turn 3 | Show activity: 1 comment · 4 tool calls",
            "## Turn 4 — ⏰ background task finished | Show activity: 1 tool call",
            "## Turn 5 | Show activity: 1 comment · 4 tool calls",
            "## Turn 6 | Show activity: 2 comments · 2 tool calls",
            "## Turn 7 | Show activity: 2 tool calls",
            "(no reply — 1 comment · 1 tool call) | Show activity: 1 comment · 1 tool call",
            "## Turn 9 | Show activity: 1 comment · 2 tool calls",
        ]
    );
    // Running the no-reply lens: the verbose view, at turn 8's heading.
    let no_reply = lenses
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["command"]["arguments"][0]["turn"] == 8)
        .unwrap();
    assert_eq!(no_reply["command"]["command"], "transcript.openView");
    let args = no_reply["command"]["arguments"][0].clone();
    assert_eq!(
        (args["verbose"].clone(), args["reveal"].clone()),
        (json!(true), json!(true))
    );
    let r = c.command("transcript.openView", args).await;
    let verbose = r["uri"].as_str().unwrap().to_string();
    assert!(verbose.ends_with("?verbose=1"), "{verbose}");
    let vtext = c.open_view(&verbose).await;
    let line = r["line"].as_u64().unwrap() as usize;
    assert_eq!(vtext.lines().nth(line), Some("## Turn 8"));
    assert!(
        vtext
            .lines()
            .skip(line)
            .take(12)
            .any(|l| l.starts_with("▸ Worked")),
        "the verbose view shows turn 8's work"
    );
    // The verbose view has no such lenses (it shows everything).
    let lenses = c
        .request(
            "textDocument/codeLens",
            json!({"textDocument": {"uri": verbose}}),
        )
        .await
        .unwrap();
    assert!(!lenses.to_string().contains("Show activity"), "{lenses}");
    c.shutdown().await;
}

/// Issue 11, item 4 (local times): a record's hover gives its time in the time-zone setting,
/// on the 12-hour clock of the turn hints and of `transcript/stats` (`finished_at`), not as a
/// UTC ISO stamp.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hover_times_are_local_like_hints_and_stats() {
    let demo = fixtures_dir().join("demo/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl");
    let (mut c, _) = TestClient::start(
        client_caps(false),
        json!({"roots": [], "timeZone": "Asia/Shanghai"}),
    )
    .await;
    let uri = c.open_file(&demo).await;
    // Line 4 (0-based 3): turn 1's prompt, 2026-05-12T11:48:05.112Z.
    let h = c.hover(&uri, 3, 0).await;
    let h = h.as_str().unwrap_or_default().to_string();
    assert!(
        h.starts_with("**Prompt** · `user` · 12 May 2026, 07:48:05 pm · turn 1 · line 4"),
        "{h}"
    );
    assert!(!h.lines().next().unwrap().contains("2026-05-12T"), "{h}");
    let stats = c
        .request("transcript/stats", json!({"uri": uri}))
        .await
        .unwrap();
    assert_eq!(stats["turn_list"][1]["finished_at"], "07:48 pm");
    let view = view_uri(&demo, Some(false));
    c.open_view(&view).await;
    let hints = c
        .request(
            "textDocument/inlayHint",
            json!({"textDocument": {"uri": view}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 400, "character": 0}}}),
        )
        .await
        .unwrap();
    let first = show_hints(&hints).into_iter().next().unwrap_or_default();
    assert!(first.ends_with("· 07:48 pm"), "{first}");
    c.shutdown().await;
}

/// Issue 22, item 2: a change lens on each turn that changed files (raw file and view), the
/// session's on the view's first line; `transcript.showChanges` names each file's two sides
/// by `transcript:` URIs whose text is the whole file (an exact change) or its hunks; the
/// outline has a `Changes` child per such turn with the files under it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn change_lenses_and_sides() {
    let path = fixtures_dir().join("rules/changes-claude.jsonl");
    let (mut c, _) = TestClient::start(client_caps(false), json!({"roots": []})).await;
    let raw = c.open_file(&path).await;
    let lenses = c
        .request(
            "textDocument/codeLens",
            json!({"textDocument": {"uri": raw}}),
        )
        .await
        .unwrap();
    let changes: Vec<String> = show_lenses(&lenses)
        .into_iter()
        .filter(|l| l.contains("✎"))
        .collect();
    assert_eq!(
        changes,
        [
            "L1 ✎ 2 files changed · +8 −2 · 1 edit not applied · ⎇ committed 1a2b3c4 -> transcript.showChanges([{\"turn\":1,\"uri\":\"file:…/changes-claude.jsonl\"}])",
            "L13 ✎ 1 file changed · +1 −1 -> transcript.showChanges([{\"turn\":2,\"uri\":\"file:…/changes-claude.jsonl\"}])",
        ]
    );
    let r = c
        .command("transcript.showChanges", json!({"uri": raw, "turn": 1}))
        .await;
    assert_eq!(
        r["title"],
        "Turn 1: Rename total to sum, add a test and commit. · ✎ 2 files changed · +8 −2 · 1 edit not applied · ⎇ committed 1a2b3c4"
    );
    let files = r["files"].as_array().unwrap();
    let labels: Vec<&str> = files.iter().map(|f| f["label"].as_str().unwrap()).collect();
    assert_eq!(
        labels,
        ["M src/calc.rs +2 −2", "A tests/calc_test.rs +6 −0"]
    );
    assert_eq!(files[0]["exact"], true);
    let before = files[0]["before"].as_str().unwrap().to_string();
    assert_eq!(
        before,
        format!(
            "transcript:/home/user/project/src/calc.rs?change=1&side=before&path={}",
            path.canonicalize().unwrap().display()
        )
    );
    assert_eq!(
        text(&mut c, before).await.unwrap(),
        "fn total(a: i32, b: i32) -> i32 {\n    a + b\n}\n\nfn main() {\n    println!(\"{}\", total(1, 2));\n}\n"
    );
    assert_eq!(
        text(&mut c, files[1]["before"].as_str().unwrap().to_string())
            .await
            .unwrap(),
        ""
    );
    // The opener's hover says what the turn changed and the commit it made (item 6).
    let h = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": raw}, "position": {"line": 0, "character": 5}}),
        )
        .await
        .unwrap();
    let h = h["contents"]["value"].as_str().unwrap();
    assert!(
        h.contains("**✎ 2 files changed · +8 −2 · 1 edit not applied · ⎇ committed 1a2b3c4**\n\n* `M` `src/calc.rs` +2 −2\n* `A` `tests/calc_test.rs` +6 −0\n* not counted: 1 not applied, 0 without a result\n* ⎇ commit `1a2b3c4` on main: Rename total to sum\n"),
        "{h}"
    );
    // Turn 2 is known by its hunk only; the session's is exact over both turns.
    let r2 = c
        .command("transcript.showChanges", json!({"uri": raw, "line": 14}))
        .await;
    assert_eq!(r2["turn"], 2);
    let f2 = &r2["files"][0];
    assert_eq!(f2["exact"], false);
    assert_eq!(
        text(&mut c, f2["before"].as_str().unwrap().to_string())
            .await
            .unwrap(),
        "⋯ @@ ⋯\n    a + b\n"
    );
    assert_eq!(
        text(&mut c, f2["after"].as_str().unwrap().to_string())
            .await
            .unwrap(),
        "⋯ @@ ⋯\n    a.saturating_add(b)\n"
    );
    let s = c
        .command(
            "transcript.showChanges",
            json!({"uri": raw, "session": true}),
        )
        .await;
    assert_eq!(s["title"], "Session · ✎ 2 files changed in 2 turns · +9 −3");
    assert_eq!(
        text(&mut c, s["files"][0]["after"].as_str().unwrap().to_string())
            .await
            .unwrap(),
        "fn sum(a: i32, b: i32) -> i32 {\n    a.saturating_add(b)\n}\n\nfn main() {\n    println!(\"{}\", sum(1, 2));\n}\n"
    );
    // A file the turn did not change; a side has text only.
    let e = c
        .request(
            "workspace/textDocumentContent",
            json!({"uri": f2["before"].as_str().unwrap().replace("src/calc.rs", "src/nope.rs")}),
        )
        .await
        .unwrap_err();
    assert!(
        e.1.contains("turn 2 did not change /home/user/project/src/nope.rs"),
        "{e:?}"
    );
    let e = c
        .request(
            "textDocument/foldingRange",
            json!({"textDocument": {"uri": f2["before"]}}),
        )
        .await
        .unwrap_err();
    assert!(e.1.contains("one side of a change set's diff"), "{e:?}");

    // The view: the session's lens on line 0, each turn's on its heading; the outline's
    // `Changes` children list the files.
    let view = view_uri(&path, Some(false));
    let vtext = c.open_view(&view).await;
    let lenses = c
        .request(
            "textDocument/codeLens",
            json!({"textDocument": {"uri": view}}),
        )
        .await
        .unwrap();
    let vl: Vec<String> = show_lenses(&lenses)
        .into_iter()
        .filter(|l| l.contains("✎"))
        .map(|l| l.split(" -> ").next().unwrap().to_string())
        .collect();
    let lines: Vec<&str> = vtext.lines().collect();
    assert_eq!(vl[0], "L1 ✎ 2 files changed in 2 turns · +9 −3");
    assert_eq!(vl.len(), 3);
    for l in &vl[1..] {
        let n: usize = l[1..l.find(' ').unwrap()].parse().unwrap();
        assert!(lines[n - 1].starts_with("## Turn "), "{}", lines[n - 1]);
    }
    let syms = c
        .request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": view}}),
        )
        .await
        .unwrap();
    let t1 = &syms[0];
    let ch = t1["children"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "Changes")
        .expect("a Changes child");
    assert_eq!(ch["detail"], "2 files · +8 −2");
    let names: Vec<(&str, &str)> = ch["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["name"].as_str().unwrap(), f["detail"].as_str().unwrap()))
        .collect();
    assert_eq!(
        names,
        [
            ("src/calc.rs", "M +2 −2"),
            ("tests/calc_test.rs", "A +6 −0")
        ]
    );
    let l = ch["range"]["start"]["line"].as_u64().unwrap() as usize;
    assert!(lines[l].starts_with("✎ 2 files changed"), "{}", lines[l]);
    c.shutdown().await;
}

/// Issue 25 item 11: a zstd-compressed rollout (`.jsonl.zst`) reads in the view and in
/// `transcript/stats` as the CLI and the index read it (one reader for every surface). Before:
/// the view said `unknown format · 29 invalid lines` and stats counted no turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zstd_rollout_opens_as_its_view_and_its_stats() {
    let fixtures = fixtures_dir().join("rules");
    let (_dir, zst) = copy_aged(
        &fixtures.join("codex-0118-same-ms-copies.jsonl.zst"),
        Duration::from_secs(600),
    );
    let (_dir2, plain) = copy_aged(
        &fixtures.join("codex-0118-same-ms-copies.jsonl"),
        Duration::from_secs(600),
    );
    let (mut c, _) = TestClient::start(
        client_caps(false),
        json!({"roots": [], "fileState": "auto"}),
    )
    .await;
    let zuri = file_uri(&zst);
    let mut got = c
        .request("transcript/stats", json!({"uri": zuri}))
        .await
        .unwrap();
    let mut want = c
        .request("transcript/stats", json!({"uri": file_uri(&plain)}))
        .await
        .unwrap();
    assert_eq!(
        (&got["turns"], &got["usage"]["output"]),
        (&json!(1), &json!(140))
    );
    got["file"] = json!(null);
    want["file"] = json!(null);
    assert_eq!(got, want);
    let text = c.open_view(&view_uri(&zst, None)).await;
    let plain_text = c.open_view(&view_uri(&plain, None)).await;
    assert!(!text.contains("invalid line"), "{text}");
    assert!(text.contains("## Turn 1"), "{text}");
    assert_eq!(
        text.lines().skip(2).collect::<Vec<_>>(),
        plain_text.lines().skip(2).collect::<Vec<_>>()
    );
    c.shutdown().await;
}

/// Issue 23 item 6: a view URI with `markdown=1` is served the view's Markdown form. The real
/// session 0d3a8e6f's prompt holds a screenshot (1,046,384 base64 bytes): the form carries it
/// as a `data:` image on the placeholder's line, the plain view the placeholder only (no
/// base64), both with the same line count. In the verbose form of the real session 03eb5929
/// each activity line is literal with a hard break (`▸ Worked · 2 tool calls` and its tool
/// calls do not run into one paragraph), the agent's comment and the answer stay Markdown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_markdown_form_carries_images_and_keeps_activity_lines_apart() {
    let src = shared_dir().join(
        "corpus/iansherr__claude-code-log/test/test_data/real_projects/\
         -Users-dain-workspace-claude-code-log-sample/0d3a8e6f-290f-4105-a327-a2496e5e2a83.jsonl",
    );
    let (_d, path) = copy_aged(&src, Duration::from_secs(600));
    let (mut c, _) = TestClient::start(client_caps(false), json!({"roots": []})).await;
    let file = path.to_str().unwrap();
    let plain = text(&mut c, format!("transcript://{file}")).await.unwrap();
    let md = text(
        &mut c,
        format!("transcript:/Some%20title?markdown=1&path={file}"),
    )
    .await
    .unwrap();
    assert_eq!(plain.lines().count(), md.lines().count());
    let raw = std::fs::read_to_string(&src).unwrap();
    let needle = "\"media_type\":\"image/png\",\"data\":\"";
    let data = &raw[raw.find(needle).unwrap() + needle.len()..];
    let data = &data[..data.find('"').unwrap()];
    assert_eq!(data.len(), 1_046_384);
    let (i, line) = plain
        .lines()
        .enumerate()
        .find(|(_, l)| l.starts_with("> [image/png"))
        .unwrap();
    assert_eq!(line, "> [image/png · 766 KB]");
    assert!(!plain.contains(&data[..300]));
    assert_eq!(
        md.lines().nth(i).unwrap(),
        format!("> ![image/png · 766 KB](data:image/png;base64,{data})")
    );
    // Everything else is the plain view's (no activity in this quiet view).
    let others = |t: &str| {
        t.lines()
            .enumerate()
            .filter(|&(k, _)| k != i)
            .map(|(_, l)| l.trim_end().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(others(&plain), others(&md));

    let (_d2, ideas) = copy_aged(&ideas_session(), Duration::from_secs(600));
    let ideas = ideas.to_str().unwrap();
    let plain = text(&mut c, format!("transcript://{ideas}?verbose=1"))
        .await
        .unwrap();
    let md = text(&mut c, format!("transcript://{ideas}?verbose=1&markdown=1"))
        .await
        .unwrap();
    assert_eq!(plain.lines().count(), md.lines().count());
    let lines: Vec<&str> = md.lines().collect();
    assert!(lines.contains(&"▸ Worked · 2 tool calls  "), "{md}");
    let read = lines
        .iter()
        .find(|l| l.starts_with("\u{a0}\u{a0}⚙ Read  "))
        .unwrap();
    assert!(
        read.contains("\\/home\\/user\\/project\\/work\\-and\\-dev\\-docs\\.md"),
        "{read}"
    );
    assert!(read.ends_with("  "), "{read}");
    assert!(
        !lines.iter().any(|l| l.starts_with("    ")),
        "no code block:\n{md}"
    );
    // (the agent's comment and the answer are Markdown as written)
    assert!(
        lines.contains(&"Let me take a look at what's here."),
        "{md}"
    );
    assert!(lines.contains(&"**Answer**  "), "{md}");
    c.shutdown().await;
}
