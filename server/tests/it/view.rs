//! The rendered view (DESIGN.md §2) on hand-built inputs: exact text, regions, spans, anchors,
//! limits.

use crate::common;

use common::*;
use transcript_ls::analysis::{Analysis, RunKind, TurnKind, TurnState};
use transcript_ls::model::{PromptKind, Role};
use transcript_ls::view::{AnchorKind, RegionKind, SpanKind, View, ViewOptions, render};

fn quiet(d: &Doc, a: &Analysis) -> View {
    let v = render(&d.t, a, &d.src, &ViewOptions::default());
    check_view(&v, "quiet");
    v
}

fn verbose(d: &Doc, a: &Analysis) -> View {
    let v = render(&d.t, a, &d.src, &ViewOptions { verbose: true });
    check_view(&v, "verbose");
    v
}

/// `(kind, start, end, label)` of every region.
fn regions(v: &View) -> Vec<(RegionKind, usize, usize, &str)> {
    v.regions
        .iter()
        .map(|r| (r.kind, r.start_line, r.end_line, r.label.as_str()))
        .collect()
}

/// `(line, text of the span, kind)` of every span.
fn spans(v: &View) -> Vec<(usize, &str, SpanKind)> {
    let lines: Vec<&str> = v.text.lines().collect();
    v.spans
        .iter()
        .map(|s| (s.line, &lines[s.line][s.start..s.end], s.kind))
        .collect()
}

fn anchors(v: &View) -> Vec<(usize, AnchorKind, usize, usize, Option<&str>)> {
    v.anchors
        .iter()
        .map(|a| (a.turn, a.kind, a.line, a.end_line, a.child.as_deref()))
        .collect()
}

const HEADER: &str = "# Fix the failing test
session SESSION-1 · Claude Code 2.1.100 · claude-opus-4-7 · /home/USER/project · 1 turn · tokens 1.2k in / 800 out / 1.2M cache read / 30k cache write

";

#[test]
fn quiet_shows_prompt_and_completed_answer_only() {
    let (d, a) = small_session();
    let v = quiet(&d, &a);
    let expected = format!(
        "{HEADER}## Turn 1

> Fix the failing test
> in src/lib.rs

**Answer**
Fixed the off-by-one in `parse_row`.

All 12 tests pass.
"
    );
    assert_eq!(v.text, expected);
    assert_eq!(
        regions(&v),
        vec![(
            RegionKind::Turn,
            3,
            11,
            "Turn 1: Fix the failing test · 1 comment · 1 tool call"
        )]
    );
    assert_eq!(
        spans(&v)[1..],
        [
            (5, "Fix the failing test", SpanKind::Prompt),
            (6, "in src/lib.rs", SpanKind::Prompt),
            (
                9,
                "Fixed the off-by-one in `parse_row`.",
                SpanKind::FinalAnswer
            ),
            (11, "All 12 tests pass.", SpanKind::FinalAnswer),
        ]
    );
    assert_eq!(
        anchors(&v),
        vec![
            (1, AnchorKind::Turn, 3, 11, None),
            (1, AnchorKind::FinalAnswer, 8, 11, Some("Final answer"))
        ]
    );
    assert_eq!(
        v.anchors[0].detail,
        "1 comment · 1 tool call · 2m 25s · ≈41 tok/s · 07:28 am"
    );
    // Every line knows its turn; the prompt lines point at the prompt record.
    assert_eq!(v.lines[5].turn, 1);
    assert!(matches!(
        v.lines[5].origin,
        transcript_ls::view::Origin::Entry {
            entry: 0,
            block: Some(0),
            ..
        }
    ));
    assert_eq!(v.lines[0].turn, 0);
}

