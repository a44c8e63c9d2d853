//! One test per analysis rule (DESIGN.md §4, seeds 000–004, cases), with exact values.
//!
//! Transcripts are built by hand with [`B`]: every entry gets a real source line holding its
//! text blocks as JSON string literals, so `Str` spans decode exactly as they would from a
//! reader.

use transcript_ls::analysis::{
    self, Analysis, DurationSource, Options, RunKind, Throughput, TurnKind, TurnState, Verdict,
};
use transcript_ls::model::{
    Block, BlockKind, Entry, PromptKind, Role, SessionMeta, StepInfo, StopReason, Str,
    SubagentResult, SubagentSpawn, ToolResult, ToolUse, Transcript, Usage, WakeKind,
};

/// A block to write.
enum Bl<'a> {
    Text(&'a str),
    Think(&'a str),
    Tool(&'a str, &'a str),
    /// A `Task` call `(id, prompt)` whose input is `{"prompt": …}`.
    Task(&'a str, &'a str),
    Result(&'a str),
}

/// Transcript builder: one source line per entry.
#[derive(Default)]
struct B {
    src: String,
    entries: Vec<Entry>,
}

impl B {
    fn new() -> B {
        B::default()
    }

    /// Pushes an entry of `role` with `blocks`, in session `S`; returns its index.
    fn push(&mut self, role: Role, record_type: &str, blocks: &[Bl]) -> usize {
        let line = self.entries.len();
        let start = self.src.len();
        self.src
            .push_str(&format!("{{\"type\":\"{record_type}\",\"b\":["));
        let mut out = Vec::new();
        for (k, b) in blocks.iter().enumerate() {
            if k > 0 {
                self.src.push(',');
            }
            let lit = match b {
                Bl::Text(s) | Bl::Think(s) => serde_json::to_string(s).unwrap(),
                Bl::Tool(_, name) => serde_json::to_string(name).unwrap(),
                Bl::Task(_, prompt) => serde_json::json!({ "prompt": prompt }).to_string(),
                Bl::Result(id) => serde_json::to_string(id).unwrap(),
            };
            let bstart = self.src.len();
            self.src.push_str(&lit);
            let bend = self.src.len();
            let str_ = Str {
                raw: bstart + 1..bend - 1,
            };
            let kind = match b {
                Bl::Text(_) => BlockKind::Text { text: str_ },
                Bl::Think(_) => BlockKind::Thinking {
                    text: str_,
                    encrypted: false,
                },
                Bl::Tool(id, name) => BlockKind::ToolUse(Box::new(ToolUse {
                    id: (*id).into(),
                    name: (*name).into(),
                    input: bstart..bend,
                    summary: String::new(),
                    subagent: matches!(*name, "Task" | "Agent").then(SubagentSpawn::default),
                })),
                Bl::Task(id, _) => BlockKind::ToolUse(Box::new(ToolUse {
                    id: (*id).into(),
                    name: "Task".into(),
                    input: bstart..bend,
                    summary: String::new(),
                    subagent: Some(SubagentSpawn::default()),
                })),
                Bl::Result(id) => BlockKind::ToolResult(Box::new(ToolResult {
                    tool_use_id: (*id).into(),
                    is_error: false,
                    content: bstart..bend,
                    content_len: bend - bstart,
                    summary: String::new(),
                    images: Vec::new(),
                    subagent: None,
                })),
            };
            out.push(Block {
                span: bstart..bend,
                kind,
            });
        }
        self.src.push_str("]}");
        let end = self.src.len();
        self.src.push('\n');
        let mut e = Entry::new(line, start..end, role, record_type);
        e.set_session_id(Some("S".into()));
        e.blocks = out.into();
        self.entries.push(e);
        line
    }

    fn prompt(&mut self, text: &str) -> usize {
        self.push(Role::Prompt(PromptKind::Typed), "user", &[Bl::Text(text)])
    }
    fn wake(&mut self) -> usize {
        self.push(
            Role::Wake(WakeKind::TaskNotification),
            "user",
            &[Bl::Text("<task-notification>")],
        )
    }
    /// A model record of step `key`.
    fn model(&mut self, key: &str, block: Bl) -> usize {
        let i = self.push(Role::Model, "assistant", &[block]);
        self.entries[i].step = Some(Box::new(StepInfo {
            key: key.into(),
            ..Default::default()
        }));
        i
    }
    fn text(&mut self, key: &str, text: &str) -> usize {
        self.model(key, Bl::Text(text))
    }
    fn think(&mut self, key: &str, text: &str) -> usize {
        self.model(key, Bl::Think(text))
    }
    fn tool(&mut self, key: &str, id: &str, name: &str) -> usize {
        self.model(key, Bl::Tool(id, name))
    }
    fn result(&mut self, id: &str) -> usize {
        self.push(Role::ToolResults, "user", &[Bl::Result(id)])
    }
    fn role(&mut self, role: Role, record_type: &str) -> usize {
        self.push(role, record_type, &[])
    }
    fn ts(&mut self, i: usize, ts: &str) -> &mut Self {
        self.entries[i].set_timestamp_ms(transcript_ls::model::parse_timestamp(ts));
        self
    }
    fn usage(&mut self, i: usize, u: Usage) -> &mut Self {
        self.entries[i].step.as_mut().unwrap().usage = Some(u);
        self
    }
    fn stop(&mut self, i: usize, s: StopReason) -> &mut Self {
        self.entries[i].step.as_mut().unwrap().stop = Some(s);
        self
    }
    fn side(&mut self, i: usize, agent: Option<&str>) -> &mut Self {
        self.entries[i].sidechain = true;
        self.entries[i].set_agent_id(agent.map(Into::into));
        self
    }
    fn transcript(&self) -> Transcript {
        Transcript {
            entries: self.entries.clone(),
            line_count: self.entries.len(),
            ..Default::default()
        }
    }
    fn run(&self) -> Analysis {
        self.run_with(&opts())
    }
    fn run_with(&self, o: &Options) -> Analysis {
        analysis::analyze(&self.transcript(), &self.src, o)
    }
}

fn opts() -> Options {
    Options {
        time_zone: Some("UTC".into()),
        ..Default::default()
    }
}

fn out(n: u64) -> Usage {
    Usage {
        output: n,
        ..Default::default()
    }
}

/// Decoded text of an `(entry, block)` text block.
fn text_of(b: &B, (e, k): (usize, usize)) -> String {
    match &b.entries[e].blocks[k].kind {
        BlockKind::Text { text } => text.decode(&b.src).into_owned(),
        _ => String::new(),
    }
}

// ---------------------------------------------------------------- turns

#[test]
fn turns_open_at_main_thread_prompts_and_wakes_with_a_preamble() {
    let mut b = B::new();
    b.role(Role::Meta, "file-history-snapshot"); // 0: preamble
    b.prompt("\n\n  Fix the flaky test in src/lib.rs  \nmore detail"); // 1
    let s = b.prompt("sub-agent prompt"); // 2: sidechain, never a turn
    b.side(s, Some("a1"));
    b.text("m1", "Fixed."); // 3
    b.wake(); // 4
    b.text("m2", "The background build passed."); // 5
    let a = b.run();
    assert_eq!(a.turns.len(), 3);
    assert_eq!(a.turn_count, 2);
    let t = &a.turns;
    assert_eq!(
        (
            t[0].n,
            t[0].kind,
            t[0].opener,
            t[0].entries.clone(),
            t[0].title.as_str()
        ),
        (0, TurnKind::Preamble, None, 0..1, "")
    );
    assert_eq!(
        (t[1].n, t[1].kind, t[1].opener, t[1].entries.clone()),
        (1, TurnKind::Prompt, Some(1), 1..4)
    );
    assert_eq!(t[1].title, "Fix the flaky test in src/lib.rs");
    assert_eq!((t[1].start_line, t[1].end_line), (1, 3));
    assert_eq!(
        (t[2].n, t[2].kind, t[2].entries.clone(), t[2].title.as_str()),
        (2, TurnKind::Wake, 4..6, "background task finished")
    );
}

#[test]
fn no_preamble_when_the_file_starts_with_a_prompt_and_titles_are_cut() {
    let mut b = B::new();
    let long = "x".repeat(100);
    b.prompt(&long);
    b.text("m1", "ok");
    let a = b.run();
    assert_eq!(a.turns.len(), 1);
    assert_eq!(a.turns[0].n, 1);
    assert_eq!(a.turns[0].title, format!("{}…", "x".repeat(79)));
    assert_eq!(a.turns[0].title.chars().count(), 80);
}

#[test]
fn command_prompt_title_is_the_command_line() {
    let mut b = B::new();
    b.push(
        Role::Prompt(PromptKind::Command),
        "user",
        &[Bl::Text(
            "<command-message>init is analyzing your codebase…</command-message>\n<command-name>/init</command-name>\n<command-args> --fast  now </command-args>",
        )],
    );
    assert_eq!(b.run().turns[0].title, "/init --fast now");
}

#[test]
fn steering_stays_in_its_turn_and_does_not_break_runs() {
    // Case 07: a prompt typed while the agent worked is absorbed by the running turn.
    let mut b = B::new();
    b.prompt("add a flag"); // 0
    b.tool("m1", "t1", "Bash"); // 1
    b.result("t1"); // 2
    b.push(
        Role::Steering,
        "attachment",
        &[Bl::Text("also add a --json flag")],
    ); // 3
    b.tool("m2", "t2", "Edit"); // 4
    b.result("t2"); // 5
    b.text("m3", "Added --flag and --json."); // 6
    let a = b.run();
    assert_eq!(a.turn_count, 1);
    assert_eq!(a.steering, vec![3]);
    assert_eq!(a.turns[0].steering, vec![3]);
    let runs = &a.turns[0].runs;
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0].kind, RunKind::Work);
    assert_eq!(runs[0].blocks, vec![(1, 0), (2, 0), (4, 0), (5, 0)]);
    assert_eq!(
        (
            runs[0].start_line,
            runs[0].end_line,
            runs[0].steps,
            runs[0].tool_calls
        ),
        (1, 5, 2, 2)
    );
    assert_eq!(runs[1].kind, RunKind::Prose);
    assert_eq!(
        a.turns[0].final_answer.as_ref().unwrap().blocks,
        vec![(6, 0)]
    );
}

