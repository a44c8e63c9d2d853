//! Gemini CLI session files (issue 21 item 2) through the real reader and analysis: our
//! fixtures in `fixtures/gemini/` (exact values in `fixtures/gemini/README.md`; line numbers
//! there are 1-based, here 0-based), the corpus's real recordings (counted by hand from the
//! raw lines), and live following (a grown file reads as the whole one, an append revises only
//! what it replaces).

use std::path::{Path, PathBuf};

use transcript_ls::analysis::{self, Analysis, Options, TurnKind, TurnState};
use transcript_ls::formats::{self, Reader};
use transcript_ls::ide::folding::{self, FoldKind};
use transcript_ls::model::{BlockKind, Format, Role, Severity, StopReason, Transcript, Usage};

fn opts() -> Options {
    Options {
        time_zone: Some("UTC".into()),
        file_complete: true,
        ..Default::default()
    }
}

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/gemini")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn load(name: &str) -> (String, Transcript, Analysis) {
    let src = fixture(name);
    let t = formats::read(&src);
    let a = analysis::analyze(&t, &src, &opts());
    (src, t, a)
}

/// The corpus's Gemini CLI recordings, by scenario folder.
fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus/ingo-eichhorst__Irrlicht/replaydata/agents/gemini-cli/scenarios")
}

fn corpus_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for scenario in std::fs::read_dir(corpus_dir()).unwrap().flatten() {
        for rec in std::fs::read_dir(scenario.path().join("recordings"))
            .unwrap()
            .flatten()
        {
            out.push(rec.path().join("transcript.jsonl"));
        }
    }
    out.sort();
    out
}

fn corpus(scenario: &str) -> (String, Transcript, Analysis) {
    let path = corpus_files()
        .into_iter()
        .find(|p| p.to_string_lossy().contains(scenario))
        .unwrap_or_else(|| panic!("{scenario}"));
    let src = std::fs::read_to_string(&path).unwrap();
    let t = formats::read(&src);
    let a = analysis::analyze(&t, &src, &opts());
    (src, t, a)
}

/// (line, role) of every entry, roles by name.
fn roles(t: &Transcript) -> Vec<(usize, String)> {
    t.entries
        .iter()
        .map(|e| {
            let r = match &e.role {
                Role::Prompt(_) => "prompt",
                Role::Model => "model",
                Role::ToolResults => "results",
                Role::Context => "context",
                Role::Meta => "meta",
                Role::LocalCommand => "local",
                Role::CompactBoundary(_) => "compact",
                Role::Interruption => "interrupt",
                Role::Other => "other",
                Role::Unparsed => "unparsed",
                _ => "?",
            };
            (e.line, r.to_string())
        })
        .collect()
}