#[test]
fn verbose_shows_runs_thoughts_tools_and_narration() {
    let (d, a) = small_session();
    let v = verbose(&d, &a);
    let expected = format!(
        "{HEADER}## Turn 1

> Fix the failing test
> in src/lib.rs

🤖 1 comment · 1 tool call
▸ Thought
  💭 The test fails because of an off-by-one.

Let me run the tests.

▸ Worked · 1 tool call
  ✗ Bash  cargo test  → test result: FAILED. 11 passed; 1 failed
      running 12 tests
      test a ... ok
      test result: FAILED. 11 passed; 1 failed

**Answer**
Fixed the off-by-one in `parse_row`.

All 12 tests pass.
"
    );
    assert_eq!(v.text, expected);
    assert_eq!(
        regions(&v),
        vec![
            (
                RegionKind::Turn,
                3,
                23,
                "Turn 1: Fix the failing test · 1 comment · 1 tool call"
            ),
            (RegionKind::Activity, 8, 18, "1 comment · 1 tool call"),
            (RegionKind::Thought, 9, 10, "Thought"),
            (RegionKind::WorkRun, 14, 18, "Worked · 1 tool call"),
            (RegionKind::LongToolOutput, 15, 18, "output · 73 B"),
        ]
    );
    assert_eq!(
        spans(&v)[3..],
        [
            (8, "🤖 1 comment · 1 tool call", SpanKind::Meta),
            (
                10,
                "The test fails because of an off-by-one.",
                SpanKind::Thinking
            ),
            (12, "Let me run the tests.", SpanKind::Narration),
            (15, "✗", SpanKind::ToolError),
            (15, "Bash", SpanKind::ToolName),
            (
                15,
                "test result: FAILED. 11 passed; 1 failed",
                SpanKind::ToolError
            ),
            (
                21,
                "Fixed the off-by-one in `parse_row`.",
                SpanKind::FinalAnswer
            ),
            (23, "All 12 tests pass.", SpanKind::FinalAnswer),
        ]
    );
    assert_eq!(
        anchors(&v),
        vec![
            (1, AnchorKind::Turn, 3, 23, None),
            (1, AnchorKind::Thought, 9, 10, Some("Thought")),
            (
                1,
                AnchorKind::WorkRun,
                14,
                18,
                Some("Worked · Bash cargo test")
            ),
            (1, AnchorKind::FinalAnswer, 20, 23, Some("Final answer")),
        ]
    );
}

#[test]
fn quiet_rich_session() {
    let (d, a) = rich_session();
    let v = quiet(&d, &a);
    assert_eq!(
        v.text,
        "# Make the page look like this mock-up
session SESSION-2 · Claude Code · 3 turns

## Turn 1

> [image/png · 1.0 MB]
> Make the page look like this mock-up

↪ queued: also add a --json flag

**Answer**
Done: the page matches the mock-up.
[DEV-PIPELINE | GATE 3 | AUTO: PASS]

── Compaction 1 (auto, 167k tokens) ──

## Turn 2 — ⏰ background task finished

⏹ interrupted by the user

(no reply — 1 tool call)

## Turn 3

> Try again

… working
"
    );
    // The marker line is never shown; the text before it is not the answer.
    assert!(!v.text.contains("OMNISCIO") && !v.text.contains("Working notes"));
    assert_eq!(
        anchors(&v),
        vec![
            (1, AnchorKind::Turn, 3, 14, None),
            (
                1,
                AnchorKind::Steering,
                8,
                8,
                Some("↪ queued: also add a --json flag")
            ),
            (1, AnchorKind::FinalAnswer, 10, 12, Some("Final answer")),
            (1, AnchorKind::Gate, 12, 12, Some("🔨 Build: PASS")),
            (1, AnchorKind::Compaction, 14, 14, Some("Compaction 1")),
            (2, AnchorKind::Turn, 16, 20, None),
            (3, AnchorKind::Turn, 22, 26, None),
        ]
    );
    let s = spans(&v);
    assert!(s.contains(&(8, "↪ queued:", SpanKind::Meta)));
    assert!(s.contains(&(8, "also add a --json flag", SpanKind::Prompt)));
    assert!(s.contains(&(
        11,
        "Done: the page matches the mock-up.",
        SpanKind::FinalAnswer
    )));
    assert!(s.contains(&(12, "[DEV-PIPELINE | GATE 3 | AUTO: PASS]", SpanKind::Gate)));
    // In-flight and replyless modifiers.
    let working = v.spans.iter().find(|s| s.line == 24).unwrap();
    assert!(working.in_flight && !working.incomplete);
    let noreply = v.spans.iter().find(|s| s.line == 18).unwrap();
    assert!(noreply.incomplete && !noreply.in_flight);
}

