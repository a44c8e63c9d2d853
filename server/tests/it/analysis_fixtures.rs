//! Analysis of the project's fixtures through the real readers, against the exact values in
//! `fixtures/rules/README.md` and `fixtures/cases/README.md` (line numbers there are 1-based).

use std::path::Path;

use transcript_ls::analysis::{
    self, Analysis, DurationSource, Options, RunKind, Throughput, TurnKind, TurnState, Verdict,
};
use transcript_ls::formats;
use transcript_ls::model::Transcript;

struct F {
    src: String,
    t: Transcript,
    a: Analysis,
}

fn load_with(rel: &str, o: &Options) -> F {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures")
        .join(rel);
    let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let t = formats::read(&src);
    let a = analysis::analyze(&t, &src, o);
    F { src, t, a }
}

fn opts(file_complete: bool) -> Options {
    Options {
        time_zone: Some("UTC".into()),
        file_complete,
        ..Default::default()
    }
}

fn load(rel: &str) -> F {
    load_with(rel, &opts(false))
}

impl F {
    /// 1-based line of an entry.
    fn line(&self, entry: usize) -> usize {
        self.t.entries[entry].line + 1
    }
    /// 1-based lines of the final answer of turn index `ti`.
    fn answer(&self, ti: usize) -> Vec<usize> {
        self.a.turns[ti]
            .final_answer
            .as_ref()
            .map(|f| f.blocks.iter().map(|b| self.line(b.0)).collect())
            .unwrap_or_default()
    }
    /// Runs of turn `ti` as `(kind, first line, last line)`, 1-based.
    fn runs(&self, ti: usize) -> Vec<(RunKind, usize, usize)> {
        self.a.turns[ti]
            .runs
            .iter()
            .map(|r| (r.kind, r.start_line + 1, r.end_line + 1))
            .collect()
    }
    /// 1-based line range of the activity of turn `ti`.
    fn activity(&self, ti: usize) -> Option<(usize, usize)> {
        self.a.turns[ti]
            .activity
            .clone()
            .map(|r| (self.line(r.start), self.line(r.end - 1)))
    }
    /// Byte offset inside its line.
    fn col(&self, offset: usize, line: usize) -> usize {
        let start = self
            .src
            .split_inclusive('\n')
            .take(line - 1)
            .map(str::len)
            .sum::<usize>();
        offset - start
    }
}

fn estimate(th: &Throughput) -> (u64, u64) {
    match th {
        Throughput::Estimate {
            tokens, decode_ms, ..
        } => (*tokens, *decode_ms),
        other => panic!("not an estimate: {other:?}"),
    }
}

use RunKind::{Prose, Thought, Work};

#[test]
fn runs_alternating() {
    let f = load("rules/runs-alternating.jsonl");
    let t = &f.a.turns[0];
    assert_eq!((f.a.turns.len(), t.state), (1, TurnState::Complete));
    assert_eq!(
        f.runs(0),
        vec![
            (Prose, 2, 2),
            (Work, 3, 4),
            (Prose, 5, 5),
            (Work, 6, 10),
            (Prose, 11, 11)
        ]
    );
    assert_eq!((t.runs[1].steps, t.runs[1].tool_calls), (1, 1));
    assert_eq!((t.runs[3].steps, t.runs[3].tool_calls), (2, 2));
    assert_eq!(f.answer(0), vec![11]);
    assert_eq!((t.comments, t.tool_calls), (2, 3));
    assert_eq!(f.activity(0), Some((2, 10)));
    let d = t.duration.unwrap();
    assert_eq!((d.ms, d.source), (16_406, DurationSource::Recorded));
    assert_eq!(estimate(&t.throughput), (592, 16_277));
    assert_eq!(t.finished_at.as_deref(), Some("09:00 am"));
    let u = t.usage;
    assert_eq!(
        (u.input, u.output, u.cache_creation, u.cache_read),
        (12, 592, 3_700, 69_408)
    );
    assert_eq!(t.steps.len(), 4);
}

#[test]
fn thought_only_run() {
    let f = load("rules/thought-only-run.jsonl");
    // The README lists `work 2–4 · Thought 5 · prose 6`; runs are *maximal* (DESIGN.md §4,
    // seed 003 `chunk_by(interim)`), so the thinking on 5 stays in the work run it touches.
    // A Thought run is a work run made only of thinking (see `split-rows-usage`).
    assert_eq!(f.runs(0), vec![(Work, 2, 5), (Prose, 6, 6)]);
    assert_eq!(f.a.turns[0].runs[0].steps, 2);
    assert_eq!(f.answer(0), vec![6]);
    assert_eq!((f.a.turns[0].comments, f.a.turns[0].tool_calls), (0, 1));
    assert_eq!(estimate(&f.a.turns[0].throughput), (419, 11_817));
}

#[test]
fn mixed_step_trailing_prose() {
    let f = load("rules/mixed-step-trailing-prose.jsonl");
    let t = &f.a.turns[0];
    assert_eq!(f.answer(0), vec![6]);
    assert_eq!(
        (t.comments, t.tool_calls, t.state),
        (0, 2, TurnState::Complete)
    );
    assert!(!t.final_answer.as_ref().unwrap().end_turn);
    assert_eq!(f.runs(0), vec![(Work, 2, 5), (Prose, 6, 6)]);
}

#[test]
fn narration_tail_moved_past() {
    let f = load("rules/narration-tail-moved-past.jsonl");
    let (t1, t2) = (&f.a.turns[0], &f.a.turns[1]);
    assert_eq!(
        (t1.final_answer.is_none(), t1.state),
        (true, TurnState::Replyless)
    );
    assert_eq!((t1.comments, t1.tool_calls), (1, 2));
    let d = t1.duration.unwrap();
    assert_eq!((d.ms, d.source), (71_538, DurationSource::Timestamps));
    assert_eq!(f.answer(1), vec![10]);
    assert_eq!(
        (t2.state, t2.comments, t2.tool_calls),
        (TurnState::Complete, 0, 1)
    );
    assert_eq!(t2.duration.unwrap().ms, 20_637);
}

#[test]
fn question_todowrite_and_question_then_tool() {
    let f = load("rules/question-todowrite.jsonl");
    assert_eq!(f.answer(0), vec![4, 7]);
    let t = &f.a.turns[0];
    assert_eq!(
        (t.comments, t.tool_calls, t.state),
        (0, 2, TurnState::Complete)
    );
    assert_eq!(
        f.runs(0),
        vec![(Work, 2, 3), (Prose, 4, 4), (Work, 5, 6), (Prose, 7, 7)]
    );
    let f = load("rules/question-then-tool.jsonl");
    assert_eq!(f.answer(0), vec![7]);
    assert_eq!((f.a.turns[0].comments, f.a.turns[0].tool_calls), (1, 2));
}

