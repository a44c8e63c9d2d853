//! Appends through the document host (issue 12): a document grown by appends from the editor
//! (`didChange` at the end) or from disk (the watcher's `refresh_disk`) gives exactly what a
//! cold read of the same text gives — the model, the analysis, the line index, the raw
//! document's symbols, folding ranges, semantic tokens and inlay hints, and both views. The
//! host lends the reader's transcript to each snapshot and takes it back before the next append,
//! copying it only while a request still holds the old snapshot; both ways are exercised by
//! keeping some of the intermediate snapshots alive.

use std::sync::Arc;

use crate::common;

use proptest::prelude::*;
use transcript_ls::ide::snapshot::{DocSnap, Snapshot};
use transcript_ls::ide::{folding, inlay_hints, semantic_tokens, symbols};
use transcript_ls::source::position::{Encoding, Position};
use transcript_ls::store::document::{Edit, Source};
use transcript_ls::store::host::{DocId, DocRef, Host};

/// Lines of real transcripts, at most 30 per file and 4096 bytes per line.
fn corpus_lines() -> Vec<String> {
    common::corpus_lines(30, 4096)
}

/// A transcript of consecutive lines of one corpus file (so that turns, tool pairs and steps
/// link up), sometimes with a broken line, and the line boundaries to append at.
fn case() -> impl Strategy<Value = (String, Vec<usize>)> {
    let lines = corpus_lines();
    let n = lines.len();
    (
        0..n,
        2usize..30,
        proptest::option::of(0usize..30),
        proptest::collection::vec(0.0f64..1.0, 1..6),
    )
        .prop_map(move |(start, len, broken, cuts)| {
            let mut text = String::new();
            for (k, line) in lines.iter().cycle().skip(start).take(len).enumerate() {
                if broken == Some(k) {
                    let mut half = line.len() / 2;
                    while !line.is_char_boundary(half) {
                        half -= 1;
                    }
                    text.push_str(&line[..half]);
                } else {
                    text.push_str(line);
                }
                text.push('\n');
            }
            let ends: Vec<usize> = text.match_indices('\n').map(|(i, _)| i + 1).collect();
            let mut at: Vec<usize> = cuts
                .iter()
                .map(|f| ends[((ends.len() - 1) as f64 * f) as usize])
                .collect();
            at.sort_unstable();
            at.dedup();
            (text, at)
        })
}

/// Where `text` ends, in UTF-8 code units.
fn end_of(text: &str) -> Position {
    let line = text.matches('\n').count() as u32;
    let col = text.len() - text.rfind('\n').map_or(0, |i| i + 1);
    Position::new(line, col as u32)
}

/// Everything a client can get from a snapshot, printed.
fn observed(snap: &Arc<Snapshot>) -> Vec<String> {
    let (t, a) = (&snap.transcript, &snap.analysis);
    let text = snap.text.as_str();
    vec![
        format!("{t:?}"),
        format!("{a:?}"),
        format!("{:?}", snap.lines),
        format!("{:?}", symbols::raw_symbols(t, a, text)),
        // The snapshot's own outline (kept per turn across appends) is the same.
        format!(
            "{:?}",
            snap.raw_symbols().iter().map(|s| &**s).collect::<Vec<_>>()
        ),
        format!("{:?}", folding::raw_folds(t, a)),
        format!(
            "{:?}",
            semantic_tokens::raw_tokens(t, a, &snap.lookup, text, None)
        ),
        format!("{:?}", inlay_hints::raw_hints(t, text, a, None)),
        snap.view(false).view.text.clone(),
        snap.view(true).view.text.clone(),
    ]
}

fn raw(d: DocSnap) -> Arc<Snapshot> {
    d.snap().clone()
}

