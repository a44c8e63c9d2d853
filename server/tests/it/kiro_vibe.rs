//! Kiro CLI and Mistral Vibe sessions (issue 21 items 4–6) through the real readers, the agent
//! registry's files-beside hooks and analysis: our fixtures in `fixtures/kiro/` and
//! `fixtures/vibe/` (line numbers here are 0-based) and the corpus's real Irrlicht recordings,
//! counted with a script over their raw lines.

use std::path::{Path, PathBuf};

use transcript_ls::analysis::{self, Analysis, DurationSource, Options, TurnKind, TurnState};
use transcript_ls::formats::{self, Reader, agents};
use transcript_ls::ide::folding::{self, FoldKind};
use transcript_ls::ide::{inlay_hints, stats};
use transcript_ls::index::session_files;
use transcript_ls::model::{BlockKind, Format, Role, StopReason, Transcript};

fn opts() -> Options {
    Options {
        time_zone: Some("UTC".into()),
        file_complete: true,
        ..Default::default()
    }
}

fn fixture_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures")
        .join(rel)
}

const KIRO: &str = "kiro/7b0e2c1a-5d3f-4e8a-9c61-2f4d8b7a1e03.jsonl";
const VIBE_META: &str = "vibe/session_20260707_203419_3eeb0626/messages.jsonl";
const VIBE_CHILD: &str =
    "vibe/session_20260707_203419_3eeb0626/agents/explore_20260707_203423_2b37328f/messages.jsonl";
const VIBE_PLAIN: &str = "vibe/no-meta/messages.jsonl";

/// Reads `rel` as a file is read from disk: its lines, then what the files beside it add.
fn load(rel: &str) -> (String, Transcript, Analysis) {
    let path = fixture_path(rel);
    let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let mut t = formats::read(&src);
    agents::apply_beside(&mut t, &path);
    let a = analysis::analyze(&t, &src, &opts());
    (src, t, a)
}

