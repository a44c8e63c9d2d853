//! Analysis stays linear on big models (DESIGN.md §6): many turns, and one huge turn. Exact
//! counts are asserted; the elapsed time is printed (`--nocapture`) but not asserted, since
//! the machine is shared.

use std::time::Instant;

use transcript_ls::analysis::{self, Options, RunKind, TurnState};
use transcript_ls::model::{
    Block, BlockKind, Entry, PromptKind, Role, StepInfo, StopReason, Str, ToolResult, ToolUse,
    Transcript, Usage,
};

/// Appends an entry whose single block is a JSON string literal holding `text`.
fn push(src: &mut String, entries: &mut Vec<Entry>, role: Role, kind: u8, text: &str) -> usize {
    let i = entries.len();
    let start = src.len();
    src.push_str("{\"b\":");
    let bstart = src.len();
    src.push('"');
    src.push_str(text);
    src.push('"');
    let bend = src.len();
    src.push('}');
    let end = src.len();
    src.push('\n');
    let raw = Str {
        raw: bstart + 1..bend - 1,
    };
    let id = format!("t{}", i - if kind == 3 { 1 } else { 0 });
    let kind = match kind {
        0 => BlockKind::Text { text: raw },
        1 => BlockKind::Thinking {
            text: raw,
            encrypted: false,
        },
        2 => BlockKind::ToolUse(Box::new(ToolUse {
            id: id.into(),
            name: "Bash".into(),
            input: bstart..bend,
            summary: String::new(),
            subagent: None,
        })),
        _ => BlockKind::ToolResult(Box::new(ToolResult {
            tool_use_id: id.into(),
            is_error: false,
            content: bstart..bend,
            content_len: bend - bstart,
            summary: String::new(),
            images: Vec::new(),
            subagent: None,
        })),
    };
    let mut e = Entry::new(i, start..end, role, "x");
    e.set_session_id(Some("S".into()));
    e.set_timestamp_ms(Some(1_776_500_000_000 + i as i64 * 1000));
    e.blocks.push(Block {
        span: bstart..bend,
        kind,
    });
    entries.push(e);
    i
}

fn step(e: &mut Entry, key: String, end: bool) {
    e.step = Some(Box::new(StepInfo {
        key: key.into(),
        usage: Some(Usage {
            output: 50,
            ..Default::default()
        }),
        stop: end.then_some(StopReason::EndTurn),
        ..Default::default()
    }));
}

/// `turns` turns of `steps` tool round-trips each, then a text answer.
fn build(turns: usize, steps: usize) -> (String, Transcript) {
    let mut src = String::new();
    let mut entries = Vec::new();
    let mut k = 0;
    for t in 0..turns {
        push(
            &mut src,
            &mut entries,
            Role::Prompt(PromptKind::Typed),
            0,
            &format!("prompt {t}\\nwith a second line"),
        );
        for _ in 0..steps {
            k += 1;
            let i = push(&mut src, &mut entries, Role::Model, 1, "thinking about it");
            step(&mut entries[i], format!("m{k}"), false);
            let i = push(&mut src, &mut entries, Role::Model, 2, "cargo test");
            step(&mut entries[i], format!("m{k}"), false);
            push(
                &mut src,
                &mut entries,
                Role::ToolResults,
                3,
                "ok \\u001b[1m",
            );
        }
        k += 1;
        let i = push(
            &mut src,
            &mut entries,
            Role::Model,
            0,
            "All done.\\n[DEV-PIPELINE | GATE 3 | AUTO: OK]",
        );
        step(&mut entries[i], format!("m{k}"), true);
    }
    let t = Transcript {
        line_count: entries.len(),
        entries,
        ..Default::default()
    };
    (src, t)
}

#[test]
fn many_turns_and_one_huge_turn_stay_linear() {
    for (turns, steps) in [(10_000, 3), (1, 30_000)] {
        let (src, t) = build(turns, steps);
        let started = Instant::now();
        let a = analysis::analyze(&t, &src, &Options::default());
        let ms = started.elapsed().as_millis();
        println!(
            "{turns} turns x {steps} steps: {} entries, {} bytes, analyze {ms} ms ({})",
            t.entries.len(),
            src.len(),
            if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            }
        );
        assert_eq!(a.turn_count, turns);
        assert_eq!(a.steps.len(), turns * (steps + 1));
        assert_eq!(a.gates.len(), turns);
        assert_eq!(a.tool_pairs.len(), turns * steps);
        assert!(
            a.tool_pairs
                .iter()
                .all(|p| p.result_entry == Some(p.use_entry + 1))
        );
        assert_eq!(a.usage.output, (turns * (steps + 1) * 50) as u64);
        let last = a.turns.last().unwrap();
        assert_eq!(last.state, TurnState::Complete);
        assert_eq!(last.tool_calls as usize, steps);
        assert_eq!(last.runs.len(), 2);
        assert_eq!(last.runs[0].kind, RunKind::Work);
        assert_eq!(last.runs[0].steps as usize, steps);
        assert_eq!(last.final_answer.as_ref().unwrap().blocks.len(), 1);
    }
}

