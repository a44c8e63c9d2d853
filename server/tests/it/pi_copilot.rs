//! Pi and GitHub Copilot CLI sessions (issue 10) through the real readers and analysis: our
//! fixtures in `fixtures/agents/` (exact values in `fixtures/agents/README.md`; line numbers
//! there are 1-based, here 0-based) and the corpus's real recordings, counted by hand.

use std::path::Path;

use transcript_ls::analysis::{self, Analysis, Options, TurnKind, TurnState};
use transcript_ls::formats::{self, Reader};
use transcript_ls::ide::folding::{self, FoldKind};
use transcript_ls::model::{BlockKind, Format, Role, StopReason, Transcript, Usage, WakeKind};

fn opts() -> Options {
    Options {
        time_zone: Some("UTC".into()),
        file_complete: true,
        ..Default::default()
    }
}

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/agents")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn load(name: &str) -> (String, Transcript, Analysis) {
    let src = fixture(name);
    let t = formats::read(&src);
    let a = analysis::analyze(&t, &src, &opts());
    (src, t, a)
}

fn answer_lines(t: &Transcript, a: &Analysis) -> Vec<Option<Vec<usize>>> {
    a.turns
        .iter()
        .filter(|x| x.kind != TurnKind::Preamble)
        .map(|x| {
            x.final_answer
                .as_ref()
                .map(|f| f.blocks.iter().map(|&(e, _)| t.entries[e].line).collect())
        })
        .collect()
}

// ---- Pi ------------------------------------------------------------------------------------

#[test]
fn pi_branching_keeps_the_abandoned_branch_out_of_the_figures() {
    let (_, t, a) = load("pi-branching.jsonl");
    assert_eq!(t.format(), Format::Pi);
    assert_eq!(t.meta.cwd.as_deref(), Some("/home/user/project"));
    assert_eq!(t.meta.title.as_deref(), Some("Rename foo to bar"));
    assert_eq!(t.meta.model.as_deref(), Some("claude-sonnet-4-5"));
    let abandoned: Vec<usize> = t
        .entries
        .iter()
        .filter(|e| e.abandoned)
        .map(|e| e.line)
        .collect();
    assert_eq!(abandoned, vec![6, 7, 8]);
    assert_eq!(a.turn_count, 2);
    let turns: Vec<(usize, &str, usize, usize)> = a
        .turns
        .iter()
        .map(|x| (x.n, x.title.as_str(), x.start_line, x.end_line))
        .collect();
    assert_eq!(
        turns,
        vec![
            (0, "", 0, 1),
            (1, "Rename foo to bar", 2, 8),
            (2, "Also update the docs, README only", 9, 11)
        ]
    );
    let t1 = &a.turns[1];
    assert_eq!(t1.tool_calls, 1);
    assert_eq!(t1.comments, 1);
    assert_eq!(t1.steps.len(), 2);
    assert_eq!(
        t1.usage,
        Usage {
            input: 220,
            output: 30,
            cache_read: 100,
            ..Usage::default()
        }
    );
    // 10:00:01 prompt → 10:00:06 answer; the abandoned branch (10:01–10:01:06) is not counted.
    assert_eq!(t1.duration.map(|d| d.ms), Some(5_000));
    assert_eq!(answer_lines(&t, &a), vec![Some(vec![5]), Some(vec![10])]);
    assert_eq!(a.steps.len(), 3);
    assert_eq!(
        a.usage,
        Usage {
            input: 280,
            output: 38,
            cache_read: 100,
            ..Usage::default()
        }
    );
    assert_eq!(a.cost_usd.map(|c| (c * 1e6).round() as i64), Some(3_500));
    assert_eq!(a.branches.len(), 1);
    let b = &a.branches[0];
    assert_eq!((b.start_line, b.end_line, b.entries.len()), (6, 8, 3));
    assert_eq!(b.title, "Also update the docs");
    assert_eq!(b.responses, 1);
    assert_eq!(b.usage.output, 30);
    assert_eq!(b.turn, 1);
    assert_eq!(t1.branches, vec![0]);
    // Tool calls pair with their results by id, on the branch too.
    let pairs: Vec<(usize, Option<usize>)> = a
        .tool_pairs
        .iter()
        .map(|p| {
            (
                t.entries[p.use_entry].line,
                p.result_entry.map(|r| t.entries[r].line),
            )
        })
        .collect();
    assert_eq!(pairs, vec![(3, Some(4)), (7, Some(8))]);
    let folds = folding::raw_folds(&t, &a);
    let branch: Vec<(usize, usize, &str)> = folds
        .iter()
        .filter(|f| f.kind == FoldKind::AbandonedBranch)
        .map(|f| (f.start_line, f.end_line, f.label.as_str()))
        .collect();
    assert_eq!(branch, vec![(6, 8, "abandoned branch · 3 entries")]);
}