#[test]
fn sidechain_only_file_renders_as_a_normal_transcript() {
    // Case 20 last bullet: every record of a sub-agent file is sidechain.
    let mut b = B::new();
    b.prompt("Audit auth"); // 0
    b.tool("m1", "t1", "Grep"); // 1
    b.result("t1"); // 2
    b.text("m2", "Auth is fine."); // 3
    for i in 0..4 {
        b.side(i, Some("a111"));
    }
    let mut t = b.transcript();
    t.meta = SessionMeta {
        is_subagent_file: true,
        agent_id: Some("a111".into()),
        ..Default::default()
    };
    let a = analysis::analyze(&t, &b.src, &opts());
    assert_eq!(a.turn_count, 1);
    assert_eq!(a.turns[0].opener, Some(0));
    assert_eq!(a.turns[0].tool_calls, 1);
    assert_eq!(
        a.turns[0].final_answer.as_ref().unwrap().blocks,
        vec![(3, 0)]
    );
    assert!(a.steps.iter().all(|s| !s.sidechain));
    assert_eq!(a.turns[0].steps, vec![0, 1]);
}

#[test]
fn compaction_is_a_divider_and_never_renumbers() {
    let mut b = B::new();
    b.prompt("one"); // 0
    b.text("m1", "answer one"); // 1
    b.role(
        Role::CompactBoundary(Box::new(transcript_ls::model::CompactBoundary {
            trigger: Some("auto".into()),
            pre_tokens: Some(160_000),
        })),
        "system/compact_boundary",
    ); // 2
    b.push(
        Role::CompactSummary,
        "user",
        &[Bl::Text("This session is being continued…")],
    ); // 3
    b.prompt("two"); // 4
    b.text("m2", "answer two"); // 5
    let a = b.run();
    assert_eq!(a.turns.iter().map(|t| t.n).collect::<Vec<_>>(), vec![1, 2]);
    assert_eq!(a.compactions.len(), 1);
    let c = &a.compactions[0];
    assert_eq!(
        (c.boundary, c.summary, c.start_line, c.end_line, c.n),
        (2, Some(3), 2, 3, 1)
    );
    assert_eq!(
        (c.trigger.as_deref(), c.pre_tokens),
        (Some("auto"), Some(160_000))
    );
    assert_eq!(a.turns[0].compactions, vec![0]);
    assert!(a.turns[1].compactions.is_empty());
    // The compaction records do not break turn 1's answer.
    assert_eq!(
        a.turns[0].final_answer.as_ref().unwrap().blocks,
        vec![(1, 0)]
    );
}

// ---------------------------------------------------------------- steps and usage