#[test]
fn replyless_interrupted_and_in_flight() {
    let f = load("rules/replyless.jsonl");
    let t = &f.a.turns[0];
    assert_eq!(
        (t.final_answer.is_none(), t.state),
        (true, TurnState::Replyless)
    );
    assert_eq!((t.comments, t.tool_calls), (0, 2));
    assert_eq!(f.runs(0), vec![(Work, 2, 6)]);
    assert_eq!(t.runs[0].steps, 2);
    assert_eq!(
        (f.answer(1), f.a.turns[1].state),
        (vec![8], TurnState::Complete)
    );

    let f = load("rules/interrupted.jsonl");
    let s: Vec<TurnState> = f.a.turns.iter().map(|t| t.state).collect();
    assert_eq!(
        s,
        vec![
            TurnState::Replyless,
            TurnState::Replyless,
            TurnState::Complete
        ]
    );
    assert_eq!((f.a.turns[0].comments, f.a.turns[0].tool_calls), (1, 1));
    assert_eq!(
        (f.a.turns[1].steps.len(), f.a.turns[1].activity.clone()),
        (0, None)
    );
    assert_eq!(f.answer(2), vec![11]);

    let f = load("rules/in-flight.jsonl");
    assert_eq!(f.a.turns[0].state, TurnState::Complete);
    assert_eq!(f.a.turns[1].state, TurnState::InFlight);
    assert_eq!(f.answer(1), Vec::<usize>::new());
    let f = load_with("rules/in-flight.jsonl", &opts(true));
    assert_eq!(f.a.turns[1].state, TurnState::Replyless);

    let f = load("rules/in-flight-prose.jsonl");
    assert_eq!(
        (f.answer(0), f.a.turns[0].state),
        (vec![3], TurnState::InFlight)
    );

    let f = load("rules/torn-last-line.jsonl");
    assert_eq!(f.a.turn_count, 2);
    assert_eq!(f.a.turns[1].state, TurnState::InFlight);
    let f = load_with("rules/torn-last-line.jsonl", &opts(true));
    assert_eq!(f.a.turns[1].state, TurnState::Replyless);
}

#[test]
fn marker_table() {
    // (file, hidden marker span on line 8, answer start on line 8); None = ignored.
    let honoured = [
        ("marker-mid-block", (235, 253), 255),
        ("marker-bold", (196, 218), 220),
        ("marker-italic", (196, 216), 218),
        ("marker-heading", (196, 217), 219),
        ("marker-glued", (196, 214), 214),
        ("marker-legacy-amc", (196, 209), 211),
        ("marker-two", (222, 240), 242),
    ];
    for (name, (ms, me), start) in honoured {
        let f = load(&format!("rules/{name}.jsonl"));
        let t = &f.a.turns[0];
        assert_eq!(f.answer(0), vec![8], "{name}");
        assert_eq!((t.comments, t.tool_calls), (2, 2), "{name}");
        let m = t.final_answer.as_ref().unwrap().marker.clone().unwrap();
        assert_eq!(
            (f.col(m.span.start, 8), f.col(m.span.end, 8)),
            (ms, me),
            "{name}"
        );
        assert_eq!(f.col(m.answer_start, 8), start, "{name}");
        assert_eq!(t.state, TurnState::Complete, "{name}");
    }
    let f = load("rules/marker-glued.jsonl");
    let m = f.a.turns[0].final_answer.clone().unwrap().marker.unwrap();
    assert!(f.src[m.answer_start..].starts_with("## Renamed"));
    for name in [
        "marker-nothing-after",
        "marker-code-fence",
        "marker-backticks",
        "marker-mid-sentence",
    ] {
        let f = load(&format!("rules/{name}.jsonl"));
        let fa = f.a.turns[0].final_answer.clone().unwrap();
        assert_eq!(f.answer(0), vec![7, 8], "{name}");
        assert_eq!((fa.marker, f.a.turns[0].comments), (None, 1), "{name}");
        // Only the marker with nothing after it is a (hidden) boundary-shaped line.
        let hidden: Vec<(usize, usize)> = fa
            .stray_markers
            .iter()
            .map(|s| (f.col(s.start, 8), f.col(s.end, 8)))
            .collect();
        let want = if name == "marker-nothing-after" {
            vec![(310, 328)]
        } else {
            vec![]
        };
        assert_eq!(hidden, want, "{name}");
    }
}

#[test]
fn placeholder_usage_and_split_rows() {
    let f = load("rules/placeholder-usage.jsonl");
    for (ti, ms, ans) in [(0, 56_946, 6), (1, 10_370, 11)] {
        let t = &f.a.turns[ti];
        assert_eq!(
            t.throughput,
            Throughput::None {
                reason: "output counts are streaming placeholders"
            }
        );
        assert_eq!((t.state, t.duration.unwrap().ms), (TurnState::Complete, ms));
        assert_eq!(f.answer(ti), vec![ans]);
    }
    assert_eq!(f.a.turns[0].comments, 1);
    let u = f.a.usage;
    assert_eq!(
        (u.input, u.cache_creation, u.cache_read, u.output),
        (16, 3_390, 69_070, 25)
    );

    let f = load("rules/split-rows-usage.jsonl");
    let t = &f.a.turns[0];
    let u = t.usage;
    assert_eq!(
        (u.input, u.cache_creation, u.cache_read, u.output),
        (7, 3_700, 33_976, 1_280)
    );
    assert_eq!(f.a.steps.len(), 2);
    assert_eq!(
        f.runs(0),
        vec![(Thought, 2, 2), (Prose, 3, 3), (Work, 4, 7), (Prose, 8, 8)]
    );
    assert_eq!((f.answer(0), t.comments, t.tool_calls), (vec![8], 1, 2));
    assert_eq!(estimate(&t.throughput), (1_280, 28_574));
    assert_eq!(t.finished_at.as_deref(), Some("12:40 pm"));
}

#[test]
fn wake_local_commands_init_and_unknown_types() {
    let f = load("rules/task-notification.jsonl");
    let kinds: Vec<TurnKind> = f.a.turns.iter().map(|t| t.kind).collect();
    assert_eq!(kinds, vec![TurnKind::Prompt, TurnKind::Wake]);
    assert_eq!(f.a.turns[1].title, "background task finished");
    assert_eq!((f.answer(0), f.answer(1)), (vec![4], vec![9]));
    let fin: Vec<Option<&str>> = f.a.turns.iter().map(|t| t.finished_at.as_deref()).collect();
    assert_eq!(fin, vec![Some("12:50 pm"), Some("12:52 pm")]);

    let f = load("rules/local-commands.jsonl");
    assert_eq!(f.a.turn_count, 1);
    assert_eq!(f.a.turns[0].kind, TurnKind::Preamble);
    assert_eq!(f.a.turns[1].entries, 3..10);
    assert_eq!(
        (f.answer(1), f.a.turns[1].state),
        (vec![5], TurnState::Complete)
    );

    let f = load("rules/init-command.jsonl");
    let t = &f.a.turns[0];
    assert_eq!((f.a.turn_count, t.title.as_str()), (1, "/init"));
    assert_eq!((t.comments, t.tool_calls, f.answer(0)), (1, 3, vec![10]));
    assert_eq!(t.duration.unwrap().ms, 23_289);

    let f = load("rules/unknown-types.jsonl");
    assert_eq!(f.a.turn_count, 2);
    assert_eq!((f.answer(1), f.answer(2)), (vec![6], vec![9]));
    assert_eq!(f.a.turns[2].title, "Should they share one?");
}

