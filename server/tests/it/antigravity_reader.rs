//! Antigravity CLI conversations (issue 21 item 3) through the real reader and analysis: our
//! fixtures in `fixtures/antigravity/` (what each one holds: `fixtures/antigravity/README.md`;
//! line numbers here are 0-based) and the corpus's real recordings, counted over the raw lines.

use std::path::{Path, PathBuf};

use transcript_ls::analysis::{self, Analysis, Options, TurnKind, TurnState};
use transcript_ls::formats::{self, Reader};
use transcript_ls::model::{
    BlockKind, Format, Role, SessionStart, Severity, StopReason, Transcript, WakeKind,
};

fn opts() -> Options {
    Options {
        time_zone: Some("UTC".into()),
        file_complete: true,
        ..Default::default()
    }
}

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/antigravity")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn load(name: &str) -> (String, Transcript, Analysis) {
    let src = fixture(name);
    let t = formats::read(&src);
    let a = analysis::analyze(&t, &src, &opts());
    (src, t, a)
}

/// `(n, kind, title, start line, end line)` of each turn after the preamble.
fn turns(a: &Analysis) -> Vec<(usize, TurnKind, String, usize, usize)> {
    a.turns
        .iter()
        .filter(|x| x.kind != TurnKind::Preamble)
        .map(|x| (x.n, x.kind, x.title.clone(), x.start_line, x.end_line))
        .collect()
}