#[test]
fn split_rows_are_one_step_with_max_usage_case_10() {
    let mut b = B::new();
    b.prompt("go"); // 0
    let u_a = Usage {
        input: 3,
        cache_creation: 1200,
        cache_read: 8000,
        output: 540,
        reasoning: 0,
    };
    let r1 = b.think("msg_10A", "thinking"); // 1
    let r2 = b.text("msg_10A", "I'll run it."); // 2
    let r3 = b.tool("msg_10A", "t1", "Bash"); // 3
    b.usage(r1, u_a).usage(r2, u_a).usage(r3, u_a);
    b.result("t1"); // 4
    let r5 = b.text("msg_10B", "Done."); // 5
    b.usage(
        r5,
        Usage {
            input: 5,
            cache_creation: 300,
            cache_read: 9200,
            output: 120,
            reasoning: 0,
        },
    );
    let a = b.run();
    assert_eq!(a.steps.len(), 2);
    assert_eq!(a.steps[0].entries, vec![1, 2, 3]);
    assert_eq!(a.steps[0].tool_calls, 1);
    let expect = Usage {
        input: 8,
        cache_creation: 1500,
        cache_read: 17200,
        output: 660,
        reasoning: 0,
    };
    assert_eq!(a.turns[0].usage, expect);
    assert_eq!(a.usage, expect);
    assert_eq!(a.turns[0].steps, vec![0, 1]);
}

#[test]
fn step_timing_placeholders_and_end_turn() {
    let mut b = B::new();
    let p = b.prompt("go"); // 0
    b.ts(p, "2026-03-01T10:00:00Z");
    let m = b.role(Role::Meta, "progress"); // 1: non-model, later timestamp
    b.ts(m, "2026-03-01T10:00:01Z");
    let x = b.think("k", "hm"); // 2
    b.ts(x, "2026-03-01T10:00:03Z");
    let r = b.result("zz"); // 3: interleaved non-model record inside the step
    b.ts(r, "2026-03-01T10:00:04Z");
    let y = b.text("k", "Answer."); // 4
    b.ts(y, "2026-03-01T10:00:05Z").stop(y, StopReason::EndTurn);
    b.entries[x].step.as_mut().unwrap().output_is_placeholder = true;
    let a = b.run();
    let s = &a.steps[0];
    assert_eq!(s.entries, vec![2, 4]);
    assert_eq!(
        s.request_ms,
        transcript_ls::model::parse_timestamp("2026-03-01T10:00:01Z")
    );
    assert_eq!(
        s.start_ms,
        transcript_ls::model::parse_timestamp("2026-03-01T10:00:03Z")
    );
    assert_eq!(
        s.end_ms,
        transcript_ls::model::parse_timestamp("2026-03-01T10:00:05Z")
    );
    assert!(s.end_turn);
    // Only one of the two records is a placeholder: the count is final.
    assert!(s.output_final);
    b.entries[y].step.as_mut().unwrap().output_is_placeholder = true;
    assert!(!b.run().steps[0].output_final);
}

#[test]
fn different_step_keys_are_never_fused() {
    let mut b = B::new();
    b.prompt("go");
    let a1 = b.text("msg_A", "one");
    let a2 = b.text("msg_B", "two");
    b.usage(a1, out(10)).usage(a2, out(10));
    let a = b.run();
    assert_eq!(a.steps.len(), 2);
    assert_eq!(a.usage.output, 20);
}

// ---------------------------------------------------------------- runs

#[test]
fn runs_split_work_and_prose_thought_and_ignore_empty_blocks() {
    // Seed 003: Thinking · Agent · Tool · Tool · Tool · Agent.
    let mut b = B::new();
    b.prompt("q"); // 0
    b.think("m1", "Let me think"); // 1
    b.text("m1", "\n\n"); // 2: empty text, ignored for the split
    b.think("m1", ""); // 3: empty thinking (signature only), ignored
    b.text("m1", "I'll read three files."); // 4
    b.tool("m1", "a", "Read"); // 5
    b.tool("m1", "b", "Read"); // 6
    b.result("a"); // 7
    b.result("b"); // 8
    b.tool("m2", "c", "Read"); // 9
    b.result("c"); // 10
    b.text("m3", "Summary."); // 11
    let a = b.run();
    let runs = &a.turns[0].runs;
    let kinds: Vec<RunKind> = runs.iter().map(|r| r.kind).collect();
    assert_eq!(
        kinds,
        vec![
            RunKind::Thought,
            RunKind::Prose,
            RunKind::Work,
            RunKind::Prose
        ]
    );
    assert_eq!(runs[0].blocks, vec![(1, 0), (2, 0), (3, 0)]);
    assert_eq!((runs[0].steps, runs[0].tool_calls), (1, 0));
    assert_eq!(runs[1].blocks, vec![(4, 0)]);
    assert_eq!((runs[2].start_line, runs[2].end_line), (5, 10));
    assert_eq!((runs[2].steps, runs[2].tool_calls), (2, 3));
    assert_eq!(runs[3].blocks, vec![(11, 0)]);
}

#[test]
fn empty_thinking_is_a_thought_alone_but_never_splits_prose() {
    // Opus 4.7 signature-only thinking leading the body: its own Thought run.
    let mut b = B::new();
    b.prompt("q"); // 0
    b.think("m1", ""); // 1
    b.text("m1", "Writing both files."); // 2
    b.tool("m1", "a", "Write"); // 3
    b.result("a"); // 4
    b.text("m2", "Part one."); // 5
    b.think("m3", "   "); // 6: between two prose items: no split
    b.text("m3", "Part two."); // 7
    let a = b.run();
    let runs = &a.turns[0].runs;
    let kinds: Vec<RunKind> = runs.iter().map(|r| r.kind).collect();
    assert_eq!(
        kinds,
        vec![
            RunKind::Thought,
            RunKind::Prose,
            RunKind::Work,
            RunKind::Prose
        ]
    );
    assert_eq!(runs[3].blocks, vec![(5, 0), (6, 0), (7, 0)]);
    assert_eq!(
        a.turns[0].final_answer.as_ref().unwrap().blocks,
        vec![(5, 0), (7, 0)]
    );
}

#[test]
fn api_error_text_is_not_an_answer() {
    let mut b = B::new();
    b.prompt("q"); // 0
    b.text("m1", "Checking."); // 1
    let e = b.text("err", "API Error: 529 overloaded"); // 2
    b.entries[e].step.as_mut().unwrap().api_error = Some("overloaded".into());
    b.prompt("again"); // 3
    let a = b.run();
    assert_eq!(a.turns[0].final_answer, None);
    assert_eq!(a.turns[0].state, TurnState::Replyless);
    assert_eq!(a.turns[0].comments, 1);
    let kinds: Vec<RunKind> = a.turns[0].runs.iter().map(|r| r.kind).collect();
    assert_eq!(kinds, vec![RunKind::Prose, RunKind::Work]);
}