/// The editor path: open with the text up to the first cut, append the rest piece by piece
/// (`inside`: after the first append, insert a blank line at the top: an edit elsewhere,
/// which rebuilds), take a snapshot after each; `keep`: hold every snapshot (no reuse without
/// a copy) or none.
async fn editor_appends(text: &str, cuts: &[usize], inside: bool, keep: bool) -> Arc<Snapshot> {
    let host = Host::new();
    let doc = &DocId::new("untitled:append");
    host.open_raw(doc, None, text[..cuts[0]].to_string(), 1);
    let mut held = Vec::new();
    let mut version = 1;
    let mut now = text[..cuts[0]].to_string();
    let mut bounds: Vec<usize> = cuts.to_vec();
    bounds.push(text.len());
    for w in bounds.windows(2) {
        let s = raw(host.doc_snap(&DocRef::Raw(doc.clone())).await.unwrap());
        if keep {
            held.push(s);
        } else {
            drop(s); // the append takes the transcript back without a copy
        }
        let piece = &text[w[0]..w[1]];
        let end = end_of(&now);
        version += 1;
        let edit = Edit {
            range: Some((end, end)),
            text: piece.to_string(),
        };
        host.change_raw(doc, version, vec![edit], Encoding::Utf8)
            .unwrap();
        now.push_str(piece);
        if inside && version == 2 {
            version += 1;
            let top = Position::new(0, 0);
            let edit = Edit {
                range: Some((top, top)),
                text: "\n".into(),
            };
            host.change_raw(doc, version, vec![edit], Encoding::Utf8)
                .unwrap();
            now.insert(0, '\n');
        }
    }
    assert_eq!(*host.raw_source(doc).unwrap().text(), now);
    raw(host.doc_snap(&DocRef::Raw(doc.clone())).await.unwrap())
}

async fn cold(text: &str) -> Arc<Snapshot> {
    let host = Host::new();
    host.open_raw(&DocId::new("untitled:cold"), None, text.to_string(), 1);
    raw(host
        .doc_snap(&DocRef::Raw(DocId::new("untitled:cold")))
        .await
        .unwrap())
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    /// Records appended by the editor give what a cold read of the same text gives.
    #[test]
    fn editor_appends_equal_a_cold_read((text, cuts) in case(), inside: bool, keep: bool) {
        let rt = runtime();
        let grown = rt.block_on(editor_appends(&text, &cuts, inside, keep));
        let whole = if inside { format!("\n{text}") } else { text.clone() };
        let cold = rt.block_on(cold(&whole));
        prop_assert_eq!(grown.text.as_str(), whole.as_str());
        let (g, c) = (observed(&grown), observed(&cold));
        for (a, b) in g.iter().zip(&c) {
            prop_assert_eq!(a, b);
        }
    }

    /// Records appended to the file on disk (read by the watcher's path) give what a cold
    /// read of the file gives.
    #[test]
    fn disk_appends_equal_a_cold_read((text, cuts) in case(), keep: bool) {
        let rt = runtime();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("grown.jsonl");
        std::fs::write(&path, &text[..cuts[0]]).unwrap();
        let grown = rt.block_on(async {
            let host = Host::new();
            let source = host.disk_source(&path).await.unwrap();
            let mut held = Vec::new();
            let mut bounds = cuts.clone();
            bounds.push(text.len());
            for w in bounds.windows(2) {
                let s = source.snapshot(&host.stamp()).await;
                if keep {
                    held.push(s);
                } else {
                    drop(s);
                }
                let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
                std::io::Write::write_all(&mut f, &text.as_bytes()[w[0]..w[1]]).unwrap();
                source.refresh_disk();
            }
            source.snapshot(&host.stamp()).await
        });
        let cold = rt.block_on(async {
            let host = Host::new();
            let source = Arc::new(Source::disk(path.clone()).unwrap());
            source.snapshot(&host.stamp()).await
        });
        prop_assert_eq!(grown.text.as_str(), text.as_str());
        let (g, c) = (observed(&grown), observed(&cold));
        for (a, b) in g.iter().zip(&c) {
            prop_assert_eq!(a, b);
        }
    }
}