#[test]
fn inline_sidechains_and_compaction() {
    let f = load("rules/inline-sidechains.jsonl");
    assert_eq!(f.a.turn_count, 1);
    let t = &f.a.turns[0];
    assert_eq!((t.comments, t.tool_calls, f.answer(0)), (1, 2, vec![15]));
    let c = &f.a.subagent_calls;
    assert_eq!(c.len(), 2);
    let lines = |v: &[usize]| v.iter().map(|&e| f.line(e)).collect::<Vec<_>>();
    assert_eq!(
        (f.line(c[0].entry), lines(&c[0].sidechain_entries)),
        (3, vec![5, 7, 9, 13])
    );
    assert_eq!(c[0].result_entry.map(|e| f.line(e)), Some(14));
    assert_eq!(
        (f.line(c[1].entry), lines(&c[1].sidechain_entries)),
        (4, vec![6, 8, 10, 11])
    );
    assert_eq!(c[1].result_entry.map(|e| f.line(e)), Some(12));
    assert_eq!(c[0].description.as_deref(), Some("Survey handlers"));

    let f = load("rules/compaction.jsonl");
    assert_eq!(
        f.a.turns.iter().map(|t| t.n).collect::<Vec<_>>(),
        vec![1, 2]
    );
    let c = &f.a.compactions[0];
    assert_eq!((c.start_line + 1, c.end_line + 1, c.n), (6, 7, 1));
    assert_eq!(
        (c.trigger.as_deref(), c.pre_tokens),
        (Some("auto"), Some(161_204))
    );

    let f = load("rules/compaction-mid-turn.jsonl");
    let t = &f.a.turns[0];
    assert_eq!((f.a.turn_count, t.compactions.to_vec()), (1, vec![0]));
    assert_eq!((f.answer(0), t.comments, t.tool_calls), (vec![11], 1, 3));
    assert_eq!(t.duration.unwrap().ms, 33_591);
}

/// `(line, start col, end col, id, mode, verdict, phase, phase name)`.
type GateRow<'a> = (
    usize,
    usize,
    usize,
    &'a str,
    &'a str,
    &'a str,
    Option<usize>,
    &'a str,
);