#[test]
fn verbose_rich_session() {
    let (d, a) = rich_session();
    let v = verbose(&d, &a);
    assert_eq!(
        v.text,
        "# Make the page look like this mock-up
session SESSION-2 · Claude Code · 3 turns

## Turn 1

> [image/png · 1.0 MB]
> Make the page look like this mock-up

🤖 1 tool call
▸ Worked · 1 tool call
  ⚙ Task  Audit the CSS  → Found 3 unused rules
    ⤷ Sub-agent: Audit the CSS · aaa · 1 tool call · 1m 25s · 14k tokens
      » Audit the CSS files for unused rules
      ⚙ Grep  \\.unused  → 3 matches
          a.css
          b.css
          c.css

↪ queued: also add a --json flag

Working notes.

**Answer**
Done: the page matches the mock-up.
[DEV-PIPELINE | GATE 3 | AUTO: PASS]

── Compaction 1 (auto, 167k tokens) ──
Summary: the user asked for a page redesign.
We matched the mock-up.

## Turn 2 — ⏰ background task finished

> <task-notification>build finished</task-notification>

🤖 1 tool call · no reply
▸ Worked · 1 tool call
  ✗ Bash  npm run build  → exit 1

⏹ interrupted by the user

## Turn 3

> Try again

**Answer so far** (in flight)
Retrying the build now.
"
    );
    assert_eq!(
        regions(&v),
        vec![
            (
                RegionKind::Turn,
                3,
                28,
                "Turn 1: Make the page look like this mock-up · 1 tool call"
            ),
            (RegionKind::Activity, 8, 20, "1 tool call"),
            (RegionKind::WorkRun, 9, 16, "Worked · 1 tool call"),
            (RegionKind::Subagent, 11, 16, "Sub-agent: Audit the CSS"),
            (RegionKind::LongToolOutput, 13, 16, "output · 19 B"),
            (
                RegionKind::Compaction,
                26,
                28,
                "Compaction 1 (auto, 167k tokens)"
            ),
            (
                RegionKind::Turn,
                30,
                38,
                "Turn 2: ⏰ background task finished · 1 tool call"
            ),
            (RegionKind::Activity, 34, 38, "1 tool call · no reply"),
            (RegionKind::WorkRun, 35, 36, "Worked · 1 tool call"),
            (RegionKind::Turn, 40, 45, "Turn 3: Try again · no activity"),
        ]
    );
    assert_eq!(
        anchors(&v),
        vec![
            (1, AnchorKind::Turn, 3, 28, None),
            (
                1,
                AnchorKind::WorkRun,
                9,
                16,
                Some("Worked · Task Audit the CSS")
            ),
            (
                1,
                AnchorKind::Subagent,
                10,
                16,
                Some("Sub-agent: Audit the CSS")
            ),
            (
                1,
                AnchorKind::Steering,
                18,
                18,
                Some("↪ queued: also add a --json flag")
            ),
            (1, AnchorKind::FinalAnswer, 22, 24, Some("Final answer")),
            (1, AnchorKind::Gate, 24, 24, Some("🔨 Build: PASS")),
            (1, AnchorKind::Compaction, 26, 28, Some("Compaction 1")),
            (2, AnchorKind::Turn, 30, 38, None),
            (
                2,
                AnchorKind::WorkRun,
                35,
                36,
                Some("Worked · Bash npm run build")
            ),
            (3, AnchorKind::Turn, 40, 45, None),
            (
                3,
                AnchorKind::FinalAnswer,
                44,
                45,
                Some("Answer so far (in flight)")
            ),
        ]
    );
    // Sub-agent lines carry the sidechain modifier.
    let grep = v
        .spans
        .iter()
        .find(|s| s.line == 13 && s.kind == SpanKind::ToolName)
        .unwrap();
    assert!(grep.sidechain);
    let task = v
        .spans
        .iter()
        .find(|s| s.line == 10 && s.kind == SpanKind::ToolName)
        .unwrap();
    assert!(!task.sidechain);
}

#[test]
fn long_prompt_folds_and_preamble_shows_in_verbose_only() {
    let mut d = Doc::new();
    let pre = d.entry(Role::Meta, "file-history-snapshot", &[]);
    let prompt: String = (1..=25).map(|i| format!("spec line {i}\n")).collect();
    let p = d.entry(Role::Prompt(PromptKind::Typed), "user", &[B::Text(&prompt)]);
    let f = d.entry(Role::Model, "assistant", &[B::Text("Checked.")]);
    let pre_turn = turn(0, TurnKind::Preamble, None, pre..pre + 1, "");
    let mut t = turn(1, TurnKind::Prompt, Some(p), p..f + 1, "spec line 1");
    t.runs = vec![run(RunKind::Prose, &[(f, 0)], 0)].into();
    t.final_answer = Some(Box::new(answer(&[(f, 0)])));
    let a = Analysis {
        turns: vec![pre_turn, t],
        turn_count: 1,
        ..Default::default()
    };

    let v = quiet(&d, &a);
    assert!(!v.text.contains("Before the first prompt"));
    assert_eq!(
        regions(&v)[1],
        (RegionKind::LongPrompt, 5, 29, "25 lines · 316 B")
    );
    let v = verbose(&d, &a);
    assert!(v.text.starts_with(
        "# spec line 1
Claude Code · 1 turn

## Before the first prompt

· 1 record: file-history-snapshot

## Turn 1

> spec line 1
"
    ));
    assert_eq!(v.anchors[0].kind, AnchorKind::Preamble);
}

