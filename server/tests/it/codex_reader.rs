//! The Codex rollout reader (`formats::codex`, FORMATS.md §2, cases 13 and 15): exact roles,
//! step keys, usage deltas, duplicate pairing in both orders, the context preamble, tool
//! summaries, exit codes, the legacy format, and the schema catalog
//! (`jazzyalex/agent-sessions` `stage0/agents/codex/small.jsonl`) line by line.

use serde_json::{Value, json};
use transcript_ls::formats::{self, Reader, detect_line};
use transcript_ls::model::{
    Block, BlockKind, Entry, Format, PromptKind, Role, StopReason, ToolResult, ToolUse, Transcript,
    Usage,
};
use transcript_ls::source::json_string;

const SHARED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared");
const CATALOG: &str =
    "corpus/jazzyalex__agent-sessions/Resources/Fixtures/stage0/agents/codex/small.jsonl";

fn shared(path: &str) -> String {
    let p = format!("{SHARED}/{path}");
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

// ---------------------------------------------------------------------------------------------
// Input builders (our own small rollouts).

const TS: &str = "2026-03-03T08:00:00.000Z";

fn rec(ty: &str, payload: Value) -> String {
    json!({"timestamp": TS, "type": ty, "payload": payload}).to_string()
}
fn item(payload: Value) -> String {
    rec("response_item", payload)
}
fn event(payload: Value) -> String {
    rec("event_msg", payload)
}
fn session_meta(id: &str) -> String {
    rec(
        "session_meta",
        json!({"id": id, "timestamp": TS, "cwd": "/w", "originator": "codex_cli_rs",
               "cli_version": "0.50.0", "base_instructions": {"text": "long instructions"}}),
    )
}
fn turn_context(model: &str) -> String {
    rec(
        "turn_context",
        json!({"cwd": "/w", "model": model, "approval_policy": "on-request"}),
    )
}
fn user(text: &str) -> String {
    item(json!({"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": text}]}))
}
fn developer(text: &str) -> String {
    item(json!({"type": "message", "role": "developer",
                "content": [{"type": "input_text", "text": text}]}))
}
fn assistant(text: &str, phase: Option<&str>) -> String {
    let mut p = json!({"type": "message", "role": "assistant",
                       "content": [{"type": "output_text", "text": text}]});
    if let Some(phase) = phase {
        p["phase"] = json!(phase);
    }
    item(p)
}
fn reasoning(summary: &[&str], encrypted: bool) -> String {
    let summary: Vec<Value> = summary
        .iter()
        .map(|s| json!({"type": "summary_text", "text": s}))
        .collect();
    let mut p = json!({"type": "reasoning", "summary": summary, "content": null});
    if encrypted {
        p["encrypted_content"] = json!("gAAAAABopaque");
    }
    item(p)
}
fn user_msg(text: &str) -> String {
    event(json!({"type": "user_message", "message": text, "images": []}))
}
fn agent_msg(text: &str) -> String {
    event(json!({"type": "agent_message", "message": text}))
}
fn agent_reasoning(text: &str) -> String {
    event(json!({"type": "agent_reasoning", "text": text}))
}
fn token_count(input: u64, cached: u64, output: u64, reasoning: u64) -> String {
    let u = json!({"input_tokens": input, "cached_input_tokens": cached,
                   "output_tokens": output, "reasoning_output_tokens": reasoning,
                   "total_tokens": input + output});
    event(json!({"type": "token_count",
                 "info": {"total_token_usage": u, "last_token_usage": u,
                          "model_context_window": 272000},
                 "rate_limits": {"primary": {"used_percent": 3.0, "window_minutes": 300}}}))
}
fn token_null() -> String {
    event(json!({"type": "token_count", "info": null,
                 "rate_limits": {"primary": {"used_percent": 3.0}}}))
}
fn call(name: &str, args: &str, id: &str) -> String {
    item(json!({"type": "function_call", "name": name, "arguments": args, "call_id": id}))
}
fn custom_call(name: &str, input: &str, id: &str) -> String {
    item(
        json!({"type": "custom_tool_call", "name": name, "input": input, "call_id": id,
                "status": "completed"}),
    )
}
fn output(id: &str, out: Value) -> String {
    item(json!({"type": "function_call_output", "call_id": id, "output": out}))
}
fn task_started(id: &str) -> String {
    event(json!({"type": "task_started", "turn_id": id, "model_context_window": 272000}))
}
fn task_complete(id: &str, last: &str) -> String {
    event(json!({"type": "task_complete", "turn_id": id, "last_agent_message": last}))
}
fn file(lines: &[String]) -> String {
    let mut s = lines.join("\n");
    s.push('\n');
    s
}

// ---------------------------------------------------------------------------------------------
// Accessors.

fn read(src: &str) -> Transcript {
    let t = formats::read(src);
    assert_eq!(t.format(), Format::Codex, "format of:\n{src}");
    t
}

fn roles(t: &Transcript) -> Vec<Role> {
    t.entries.iter().map(|e| e.role.clone()).collect()
}

const PROMPT: Role = Role::Prompt(PromptKind::Typed);

fn key(e: &Entry) -> Option<&str> {
    e.step.as_ref().map(|s| s.key.as_ref())
}

fn usage(e: &Entry) -> Option<Usage> {
    e.step.as_ref().and_then(|s| s.usage)
}

fn total_usage(t: &Transcript) -> Usage {
    t.entries
        .iter()
        .filter_map(usage)
        .fold(Usage::default(), Usage::add)
}

fn texts(src: &str, e: &Entry) -> Vec<String> {
    e.blocks
        .iter()
        .filter_map(|b| match &b.kind {
            BlockKind::Text { text } => Some(text.decode(src).into_owned()),
            _ => None,
        })
        .collect()
}

fn tool_use(e: &Entry) -> &ToolUse {
    match &e.blocks[..] {
        [
            Block {
                kind: BlockKind::ToolUse(u),
                ..
            },
        ] => u,
        other => panic!("expected one tool_use block, got {other:?}"),
    }
}

fn tool_result(e: &Entry) -> &ToolResult {
    match &e.blocks[..] {
        [
            Block {
                kind: BlockKind::ToolResult(r),
                ..
            },
        ] => r,
        other => panic!("expected one tool_result block, got {other:?}"),
    }
}

fn thinking(src: &str, e: &Entry) -> (String, bool) {
    match &e.blocks[..] {
        [
            Block {
                kind: BlockKind::Thinking { text, encrypted },
                ..
            },
        ] => (text.decode(src).into_owned(), *encrypted),
        other => panic!("expected one thinking block, got {other:?}"),
    }
}

fn u(input: u64, cache_read: u64, output: u64, reasoning: u64) -> Usage {
    Usage {
        input,
        output,
        cache_creation: 0,
        cache_read,
        reasoning,
    }
}

/// A compact, reviewable rendering of a transcript for snapshots.
fn dump(src: &str, t: &Transcript) -> String {
    let mut out = String::new();
    for e in &t.entries {
        out.push_str(&format!("{:>3} {:?} {}", e.line, e.role, e.record_type));
        if let Some(s) = &e.step {
            out.push_str(&format!(" [{}", s.key));
            if let Some(u) = s.usage {
                out.push_str(&format!(
                    " in={} cache_read={} out={} reasoning={}",
                    u.input, u.cache_read, u.output, u.reasoning
                ));
            }
            if let Some(stop) = &s.stop {
                out.push_str(&format!(" {stop:?}"));
            }
            out.push(']');
        }
        for b in &e.blocks {
            out.push_str(" | ");
            match &b.kind {
                BlockKind::Text { text } => out.push_str(&format!("text {:?}", text.decode(src))),
                BlockKind::Thinking { text, encrypted } => out.push_str(&format!(
                    "thinking {:?}{}",
                    text.decode(src),
                    if *encrypted { " (encrypted)" } else { "" }
                )),
                BlockKind::ToolUse(u) => {
                    out.push_str(&format!("tool_use {} {} {:?}", u.name, u.id, u.summary))
                }
                BlockKind::ToolResult(r) => out.push_str(&format!(
                    "tool_result {}{} {:?} {}B",
                    r.tool_use_id,
                    if r.is_error { " error" } else { "" },
                    r.summary,
                    r.content_len
                )),
                k => out.push_str(&format!("{k:?}")),
            }
        }
        out.push('\n');
    }
    for p in &t.problems {
        out.push_str(&format!(
            "problem line {} {:?}: {}\n",
            p.line, p.severity, p.message
        ));
    }
    out.push_str(&format!("meta {:?}\n", t.meta));
    out
}