#[test]
fn pi_steps_carry_usage_cost_and_stop_reasons() {
    let (_, t, _) = load("pi-branching.jsonl");
    let e = &t.entries[3];
    assert_eq!(e.role, Role::Model);
    let step = e.step.as_ref().unwrap();
    assert_eq!(&*step.key, "pi-a3");
    assert_eq!(step.stop, Some(StopReason::ToolUse));
    assert_eq!(step.cost_usd, Some(0.001));
    assert_eq!(
        step.usage,
        Some(Usage {
            input: 100,
            output: 20,
            ..Usage::default()
        })
    );
    let kinds: Vec<&str> = e
        .blocks
        .iter()
        .map(|b| match &b.kind {
            BlockKind::Text { .. } => "text",
            BlockKind::ToolUse(u) => {
                assert_eq!(
                    (&*u.id, &*u.name, u.summary.as_str()),
                    ("call-1", "bash", "grep -rn foo src")
                );
                "toolCall"
            }
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, vec!["text", "toolCall"]);
    match &t.entries[8].blocks[0].kind {
        BlockKind::ToolResult(r) => {
            assert_eq!(&*r.tool_use_id, "call-2");
            assert!(r.is_error);
            assert_eq!(r.summary, "permission denied");
        }
        k => panic!("{k:?}"),
    }
    assert_eq!(
        t.entries[5].step.as_ref().unwrap().stop,
        Some(StopReason::EndTurn)
    );
}

/// Live append: the branch flags follow the current leaf as lines arrive, both ways.
#[test]
fn pi_branch_switches_while_the_file_grows() {
    let src = fixture("pi-branching.jsonl");
    let lines: Vec<&str> = src.split_inclusive('\n').collect();
    let mut reader = Reader::new();
    let upto = |n: usize| lines[..n].concat();
    let flags = |r: &Reader| -> Vec<usize> {
        r.transcript()
            .entries
            .iter()
            .filter(|e| e.abandoned)
            .map(|e| e.line)
            .collect()
    };
    reader.feed(&upto(9));
    assert_eq!(flags(&reader), Vec::<usize>::new());
    let a = analysis::analyze(reader.transcript(), &upto(9), &opts());
    assert_eq!(a.turns[2].title, "Also update the docs");
    reader.feed(&upto(12));
    assert_eq!(flags(&reader), vec![6, 7, 8]);
    // The session goes back to the first attempt: a new entry under a8.
    let back = format!(
        "{}{}\n",
        upto(12),
        r#"{"type":"message","id":"c1","parentId":"a8","timestamp":"2026-05-01T10:03:00.000Z","message":{"role":"user","content":[{"type":"text","text":"Retry with sudo"}]}}"#
    );
    reader.feed(&back);
    assert_eq!(flags(&reader), vec![9, 10, 11]);
    let a = analysis::analyze(reader.transcript(), &back, &opts());
    let titles: Vec<&str> = a.turns.iter().map(|x| x.title.as_str()).collect();
    assert_eq!(
        titles,
        vec![
            "",
            "Rename foo to bar",
            "Also update the docs",
            "Retry with sudo"
        ]
    );
    assert_eq!(a.branches.len(), 1);
    assert_eq!(a.branches[0].title, "Also update the docs, README only");
}

/// An unknown parentId continues the previous entry (a hint, nothing abandoned); ids that
/// point at themselves never loop.
#[test]
fn pi_unknown_and_self_parents_are_safe() {
    let src = concat!(
        r#"{"type":"session","version":3,"id":"s","timestamp":"2026-05-01T10:00:00Z","cwd":"/w"}"#,
        "\n",
        r#"{"type":"message","id":"x1","parentId":"nope","timestamp":"2026-05-01T10:00:01Z","message":{"role":"user","content":"hi"}}"#,
        "\n",
        r#"{"type":"message","id":"x2","parentId":"x2","timestamp":"2026-05-01T10:00:02Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"stopReason":"stop"}}"#,
        "\n",
    );
    let t = formats::read(src);
    assert_eq!(t.format(), Format::Pi);
    assert!(t.entries.iter().all(|e| !e.abandoned));
    assert_eq!(t.problems.len(), 2);
    assert!(
        t.problems[0]
            .message
            .contains("parent entry `nope` not found")
    );
    let a = analysis::analyze(&t, src, &opts());
    assert_eq!(answer_lines(&t, &a), vec![Some(vec![2])]);
}

#[test]
fn pi_compaction_is_a_divider_with_tokens_before() {
    let (_, t, a) = load("pi-compaction.jsonl");
    assert_eq!(a.compactions.len(), 1);
    let c = &a.compactions[0];
    assert_eq!((c.start_line, c.end_line), (3, 3));
    assert_eq!(c.pre_tokens, Some(5050));
    assert_eq!(a.turns[1].compactions, vec![0]);
    assert_eq!(answer_lines(&t, &a), vec![Some(vec![2]), Some(vec![5])]);
    // Thinking then the answer in one message; the user's `!ls` is a local command.
    assert!(matches!(
        t.entries[5].blocks[0].kind,
        BlockKind::Thinking {
            encrypted: false,
            ..
        }
    ));
    assert_eq!(t.entries[6].role, Role::LocalCommand);
    assert_eq!(t.entries[7].role, Role::Meta);
    assert_eq!(a.usage.output, 90);
}

// ---- Copilot CLI --------------------------------------------------------------------------

#[test]
fn copilot_declared_final_answer_wins_over_the_heuristic() {
    let (_, t, a) = load("copilot-final-answer.jsonl");
    assert_eq!(t.format(), Format::CopilotCli);
    assert_eq!(t.meta.version.as_deref(), Some("1.0.80"));
    assert_eq!(t.meta.git_branch.as_deref(), Some("main"));
    assert_eq!(t.meta.cwd.as_deref(), Some("/home/user/project"));
    assert_eq!(a.turn_count, 1);
    let turn = &a.turns[1];
    assert_eq!(turn.title, "Why does the build fail?");
    // The heuristic would take lines 10 and 11 (trailing prose); line 10 declares itself.
    assert_eq!(answer_lines(&t, &a), vec![Some(vec![9])]);
    assert_eq!(turn.comments, 2);
    assert_eq!(turn.tool_calls, 1);
    assert_eq!(turn.state, TurnState::Complete);
    assert!(t.entries[9].step.as_ref().unwrap().declares_final);
    // The same file with the declaration removed: the heuristic takes both messages.
    let src = fixture("copilot-final-answer.jsonl")
        .replace(r#""phase":"final_answer""#, r#""phase":"commentary""#);
    let t2 = formats::read(&src);
    let a2 = analysis::analyze(&t2, &src, &opts());
    assert_eq!(answer_lines(&t2, &a2), vec![Some(vec![9, 10])]);
}

#[test]
fn copilot_tools_pair_and_usage_is_counted_once() {
    let (_, t, a) = load("copilot-final-answer.jsonl");
    let pairs: Vec<(usize, Option<usize>)> = a
        .tool_pairs
        .iter()
        .map(|p| {
            (
                t.entries[p.use_entry].line,
                p.result_entry.map(|r| t.entries[r].line),
            )
        })
        .collect();
    assert_eq!(pairs, vec![(4, Some(6))]);
    match &t.entries[4].blocks[1].kind {
        BlockKind::ToolUse(u) => {
            assert_eq!(
                (&*u.id, &*u.name, u.summary.as_str()),
                ("call-1", "bash", "make 2>&1 | tail -5")
            );
        }
        k => panic!("{k:?}"),
    }
    match &t.entries[6].blocks[0].kind {
        BlockKind::ToolResult(r) => {
            assert!(!r.is_error);
            assert_eq!(r.summary, "ld: cannot find -lssl");
        }
        k => panic!("{k:?}"),
    }
    // Two rounds: 40 output tokens, then 30 + 20 in one round.
    let outputs: Vec<u64> = a.steps.iter().map(|s| s.usage.output).collect();
    assert_eq!(outputs, vec![40, 50]);
    assert_eq!(a.turns[1].usage.output, 90);
    // The session's usage is shutdown.modelMetrics: 1500 input of which 1000 cached.
    assert_eq!(
        a.usage,
        Usage {
            input: 500,
            output: 90,
            cache_read: 1000,
            reasoning: 20,
            ..Usage::default()
        }
    );
    assert_eq!(t.meta.recorded_usage.len(), 1);
    assert_eq!(t.meta.recorded_usage[0].model, "gpt-5");
    assert_eq!(t.meta.recorded_usage[0].requests, Some(2));
    // Reasoning text is a thinking block before the answer's text.
    assert!(matches!(
        t.entries[9].blocks[0].kind,
        BlockKind::Thinking { .. }
    ));
}

#[test]
fn copilot_subagents_continuations_and_aborts() {
    let (_, t, a) = load("copilot-subagent.jsonl");
    assert_eq!(a.turn_count, 2);
    assert_eq!(a.turns[2].kind, TurnKind::Wake);
    assert_eq!(t.entries[15].role, Role::Wake(WakeKind::Continuation));
    assert_eq!(a.turns[2].title, "automatic continuation");
    let sidechain: Vec<usize> = t
        .entries
        .iter()
        .filter(|e| e.sidechain)
        .map(|e| e.line)
        .collect();
    assert_eq!(sidechain, vec![5, 6, 7, 8]);
    assert_eq!(a.subagent_calls.len(), 1);
    let c = &a.subagent_calls[0];
    assert_eq!(t.entries[c.entry].line, 3);
    assert_eq!(c.agent_id.as_deref(), Some("call-task"));
    assert_eq!(c.description.as_deref(), Some("Audit auth"));
    assert_eq!(c.agent_type.as_deref(), Some("explore"));
    assert_eq!(
        c.sidechain_entries
            .iter()
            .map(|&e| t.entries[e].line)
            .collect::<Vec<_>>(),
        vec![5, 6, 7, 8]
    );
    assert_eq!(
        (c.tool_uses, c.total_tokens, c.duration_ms),
        (Some(1), Some(900), Some(4000))
    );
    assert_eq!(a.turns[1].tool_calls, 1);
    assert_eq!(answer_lines(&t, &a), vec![Some(vec![13]), Some(vec![17])]);
    assert_eq!(t.entries[19].role, Role::Interruption);
    // No shutdown: the session's usage is the steps' output counts (main and sub-agent).
    assert_eq!(a.usage.output, 25 + 10 + 12 + 20 + 6);
    assert_eq!(a.turns[1].usage.output, 45);
    assert_eq!(
        a.turns[1].sidechain_usage.as_ref().map(|u| u.output),
        Some(22)
    );
}

// ---- the corpus (checked by hand against the raw lines) ------------------------------------

fn corpus(rel: &str) -> (String, Transcript, Analysis) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus/ingo-eichhorst__Irrlicht/replaydata/agents")
        .join(rel);
    let mut path = dir.clone();
    for _ in 0..3 {
        let next = std::fs::read_dir(&path)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.is_dir() || p.extension().is_some_and(|x| x == "jsonl"))
            .unwrap();
        path = next;
        if path.is_file() {
            break;
        }
    }
    if path.is_dir() {
        path = path.join("transcript.jsonl");
    }
    let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let t = formats::read(&src);
    let a = analysis::analyze(&t, &src, &opts());
    (src, t, a)
}