/// Whole corpus files of every format grown record by record in the editor (issue 12): at a
/// few points along the way and at the end the snapshot equals a cold read, and most appends
/// were analysed from the start of the last turn only (`Snapshot::kept_turns`), so the
/// incremental path is the one checked, not a silent fallback to a full analysis.
#[test]
fn corpus_files_grown_record_by_record_equal_a_cold_read() {
    let rt = runtime();
    let mut per_format: std::collections::HashMap<String, usize> = Default::default();
    let mut files = 0;
    let (mut all_appends, mut all_kept) = (0, 0);
    for f in common::jsonl_files(&common::shared().join("corpus")) {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        if text.len() > 400_000 || !text.ends_with('\n') {
            continue;
        }
        let format = format!("{:?}", transcript_ls::formats::read(&text).format());
        let seen = per_format.entry(format.clone()).or_default();
        if *seen >= 4 {
            continue;
        }
        let ends: Vec<usize> = text.match_indices('\n').map(|(i, _)| i + 1).collect();
        if ends.len() < 8 {
            continue;
        }
        *seen += 1;
        files += 1;
        let checks: Vec<usize> = (1..=4).map(|k| ends[ends.len() * k / 4 - 1]).collect();
        let (mut appends, mut kept) = (0, 0);
        rt.block_on(async {
            let host = Host::new();
            let doc = &DocId::new("untitled:grown");
            host.open_raw(doc, None, text[..ends[0]].to_string(), 1);
            let mut version = 1;
            let mut at = ends[0];
            for &end in &ends[1..] {
                drop(raw(host.doc_snap(&DocRef::Raw(doc.clone())).await.unwrap()));
                let pos = end_of(&text[..at]);
                version += 1;
                let edit = Edit {
                    range: Some((pos, pos)),
                    text: text[at..end].to_string(),
                };
                host.change_raw(doc, version, vec![edit], Encoding::Utf8)
                    .unwrap();
                at = end;
                if !checks.contains(&end) {
                    continue;
                }
                let grown = raw(host.doc_snap(&DocRef::Raw(doc.clone())).await.unwrap());
                let whole = cold(&text[..end]).await;
                assert_eq!(
                    observed(&grown),
                    observed(&whole),
                    "{} grown to byte {end}",
                    f.display()
                );
            }
        });
        // Count the appends that kept turns: a second pass without the cold reads.
        rt.block_on(async {
            let host = Host::new();
            let doc = &DocId::new("untitled:count");
            host.open_raw(doc, None, text[..ends[0]].to_string(), 1);
            let mut at = ends[0];
            for (k, &end) in ends[1..].iter().enumerate() {
                let before = raw(host.doc_snap(&DocRef::Raw(doc.clone())).await.unwrap());
                let turns = before.analysis.turns.len();
                drop(before);
                let pos = end_of(&text[..at]);
                let edit = Edit {
                    range: Some((pos, pos)),
                    text: text[at..end].to_string(),
                };
                host.change_raw(doc, k as i32 + 2, vec![edit], Encoding::Utf8)
                    .unwrap();
                at = end;
                let after = raw(host.doc_snap(&DocRef::Raw(doc.clone())).await.unwrap());
                if turns >= 2 {
                    appends += 1;
                    kept += usize::from(after.kept_turns > 0);
                }
            }
        });
        eprintln!(
            "{format} {}: {kept} of {appends} appends after the second turn kept turns",
            f.display()
        );
        if appends >= 10 {
            assert!(kept > 0, "{}: no append was incremental", f.display());
        }
        (all_appends, all_kept) = (all_appends + appends, all_kept + kept);
    }
    assert!(
        all_kept * 4 >= all_appends * 3,
        "{all_kept} of {all_appends} appends were incremental"
    );
    assert!(files >= 8, "corpus files of several formats ({files})");
    assert!(per_format.len() >= 3, "formats seen: {per_format:?}");
}

/// Grows a document line by line in the editor; returns the `kept_turns` of the snapshot after
/// each append, and checks each one equals a cold read.
fn grow(lines: &[String]) -> Vec<usize> {
    let rt = runtime();
    rt.block_on(async {
        let host = Host::new();
        let doc = &DocId::new("untitled:crafted");
        let mut text = format!("{}\n", lines[0]);
        host.open_raw(doc, None, text.clone(), 1);
        let mut kept = Vec::new();
        for (k, line) in lines[1..].iter().enumerate() {
            drop(raw(host.doc_snap(&DocRef::Raw(doc.clone())).await.unwrap()));
            let pos = end_of(&text);
            let edit = Edit {
                range: Some((pos, pos)),
                text: format!("{line}\n"),
            };
            host.change_raw(doc, k as i32 + 2, vec![edit], Encoding::Utf8)
                .unwrap();
            text.push_str(line);
            text.push('\n');
            let s = raw(host.doc_snap(&DocRef::Raw(doc.clone())).await.unwrap());
            kept.push(s.kept_turns);
            assert_eq!(
                observed(&s),
                observed(&cold(&text).await),
                "after line {}",
                k + 1
            );
        }
        kept
    })
}

fn claude(n: usize, parent: Option<usize>, kind: &str, message: serde_json::Value) -> String {
    let mut v = serde_json::json!({
        "type": kind, "uuid": format!("u{n}"), "sessionId": "s", "isSidechain": false,
        "timestamp": format!("2026-01-01T00:{:02}:00Z", n % 60), "message": message,
    });
    if let Some(p) = parent {
        v["parentUuid"] = format!("u{p}").into();
    }
    v.to_string()
}

fn prompt(n: usize, text: &str) -> String {
    claude(
        n,
        n.checked_sub(1),
        "user",
        serde_json::json!({"role": "user", "content": text}),
    )
}

