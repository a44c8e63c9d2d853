//! Analysis over real files: `fixtures/rules`, `fixtures/cases` and `../shared/corpus`.
//! Prints one summary block per file (`cargo test --test analysis_corpus -- --nocapture`) and
//! asserts invariants that must hold on any input: turns cover every entry in order, numbers
//! are consecutive, final-answer blocks are main-thread prose of their turn, activity ends
//! before the answer, every tool pair's result follows its call, and analysis never panics.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use transcript_ls::analysis::{self, Analysis, Options, Throughput, TurnKind};
use transcript_ls::formats;
use transcript_ls::model::{BlockKind, Role, Transcript};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `.jsonl` file under `dir` (recursively), sorted.
fn jsonl_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for p in rd.filter_map(|e| e.ok().map(|e| e.path())) {
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// One line per turn: `n kind state lines | answer lines | comments tools | figures`.
pub fn summary(t: &Transcript, a: &Analysis) -> String {
    let mut s = String::new();
    for turn in &a.turns {
        let answer: Vec<usize> = turn
            .final_answer
            .as_ref()
            .map(|f| f.blocks.iter().map(|b| t.entries[b.0].line + 1).collect())
            .unwrap_or_default();
        let tps = match &turn.throughput {
            Throughput::Measured { tok_per_s, .. } => format!("{tok_per_s:.2} tok/s"),
            Throughput::Estimate { tok_per_s, .. } => format!("≈{tok_per_s:.2} tok/s"),
            Throughput::None { reason } => format!("no tok/s ({reason})"),
        };
        let _ = writeln!(
            s,
            "turn {} {} {:?} lines {}-{} | answer {:?}{} | {} comments {} tools | {} | {} | {}",
            turn.n,
            turn.kind.as_str(),
            turn.state,
            turn.start_line + 1,
            turn.end_line + 1,
            answer,
            if turn
                .final_answer
                .as_ref()
                .is_some_and(|f| f.marker.is_some())
            {
                " (marker)"
            } else {
                ""
            },
            turn.comments,
            turn.tool_calls,
            turn.duration
                .map_or("-".to_string(), |d| format!("{} ms {:?}", d.ms, d.source)),
            tps,
            turn.finished_at.as_deref().unwrap_or("-"),
        );
    }
    let _ = writeln!(
        s,
        "steps {} · gates {} · sub-agents {} · compactions {} · usage in {} out {} cc {} cr {}",
        a.steps.len(),
        a.gates.len(),
        a.subagent_calls.len(),
        a.compactions.len(),
        a.usage.input,
        a.usage.output,
        a.usage.cache_creation,
        a.usage.cache_read
    );
    s
}

/// Invariants that hold for any transcript.
fn check(path: &Path, t: &Transcript, a: &Analysis) {
    let name = path.display();
    let n = t.entries.len();
    // Turns cover every entry, in order, without gaps.
    let mut next = 0;
    for (i, turn) in a.turns.iter().enumerate() {
        assert_eq!(
            turn.entries.start, next,
            "{name}: turn {i} starts after a gap"
        );
        assert!(
            turn.entries.end > turn.entries.start,
            "{name}: empty turn {i}"
        );
        next = turn.entries.end;
        let expect_n = if a.turns[0].kind == TurnKind::Preamble {
            i
        } else {
            i + 1
        };
        assert_eq!(turn.n, expect_n, "{name}: numbering");
        if let Some(fa) = &turn.final_answer {
            for &(e, b) in &fa.blocks {
                assert!(
                    turn.entries.contains(&e),
                    "{name}: answer outside turn {}",
                    turn.n
                );
                assert_eq!(t.entries[e].role, Role::Model, "{name}: answer not model");
                assert!(
                    matches!(t.entries[e].blocks[b].kind, BlockKind::Text { .. }),
                    "{name}: answer block not text"
                );
                assert!(
                    !t.entries[e].sidechain || t.meta.is_subagent_file,
                    "{name}: sidechain answer"
                );
            }
            if let Some(act) = &turn.activity {
                assert!(
                    act.end <= fa.blocks[0].0,
                    "{name}: activity overlaps answer"
                );
            }
        }
    }
    assert_eq!(next, n, "{name}: turns do not cover all entries");
    assert_eq!(
        a.turn_count,
        a.turns
            .iter()
            .filter(|t| t.kind != TurnKind::Preamble)
            .count()
    );
    for p in &a.tool_pairs {
        if let Some(r) = p.result_entry {
            // `>=`: a Gemini CLI 0.40 result lives inside its call's own record.
            assert!(r >= p.use_entry, "{name}: result before call");
        }
    }
    let steps_in_turns: usize = a.turns.iter().map(|t| t.steps.len()).sum();
    // Steps of inherited history (a fork / sub-agent replaying its parent) are in no turn.
    let main_steps = a
        .steps
        .iter()
        .filter(|s| !s.sidechain && !s.entries.first().is_some_and(|&e| t.entries[e].inherited))
        .count();
    assert_eq!(
        steps_in_turns, main_steps,
        "{name}: main steps not all in turns"
    );
}

fn run_dir(dir: &Path) -> usize {
    let mut count = 0;
    for path in jsonl_files(dir) {
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        let source = String::from_utf8_lossy(&bytes);
        let t = formats::read(&source);
        let o = Options {
            time_zone: Some("UTC".into()),
            file_complete: true,
            ..Default::default()
        };
        let a = analysis::analyze(&t, &source, &o);
        check(&path, &t, &a);
        println!(
            "== {} ({:?}, {} entries)\n{}",
            path.file_name().unwrap_or_default().to_string_lossy(),
            t.format(),
            t.entries.len(),
            summary(&t, &a)
        );
        count += 1;
    }
    count
}

#[test]
fn fixtures_and_corpus_hold_the_invariants() {
    let r = root();
    let rules = run_dir(&r.join("fixtures/rules"));
    let cases = run_dir(&r.join("fixtures/cases"));
    let corpus = run_dir(&r.join("../shared/corpus"));
    assert!(rules >= 40, "rule fixtures found: {rules}");
    assert!(cases >= 10, "case fixtures found: {cases}");
    assert!(corpus >= 20, "corpus files found: {corpus}");
    println!("files: rules {rules}, cases {cases}, corpus {corpus}");
}