/// Irrlicht's Pi session: 614 lines, v3 tree, two branch points. Counted with jq over the raw
/// lines on the path from the last entry to the root: 35 user messages, 250 assistant
/// messages (215 `toolUse`, 32 `stop`, 3 `aborted`), 228 toolCall blocks, usage input 868,848 /
/// output 77,380 / cacheRead 25,835,520, cost $7.12502; off the path: lines 399–416 (18) and
/// 543–610 (68), 43 assistant messages with 5,103 output tokens.
#[test]
fn corpus_pi_session() {
    let (_, t, a) = corpus("pi/regressions/01-example-session");
    assert_eq!(t.format(), Format::Pi);
    assert_eq!(t.line_count, 614);
    assert_eq!(a.turn_count, 35);
    assert_eq!(a.steps.len(), 250);
    let calls: u32 = a.turns.iter().map(|x| x.tool_calls).sum();
    assert_eq!(calls, 228);
    assert_eq!(
        a.usage,
        Usage {
            input: 868_848,
            output: 77_380,
            cache_read: 25_835_520,
            ..Usage::default()
        }
    );
    assert_eq!(a.cost_usd.map(|c| (c * 1e5).round() as i64), Some(712_502));
    let branches: Vec<(usize, usize, usize)> = a
        .branches
        .iter()
        .map(|b| (b.start_line + 1, b.end_line + 1, b.responses))
        .collect();
    assert_eq!(branches, vec![(399, 416, 9), (543, 610, 34)]);
    assert_eq!(
        a.branches.iter().map(|b| b.usage.output).sum::<u64>(),
        5_103
    );
    let answers = a.turns.iter().filter(|x| x.final_answer.is_some()).count();
    assert_eq!(answers, 32);
    let replyless: Vec<usize> = a
        .turns
        .iter()
        .filter(|x| x.state == TurnState::Replyless)
        .map(|x| x.n)
        .collect();
    assert_eq!(replyless, vec![13, 15, 35]);
    assert_eq!(a.compactions.len(), 2);
    assert_eq!(
        a.compactions
            .iter()
            .map(|c| c.pre_tokens)
            .collect::<Vec<_>>(),
        vec![Some(8_408), Some(271_436)]
    );
}