#[test]
fn limits_long_lines_base64_and_many_steps() {
    let mut d = Doc::new();
    let long_line = "word ".repeat(1000); // 5,000 chars of prose on one line
    let b64 = "iVBORw0KGgo".repeat(300);
    let big_output = format!("{}\n{}\n", "x".repeat(5000), b64);
    let p = d.entry(
        Role::Prompt(PromptKind::Typed),
        "user",
        &[B::Text(&format!("see {b64}"))],
    );
    let mut blocks = Vec::new();
    for i in 0..45 {
        let c = d.entry(
            Role::Model,
            "assistant",
            &[B::Tool {
                id: "t",
                name: "Read",
                summary: "src/lib.rs",
            }],
        );
        blocks.push((c, 0));
        let _ = i;
    }
    let r = d.entry(
        Role::ToolResults,
        "user",
        &[B::Result {
            id: "t",
            summary: "first line",
            content: &big_output,
            error: false,
        }],
    );
    blocks.push((r, 0));
    let f = d.entry(Role::Model, "assistant", &[B::Text(&long_line)]);
    let mut t = turn(1, TurnKind::Prompt, Some(p), p..f + 1, "see");
    t.runs = vec![
        run(RunKind::Work, &blocks, 45),
        run(RunKind::Prose, &[(f, 0)], 0),
    ]
    .into();
    t.final_answer = Some(Box::new(answer(&[(f, 0)])));
    t.tool_calls = 45;
    let pairs = vec![transcript_ls::analysis::ToolPair {
        use_entry: blocks[44].0,
        use_block: 0,
        result_entry: Some(r),
        result_block: Some(0),
    }];
    let a = Analysis {
        turns: vec![t],
        tool_pairs: pairs,
        turn_count: 1,
        ..Default::default()
    };
    for v in [quiet(&d, &a), verbose(&d, &a)] {
        assert!(!v.text.contains("iVBORw0KGgoiVBOR"));
        assert!(v.text.contains("> see [base64 · 2.4 KB]"));
        // The 5,000-char answer line is wrapped, not cut: all 1,000 words are there.
        assert_eq!(v.text.matches("word").count(), 1000);
    }
    let v = verbose(&d, &a);
    assert!(v.text.contains("\n  … 5 more items\n"), "{}", v.text);
    assert_eq!(v.text.matches("⚙ Read").count(), 40);
}

#[test]
fn state_lines_never_leave_a_turn_blank() {
    let (d, mut a) = small_session();
    a.turns[0].state = TurnState::Replyless;
    a.turns[0].final_answer = None;
    let v = quiet(&d, &a);
    assert!(
        v.text
            .ends_with("> in src/lib.rs\n\n(no reply — 1 comment · 1 tool call)\n"),
        "{}",
        v.text
    );
    a.turns[0].state = TurnState::InFlight;
    let v = quiet(&d, &a);
    // In flight, with the agent's latest comment after `… working` (issue 23 item 5).
    assert!(
        v.text
            .ends_with("> in src/lib.rs\n\n… working · Fixed the off-by-one in `parse_row`.\n"),
        "{}",
        v.text
    );
}

#[test]
fn empty_transcript() {
    let d = Doc::new();
    let v = quiet(&d, &Analysis::default());
    assert_eq!(
        v.text,
        "# Transcript\nClaude Code · 0 turns\n\n(no conversation)\n"
    );
}

/// One line per symbol: `name | detail | kind start-end @selection`, children indented.
fn outline(symbols: &[transcript_ls::ide::symbols::Symbol]) -> String {
    fn walk(s: &transcript_ls::ide::symbols::Symbol, depth: usize, out: &mut String) {
        out.push_str(&format!(
            "{}{} | {} | {:?} {}-{} @{}\n",
            "  ".repeat(depth),
            s.name,
            s.detail,
            s.kind,
            s.start_line,
            s.end_line,
            s.selection_line
        ));
        for c in &s.children {
            walk(c, depth + 1, out);
        }
    }
    let mut out = String::new();
    for s in symbols {
        walk(s, 0, &mut out);
    }
    out
}