// ---------------------------------------------------------------- final answer

#[test]
fn final_answer_is_the_unbroken_trailing_prose() {
    let mut b = B::new();
    b.prompt("q"); // 0
    b.text("m1", "Looking at it."); // 1
    b.tool("m1", "t", "Bash"); // 2
    b.result("t"); // 3
    b.text("m2", "Found the cause."); // 4
    b.think("m3", "double-check"); // 5: thinking does not break the answer
    b.text("m3", "Fixed in lib.rs."); // 6
    let a = b.run();
    let t = &a.turns[0];
    assert_eq!(
        t.final_answer.as_ref().unwrap().blocks,
        vec![(4, 0), (6, 0)]
    );
    assert_eq!(t.activity, Some(1..4));
    assert_eq!((t.comments, t.tool_calls), (1, 1));
}

#[test]
fn mixed_step_with_trailing_prose_is_part_of_the_answer() {
    // Seed 000 R13: one response streams a tool call and then its answer; the tool result
    // row that follows is not an agent row and does not break the answer.
    let mut b = B::new();
    b.prompt("q"); // 0
    b.tool("m1", "t", "TodoRead"); // 1
    b.text("m1", "All items are done."); // 2
    b.result("t"); // 3
    let a = b.run();
    assert_eq!(
        a.turns[0].final_answer.as_ref().unwrap().blocks,
        vec![(2, 0)]
    );
    assert_eq!(a.turns[0].activity, Some(1..2));
}

#[test]
fn a_turn_ending_on_a_tool_call_is_replyless() {
    let mut b = B::new();
    b.prompt("q"); // 0
    b.text("m1", "Let me check."); // 1
    b.tool("m1", "t", "Bash"); // 2
    b.result("t"); // 3
    b.role(Role::Meta, "system/hook"); // 4
    b.prompt("next"); // 5
    b.text("m2", "ok"); // 6
    let a = b.run();
    let t = &a.turns[0];
    assert_eq!(t.final_answer, None);
    assert_eq!(t.state, TurnState::Replyless);
    // Activity covers the work, not the trailing meta row.
    assert_eq!(t.activity, Some(1..4));
    assert_eq!((t.comments, t.tool_calls), (1, 1));
}

#[test]
fn narration_tail_on_a_turn_moved_past_is_not_an_answer() {
    // Seed 000 R69.
    let mut b = B::new();
    b.prompt("q"); // 0
    b.tool("m1", "t", "Bash"); // 1
    b.result("t"); // 2
    b.text("m2", "Let me try the other approach:"); // 3
    b.prompt("next"); // 4
    let a = b.run();
    assert_eq!(a.turns[0].final_answer, None);
    assert_eq!(a.turns[0].state, TurnState::Replyless);
    assert_eq!(a.turns[0].comments, 1);
    // The live / last turn still shows even a short reply.
    let mut b2 = B::new();
    b2.prompt("q");
    b2.tool("m1", "t", "Bash");
    b2.result("t");
    b2.text("m2", "Let me try the other approach:");
    let a2 = b2.run();
    assert_eq!(
        a2.turns[0].final_answer.as_ref().unwrap().blocks,
        vec![(3, 0)]
    );
    assert_eq!(a2.turns[0].state, TurnState::InFlight);
    // A terminal close (end_turn) keeps it as the answer even on a turn moved past.
    let mut b3 = B::new();
    b3.prompt("q");
    let e = b3.text("m2", "Let me know what you think, I'll wait:");
    b3.stop(e, StopReason::EndTurn);
    b3.prompt("next");
    assert!(b3.run().turns[0].final_answer.is_some());
}

#[test]
fn r_qw_final_question_then_bookkeeping_stays_in_the_answer() {
    let mut b = B::new();
    b.prompt("q"); // 0
    b.tool("m1", "t1", "Bash"); // 1
    b.result("t1"); // 2
    b.text("m2", "Tests pass.\n\nShould I also update the docs?"); // 3
    b.tool("m2", "t2", "TodoWrite"); // 4
    b.result("t2"); // 5
    b.think("m3", "wait for the user"); // 6
    b.text("m3", "Waiting for your answer."); // 7
    let a = b.run();
    let t = &a.turns[0];
    assert_eq!(
        t.final_answer.as_ref().unwrap().blocks,
        vec![(3, 0), (7, 0)]
    );
    assert_eq!(t.activity, Some(1..3));
    assert_eq!((t.comments, t.tool_calls), (0, 2));

    // Without a sign-off: the question alone is the answer.
    let mut b = B::new();
    b.prompt("q");
    b.text("m2", "Which database should I use?");
    b.tool("m2", "t2", "TaskUpdate");
    b.result("t2");
    assert_eq!(
        b.run().turns[0].final_answer.as_ref().unwrap().blocks,
        vec![(1, 0)]
    );

    // Not a question: the bookkeeping call splits the turn as any tool does.
    let mut b = B::new();
    b.prompt("q");
    b.text("m2", "Tests pass.");
    b.tool("m2", "t2", "TodoWrite");
    b.result("t2");
    b.text("m3", "Done.");
    assert_eq!(
        b.run().turns[0].final_answer.as_ref().unwrap().blocks,
        vec![(4, 0)]
    );

    // A real tool after the question still splits the turn.
    let mut b = B::new();
    b.prompt("q");
    b.text("m2", "Shall I continue?");
    b.tool("m2", "t2", "Bash");
    b.result("t2");
    b.text("m3", "Done.");
    assert_eq!(
        b.run().turns[0].final_answer.as_ref().unwrap().blocks,
        vec![(4, 0)]
    );
}

// ---------------------------------------------------------------- markers

/// A turn: prompt, a tool call, its result, then `texts` as prose records.
fn marker_turn(texts: &[&str]) -> B {
    let mut b = B::new();
    b.prompt("q"); // 0
    b.tool("m1", "t", "Bash"); // 1
    b.result("t"); // 2
    for (i, s) in texts.iter().enumerate() {
        b.text(&format!("p{i}"), s); // 3..
    }
    b
}