fn call(n: usize, id: &str, name: &str, input: serde_json::Value) -> String {
    claude(
        n,
        Some(n - 1),
        "assistant",
        serde_json::json!({
        "id": format!("m{n}"), "role": "assistant", "model": "m",
        "content": [{"type": "tool_use", "id": id, "name": name, "input": input}],
        "usage": {"input_tokens": 1, "output_tokens": 2}}),
    )
}

fn result(n: usize, id: &str) -> String {
    claude(
        n,
        Some(n - 1),
        "user",
        serde_json::json!({"role": "user",
        "content": [{"type": "tool_result", "tool_use_id": id, "content": "ok"}]}),
    )
}

fn answer(n: usize, text: &str) -> String {
    claude(
        n,
        Some(n - 1),
        "assistant",
        serde_json::json!({
        "id": format!("m{n}"), "role": "assistant", "model": "m", "stop_reason": "end_turn",
        "content": [{"type": "text", "text": text}],
        "usage": {"input_tokens": 1, "output_tokens": 3}}),
    )
}

/// Issue 12: appends within the last turn and appends that open a turn keep the turns before
/// the last one; the figures equal a cold read.
#[test]
fn appends_keep_the_earlier_turns() {
    let lines = vec![
        prompt(0, "one"),
        answer(1, "done one"),
        prompt(2, "two"),
        call(3, "t1", "Bash", serde_json::json!({"command": "ls"})),
        result(4, "t1"),
        answer(5, "done two"),
        prompt(6, "three"),
        answer(7, "done three"),
    ];
    // After each append: turns before the previous last one are kept.
    assert_eq!(grow(&lines), vec![0, 0, 1, 1, 1, 1, 2]);
}

/// Issue 12: a tool result that answers a call of an earlier turn changes that turn (its tool
/// timing, a sub-agent's figures): the analysis starts over, and equals a cold read.
#[test]
fn a_result_for_an_earlier_turn_analyses_from_the_start() {
    let lines = vec![
        prompt(0, "one"),
        call(1, "t1", "Bash", serde_json::json!({"command": "sleep 9"})),
        prompt(2, "two"),
        answer(3, "meanwhile"),
        result(4, "t1"),
        answer(5, "later"),
    ];
    assert_eq!(grow(&lines), vec![0, 0, 1, 0, 1]);
}

/// Issue 12: a sub-agent call answered in a later turn (its result names the agent and its
/// figures) is the earlier turn's outline entry: analysed from the start.
#[test]
fn a_subagent_result_in_a_later_turn_analyses_from_the_start() {
    let task = serde_json::json!({"description": "audit", "prompt": "audit it",
        "subagent_type": "general-purpose"});
    let mut done: serde_json::Value = serde_json::from_str(&result(4, "t1")).unwrap();
    done["toolUseResult"] = serde_json::json!({"agentId": "a1", "totalDurationMs": 5000,
        "totalTokens": 700, "totalToolUseCount": 3, "status": "completed"});
    let lines = vec![
        prompt(0, "one"),
        call(1, "t1", "Task", task),
        prompt(2, "two"),
        answer(3, "meanwhile"),
        done.to_string(),
        answer(5, "later"),
    ];
    assert_eq!(grow(&lines), vec![0, 0, 1, 0, 1]);
}

/// Issue 12: a compaction (boundary and summary) inside the last turn, then a new turn: the
/// compaction belongs to the turn it happened in, and the turns before are kept.
#[test]
fn a_compaction_in_the_last_turn_is_analysed_again() {
    let mut boundary: serde_json::Value = serde_json::from_str(&prompt(2, "x")).unwrap();
    boundary["type"] = "system".into();
    boundary["subtype"] = "compact_boundary".into();
    boundary["content"] = "Conversation compacted".into();
    boundary["compactMetadata"] = serde_json::json!({"trigger": "auto", "preTokens": 150000});
    boundary.as_object_mut().unwrap().remove("message");
    let mut summary: serde_json::Value = serde_json::from_str(&prompt(3, "Summary: all")).unwrap();
    summary["isCompactSummary"] = true.into();
    let lines = vec![
        prompt(0, "one"),
        answer(1, "done one"),
        boundary.to_string(),
        summary.to_string(),
        prompt(4, "two"),
        answer(5, "done two"),
        prompt(6, "three"),
    ];
    assert_eq!(grow(&lines), vec![0, 0, 0, 0, 1, 1]);
}