#[test]
fn raw_outline_of_rich_session() {
    use transcript_ls::ide::symbols::raw_symbols;
    let (d, a) = rich_session();
    assert_eq!(
        outline(&raw_symbols(&d.t, &a, &d.src)),
        "Turn 1: Make the page look like this mock-up | 1 tool call | Turn 0-9 @0
  Worked · Task Audit the CSS | 1 tool call | WorkRun 1-6 @1
  Sub-agent: Audit the CSS | aaa · 1 tool call · 1m 25s · 14k tokens | Subagent 1-6 @1
  ↪ queued: also add a --json flag |  | Steering 5-5 @5
  Final answer | Done: the page matches the mock-up. | FinalAnswer 7-7 @7
  🔨 Build: PASS |  | Gate 7-7 @7
  Compaction 1 | auto · 167k tokens | Compaction 8-9 @8
Turn 2: ⏰ background task finished | 1 tool call | Turn 10-13 @10
  Worked · Bash npm run build | 1 tool call | WorkRun 11-12 @11
Turn 3: Try again | no activity · in flight | Turn 14-15 @14
  Answer so far (in flight) | Retrying the build now. | FinalAnswer 15-15 @15
"
    );
}

#[test]
fn view_outline_of_rich_session() {
    use transcript_ls::ide::symbols::view_symbols;
    let (d, a) = rich_session();
    let v = quiet(&d, &a);
    assert_eq!(
        outline(&view_symbols(&v, &a)),
        "Turn 1: Make the page look like this mock-up | 1 tool call | Turn 3-14 @3
  ↪ queued: also add a --json flag |  | Steering 8-8 @8
  Final answer | Done: the page matches the mock-up. | FinalAnswer 10-12 @10
  🔨 Build: PASS |  | Gate 12-12 @12
  Compaction 1 | auto · 167k tokens | Compaction 14-14 @14
Turn 2: ⏰ background task finished | 1 tool call | Turn 16-20 @16
Turn 3: Try again | no activity · in flight | Turn 22-26 @22
"
    );
    let v = verbose(&d, &a);
    assert_eq!(
        outline(&view_symbols(&v, &a)),
        "Turn 1: Make the page look like this mock-up | 1 tool call | Turn 3-28 @3
  Worked · Task Audit the CSS | 1 tool call | WorkRun 9-16 @9
  Sub-agent: Audit the CSS | aaa · 1 tool call · 1m 25s · 14k tokens | Subagent 10-16 @10
  ↪ queued: also add a --json flag |  | Steering 18-18 @18
  Final answer | Done: the page matches the mock-up. | FinalAnswer 22-24 @22
  🔨 Build: PASS |  | Gate 24-24 @24
  Compaction 1 | auto · 167k tokens | Compaction 26-28 @26
Turn 2: ⏰ background task finished | 1 tool call | Turn 30-38 @30
  Worked · Bash npm run build | 1 tool call | WorkRun 35-36 @35
Turn 3: Try again | no activity · in flight | Turn 40-45 @40
  Answer so far (in flight) | Retrying the build now. | FinalAnswer 44-45 @44
"
    );
}

#[test]
fn outline_with_preamble_and_small_session() {
    use transcript_ls::ide::symbols::{raw_symbols, view_symbols};
    let (d, a) = small_session();
    assert_eq!(
        outline(&raw_symbols(&d.t, &a, &d.src)),
        "Turn 1: Fix the failing test | 1 comment · 1 tool call · 2m 25s · ≈41 tok/s · 07:28 am | Turn 0-5 @0
  Thought |  | Thought 1-1 @1
  Worked · Bash cargo test | 1 tool call | WorkRun 3-4 @3
  Final answer | Fixed the off-by-one in `parse_row`. | FinalAnswer 5-5 @5
"
    );
    let v = verbose(&d, &a);
    assert_eq!(
        outline(&view_symbols(&v, &a)),
        "Turn 1: Fix the failing test | 1 comment · 1 tool call · 2m 25s · ≈41 tok/s · 07:28 am | Turn 3-23 @3
  Thought |  | Thought 9-10 @9
  Worked · Bash cargo test | 1 tool call | WorkRun 14-18 @14
  Final answer | Fixed the off-by-one in `parse_row`. | FinalAnswer 20-23 @20
"
    );
}