fn turns(a: &Analysis) -> Vec<(usize, String, usize, usize)> {
    a.turns
        .iter()
        .map(|x| (x.n, x.title.clone(), x.start_line, x.end_line))
        .collect()
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

fn roles(t: &Transcript) -> Vec<String> {
    t.entries
        .iter()
        .map(|e| match &e.role {
            Role::Prompt(_) => "prompt".to_string(),
            Role::Model => "model".to_string(),
            Role::ToolResults => "results".to_string(),
            Role::Context => "context".to_string(),
            Role::CompactBoundary(_) => "compaction".to_string(),
            Role::Meta => "meta".to_string(),
            Role::Other => format!("other:{}", e.record_type),
            r => format!("{r:?}"),
        })
        .collect()
}

// ---- Kiro CLI ------------------------------------------------------------------------------

#[test]
fn kiro_turns_tools_answers_and_a_joined_fork() {
    let (_, t, a) = load(KIRO);
    assert_eq!(t.format(), Format::KiroCli);
    assert_eq!(
        roles(&t),
        [
            "prompt",
            "model",
            "results",
            "model",
            "results",
            "model",
            "prompt",
            "model",
            "prompt",
            "model",
            "other:Summary"
        ]
    );
    assert_eq!(
        turns(&a),
        vec![
            (1, "List the files, then count them".into(), 0, 5),
            (2, "Thanks".into(), 6, 7),
            (3, "List the files, then count them".into(), 8, 10),
        ]
    );
    // The repeated prompt id (a rewound fork joined after its parent) starts session 2.
    let starts: Vec<(usize, usize)> = t.meta.sessions.iter().map(|s| (s.entry, s.line)).collect();
    assert_eq!(starts, vec![(8, 8)]);
    // Tool calls pair with their results by `toolUseId`; a failed status is an error.
    assert_eq!(pairs(&t, &a), vec![(1, Some(2)), (3, Some(4))]);
    let results: Vec<(String, bool, String)> = t
        .entries
        .iter()
        .flat_map(|e| &e.blocks)
        .filter_map(|b| match &b.kind {
            BlockKind::ToolResult(r) => {
                Some((r.tool_use_id.to_string(), r.is_error, r.summary.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        vec![
            ("tooluse_1".into(), false, "a.txt".into()),
            ("tooluse_2".into(), true, "No such file: missing.txt".into()),
        ]
    );
    let calls: Vec<(String, String, String)> = t
        .entries
        .iter()
        .flat_map(|e| &e.blocks)
        .filter_map(|b| match &b.kind {
            BlockKind::ToolUse(u) => {
                Some((u.id.to_string(), u.name.to_string(), u.summary.clone()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        vec![
            ("tooluse_1".into(), "shell".into(), "ls -1".into()),
            ("tooluse_2".into(), "read".into(), "missing.txt".into()),
        ]
    );
    // An empty text item is no block; the step ends the turn only without a tool call.
    assert_eq!(t.entries[3].blocks.len(), 1);
    let stops: Vec<Option<StopReason>> = t
        .entries
        .iter()
        .filter_map(|e| e.step.as_ref())
        .map(|s| s.stop.clone())
        .collect();
    assert_eq!(
        stops,
        vec![
            Some(StopReason::ToolUse),
            Some(StopReason::ToolUse),
            Some(StopReason::EndTurn),
            Some(StopReason::EndTurn),
            Some(StopReason::EndTurn),
        ]
    );
    assert_eq!(&*t.entries[1].step.as_ref().unwrap().key, "kiro-a1");
    assert_eq!(
        answer_lines(&t, &a),
        vec![Some(vec![5]), Some(vec![7]), Some(vec![9])]
    );
    assert_eq!(a.turns[0].comments, 1);
    assert_eq!(a.turns[0].tool_calls, 2);
    assert!(a.turns.iter().all(|x| x.state == TurnState::Complete));
    // Prompt times are epoch seconds; no other record has one.
    assert_eq!(t.entries[0].timestamp_ms(), Some(1_780_617_364_000));
    assert_eq!(t.entries[1].timestamp_ms(), None);
    // The unknown kind is kept and noted once.
    assert_eq!(t.unknown.len(), 1);
    assert_eq!(t.unknown[0].name, "Summary");
    // Figures: no tokens, no models in the lines.
    let s = stats::stats("f".to_string(), &t, &a);
    assert!(!s.usage_recorded);
    assert_eq!(s.steps, 5);
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(json["usage_recorded"], false);
    assert_eq!(json["format"], "kiro-cli");
}

/// The sidecar `<uuid>.json` names the session, its cwd, title and model, and per turn its
/// duration and credits (only the first turn has a record here).
#[test]
fn kiro_sidecar_gives_title_cwd_model_and_turn_figures() {
    let (src, t, a) = load(KIRO);
    assert!(agents::has_beside(&fixture_path(KIRO)));
    assert_eq!(t.meta.title.as_deref(), Some("Count the files"));
    assert_eq!(t.meta.cwd.as_deref(), Some("/home/user/proj"));
    assert_eq!(t.meta.model.as_deref(), Some("claude-haiku-4.5"));
    assert_eq!(
        t.meta.session_id.as_deref(),
        Some("7b0e2c1a-5d3f-4e8a-9c61-2f4d8b7a1e03")
    );
    let d: Vec<Option<(u64, DurationSource)>> = a
        .turns
        .iter()
        .map(|x| x.duration.map(|d| (d.ms, d.source)))
        .collect();
    // Turn 1: the sidecar's 12.5 s; turns 2 and 3: one timestamp each (the prompt's): unknown,
    // never 0.
    assert_eq!(
        d,
        vec![Some((12_500, DurationSource::Recorded)), None, None]
    );
    let s = stats::stats("f".to_string(), &t, &a);
    let credits: Vec<Option<f64>> = s.turn_list.iter().map(|x| x.credits).collect();
    assert_eq!(credits, vec![Some(0.25), None, None]);
    assert_eq!(s.models, vec!["claude-haiku-4.5".to_string()]);
    let label = inlay_hints::turn_label(&a.turns[0], a.turn_count);
    assert_eq!(label, "turn 1/3 · 1 comment · 2 tool calls · 12s");
    assert_eq!(a.turn_credits, vec![(1, 0.25)]);
    // The raw file's turn hints: the figures with the credits, and how they were computed.
    let hints = inlay_hints::raw_hints(&t, &src, &a, Some("UTC"));
    let first = hints.iter().find(|h| h.line == 0).unwrap();
    assert!(
        first
            .tooltip
            .starts_with("`turn 1/3 · 1 comment · 2 tool calls · 12s · 0.25 credits`"),
        "{}",
        first.tooltip
    );
    assert!(
        first
            .tooltip
            .contains("- **0.25 credits**: metered by the agent")
    );
    assert!(
        first
            .tooltip
            .contains("- **12s** (12500 ms): recorded by the agent")
    );
    let second = hints.iter().find(|h| h.line == 6).unwrap();
    assert!(!second.tooltip.contains("credits"), "{}", second.tooltip);
    let tip = inlay_hints::turn_tooltip(&a.turns[1], a.turn_count, Some("UTC"));
    assert!(
        tip.contains("- tokens: not recorded in the file.\n"),
        "{tip}"
    );
    assert!(tip.contains("- duration: unknown"), "{tip}");
}

#[test]
fn kiro_without_sidecar_keeps_what_the_lines_say() {
    let path = fixture_path("kiro/no-sidecar.jsonl");
    assert!(!agents::has_beside(&path));
    let (_, t, a) = load("kiro/no-sidecar.jsonl");
    assert_eq!(t.format(), Format::KiroCli);
    assert_eq!(
        (t.meta.title.as_deref(), t.meta.cwd.as_deref()),
        (None, None)
    );
    assert!(t.meta.recorded_turns.is_empty());
    assert_eq!(a.turn_count, 1);
    assert_eq!(a.turns[0].duration, None);
}

/// Live following: lines fed as they arrive read the same as the whole file, and an append
/// costs only its own lines (the reader never goes back).
#[test]
fn kiro_and_vibe_follow_appends() {
    for rel in [KIRO, VIBE_PLAIN] {
        let src = std::fs::read_to_string(fixture_path(rel)).unwrap();
        let lines: Vec<&str> = src.split_inclusive('\n').collect();
        let mut r = Reader::new();
        for n in 1..=lines.len() {
            let upto = lines[..n].concat();
            let before = r.consumed_bytes();
            r.feed(&upto);
            assert_eq!(r.consumed_bytes() - before, lines[n - 1].len(), "{rel} {n}");
            assert_eq!(r.transcript().entries.len(), n, "{rel} {n}");
        }
        assert_eq!(
            format!("{:?}", r.transcript()),
            format!("{:?}", formats::read(&src)),
            "{rel}"
        );
    }
}

// ---- Mistral Vibe --------------------------------------------------------------------------

#[test]
fn vibe_prompts_context_thinking_tools_and_a_joined_fork() {
    let (src, t, a) = load(VIBE_PLAIN);
    assert_eq!(t.format(), Format::MistralVibe);
    assert_eq!(
        roles(&t),
        [
            "compaction",
            "prompt",
            "model",
            "results",
            "model",
            "context",
            "prompt",
            "model",
            "other:critic"
        ]
    );
    assert_eq!(
        turns(&a),
        vec![
            (0, String::new(), 0, 0),
            (1, "Run the failing test".into(), 1, 5),
            (2, "Run the failing test".into(), 6, 8),
        ]
    );
    assert_eq!(a.compactions.len(), 1);
    let starts: Vec<usize> = t.meta.sessions.iter().map(|s| s.line).collect();
    assert_eq!(starts, vec![6]);
    // Reasoning is thinking; `function.arguments` (a JSON string) gives the call's summary.
    let kinds: Vec<&str> = t.entries[2]
        .blocks
        .iter()
        .map(|b| match &b.kind {
            BlockKind::Thinking { text, .. } => {
                assert_eq!(text.decode(&src), "Run it with bash.");
                "thinking"
            }
            BlockKind::ToolUse(u) => {
                assert_eq!(
                    (&*u.id, &*u.name, u.summary.as_str()),
                    ("t1", "bash", "cargo test")
                );
                "tool"
            }
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["thinking", "tool"]);
    assert_eq!(pairs(&t, &a), vec![(2, Some(3))]);
    match &t.entries[3].blocks[0].kind {
        BlockKind::ToolResult(r) => {
            assert_eq!(&*r.tool_use_id, "t1");
            assert!(r.is_error, "returncode 101");
            assert_eq!(r.summary, "error: 1 test failed");
        }
        k => panic!("{k:?}"),
    }
    assert_eq!(answer_lines(&t, &a), vec![Some(vec![4]), Some(vec![7])]);
    assert_eq!(t.unknown.len(), 1);
    assert_eq!(t.unknown[0].name, "critic");
    let s = stats::stats("f".to_string(), &t, &a);
    assert!(!s.usage_recorded);
    assert_eq!(s.turn_list[1].duration_ms, None);
    // Folds: each turn, and turn 1's work run (call, result, and the answer's reasoning).
    let folds = folding::raw_folds(&t, &a);
    let got: Vec<(usize, usize, FoldKind, &str)> = folds
        .iter()
        .map(|f| (f.start_line, f.end_line, f.kind, f.label.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                1,
                5,
                FoldKind::Turn,
                "Turn 1: Run the failing test · 1 tool call"
            ),
            (2, 4, FoldKind::WorkRun, "Worked · 1 tool call"),
            (
                6,
                8,
                FoldKind::Turn,
                "Turn 2: Run the failing test · no activity"
            ),
        ]
    );
}

/// `meta.json` gives cwd, model and the session's usage; sub-agents under `agents/` are this
/// session's children, and a child's session is found from its path.
#[test]
fn vibe_meta_and_subagent_files() {
    let (_, t, a) = load(VIBE_META);
    assert_eq!(t.meta.cwd.as_deref(), Some("/home/user/proj"));
    assert_eq!(t.meta.model.as_deref(), Some("mistral-medium-3.5"));
    assert_eq!(
        t.meta.session_id.as_deref(),
        Some("session_20260707_203419_3eeb0626")
    );
    assert_eq!((a.usage.input, a.usage.output), (9_000, 350));
    let s = stats::stats("f".to_string(), &t, &a);
    assert!(s.usage_recorded);
    assert_eq!(a.subagent_calls.len(), 1);
    let call = &a.subagent_calls[0];
    assert_eq!(call.agent_type.as_deref(), Some("explore"));
    assert_eq!(
        call.description.as_deref(),
        Some("Summarise the README in two sentences.")
    );
    let main = fixture_path(VIBE_META);
    let child = fixture_path(VIBE_CHILD);
    let files = session_files::session_files(&main, &[]);
    assert_eq!(files.main, main);
    let ids: Vec<(&str, Option<&str>)> = files
        .subagents
        .iter()
        .map(|f| (f.agent_id.as_str(), f.agent_type.as_deref()))
        .collect();
    assert_eq!(
        ids,
        vec![("explore_20260707_203423_2b37328f", Some("explore"))]
    );
    assert_eq!(files.subagents[0].path, child);
    let from_child = session_files::session_files(&child, &[]);
    assert_eq!(from_child.main, main);
    assert_eq!(from_child.subagents, files.subagents);
}

/// The session index: titles, projects, children, from the registry's hooks.
#[test]
fn index_entries_and_parents() {
    use transcript_ls::index::{SessionIndex, disk};
    let mut index = SessionIndex::new();
    for rel in [KIRO, VIBE_META, VIBE_CHILD, VIBE_PLAIN] {
        let p = fixture_path(rel);
        match disk::refresh(&p, None).unwrap() {
            disk::Refresh::Whole(e) => index.insert(p, e),
            r => panic!("{rel}: {r:?}"),
        }
    }
    let kiro = index.get(&fixture_path(KIRO)).unwrap();
    assert_eq!(kiro.format, Format::KiroCli);
    assert_eq!(kiro.title.as_deref(), Some("Count the files"));
    assert_eq!(
        kiro.title_source,
        Some(transcript_ls::model::TitleSource::SessionName)
    );
    assert_eq!(kiro.project.as_deref(), Some("/home/user/proj"));
    assert_eq!(kiro.turns, 3);
    assert!(!kiro.last_turn_open);
    let vibe = index.get(&fixture_path(VIBE_META)).unwrap();
    assert_eq!(vibe.project.as_deref(), Some("/home/user/proj"));
    assert_eq!(
        vibe.first_prompt.as_deref(),
        Some("Use your Task tool to launch a subagent (agent: explore) that summarises the RE…")
    );
    assert_eq!(
        index.parent_of(&fixture_path(VIBE_CHILD)),
        Some(fixture_path(VIBE_META))
    );
    assert_eq!(index.parent_of(&fixture_path(VIBE_PLAIN)), None);
    assert_eq!(index.session_count(), 4);
}

// ---- the corpus ----------------------------------------------------------------------------

fn corpus_files(agent: &str) -> Vec<PathBuf> {
    let base = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus/ingo-eichhorst__Irrlicht/replaydata/agents")
        .join(agent);
    let mut out = Vec::new();
    let mut stack = vec![base];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
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

/// (scenario, turns, responses, tool calls, final answers, later sessions) per recording.
type Counts = (String, usize, usize, usize, usize, usize);

fn counts(agent: &str, want: Format) -> Vec<Counts> {
    corpus_files(agent)
        .iter()
        .map(|p| {
            let src = std::fs::read_to_string(p).unwrap();
            let t = formats::read(&src);
            assert_eq!(t.format(), want, "{}", p.display());
            let a = analysis::analyze(&t, &src, &opts());
            let scenario = p
                .ancestors()
                .find(|d| d.parent().is_some_and(|q| q.ends_with("scenarios")))
                .and_then(|d| d.file_name())
                .unwrap()
                .to_string_lossy()
                .to_string();
            let tools: u32 = a.turns.iter().map(|x| x.tool_calls).sum();
            let answers = a.turns.iter().filter(|x| x.final_answer.is_some()).count();
            (
                scenario,
                a.turn_count,
                a.steps.len(),
                tools as usize,
                answers,
                t.meta.sessions.len(),
            )
        })
        .collect()
}

/// Irrlicht's Kiro CLI recordings, counted with a script over the raw lines: prompts,
/// `AssistantMessage`s, `toolUse` items, text-only messages (the final answers), and
/// repeated prompt ids (none: the rewind recording here predates the fork re-recording).
#[test]
fn corpus_kiro_recordings() {
    let got = counts("kiro-cli", Format::KiroCli);
    let want: Vec<Counts> = [
        ("1-1_session-start", 1, 1, 0, 1, 0),
        ("1-6_checkpoint-rewind", 2, 2, 0, 2, 0),
        ("2-12_context-compaction", 2, 2, 0, 2, 0),
        ("2-2_auto-executed-tool-call", 1, 2, 1, 1, 0),
        ("2-6_long-agentic-session-stress", 1, 11, 10, 1, 0),
    ]
    .into_iter()
    .map(|(s, a, b, c, d, e)| (s.to_string(), a, b, c, d, e))
    .collect();
    assert_eq!(got, want);
}

/// Irrlicht's Mistral Vibe recordings, counted the same way: non-injected user messages,
/// assistant messages, `tool_calls`, assistant messages without tool calls, and the rewind
/// recording's repeated user `message_id` (one: a second session).
#[test]
fn corpus_vibe_recordings() {
    let got = counts("mistral-vibe", Format::MistralVibe);
    let want: Vec<Counts> = [
        ("1-1_session-start", 1, 1, 0, 1, 0),
        ("1-6_checkpoint-rewind", 4, 4, 0, 4, 1),
        ("2-12_context-compaction", 1, 1, 0, 1, 0),
        ("2-2_auto-executed-tool-call", 1, 2, 1, 1, 0),
        ("2-6_long-agentic-session-stress", 4, 8, 4, 4, 0),
        ("3-1_foreground-subagent", 1, 2, 1, 1, 0),
    ]
    .into_iter()
    .map(|(s, a, b, c, d, e)| (s.to_string(), a, b, c, d, e))
    .collect();
    assert_eq!(got, want);
}

/// Live state: a growing file whose last record is a tool call or its result is in flight; the
/// answer without a tool call completes the turn.
#[test]
fn live_state_follows_the_last_record() {
    let growing = Options {
        file_complete: false,
        ..opts()
    };
    for (rel, cut, done_at) in [(KIRO, 3, 6), (VIBE_PLAIN, 4, 5)] {
        let src = std::fs::read_to_string(fixture_path(rel)).unwrap();
        let lines: Vec<&str> = src.split_inclusive('\n').collect();
        let head = lines[..cut].concat();
        let t = formats::read(&head);
        let a = analysis::analyze(&t, &head, &growing);
        let last = a.turns.last().unwrap();
        assert_eq!(last.state, TurnState::InFlight, "{rel} cut {cut}");
        assert!(last.final_answer.is_none(), "{rel}");
        let head = lines[..done_at].concat();
        let t = formats::read(&head);
        let a = analysis::analyze(&t, &head, &growing);
        assert_eq!(a.turns.last().unwrap().state, TurnState::Complete, "{rel}");
    }
}