/// Read + analysis of the synthetic Claude Code session of `testing::synth_claude_transcript`
/// (4 MB by default; `TRANSCRIPT_LS_ANALYSIS_MB=100` with `--release` for the DESIGN.md §6
/// figure). Every synthetic turn ends with an `end_turn` answer and a `turn_duration`.
#[test]
fn synthetic_session_analyses_fully() {
    let mb: usize = std::env::var("TRANSCRIPT_LS_ANALYSIS_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4);
    let src = transcript_ls::testing::synth_claude_transcript(mb << 20, 7);
    let started = Instant::now();
    let t = transcript_ls::formats::read(&src);
    let read_ms = started.elapsed().as_millis();
    let started = Instant::now();
    let a = analysis::analyze(&t, &src, &Options::default());
    let analyze_ms = started.elapsed().as_millis();
    println!(
        "{} bytes, {} entries, {} turns: read {read_ms} ms, analyze {analyze_ms} ms",
        src.len(),
        t.entries.len(),
        a.turn_count
    );
    assert!(a.turn_count > 0);
    for turn in a
        .turns
        .iter()
        .filter(|t| t.kind != analysis::TurnKind::Preamble)
    {
        assert_eq!(turn.state, TurnState::Complete, "turn {}", turn.n);
        assert!(turn.final_answer.is_some(), "turn {}", turn.n);
        assert!(turn.duration.is_some(), "turn {}", turn.n);
    }
    let results = t
        .entries
        .iter()
        .flat_map(|e| &e.blocks)
        .filter(|b| matches!(b.kind, BlockKind::ToolResult(_)))
        .count();
    assert_eq!(a.tool_pairs.len(), results);
    assert!(a.tool_pairs.iter().all(|p| p.result_entry.is_some()));
}

/// Crafted inputs that would be quadratic with a naive implementation: a 0.7 MB line of gate
/// openers without `]`, 30 000 gates on one line, 20 000 sub-agent calls with anonymous
/// sidechain records, 20 000 unmatched calls sharing one id.
#[test]
fn crafted_inputs_stay_linear() {
    let mut src = String::new();
    let mut entries = Vec::new();
    push(
        &mut src,
        &mut entries,
        Role::Prompt(PromptKind::Typed),
        0,
        "go",
    );
    let openers = "[DEV-PIPELINE | GATE 1 ".repeat(30_000);
    push(&mut src, &mut entries, Role::Model, 0, &openers);
    let gates = "[DEV-PIPELINE | GATE 6 | M: NOT-READY] ".repeat(30_000);
    push(&mut src, &mut entries, Role::Model, 0, &gates);
    let started = Instant::now();
    let a = analysis::analyze(
        &Transcript {
            entries: entries.clone(),
            ..Default::default()
        },
        &src,
        &Options::default(),
    );
    println!("gate lines: {} ms", started.elapsed().as_millis());
    assert_eq!(a.gates.len(), 30_000);
    assert_eq!(
        a.gates[0].verdict,
        analysis::Verdict::Blocked {
            reason: String::new()
        }
    );

    // Sub-agent calls (all open: no results) and anonymous sidechain roots that match none.
    let mut src = String::new();
    let mut entries = Vec::new();
    push(
        &mut src,
        &mut entries,
        Role::Prompt(PromptKind::Typed),
        0,
        "go",
    );
    for _ in 0..20_000 {
        let i = push(&mut src, &mut entries, Role::Model, 2, "{}");
        if let BlockKind::ToolUse(u) = &mut entries[i].blocks[0].kind {
            u.name = "Task".into();
            u.subagent = Some(Default::default());
            u.id = "same".into();
        }
    }
    for k in 0..20_000 {
        let i = push(
            &mut src,
            &mut entries,
            Role::Prompt(PromptKind::Typed),
            0,
            "x",
        );
        entries[i].sidechain = true;
        entries[i].set_agent_id((k % 2 == 0).then(|| format!("agent{k}").into()));
    }
    for _ in 0..20_000 {
        let i = push(&mut src, &mut entries, Role::ToolResults, 3, "r");
        entries[i].set_session_id(Some("OTHER".into()));
        if let BlockKind::ToolResult(r) = &mut entries[i].blocks[0].kind {
            r.tool_use_id = "same".into();
        }
    }
    let t = Transcript {
        entries,
        ..Default::default()
    };
    let started = Instant::now();
    let a = analysis::analyze(&t, &src, &Options::default());
    println!("sub-agent calls: {} ms", started.elapsed().as_millis());
    assert_eq!(a.subagent_calls.len(), 20_000);
    assert!(a.tool_pairs.iter().all(|p| p.result_entry.is_none()));
    // The 10 000 named agents go to the first 10 000 calls, in order (fallback 2).
    assert_eq!(a.subagent_calls[1].agent_id.as_deref(), Some("agent2"));
    assert_eq!(
        a.subagent_calls[9_999].agent_id.as_deref(),
        Some("agent19998")
    );
    assert_eq!(a.subagent_calls[10_000].agent_id, None);
    assert_eq!(a.turn_count, 1);
}