fn analyze_file(path: &std::path::Path) -> (String, transcript_ls::model::Transcript, Analysis) {
    let src = std::fs::read_to_string(path).unwrap();
    let t = transcript_ls::formats::read(&src);
    let options = transcript_ls::analysis::Options {
        time_zone: Some("UTC".into()),
        ..Default::default()
    };
    let a = transcript_ls::analysis::analyze(&t, &src, &options);
    (src, t, a)
}

/// DESIGN.md §2 limits and the view contract, on every transcript we have, both modes; the
/// outlines of both documents stay inside their documents.
#[test]
fn invariants_on_every_corpus_case_and_fixture_file() {
    let mut files = jsonl_files(&shared().join("corpus"));
    files.extend(jsonl_files(&shared().join("cases")));
    files.extend(jsonl_files(&repo_root().join("fixtures")));
    assert!(files.len() > 60, "found only {} files", files.len());
    for path in &files {
        let (src, t, a) = analyze_file(path);
        let what = path.display().to_string();
        for verbose in [false, true] {
            let v = render(&t, &a, &src, &ViewOptions { verbose });
            check_view(&v, &format!("{what} verbose={verbose}"));
            let n = v.lines.len();
            for s in transcript_ls::ide::symbols::view_symbols(&v, &a) {
                assert!(
                    s.start_line <= s.end_line && s.end_line < n,
                    "{what}: {s:?}"
                );
                for c in &s.children {
                    assert!(
                        c.start_line <= c.end_line && c.end_line < n,
                        "{what}: {c:?}"
                    );
                }
            }
            // Every turn has its heading (the preamble only in verbose mode).
            let headings = v.anchors.iter().filter(|x| x.child.is_none()).count();
            let expected = a
                .turns
                .iter()
                .filter(|t| verbose || t.kind != TurnKind::Preamble)
                .count();
            assert_eq!(headings, expected, "{what} verbose={verbose}");
        }
        for s in transcript_ls::ide::symbols::raw_symbols(&t, &a, &src) {
            assert!(
                s.start_line <= s.end_line && s.end_line < t.line_count.max(1),
                "{what}: {s:?}"
            );
        }
    }
}

/// Issue 20 item 8: a Claude Code `Edit` whose result carries `toolUseResult.structuredPatch`
/// shows its hunks with their real line numbers (`@@ -37,12 +37,15 @@`), context from the file;
/// an `Edit` without one keeps the bare `@@` of its strings.
#[test]
fn edit_diffs_take_structured_patch_headers() {
    let (src, t, a) = analyze_file(&repo_root().join("fixtures/rules/changes-claude.jsonl"));
    let v = render(&t, &a, &src, &ViewOptions { verbose: true });
    let hunks: Vec<&str> = v
        .text
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("@@"))
        .collect();
    assert_eq!(
        hunks,
        [
            "@@ -1,3 +1,3 @@",
            "@@ -3,5 +3,5 @@",
            "@@ whole file · 6 lines",
            "@@",
            "@@"
        ]
    );
    let after_first: Vec<&str> = v
        .text
        .lines()
        .skip_while(|l| l.trim() != "@@ -1,3 +1,3 @@")
        .skip(1)
        .take(4)
        .map(str::trim_end)
        .collect();
    assert_eq!(
        after_first,
        [
            "      -fn total(a: i32, b: i32) -> i32 {",
            "      +fn sum(a: i32, b: i32) -> i32 {",
            "           a + b",
            "       }"
        ]
    );
}

/// Quiet and verbose views of a few files, for review (READ them: `server/tests/it/snapshots`).
#[test]
fn view_snapshots() {
    let root = repo_root();
    let corpus = shared().join("corpus");
    let files = [
        root.join("fixtures/demo/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl"),
        root.join("fixtures/rules/gates.jsonl"),
        root.join("fixtures/rules/marker-bold.jsonl"),
        root.join("fixtures/rules/in-flight.jsonl"),
        root.join("fixtures/rules/compaction-mid-turn.jsonl"),
        root.join("fixtures/rules/inline-sidechains.jsonl"),
        root.join("fixtures/rules/codex-rollout.jsonl"),
        root.join("fixtures/rules/invalid-json-middle.jsonl"),
        // Edits as diffs (issue 11): applied, rejected and failed Claude Code edits; Codex
        // patches (custom_tool_call and function_call, applied and failed).
        root.join("fixtures/rules/edits.jsonl"),
        root.join("fixtures/rules/codex-apply-patch.jsonl"),
        // Change sets (issue 22) and `structuredPatch` hunk headers (issue 20 item 8).
        root.join("fixtures/rules/changes-claude.jsonl"),
        shared().join("cases/06-images-in-prompt-and-tool-result.jsonl"),
        shared().join("cases/07-queued-prompt-typed-while-working.jsonl"),
        shared().join("cases/08-steering-record-shapes.jsonl"),
        shared().join("cases/18-parallel-subagents-interleaved.jsonl"),
        shared().join("cases/26-long-pasted-user-message.jsonl"),
        corpus.join("marot__spotter/test/fixtures/transcripts/short.jsonl"),
        corpus.join("marot__spotter/test/fixtures/transcripts/tool_heavy.jsonl"),
    ];
    let names = snapshot_names(&files);
    for (path, name) in files.iter().zip(names) {
        let (src, t, a) = analyze_file(path);
        for (mode, verbose) in [("quiet", false), ("verbose", true)] {
            let v = render(&t, &a, &src, &ViewOptions { verbose });
            insta::assert_snapshot!(format!("view-{name}-{mode}"), v.text);
        }
    }
}