#[test]
fn marker_standalone_folds_notes_and_spans_the_marker_line() {
    let b = marker_turn(&["Now the summary:\n[[OMNISCIO_FINAL]]\nAll tests pass."]);
    let a = b.run();
    let fa = a.turns[0].final_answer.as_ref().unwrap();
    assert_eq!(fa.blocks, vec![(3, 0)]);
    let m = fa.marker.as_ref().unwrap();
    assert_eq!((m.entry, m.block), (3, 0));
    assert_eq!(&b.src[m.span.clone()], "[[OMNISCIO_FINAL]]");
    assert_eq!(
        &b.src[m.answer_start..m.answer_start + 15],
        "All tests pass."
    );
    assert_eq!(m.duplicate_lead, None);
}

#[test]
fn marker_wrappers_glue_legacy_and_option() {
    for (text, hidden, start) in [
        (
            "**[[OMNISCIO_FINAL]]**\nDone.",
            "**[[OMNISCIO_FINAL]]**",
            "Done.",
        ),
        (
            "_[[OMNISCIO_FINAL]]_\nDone.",
            "_[[OMNISCIO_FINAL]]_",
            "Done.",
        ),
        (
            "### [[OMNISCIO_FINAL]]\nDone.",
            "### [[OMNISCIO_FINAL]]",
            "Done.",
        ),
        ("[[AMC_FINAL]]\nDone.", "[[AMC_FINAL]]", "Done."),
        (
            "[[OMNISCIO_FINAL]]## Ready to Merge",
            "[[OMNISCIO_FINAL]]",
            "## Ready",
        ),
    ] {
        let b = marker_turn(&["Ok:", text]);
        let a = b.run();
        let fa = a.turns[0].final_answer.as_ref().unwrap();
        assert_eq!(fa.blocks, vec![(4, 0)], "{text}");
        let m = fa.marker.as_ref().unwrap();
        assert_eq!(&b.src[m.span.clone()], hidden, "{text}");
        assert!(b.src[m.answer_start..].starts_with(start), "{text}");
    }
    // finalMarker off: the heuristic decides (both prose records are the answer).
    let b = marker_turn(&["Ok:", "[[OMNISCIO_FINAL]]\nDone."]);
    let o = Options {
        final_marker: false,
        ..opts()
    };
    let fa = b.run_with(&o).turns[0].final_answer.clone().unwrap();
    assert_eq!((fa.blocks, fa.marker), (vec![(3, 0), (4, 0)], None));
}

#[test]
fn marker_examples_and_empty_markers_are_ignored() {
    // Backtick-wrapped, inside a code fence, mid-sentence, or with nothing after it.
    for text in [
        "`[[OMNISCIO_FINAL]]`\nDone.",
        "```\n[[OMNISCIO_FINAL]]\n```\nDone.",
        "Print [[OMNISCIO_FINAL]] before the answer.",
        "Done.\n[[OMNISCIO_FINAL]]\n\n",
    ] {
        let b = marker_turn(&["Ok:", text]);
        let fa = b.run().turns[0].final_answer.clone().unwrap();
        assert_eq!(fa.marker, None, "{text}");
        assert_eq!(fa.blocks, vec![(3, 0), (4, 0)], "{text}");
        // Only the boundary-shaped marker with nothing after it is still hidden.
        let hidden: Vec<&str> = fa.stray_markers.iter().map(|s| &b.src[s.clone()]).collect();
        let want: Vec<&str> = if text.starts_with("Done.") {
            vec!["[[OMNISCIO_FINAL]]"]
        } else {
            vec![]
        };
        assert_eq!(hidden, want, "{text}");
    }
    // The last marker outside a fence counts; the fenced one after it does not.
    let b = marker_turn(&[
        "[[OMNISCIO_FINAL]]\nFirst.\n[[OMNISCIO_FINAL]]\nSecond.\n```\n[[OMNISCIO_FINAL]]\n```",
    ]);
    let a = b.run();
    let m = a.turns[0]
        .final_answer
        .as_ref()
        .unwrap()
        .marker
        .clone()
        .unwrap();
    assert!(b.src[m.answer_start..].starts_with("Second."));
}

#[test]
fn an_earlier_marked_message_folds_even_when_substantive() {
    // Seed 000: by default only the last marked message is shown.
    let b = marker_turn(&[
        "[[OMNISCIO_FINAL]]\nFirst report: the migration of all eleven tables finished and the row counts match.",
        "[[OMNISCIO_FINAL]]\nFinal: merged.",
    ]);
    let a = b.run();
    let fa = a.turns[0].final_answer.as_ref().unwrap();
    assert_eq!(fa.blocks, vec![(4, 0)]);
    assert!(b.src[fa.marker.as_ref().unwrap().answer_start..].starts_with("Final: merged."));
    assert!(fa.stray_markers.is_empty());
    assert_eq!(a.turns[0].comments, 1);
}

#[test]
fn marker_answer_continues_into_later_blocks_and_overrides_a_tool_ending() {
    let mut b = B::new();
    b.prompt("q"); // 0
    b.tool("m1", "t", "Bash"); // 1
    b.result("t"); // 2
    b.text("m2", "[[OMNISCIO_FINAL]]"); // 3
    b.text("m3", "\n  The answer."); // 4
    b.tool("m3", "t2", "Bash"); // 5
    b.result("t2"); // 6
    let a = b.run();
    let fa = a.turns[0].final_answer.as_ref().unwrap();
    assert_eq!(fa.blocks, vec![(3, 0), (4, 0)]);
    let m = fa.marker.as_ref().unwrap();
    assert!(b.src[m.answer_start..].starts_with("The answer."));
}

#[test]
fn marker_never_folds_a_substantive_answer() {
    // A substantive summary before the marker stays (seed 000 "ALL CLEAR summary").
    let b = marker_turn(&[
        "Let me wrap up:",
        "**ALL CLEAR**\n[[OMNISCIO_FINAL]]\nDetails follow.",
    ]);
    let a = b.run();
    let fa = a.turns[0].final_answer.as_ref().unwrap();
    assert_eq!(fa.blocks, vec![(4, 0)]);
    let m = fa.marker.as_ref().unwrap();
    assert!(b.src[m.answer_start..].starts_with("**ALL CLEAR**"));
    assert_eq!(&b.src[m.span.clone()], "[[OMNISCIO_FINAL]]");
    assert_eq!(a.turns[0].comments, 1);

    // Substantive answer in an earlier block, then marker before a question.
    let b = marker_turn(&[
        "The migration is done and all 214 tests pass; see the report for the timings per table.",
        "[[OMNISCIO_FINAL]]\nMerge now?",
    ]);
    let fa = b.run().turns[0].final_answer.clone().unwrap();
    assert_eq!(fa.blocks, vec![(3, 0), (4, 0)]);
    assert!(b.src[fa.marker.unwrap().answer_start..].starts_with("The migration"));

    // ...unless the answer after the marker is a clean gate report.
    let b = marker_turn(&[
        "The migration is done and all 214 tests pass; see the report for the timings per table.",
        "[[OMNISCIO_FINAL]]\n[DEV-PIPELINE | GATE 3 | AUTO: OK]",
    ]);
    assert_eq!(
        b.run().turns[0].final_answer.clone().unwrap().blocks,
        vec![(4, 0)]
    );
}