/// Irrlicht's Copilot session-resume recording: 20 events written twice (lines 21–40 repeat
/// lines 1–20 byte for byte). 2 prompts, 2 answers ("ok", "again"), no tools; the last
/// shutdown's modelMetrics (cumulative over the resume): claude-haiku-4.5 12,612 input (0
/// cache read, 12,602 cache write) / 35 output, gpt-5-mini 10,813 input (1,536 cache read) /
/// 88 output.
#[test]
fn corpus_copilot_session_resume() {
    let (_, t, a) = corpus("copilot/scenarios/1-4_session-resume");
    assert_eq!(t.format(), Format::CopilotCli);
    assert_eq!(a.turn_count, 2);
    assert_eq!(answer_lines(&t, &a), vec![Some(vec![7]), Some(vec![16])]);
    let messages: Vec<(usize, &str)> = t
        .problems
        .iter()
        .map(|p| (p.line, p.message.as_str()))
        .collect();
    assert_eq!(
        messages,
        vec![(
            20,
            "lines 21–40 repeat the events of lines 1–20 (same ids, same content); read once"
        )]
    );
    let repeated = t
        .entries
        .iter()
        .filter(|e| e.record_type.ends_with("(repeat)"))
        .count();
    assert_eq!(repeated, 20);
    assert_eq!(
        a.usage,
        Usage {
            input: 10 + 9_277,
            output: 35 + 88,
            cache_creation: 12_602,
            cache_read: 1_536,
            reasoning: 28 + 64,
        }
    );
    assert_eq!(a.steps.len(), 2);
}