/// The whole-view budget: a transcript with far more turns than the view may show ends with
/// an explicit marker, and stays under 300,000 lines.
#[test]
fn view_budget_caps_huge_transcripts() {
    let mut d = Doc::new();
    let mut turns = Vec::new();
    for i in 0..60_000 {
        let p = d.entry(
            Role::Prompt(PromptKind::Typed),
            "user",
            &[B::Text("Do the next thing")],
        );
        let f = d.entry(Role::Model, "assistant", &[B::Text("Done.\nAll good.")]);
        let mut t = turn(
            i + 1,
            TurnKind::Prompt,
            Some(p),
            p..f + 1,
            "Do the next thing",
        );
        t.runs = vec![run(RunKind::Prose, &[(f, 0)], 0)].into();
        t.final_answer = Some(Box::new(answer(&[(f, 0)])));
        turns.push(t);
    }
    let a = Analysis {
        turns,
        turn_count: 60_000,
        ..Default::default()
    };
    let v = quiet(&d, &a);
    assert!(v.lines.len() < 300_000, "{} lines", v.lines.len());
    assert!(v.text.len() < 20 * 1024 * 1024);
    let last = v.text.lines().last().unwrap();
    assert!(
        last.starts_with("… view limit reached: ")
            && last.ends_with(" more turns not shown (open the raw file to read them)"),
        "{last}"
    );
}

/// A synthetic 8 MB Claude Code session (the generator behind the 100 MB benchmark): the
/// verbose view stays a small fraction of the input.
#[test]
fn synthetic_session_view_is_bounded() {
    let src = transcript_ls::testing::synth_claude_transcript(8_000_000, 3);
    let t = transcript_ls::formats::read(&src);
    let a = transcript_ls::analysis::analyze(&t, &src, &Default::default());
    for verbose in [false, true] {
        let v = render(&t, &a, &src, &ViewOptions { verbose });
        check_view(&v, &format!("synthetic verbose={verbose}"));
        assert!(
            v.text.len() < src.len() / 5,
            "{} bytes of view",
            v.text.len()
        );
    }
}

/// Seed 000 markers: kept prose before the marker is part of the answer, the marker line, a
/// stray marker and the duplicate lead line are never shown.
#[test]
fn marker_lines_and_duplicate_lead_never_show() {
    use transcript_ls::analysis::{FinalAnswer, Marker};
    use transcript_ls::model::BlockKind;
    let mut d = Doc::new();
    let p = d.entry(
        Role::Prompt(PromptKind::Typed),
        "user",
        &[B::Text("Status?")],
    );
    let f1 = d.entry(
        Role::Model,
        "assistant",
        &[B::Text(
            "All green.\n[[OMNISCIO_FINAL]]\nAll green.\nDetails: 48 tests pass.",
        )],
    );
    let f2 = d.entry(
        Role::Model,
        "assistant",
        &[B::Text("Ready.\n**[[AMC_FINAL]]**")],
    );
    let raw = |e: usize| match &d.t.entries[e].blocks[0].kind {
        BlockKind::Text { text } => text.raw.clone(),
        _ => unreachable!(),
    };
    let (r1, r2) = (raw(f1), raw(f2));
    let find = |r: &std::ops::Range<usize>, needle: &str| {
        let at = r.start + d.src[r.clone()].find(needle).unwrap();
        at..at + needle.len()
    };
    let marker = find(&r1, "[[OMNISCIO_FINAL]]");
    let lead = r1.start..r1.start + "All green.".len();
    let stray = find(&r2, "**[[AMC_FINAL]]**");
    let mut t = turn(1, TurnKind::Prompt, Some(p), p..f2 + 1, "Status?");
    t.runs = vec![run(RunKind::Prose, &[(f1, 0), (f2, 0)], 0)].into();
    t.final_answer = Some(
        FinalAnswer {
            blocks: vec![(f1, 0), (f2, 0)],
            marker: Some(Box::new(Marker {
                entry: f1,
                block: 0,
                span: marker,
                answer_start: r1.start,
                duplicate_lead: Some(lead),
            })),
            stray_markers: vec![stray],
            end_turn: true,
        }
        .into(),
    );
    let a = Analysis {
        turns: vec![t],
        turn_count: 1,
        ..Default::default()
    };
    let expected = "## Turn 1

> Status?

**Answer**
All green.
Details: 48 tests pass.

Ready.
";
    assert!(
        quiet(&d, &a).text.ends_with(expected),
        "{}",
        quiet(&d, &a).text
    );
    assert!(
        verbose(&d, &a).text.ends_with(expected),
        "{}",
        verbose(&d, &a).text
    );
}