#[test]
fn marker_on_a_turn_without_tools_keeps_notes_and_reports_a_duplicate_lead() {
    let mut b = B::new();
    b.prompt("q"); // 0
    b.think("m1", "thinking"); // 1
    b.text(
        "m1",
        "Here is the plan.\n[[OMNISCIO_FINAL]]\nHere is the plan.\n1. a\n2. b",
    ); // 2
    let a = b.run();
    let fa = a.turns[0].final_answer.as_ref().unwrap();
    assert_eq!(fa.blocks, vec![(2, 0)]);
    let m = fa.marker.as_ref().unwrap();
    assert!(b.src[m.answer_start..].starts_with("Here is the plan.\\n[[OMNISCIO"));
    let dup = m.duplicate_lead.clone().unwrap();
    assert_eq!(&b.src[dup.clone()], "Here is the plan.");
    assert_eq!(dup.start, m.answer_start);
}

// ---------------------------------------------------------------- completion evidence

#[test]
fn completion_evidence_and_in_flight() {
    // end_turn on the answer's step.
    let mut b = B::new();
    b.prompt("q");
    let e = b.text("m1", "Done.");
    b.stop(e, StopReason::EndTurn);
    let a = b.run();
    assert_eq!(a.turns[0].state, TurnState::Complete);
    assert!(a.turns[0].final_answer.as_ref().unwrap().end_turn);
    // The step states no usage at all: not recorded, not "no output" (issue 21 item 6).
    assert_eq!(
        a.turns[0].throughput,
        Throughput::None {
            reason: "token counts not recorded: the agent's file holds none"
        }
    );

    // No evidence on the last turn of a growing file: in flight; complete file: complete.
    let mut b = B::new();
    b.prompt("q");
    b.text("m1", "Done.");
    assert_eq!(b.run().turns[0].state, TurnState::InFlight);
    assert_eq!(
        b.run().turns[0].throughput,
        Throughput::None {
            reason: "turn in flight"
        }
    );
    let o = Options {
        file_complete: true,
        ..opts()
    };
    assert_eq!(b.run_with(&o).turns[0].state, TurnState::Complete);

    // A turn_duration record after the answer closes it.
    b.role(
        Role::TurnDuration { duration_ms: 5000 },
        "system/turn_duration",
    );
    assert_eq!(b.run().turns[0].state, TurnState::Complete);

    // A later prompt moves the conversation on.
    let mut b = B::new();
    b.prompt("q");
    b.text("m1", "Done.");
    b.prompt("next");
    let a = b.run();
    assert_eq!(a.turns[0].state, TurnState::Complete);
    assert!(!a.turns[0].final_answer.as_ref().unwrap().end_turn);
    assert_eq!(a.turns[1].state, TurnState::InFlight);

    // A replyless last turn with a closing record is replyless, not in flight.
    let mut b = B::new();
    b.prompt("q");
    b.tool("m1", "t", "Bash");
    b.role(Role::Interruption, "user");
    assert_eq!(b.run().turns[0].state, TurnState::Replyless);
}

// ---------------------------------------------------------------- gates

#[test]
fn gates_in_agent_prose_with_spans_phases_and_verdicts() {
    let mut b = B::new();
    b.prompt("run the pipeline"); // 0
    b.text(
        "m1",
        "Plan ready.\n[DEV-PIPELINE | GATE 1 | AUTO-APPROVE: OK]",
    ); // 1
    b.tool("m1", "t", "Bash"); // 2
    b.result("t"); // 3
    b.text(
        "m2",
        "Checked.\n[DEV-PIPELINE | GATE CUSTOM_STANDARDS_CHECK | AUTO: PASS]\n```\n[DEV-PIPELINE | GATE 9 | X: OK]\n```\n[DEV-PIPELINE | GATE 6 | MERGE: NOT-READY] — \"CI\" is red",
    ); // 4
    b.push(
        Role::Steering,
        "attachment",
        &[Bl::Text("[DEV-PIPELINE | GATE 2 | X: OK]")],
    ); // 5: not agent prose
    let a = b.run();
    assert_eq!(a.gates.len(), 3);
    let g = &a.gates;
    assert_eq!(
        (
            g[0].entry,
            g[0].line,
            g[0].id.as_str(),
            g[0].phase,
            g[0].turn
        ),
        (1, 1, "1", Some(0), 1)
    );
    assert_eq!(
        &b.src[g[0].span.clone()],
        "[DEV-PIPELINE | GATE 1 | AUTO-APPROVE: OK]"
    );
    assert_eq!(
        (
            g[0].mode.as_str(),
            g[0].verdict_text.as_str(),
            &g[0].verdict
        ),
        ("AUTO-APPROVE", "OK", &Verdict::Done)
    );
    assert_eq!(
        (g[1].phase, g[1].phase_name.as_str()),
        (Some(2), "Standards Check")
    );
    assert_eq!(
        g[2].verdict,
        Verdict::Blocked {
            reason: "\"CI\" is red".into()
        }
    );
    assert_eq!(g[2].phase_name, "Merge");
    assert_eq!(
        &b.src[g[2].span.clone()],
        "[DEV-PIPELINE | GATE 6 | MERGE: NOT-READY]"
    );
    assert_eq!(a.turns[0].gates, vec![0, 1, 2]);
}

// ---------------------------------------------------------------- throughput, duration, clock