/// Every non-blank line has exactly one entry, in order, spanning the line.
fn assert_one_entry_per_line(src: &str, t: &Transcript) {
    let lines: Vec<(usize, &str)> = src
        .split('\n')
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .collect();
    assert_eq!(t.entries.len(), lines.len());
    for (e, (n, text)) in t.entries.iter().zip(&lines) {
        assert_eq!(e.line, *n);
        assert_eq!(&src[e.span.clone()], *text);
    }
}

// ---------------------------------------------------------------------------------------------
// Case 13: token_count re-emits.

#[test]
fn case_13_file_usage_is_deltas_of_totals() {
    let src = shared("cases/13-codex-token-count-reemits.jsonl");
    let t = read(&src);
    assert_one_entry_per_line(&src, &t);
    use Role::*;
    assert_eq!(
        roles(&t),
        vec![
            Context,
            Context,
            PROMPT,
            Meta,
            Model,
            ToolResults,
            Meta,
            Meta,
            Model,
            Meta,
            Meta,
            Meta,
            Meta
        ]
    );
    let e = &t.entries;
    assert_eq!(key(&e[4]), Some("codex-call-1"));
    assert_eq!(usage(&e[4]), Some(u(800, 200, 100, 40)));
    assert_eq!(key(&e[8]), Some("codex-call-2"));
    assert_eq!(usage(&e[8]), Some(u(400, 700, 60, 20)));
    // Only those two records carry usage; re-emits, info:null and duplicates carry nothing.
    assert_eq!(t.entries.iter().filter(|e| usage(e).is_some()).count(), 2);
    let total = total_usage(&t);
    assert_eq!(total, u(1200, 900, 160, 60));
    assert_eq!(total.input + total.cache_read + total.output, 2260);
    assert_eq!(total.input + total.cache_read, 2100);
    // Model for steps comes from turn_context.
    assert_eq!(e[4].step.as_ref().unwrap().model.as_deref(), Some("gpt-5"));
    assert_eq!(e[8].step.as_ref().unwrap().model.as_deref(), Some("gpt-5"));
    let call = tool_use(&e[4]);
    assert_eq!(
        (&*call.name, &*call.id, call.summary.as_str()),
        ("shell", "call_13A", "ls src")
    );
    assert_eq!(
        json_string::decode(&src[call.input.clone()]),
        r#"{"command":["ls","src"]}"#
    );
    let result = tool_result(&e[5]);
    assert_eq!((&*result.tool_use_id, result.is_error), ("call_13A", false));
    assert_eq!(result.summary, "a.rs");
    assert_eq!(texts(&src, &e[2]), ["How many files are in src?"]);
    assert_eq!(texts(&src, &e[8]), ["There are 3 files in src."]);
    assert!(e[3].blocks.is_empty() && e[9].blocks.is_empty());
    assert_eq!(e[6].timestamp_ms(), Some(1_772_524_803_500));
    assert_eq!(t.meta.session_id.as_deref(), Some("ROLLOUT-13"));
    assert_eq!(t.meta.version.as_deref(), Some("0.x"));
    assert_eq!(t.meta.cwd.as_deref(), Some("/home/USER/project"));
    assert_eq!(t.meta.model.as_deref(), Some("gpt-5"));
    assert!(t.problems.is_empty());
}