/// Irrlicht's Copilot autopilot recording: 1 typed prompt, then 5 autopilot continuations
/// (empty `content`); 12 assistant messages (6 with one bash toolRequest, 6 answers), 6
/// tool.execution_complete; modelMetrics gpt-5-mini 155,982 input (118,400 cache read) /
/// 5,798 output = the sum of the 12 outputTokens.
#[test]
fn corpus_copilot_autopilot() {
    let (_, t, a) = corpus("copilot/scenarios/2-8_autonomous-loop-iteration-limit");
    assert_eq!(a.turn_count, 6);
    let kinds: Vec<TurnKind> = a.turns.iter().skip(1).map(|x| x.kind).collect();
    assert_eq!(
        kinds,
        vec![
            TurnKind::Prompt,
            TurnKind::Wake,
            TurnKind::Wake,
            TurnKind::Wake,
            TurnKind::Wake,
            TurnKind::Wake
        ]
    );
    assert_eq!(a.turns.iter().map(|x| x.tool_calls).sum::<u32>(), 6);
    assert_eq!(
        a.tool_pairs
            .iter()
            .filter(|p| p.result_entry.is_some())
            .count(),
        6
    );
    assert_eq!(
        a.turns.iter().filter(|x| x.final_answer.is_some()).count(),
        6
    );
    assert_eq!(a.steps.len(), 12);
    assert_eq!(a.steps.iter().map(|s| s.usage.output).sum::<u64>(), 5_798);
    assert_eq!(
        a.usage,
        Usage {
            input: 37_582,
            output: 5_798,
            cache_read: 118_400,
            reasoning: 4_544,
            ..Usage::default()
        }
    );
    assert!(t.problems.is_empty());
}