/// The decoded text of each turn's final answer (`None`: replyless).
fn answers(src: &str, t: &Transcript, a: &Analysis) -> Vec<Option<String>> {
    a.turns
        .iter()
        .filter(|x| x.kind != TurnKind::Preamble)
        .map(|x| {
            x.final_answer.as_ref().map(|f| {
                f.blocks
                    .iter()
                    .map(|&(e, b)| match &t.entries[e].blocks[b].kind {
                        BlockKind::Text { text } => text.decode(src).into_owned(),
                        k => panic!("{k:?}"),
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            })
        })
        .collect()
}

/// The kinds of an entry's blocks: `text:<decoded>`, `thinking`, `call:<id> <name> <summary>`,
/// `result:<call id>`, `other:<type>`.
fn blocks(src: &str, t: &Transcript, line: usize) -> Vec<String> {
    let e = t.entries.iter().find(|e| e.line == line).unwrap();
    e.blocks
        .iter()
        .map(|b| match &b.kind {
            BlockKind::Text { text } => format!("text:{}", text.decode(src)),
            BlockKind::Thinking { .. } => "thinking".to_string(),
            BlockKind::ToolUse(u) => format!("call:{} {} {}", u.id, u.name, u.summary),
            BlockKind::ToolResult(r) => format!("result:{}", r.tool_use_id),
            BlockKind::Other { block_type } => format!("other:{block_type}"),
            BlockKind::Image { .. } => "image".to_string(),
        })
        .collect()
}

fn pairs(t: &Transcript, a: &Analysis) -> Vec<(usize, Option<usize>)> {
    a.tool_pairs
        .iter()
        .map(|p| {
            (
                t.entries[p.use_entry].line,
                p.result_entry.map(|r| t.entries[r].line),
            )
        })
        .collect()
}

/// The prompt is the text inside `<USER_REQUEST>`; the sections after it are context blocks;
/// `<USER_SETTINGS_CHANGE>` names the model and effort; a response without tool calls ends
/// the turn with its text as the final answer; the checkpoint is a compaction naming the
/// conversation; plumbing steps are `Meta` with their text kept; no step records tokens.
#[test]
fn prompts_answers_context_and_checkpoint() {
    let (src, t, a) = load("basic.jsonl");
    assert_eq!(t.format(), Format::Antigravity);
    assert_eq!(
        t.meta.session_id.as_deref(),
        Some("11111111-2222-4333-8444-555555555555")
    );
    assert_eq!(t.meta.model.as_deref(), Some("Gemini 3.1 Pro"));
    assert_eq!(t.meta.cwd, None);
    assert_eq!(t.meta.title, None);
    assert_eq!(
        turns(&a),
        vec![
            (
                1,
                TurnKind::Prompt,
                "Reply with exactly the word: ok".into(),
                0,
                4
            ),
            (
                2,
                TurnKind::Prompt,
                "Now say \"still here\" — in quotes".into(),
                5,
                7
            ),
        ]
    );
    assert_eq!(
        blocks(&src, &t, 0),
        vec![
            "text:Reply with exactly the word: ok",
            "other:context:ADDITIONAL_METADATA",
            "other:context:USER_SETTINGS_CHANGE"
        ]
    );
    assert_eq!(
        blocks(&src, &t, 5),
        vec![
            "text:Now say \"still here\" — in quotes",
            "other:context:ADDITIONAL_METADATA"
        ]
    );
    // The context blocks span their whole sections, tags included.
    let e = &t.entries[0];
    assert!(src[e.blocks[1].span.clone()].starts_with("<ADDITIONAL_METADATA>"));
    assert!(src[e.blocks[1].span.clone()].ends_with("</ADDITIONAL_METADATA>"));
    assert!(src[e.blocks[2].span.clone()].ends_with("</USER_SETTINGS_CHANGE>"));
    assert_eq!(
        answers(&src, &t, &a),
        vec![Some("ok".into()), Some("\"still here\"".into())]
    );
    assert_eq!(blocks(&src, &t, 3), vec!["thinking", "text:ok"]);
    let roles: Vec<String> = t
        .entries
        .iter()
        .map(|e| format!("{} {:?}", e.record_type, e.role))
        .collect();
    assert_eq!(
        roles,
        vec![
            "USER_EXPLICIT/USER_INPUT Prompt(Typed)",
            "SYSTEM/CONVERSATION_HISTORY Meta",
            "SYSTEM/EPHEMERAL_MESSAGE Meta",
            "MODEL/PLANNER_RESPONSE Model",
            "SYSTEM/CHECKPOINT CompactBoundary(CompactBoundary { trigger: None, pre_tokens: None })",
            "USER_EXPLICIT/USER_INPUT Prompt(Typed)",
            "SYSTEM/EPHEMERAL_MESSAGE Meta",
            "MODEL/PLANNER_RESPONSE Model",
        ]
    );
    // Plumbing keeps its text; the history step has none.
    assert!(blocks(&src, &t, 2)[0].starts_with("text:The following is an <EPHEMERAL_MESSAGE>"));
    assert!(blocks(&src, &t, 1).is_empty());
    assert!(blocks(&src, &t, 4)[0].starts_with("text:{{ CHECKPOINT 0 }}"));
    let comps: Vec<(usize, usize)> = a.compactions.iter().map(|c| (c.n, c.start_line)).collect();
    assert_eq!(comps, vec![(1, 4)]);
    for line in [3, 7] {
        let s = t.entries[line].step.as_ref().unwrap();
        assert_eq!(s.model.as_deref(), Some("Gemini 3.1 Pro"));
        assert_eq!(s.effort.as_deref(), Some("Low"));
        assert_eq!(s.stop, Some(StopReason::EndTurn));
        assert_eq!(s.usage, None, "no step records tokens");
    }
    assert_eq!(a.steps.len(), 2);
    assert_eq!(a.usage, Default::default());
    // `created_at` is read to the second: 10:00:00 → 10:00:02, 10:01:00 → 10:01:04.
    let durations: Vec<Option<u64>> = a
        .turns
        .iter()
        .filter(|x| x.n > 0)
        .map(|x| x.duration.map(|d| d.ms))
        .collect();
    assert_eq!(durations, vec![Some(2_000), Some(4_000)]);
    assert_eq!(t.entries[0].timestamp_ms(), Some(1_781_949_600_000));
    // The step index is the record's id.
    assert_eq!(
        t.entries[4].uuid().map(|u| u.to_string()).as_deref(),
        Some("4")
    );
    assert!(t.problems.is_empty(), "{:?}", t.problems);
}

/// Calls carry no id: each is named after its step and paired with the next result in file
/// order, two calls of one response with the next two results; a failed command is an error;
/// a step written out of `step_index` order stays where it is; the scratch folder is not the
/// cwd; a model switch changes the steps that follow; a result with no call waiting keeps an
/// empty id and a hint.
#[test]
fn tool_calls_pair_with_results_by_order() {
    let (src, t, a) = load("tools.jsonl");
    assert_eq!(
        blocks(&src, &t, 3),
        vec!["thinking", "call:step-3.0 run_command false"]
    );
    assert_eq!(
        blocks(&src, &t, 7),
        vec![
            "thinking",
            "text:It failed as expected; recovering.",
            "call:step-7.0 run_command echo recovered",
            "call:step-7.1 run_command ls"
        ]
    );
    assert_eq!(blocks(&src, &t, 4), vec!["result:step-3.0"]);
    assert_eq!(blocks(&src, &t, 8), vec!["result:step-7.0"]);
    assert_eq!(blocks(&src, &t, 9), vec!["result:step-7.1"]);
    assert_eq!(blocks(&src, &t, 12), vec!["result:"]);
    assert_eq!(
        pairs(&t, &a),
        vec![(3, Some(4)), (7, Some(8)), (7, Some(9))]
    );
    let result = |line: usize| match &t.entries[line].blocks[0].kind {
        BlockKind::ToolResult(r) => (r.is_error, r.summary.clone()),
        k => panic!("{k:?}"),
    };
    assert_eq!(
        result(4),
        (true, "The command failed with exit code: 1".into())
    );
    assert_eq!(
        result(8),
        (false, "The command completed successfully.".into())
    );
    assert_eq!(result(12), (false, "File contents: (none)".into()));
    // Call input: the raw `args` object.
    if let BlockKind::ToolUse(u) = &t.entries[3].blocks[1].kind {
        assert!(src[u.input.clone()].starts_with("{\"CommandLine\":\"\\\"false\\\"\""));
    }
    // Out of order: step 6 is written before step 5; both kept, in file order.
    let order: Vec<String> = t
        .entries
        .iter()
        .map(|e| e.uuid().map(|u| u.to_string()).unwrap_or_default())
        .collect();
    assert_eq!(
        order,
        vec![
            "0", "1", "2", "3", "4", "6", "5", "7", "8", "9", "10", "11", "12", "13"
        ]
    );
    assert_eq!(
        t.entries[6].role,
        Role::CompactBoundary(Box::default()),
        "step 5, the checkpoint"
    );
    assert_eq!(t.meta.cwd.as_deref(), Some("/home/dev/project"));
    assert_eq!(t.meta.model.as_deref(), Some("Gemini 3.1 Pro"));
    let models: Vec<(usize, Option<&str>, Option<&str>)> = t
        .entries
        .iter()
        .filter_map(|e| {
            let s = e.step.as_ref()?;
            Some((e.line, s.model.as_deref(), s.effort.as_deref()))
        })
        .collect();
    assert_eq!(
        models,
        vec![
            (3, Some("Gemini 3.1 Pro"), Some("High")),
            (7, Some("Gemini 3.1 Pro"), Some("High")),
            (10, Some("Gemini 3.1 Pro"), Some("High")),
            (13, Some("GPT-OSS 120B"), Some("Medium")),
        ]
    );
    let stops: Vec<Option<StopReason>> = [3, 7, 10, 13]
        .iter()
        .map(|&l| t.entries[l].step.as_ref().unwrap().stop.clone())
        .collect();
    assert_eq!(
        stops,
        vec![
            Some(StopReason::ToolUse),
            Some(StopReason::ToolUse),
            Some(StopReason::EndTurn),
            Some(StopReason::EndTurn)
        ]
    );
    let t1 = a.turns.iter().find(|x| x.n == 1).unwrap();
    assert_eq!((t1.tool_calls, t1.comments, t1.steps.len()), (3, 1, 3));
    assert_eq!(
        answers(&src, &t, &a),
        vec![Some("done".into()), Some("ok".into())]
    );
    let problems: Vec<(usize, Severity)> =
        t.problems.iter().map(|p| (p.line, p.severity)).collect();
    assert_eq!(problems, vec![(12, Severity::Hint)]);
}

/// An `invoke_subagent` call names the child's role and type, its result the child
/// conversation and the workspace (the cwd); a `SYSTEM_MESSAGE` after the turn settled wakes
/// the agent: a wake-up turn showing the notice without its preamble.
#[test]
fn subagents_and_wake_ups() {
    let (src, t, a) = load("subagent.jsonl");
    assert_eq!(
        turns(&a),
        vec![
            (
                1,
                TurnKind::Prompt,
                "Dispatch a background subagent to count the files, then reply: dispatched".into(),
                0,
                5
            ),
            (2, TurnKind::Wake, "background task finished".into(), 6, 8),
        ]
    );
    assert_eq!(t.entries[6].role, Role::Wake(WakeKind::TaskNotification));
    assert_eq!(
        blocks(&src, &t, 6),
        vec![
            "text:[Message] timestamp=2026-06-20T16:15:56Z \
             sender=7e81f29d-5843-408f-bee9-377cc58bfa22 priority=MESSAGE_PRIORITY_HIGH \
             content=There are 5 files."
        ]
    );
    match &t.entries[3].blocks[1].kind {
        BlockKind::ToolUse(u) => {
            assert_eq!(
                (&*u.id, &*u.name, u.summary.as_str()),
                ("step-3.0", "invoke_subagent", "Subagent invocation")
            );
            let s = u.subagent.as_ref().unwrap();
            assert_eq!(s.description.as_deref(), Some("File Counter"));
            assert_eq!(s.agent_type.as_deref(), Some("research"));
        }
        k => panic!("{k:?}"),
    }
    match &t.entries[4].blocks[0].kind {
        BlockKind::ToolResult(r) => {
            assert_eq!(&*r.tool_use_id, "step-3.0");
            assert_eq!(
                r.subagent.as_ref().and_then(|s| s.agent_id.as_deref()),
                Some("7e81f29d-5843-408f-bee9-377cc58bfa22")
            );
            assert_eq!(r.summary, "Created the following subagents:");
        }
        k => panic!("{k:?}"),
    }
    assert_eq!(a.subagent_calls.len(), 1);
    assert_eq!(
        a.subagent_calls[0].agent_id.as_deref(),
        Some("7e81f29d-5843-408f-bee9-377cc58bfa22")
    );
    assert_eq!(t.meta.cwd.as_deref(), Some("/home/dev/work/site"));
    assert_eq!(
        answers(&src, &t, &a),
        vec![
            Some("dispatched".into()),
            Some("The subagent counted 5 files.".into())
        ]
    );
}

/// A response with neither text nor tool calls, an error and a retry with no text: a
/// replyless turn; a resume notice inside a turn is context; `truncated_fields` is shown as an
/// Information problem; a prompt without tags is all prompt; a `USER_INPUT` from another
/// source is context; unknown step types are kept and noted; a bad line is unparsed.
#[test]
fn quirks_errors_truncation_and_unknown_steps() {
    let (src, t, a) = load("quirks.jsonl");
    assert_eq!(t.meta.model.as_deref(), Some("Gemini 3.5 Flash"));
    let states: Vec<(usize, TurnState, bool)> = a
        .turns
        .iter()
        .filter(|x| x.n > 0)
        .map(|x| (x.n, x.state, x.final_answer.is_some()))
        .collect();
    assert_eq!(
        states,
        vec![
            (1, TurnState::Replyless, false),
            (2, TurnState::Complete, true),
            (3, TurnState::Complete, true),
        ]
    );
    let e = &t.entries[2];
    assert_eq!(
        (e.role.clone(), &*e.record_type),
        (Role::Model, "SYSTEM/ERROR_MESSAGE")
    );
    assert_eq!(
        e.step.as_ref().unwrap().api_error.as_deref(),
        Some(
            "Error: model output error: model output must contain either output text or tool \
             calls, these cannot both be empty, please try again"
        )
    );
    assert_eq!(blocks(&src, &t, 1), vec!["thinking"]);
    assert_eq!(t.entries[5].role, Role::Context);
    assert!(blocks(&src, &t, 5)[0].starts_with("text:[Message] timestamp=2026-06-20T10:43:23Z"));
    assert_eq!(blocks(&src, &t, 7), vec!["text:plain words, no tags"]);
    assert_eq!(t.entries[8].role, Role::Context);
    assert_eq!(blocks(&src, &t, 8), vec!["text:from another agent"]);
    let roles: Vec<(usize, Role)> = [9, 10, 12]
        .iter()
        .map(|&l| (l, t.entries[l].role.clone()))
        .collect();
    assert_eq!(
        roles,
        vec![(9, Role::Meta), (10, Role::Other), (12, Role::Unparsed)]
    );
    let unknown: Vec<(&str, usize)> = t
        .unknown
        .iter()
        .map(|u| (u.name.as_str(), u.line))
        .collect();
    assert_eq!(
        unknown,
        vec![("SYSTEM/BROWSER_STATE", 9), ("PLUGIN/NOTE", 10)]
    );
    let problems: Vec<(usize, Severity, &str)> = t
        .problems
        .iter()
        .map(|p| (p.line, p.severity, p.message.as_str()))
        .collect();
    assert_eq!(
        problems,
        vec![
            (
                6,
                Severity::Information,
                "the agent cut this step's content and thinking before writing it \
                 (`truncated_fields`): the text here is not complete"
            ),
            (
                12,
                Severity::Warning,
                "invalid JSON: key must be a string at column 2"
            ),
        ]
    );
    assert_eq!(a.turn_count, 3);
    // The view says where the cut text ends.
    let cut: Vec<usize> = t
        .entries
        .iter()
        .filter(|e| e.cut_by_agent)
        .map(|e| e.line)
        .collect();
    assert_eq!(cut, vec![6]);
    let view = transcript_ls::view::render(&t, &a, &src, &Default::default()).text;
    let at = view
        .find("\n✂ cut by the agent: the file keeps only the start of this text\n")
        .expect("the cut line");
    assert!(view[..at].ends_with("Coffee Coffee "), "{view}");
    assert_eq!(view.matches("✂ cut by the agent").count(), 1);
}

/// A file that joins two conversations (step 0 again) reads as two sessions; each session's
/// checkpoint names it; call ids stay unique across them.
#[test]
fn joined_conversations_are_consecutive_sessions() {
    let (src, t, a) = load("joined.jsonl");
    assert_eq!(
        t.meta.session_id.as_deref(),
        Some("aaaaaaaa-0000-4000-8000-000000000001")
    );
    assert_eq!(
        t.meta.sessions,
        vec![SessionStart {
            entry: 3,
            line: 3,
            id: "bbbbbbbb-0000-4000-8000-000000000002".into(),
            parent: None
        }]
    );
    assert_eq!(
        blocks(&src, &t, 4),
        vec!["thinking", "call:s2/step-1.0 run_command echo hi"]
    );
    assert_eq!(blocks(&src, &t, 5), vec!["result:s2/step-1.0"]);
    assert_eq!(pairs(&t, &a), vec![(4, Some(5))]);
    assert_eq!(
        turns(&a)
            .iter()
            .map(|x| (x.0, x.3, x.4))
            .collect::<Vec<_>>(),
        vec![(1, 0, 2), (2, 3, 7)]
    );
    assert_eq!(
        answers(&src, &t, &a),
        vec![Some("ok".into()), Some("Dark, bitter.".into())]
    );
    assert_eq!(a.compactions.len(), 2);
    // Without its checkpoint the second session has no id: the divider is numbered only.
    let cut: String = src.split_inclusive('\n').take(7).collect();
    let t = formats::read(&cut);
    assert_eq!(t.meta.sessions.len(), 1);
    assert_eq!(t.meta.sessions[0].id, "");
    let a = analysis::analyze(&t, &cut, &opts());
    let view = transcript_ls::view::render(&t, &a, &cut, &Default::default()).text;
    assert!(view.contains("\n── Session 2 ──\n"), "{view}");
}

/// The corpus's five Antigravity recordings.
fn corpus_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../../shared/corpus/ingo-eichhorst__Irrlicht/replaydata/agents/antigravity/scenarios",
    );
    let mut out = Vec::new();
    for s in std::fs::read_dir(&root).unwrap().flatten() {
        for r in std::fs::read_dir(s.path().join("recordings"))
            .unwrap()
            .flatten()
        {
            let p = r.path().join("transcript.jsonl");
            if p.is_file() {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Live following: feeding a growing file line by line, or in cuts that fall inside lines,
/// gives the transcript read whole, and each feed reads only what was added.
#[test]
fn appends_read_as_the_whole_file() {
    let mut sources: Vec<(String, String)> = [
        "basic.jsonl",
        "tools.jsonl",
        "subagent.jsonl",
        "quirks.jsonl",
        "joined.jsonl",
    ]
    .iter()
    .map(|n| (n.to_string(), fixture(n)))
    .collect();
    for p in corpus_files() {
        sources.push((
            p.display().to_string(),
            std::fs::read_to_string(&p).unwrap(),
        ));
    }
    for (name, src) in &sources {
        let mut whole = Reader::new();
        whole.feed(src);
        whole.finish(src);
        let want = format!("{:?}", whole.transcript());
        for step in [1usize, 7, 100, 1000] {
            let mut r = Reader::new();
            let mut cut = 0;
            while cut < src.len() {
                cut = (cut + step).min(src.len());
                while !src.is_char_boundary(cut) {
                    cut += 1;
                }
                let before = r.consumed_bytes();
                r.feed(&src[..cut]);
                // Only whole new lines are read: what was consumed stays consumed.
                assert!(r.consumed_bytes() >= before);
                assert!(
                    src[before..r.consumed_bytes()].ends_with('\n') || r.consumed_bytes() == before
                );
            }
            r.finish(src);
            assert_eq!(format!("{:?}", r.transcript()), want, "{name}, step {step}");
        }
    }
}

/// The five corpus recordings, against counts made with a Python script over their raw lines:
/// 46 lines; 9 `USER_EXPLICIT/USER_INPUT` prompts; 12 `PLANNER_RESPONSE` (2 with one tool
/// call each: `run_command`, `invoke_subagent`); 2 tool results (`RUN_COMMAND`,
/// `INVOKE_SUBAGENT`); 5 checkpoints; 8 turns whose last response without tool calls has text
/// (3-1's ends on a thinking-only response after an error: no reply).
#[test]
fn corpus_recordings() {
    let files = corpus_files();
    assert_eq!(files.len(), 5);
    let mut totals = (0, 0, 0, 0, 0, 0);
    let mut per_file = Vec::new();
    for p in &files {
        let src = std::fs::read_to_string(p).unwrap();
        let t = formats::read(&src);
        let a = analysis::analyze(&t, &src, &opts());
        assert_eq!(t.format(), Format::Antigravity, "{}", p.display());
        let count = |f: &dyn Fn(&Role) -> bool| t.entries.iter().filter(|e| f(&e.role)).count();
        let prompts = count(&|r| matches!(r, Role::Prompt(_)));
        let results = count(&|r| *r == Role::ToolResults);
        let responses = t
            .entries
            .iter()
            .filter(|e| &*e.record_type == "MODEL/PLANNER_RESPONSE")
            .count();
        let answered = a.turns.iter().filter(|x| x.final_answer.is_some()).count();
        totals.0 += t.entries.len();
        totals.1 += prompts;
        totals.2 += responses;
        totals.3 += results;
        totals.4 += a.compactions.len();
        totals.5 += answered;
        assert!(t.problems.is_empty(), "{}: {:?}", p.display(), t.problems);
        assert!(t.unknown.is_empty());
        assert!(a.steps.iter().all(|s| {
            t.entries[s.entries[0]]
                .step
                .as_ref()
                .unwrap()
                .usage
                .is_none()
        }));
        let scenario = p
            .ancestors()
            .nth(3)
            .and_then(|d| d.file_name())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        per_file.push((scenario, a.turn_count, pairs(&t, &a)));
    }
    assert_eq!(totals, (46, 9, 12, 2, 5, 8));
    assert_eq!(
        per_file,
        vec![
            ("1-1_session-start".to_string(), 1, vec![]),
            ("2-12_context-compaction".to_string(), 2, vec![]),
            (
                "2-2_auto-executed-tool-call".to_string(),
                1,
                vec![(3, Some(4))]
            ),
            ("2-6_long-agentic-session-stress".to_string(), 4, vec![]),
            ("3-1_foreground-subagent".to_string(), 1, vec![(3, Some(4))]),
        ]
    );
}

/// No file records tokens: every figure says "not recorded", never 0 — `stats --json`
/// `usage_recorded: false`, the turns' tok/s reason and tooltips.
#[test]
fn token_figures_are_not_recorded() {
    let (_, t, a) = load("tools.jsonl");
    let st = transcript_ls::ide::stats::stats("tools.jsonl".into(), &t, &a);
    assert!(!st.usage_recorded);
    let json = serde_json::to_value(&st).unwrap();
    assert_eq!(json["usage_recorded"], serde_json::json!(false));
    assert_eq!(json["format"], "antigravity");
    for turn in a.turns.iter().filter(|x| x.n > 0) {
        assert_eq!(
            turn.throughput,
            analysis::Throughput::None {
                reason: analysis::throughput::NOT_RECORDED
            }
        );
        let tip = transcript_ls::ide::inlay_hints::turn_tooltip(turn, a.turn_count, Some("UTC"));
        assert!(
            tip.contains(
                "- no tok/s figure: token counts not recorded: the agent's file holds none"
            ),
            "{tip}"
        );
        assert!(
            tip.contains("- tokens: not recorded in the file.\n"),
            "{tip}"
        );
    }
    assert!(a.steps.iter().all(|s| !s.usage_recorded));
}

/// The registry's agent: detection, name, both default roots moved by `GEMINI_CLI_HOME`, a
/// grown file read whole.
#[test]
fn registry_entry() {
    use transcript_ls::formats::agents;
    let a = agents::of(Format::Antigravity).unwrap();
    assert_eq!((a.id, a.name), ("antigravity", "Antigravity CLI"));
    assert!(!a.tail_readable);
    let roots: Vec<String> = a.roots.iter().map(|r| r.tilde()).collect();
    assert_eq!(
        roots,
        vec![
            "~/.gemini/antigravity-cli/brain",
            "~/.gemini/antigravity/brain"
        ]
    );
    let first = fixture("basic.jsonl");
    assert_eq!(
        formats::detect_line(first.lines().next().unwrap()),
        Some(Format::Antigravity)
    );
    // Every other agent's fixtures stay theirs.
    assert_eq!(
        formats::detect_line(
            r#"{"type":"session","version":3,"id":"x","timestamp":"t","cwd":"/"}"#
        ),
        Some(Format::Pi)
    );
}

/// A conversation's transcript in a `brain/` folder: the session index takes the folder as
/// the session id; opening it finds the sub-agent conversations its results name beside it.
#[test]
fn brain_folder_ids_and_child_conversations() {
    use transcript_ls::index::{SessionIndex, disk};
    let dir = tempfile::tempdir().unwrap();
    let brain = dir.path().join(".gemini/antigravity-cli/brain");
    let conv = |id: &str| {
        brain
            .join(id)
            .join(".system_generated/logs/transcript.jsonl")
    };
    let parent = conv("0a0a0a0a-1111-4222-8333-444444444444");
    let child = conv("7e81f29d-5843-408f-bee9-377cc58bfa22");
    for p in [&parent, &child] {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    }
    std::fs::write(&parent, fixture("subagent.jsonl")).unwrap();
    std::fs::write(&child, fixture("basic.jsonl")).unwrap();
    // The unfiltered view beside it is no session of ours to link.
    std::fs::write(
        parent.with_file_name("transcript_full.jsonl"),
        fixture("basic.jsonl"),
    )
    .unwrap();
    // The agent's prompt history beside `brain/` names the parent's workspace (the last line
    // for it wins); the child has none there.
    std::fs::write(
        brain.parent().unwrap().join("history.jsonl"),
        concat!(
            r#"{"display":"ls","timestamp":1,"workspace":"/w/other"}"#,
            "\n",
            r#"{"display":"go","conversationId":"0a0a0a0a-1111-4222-8333-444444444444","workspace":"/w/old"}"#,
            "\nnot json\n",
            r#"{"display":"go","conversationId":"0a0a0a0a-1111-4222-8333-444444444444","workspace":"/w/proj"}"#,
            "\n",
        ),
    )
    .unwrap();
    let mut idx = SessionIndex::new();
    disk::update(&mut idx, &parent).unwrap();
    disk::update(&mut idx, &child).unwrap();
    disk::update(&mut idx, &parent.with_file_name("transcript_full.jsonl")).unwrap();
    // The unfiltered copy is indexed but listed as no session of its own.
    let listed: Vec<PathBuf> = idx
        .sessions(&transcript_ls::index::SessionQuery::default(), 0)
        .into_iter()
        .map(|s| s.path)
        .collect();
    assert_eq!(listed, vec![parent.clone(), child.clone()]);
    let e = idx.get(&parent).unwrap();
    assert_eq!(e.format, Format::Antigravity);
    assert_eq!(
        e.session_id.as_deref(),
        Some("0a0a0a0a-1111-4222-8333-444444444444")
    );
    assert_eq!(
        e.first_prompt.as_deref(),
        Some("Dispatch a background subagent to count the files, then reply: dispatched")
    );
    assert_eq!(e.project.as_deref(), Some("/w/proj"));
    assert_eq!(e.turns, 2);
    // basic.jsonl names another conversation in its checkpoint: the folder wins. No history
    // line and no command `Cwd`: no project.
    let c = idx.get(&child).unwrap();
    assert_eq!(
        c.session_id.as_deref(),
        Some("7e81f29d-5843-408f-bee9-377cc58bfa22")
    );
    assert_eq!(c.project, None);
    let files = transcript_ls::index::session_files::session_files(
        &parent,
        &[
            "7e81f29d-5843-408f-bee9-377cc58bfa22",
            "missing-child",
            "../x",
        ],
    );
    assert_eq!(files.main, parent);
    let kids: Vec<(&str, &Path)> = files
        .subagents
        .iter()
        .map(|f| (f.agent_id.as_str(), f.path.as_path()))
        .collect();
    assert_eq!(
        kids,
        vec![("7e81f29d-5843-408f-bee9-377cc58bfa22", child.as_path())]
    );
    // A child names no parent: it is its own main.
    assert_eq!(
        transcript_ls::index::session_files::session_files(&child, &[]).main,
        child
    );
    assert_eq!(
        transcript_ls::formats::antigravity::conversation_of(
            &parent.with_file_name("transcript_full.jsonl")
        ),
        None
    );
}

/// What the editors show for one conversation: raw folds (turn, activity, work runs,
/// compaction), the outline, the hints, the quiet view; and a file cut mid-turn is in flight.
#[test]
fn folds_outline_hints_and_view() {
    use transcript_ls::ide::{folding, inlay_hints, symbols};
    use transcript_ls::view::{ViewOptions, render};
    let (src, t, a) = load("tools.jsonl");
    let folds: Vec<String> = folding::raw_folds(&t, &a)
        .iter()
        .map(|f| format!("{}-{} {:?} {}", f.start_line, f.end_line, f.kind, f.label))
        .collect();
    let syms: Vec<String> = symbols::raw_symbols(&t, &a, &src)
        .iter()
        .map(|s| {
            format!(
                "{} | {} | {}-{}",
                s.name, s.detail, s.start_line, s.end_line
            )
        })
        .collect();
    let hints: Vec<String> = a
        .turns
        .iter()
        .map(|x| inlay_hints::turn_label(x, a.turn_count))
        .collect();
    assert_eq!(
        folds,
        vec![
            "0-10 Turn Turn 1: Run `false`, then `echo recovered`, then reply: done · 1 comment · 3 tool calls",
            "1-9 Activity 1 comment · 3 tool calls",
            "3-7 WorkRun Worked · 1 tool call",
            "7-10 WorkRun Worked · 2 tool calls",
            "11-13 Turn Turn 2: Say ok · no activity",
        ]
    );
    assert_eq!(
        syms,
        vec![
            "Turn 1: Run `false`, then `echo recovered`, then reply: done | 1 comment · 3 tool calls · 10s · 11:00 am | 0-10",
            "Turn 2: Say ok | no activity · 2s · 11:01 am | 11-13",
        ]
    );
    // Only figures the file records: no tokens, no tok/s.
    assert_eq!(
        hints,
        vec![
            "turn 1/2 · 1 comment · 3 tool calls · 10s · 11:00 am",
            "turn 2/2 · no activity · 2s · 11:01 am",
        ]
    );
    let view = render(&t, &a, &src, &ViewOptions::default()).text;
    assert_eq!(
        view,
        "# Run `false`, then `echo recovered`, then reply: done\n\
         session 22222222-2222-4333-8444-555555555555 · Antigravity CLI · Gemini 3.1 Pro, GPT-OSS 120B · \
         /home/dev/project · 20 Jun 2026, 11:00 am – 11:01 am (1m 02s) · 2 turns\n\
         \n## Turn 1\n\n> Run `false`, then `echo recovered`, then reply: done\n\n\
         ── Compaction 1 ──\n\n**Answer**\ndone\n\n## Turn 2\n\n> Say ok\n\n**Answer**\nok\n"
    );
    // Cut after the first tool call, the file still growing: the turn is in flight, not
    // replyless.
    let cut: String = src.split_inclusive('\n').take(4).collect();
    let t = formats::read(&cut);
    let growing = Options {
        file_complete: false,
        ..opts()
    };
    let a = analysis::analyze(&t, &cut, &growing);
    assert_eq!(a.turns.last().unwrap().state, TurnState::InFlight);
    let a = analysis::analyze(&t, &cut, &opts());
    assert_eq!(a.turns.last().unwrap().state, TurnState::Replyless);
}