/// Issue 20 items 1 and 2, verbose view: a fork's replay of its parent folds into one line
/// naming the parent (apart from the child's own records around it), and records a resumed
/// Claude Code session wrote again fold as `repeated records (N)`; neither shows its content.
#[test]
fn inherited_history_and_repeated_records_fold_apart() {
    let lines = |rel: &str| -> Vec<String> {
        let (src, t, a) = analyze_file(&repo_root().join(rel));
        let v = render(&t, &a, &src, &ViewOptions { verbose: true });
        v.text
            .lines()
            .filter(|l| l.starts_with('·'))
            .map(String::from)
            .collect()
    };
    let fork = lines("fixtures/rules/codex-fork-replay.jsonl");
    assert_eq!(
        &fork[..3],
        [
            "· 1 record: session_meta",
            "· inherited from 019e5000-0000-7000-8000-00000000a001 (2 turns) · 16 records: \
             session_meta, event_msg/task_started ×2, turn_context, response_item/message ×4, \
             event_msg/user_message ×2, event_msg/token_count ×2, event_msg/task_complete ×2, \
             response_item/function_call, 1 more kinds",
            "· 2 records: event_msg/task_started, turn_context",
        ]
    );
    let (src, t, a) = analyze_file(&repo_root().join("fixtures/rules/codex-fork-replay.jsonl"));
    let text = render(&t, &a, &src, &ViewOptions { verbose: true }).text;
    assert!(!text.contains("Add a health check endpoint"), "{text}");
    assert!(!text.contains("cargo build"), "{text}");

    let repeated = lines("fixtures/rules/claude-repeated-records.jsonl");
    assert_eq!(repeated, ["· repeated records (7): user ×3, assistant ×4"]);
    let (src, t, a) =
        analyze_file(&repo_root().join("fixtures/rules/claude-repeated-records.jsonl"));
    let text = render(&t, &a, &src, &ViewOptions { verbose: true }).text;
    assert_eq!(text.matches("All 12 tests pass.").count(), 1, "{text}");
    assert_eq!(text.matches("> Now run the tests").count(), 1, "{text}");
}

/// An invalid line in the verbose view names its own problem, whether the problems are in
/// line order (looked up by binary search: 100,000 invalid lines took 4.5 s, one by one) or
/// not (issue 25 item 8).
#[test]
fn each_invalid_line_shows_its_own_problem_in_any_order() {
    let src = concat!(
        r#"{"type":"user","uuid":"u1","sessionId":"s","message":{"role":"user","content":"hi"}}"#,
        "\n[1]\n{\"a\":\n[2]\n"
    );
    let mut t = transcript_ls::formats::read(src);
    let a = transcript_ls::analysis::analyze(&t, src, &Default::default());
    let shown = |t: &transcript_ls::model::Transcript| {
        let v = render(t, &a, src, &ViewOptions { verbose: true });
        v.text
            .lines()
            .filter(|l| l.contains("⚠ line"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let want = vec![
        "⚠ line 2: not a JSON object: a Claude Code record is one object per line".to_string(),
        "⚠ line 3: invalid JSON: EOF while parsing a value at column 5".to_string(),
        "⚠ line 4: not a JSON object: a Claude Code record is one object per line".to_string(),
    ];
    assert_eq!(shown(&t), want);
    t.problems.reverse();
    assert_eq!(shown(&t), want);
}