#[test]
fn gates_table() {
    let f = load("rules/gates.jsonl");
    let g = &f.a.gates;
    let got: Vec<GateRow> = g
        .iter()
        .map(|g| {
            let line = g.line + 1;
            (
                line,
                f.col(g.span.start, line),
                f.col(g.span.end, line),
                g.id.as_str(),
                g.mode.as_str(),
                g.verdict_text.as_str(),
                g.phase,
                g.phase_name.as_str(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (2, 288, 326, "2", "RED TEAM", "OK", Some(1), "Red Team"),
            (
                2,
                395,
                450,
                "CUSTOM_SECURITY_SCAN",
                "SCAN",
                "PASS",
                None,
                "CUSTOM_SECURITY_SCAN"
            ),
            (5, 259, 299, "4", "ELEGANCE", "PASS", Some(4), "Elegance"),
            (5, 326, 368, "5", "AUTO-APPROVE", "OK", Some(5), "Docs"),
            (
                8,
                229,
                351,
                "CUSTOM_STANDARDS_AUDIT",
                "AUDIT",
                "NEEDS-REVIEW",
                Some(6),
                "Standards Audit"
            ),
        ]
    );
    assert!(g[..4].iter().all(|g| g.verdict == Verdict::Done));
    assert_eq!(
        g[4].verdict,
        Verdict::NeedsYou {
            reason: "unsafe block in src/ffi.rs:41 has no SAFETY comment".into()
        }
    );
    let t = &f.a.turns[0];
    assert_eq!((f.answer(0), t.comments, t.tool_calls), (vec![8], 2, 2));
    assert_eq!(t.gates, vec![0, 1, 2, 3, 4]);
}

#[test]
fn codex_rollouts() {
    let f = load("rules/codex-rollout.jsonl");
    assert_eq!(f.a.turns[0].kind, TurnKind::Preamble);
    assert_eq!(f.a.turns[0].entries, 0..5);
    let t = &f.a.turns[1];
    assert_eq!(
        t.title,
        "Where is the currency code parsed? Show me the function signature."
    );
    assert_eq!(f.a.steps.len(), 2);
    assert_eq!((f.answer(1), t.comments, t.tool_calls), (vec![16], 0, 1));
    assert_eq!(f.runs(1), vec![(Work, 9, 14), (Prose, 16, 16)]);
    let u = t.usage;
    assert_eq!(
        (u.input, u.cache_read, u.output, u.reasoning),
        (4_110, 16_000, 412, 160)
    );
    let d = t.duration.unwrap();
    assert_eq!(
        (d.ms, d.source, t.state),
        (10_204, DurationSource::Recorded, TurnState::Complete)
    );
    // Measured: 10 204 − 1 320 (time to first token) − 501 ms between the call (10:15:06.451)
    // and its output (10:15:06.952) = 8 383 ms.
    match &t.throughput {
        Throughput::Measured {
            tokens, decode_ms, ..
        } => assert_eq!((*tokens, *decode_ms), (412, 8_383)),
        other => panic!("{other:?}"),
    }
    assert_eq!(t.finished_at.as_deref(), Some("10:15 am"));

    let f = load("rules/codex-unfinished.jsonl");
    let t = &f.a.turns[1];
    assert_eq!(
        (t.state, t.final_answer.is_none(), t.tool_calls),
        (TurnState::InFlight, true, 1)
    );
    assert!(matches!(t.throughput, Throughput::None { .. }));
}

/// Codex 0.147: `item_completed` copies pair with their response items by kind, order and
/// id (an image prompt whose item wraps the image in `<image>` parts, a redacted prompt whose
/// copy has other text); measured tokens/second from `started_at_ms` / `completed_at_ms`;
/// user items outside a task are context (issue 9 items 1–3, 5).
#[test]
fn codex_0147_item_completed() {
    let f = load_with("rules/codex-0147-item-completed.jsonl", &opts(true));
    use transcript_ls::model::Role;
    let roles: Vec<&Role> = f.t.entries.iter().map(|e| &e.role).collect();
    // Prompts: the response items on lines 7 and 25; their copies (8, 26) are Meta copies.
    let prompts: Vec<usize> = (0..roles.len())
        .filter(|&i| matches!(roles[i], Role::Prompt(_)))
        .map(|i| f.line(i))
        .collect();
    assert_eq!(prompts, [7, 25]);
    assert_eq!(f.t.entries[7].copy_of(), Some(6));
    assert_eq!(f.t.entries[25].copy_of(), Some(24));
    // Every model copy (reasoning 10, messages 12, 17, 27) is a Meta copy of the next line.
    for (copy, item) in [(9, 10), (11, 12), (16, 17), (26, 27)] {
        assert_eq!(
            (roles[copy], f.t.entries[copy].copy_of()),
            (&Role::Meta, Some(item)),
            "line {}",
            copy + 1
        );
    }
    // Re-sent context between the tasks (lines 21, 22) is context, not a turn.
    assert_eq!((roles[20], roles[21]), (&Role::Context, &Role::Context));
    assert_eq!(f.a.turn_count, 2);
    let t1 = &f.a.turns[1];
    assert_eq!(t1.title, "What is wrong in this screenshot?");
    assert_eq!((f.answer(1), t1.comments, t1.tool_calls), (vec![18], 1, 1));
    // Steps: [1 000, 3 000] (reasoning first token to the call's row) and [5 000, 6 000]:
    // 180 tokens in 3 000 ms.
    match &t1.throughput {
        Throughput::Measured {
            tokens,
            decode_ms,
            tok_per_s,
        } => assert_eq!((*tokens, *decode_ms, *tok_per_s), (180, 3_000, 60.0)),
        other => panic!("{other:?}"),
    }
    assert_eq!(t1.duration.map(|d| d.ms), Some(6_100));
    let t2 = &f.a.turns[2];
    assert_eq!((t2.title.as_str(), f.answer(2)), ("[redacted]", vec![28]));
    match &t2.throughput {
        Throughput::Measured {
            tokens, decode_ms, ..
        } => assert_eq!((*tokens, *decode_ms), (20, 500)),
        other => panic!("{other:?}"),
    }
    // `cache_write_input_tokens` is its own figure (cache creation), not uncached input.
    let u = f.a.usage;
    assert_eq!(
        (u.input, u.cache_read, u.cache_creation, u.output),
        (1_150, 2_200, 50, 200)
    );
    // Effort per step: `turn_context.effort`, then `thread_settings_applied`.
    let effort = |line: usize| {
        f.t.entries[line - 1]
            .step
            .as_ref()
            .and_then(|s| s.effort.as_deref())
    };
    assert_eq!((effort(18), effort(28)), (Some("high"), Some("xhigh")));
}

/// Codex 0.118 writes `agent_message` copies at the millisecond of their items: a copy is
/// never a request start (issue 9 item 1). Before: 140 tokens / 3 001 ms = 46.7 tok/s.
#[test]
fn codex_0118_copies_are_not_request_starts() {
    let f = load_with("rules/codex-0118-same-ms-copies.jsonl", &opts(true));
    let t = &f.a.turns[1];
    assert_eq!(f.a.turn_count, 1);
    // Step 1: 0.300 (token_count) → 3.300 (call); step 2: 3.400 (output) → 5.400.
    assert_eq!(estimate(&t.throughput), (140, 5_000));
    assert_eq!((f.answer(1), t.comments, t.tool_calls), (vec![14], 1, 1));
}

/// A `message.id` (and requestId) written again after a new human prompt opens a new step
/// in the new turn: no tokens move between turns (issue 9 item 7). Before: one step, turn 2
/// with no usage.
#[test]
fn steps_never_cross_a_turn() {
    let f = load_with("rules/claude-reused-message-id.jsonl", &opts(true));
    assert_eq!((f.a.turn_count, f.a.steps.len()), (2, 2));
    let out = |ti: usize| f.a.turns[ti].usage.output;
    assert_eq!((out(0), out(1)), (40, 60));
    assert_eq!(f.a.usage.output, 100);
    // Turn 1's 40 tokens are under the estimate's floor (issue 20 item 10): no figure.
    assert_eq!(
        f.a.turns[0].throughput,
        Throughput::None {
            reason: transcript_ls::analysis::throughput::TOO_FEW_TOKENS
        }
    );
    assert_eq!(estimate(&f.a.turns[1].throughput), (60, 2_000));
}

/// A sub-agent file's first prompt is the task its parent wrote: kind `subagent-task`
/// (issue 9 item 8); a main file's first prompt stays a prompt.
#[test]
fn subagent_file_opener_is_its_task() {
    let f = load("cases/20-subagent-sibling-files/subagents/agent-a3c5e7f9b1d2046e8.jsonl");
    assert_eq!(
        (f.a.turns[0].kind, f.a.turns[0].title.as_str()),
        (TurnKind::SubagentTask, "Review src/ratelimit")
    );
    assert_eq!(TurnKind::SubagentTask.as_str(), "subagent-task");
    let f = load("cases/20-subagent-sibling-files.jsonl");
    assert_eq!(f.a.turns[0].kind, TurnKind::Prompt);
}

/// Claude Code 2.1.1xx–2.1.27x records (issue 9 item 6): `promptSource` / `origin.kind`
/// decide the opener; hook feedback is a hook note (never a prompt); the last `cost-state`
/// is the session's cost and API time; advisor iterations are counted apart; `effort` per
/// step; the new record types and attachments read without a diagnostic; empty `thinking`
/// narration does not break the final answer. Before: 4 turns and 3 hints.
#[test]
fn claude_2_1_2xx_records() {
    use transcript_ls::model::Role;
    let f = load_with("rules/claude-2-1-2xx-records.jsonl", &opts(true));
    assert!(f.t.problems.is_empty(), "{:?}", f.t.problems);
    assert!(
        !f.t.entries
            .iter()
            .any(|e| matches!(e.role, Role::Other | Role::Unparsed))
    );
    assert_eq!(f.a.turn_count, 2);
    let kinds: Vec<(TurnKind, usize)> = f.a.turns[1..]
        .iter()
        .map(|t| (t.kind, f.line(t.opener.unwrap())))
        .collect();
    assert_eq!(kinds, [(TurnKind::Prompt, 3), (TurnKind::Wake, 13)]);
    // Hook feedback (lines 10 and 24) is a Meta hook note.
    for line in [10, 24] {
        let e = &f.t.entries[line - 1];
        assert_eq!(
            (&e.role, e.record_type.as_ref()),
            (&Role::Meta, "user/hook-feedback")
        );
    }
    // The answer after the empty-thinking narration (line 8) and the hook note.
    assert_eq!(f.answer(1), vec![9, 11]);
    assert_eq!(
        (f.t.meta.cost_usd, f.t.meta.api_duration_ms),
        (Some(0.0456), Some(9_100))
    );
    // msg_c2x_1: the main model's usage is its `message` iteration; the advisor's apart.
    let (u, adv) = (f.a.usage, f.a.advisor_usage);
    assert_eq!(
        (u.input, u.output, u.cache_read, u.cache_creation),
        (20, 120, 4_000, 800)
    );
    assert_eq!((adv.input, adv.output), (800, 120));
    let step = f.t.entries[5].step.as_ref().unwrap();
    assert_eq!(step.effort.as_deref(), Some("xhigh"));
}

/// A Codex sub-agent rollout replays its parent's history (a second `session_meta`, the
/// parent's turn) before `trigger_turn`: that history is inherited, one fold, in no turn and
/// no total (issue 9 item 4). Before: 2 turns, the parent's prompt counted as turn 1.
#[test]
fn codex_subagent_inherited_history() {
    let f = load_with("rules/codex-subagent-inherited.jsonl", &opts(true));
    assert_eq!(f.t.meta.parent_thread_id.as_deref(), Some("thr-parent"));
    assert!(f.t.meta.is_subagent_file);
    let inherited: Vec<usize> = (0..f.t.entries.len())
        .filter(|&i| f.t.entries[i].inherited)
        .map(|i| f.line(i))
        .collect();
    assert_eq!(inherited, (2..=8).collect::<Vec<_>>());
    let inh = f.a.inherited.first().unwrap();
    assert_eq!((inh.start_line + 1, inh.end_line + 1, inh.turns), (2, 8, 1));
    assert_eq!(f.a.turn_count, 1);
    let t = &f.a.turns[1];
    assert_eq!(
        (t.kind, f.line(t.opener.unwrap())),
        (TurnKind::SubagentTask, 11)
    );
    // Own usage only: the parent's 500 output tokens are not this file's.
    let u = f.a.usage;
    assert_eq!((u.input, u.cache_read, u.output), (2_000, 4_000, 40));
    match &t.throughput {
        Throughput::Measured {
            tokens, decode_ms, ..
        } => assert_eq!((*tokens, *decode_ms), (40, 500)),
        other => panic!("{other:?}"),
    }
    let folds = transcript_ls::ide::folding::raw_folds(&f.t, &f.a);
    let fold = folds
        .iter()
        .find(|x| x.kind == transcript_ls::ide::folding::FoldKind::Inherited)
        .unwrap();
    assert_eq!(
        (fold.start_line, fold.end_line, fold.label.as_str()),
        (1, 7, "inherited from thr-parent (1 turn)")
    );
}

/// The 1-based lines of a fixture's inherited records.
fn inherited_lines(f: &F) -> Vec<usize> {
    (0..f.t.entries.len())
        .filter(|&i| f.t.entries[i].inherited)
        .map(|i| f.line(i))
        .collect()
}

/// `(title, tool calls, 1-based answer lines)` of every turn but the preamble.
fn turn_facts(f: &F) -> Vec<(String, u32, Vec<usize>)> {
    (0..f.a.turns.len())
        .filter(|&i| f.a.turns[i].kind != TurnKind::Preamble)
        .map(|i| {
            (
                f.a.turns[i].title.clone(),
                f.a.turns[i].tool_calls,
                f.answer(i),
            )
        })
        .collect()
}

/// A `/fork` child rollout (fixtures/rules/README.md `codex-fork-replay.jsonl`): its own
/// `session_meta`, the parent's, the parent's two turns replayed with stamps spanning 2–233 ms,
/// then its own two turns. The replay is inherited up to the first `task_started` whose
/// UUIDv7 turn id sorts after the child's thread id (issue 20 item 1). Before: the timing
/// window ended the replay at its second millisecond: 4 turns, 61 output tokens.
#[test]
fn codex_fork_replay_spanning_milliseconds_is_inherited() {
    let f = load_with("rules/codex-fork-replay.jsonl", &opts(true));
    assert_eq!(
        f.t.meta.parent_thread_id.as_deref(),
        Some("019e5000-0000-7000-8000-00000000a001")
    );
    assert_eq!(inherited_lines(&f), (2..=17).collect::<Vec<_>>());
    let inh = f.a.inherited.first().unwrap();
    assert_eq!(
        (inh.start_line + 1, inh.end_line + 1, inh.turns),
        (2, 17, 2)
    );
    assert_eq!(f.a.turn_count, 2);
    assert_eq!(
        turn_facts(&f),
        [
            ("Now write tests for /health".to_string(), 0, vec![22]),
            ("Run them".to_string(), 1, vec![30]),
        ]
    );
    // The child's own calls: (4000 − 2500, 2000 − 900, 50 − 30) and (1000, 600, 11).
    let u = f.a.usage;
    assert_eq!(
        (u.input, u.cache_read, u.cache_creation, u.output),
        (800, 1_700, 0, 31)
    );
    let s = transcript_ls::ide::stats::stats("f".into(), &f.t, &f.a);
    assert_eq!((s.turns, s.tool_calls, s.steps), (2, 1, 2));
}

/// The small case (`codex-fork-small.jsonl`): the second `session_meta` is the parent's, one
/// replayed turn, and the child's own turn starts 8 ms later: neither one instant nor a
/// time gap tells them apart, the turn ids do. Before: 2 turns, 13 output tokens.
#[test]
fn codex_fork_small_case() {
    let f = load_with("rules/codex-fork-small.jsonl", &opts(true));
    assert_eq!(inherited_lines(&f), (2..=7).collect::<Vec<_>>());
    assert_eq!(f.a.turn_count, 1);
    assert_eq!(
        turn_facts(&f),
        [("A CLI that counts words".to_string(), 0, vec![10])]
    );
    let u = f.a.usage;
    assert_eq!((u.input, u.cache_read, u.output), (300, 700, 8));
}

/// A file holding two rollouts (`codex-fork-several-rollouts.jsonl`): the parent's own (lines
/// 1–16: two turns, 30 output tokens, one tool call), then its `/fork` child's (17–48), whose
/// `session_meta` is on line 17, not line 1. The replay (18–33) is inherited wherever that
/// meta is; the parent's second turn ends its work before it. Before: nothing excluded,
/// 6 turns, 91 output tokens, 3 tool calls.
#[test]
fn codex_fork_in_a_file_of_several_rollouts() {
    let f = load_with("rules/codex-fork-several-rollouts.jsonl", &opts(true));
    assert_eq!(f.t.meta.parent_thread_id, None);
    assert_eq!(inherited_lines(&f), (18..=33).collect::<Vec<_>>());
    // Named by the fork's own `session_meta` (line 17), not the file's first.
    let inh = f.a.inherited.first().unwrap();
    assert_eq!(
        transcript_ls::ide::folding::inherited_label(inh),
        "inherited from 019e5000-0000-7000-8000-00000000a001 (2 turns)"
    );
    assert_eq!(f.a.turn_count, 4);
    assert_eq!(
        turn_facts(&f),
        [
            ("Add a health check endpoint".to_string(), 0, vec![6]),
            ("Also log each request".to_string(), 1, vec![14]),
            ("Now write tests for /health".to_string(), 0, vec![38]),
            ("Run them".to_string(), 1, vec![46]),
        ]
    );
    // The replayed answer is not turn 2's, nor is the time until the fork.
    assert_eq!(f.a.turns[2].duration.as_ref().map(|d| d.ms), Some(30_000));
    let u = f.a.usage;
    assert_eq!((u.input, u.cache_read, u.output), (2_400, 2_600, 61));
    let s = transcript_ls::ide::stats::stats("f".into(), &f.t, &f.a);
    assert_eq!((s.turns, s.tool_calls, s.subagent_tool_calls), (4, 2, 0));
}

/// Two rollouts in one file, no fork (`codex-two-sessions.jsonl`, issue 20 item 3): the second
/// `session_meta` (line 9, a new id) starts a session whose cumulative `token_count` totals
/// count from its own baseline, so the file's usage is the sum of both; the outline shows the
/// boundary. Before: the second session's totals were taken as deltas of the first's (40 out,
/// 0 in lost).
#[test]
fn codex_two_sessions_in_one_file_add_up() {
    let f = load_with("rules/codex-two-sessions.jsonl", &opts(true));
    assert_eq!(f.a.turn_count, 2);
    let u = f.a.usage;
    assert_eq!(
        (u.input, u.cache_read, u.output),
        (1_000 + 1_000, 500, 40 + 50)
    );
    assert_eq!(
        (f.a.turns[1].usage.output, f.a.turns[2].usage.output),
        (40, 50)
    );
    assert_eq!(
        f.t.meta.sessions,
        [transcript_ls::model::SessionStart {
            entry: 8,
            line: 8,
            id: "019e6100-0000-7000-8000-0000000000f1".into(),
            parent: None,
        }]
    );
    let symbols = transcript_ls::ide::symbols::raw_symbols(&f.t, &f.a, &f.src);
    let sessions: Vec<(usize, &str, &str, usize)> = symbols
        .iter()
        .enumerate()
        .flat_map(|(i, s)| s.children.iter().map(move |c| (i, c)))
        .filter(|(_, c)| c.kind == transcript_ls::ide::symbols::SymbolKind::Session)
        .map(|(i, c)| (i, c.name.as_str(), c.detail.as_str(), c.start_line + 1))
        .collect();
    assert_eq!(
        sessions,
        [(1, "Session 2: 019e6100-0000-7000-8000-0000000000f1", "", 9)]
    );
    // A fork later in a file is a session too; the parent's meta its replay holds is not.
    let f = load_with("rules/codex-fork-several-rollouts.jsonl", &opts(true));
    let starts: Vec<(usize, Option<&str>)> =
        f.t.meta
            .sessions
            .iter()
            .map(|s| (s.line + 1, s.parent.as_deref()))
            .collect();
    assert_eq!(starts, [(17, Some("019e5000-0000-7000-8000-00000000a001"))]);
}

/// A resumed Claude Code session that writes its first seven records again byte for byte
/// (`claude-repeated-records.jsonl`, issue 20 item 2): a record whose `uuid` was read is a
/// repeat, read once: 2 turns, 95 output tokens, 1 tool call. The two chunks of `msg_rr_1`
/// (lines 2–3: one message id, two uuids) are one step, not repeats. Before: 4 turns, 190.
#[test]
fn claude_repeated_records_count_once() {
    let f = load_with("rules/claude-repeated-records.jsonl", &opts(true));
    let repeated: Vec<usize> = (0..f.t.entries.len())
        .filter(|&i| f.t.entries[i].repeated)
        .map(|i| f.line(i))
        .collect();
    assert_eq!(repeated, (8..=14).collect::<Vec<_>>());
    for i in 7..14 {
        let e = &f.t.entries[i];
        assert_eq!(
            (&e.role, e.blocks.len(), e.step.is_none(), e.copy_of()),
            (&transcript_ls::model::Role::Meta, 0, true, Some(i - 7))
        );
        assert_eq!(e.record_type, f.t.entries[i - 7].record_type);
    }
    assert_eq!(f.a.turn_count, 2);
    assert_eq!(
        turn_facts(&f),
        [
            (
                "Rename parse_config to read_config everywhere".to_string(),
                1,
                vec![5]
            ),
            ("Now run the tests".to_string(), 0, vec![7]),
        ]
    );
    let u = f.a.usage;
    assert_eq!(
        (u.input, u.cache_creation, u.cache_read, u.output),
        (24, 500, 4_100, 95)
    );
    let s = transcript_ls::ide::stats::stats("f".into(), &f.t, &f.a);
    assert_eq!((s.turns, s.steps, s.tool_calls), (2, 3, 1));
}

#[test]
fn shared_case_inputs() {
    let f = load("cases/07-queued-prompt-typed-while-working.jsonl");
    assert_eq!(f.a.turn_count, 1);
    assert_eq!(
        f.a.steering.iter().map(|&e| f.line(e)).collect::<Vec<_>>(),
        vec![6]
    );
    assert_eq!(f.runs(0), vec![(Work, 2, 4), (Prose, 7, 7)]);
    assert_eq!(f.answer(0), vec![7]);

    let f = load("cases/08-steering-record-shapes.jsonl");
    assert_eq!(
        f.a.steering.iter().map(|&e| f.line(e)).collect::<Vec<_>>(),
        vec![4, 6, 8]
    );
    assert_eq!((f.a.turn_count, f.answer(0)), (1, vec![9]));

    let f = load("cases/10-split-rows-repeat-usage.jsonl");
    let u = f.a.usage;
    assert_eq!(
        (u.input, u.cache_creation, u.cache_read, u.output),
        (10, 3_010, 24_600, 905)
    );
    assert_eq!(f.a.steps.len(), 2);

    let f = load("cases/13-codex-token-count-reemits.jsonl");
    let u = f.a.turns[1].usage;
    assert_eq!(
        (u.input, u.cache_read, u.output, u.reasoning),
        (1_400, 1_100, 180, 70)
    );
    assert_eq!((f.answer(1), f.a.turns[1].tool_calls), (vec![9], 1));

    let f = load("cases/15-codex-dual-log-duplicates.jsonl");
    assert_eq!((f.a.turn_count, f.answer(1)), (1, vec![9]));

    for (zone, label) in [
        ("UTC", "12:25 am"),
        ("Asia/Tokyo", "09:25 am"),
        ("America/Los_Angeles", "05:25 pm"),
        ("Europe/Paris", "01:25 am"),
    ] {
        let o = Options {
            time_zone: Some(zone.into()),
            ..opts(false)
        };
        let f = load_with("cases/16-utc-timestamps-local-display.jsonl", &o);
        let d = f.a.turns[0].duration.unwrap();
        assert_eq!((d.ms, d.source), (2_400_000, DurationSource::Timestamps));
        assert_eq!(f.a.turns[0].finished_at.as_deref(), Some(label), "{zone}");
    }

    let f = load("cases/18-parallel-subagents-interleaved.jsonl");
    let c = &f.a.subagent_calls;
    let lines = |v: &[usize]| v.iter().map(|&e| f.line(e)).collect::<Vec<_>>();
    assert_eq!((f.a.turn_count, f.answer(0)), (1, vec![13]));
    assert_eq!(
        (c[0].agent_id.as_deref(), lines(&c[0].sidechain_entries)),
        (Some("cli"), vec![3, 5, 7, 11])
    );
    assert_eq!(
        (c[1].agent_id.as_deref(), lines(&c[1].sidechain_entries)),
        (Some("env"), vec![4, 6, 8, 9])
    );
    assert_eq!(
        (
            c[0].result_entry.map(|e| f.line(e)),
            c[1].result_entry.map(|e| f.line(e))
        ),
        (Some(12), Some(10))
    );

    let f = load("cases/20-subagent-sibling-files.jsonl");
    let c = &f.a.subagent_calls;
    assert_eq!(c[0].agent_id.as_deref(), Some("a3c5e7f9b1d2046e8"));
    assert_eq!(
        (c[0].duration_ms, c[0].total_tokens),
        (Some(92_000), Some(27_000))
    );
    assert_eq!(c[1].agent_id.as_deref(), Some("a9d8c7b6a5f4e3d21"));
    let f = load("cases/20-subagent-sibling-files/subagents/agent-a3c5e7f9b1d2046e8.jsonl");
    assert!(f.t.meta.is_subagent_file);
    assert_eq!(
        (f.a.turn_count, f.a.turns[0].tool_calls, f.answer(0)),
        (1, 1, vec![4])
    );

    let f = load("cases/23-tool-id-reused-across-sessions.jsonl");
    let pairs: Vec<(usize, Option<usize>)> =
        f.a.tool_pairs
            .iter()
            .map(|p| (f.line(p.use_entry), p.result_entry.map(|e| f.line(e))))
            .collect();
    assert_eq!(pairs, vec![(2, Some(3)), (6, Some(7))]);
    assert_eq!(f.a.turn_count, 2);

    let f = load("cases/26-long-pasted-user-message.jsonl");
    assert_eq!(
        f.a.turns[0].title,
        "Review this incident timeline and tell me what we missed:"
    );
    assert_eq!(f.answer(0), vec![2]);
}

/// The session boundaries of `f`'s raw outline: (turn symbol index, name, 1-based line).
fn session_children(f: &F) -> Vec<(usize, String, usize)> {
    let symbols = transcript_ls::ide::symbols::raw_symbols(&f.t, &f.a, &f.src);
    symbols
        .iter()
        .enumerate()
        .flat_map(|(i, s)| s.children.iter().map(move |c| (i, c)))
        .filter(|(_, c)| c.kind == transcript_ls::ide::symbols::SymbolKind::Session)
        .map(|(i, c)| (i, c.name.clone(), c.start_line + 1))
        .collect()
}

/// Copilot CLI: two `session.start`s in one file (`copilot-two-sessions.jsonl`, issue 20
/// item 3): each session's `session.shutdown` counts once and they add up (500 + 300 uncached
/// in, 1 000 + 500 cache read, 30 + 20 out, 2 requests); the outline shows the second.
/// Before: only the last shutdown (300 / 500 / 20).
#[test]
fn copilot_two_sessions_in_one_file_add_up() {
    let f = load_with("rules/copilot-two-sessions.jsonl", &opts(true));
    assert_eq!(f.a.turn_count, 2);
    let u = f.a.usage;
    assert_eq!(
        (u.input, u.cache_read, u.output),
        (500 + 300, 1_000 + 500, 30 + 20)
    );
    let m = &f.t.meta.recorded_usage;
    assert_eq!(m.len(), 1);
    assert_eq!((m[0].model.as_str(), m[0].requests), ("gpt-5", Some(2)));
    assert_eq!(
        session_children(&f),
        [(
            1,
            "Session 2: 7d1c2b3a-0000-4a6b-8c7d-000000000002".into(),
            7
        )]
    );
}

/// Pi: a second `session` header (`pi-two-sessions.jsonl`, issue 20 item 3): the earlier
/// session is a session, not an abandoned branch: 3 prompts, 450 in / 90 out; the branch
/// inside the first session (line 3, left for line 4) stays abandoned. Before: 1 prompt,
/// 200 in / 40 out, lines 2–6 all abandoned.
#[test]
fn pi_two_sessions_in_one_file_add_up() {
    let f = load_with("rules/pi-two-sessions.jsonl", &opts(true));
    assert_eq!(f.a.turn_count, 3);
    let u = f.a.usage;
    assert_eq!((u.input, u.output), (100 + 150 + 200, 20 + 30 + 40));
    let abandoned: Vec<usize> =
        f.t.entries
            .iter()
            .filter(|e| e.abandoned)
            .map(|e| e.line + 1)
            .collect();
    assert_eq!(abandoned, [3]);
    assert_eq!(
        session_children(&f),
        [(
            2,
            "Session 2: 0b9e6c1a-0000-4c8e-9a41-000000000002".into(),
            7
        )]
    );
}

/// Claude Code: a new main-thread `sessionId` mid-file (`claude-two-sessions.jsonl`, issue 20
/// item 3) starts another session: the outline shows it; figures add up (25 + 35 out).
#[test]
fn claude_two_sessions_in_one_file() {
    let f = load_with("rules/claude-two-sessions.jsonl", &opts(true));
    assert_eq!(f.a.turn_count, 2);
    let u = f.a.usage;
    assert_eq!(
        (u.input, u.cache_read, u.output),
        (10 + 20, 400 + 600, 25 + 35)
    );
    assert_eq!(
        f.t.meta.sessions,
        [transcript_ls::model::SessionStart {
            entry: 2,
            line: 2,
            id: "6b2e0000-0000-4000-8000-0000000000b2".into(),
            parent: None,
        }]
    );
    assert_eq!(
        session_children(&f),
        [(
            1,
            "Session 2: 6b2e0000-0000-4000-8000-0000000000b2".into(),
            3
        )]
    );
}

/// The view draws each later session of a file as a divider line `── Session 2: <id> ──`
/// (issue 20 item 3), in the quiet and the verbose view, on every format: above the turn
/// its first prompt opens (Claude Code), or inside the turn whose tail it starts in.
#[test]
fn views_show_a_divider_where_a_session_starts() {
    use transcript_ls::view::{ViewOptions, render};
    for (file, id, before) in [
        (
            "rules/claude-two-sessions.jsonl",
            "6b2e0000-0000-4000-8000-0000000000b2",
            "It starts the server.",
        ),
        (
            "rules/copilot-two-sessions.jsonl",
            "7d1c2b3a-0000-4a6b-8c7d-000000000002",
            "It describes the build.",
        ),
        (
            "rules/pi-two-sessions.jsonl",
            "0b9e6c1a-0000-4c8e-9a41-000000000002",
            "Second answer.",
        ),
        (
            "rules/codex-two-sessions.jsonl",
            "019e6100-0000-7000-8000-0000000000f1",
            "",
        ),
    ] {
        let f = load_with(file, &opts(true));
        for verbose in [false, true] {
            let v = render(&f.t, &f.a, &f.src, &ViewOptions { verbose });
            let want = format!("── Session 2: {id} ──");
            let lines: Vec<&str> = v.text.lines().collect();
            let at: Vec<usize> = (0..lines.len()).filter(|&i| lines[i] == want).collect();
            assert_eq!(at.len(), 1, "{file} verbose={verbose}:\n{}", v.text);
            let above = &lines[..at[0]];
            assert!(
                above.iter().any(|l| l.contains(before)),
                "{file} verbose={verbose}: {before:?} not above the divider:\n{}",
                v.text
            );
            let below = lines[at[0] + 1..].join("\n");
            assert!(!below.contains(before) || before.is_empty(), "{file}");
            // The view's outline names it as the raw outline does, on the divider's line,
            // inside the range of the turn it belongs to.
            let name = format!("Session 2: {id}");
            let syms = transcript_ls::ide::symbols::view_symbols(&v, &f.a);
            let parents: Vec<_> = syms
                .iter()
                .filter(|t| t.children.iter().any(|c| c.name == name))
                .collect();
            assert_eq!(parents.len(), 1, "{file} verbose={verbose}: {syms:#?}");
            let child = parents[0].children.iter().find(|c| c.name == name).unwrap();
            assert_eq!(
                (child.kind, child.start_line, child.end_line),
                (
                    transcript_ls::ide::symbols::SymbolKind::Session,
                    at[0],
                    at[0]
                ),
                "{file} verbose={verbose}"
            );
            assert!(parents[0].start_line <= at[0] && at[0] <= parents[0].end_line);
            let raw = transcript_ls::ide::symbols::raw_symbols(&f.t, &f.a, &f.src);
            assert!(
                raw.iter()
                    .any(|t| t.children.iter().any(|c| c.name == name)),
                "{file}: raw outline"
            );
        }
    }
}

/// Drift stays visible (`claude-unknown-records.jsonl`, issue 20 item 11): one Information
/// diagnostic per kind no reader knows (a record type ×3, an attachment ×1, a system subtype
/// ×2), on its first line, and none for the 2026 records the issue lists; `stats --json`
/// `unknown_records` counts them; a `pr-link` is a link line and an `api_error` a warning line
/// in both views. Before: one hint `unknown record type 'teleport-state' (kept as other)`,
/// nothing for the attachment and the subtype, and neither line in the quiet view.
#[test]
fn unknown_records_give_one_information_diagnostic_per_kind() {
    use transcript_ls::ide::diagnostics::diagnostics;
    use transcript_ls::model::Severity;
    use transcript_ls::view::{ViewOptions, render};
    let f = load_with("rules/claude-unknown-records.jsonl", &opts(true));
    let all = diagnostics(&f.t, &f.a);
    let d: Vec<(usize, Severity, &str, &str)> = all
        .iter()
        .map(|d| (d.line + 1, d.severity, d.code, d.message.as_str()))
        .collect();
    assert_eq!(
        d,
        [
            (
                4,
                Severity::Information,
                "unknown-record",
                "unknown record type \"teleport-state\" (3 lines): shown in the verbose view only"
            ),
            (
                7,
                Severity::Information,
                "unknown-record",
                "unknown attachment \"holo_hint\" (1 line): shown in the verbose view only"
            ),
            (
                11,
                Severity::Information,
                "unknown-record",
                "unknown system subtype \"quantum_notice\" (2 lines): shown in the verbose view only"
            ),
        ]
    );
    let s = transcript_ls::ide::stats::stats("x".into(), &f.t, &f.a);
    let unknown: Vec<(&str, usize)> = s
        .unknown_records
        .iter()
        .map(|(k, v)| (k.as_str(), *v))
        .collect();
    assert_eq!(
        unknown,
        [
            ("attachment/holo_hint", 1),
            ("system/quantum_notice", 2),
            ("teleport-state", 3)
        ]
    );
    for verbose in [false, true] {
        let v = render(&f.t, &f.a, &f.src, &ViewOptions { verbose });
        let lines: Vec<&str> = v.text.lines().collect();
        assert_eq!(
            lines
                .iter()
                .filter(|l| **l == "🔗 pull request: https://github.com/org/repo/pull/12")
                .count(),
            1,
            "{}",
            v.text
        );
        assert_eq!(
            lines
                .iter()
                .filter(|l| **l == "⚠ API error: Overloaded")
                .count(),
            1,
            "{}",
            v.text
        );
        assert_eq!(v.text.contains("teleport-state"), verbose, "{}", v.text);
    }
}

/// A file joining two agents' records (issue 25, Low list): the other agent's records are
/// not read, and the diagnostic names whose they are instead of calling them unknown.
#[test]
fn another_agents_records_are_named_in_the_diagnostic() {
    use transcript_ls::ide::diagnostics::diagnostics;
    let f = load_with("rules/mixed-claude-codex.jsonl", &opts(true));
    let all = diagnostics(&f.t, &f.a);
    let d: Vec<(usize, &str)> = all
        .iter()
        .map(|d| (d.line + 1, d.message.as_str()))
        .collect();
    assert_eq!(
        d,
        [
            (
                2,
                "Codex record type \"session_meta\" in a Claude Code transcript (1 line): not read; \
                 shown in the verbose view only"
            ),
            (
                3,
                "Codex record type \"response_item\" in a Claude Code transcript (2 lines): not \
                 read; shown in the verbose view only"
            ),
        ]
    );
    // The Claude Code turn around them reads as before.
    assert_eq!(f.a.turns.len(), 1);
}

/// Two forks of one parent in one file (`codex-two-forks.jsonl`, issue 20): the parent's
/// rollout (lines 1–16), its first fork (17–48: replay 18–33, two turns of its own) and a
/// second fork (49–71: replay 50–65, one turn of its own). Each replay is its own inherited
/// history, folded alone; the first fork's own turns between them are never folded away.
/// Before: one inherited range, lines 18–65, over the first fork's turns 3 and 4.
#[test]
fn two_forks_in_one_file_are_two_inherited_histories() {
    use transcript_ls::ide::folding::{FoldKind, document_folds, inherited_label};
    let f = load_with("rules/codex-two-forks.jsonl", &opts(true));
    let lines = inherited_lines(&f);
    assert_eq!(lines, (18..=33).chain(50..=65).collect::<Vec<_>>());
    let ranges: Vec<(usize, usize, String)> =
        f.a.inherited
            .iter()
            .map(|h| (h.start_line + 1, h.end_line + 1, inherited_label(h)))
            .collect();
    let parent = "inherited from 019e5000-0000-7000-8000-00000000a001 (2 turns)";
    assert_eq!(
        ranges,
        [(18, 33, parent.to_string()), (50, 65, parent.to_string())]
    );
    let folds: Vec<(usize, usize)> = document_folds(&f.a)
        .iter()
        .filter(|d| d.kind == FoldKind::Inherited)
        .map(|d| (d.start_line + 1, d.end_line + 1))
        .collect();
    assert_eq!(folds, [(18, 33), (50, 65)]);
    assert_eq!(f.a.turn_count, 5);
    let u = f.a.usage;
    // 30 (parent) + 31 (fork 1's own) + 9 (fork 2's own).
    assert_eq!(u.output, 70);
    // Read and analysed as the file grows, line by line (`analysis::resume`): the same two
    // histories at the end, and at each step the same as analysing that prefix whole.
    let text = f.src.clone();
    let mut reader = transcript_ls::formats::Reader::new();
    let mut state = None;
    let mut grown = 0;
    for line in text.split_inclusive('\n') {
        grown += line.len();
        let upto = &text[..grown];
        reader.feed(upto);
        let (mut t, lent) = reader.lend();
        let revised = t.take_revised();
        let (a, c) = match state.take() {
            Some((a, c)) => transcript_ls::analysis::resume(a, c, revised, &t, upto, &opts(true)),
            None => transcript_ls::analysis::analyze_resumable(&t, upto, &opts(true)),
        };
        let whole = transcript_ls::analysis::analyze(&t, upto, &opts(true));
        assert_eq!(a.inherited, whole.inherited, "after {grown} bytes");
        state = Some((a, c));
        reader = lent.restore(t);
    }
    assert_eq!(state.unwrap().0.inherited, f.a.inherited);
}

/// The agent's recorded duration is the turn's duration (FORMATS.md: `system/turn_duration`,
/// "whole turn incl. tool execution"); the timestamps give an estimate until it comes. A live
/// view therefore shows 28 s, then 24 s once the record is appended (issue 23 item 9 asked
/// for the figure never to change; the agent's own figure is kept, on purpose).
#[test]
fn the_recorded_duration_replaces_the_estimate_when_it_comes() {
    let src = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/rules/late-turn-duration.jsonl"),
    )
    .unwrap();
    let two = &src[..src.match_indices('\n').nth(1).unwrap().0 + 1];
    let mut seen = Vec::new();
    for text in [two, &src[..]] {
        let t = formats::read(text);
        let a = analysis::analyze(&t, text, &opts(true));
        let d = a.turns[0].duration.as_ref().map(|d| (d.ms, d.source));
        seen.push((a.turns[0].state, d));
    }
    assert_eq!(
        seen,
        [
            (
                TurnState::Complete,
                Some((28_000, DurationSource::Timestamps))
            ),
            (
                TurnState::Complete,
                Some((24_000, DurationSource::Recorded))
            )
        ]
    );
}