#[test]
fn own_case_13_shape_reemits_and_null_info_count_nothing() {
    let src = file(&[
        session_meta("S-A"),                                              // 0
        turn_context("gpt-5-codex"),                                      // 1
        task_started("T1"),                                               // 2
        user("Count lines"),                                              // 3
        user_msg("Count lines"),                                          // 4
        token_null(),                                                     // 5
        reasoning(&[], true),                                             // 6
        call("exec_command", r#"{"cmd":"wc -l src/main.rs"}"#, "call_1"), // 7
        output(
            "call_1",
            json!(
                "Chunk ID: ab12\nWall time: 0.0100 seconds\nProcess exited with code 0\nOriginal token count: 5\nOutput:\n42 src/main.rs\n"
            ),
        ), // 8
        token_count(5000, 1000, 300, 200),                                // 9
        token_count(5000, 1000, 300, 200),                                // 10 re-emit
        assistant("src/main.rs has 42 lines.", Some("final_answer")),     // 11
        event(
            json!({"type": "agent_message", "message": "src/main.rs has 42 lines.",
                     "phase": "final_answer"}),
        ), // 12
        token_count(10500, 5000, 420, 240),                               // 13
        token_null(),                                                     // 14
        token_count(10500, 5000, 420, 240),                               // 15 re-emit
        event(
            json!({"type": "task_complete", "turn_id": "T1", "duration_ms": 5300,
                     "time_to_first_token_ms": 800,
                     "last_agent_message": "src/main.rs has 42 lines."}),
        ), // 16
    ]);
    let t = read(&src);
    assert_one_entry_per_line(&src, &t);
    use Role::*;
    assert_eq!(
        roles(&t),
        vec![
            Context,
            Context,
            TurnStarted {
                turn_id: Some(Box::new("T1".into()))
            },
            PROMPT,
            Meta,
            Meta,
            Model,
            Model,
            ToolResults,
            Meta,
            Meta,
            Model,
            Meta,
            Meta,
            Meta,
            Meta,
            TurnCompleted(Box::new(transcript_ls::model::TurnCompleted {
                turn_id: Some("T1".into()),
                duration_ms: Some(5300),
                time_to_first_token_ms: Some(800)
            })),
        ]
    );
    let e = &t.entries;
    let keys: Vec<Option<&str>> = e.iter().map(key).collect();
    let mut expected = vec![None; 17];
    expected[6] = Some("codex-call-1");
    expected[7] = Some("codex-call-1");
    expected[11] = Some("codex-call-2");
    assert_eq!(keys, expected);
    assert_eq!(usage(&e[6]), None);
    assert_eq!(usage(&e[7]), Some(u(4000, 1000, 300, 200)));
    assert_eq!(usage(&e[11]), Some(u(1500, 4000, 120, 40)));
    assert_eq!(total_usage(&t), u(5500, 5000, 420, 240));
    assert_eq!(e[11].step.as_ref().unwrap().stop, Some(StopReason::EndTurn));
    assert_eq!(
        e[7].step.as_ref().unwrap().model.as_deref(),
        Some("gpt-5-codex")
    );
    assert_eq!(thinking(&src, &e[6]), (String::new(), true));
    assert_eq!(tool_use(&e[7]).summary, "wc -l src/main.rs");
    let r = tool_result(&e[8]);
    assert_eq!((r.is_error, r.summary.as_str()), (false, "42 src/main.rs"));
    // task_complete repeats the answer: never a second answer.
    assert!(e[16].blocks.is_empty());
    let answers: usize = e
        .iter()
        .filter(|e| e.role == Model)
        .map(|e| texts(&src, e).len())
        .sum();
    assert_eq!(answers, 1);
}

#[test]
fn totals_that_go_down_restart_counting_and_lone_token_count_keeps_its_usage() {
    let src = file(&[
        user("go"),                 // 0
        assistant("one", None),     // 1
        token_count(100, 0, 10, 0), // 2
        session_meta("S-resumed"),  // 3
        token_count(50, 0, 5, 0),   // 4: lower totals: counting restarted, no model record
        user("again"),              // 5
        assistant("two", None),     // 6
        token_count(80, 10, 9, 1),  // 7
    ]);
    let t = read(&src);
    let e = &t.entries;
    assert_eq!(usage(&e[1]), Some(u(100, 0, 10, 0)));
    assert_eq!(key(&e[1]), Some("codex-call-1"));
    // No model record in that call: the usage stays on the token_count (role Meta).
    assert_eq!(e[4].role, Role::Meta);
    assert_eq!(key(&e[4]), Some("codex-call-2"));
    assert_eq!(usage(&e[4]), Some(u(50, 0, 5, 0)));
    assert_eq!(key(&e[6]), Some("codex-call-3"));
    assert_eq!(usage(&e[6]), Some(u(20, 10, 4, 1)));
    assert_eq!(total_usage(&t), u(170, 10, 19, 1));
}

// ---------------------------------------------------------------------------------------------
// Case 15: dual-logged duplicates.

#[test]
fn case_15_file_one_prompt_one_answer_context_preamble() {
    let src = shared("cases/15-codex-dual-log-duplicates.jsonl");
    let t = read(&src);
    assert_one_entry_per_line(&src, &t);
    use Role::*;
    assert_eq!(
        roles(&t),
        vec![
            Context,
            Context,
            Context,
            Context,
            PROMPT,
            Meta,
            Model,
            Meta,
            Model,
            Meta,
            TurnCompleted(Box::new(transcript_ls::model::TurnCompleted {
                turn_id: None,
                duration_ms: None,
                time_to_first_token_ms: None
            })),
        ]
    );
    let e = &t.entries;
    assert_eq!(
        texts(&src, &e[4]),
        ["Summarize the README in two sentences"]
    );
    assert_eq!(
        thinking(&src, &e[6]),
        ("Reading README headings".to_string(), false)
    );
    assert_eq!(
        texts(&src, &e[8]),
        ["The project is a CSV toolkit. It offers streaming parsing and a CLI."]
    );
    // The agent_message copy (line 7) came first and was demoted: no blocks, no step.
    assert!(e[7].blocks.is_empty() && e[7].step.is_none());
    assert!(e[10].blocks.is_empty());
    assert_eq!(key(&e[6]), Some("codex-call-1"));
    assert_eq!(key(&e[8]), Some("codex-call-1"));
    assert_eq!(usage(&e[8]), Some(u(900, 0, 40, 10)));
    let prompts = e.iter().filter(|e| e.role.opens_turn()).count();
    assert_eq!(prompts, 1);
    let answer_blocks: usize = e
        .iter()
        .filter(|e| e.role == Model)
        .map(|e| texts(&src, e).len())
        .sum();
    assert_eq!(answer_blocks, 1);
    assert!(t.problems.is_empty());
}

/// One turn logged with the `event_msg` copy before (`copy_first`) or after its item.
fn dual_logged_turn(copy_first: bool) -> String {
    let pair = |item: String, copy: String| {
        if copy_first {
            [copy, item]
        } else {
            [item, copy]
        }
    };
    let mut lines = vec![session_meta("S-B"), turn_context("gpt-5")];
    lines.extend(pair(user("Fix the bug"), user_msg("Fix the bug")));
    lines.extend(pair(
        reasoning(&["Looking at the code"], true),
        agent_reasoning("Looking at the code"),
    ));
    lines.extend(pair(
        assistant("Fixed it.", None),
        agent_msg("Fixed  it.\n"),
    ));
    lines.push(token_count(1000, 0, 50, 20));
    lines.push(task_complete("T", "Fixed it."));
    file(&lines)
}

#[test]
fn duplicates_pair_in_both_orders() {
    for copy_first in [true, false] {
        let src = dual_logged_turn(copy_first);
        let t = read(&src);
        assert_one_entry_per_line(&src, &t);
        let (item, copy) = if copy_first { (1, 0) } else { (0, 1) };
        let e = &t.entries;
        for pair_start in [2, 4, 6] {
            assert_eq!(
                e[pair_start + copy].role,
                Role::Meta,
                "copy_first={copy_first}"
            );
            assert!(e[pair_start + copy].blocks.is_empty());
            assert!(e[pair_start + copy].step.is_none());
        }
        assert_eq!(e[2 + item].role, PROMPT);
        assert_eq!(texts(&src, &e[2 + item]), ["Fix the bug"]);
        assert_eq!(e[4 + item].role, Role::Model);
        // A summary is present, so the thinking is readable even though encrypted too.
        assert_eq!(
            thinking(&src, &e[4 + item]),
            ("Looking at the code".to_string(), false)
        );
        assert_eq!(e[6 + item].role, Role::Model);
        assert_eq!(texts(&src, &e[6 + item]), ["Fixed it."]);
        assert_eq!(key(&e[4 + item]), Some("codex-call-1"));
        assert_eq!(key(&e[6 + item]), Some("codex-call-1"));
        assert_eq!(usage(&e[6 + item]), Some(u(1000, 0, 50, 20)));
        assert_eq!(total_usage(&t), u(1000, 0, 50, 20));
    }
}

#[test]
fn copies_stand_in_when_the_response_items_are_absent() {
    let src = file(&[
        session_meta("S-C"),
        user_msg("Hello"),                    // 1
        agent_reasoning("Greeting the user"), // 2
        agent_msg("Hi!"),                     // 3
        token_count(300, 100, 20, 5),         // 4
    ]);
    let t = read(&src);
    use Role::*;
    assert_eq!(roles(&t), vec![Context, PROMPT, Model, Model, Meta]);
    let e = &t.entries;
    assert_eq!(texts(&src, &e[1]), ["Hello"]);
    assert_eq!(
        thinking(&src, &e[2]),
        ("Greeting the user".to_string(), false)
    );
    assert_eq!(texts(&src, &e[3]), ["Hi!"]);
    assert_eq!(key(&e[2]), Some("codex-call-1"));
    assert_eq!(usage(&e[3]), Some(u(200, 100, 20, 5)));
}

#[test]
fn item_after_its_copy_and_token_count_takes_over_the_usage() {
    let src = file(&[
        user("Explain"),             // 0
        agent_msg("Because."),       // 1 stand-in, gets the usage at line 2
        token_count(10, 0, 3, 0),    // 2
        assistant("Because.", None), // 3 replaces the stand-in
    ]);
    let t = read(&src);
    let e = &t.entries;
    assert_eq!(e[1].role, Role::Meta);
    assert!(e[1].step.is_none() && e[1].blocks.is_empty());
    assert_eq!(e[3].role, Role::Model);
    assert_eq!(key(&e[3]), Some("codex-call-1"));
    assert_eq!(usage(&e[3]), Some(u(10, 0, 3, 0)));
    assert_eq!(total_usage(&t), u(10, 0, 3, 0));
}

#[test]
fn repeated_text_in_later_turns_is_not_a_duplicate() {
    let src = file(&[
        task_started("T1"),           // 0
        user("continue"),             // 1
        user_msg("continue"),         // 2
        assistant("Done.", None),     // 3
        agent_msg("Done."),           // 4
        task_complete("T1", "Done."), // 5
        task_started("T2"),           // 6
        user_msg("continue"),         // 7 copy first this time
        user("continue"),             // 8
        agent_msg("Done."),           // 9
        assistant("Done.", None),     // 10
        task_complete("T2", "Done."), // 11
        user("continue"),             // 12 outside any task, no copy: context (issue 9)
        assistant("Done.", None),     // 13
    ]);
    let t = read(&src);
    let r = roles(&t);
    let prompts: Vec<usize> = (0..r.len()).filter(|&i| r[i] == PROMPT).collect();
    assert_eq!(prompts, [1, 8]);
    assert_eq!(r[12], Role::Context);
    let answers: Vec<usize> = (0..r.len())
        .filter(|&i| r[i] == Role::Model && !t.entries[i].blocks.is_empty())
        .collect();
    assert_eq!(answers, [3, 10, 13]);
    for i in [2, 4, 7, 9] {
        assert_eq!(r[i], Role::Meta, "line {i}");
    }
}

// ---------------------------------------------------------------------------------------------
// Context preamble.

#[test]
fn injected_user_messages_are_context_not_prompts() {
    let src = file(&[
        session_meta("S-D"), // 0
        developer("<permissions instructions>sandbox: workspace-write</permissions instructions>"), // 1
        user("<user_instructions>\nBe terse.\n</user_instructions>"), // 2
        user("# AGENTS.md instructions for /w\n\n<INSTRUCTIONS>\nUse cargo.\n</INSTRUCTIONS>"), // 3
        user("<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"), // 4
        user("Real prompt"),                                          // 5
        user_msg("Real prompt"),                                      // 6
        assistant("ok", None),                                        // 7
        user("<environment_context>\n  <cwd>/w2</cwd>\n</environment_context>"), // 8
        user("<user_shell_command>\nls\n</user_shell_command>"),      // 9
        user("<turn_aborted>\nThe user interrupted.\n</turn_aborted>"), // 10
        user("Second prompt"),                                        // 11
    ]);
    let t = read(&src);
    use Role::*;
    assert_eq!(
        roles(&t),
        vec![
            Context,
            Context,
            Context,
            Context,
            Context,
            PROMPT,
            Meta,
            Model,
            Context,
            LocalCommand,
            Context,
            PROMPT
        ]
    );
    // Context keeps its text (folded as session context by the view).
    assert_eq!(
        texts(&src, &t.entries[2]),
        ["<user_instructions>\nBe terse.\n</user_instructions>"]
    );
}

#[test]
fn raw_agents_md_before_the_first_prompt_is_demoted_once_a_prompt_is_confirmed() {
    let agents = "Repository Guidelines\n- Use cargo.\n- Keep fmt clean.";
    let with_copies = file(&[
        session_meta("S-E"),
        user(agents),             // 1: read as a prompt at first
        user("Do the thing"),     // 2
        user_msg("Do the thing"), // 3: the file logs copies; line 1 never got one
        assistant("Done.", None),
    ]);
    let t = read(&with_copies);
    use Role::*;
    assert_eq!(roles(&t), vec![Context, Context, PROMPT, Meta, Model]);

    // Copy first, and the injected file as an `# AGENTS.md` heading.
    let heading = file(&[
        user("# AGENTS.md\n\nUse cargo."),
        user_msg("Do the thing"),
        user("Do the thing"),
    ]);
    let t = read(&heading);
    assert_eq!(roles(&t), vec![Context, Meta, PROMPT]);

    // Without copies in the file there is no evidence: the text stays a prompt.
    let without = file(&[session_meta("S-F"), user(agents), user("Do the thing")]);
    let t = read(&without);
    assert_eq!(roles(&t), vec![Context, PROMPT, PROMPT]);
}

#[test]
fn user_message_copies_of_context_are_meta() {
    let src = file(&[
        user("<environment_context>\n<cwd>/w</cwd>\n</environment_context>"),
        user("hi"),
        user_msg("hi"),
        event(
            json!({"type": "user_message", "kind": "environment_context",
                     "message": "<environment_context>\n<cwd>/w</cwd>\n</environment_context>"}),
        ),
    ]);
    let t = read(&src);
    use Role::*;
    assert_eq!(roles(&t), vec![Context, PROMPT, Meta, Meta]);
}

// ---------------------------------------------------------------------------------------------
// Turns, steering, compaction.

#[test]
fn prompt_during_a_running_task_is_steering() {
    let src = file(&[
        task_started("T1"),                                                      // 0
        user("Build it"),                                                        // 1
        user_msg("Build it"),                                                    // 2
        call("exec_command", r#"{"cmd":"cargo build"}"#, "c1"),                  // 3
        user("also add tests"),                                                  // 4
        user_msg("also add tests"),                                              // 5
        output("c1", json!("Process exited with code 0\nOutput:\nok")),          // 6
        assistant("Built, tests added.", Some("final_answer")),                  // 7
        task_complete("T1", "Built, tests added."),                              // 8
        event(json!({"type": "user_message", "message": "Next", "images": []})), // 9
        task_started("T2"),                                                      // 10
        user("Next"),                                                            // 11
        user("and more"),     // 12: steering in T2
        user_msg("and more"), // 13
        event(json!({"type": "turn_aborted", "reason": "interrupted", "duration_ms": 10})), // 14
    ]);
    let t = read(&src);
    use Role::*;
    let r = roles(&t);
    assert_eq!(r[1], PROMPT);
    assert_eq!(r[4], Steering);
    assert_eq!(texts(&src, &t.entries[4]), ["also add tests"]);
    assert_eq!(r[5], Meta);
    assert_eq!(r[9], Meta);
    assert_eq!(r[11], PROMPT);
    assert_eq!(r[12], Steering);
    assert_eq!(r[13], Meta);
    assert_eq!(r[14], Interruption);
    assert_eq!(
        t.entries[7].step.as_ref().unwrap().stop,
        Some(StopReason::EndTurn)
    );
}

#[test]
fn one_divider_per_compaction() {
    let boundary = Role::CompactBoundary(Box::new(transcript_ls::model::CompactBoundary {
        trigger: None,
        pre_tokens: None,
    }));
    let src = file(&[
        rec(
            "compacted",
            json!({"message": "Summary of the work so far.",
                                "replacement_history": [{"type": "message", "role": "user",
                                   "content": [{"type": "input_text", "text": "old"}]}]}),
        ), // 0
        event(json!({"type": "context_compacted"})), // 1: follows a compacted
        user("next"),                                // 2
        event(json!({"type": "context_compacted"})), // 3: alone
        rec("compacted", json!({"message": ""})),    // 4
        turn_context("gpt-5"),                       // 5
        token_null(),                                // 6
        event(json!({"type": "context_compacted"})), // 7: only context/meta in between
    ]);
    let t = read(&src);
    use Role::*;
    assert_eq!(
        roles(&t),
        vec![
            boundary.clone(),
            Meta,
            PROMPT,
            boundary.clone(),
            boundary,
            Context,
            Meta,
            Meta
        ]
    );
    assert_eq!(texts(&src, &t.entries[0]), ["Summary of the work so far."]);
    assert!(t.entries[4].blocks.is_empty());
    assert_eq!(t.entries[0].record_type.as_ref(), "compacted");
    assert_eq!(
        t.entries[1].record_type.as_ref(),
        "event_msg/context_compacted"
    );
}

// ---------------------------------------------------------------------------------------------
// Reasoning, tool calls, tool results.

#[test]
fn reasoning_encrypted_or_with_text() {
    let raw_text = item(json!({"type": "reasoning", "summary": [],
                               "content": [{"type": "reasoning_text", "text": "raw thoughts"}]}));
    let src = file(&[
        reasoning(&[], true),
        reasoning(&["**Plan**\n\nRead first"], true),
        reasoning(&["first part", "second part"], false),
        raw_text,
        reasoning(&[], false),
    ]);
    let t = read(&src);
    let th: Vec<(String, bool)> = t.entries.iter().map(|e| thinking(&src, e)).collect();
    assert_eq!(
        th,
        [
            (String::new(), true),
            ("**Plan**\n\nRead first".to_string(), false),
            ("first part".to_string(), false),
            ("raw thoughts".to_string(), false),
            (String::new(), false),
        ]
    );
    // No token counts and no inputs between them: all one call.
    assert!(t.entries.iter().all(|e| key(e) == Some("codex-call-1")));
}

#[test]
fn agent_reasoning_copies_pair_with_each_summary_part() {
    let src = file(&[
        agent_reasoning("first part"),
        agent_reasoning("second part"),
        reasoning(&["first part", "second part"], true),
        agent_reasoning("third"),
    ]);
    let t = read(&src);
    use Role::*;
    assert_eq!(roles(&t), vec![Meta, Meta, Model, Model]);
}

#[test]
fn tool_call_summaries() {
    let long = "x".repeat(200);
    let src = file(&[
        call("exec_command", r#"{"cmd":"cargo test --workspace","workdir":"/w"}"#, "c1"),
        call("shell", r#"{"command":["bash","-lc","rg foo"],"timeout_ms":1000}"#, "c2"),
        call(
            "update_plan",
            r#"{"explanation":"x","plan":[{"step":"a","status":"pending"},{"step":"b","status":"pending"},{"step":"c","status":"completed"}]}"#,
            "c3",
        ),
        call("mcp__fs__read_file", r#"{"limit":10,"path":"/w/README.md"}"#, "c4"),
        custom_call("apply_patch", "*** Begin Patch\n*** Add File: docs/new.md\n+hi\n*** End Patch\n", "c5"),
        custom_call(
            "apply_patch",
            "*** Begin Patch\n*** Delete File: old.rs\n*** Update File: src/lib.rs\n@@\n-a\n+b\n*** End Patch",
            "c6",
        ),
        call(
            "shell",
            &json!({"command": ["apply_patch", "*** Begin Patch\n*** Update File: a.rs\n@@\n-x\n+y\n*** End Patch\n"]}).to_string(),
            "c7",
        ),
        call("apply_patch", &json!({"input": "*** Begin Patch\n*** Add File: b.rs\n+z\n*** End Patch"}).to_string(), "c8"),
        item(json!({"type": "web_search_call", "id": "ws_1", "status": "completed",
                    "action": {"type": "search", "query": "rust serde raw value"}})),
        call("exec_command", &json!({"cmd": long}).to_string(), "c10"),
        call("exec_command", &json!({"cmd": "cat <<'EOF' > a.txt\nhello\nEOF"}).to_string(), "c11"),
        item(json!({"type": "local_shell_call", "call_id": "c12", "status": "completed",
                    "action": {"type": "exec", "command": ["ls", "-la"]}})),
        call("mystery", "not json at all\nsecond line", "c13"),
    ]);
    let t = read(&src);
    let calls: Vec<(String, String, String)> = t
        .entries
        .iter()
        .map(|e| {
            assert_eq!(e.role, Role::Model);
            let u = tool_use(e);
            (u.name.to_string(), u.id.to_string(), u.summary.clone())
        })
        .collect();
    let mut long_summary = "x".repeat(159);
    long_summary.push('…');
    let expect = [
        ("exec_command", "c1", "cargo test --workspace"),
        ("shell", "c2", "bash -lc rg foo"),
        ("update_plan", "c3", "3 steps"),
        ("mcp__fs__read_file", "c4", "/w/README.md"),
        ("apply_patch", "c5", "docs/new.md"),
        ("apply_patch", "c6", "src/lib.rs"),
        ("shell", "c7", "apply_patch a.rs"),
        ("apply_patch", "c8", "b.rs"),
        ("web_search", "ws_1", "rust serde raw value"),
        ("exec_command", "c10", long_summary.as_str()),
        ("exec_command", "c11", "cat <<'EOF' > a.txt"),
        ("local_shell", "c12", "ls -la"),
        ("mystery", "c13", "not json at all"),
    ];
    let expect: Vec<(String, String, String)> = expect
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect();
    assert_eq!(calls, expect);
    // input spans: the contents of the `arguments` / `input` string, escapes undecoded.
    let c1 = tool_use(&t.entries[0]);
    assert_eq!(
        &src[c1.input.clone()],
        r#"{\"cmd\":\"cargo test --workspace\",\"workdir\":\"/w\"}"#
    );
    let c5 = tool_use(&t.entries[4]);
    assert!(
        json_string::decode(&src[c5.input.clone()]).starts_with("*** Begin Patch\n*** Add File")
    );
    let ws = tool_use(&t.entries[8]);
    assert_eq!(
        &src[ws.input.clone()],
        r#"{"query":"rust serde raw value","type":"search"}"#
    );
    // The block span is the whole payload object.
    let b = &t.entries[0].blocks[0];
    assert!(
        src[b.span.clone()].starts_with('{') && src[b.span.clone()].contains("\"call_id\":\"c1\"")
    );
}

#[test]
fn tool_results_exit_codes_and_summaries() {
    let old_fail = json!({"output": "\nerror[E0425]: cannot find value `x`\n", "metadata": {"exit_code": 1, "duration_seconds": 0.3}}).to_string();
    let old_ok = json!({"output": "a\nb\n", "metadata": {"exit_code": 0, "duration_seconds": 0.1}})
        .to_string();
    let src = file(&[
        output("c1", json!(old_fail)),
        output("c2", json!(old_ok)),
        output(
            "c3",
            json!(
                "Chunk ID: 9f\nWall time: 1.2 seconds\nProcess exited with code 101\nOriginal token count: 12\nOutput:\n\nthread 'main' panicked\n"
            ),
        ),
        output(
            "c4",
            json!("Chunk ID: 9f\nWall time: 0.1 seconds\nProcess exited with code 0\nOutput:\n"),
        ),
        item(json!({"type": "custom_tool_call_output", "call_id": "c5",
                    "output": "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nM src/lib.rs\n"})),
        item(json!({"type": "custom_tool_call_output", "call_id": "c6",
                    "output": [{"type": "input_text", "text": "Process exited with code 3\nOutput:\nnope"}]})),
        output(
            "c7",
            json!([{"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}]),
        ),
        output(
            "c8",
            json!("Process running with session ID 7\nOutput:\nwatching…"),
        ),
        output(
            "c9",
            json!({"content": "denied by policy", "success": false}),
        ),
        output("c10", json!("plain text result")),
    ]);
    let t = read(&src);
    let got: Vec<(String, bool, String)> = t
        .entries
        .iter()
        .map(|e| {
            assert_eq!(e.role, Role::ToolResults);
            let r = tool_result(e);
            (r.tool_use_id.to_string(), r.is_error, r.summary.clone())
        })
        .collect();
    let expect = [
        ("c1", true, "error[E0425]: cannot find value `x`"),
        ("c2", false, "a"),
        ("c3", true, "thread 'main' panicked"),
        ("c4", false, ""),
        ("c5", false, "Success. Updated the following files:"),
        ("c6", true, "nope"),
        ("c7", false, "[image image/png]"),
        ("c8", false, "watching…"),
        ("c9", true, "denied by policy"),
        ("c10", false, "plain text result"),
    ];
    let expect: Vec<(String, bool, String)> = expect
        .iter()
        .map(|(a, b, c)| (a.to_string(), *b, c.to_string()))
        .collect();
    assert_eq!(got, expect);
    let img = tool_result(&t.entries[6]);
    assert_eq!(img.images, vec![("image/png".into(), 12)]);
    // String content spans the literal's contents; array content spans the array.
    let r10 = tool_result(&t.entries[9]);
    assert_eq!(&src[r10.content.clone()], "plain text result");
    assert_eq!(r10.content_len, "plain text result".len());
    assert!(src[img.content.clone()].starts_with('[') && src[img.content.clone()].ends_with(']'));
}

#[test]
fn prompt_blocks_text_and_images() {
    let src = file(
        &[item(json!({"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "What is in this screenshot?"},
            {"type": "input_image", "image_url": "data:image/jpeg;base64,/9j/4AAQ"}]}))],
    );
    let t = read(&src);
    let e = &t.entries[0];
    assert_eq!(e.role, PROMPT);
    assert_eq!(e.blocks.len(), 2);
    assert_eq!(
        e.blocks[1].kind,
        BlockKind::Image {
            media_type: "image/jpeg".into(),
            data_len: 8
        }
    );
    assert_eq!(
        &src[e.blocks[1].span.clone()],
        r#"{"image_url":"data:image/jpeg;base64,/9j/4AAQ","type":"input_image"}"#
    );
    // A stand-in prompt (a copy with no item): text plus its images.
    let src = file(&[event(
        json!({"type": "user_message", "message": "Look: \"quoted\"\n",
                 "images": ["data:image/png;base64,AAAA"], "local_images": ["/tmp/x.png"]}),
    )]);
    let t = read(&src);
    let e = &t.entries[0];
    assert_eq!(e.role, PROMPT);
    let BlockKind::Text { text } = &e.blocks[0].kind else {
        panic!()
    };
    assert_eq!(&src[text.raw.clone()], r#"Look: \"quoted\"\n"#);
    assert_eq!(text.decode(&src), "Look: \"quoted\"\n");
    assert_eq!(
        e.blocks[1].kind,
        BlockKind::Image {
            media_type: "image/png".into(),
            data_len: 4
        }
    );
    assert_eq!(
        e.blocks[2].kind,
        BlockKind::Image {
            media_type: "image/unknown".into(),
            data_len: 0
        }
    );
}

// ---------------------------------------------------------------------------------------------
// Legacy rollouts.

#[test]
fn legacy_rollout_without_envelope() {
    let lines = [
        r#"{"id":"L-1","timestamp":"2025-05-01T10:00:00.000-08:00","instructions":null,"git":{"commit_hash":"abc","branch":"main"}}"#,
        r#"{"record_type":"state"}"#,
        r#"{"type":"message","id":null,"role":"user","content":[{"type":"input_text","text":"<user_instructions>\n\nBe terse.\n\n</user_instructions>"}]}"#,
        r#"{"type":"message","id":null,"role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"}]}"#,
        r#"{"type":"message","id":null,"role":"user","content":[{"type":"input_text","text":"list files"}]}"#,
        r#"{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAAB"}"#,
        r#"{"type":"function_call","id":"fc_1","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"ls\"]}","call_id":"call_1"}"#,
        r#"{"type":"function_call_output","call_id":"call_1","output":"{\"output\":\"a\\nb\\n\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.1}}"}"#,
        r#"{"record_type":"state"}"#,
        r#"{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"Two files: a and b."}]}"#,
        r#"{"type":"message","id":null,"role":"user","content":[{"type":"input_text","text":"thanks"}]}"#,
        r#"{"type":"message","id":"msg_2","role":"assistant","content":[{"type":"output_text","text":"You're welcome."}]}"#,
    ];
    let src = file(&lines.map(String::from));
    let t = read(&src);
    assert_one_entry_per_line(&src, &t);
    use Role::*;
    assert_eq!(
        roles(&t),
        vec![
            Context,
            Meta,
            Context,
            Context,
            PROMPT,
            Model,
            Model,
            ToolResults,
            Meta,
            Model,
            PROMPT,
            Model
        ]
    );
    let e = &t.entries;
    let types: Vec<&str> = e.iter().map(|e| e.record_type.as_ref()).collect();
    assert_eq!(
        types,
        [
            "session_meta",
            "state",
            "message",
            "message",
            "message",
            "reasoning",
            "function_call",
            "function_call_output",
            "state",
            "message",
            "message",
            "message"
        ]
    );
    assert_eq!(e[0].timestamp_ms(), Some(1_746_122_400_000));
    assert_eq!(e[4].timestamp_ms(), None);
    assert_eq!(t.meta.session_id.as_deref(), Some("L-1"));
    assert_eq!(thinking(&src, &e[5]), (String::new(), true));
    assert_eq!(tool_use(&e[6]).summary, "bash -lc ls");
    let r = tool_result(&e[7]);
    assert_eq!((r.is_error, r.summary.as_str()), (false, "a"));
    // No token counts: a model record after a tool result or prompt starts a new call.
    let keys: Vec<Option<&str>> = e.iter().map(key).collect();
    assert_eq!(
        keys,
        [
            None,
            None,
            None,
            None,
            None,
            Some("codex-call-1"),
            Some("codex-call-1"),
            None,
            None,
            Some("codex-call-2"),
            None,
            Some("codex-call-3")
        ]
    );
    assert!(t.problems.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Robustness: one entry per line, whatever the line holds.

#[test]
fn malformed_and_unknown_lines_each_get_one_entry() {
    let lines = [
        session_meta("S-G"),                                                          // 0
        "{not json".to_string(),                                                      // 1
        "[1,2]".to_string(),                                                          // 2
        "   ".to_string(),                                                            // 3 blank
        r#"{"timestamp":"2026-03-03T08:00:00Z","type":"event_msg","payload":"oops"}"#.to_string(), // 4
        r#"{"timestamp":"2026-03-03T08:00:00Z","type":"mystery","payload":{"a":1}}"#.to_string(), // 5
        r#"{"type":"response_item","payload":{"type":"message","role":"user","content":[],"role":"x"}}"#.to_string(), // 6
        item(json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": 5}, {"type": "fancy"}, 7]})), // 7
        item(json!({"type": "future_item", "x": 1})),                                 // 8
        rec("response_item", json!({"role": "assistant"})),                           // 9
        item(json!({"type": "message", "role": "critic", "content": "plain string content"})), // 10
        r#"{"timestamp":"[trimmed for fixture]","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":"n/a"}}}"#.to_string(), // 11
        "{}".to_string(),                                                             // 12
    ];
    let src = file(&lines);
    let t = read(&src);
    assert_one_entry_per_line(&src, &t);
    use Role::*;
    assert_eq!(
        roles(&t),
        vec![
            Context, Unparsed, Unparsed, Other, Other, Other, PROMPT, Other, Other, Other, Meta,
            Other
        ]
    );
    let e = &t.entries;
    assert_eq!(e[4].record_type.as_ref(), "mystery");
    assert_eq!(e[6].record_type.as_ref(), "response_item/message");
    assert_eq!(
        e[6].blocks
            .iter()
            .map(|b| b.kind.clone())
            .collect::<Vec<_>>(),
        [
            BlockKind::Other {
                block_type: "input_text".into()
            },
            BlockKind::Other {
                block_type: "fancy".into()
            },
            BlockKind::Other {
                block_type: "unknown".into()
            },
        ]
    );
    assert_eq!(e[7].record_type.as_ref(), "response_item/future_item");
    assert_eq!(e[8].record_type.as_ref(), "response_item");
    assert_eq!(texts(&src, &e[9]), ["plain string content"]);
    assert_eq!(e[10].timestamp_ms(), None);
    let problem_lines: Vec<usize> = t.problems.iter().map(|p| p.line).collect();
    assert_eq!(problem_lines, [1, 2, 4, 6, 11]);
    assert!(
        t.problems[0].message.starts_with("invalid JSON:"),
        "{}",
        t.problems[0].message
    );
    assert_eq!(t.problems[1].message, "record is not a JSON object");
}

#[test]
fn incremental_feeding_gives_the_same_transcript() {
    for src in [
        shared("cases/15-codex-dual-log-duplicates.jsonl"),
        shared("cases/13-codex-token-count-reemits.jsonl"),
        dual_logged_turn(true),
        shared(CATALOG),
    ] {
        let whole = formats::read(&src);
        let mut reader = Reader::new();
        let mut cut = 0;
        while cut < src.len() {
            cut = (cut + 97).min(src.len());
            while !src.is_char_boundary(cut) {
                cut += 1;
            }
            reader.feed(&src[..cut]);
        }
        reader.finish(&src);
        let t = reader.into_transcript();
        assert_eq!(t.entries, whole.entries);
        assert_eq!(t.meta, whole.meta);
    }
}

// ---------------------------------------------------------------------------------------------
// The schema catalog: every line accounted for.

#[test]
fn catalog_every_line_accounted_for() {
    let src = shared(CATALOG);
    let t = read(&src);
    insta::assert_snapshot!("catalog", dump(&src, &t));
    assert_one_entry_per_line(&src, &t);
    assert_eq!(t.entries.len(), 118);
    assert!(t.problems.is_empty(), "{:?}", t.problems);
    assert!(
        !t.entries
            .iter()
            .any(|e| e.role == Role::Unparsed || e.role == Role::Other)
    );
    let count = |f: &dyn Fn(&Role) -> bool| t.entries.iter().filter(|e| f(&e.role)).count();
    // Line 100 is an `item_completed` UserMessage with no response item: it stands in for
    // it (as do the AgentMessage / Reasoning copies on 101, 105, 109).
    assert_eq!(count(&|r| *r == PROMPT), 4);
    assert_eq!(count(&|r| *r == Role::Model), 14);
    assert_eq!(count(&|r| *r == Role::ToolResults), 6);
    assert_eq!(count(&|r| *r == Role::Context), 24);
    assert_eq!(count(&|r| matches!(r, Role::CompactBoundary { .. })), 7);
    assert_eq!(count(&|r| matches!(r, Role::TurnStarted { .. })), 2);
    assert_eq!(count(&|r| matches!(r, Role::TurnCompleted { .. })), 2);
    assert_eq!(count(&|r| *r == Role::Interruption), 1);
    assert_eq!(count(&|r| *r == Role::Meta), 58);
    // Kinds this reader does not model are kept with their record type.
    let e = &t.entries;
    assert_eq!(e[2].record_type.as_ref(), "world_state");
    assert_eq!(
        e[31].record_type.as_ref(),
        "inter_agent_communication_metadata"
    );
    assert_eq!(e[31].role, Role::Meta);
    assert_eq!(e[79].record_type.as_ref(), "response_item/ghost_snapshot");
    assert_eq!(
        e[24].role,
        Role::TurnCompleted(Box::new(transcript_ls::model::TurnCompleted {
            turn_id: Some("019fc8be-0000-7000-8000-000000000001".into()),
            duration_ms: Some(1200),
            time_to_first_token_ms: Some(300)
        }))
    );
    assert_eq!(e[19].role, Role::Interruption);
    // The user_message copy (line 3) precedes its item (line 5) across task_started.
    assert_eq!((e[3].role.clone(), e[5].role.clone()), (Role::Meta, PROMPT));
    assert_eq!(
        t.meta.session_id.as_deref(),
        Some("019fc8be-3658-7ca3-9e29-000000000000")
    );
    assert_eq!(t.meta.version.as_deref(), Some("0.146.0"));
    assert_eq!(t.meta.model.as_deref(), Some("gpt-5.6-luna"));
}

#[test]
fn cases_13_and_15_snapshots() {
    for (name, path) in [
        ("case_13", "cases/13-codex-token-count-reemits.jsonl"),
        ("case_15", "cases/15-codex-dual-log-duplicates.jsonl"),
    ] {
        let src = shared(path);
        insta::assert_snapshot!(name, dump(&src, &read(&src)));
    }
}

// ---------------------------------------------------------------------------------------------
// Detection.

#[test]
fn detect_line_knows_codex_shapes() {
    let codex = [
        r#"{"timestamp":"t","type":"world_state","payload":{"full":true}}"#,
        r#"{"id":"x","timestamp":"t","instructions":null,"git":null}"#,
        r#"{"id":"x","timestamp":"t","git":{"branch":"main"}}"#,
        r#"{"record_type":"state"}"#,
        r#"{"type":"message","role":"user","content":[]}"#,
        r#"{"type":"function_call","name":"shell","arguments":"{}","call_id":"c"}"#,
        r#"{"type":"reasoning","summary":[]}"#,
    ];
    for line in codex {
        assert_eq!(detect_line(line), Some(Format::Codex), "{line}");
    }
    let not_codex = [
        r#"{"type":"message","id":"1","parentId":null,"message":{"role":"user"}}"#,
        r#"{"type":"user","uuid":"u","sessionId":"s","message":{"role":"user","content":"hi"}}"#,
        r#"{"type":"message"}"#,
    ];
    for line in not_codex {
        assert_ne!(detect_line(line), Some(Format::Codex), "{line}");
    }
    // Every line of the catalog says Codex; no line of the other corpus files does.
    for line in shared(CATALOG).lines() {
        assert_eq!(detect_line(line), Some(Format::Codex), "{line}");
    }
    let mut others = 0;
    for entry in walk(&format!("{SHARED}/corpus")) {
        if entry.ends_with(".jsonl") && !entry.contains("agents/codex/") {
            for line in std::fs::read_to_string(&entry).unwrap().lines() {
                assert_ne!(detect_line(line), Some(Format::Codex), "{entry}: {line}");
                others += 1;
            }
        }
    }
    assert!(others > 1000, "corpus lines checked: {others}");
}

fn walk(dir: &str) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let p = path.to_string_lossy().into_owned();
        if path.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The project's own Codex fixtures (fixtures/rules/README.md § Codex).

fn fixture(path: &str) -> String {
    let p = format!("{}/../fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

#[test]
fn fixture_codex_rollout_two_calls_one_answer() {
    let src = fixture("rules/codex-rollout.jsonl");
    let t = read(&src);
    assert_one_entry_per_line(&src, &t);
    use Role::*;
    let r = roles(&t);
    assert_eq!(
        &r[..8],
        &[
            Context,
            Context,
            Context,
            TurnStarted {
                turn_id: Some(Box::new("019e2a4c-7b90-7f13-a2c4-58d9e0f1a623".into()))
            },
            Context,
            PROMPT,
            Meta,
            Meta
        ]
    );
    assert_eq!(
        &r[8..17],
        &[
            Model,
            Meta,
            Model,
            Meta,
            Meta,
            ToolResults,
            Meta,
            Model,
            Meta
        ]
    );
    assert_eq!(
        r[17],
        TurnCompleted(Box::new(transcript_ls::model::TurnCompleted {
            turn_id: Some("019e2a4c-7b90-7f13-a2c4-58d9e0f1a623".into()),
            duration_ms: Some(10204),
            time_to_first_token_ms: Some(1320)
        }))
    );
    let e = &t.entries;
    assert_eq!(
        texts(&src, &e[5]),
        ["Where is the currency code parsed? Show me the function signature."]
    );
    let keys: Vec<(usize, &str)> = e
        .iter()
        .enumerate()
        .filter_map(|(i, e)| key(e).map(|k| (i, k)))
        .collect();
    assert_eq!(
        keys,
        [
            (8, "codex-call-1"),
            (10, "codex-call-1"),
            (15, "codex-call-2")
        ]
    );
    assert_eq!(total_usage(&t), u(4110, 16000, 412, 160));
    assert_eq!(e[15].step.as_ref().unwrap().stop, Some(StopReason::EndTurn));
    assert_eq!(
        e[15].step.as_ref().unwrap().model.as_deref(),
        Some("gpt-5.3-codex")
    );
    assert_eq!(
        tool_use(&e[10]).id.as_ref(),
        "call_Qx7mB2vN9pL4kD1sF8hJ3tR6"
    );
    assert_eq!(
        tool_result(&e[13]).tool_use_id.as_ref(),
        "call_Qx7mB2vN9pL4kD1sF8hJ3tR6"
    );
    let answers: usize = e
        .iter()
        .filter(|e| e.role == Model)
        .map(|e| texts(&src, e).len())
        .sum();
    assert_eq!(answers, 1);
}

#[test]
fn fixture_codex_unfinished_ends_on_a_call() {
    let src = fixture("rules/codex-unfinished.jsonl");
    let t = read(&src);
    assert_one_entry_per_line(&src, &t);
    let e = &t.entries;
    assert_eq!(e[5].role, PROMPT);
    assert_eq!(
        texts(&src, &e[5]),
        ["Build the release binary and tell me its size."]
    );
    assert_eq!(e[10].role, Role::Model);
    assert!(
        tool_use(&e[10])
            .summary
            .starts_with("cargo build --release")
    );
    assert_eq!(usage(&e[10]), Some(u(3390, 6400, 131, 96)));
    assert!(
        !e.iter()
            .any(|e| matches!(e.role, Role::ToolResults | Role::TurnCompleted { .. }))
    );
}

#[test]
fn truncated_records_never_panic_and_keep_one_entry_per_line() {
    let catalog = shared(CATALOG);
    let mut lines: Vec<String> = catalog.lines().map(String::from).collect();
    lines.extend(dual_logged_turn(true).lines().map(String::from));
    lines.push(call("shell", r#"{"command":["bash","-lc","echo é"]}"#, "c"));
    lines.push(output(
        "c",
        json!("Process exited with code 1\nOutput:\né\n"),
    ));
    let head = session_meta("S-T");
    let mut reads = 0;
    for line in &lines {
        let step = (line.len() / 23).max(1);
        let mut cut = 0;
        while cut < line.len() {
            if line.is_char_boundary(cut) {
                let src = format!("{head}\n{}\n{}\n", &line[..cut], user("after"));
                let t = formats::read(&src);
                assert_one_entry_per_line(&src, &t);
                assert_eq!(
                    t.entries.last().map(|e| e.role.clone()),
                    Some(PROMPT),
                    "{src}"
                );
                reads += 1;
            }
            cut += step;
        }
    }
    assert!(reads > 2000, "{reads}");
}

// ---------------------------------------------------------------------------------------------
// Forks (issue 9 item 4).

/// A line with its own timestamp and ordinal.
fn at(ts: &str, ordinal: u64, line: String) -> String {
    let mut v: Value = serde_json::from_str(&line).unwrap();
    v["timestamp"] = json!(ts);
    v["ordinal"] = json!(ordinal);
    v.to_string()
}

#[test]
fn fork_replay_stamped_with_one_instant_is_inherited() {
    let fork = rec(
        "session_meta",
        json!({"id": "thr-fork", "forked_from_id": "thr-main", "cli_version": "0.150.0"}),
    );
    let (a, b) = ("2026-03-03T08:00:00.000Z", "2026-03-03T08:05:00.000Z");
    let src = file(&[
        at(a, 0, fork),                   // 0
        at(a, 1, user("old prompt")),     // 1 replay
        at(a, 2, assistant("old", None)), // 2 replay
        at(b, 3, task_started("T")),      // 3 own work: a later instant
        at(b, 4, user("new prompt")),     // 4
        at(b, 5, assistant("new", None)), // 5
    ]);
    let t = read(&src);
    let inherited: Vec<bool> = t.entries.iter().map(|e| e.inherited).collect();
    assert_eq!(inherited, [false, true, true, false, false, false]);
    assert_eq!(t.meta.parent_thread_id.as_deref(), Some("thr-main"));
}

#[test]
fn fork_replay_up_to_the_history_start_ordinal_is_inherited() {
    let fork = rec(
        "session_meta",
        json!({"id": "thr-fork", "parent_thread_id": "thr-main",
               "subagent_history_start_ordinal": 3, "thread_source": "guardian_review"}),
    );
    let (a, b) = ("2026-03-03T08:00:00.000Z", "2026-03-03T08:00:00.001Z");
    let src = file(&[
        at(a, 0, fork),                   // 0
        at(a, 1, user("old prompt")),     // 1
        at(b, 2, assistant("old", None)), // 2: another instant, still below ordinal 3
        at(b, 3, user("review this")),    // 3 own
    ]);
    let t = read(&src);
    let inherited: Vec<bool> = t.entries.iter().map(|e| e.inherited).collect();
    assert_eq!(inherited, [false, true, true, false]);
    assert!(t.meta.automatic_review);
}

/// Issue 20 item 1: a `/fork` replay is read by its turn ids, not its stamps: UUIDv7 turn ids
/// that sort before the child's own thread id are the parent's (inherited, whatever their
/// millisecond), the first one after it starts the child's own work. A fork's `session_meta`
/// opens a replay wherever it is (here on line 3, after another rollout), and the child's own
/// `session_meta` written again (a resume) opens none.
#[test]
fn fork_replay_ends_at_the_first_turn_of_the_child() {
    let (parent, child) = (
        "019e5000-0000-7000-8000-00000000a001",
        "019e5100-0000-7000-8000-00000000c001",
    );
    let (p1, c1, c2) = (
        "019e5000-1000-7000-8000-0000000000b1",
        "019e5100-1000-7000-8000-0000000000d1",
        "019e5100-2000-7000-8000-0000000000d2",
    );
    let fork = rec(
        "session_meta",
        json!({"id": child, "forked_from_id": parent, "cli_version": "0.147.0"}),
    );
    let ms = |n: u32| format!("2026-03-03T08:00:00.{n:03}Z");
    let stamp = |n: u32, line: String| {
        let mut v: Value = serde_json::from_str(&line).unwrap();
        v["timestamp"] = json!(ms(n));
        v.to_string()
    };
    let src = file(&[
        stamp(0, session_meta("other")), // 0 an earlier rollout
        stamp(0, user("unrelated")),     // 1
        stamp(1, fork.clone()),          // 2 the fork, not on line 1
        stamp(2, session_meta(parent)),  // 3 replay
        stamp(2, task_started(p1)),      // 4
        stamp(3, user("old prompt")),    // 5
        stamp(40, assistant("old answer", Some("final_answer"))), // 6
        stamp(41, token_count(1000, 0, 12, 0)), // 7
        stamp(233, task_complete(p1, "old answer")), // 8
        stamp(240, task_started(c1)),    // 9 own
        stamp(241, user("new prompt")),  // 10
        stamp(300, fork),                // 11 the child resumed
        stamp(301, task_started(c2)),    // 12
        stamp(302, user("next prompt")), // 13
    ]);
    let t = read(&src);
    let inherited: Vec<usize> = (0..t.entries.len())
        .filter(|&i| t.entries[i].inherited)
        .collect();
    assert_eq!(inherited, (3..=8).collect::<Vec<_>>());
    assert_eq!(t.meta.session_id.as_deref(), Some("other"));
    assert_eq!(t.meta.parent_thread_id, None);
}

/// Turn ids that are not UUIDs cannot be ordered: the replay then ends at the first record
/// with another stamp (the rule of rollouts without UUIDs), and a replay with neither UUIDs
/// nor stamps is assumed to be none.
#[test]
fn fork_replay_without_uuids_falls_back_to_its_instant() {
    let fork = rec(
        "session_meta",
        json!({"id": "019e5100-0000-7000-8000-00000000c001", "forked_from_id": "thr-main"}),
    );
    let (a, b) = ("2026-03-03T08:00:00.000Z", "2026-03-03T08:00:00.004Z");
    let src = file(&[
        at(a, 0, fork.clone()),        // 0
        at(a, 1, task_started("t-1")), // 1 replay
        at(a, 2, user("old prompt")),  // 2
        at(b, 3, task_started("t-2")), // 3 own: another instant
        at(b, 4, user("new prompt")),  // 4
    ]);
    let t = read(&src);
    let inherited: Vec<bool> = t.entries.iter().map(|e| e.inherited).collect();
    assert_eq!(inherited, [false, true, true, false, false]);

    let mut no_time: Value = serde_json::from_str(&fork).unwrap();
    no_time["timestamp"] = json!("[trimmed]");
    let line = |l: String| {
        let mut v: Value = serde_json::from_str(&l).unwrap();
        v["timestamp"] = json!("[trimmed]");
        v.to_string()
    };
    let src = file(&[
        no_time.to_string(),
        line(task_started("t-1")),
        line(user("a prompt")),
    ]);
    let t = read(&src);
    assert!(t.entries.iter().all(|e| !e.inherited));
}

/// `token_usage_record` counts only when a `compacted.compaction_response_id` names it, in
/// either order (issue 9 item 5); an unnamed one counts nothing.
#[test]
fn token_usage_record_counts_only_when_a_compaction_names_it() {
    let record = |id: &str, out: u64| {
        rec(
            "token_usage_record",
            json!({"response_id": id, "usage": {"input_tokens": 1000, "cached_input_tokens": 400,
                   "output_tokens": out, "reasoning_output_tokens": 0}}),
        )
    };
    let compacted = |id: &str| {
        rec(
            "compacted",
            json!({"message": "summary", "compaction_response_id": id,
                   "replacement_history": []}),
        )
    };
    let src = file(&[
        record("resp_a", 70), // 0 named later
        compacted("resp_a"),  // 1
        compacted("resp_b"),  // 2
        record("resp_b", 30), // 3 named before
        record("resp_c", 11), // 4 never named
    ]);
    let t = read(&src);
    assert_eq!(total_usage(&t), u(1_200, 800, 100, 0));
    assert_eq!(usage(&t.entries[4]), None);
    assert!(t.entries.iter().all(|e| e.role != Role::Other));
}

/// `collab_agent_spawn_end` links the spawning call and its output to the child thread by id
/// (issue 9 item 4), whether the output comes before or after the event.
#[test]
fn spawn_end_links_the_call_to_the_child_thread() {
    let spawn = |call: &str, thread: &str| {
        event(json!({"type": "collab_agent_spawn_end", "call_id": call,
                     "sender_thread_id": "thr-main", "new_thread_id": thread,
                     "new_agent_nickname": "scout", "new_agent_role": "explorer"}))
    };
    let src = file(&[
        user("Survey the repo"),                                   // 0
        call("spawn_agent", r#"{"message":"survey db/"}"#, "c1"),  // 1
        spawn("c1", "thr-child-1"),                                // 2 before the output
        output("c1", json!("spawned")),                            // 3
        call("spawn_agent", r#"{"message":"survey src/"}"#, "c2"), // 4
        output("c2", json!("spawned")),                            // 5
        spawn("c2", "thr-child-2"),                                // 6 after the output
    ]);
    let t = read(&src);
    for (use_line, result_line, thread) in [(1, 3, "thr-child-1"), (4, 5, "thr-child-2")] {
        let s = tool_use(&t.entries[use_line]).subagent.clone().unwrap();
        assert_eq!(
            (s.description.as_deref(), s.agent_type.as_deref()),
            (Some("scout"), Some("explorer"))
        );
        let r = tool_result(&t.entries[result_line])
            .subagent
            .clone()
            .unwrap();
        assert_eq!(r.agent_id.as_deref(), Some(thread));
    }
    let a = transcript_ls::analysis::analyze(&t, &src, &Default::default());
    let ids: Vec<Option<&str>> = a
        .subagent_calls
        .iter()
        .map(|c| c.agent_id.as_deref())
        .collect();
    assert_eq!(ids, [Some("thr-child-1"), Some("thr-child-2")]);
}

/// The issue-9 bug: a prompt with an image is written as `[text, "<image>", input_image,
/// "</image>"]` while its `user_message` copy has the typed text and `images`: one prompt,
/// the copy a Meta copy of it (before: two prompts).
#[test]
fn image_prompt_and_its_copy_are_one_prompt() {
    let src = file(&[
        task_started("T"), // 0
        item(json!({"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "Why is this red?"},
            {"type": "input_text", "text": "<image name=[Image #1]>"},
            {"type": "input_image", "image_url": "data:image/png;base64,AAAA"},
            {"type": "input_text", "text": "</image>"}]})), // 1
        event(
            json!({"type": "user_message", "message": "Why is this red?",
                     "images": ["data:image/png;base64,AAAA"], "local_images": []}),
        ), // 2
        assistant("A failing test.", Some("final_answer")), // 3
    ]);
    let t = read(&src);
    let r = roles(&t);
    assert_eq!((r[1].clone(), r[2].clone()), (PROMPT, Role::Meta));
    assert_eq!(t.entries[2].copy_of(), Some(1));
    assert_eq!(r.iter().filter(|x| **x == PROMPT).count(), 1);
}

/// Issue 9: the `<image …>` / `</image>` wrappers around a prompt's image part are not text:
/// the view shows the prompt's text and the image's placeholder only.
#[test]
fn image_wrappers_are_not_prompt_text() {
    let src = file(&[
        task_started("T"),
        item(json!({"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "Why is this red?"},
            {"type": "input_text", "text": "<image name=[Image #1]>"},
            {"type": "input_image", "image_url": "data:image/png;base64,AAAA"},
            {"type": "input_text", "text": "</image>"},
            {"type": "input_text", "text": "<image>"},
            {"type": "input_image", "image_url": "data:image/jpeg;base64,BBBBBBBB"},
            {"type": "input_text", "text": "</image>"}]})),
        assistant("A failing test.", Some("final_answer")),
    ]);
    let t = read(&src);
    let kinds: Vec<String> = t.entries[1]
        .blocks
        .iter()
        .map(|b| match &b.kind {
            BlockKind::Text { text } => format!("text {}", &src[text.raw.clone()]),
            BlockKind::Image {
                media_type,
                data_len,
            } => format!("image {media_type} {data_len}"),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "text Why is this red?",
            "image image/png 4",
            "image image/jpeg 8"
        ]
    );
    let a = transcript_ls::analysis::analyze(&t, &src, &Default::default());
    let v = transcript_ls::view::render(&t, &a, &src, &Default::default());
    let prompt: Vec<&str> = v.text.lines().filter(|l| l.starts_with("> ")).collect();
    assert_eq!(
        prompt,
        [
            "> Why is this red?",
            "> [image/png · 3 B]",
            "> [image/jpeg · 6 B]"
        ],
        "{}",
        v.text
    );
}

/// Issue 20 item 7 (first half), `fixtures/agents/codex-injected-context.jsonl`: a user item
/// with no `user_message` copy, written in its prompt's own millisecond before `turn_context`
/// (line 13, in the turn still running at the end of the file, so no later user item or task
/// end demotes it: the live view), is injected context,
/// not a queued prompt; a user item typed later in a running task, with its copy (line 6),
/// stays steering.
#[test]
fn copyless_user_item_in_the_prompts_millisecond_is_context() {
    let p = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/agents/codex-injected-context.jsonl"
    );
    let src = std::fs::read_to_string(p).unwrap();
    let t = read(&src);
    use Role::*;
    let r = roles(&t);
    assert_eq!(r[2], PROMPT);
    assert_eq!(r[5], Steering);
    assert_eq!(r[6], Meta);
    assert_eq!(r[10], PROMPT);
    assert_eq!(r[11], Meta);
    assert_eq!(r[12], Context, "line 13: {:?}", r);
    let prompts = r.iter().filter(|r| matches!(r, Prompt(_))).count();
    let steering = r.iter().filter(|r| **r == Steering).count();
    assert_eq!((prompts, steering), (2, 1));
}