/// A shutdown whose modelMetrics carry no token counts (only `requests`) does not replace the
/// steps' counts with zeros.
#[test]
fn copilot_shutdown_without_usage_keeps_the_step_counts() {
    let src = fixture("copilot-final-answer.jsonl");
    let last = src.lines().last().unwrap();
    let stripped = src.replace(
        last,
        r#"{"type":"session.shutdown","data":{"modelMetrics":{"gpt-5":{"requests":2}}},"id":"e13","timestamp":"2026-06-02T08:00:20.000Z","parentId":"e12"}"#,
    );
    let t = formats::read(&stripped);
    let a = analysis::analyze(&t, &stripped, &opts());
    assert!(t.meta.recorded_usage.is_empty());
    assert_eq!(
        a.usage,
        Usage {
            output: 90,
            ..Usage::default()
        }
    );
}

/// Hover shows what the reader put in the model: the transformed prompt, cost, the declared
/// answer, the abandoned branch.
#[test]
fn hover_shows_format_facts() {
    use transcript_ls::ide::{hover, lookup::Lookup};
    let (src, t, a) = load("copilot-final-answer.jsonl");
    let lk = Lookup::new(&t, &a);
    let h = hover::entry_hover(&t, &a, &lk, &src, 2, None, Some("UTC")).unwrap();
    assert!(h.contains("*block of type `transformedContent`*"), "{h}");
    assert!(
        h.contains("> <current_datetime>2026-06-02T10:00:02+02:00</current_datetime>"),
        "{h}"
    );
    let h = hover::entry_hover(&t, &a, &lk, &src, 9, None, Some("UTC")).unwrap();
    assert!(h.contains("declared as the final answer"), "{h}");
    let (src, t, a) = load("pi-branching.jsonl");
    let lk = Lookup::new(&t, &a);
    let h = hover::entry_hover(&t, &a, &lk, &src, 3, None, Some("UTC")).unwrap();
    assert!(h.contains("· $0.0010"), "{h}");
    let h = hover::entry_hover(&t, &a, &lk, &src, 7, None, Some("UTC")).unwrap();
    assert!(h.contains("on an abandoned branch (not counted)"), "{h}");
}

/// Two branches written alternately, line by line (every line switches branch): read in one
/// pass (flags settled once per batch, never per line), the branch of the last line is active.
#[test]
fn pi_alternating_branches_stay_linear() {
    let n = 40_000;
    let mut src = String::from(
        "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"2026-05-01T10:00:00Z\",\"cwd\":\"/w\"}\n",
    );
    src.push_str("{\"type\":\"model_change\",\"id\":\"r\",\"parentId\":null,\"timestamp\":\"2026-05-01T10:00:00Z\",\"modelId\":\"m\"}\n");
    for k in 1..=n {
        let parent = if k <= 2 {
            "r".to_string()
        } else {
            format!("e{}", k - 2)
        };
        src.push_str(&format!(
            "{{\"type\":\"label\",\"id\":\"e{k}\",\"parentId\":\"{parent}\",\"timestamp\":\"2026-05-01T10:00:00Z\"}}\n"
        ));
    }
    let t = formats::read(&src);
    assert_eq!(t.entries.len(), n + 2);
    let abandoned = t.entries.iter().filter(|e| e.abandoned).count();
    assert_eq!(abandoned, n / 2);
    // The odd chain (e1, e3, …) is the abandoned one: the last line is e40000.
    assert!(t.entries[2].abandoned && !t.entries[3].abandoned);
}