#[test]
fn throughput_estimate_is_total_tokens_over_total_decode_time() {
    // Two steps: 100 tokens in 2 s and 300 tokens in 4 s -> 400 / 6 s, not the mean of rates.
    let mut b = B::new();
    let p = b.prompt("q"); // 0
    b.ts(p, "2026-03-01T10:00:00Z");
    let s1 = b.tool("m1", "t", "Bash"); // 1
    b.ts(s1, "2026-03-01T10:00:02Z").usage(s1, out(100));
    let r = b.result("t"); // 2
    b.ts(r, "2026-03-01T10:00:10Z");
    let s2 = b.text("m2", "Done."); // 3
    b.ts(s2, "2026-03-01T10:00:14Z")
        .usage(s2, out(300))
        .stop(s2, StopReason::EndTurn);
    let a = b.run();
    assert_eq!(
        a.turns[0].throughput,
        Throughput::Estimate {
            tok_per_s: 400.0 / 6.0,
            tokens: 400,
            decode_ms: 6000
        }
    );
    // A placeholder count on an output-bearing step: no figure at all.
    b.entries[s2].step.as_mut().unwrap().output_is_placeholder = true;
    assert_eq!(
        b.run().turns[0].throughput,
        Throughput::None {
            reason: "output counts are streaming placeholders"
        }
    );
    b.entries[s2].step.as_mut().unwrap().output_is_placeholder = false;
    b.entries[r].set_timestamp_ms(None);
    b.entries[p].set_timestamp_ms(None);
    assert_eq!(
        b.run().turns[0].throughput,
        Throughput::None {
            reason: "missing timestamps"
        }
    );
    let mut b = B::new();
    b.prompt("q");
    let e = b.text("m1", "hi");
    b.stop(e, StopReason::EndTurn);
    // No usage stated: not recorded (issue 21 item 6).
    assert_eq!(
        b.run().turns[0].throughput,
        Throughput::None {
            reason: "token counts not recorded: the agent's file holds none"
        }
    );
    // Usage stated with no output: no output-bearing response.
    b.entries[e].step.as_mut().unwrap().usage = Some(Usage::default());
    assert_eq!(
        b.run().turns[0].throughput,
        Throughput::None {
            reason: "no output-bearing responses"
        }
    );
}

#[test]
fn throughput_measured_from_task_complete_excludes_ttft_and_tool_time() {
    let mut b = B::new();
    let p = b.prompt("q"); // 0
    b.ts(p, "2026-03-01T10:00:00Z");
    let s1 = b.tool("c1", "call_1", "exec_command"); // 1
    b.ts(s1, "2026-03-01T10:00:03Z").usage(s1, out(200));
    let r = b.result("call_1"); // 2: 4 s of tool time
    b.ts(r, "2026-03-01T10:00:07Z");
    let s2 = b.text("c2", "Done."); // 3
    b.ts(s2, "2026-03-01T10:00:10Z").usage(s2, out(400));
    let c = b.role(
        Role::TurnCompleted(Box::new(transcript_ls::model::TurnCompleted {
            turn_id: None,
            duration_ms: Some(10_000),
            time_to_first_token_ms: Some(1_000),
        })),
        "event_msg/task_complete",
    );
    b.ts(c, "2026-03-01T10:00:10Z");
    let a = b.run();
    // decode = 10 000 - 1 000 - 4 000 = 5 000 ms; 600 tokens.
    assert_eq!(
        a.turns[0].throughput,
        Throughput::Measured {
            tok_per_s: 120.0,
            tokens: 600,
            decode_ms: 5000
        }
    );
    let d = a.turns[0].duration.unwrap();
    assert_eq!((d.ms, d.source), (10_000, DurationSource::Recorded));
}

#[test]
fn duration_from_timestamps_and_finish_clock_case_16() {
    let mut b = B::new();
    let p = b.prompt("q");
    b.ts(p, "2026-03-01T23:50:00.000Z");
    let m = b.text("m1", "ok");
    b.ts(m, "2026-03-02T00:20:00Z");
    let o = Options {
        time_zone: Some("Asia/Shanghai".into()),
        ..opts()
    };
    let a = b.run_with(&o);
    let d = a.turns[0].duration.unwrap();
    assert_eq!(
        (d.ms, d.source),
        (30 * 60 * 1000, DurationSource::Timestamps)
    );
    assert_eq!(a.turns[0].finished_at_ms, Some(1_772_410_800_000));
    assert_eq!(a.turns[0].finished_at.as_deref(), Some("08:20 am"));
    let o = Options {
        time_zone: Some("America/New_York".into()),
        ..opts()
    };
    assert_eq!(
        b.run_with(&o).turns[0].finished_at.as_deref(),
        Some("07:20 pm")
    );
    assert_eq!(
        analysis::clock_label(1_772_410_800_000, Some("Bad/Zone")).as_deref(),
        Some("12:20 am")
    );
}

// ---------------------------------------------------------------- links

#[test]
fn tool_pairs_by_session_and_nearest_preceding_call_case_23() {
    let mut b = B::new();
    b.prompt("a"); // 0
    b.tool("m1", "toolu_SAME", "Bash"); // 1
    b.result("toolu_SAME"); // 2
    b.text("m2", "1.4.0"); // 3
    let p = b.prompt("b"); // 4
    b.entries[p].set_session_id(Some("S2".into()));
    let u = b.tool("m3", "toolu_SAME", "Bash"); // 5
    b.entries[u].set_session_id(Some("S2".into()));
    // A result of session S whose call was already answered: stays unpaired.
    b.result("toolu_SAME"); // 6
    let r = b.result("toolu_SAME"); // 7
    b.entries[r].set_session_id(Some("S2".into()));
    let a = b.run();
    let pairs: Vec<(usize, Option<usize>)> = a
        .tool_pairs
        .iter()
        .map(|p| (p.use_entry, p.result_entry))
        .collect();
    assert_eq!(pairs, vec![(1, Some(2)), (5, Some(7))]);

    // Same key twice: the nearest preceding unmatched call takes the result.
    let mut b = B::new();
    b.prompt("a");
    b.tool("m1", "x", "Bash"); // 1
    b.tool("m2", "x", "Bash"); // 2
    b.result("x"); // 3
    b.result("x"); // 4
    let pairs: Vec<(usize, Option<usize>)> = b
        .run()
        .tool_pairs
        .iter()
        .map(|p| (p.use_entry, p.result_entry))
        .collect();
    assert_eq!(pairs, vec![(1, Some(4)), (2, Some(3))]);
}

