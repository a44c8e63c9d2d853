//! Appends through the document host (issue 12): a document grown by appends from the editor
//! (`didChange` at the end) or from disk (the watcher's `refresh_disk`) gives exactly what a
//! cold read of the same text gives — the model, the analysis, the line index, the raw
//! document's symbols, folding ranges, semantic tokens and inlay hints, and both views. The
//! host lends the reader's transcript to each snapshot and takes it back before the next append,
//! copying it only while a request still holds the old snapshot; both ways are exercised by
//! keeping some of the intermediate snapshots alive.

use std::sync::Arc;

mod common;

use proptest::prelude::*;
use transcript_ls::ide::host::{DocRef, DocSnap, Edit, Host, Snapshot, Source};
use transcript_ls::ide::{folding, inlay_hints, semantic_tokens, symbols};
use transcript_ls::source::position::{Encoding, Position};

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
        format!("{:?}", folding::raw_folds(t, a)),
        format!(
            "{:?}",
            semantic_tokens::raw_tokens(t, a, &snap.lookup, text, None)
        ),
        format!("{:?}", inlay_hints::raw_hints(t, a, None)),
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
    let doc = "untitled:append";
    host.open_raw(doc, None, text[..cuts[0]].to_string(), 1);
    let mut held = Vec::new();
    let mut version = 1;
    let mut now = text[..cuts[0]].to_string();
    let mut bounds: Vec<usize> = cuts.to_vec();
    bounds.push(text.len());
    for w in bounds.windows(2) {
        let s = raw(host.doc_snap(&DocRef::Raw(doc.into())).await.unwrap());
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
    raw(host.doc_snap(&DocRef::Raw(doc.into())).await.unwrap())
}

async fn cold(text: &str) -> Arc<Snapshot> {
    let host = Host::new();
    host.open_raw("untitled:cold", None, text.to_string(), 1);
    raw(host
        .doc_snap(&DocRef::Raw("untitled:cold".into()))
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