/// The prompt as the model saw it (`transformedContent`) is the prompt's hover, never a
/// `[transformedContent block]` line under the prompt, quiet or verbose (issue 20 item 6:
/// printed in 37 of 37 held-out Copilot views); the typed prompt is shown once.
#[test]
fn copilot_view_shows_the_typed_prompt_without_the_transformed_copy() {
    use transcript_ls::view::{self, ViewOptions};
    let (src, t, a) = load("copilot-final-answer.jsonl");
    for verbose in [false, true] {
        let v = view::render(&t, &a, &src, &ViewOptions { verbose });
        assert!(
            !v.text.contains("transformedContent"),
            "verbose {verbose}:\n{}",
            v.text
        );
        assert!(!v.text.contains("<current_datetime>"), "{}", v.text);
        let prompts: Vec<&str> = v.text.lines().filter(|l| l.starts_with("> ")).collect();
        assert_eq!(prompts.len(), 1, "verbose {verbose}: {prompts:?}");
    }
}

/// `copilot-autopilot.jsonl` (fixtures/agents/README.md): a sub-agent's task sent by the
/// agent (`source: "agent-…"`) is context, never a `↪ queued` prompt; the autopilot's
/// `session.task_complete {summary}` is the last turn's answer, so the turn is complete, not
/// "no reply" (issue 20 item 6).
#[test]
fn copilot_agent_sent_task_is_context_and_task_complete_summary_is_the_answer() {
    use transcript_ls::view::{self, ViewOptions};
    let (src, t, a) = load("copilot-autopilot.jsonl");
    // Line 5 (index 4): the sub-agent's task.
    assert_eq!(t.entries[4].role, Role::Context);
    let kinds: Vec<TurnKind> = a.turns.iter().map(|x| x.kind).collect();
    assert_eq!(
        kinds,
        vec![TurnKind::Preamble, TurnKind::Prompt, TurnKind::Wake]
    );
    assert!(a.turns.iter().all(|x| x.steering.is_empty()));
    assert_eq!(a.turns[1].tool_calls, 1);
    assert_eq!(a.turns[2].tool_calls, 1);
    assert_eq!(answer_lines(&t, &a), vec![None, Some(vec![12])]);
    assert_eq!(a.turns[2].state, TurnState::Complete);
    let quiet = view::render(&t, &a, &src, &ViewOptions { verbose: false }).text;
    assert!(!quiet.contains("queued"), "{quiet}");
    assert!(
        quiet.contains("The auth module lacks rate limiting on login."),
        "{quiet}"
    );
}

/// Pi's first format (late 2025; issue 20 item 4): a `session` header without `version`,
/// entries without `id`/`parentId`, read as one linear session. The shared corpus's
/// `badlogic__pi-mono` file, counted with a script over the raw lines: 88 user messages, 453
/// assistant messages, 391 toolCall blocks, usage input 1,049 / output 83,156; every entry on
/// the active branch. Before: refused as "not a transcript".
#[test]
fn corpus_pi_v1_session_is_read_linear() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus/badlogic__pi-mono/packages/coding-agent/test/fixtures/large-session.jsonl");
    let src = std::fs::read_to_string(&path).unwrap();
    let t = formats::read(&src);
    let a = analysis::analyze(&t, &src, &opts());
    assert_eq!(t.format(), Format::Pi);
    assert_eq!(t.line_count, 1019);
    assert!(t.entries.iter().all(|e| !e.abandoned));
    assert_eq!(a.turn_count, 88);
    assert_eq!(a.steps.len(), 453);
    let calls: u32 = a.turns.iter().map(|x| x.tool_calls).sum();
    assert_eq!(calls, 391);
    assert_eq!((a.usage.input, a.usage.output), (1_049, 83_156));
}