#[test]
fn parallel_subagents_are_attributed_by_agent_id_case_18() {
    let mut b = B::new();
    b.prompt("Survey both layers"); // 0
    b.tool("msg_18A", "toolu_18A", "Task"); // 1
    b.tool("msg_18A", "toolu_18B", "Task"); // 2
    let s = [
        (3, "aaa"),
        (4, "bbb"),
        (5, "aaa"),
        (6, "bbb"),
        (7, "aaa"),
        (8, "bbb"),
        (9, "bbb"),
    ];
    for (i, ag) in s {
        let e = if i % 2 == 1 {
            b.prompt("side")
        } else {
            b.text(&format!("side{i}"), "x")
        };
        assert_eq!(e, i);
        b.side(e, Some(ag));
    }
    let rb = b.result("toolu_18B"); // 10
    b.entries[rb].blocks[0].kind = match b.entries[rb].blocks[0].kind.clone() {
        BlockKind::ToolResult(mut r) => {
            r.subagent = Some(SubagentResult {
                agent_id: Some("bbb".into()),
                duration_ms: Some(4000),
                total_tokens: Some(1200),
                tool_uses: Some(1),
            });
            BlockKind::ToolResult(r)
        }
        k => k,
    };
    let e11 = b.text("side11", "y"); // 11
    b.side(e11, Some("aaa"));
    b.result("toolu_18A"); // 12: names no agent -> order fallback gives it "aaa"
    b.text("msg_18B", "API and DB surveyed."); // 13
    let a = b.run();
    assert_eq!(a.turn_count, 1);
    assert_eq!(a.subagent_calls.len(), 2);
    let c = &a.subagent_calls;
    assert_eq!(
        (c[0].tool_use_id.as_str(), c[0].agent_id.as_deref()),
        ("toolu_18A", Some("aaa"))
    );
    assert_eq!(c[0].sidechain_entries, vec![3, 5, 7, 11]);
    assert_eq!(
        (c[0].start_line, c[0].end_line, c[0].result_entry),
        (1, 12, Some(12))
    );
    assert_eq!(
        (
            c[1].agent_id.as_deref(),
            c[1].duration_ms,
            c[1].total_tokens,
            c[1].tool_uses
        ),
        (Some("bbb"), Some(4000), Some(1200), Some(1))
    );
    assert_eq!(c[1].sidechain_entries, vec![4, 6, 8, 9]);
    assert_eq!((c[1].start_line, c[1].end_line), (2, 10));
    assert_eq!(a.turns[0].subagent_calls, vec![0, 1]);
    // Sidechain records are never the final answer nor main-thread work.
    assert_eq!(
        a.turns[0].final_answer.as_ref().unwrap().blocks,
        vec![(13, 0)]
    );
    assert_eq!(a.turns[0].tool_calls, 2);
}

#[test]
fn anonymous_inline_sidechains_are_attributed_through_the_dag() {
    // 1.0.x: no agentId anywhere; each sidechain chain starts at a root whose prompt is the
    // Task's input.prompt (fixtures/rules/inline-sidechains.jsonl shape).
    let mut b = B::new();
    b.prompt("survey"); // 0
    let ta = b.model("m1", Bl::Task("tA", "List handlers.")); // 1
    let tb = b.model("m1", Bl::Task("tB", "List migrations.")); // 2
    let _ = (ta, tb);
    let chain = |b: &mut B, i: usize, uuid: &str, parent: Option<&str>| {
        b.side(i, None);
        b.entries[i].set_uuid(Some(uuid));
        b.entries[i].set_parent_uuid(parent);
    };
    let r = b.prompt("List handlers."); // 3: root A
    chain(&mut b, r, "a1", None);
    let r = b.prompt("List migrations."); // 4: root B
    chain(&mut b, r, "b1", None);
    let x = b.tool("sa", "ga", "Grep"); // 5
    chain(&mut b, x, "a2", Some("a1"));
    let x = b.tool("sb", "gb", "Glob"); // 6
    chain(&mut b, x, "b2", Some("b1"));
    let x = b.result("gb"); // 7
    chain(&mut b, x, "b3", Some("b2"));
    let x = b.text("sb2", "Migrations: 2."); // 8
    chain(&mut b, x, "b4", Some("b3"));
    b.result("tB"); // 9
    let x = b.result("ga"); // 10
    chain(&mut b, x, "a3", Some("a2"));
    let x = b.text("sa2", "Handlers: 3."); // 11
    chain(&mut b, x, "a4", Some("a3"));
    b.result("tA"); // 12
    b.text("m2", "Both surveyed."); // 13
    let a = b.run();
    let c = &a.subagent_calls;
    assert_eq!(c.len(), 2);
    assert_eq!(c[0].sidechain_entries, vec![3, 5, 10, 11]);
    assert_eq!(c[1].sidechain_entries, vec![4, 6, 7, 8]);
    assert_eq!((c[0].start_line, c[0].end_line), (1, 12));
    assert_eq!((c[1].start_line, c[1].end_line), (2, 9));
    assert_eq!(
        a.turns[0].final_answer.as_ref().unwrap().blocks,
        vec![(13, 0)]
    );
    assert_eq!((a.turns[0].comments, a.turns[0].tool_calls), (0, 2));
}

// ---------------------------------------------------------------- robustness

#[test]
fn empty_and_inconsistent_models_do_not_panic() {
    let a = analysis::analyze(&Transcript::default(), "", &Options::default());
    assert_eq!((a.turns.len(), a.turn_count), (0, 0));
    // Spans outside the source, a result before any call, a step key on a non-model row.
    let mut e = Entry::new(0, 0..5, Role::Prompt(PromptKind::Typed), "user");
    e.blocks.push(Block {
        span: 100..200,
        kind: BlockKind::Text {
            text: Str { raw: 150..190 },
        },
    });
    let mut r = Entry::new(1, 0..5, Role::ToolResults, "user");
    r.step = Some(Box::new(StepInfo {
        key: "k".into(),
        ..Default::default()
    }));
    r.blocks.push(Block {
        span: 0..1,
        kind: BlockKind::ToolResult(Box::new(ToolResult {
            tool_use_id: "none".into(),
            is_error: true,
            content: 0..1,
            content_len: 1,
            summary: String::new(),
            images: vec![],
            subagent: None,
        })),
    });
    let mut m = Entry::new(2, 0..5, Role::Model, "assistant");
    m.blocks.push(Block {
        span: std::ops::Range { start: 3, end: 2 },
        kind: BlockKind::Text {
            text: Str {
                raw: std::ops::Range { start: 4, end: 2 },
            },
        },
    });
    let t = Transcript {
        entries: vec![e, r, m],
        ..Default::default()
    };
    let a = analysis::analyze(&t, "short", &Options::default());
    assert_eq!(a.turn_count, 1);
    assert_eq!(a.turns[0].title, "");
    assert_eq!(a.turns[0].final_answer, None);
}

#[test]
fn text_helper_reads_decoded_blocks() {
    let mut b = B::new();
    b.prompt("q");
    b.text("m", "a \"quoted\" line\nnext");
    assert_eq!(text_of(&b, (1, 0)), "a \"quoted\" line\nnext");
}
