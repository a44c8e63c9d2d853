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
        2 => BlockKind::ToolUse(ToolUse {
            id: id.into(),
            name: "Bash".into(),
            input: bstart..bend,
            summary: String::new(),
            subagent: None,
        }),
        _ => BlockKind::ToolResult(ToolResult {
            tool_use_id: id.into(),
            is_error: false,
            content: bstart..bend,
            content_len: bend - bstart,
            summary: String::new(),
            images: Vec::new(),
            subagent: None,
        }),
    };
    let mut e = Entry::new(i, start..end, role, "x");
    e.session_id = Some("S".into());
    e.timestamp_ms = Some(1_776_500_000_000 + i as i64 * 1000);
    e.blocks.push(Block {
        span: bstart..bend,
        kind,
    });
    entries.push(e);
    i
}

fn step(e: &mut Entry, key: String, end: bool) {
    e.step = Some(StepInfo {
        key: key.into(),
        usage: Some(Usage {
            output: 50,
            ..Default::default()
        }),
        stop: end.then_some(StopReason::EndTurn),
        ..Default::default()
    });
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
    for (turns, steps) in [(20_000, 3), (1, 60_000)] {
        let (src, t) = build(turns, steps);
        let started = Instant::now();
        let a = analysis::analyze(&t, &src, &Options::default());
        let ms = started.elapsed().as_millis();
        println!(
            "{turns} turns x {steps} steps: {} entries, {} bytes, analyze {ms} ms (debug build)",
            t.entries.len(),
            src.len()
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
