//! Issue 23 item 10: whether a session waits for the user (`analysis::waiting`, the session
//! index's `waiting`, `transcript/sessions`), on real corpus files cut where the agent waited
//! and on fixtures of ours (fixtures/rules/README.md "Waiting for the user").

use crate::common::shared;
use crate::lsp_common::fixtures_dir;

use transcript_ls::analysis::waiting::{Waiting, WaitingKind};
use transcript_ls::index::summary;

/// A real Claude Code 2.0.37 session that asks a question (line 10), then shows a plan twice
/// (lines 14 and 18) before it works on.
const CLAUDE_ASKS: &str = "corpus/iansherr__claude-code-log/test/test_data/real_projects/-Users-dain-workspace-coderabbit-review-helper/cb2e607c-c758-415a-8b45-c49e4631906a.jsonl";
/// A real Codex 0.147 rollout recorded while its permission prompt was shown
/// (`approval_policy: untrusted`, the last record an `exec` call without output).
const CODEX_PERMISSION: &str = "corpus/ingo-eichhorst__Irrlicht/replaydata/agents/codex/scenarios/2-19_tool-gate-permission-prompt/recordings/2026-08-18-00-40-25_irrlichd-0.5.10+1869727/transcript.jsonl";

fn read(rel: &str) -> String {
    std::fs::read_to_string(shared().join(rel)).unwrap()
}

/// The first `n` lines of `text`, each with its newline (a file as it was while written).
fn first_lines(text: &str, n: usize) -> String {
    text.split_inclusive('\n').take(n).collect()
}

fn waiting_of(text: &str) -> Option<Waiting> {
    summary::read_whole(text).waiting
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(fixtures_dir().join("rules").join(name)).unwrap()
}

#[test]
fn a_real_question_then_a_real_plan_wait_for_the_user_until_answered() {
    let text = read(CLAUDE_ASKS);
    assert_eq!(
        waiting_of(&first_lines(&text, 10)),
        Some(Waiting {
            kind: WaitingKind::Question,
            detail: "I need to understand your preferred installation approach to give you the best solution:".into(),
            turn: 1,
            line: 9,
        })
    );
    // Line 11 answers it (here: the tool was not available), the agent works on.
    assert_eq!(waiting_of(&first_lines(&text, 11)), None);
    assert_eq!(
        waiting_of(&first_lines(&text, 14)),
        Some(Waiting {
            kind: WaitingKind::Plan,
            detail: "Plan: Make Project Installable as UV Tool".into(),
            turn: 1,
            line: 13,
        })
    );
    // Line 15: "The user doesn't want to proceed with this tool use" (a refusal answers it).
    assert_eq!(waiting_of(&first_lines(&text, 15)), None);
    assert_eq!(waiting_of(&text), None);
}

#[test]
fn a_real_codex_permission_prompt_waits_for_the_user() {
    let w = waiting_of(&read(CODEX_PERMISSION)).expect("waiting");
    assert_eq!(w.kind, WaitingKind::Permission);
    assert_eq!(w.turn, 1);
    assert_eq!(w.line, 19);
    assert_eq!(
        w.detail,
        "printf %s hi > hello.txt && wc -c hello.txt && od -An -tx1 hello.txt"
    );
}

/// What a fixture waits for: kind, detail, turn, line.
type Want = Option<(WaitingKind, &'static str, usize, usize)>;

#[test]
fn pending_calls_that_ask_the_user_wait_and_other_pending_calls_do_not() {
    let cases: [(&str, Want); 6] = [
        // A Bash call without result is running, not waiting (Claude Code records no
        // permission prompt).
        ("in-flight.jsonl", None),
        (
            "waiting-claude-question.jsonl",
            Some((
                WaitingKind::Question,
                "Should the release build strip debug symbols?",
                2,
                5,
            )),
        ),
        // Codex under `on-request`: a plain command call runs.
        ("codex-unfinished.jsonl", None),
        (
            "waiting-codex-untrusted.jsonl",
            Some((
                WaitingKind::Permission,
                "cargo build --release && ls -l target/release/ledger-api",
                1,
                10,
            )),
        ),
        (
            "waiting-codex-escalated.jsonl",
            Some((
                WaitingKind::Permission,
                "Do you want to allow the release build to write outside the workspace (~/.cargo/registry)?",
                1,
                10,
            )),
        ),
        (
            "waiting-codex-question.jsonl",
            Some((
                WaitingKind::Question,
                "Which profile should the release build use: release or release-lto?",
                1,
                10,
            )),
        ),
    ];
    for (name, want) in cases {
        let want = want.map(|(kind, detail, turn, line)| Waiting {
            kind,
            detail: detail.into(),
            turn,
            line,
        });
        assert_eq!(waiting_of(&fixture(name)), want, "{name}");
    }
}

#[test]
fn a_gate_that_needs_the_user_waits_until_a_later_turn_or_gate() {
    let demo = std::fs::read_to_string(
        fixtures_dir().join("demo/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl"),
    )
    .unwrap();
    // Lines 1–34: turn 2 ends on `GATE 3 | BUILD: NEEDS-INPUT — which database …` (line 33)
    // and its turn_duration (line 34).
    assert_eq!(
        waiting_of(&first_lines(&demo, 34)),
        Some(Waiting {
            kind: WaitingKind::Gate,
            detail: "Build needs you — which database should the migration target?".into(),
            turn: 2,
            line: 32,
        })
    );
    // Line 35: the user answers (a new turn).
    assert_eq!(waiting_of(&first_lines(&demo, 35)), None);
    // The whole session ends on READY-TO-MERGE.
    assert_eq!(waiting_of(&demo), None);
}

#[test]
fn an_append_read_from_the_last_turn_ends_the_wait() {
    let text = read(CLAUDE_ASKS);
    let head = first_lines(&text, 10);
    let mut old = summary::read_whole(&head);
    old.bytes = head.len() as u64;
    assert_eq!(
        old.waiting.as_ref().map(|w| w.kind),
        Some(WaitingKind::Question)
    );
    let grown = first_lines(&text, 12);
    let tail = &grown[old.tail.offset as usize..];
    assert!(summary::tail_matches(&old, tail.as_bytes()));
    assert_eq!(summary::read_tail(&old, tail).waiting, None);
    // And a tail read that still ends on the question keeps it, with file numbers.
    let tail = &head[old.tail.offset as usize..];
    assert_eq!(summary::read_tail(&old, tail).waiting, old.waiting);
}

#[test]
fn an_old_wait_is_not_reported() {
    let mut e = summary::read_whole(&fixture("waiting-claude-question.jsonl"));
    let now = 1_800_000_000_000;
    e.modified_ms = Some(now - 60_000);
    assert_eq!(
        e.waiting_at(now).map(|w| w.kind),
        Some(WaitingKind::Question)
    );
    e.modified_ms = Some(now - transcript_ls::index::WAITING_WINDOW_MS);
    assert_eq!(e.waiting_at(now), None);
}