fn role_names(t: &Transcript) -> Vec<String> {
    roles(t).into_iter().map(|(_, r)| r).collect()
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

fn turn_titles(a: &Analysis) -> Vec<(usize, String, usize, usize)> {
    a.turns
        .iter()
        .map(|x| (x.n, x.title.clone(), x.start_line, x.end_line))
        .collect()
}

fn texts(src: &str, t: &Transcript, i: usize) -> Vec<String> {
    t.entries[i]
        .blocks
        .iter()
        .map(|b| match &b.kind {
            BlockKind::Text { text } => format!("text:{}", text.decode(src)),
            BlockKind::Thinking { text, .. } => format!("thinking:{}", text.decode(src)),
            BlockKind::ToolUse(u) => format!("call:{}:{}:{}", u.id, u.name, u.summary),
            BlockKind::ToolResult(r) => {
                format!("result:{}:{}:{}", r.tool_use_id, r.is_error, r.summary)
            }
            BlockKind::Image { media_type, .. } => format!("image:{media_type}"),
            BlockKind::Other { block_type } => format!("other:{block_type}"),
        })
        .collect()
}

fn usage(input: u64, output: u64, cache_read: u64, reasoning: u64) -> Usage {
    Usage {
        input,
        output,
        cache_creation: 0,
        cache_read,
        reasoning,
    }
}

// ---- fixtures ------------------------------------------------------------------------------

/// Header, bootstrap context, prompts, streaming copies, tool calls paired to their results,
/// tokens and thinking, a shell escape, `displayContent`, the `$set.summary` title.
#[test]
fn gemini_tools_session() {
    let (src, t, a) = load("gemini-tools.jsonl");
    assert_eq!(t.format(), Format::GeminiCli);
    assert_eq!(
        t.meta.session_id.as_deref(),
        Some("11111111-aaaa-4bbb-8ccc-000000000001")
    );
    assert_eq!(t.meta.cwd.as_deref(), Some("/home/user/project"));
    assert_eq!(
        t.meta.title.as_deref(),
        Some("List and explain the sources")
    );
    assert_eq!(t.meta.model.as_deref(), Some("gemini-2.5-pro"));
    assert!(t.problems.is_empty(), "{:?}", t.problems);
    assert_eq!(
        role_names(&t),
        [
            "context", "context", "prompt", "meta", "meta", "meta", "model", "results", "meta",
            "model", "results", "meta", "model", "meta", "local", "meta", "prompt", "meta",
            "model", "meta", "meta"
        ]
    );
    // The bootstrap `<session_context>` is context, never a prompt, and not inherited.
    assert!(!t.entries[1].inherited);
    assert!(texts(&src, &t, 1)[0].starts_with("text:<session_context>"));
    // The first streaming copy of g-1 (line 4) is superseded by line 6: no blocks, no step.
    let old = &t.entries[4];
    assert!(old.repeated && old.step.is_none() && old.blocks.is_empty());
    assert_eq!(old.copy_of(), Some(6));
    assert_eq!(&*old.record_type, "gemini");
    // Heartbeats carry no time (they are no request time).
    assert_eq!(t.entries[3].timestamp_ms(), None);
    assert_eq!(&*t.entries[3].record_type, "$set/lastUpdated");
    assert_eq!(&*t.entries[20].record_type, "$set/summary");
    // The winning copy: thinking, text, the call; tokens mapped (module docs).
    assert_eq!(
        texts(&src, &t, 6),
        [
            "thinking:I should list the directory first.",
            "text:I will list the files.",
            "call:run_shell_command__a1:run_shell_command:ls src"
        ]
    );
    let step = t.entries[6].step.as_ref().unwrap();
    assert_eq!(&*step.key, "gemini-g-1");
    assert_eq!(step.model.as_deref(), Some("gemini-2.5-pro"));
    assert_eq!(step.stop, Some(StopReason::ToolUse));
    // input 1000 - cached 400 + tool 5; output 20 + thoughts 50.
    assert_eq!(step.usage, Some(usage(605, 70, 400, 50)));
    assert_eq!(step.usage.unwrap().total(), 1075); // the file's `total`
    assert_eq!(t.entries[12].step.as_ref().unwrap().stop, None);
    assert_eq!(
        texts(&src, &t, 7),
        ["result:run_shell_command__a1:false:Output: main.rs"]
    );
    // A failed call: `status: "error"` and `response.error`.
    assert_eq!(
        texts(&src, &t, 10),
        ["result:read_file__b2:true:File not found: src/missing.rs"]
    );
    assert_eq!(pairs(&t, &a), vec![(6, Some(7)), (9, Some(10))]);
    // The shell escape is a local command; the prompt shows what was typed.
    assert!(texts(&src, &t, 14)[0].starts_with("text:I ran the following shell command:"));
    assert_eq!(texts(&src, &t, 16), ["text:@src/main.rs explain it"]);
    assert_eq!(a.turn_count, 2);
    assert_eq!(
        turn_titles(&a),
        vec![
            (0, String::new(), 0, 1),
            (
                1,
                "List the sources, then read src/missing.rs.".into(),
                2,
                15
            ),
            (2, "@src/main.rs explain it".into(), 16, 20),
        ]
    );
    let t1 = &a.turns[1];
    assert_eq!((t1.tool_calls, t1.comments, t1.steps.len()), (2, 1, 3));
    assert_eq!(t1.duration.map(|d| d.ms), Some(14_000));
    assert_eq!(t1.state, TurnState::Complete);
    assert_eq!(answer_lines(&t, &a), vec![Some(vec![12]), Some(vec![18])]);
    // Each response once: the superseded copy is not counted.
    assert_eq!(a.steps.len(), 4);
    assert_eq!(a.usage, usage(905, 137, 3700, 64));
}

/// `$rewindTo` drops the message and all after it: an abandoned branch, folded, not counted;
/// the history sync after it adds nothing; a rewind to an unknown id drops nothing.
#[test]
fn gemini_rewind_folds_the_dropped_branch() {
    let (_, t, a) = load("gemini-rewind.jsonl");
    let abandoned: Vec<usize> = t
        .entries
        .iter()
        .filter(|e| e.abandoned)
        .map(|e| e.line)
        .collect();
    assert_eq!(abandoned, vec![6, 7, 8, 9]);
    assert_eq!(&*t.entries[10].record_type, "$rewindTo");
    assert_eq!(t.entries[10].role, Role::Meta);
    assert_eq!(&*t.entries[11].record_type, "$set/messages");
    assert_eq!(t.entries[11].role, Role::Meta);
    assert_eq!(a.turn_count, 2);
    assert_eq!(
        turn_titles(&a),
        vec![
            (0, String::new(), 0, 1),
            (1, "Say one".into(), 2, 11),
            (2, "Say three".into(), 12, 16),
        ]
    );
    assert_eq!(answer_lines(&t, &a), vec![Some(vec![4]), Some(vec![14])]);
    assert_eq!(a.branches.len(), 1);
    let b = &a.branches[0];
    assert_eq!((b.start_line, b.end_line, b.entries.len()), (6, 9, 4));
    assert_eq!(b.title, "Say two");
    assert_eq!(b.responses, 1);
    assert_eq!(b.usage.output, 20);
    assert_eq!(a.turns[1].branches, vec![0]);
    assert_eq!(a.steps.len(), 2);
    assert_eq!(a.usage, usage(230, 15, 0, 13));
    let folds = folding::raw_folds(&t, &a);
    let branch: Vec<(usize, usize, &str)> = folds
        .iter()
        .filter(|f| f.kind == FoldKind::AbandonedBranch)
        .map(|f| (f.start_line, f.end_line, f.label.as_str()))
        .collect();
    assert_eq!(branch, vec![(6, 9, "abandoned branch · 4 entries")]);
    assert_eq!(t.problems.len(), 1);
    let p = &t.problems[0];
    assert_eq!((p.line, p.severity), (16, Severity::Hint));
    assert_eq!(
        p.message,
        "rewind to message `no-such-id`, which is not in the history; nothing dropped"
    );
}

/// A `$set.messages` that drops the conversation and adds a `<state_snapshot>` is a
/// compaction carrying the snapshot; the turns it re-creates under new ids are no turns.
#[test]
fn gemini_compaction_is_a_divider_with_the_snapshot() {
    let (src, t, a) = load("gemini-compaction.jsonl");
    assert_eq!(
        role_names(&t),
        [
            "context", "context", "prompt", "meta", "model", "meta", "meta", "compact", "meta",
            "meta", "prompt", "meta", "model", "meta"
        ]
    );
    assert_eq!(&*t.entries[6].record_type, "$set/sessionId");
    assert_eq!(&*t.entries[8].record_type, "info");
    assert_eq!(
        texts(&src, &t, 7),
        [
            "text:<state_snapshot>\n    <overall_goal>Say words on request.</overall_goal>\n</state_snapshot>"
        ]
    );
    assert_eq!(a.compactions.len(), 1);
    let c = &a.compactions[0];
    assert_eq!((c.start_line, c.end_line), (7, 7));
    assert_eq!((c.trigger.as_deref(), c.pre_tokens), (None, None));
    assert_eq!(a.turn_count, 2);
    assert_eq!(a.turns[1].compactions, vec![0]);
    assert_eq!(answer_lines(&t, &a), vec![Some(vec![4]), Some(vec![12])]);
    assert_eq!(a.usage, usage(350, 31, 0, 27));
}

/// gemini-cli 0.40: a result lives only inside its call, and is read once the next message
/// shows no functionResponse follows; `info` "Request cancelled." is an interruption, `error`
/// a notice (no response), `warning` meta, an unknown type kept and named.
#[test]
fn gemini_embedded_results_errors_and_cancels() {
    let (src, t, a) = load("gemini-embedded-results.jsonl");
    assert_eq!(
        role_names(&t),
        [
            "context",
            "prompt",
            "meta",
            "model",
            "model",
            "prompt",
            "interrupt",
            "prompt",
            "meta",
            "meta",
            "other"
        ]
    );
    assert_eq!(
        texts(&src, &t, 3),
        [
            "call:run_shell_command_x:run_shell_command:ls -F",
            "result:run_shell_command_x:false:Output: README.md"
        ]
    );
    assert_eq!(pairs(&t, &a), vec![(3, Some(3))]);
    assert_eq!(&*t.entries[8].record_type, "error");
    assert!(t.entries[8].step.is_none());
    assert_eq!(texts(&src, &t, 8), ["text:[API Error: quota exceeded]"]);
    // The view shows it where it happened, in the quiet view too.
    let view = transcript_ls::view::render(&t, &a, &src, &Default::default());
    assert!(
        view.text.contains("⚠ error: [API Error: quota exceeded]"),
        "{}",
        view.text
    );
    assert_eq!(t.unknown.len(), 1);
    assert_eq!(
        (t.unknown[0].name.as_str(), t.unknown[0].line),
        ("gadget", 10)
    );
    assert_eq!(a.turn_count, 3);
    let states: Vec<TurnState> = a.turns.iter().skip(1).map(|x| x.state).collect();
    assert_eq!(
        states,
        [
            TurnState::Complete,
            TurnState::Replyless,
            TurnState::Replyless
        ]
    );
    assert_eq!(a.usage, usage(700, 15, 400, 0));
    assert_eq!(t.meta.model.as_deref(), Some("gemini-3-flash-preview"));
}

/// A file joining sessions: a second header starts session 2; an id of session 2 read again
/// after its rewind starts session 3, the same session written again, whose copies count once.
#[test]
fn gemini_joined_sessions_read_as_consecutive_sessions() {
    let (_, t, a) = load("gemini-joined.jsonl");
    let starts: Vec<(usize, usize, &str)> = t
        .meta
        .sessions
        .iter()
        .map(|s| (s.entry, s.line, s.id.as_str()))
        .collect();
    assert_eq!(
        starts,
        vec![
            (4, 4, "66666666-aaaa-4bbb-8ccc-000000000006"),
            (11, 11, "66666666-aaaa-4bbb-8ccc-000000000006")
        ]
    );
    assert_eq!(
        t.meta.session_id.as_deref(),
        Some("55555555-aaaa-4bbb-8ccc-000000000005")
    );
    let abandoned: Vec<usize> = t
        .entries
        .iter()
        .filter(|e| e.abandoned)
        .map(|e| e.line)
        .collect();
    assert_eq!(abandoned, vec![8, 9]);
    // Session 2's first two messages written again: copies of lines 6 and 7.
    let copies: Vec<(usize, Option<usize>)> = t
        .entries
        .iter()
        .filter(|e| e.repeated)
        .map(|e| (e.line, e.copy_of()))
        .collect();
    assert_eq!(copies, vec![(11, Some(6)), (12, Some(7))]);
    assert_eq!(
        turn_titles(&a),
        vec![
            (0, String::new(), 0, 1),
            (1, "First session prompt".into(), 2, 5),
            (2, "Second session prompt".into(), 6, 12),
            (3, "Third part prompt".into(), 13, 14),
        ]
    );
    assert_eq!(
        answer_lines(&t, &a),
        vec![Some(vec![3]), Some(vec![7]), Some(vec![14])]
    );
    assert_eq!(a.usage, usage(340, 9, 0, 0));
}

// ---- the corpus's real recordings -----------------------------------------------------------

/// 1-1: one prompt after the bootstrap context; tokens 11476 / 1 / 287 thoughts.
#[test]
fn corpus_session_start() {
    let (_, t, a) = corpus("1-1_session-start");
    assert_eq!(t.format(), Format::GeminiCli);
    assert_eq!(
        role_names(&t),
        ["context", "context", "prompt", "meta", "model", "meta"]
    );
    assert_eq!(a.turn_count, 1);
    assert_eq!(a.usage, usage(11476, 288, 0, 287));
    assert_eq!(t.meta.model.as_deref(), Some("gemini-3.5-flash"));
    assert_eq!(
        t.meta.cwd.as_deref(),
        Some(
            "/Users/ingo/projects/irrlicht/.claude/worktrees/gemini-cli-onboard/.build/refresh/gemini-cli/1-1_session-start-20260611T191532/cwd"
        )
    );
    assert_eq!(answer_lines(&t, &a), vec![Some(vec![4])]);
}

/// 1-6: "two" is rewound away (lines 6–9), the re-typed prompt runs 4 tool calls (each
/// message written twice while streaming: 4 superseded copies), answer "three".
#[test]
fn corpus_checkpoint_rewind() {
    let (_, t, a) = corpus("1-6_checkpoint-rewind");
    let abandoned: Vec<usize> = t
        .entries
        .iter()
        .filter(|e| e.abandoned)
        .map(|e| e.line)
        .collect();
    assert_eq!(abandoned, vec![6, 7, 8, 9]);
    let superseded: Vec<usize> = t
        .entries
        .iter()
        .filter(|e| e.repeated)
        .map(|e| e.line)
        .collect();
    assert_eq!(superseded, vec![14, 19, 24, 29]);
    assert_eq!(a.turn_count, 2);
    assert_eq!(
        pairs(&t, &a),
        vec![
            (16, Some(17)),
            (21, Some(22)),
            (26, Some(27)),
            (31, Some(32))
        ]
    );
    assert_eq!(a.steps.len(), 6);
    assert_eq!(answer_lines(&t, &a), vec![Some(vec![4]), Some(vec![34])]);
    // Steps counted: one, three's five responses; "two" (11490 / 1 / 134) is not.
    let input = 11480 + 11247 + 12580 + 12704 + 12891 + 12980;
    let output = (1 + 210) + (18 + 1232) + (20 + 16) + (15 + 13) + (24 + 27) + (1 + 629);
    let thoughts = 210 + 1232 + 16 + 13 + 27 + 629;
    assert_eq!(a.usage, usage(input, output, 0, thoughts));
    assert_eq!(a.branches[0].usage.output, 135);
}

/// 2-12: the history rewrite after `/compress` is a compaction; "still-here" is turn 2.
#[test]
fn corpus_context_compaction() {
    let (_, t, a) = corpus("2-12_context-compaction");
    assert_eq!(a.compactions.len(), 1);
    assert_eq!(a.compactions[0].start_line, 7);
    assert_eq!(a.turn_count, 2);
    assert_eq!(a.turns[2].title, "Reply with exactly the word: still-here");
    assert_eq!(a.usage, usage(11482 + 11944, 211 + 75, 0, 210 + 72));
    assert!(t.problems.is_empty());
}

/// The corpus's five recordings: turns, responses and tool calls as counted from the raw
/// lines (a `user` text message not `<session_context>` per turn, one response per distinct
/// `gemini` id outside the rewound branch, one call per distinct `toolCalls[].id`).
#[test]
fn corpus_counts() {
    let mut got = Vec::new();
    for p in corpus_files() {
        let src = std::fs::read_to_string(&p).unwrap();
        let t = formats::read(&src);
        let a = analysis::analyze(&t, &src, &opts());
        let name = p
            .parent()
            .and_then(|r| r.parent())
            .and_then(|r| r.parent())
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .to_string();
        let calls = a.turns.iter().map(|x| x.tool_calls as usize).sum::<usize>();
        got.push((name, a.turn_count, a.steps.len(), calls, t.problems.len()));
    }
    let want = [
        ("1-1_session-start", 1, 1, 0, 0),
        ("1-6_checkpoint-rewind", 2, 6, 4, 0),
        ("2-12_context-compaction", 2, 2, 0, 0),
        ("2-2_auto-executed-tool-call", 1, 2, 1, 0),
        ("2-6_long-agentic-session-stress", 4, 5, 1, 0),
    ];
    let want: Vec<(String, usize, usize, usize, usize)> = want
        .iter()
        .map(|&(n, a, b, c, d)| (n.to_string(), a, b, c, d))
        .collect();
    assert_eq!(got, want);
}

// ---- live following -------------------------------------------------------------------------

/// Every fixture and recording fed line by line, and in odd byte pieces, gives the transcript
/// and the analysis a whole read gives.
#[test]
fn grown_files_read_as_whole_ones() {
    let mut sources: Vec<String> = [
        "gemini-tools.jsonl",
        "gemini-rewind.jsonl",
        "gemini-compaction.jsonl",
        "gemini-embedded-results.jsonl",
        "gemini-joined.jsonl",
    ]
    .iter()
    .map(|n| fixture(n))
    .collect();
    sources.extend(
        corpus_files()
            .iter()
            .map(|p| std::fs::read_to_string(p).unwrap()),
    );
    for src in &sources {
        let whole = formats::read(src);
        let whole_a = analysis::analyze(&whole, src, &opts());
        for step in [0usize, 7, 101] {
            let mut r = Reader::new();
            let mut at = 0;
            while at < src.len() {
                at = if step == 0 {
                    src[at..].find('\n').map_or(src.len(), |n| at + n + 1)
                } else {
                    (at + step).min(src.len())
                };
                while !src.is_char_boundary(at) {
                    at += 1;
                }
                r.feed(&src[..at]);
            }
            r.finish(src);
            let grown = r.into_transcript();
            assert_eq!(format!("{grown:?}"), format!("{whole:?}"), "step {step}");
            let a = analysis::analyze(&grown, src, &opts());
            assert_eq!(format!("{a:?}"), format!("{whole_a:?}"), "step {step}");
        }
    }
}

/// An append costs what it adds: a plain line revises no earlier entry; a streaming copy
/// revises only the copy it supersedes; a rewind revises from the first record it drops.
#[test]
fn appends_revise_only_what_they_replace() {
    let src = fixture("gemini-tools.jsonl");
    let ends: Vec<usize> = src.match_indices('\n').map(|(i, _)| i + 1).collect();
    let mut r = Reader::new();
    let mut revised = Vec::new();
    for &end in &ends {
        r.feed(&src[..end]);
        let (t, lent) = r.lend();
        let mut t = t;
        revised.push(t.take_revised());
        r = lent.restore(t);
    }
    // Line 6 supersedes line 4; line 9 (a new response) closes line 6's calls, answered
    // already by line 7: nothing to revise.
    let want: Vec<Option<usize>> = (0..ends.len())
        .map(|i| if i == 6 { Some(4) } else { None })
        .collect();
    assert_eq!(revised, want);

    let src = fixture("gemini-rewind.jsonl");
    let ends: Vec<usize> = src.match_indices('\n').map(|(i, _)| i + 1).collect();
    let mut r = Reader::new();
    let mut revised = Vec::new();
    for &end in &ends {
        r.feed(&src[..end]);
        let (mut t, lent) = r.lend();
        revised.push(t.take_revised());
        r = lent.restore(t);
    }
    let want: Vec<Option<usize>> = (0..ends.len())
        .map(|i| if i == 10 { Some(6) } else { None })
        .collect();
    assert_eq!(revised, want);
}

/// Detection: the header, a `$set` / `$rewindTo` envelope, or a `gemini` message; a bare
/// `user` message alone stays unknown.
#[test]
fn gemini_lines_are_detected() {
    let d = |s: &str| formats::detect_line(s);
    assert_eq!(
        d(
            r#"{"sessionId":"s","projectHash":"h","startTime":"2026-06-01T00:00:00.000Z","kind":"main"}"#
        ),
        Some(Format::GeminiCli)
    );
    assert_eq!(
        d(r#"{"$set":{"lastUpdated":"2026-06-01T00:00:00.000Z"}}"#),
        Some(Format::GeminiCli)
    );
    assert_eq!(d(r#"{"$rewindTo":"u-1"}"#), Some(Format::GeminiCli));
    assert_eq!(
        d(r#"{"id":"g","timestamp":"2026-06-01T00:00:00.000Z","type":"gemini","content":"ok"}"#),
        Some(Format::GeminiCli)
    );
    assert_eq!(d(r#"{"type":"user","id":"1","content":"hi"}"#), None);
}

/// Garbage never panics and never hides a line: invalid JSON, non-objects, wrong types.
#[test]
fn odd_lines_are_kept() {
    let src = concat!(
        r#"{"sessionId":"s","projectHash":"h"}"#,
        "\n",
        "not json\n",
        "[1,2]\n",
        r#"{"$set":7}"#,
        "\n",
        r#"{"$rewindTo":5}"#,
        "\n",
        r#"{"id":"g","type":"gemini","content":{"x":1},"thoughts":"no","toolCalls":[1,{"id":3}],"tokens":{"input":-4,"output":"x"}}"#,
        "\n",
        r#"{"id":"u","type":"user","content":[{"functionResponse":"bad"}]}"#,
        "\n",
        // `g` again, not the last message: the session written again, `g` a copy.
        r#"{"id":"g","type":"gemini","content":"again"}"#,
        "\n",
        r#"{"$set":{"messages":"no"}}"#,
        "\n",
        r#"{"$set":{"messages":[1,{"id":"z","type":"user","content":"<state_snapshot>x"}]}}"#,
        "\n",
    );
    let t = formats::read(src);
    assert_eq!(t.format(), Format::GeminiCli);
    assert_eq!(t.entries.len(), 10);
    assert_eq!(
        role_names(&t),
        [
            "context", "unparsed", "unparsed", "other", "meta", "model", "results", "meta", "meta",
            "context"
        ]
    );
    let a = analysis::analyze(&t, src, &opts());
    assert_eq!(a.usage, usage(0, 0, 0, 0));
}

// ---- the session index and sub-agent files --------------------------------------------------

/// A `~/.gemini/tmp` root: a session file in `<project>/chats/`, and its sub-agent's record in
/// `chats/<session id>/`. The index titles it from `$set.summary`, takes the project from the
/// bootstrap context, counts its turns, links the sub-agent file both ways.
#[test]
fn index_titles_projects_and_links_subagent_files() {
    use transcript_ls::index::disk;
    use transcript_ls::index::{SessionIndex, SessionQuery};
    let dir = tempfile::tempdir().unwrap();
    let chats = dir.path().join("project/chats");
    let sid = "11111111-aaaa-4bbb-8ccc-000000000001";
    std::fs::create_dir_all(chats.join(sid)).unwrap();
    let main = chats.join("session-2026-06-01T10-00-11111111.jsonl");
    std::fs::write(&main, fixture("gemini-tools.jsonl")).unwrap();
    let sub = chats
        .join(sid)
        .join("77777777-aaaa-4bbb-8ccc-000000000007.jsonl");
    std::fs::write(
        &sub,
        concat!(
            r#"{"sessionId":"77777777-aaaa-4bbb-8ccc-000000000007","projectHash":"ab","startTime":"2026-06-01T10:00:06.000Z","lastUpdated":"2026-06-01T10:00:06.000Z","kind":"subagent","directories":["/home/user/project"]}"#,
            "\n",
            r#"{"id":"s-1","timestamp":"2026-06-01T10:00:06.000Z","type":"user","content":[{"text":"Find the tests."}]}"#,
            "\n",
            r#"{"id":"s-2","timestamp":"2026-06-01T10:00:08.000Z","type":"gemini","content":"None.","tokens":{"input":10,"output":1,"cached":0,"thoughts":0,"tool":0,"total":11},"model":"gemini-2.5-flash"}"#,
            "\n",
        ),
    )
    .unwrap();
    // Another agent's file in the same folder is left alone by the layout.
    assert_eq!(formats::gemini::main_of(&main), None);
    assert_eq!(formats::gemini::main_of(&sub), Some(main.clone()));
    let kids: Vec<(String, PathBuf)> = formats::gemini::children(&main, &[])
        .into_iter()
        .map(|k| (k.agent_id, k.path))
        .collect();
    assert_eq!(
        kids,
        vec![(
            "77777777-aaaa-4bbb-8ccc-000000000007".to_string(),
            sub.clone()
        )]
    );
    assert!(formats::gemini::children(&sub, &[]).is_empty());
    let st = formats::read(&std::fs::read_to_string(&sub).unwrap());
    assert!(st.meta.is_subagent_file);
    assert_eq!(st.meta.cwd.as_deref(), Some("/home/user/project"));

    let mut idx = SessionIndex::new();
    for p in disk::scan_roots(&[dir.path().to_path_buf()]) {
        disk::update(&mut idx, &p).unwrap();
    }
    let list = |now_ms: i64| {
        idx.sessions(
            &SessionQuery {
                limit: Some(10),
                ..SessionQuery::default()
            },
            now_ms,
        )
    };
    // Long after the last write: not live. Newest first.
    let all = list(i64::MAX / 2);
    type Row<'a> = (
        String,
        &'a str,
        String,
        &'a str,
        Option<&'a str>,
        usize,
        bool,
    );
    let got: Vec<Row> = all
        .iter()
        .map(|s| {
            (
                s.path.file_name().unwrap().to_string_lossy().into_owned(),
                s.format,
                s.title.clone(),
                s.title_source,
                s.project.as_deref(),
                s.turns,
                s.live,
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "session-2026-06-01T10-00-11111111.jsonl".into(),
                "gemini-cli",
                "List and explain the sources".into(),
                "summary",
                Some("/home/user/project"),
                2,
                false
            ),
            (
                "77777777-aaaa-4bbb-8ccc-000000000007.jsonl".into(),
                "gemini-cli",
                "Find the tests.".into(),
                "prompt",
                Some("/home/user/project"),
                1,
                false
            ),
        ]
    );
    // Just after it was written: its last turn has no completion evidence (Gemini records no
    // finish reason), so it is live.
    let written = std::fs::metadata(&main)
        .unwrap()
        .modified()
        .unwrap()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let now = list(written + 1000);
    assert!(now.iter().find(|s| s.path == main).unwrap().live);
    let m = all.iter().find(|s| s.path == main).unwrap();
    assert_eq!(m.children, vec![sub.clone()]);
    let k = all.iter().find(|s| s.path == sub).unwrap();
    assert_eq!(k.parent.as_deref(), Some(main.as_path()));
}
