//! Hand-built transcripts and analyses for view / outline tests, independent of the readers.
//!
//! [`Doc`] writes one source line per entry (the text is not a real transcript format: only
//! the byte spans matter to the view) and records the spans of every string it writes.
#![allow(dead_code)]

use transcript_ls::analysis::{
    Analysis, Duration, DurationSource, FinalAnswer, Run, RunKind, Throughput, Turn, TurnKind,
    TurnState,
};
use transcript_ls::model::{
    Block, BlockKind, Entry, Format, Role, Str, ToolResult, ToolUse, Transcript,
};

/// A block to write.
pub enum B<'a> {
    Text(&'a str),
    Thinking(&'a str),
    Tool {
        id: &'a str,
        name: &'a str,
        summary: &'a str,
    },
    Result {
        id: &'a str,
        summary: &'a str,
        content: &'a str,
        error: bool,
    },
    Image {
        media_type: &'a str,
        data_len: usize,
    },
}

#[derive(Default)]
pub struct Doc {
    pub src: String,
    pub t: Transcript,
}

impl Doc {
    pub fn new() -> Doc {
        let mut d = Doc::default();
        d.t.format = Some(Format::ClaudeCode);
        d
    }

    /// Appends a string literal to the source; returns (literal span, contents span).
    fn lit(&mut self, s: &str) -> (std::ops::Range<usize>, std::ops::Range<usize>) {
        let json = serde_json::to_string(s).unwrap();
        let start = self.src.len();
        self.src.push_str(&json);
        let end = self.src.len();
        (start..end, start + 1..end - 1)
    }

    /// Adds one entry (one source line) with the given blocks; returns its index.
    pub fn entry(&mut self, role: Role, record_type: &str, blocks: &[B]) -> usize {
        let line = self.t.entries.len();
        let start = self.src.len();
        self.src.push_str("{\"blocks\":[");
        let mut out = Vec::new();
        for (i, b) in blocks.iter().enumerate() {
            if i > 0 {
                self.src.push(',');
            }
            let kind_and_span = match b {
                B::Text(s) => {
                    let (span, raw) = self.lit(s);
                    (BlockKind::Text { text: Str { raw } }, span)
                }
                B::Thinking(s) => {
                    let (span, raw) = self.lit(s);
                    (
                        BlockKind::Thinking {
                            text: Str { raw },
                            encrypted: false,
                        },
                        span,
                    )
                }
                B::Tool { id, name, summary } => {
                    let (span, _) = self.lit(summary);
                    (
                        BlockKind::ToolUse(Box::new(ToolUse {
                            id: (*id).into(),
                            name: (*name).into(),
                            input: span.clone(),
                            summary: summary.to_string(),
                            subagent: None,
                        })),
                        span,
                    )
                }
                B::Result {
                    id,
                    summary,
                    content,
                    error,
                } => {
                    let (span, raw) = self.lit(content);
                    (
                        BlockKind::ToolResult(Box::new(ToolResult {
                            tool_use_id: (*id).into(),
                            is_error: *error,
                            content: raw.clone(),
                            content_len: raw.len(),
                            summary: summary.to_string(),
                            images: Vec::new(),
                            subagent: None,
                        })),
                        span,
                    )
                }
                B::Image {
                    media_type,
                    data_len,
                } => {
                    let (span, _) = self.lit("<image data elided>");
                    (
                        BlockKind::Image {
                            media_type: (*media_type).into(),
                            data_len: *data_len,
                        },
                        span,
                    )
                }
            };
            out.push(Block {
                span: kind_and_span.1,
                kind: kind_and_span.0,
            });
        }
        self.src.push_str("]}");
        let end = self.src.len();
        self.src.push('\n');
        let mut e = Entry::new(line, start..end, role, record_type);
        e.blocks = out.into();
        self.t.entries.push(e);
        self.t.line_count = line + 1;
        line
    }
}

/// A turn with empty figures; callers fill in what the test needs.
pub fn turn(
    n: usize,
    kind: TurnKind,
    opener: Option<usize>,
    entries: std::ops::Range<usize>,
    title: &str,
) -> Turn {
    Turn {
        sidechain_usage: None,
        n,
        kind,
        opener,
        start_line: entries.start,
        end_line: entries.end.saturating_sub(1),
        records: entries.len(),
        entries,
        title: title.to_string(),
        runs: Default::default(),
        activity: None,
        final_answer: None,
        state: TurnState::Complete,
        steps: Default::default(),
        comments: 0,
        tool_calls: 0,
        duration: None,
        throughput: Throughput::None { reason: "test" },
        finished_at_ms: None,
        finished_at: None,
        usage: Default::default(),
        steering: Default::default(),
        gates: Default::default(),
        subagent_calls: Default::default(),
        compactions: Default::default(),
        branches: Default::default(),
        replayed: false,
    }
}

/// A run over whole entries (block 0 of each).
pub fn run(kind: RunKind, blocks: &[(usize, usize)], tool_calls: u32) -> Run {
    Run {
        kind,
        blocks: blocks.to_vec(),
        start_line: blocks.first().map_or(0, |b| b.0),
        end_line: blocks.last().map_or(0, |b| b.0),
        steps: tool_calls,
        tool_calls,
    }
}

pub fn answer(blocks: &[(usize, usize)]) -> FinalAnswer {
    FinalAnswer {
        stray_markers: Vec::new(),
        blocks: blocks.to_vec(),
        marker: None,
        end_turn: true,
    }
}

pub fn recorded(ms: u64) -> Option<Duration> {
    Some(Duration {
        ms,
        source: DurationSource::Recorded,
    })
}

/// The standard small session used by several tests:
/// 0 prompt · 1 thinking · 2 narration · 3 Bash call · 4 its result · 5 final answer.
pub fn small_session() -> (Doc, Analysis) {
    let mut d = Doc::new();
    d.t.meta.session_id = Some("SESSION-1".into());
    d.t.meta.version = Some("2.1.100".into());
    d.t.meta.model = Some("claude-opus-4-7".into());
    d.t.meta.cwd = Some("/home/USER/project".into());
    let p = d.entry(
        Role::Prompt(transcript_ls::model::PromptKind::Typed),
        "user",
        &[B::Text("Fix the failing test\nin src/lib.rs")],
    );
    let th = d.entry(
        Role::Model,
        "assistant",
        &[B::Thinking("The test   fails\nbecause of an off-by-one.")],
    );
    let n = d.entry(
        Role::Model,
        "assistant",
        &[B::Text("Let me run the tests.")],
    );
    let c = d.entry(
        Role::Model,
        "assistant",
        &[B::Tool {
            id: "toolu_1",
            name: "Bash",
            summary: "cargo test",
        }],
    );
    let r = d.entry(
        Role::ToolResults,
        "user",
        &[B::Result {
            id: "toolu_1",
            summary: "test result: FAILED. 11 passed; 1 failed",
            content: "running 12 tests\ntest a ... ok\ntest result: FAILED. 11 passed; 1 failed",
            error: true,
        }],
    );
    let f = d.entry(
        Role::Model,
        "assistant",
        &[B::Text(
            "Fixed the off-by-one in `parse_row`.\n\nAll 12 tests pass.",
        )],
    );
    let mut t = turn(
        1,
        TurnKind::Prompt,
        Some(p),
        p..f + 1,
        "Fix the failing test",
    );
    t.runs = vec![
        run(RunKind::Thought, &[(th, 0)], 0),
        run(RunKind::Prose, &[(n, 0)], 0),
        run(RunKind::Work, &[(c, 0), (r, 0)], 1),
        run(RunKind::Prose, &[(f, 0)], 0),
    ]
    .into();
    t.final_answer = Some(Box::new(answer(&[(f, 0)])));
    t.comments = 1;
    t.tool_calls = 1;
    t.duration = recorded(145_000);
    t.throughput = Throughput::Estimate {
        tok_per_s: 41.2,
        tokens: 800,
        decode_ms: 19_400,
    };
    t.finished_at = Some("07:28 am".into());
    let a = Analysis {
        turns: vec![t],
        tool_pairs: vec![transcript_ls::analysis::ToolPair {
            use_entry: c,
            use_block: 0,
            result_entry: Some(r),
            result_block: Some(0),
        }],
        turn_count: 1,
        usage: transcript_ls::model::Usage {
            input: 1200,
            output: 800,
            cache_creation: 30_000,
            cache_read: 1_200_000,
            reasoning: 0,
        },
        ..Default::default()
    };
    (d, a)
}

/// A session exercising the other elements:
/// turn 1 (prompt with an image first, a steering prompt, a Task call with two inline
/// sidechain records, a final answer after a marker holding a gate line), a compaction,
/// turn 2 (a wake-up that ended on a tool call: replyless), turn 3 (in flight).
pub fn rich_session() -> (Doc, Analysis) {
    use transcript_ls::analysis::{Compaction, Gate, Marker, SubagentCall, ToolPair, Verdict};
    use transcript_ls::model::{PromptKind, WakeKind};
    let mut d = Doc::new();
    d.t.meta.session_id = Some("SESSION-2".into());
    let p = d.entry(
        Role::Prompt(PromptKind::Typed),
        "user",
        &[
            B::Image {
                media_type: "image/png",
                data_len: 1_398_104,
            },
            B::Text("Make the page look like this mock-up"),
        ],
    );
    let task = d.entry(
        Role::Model,
        "assistant",
        &[B::Tool {
            id: "toolu_T",
            name: "Task",
            summary: "Audit the CSS",
        }],
    );
    let s1 = d.entry(
        Role::Meta,
        "user",
        &[B::Text("Audit the CSS files for unused rules")],
    );
    let s2 = d.entry(
        Role::Model,
        "assistant",
        &[B::Tool {
            id: "toolu_G",
            name: "Grep",
            summary: "\\.unused",
        }],
    );
    let s3 = d.entry(
        Role::ToolResults,
        "user",
        &[B::Result {
            id: "toolu_G",
            summary: "3 matches",
            content: "a.css\nb.css\nc.css",
            error: false,
        }],
    );
    let steer = d.entry(
        Role::Steering,
        "attachment",
        &[B::Text("also add a --json flag")],
    );
    let tr = d.entry(
        Role::ToolResults,
        "user",
        &[B::Result {
            id: "toolu_T",
            summary: "Found 3 unused rules",
            content: "Found 3 unused rules",
            error: false,
        }],
    );
    let fin = d.entry(
        Role::Model,
        "assistant",
        &[B::Text("Working notes.\n[[OMNISCIO_FINAL]]\nDone: the page matches the mock-up.\n[DEV-PIPELINE | GATE 3 | AUTO: PASS]")],
    );
    let cb = d.entry(
        Role::CompactBoundary(Box::new(transcript_ls::model::CompactBoundary {
            trigger: Some("auto".into()),
            pre_tokens: Some(167_094),
        })),
        "system/compact_boundary",
        &[],
    );
    let cs = d.entry(
        Role::CompactSummary,
        "user",
        &[B::Text(
            "Summary: the user asked for a page redesign.\nWe matched the mock-up.",
        )],
    );
    let w = d.entry(
        Role::Wake(WakeKind::TaskNotification),
        "user",
        &[B::Text(
            "<task-notification>build finished</task-notification>",
        )],
    );
    let wc = d.entry(
        Role::Model,
        "assistant",
        &[B::Tool {
            id: "toolu_B",
            name: "Bash",
            summary: "npm run build",
        }],
    );
    let wr = d.entry(
        Role::ToolResults,
        "user",
        &[B::Result {
            id: "toolu_B",
            summary: "exit 1",
            content: "exit 1",
            error: true,
        }],
    );
    let i = d.entry(
        Role::Interruption,
        "user",
        &[B::Text("[Request interrupted by user]")],
    );
    let p3 = d.entry(
        Role::Prompt(PromptKind::Typed),
        "user",
        &[B::Text("Try again")],
    );
    let n3 = d.entry(
        Role::Model,
        "assistant",
        &[B::Text("Retrying the build now.")],
    );

    for e in [s1, s2, s3] {
        d.t.entries[e].sidechain = true;
        d.t.entries[e].set_agent_id(Some("aaa".into()));
    }
    // Marker span and answer start inside the final text block.
    let BlockKind::Text { text } = &d.t.entries[fin].blocks[0].kind else {
        unreachable!()
    };
    let raw = text.raw.clone();
    let m_at = raw.start + d.src[raw.clone()].find("[[OMNISCIO_FINAL]]").unwrap();
    let m_end = m_at + "[[OMNISCIO_FINAL]]\\n".len();
    let g_at = raw.start + d.src[raw.clone()].find("[DEV-PIPELINE").unwrap();
    let g_end = raw.end;

    let mut t1 = turn(
        1,
        TurnKind::Prompt,
        Some(p),
        p..cs + 1,
        "Make the page look like this mock-up",
    );
    t1.runs = vec![
        run(RunKind::Work, &[(task, 0), (tr, 0)], 1),
        run(RunKind::Prose, &[(fin, 0)], 0),
    ]
    .into();
    t1.final_answer = Some(
        FinalAnswer {
            stray_markers: Vec::new(),
            blocks: vec![(fin, 0)],
            marker: Some(Box::new(Marker {
                duplicate_lead: None,
                entry: fin,
                block: 0,
                span: m_at..m_end,
                answer_start: m_end,
            })),
            end_turn: true,
        }
        .into(),
    );
    t1.tool_calls = 1;
    t1.steering = vec![steer].into();
    t1.gates = vec![0].into();
    t1.subagent_calls = vec![0].into();
    t1.compactions = vec![0].into();
    let mut t2 = turn(
        2,
        TurnKind::Wake,
        Some(w),
        w..i + 1,
        "background task finished",
    );
    t2.runs = vec![run(RunKind::Work, &[(wc, 0), (wr, 0)], 1)].into();
    t2.state = TurnState::Replyless;
    t2.tool_calls = 1;
    let mut t3 = turn(3, TurnKind::Prompt, Some(p3), p3..n3 + 1, "Try again");
    t3.runs = vec![run(RunKind::Prose, &[(n3, 0)], 0)].into();
    t3.final_answer = Some(
        FinalAnswer {
            stray_markers: Vec::new(),
            blocks: vec![(n3, 0)],
            marker: None,
            end_turn: false,
        }
        .into(),
    );
    t3.state = TurnState::InFlight;

    let pair = |u: usize, r: usize| ToolPair {
        use_entry: u,
        use_block: 0,
        result_entry: Some(r),
        result_block: Some(0),
    };
    let a = Analysis {
        turns: vec![t1, t2, t3],
        tool_pairs: vec![pair(task, tr), pair(s2, s3), pair(wc, wr)],
        gates: vec![Gate {
            entry: fin,
            block: 0,
            line: fin,
            span: g_at..g_end,
            id: "3".into(),
            mode: "AUTO".into(),
            verdict_text: "PASS".into(),
            verdict: Verdict::Done,
            phase: Some(3),
            phase_name: "Build".into(),
            turn: 1,
        }],
        compactions: vec![Compaction {
            boundary: cb,
            summary: Some(cs),
            start_line: cb,
            end_line: cs,
            trigger: Some("auto".into()),
            pre_tokens: Some(167_094),
            n: 1,
        }],
        subagent_calls: vec![SubagentCall {
            agent_type: None,
            entry: task,
            block: 0,
            tool_use_id: "toolu_T".into(),
            agent_id: Some("aaa".into()),
            description: Some("Audit the CSS".into()),
            result_entry: Some(tr),
            sidechain_entries: vec![s1, s2, s3],
            start_line: task,
            end_line: tr,
            duration_ms: Some(85_000),
            total_tokens: Some(14_200),
            tool_uses: Some(1),
            turn: 1,
        }],
        steering: vec![steer],
        turn_count: 3,
        ..Default::default()
    };
    (d, a)
}

/// The view invariants of DESIGN.md §2 and the view contract; panics with the offending line.
pub fn check_view(v: &transcript_ls::view::View, what: &str) {
    let text = &v.text;
    if !text.is_empty() {
        assert!(text.ends_with('\n'), "{what}: text must end with a newline");
    }
    let lines: Vec<&str> = text.split_terminator('\n').collect();
    assert_eq!(v.lines.len(), lines.len(), "{what}: one ViewLine per line");
    for (i, l) in lines.iter().enumerate() {
        assert!(
            l.chars().count() <= 2000,
            "{what}: line {i} has {} chars",
            l.chars().count()
        );
        assert!(
            !l.contains('\r'),
            "{what}: line {i} holds a carriage return"
        );
        assert!(
            !l.contains(['\u{2028}', '\u{2029}']),
            "{what}: line {i} holds a line separator"
        );
        let b = l.as_bytes();
        let mut j = 0;
        while j < b.len() {
            let start = j;
            while j < b.len() && transcript_ls::view::text::is_b64(b[j]) {
                j += 1;
            }
            assert!(
                j - start < 200 || !transcript_ls::view::text::mixed_classes(&b[start..j]),
                "{what}: line {i} holds a base64 run: {}",
                &l[start..start + 80]
            );
            j += 1;
        }
    }
    for r in &v.regions {
        assert!(r.start_line < r.end_line, "{what}: empty region {r:?}");
        assert!(
            r.end_line < lines.len(),
            "{what}: region past the end {r:?}"
        );
    }
    let mut prev = (0usize, 0usize);
    for s in &v.spans {
        assert!(s.line < lines.len(), "{what}: span past the end {s:?}");
        let l = lines[s.line];
        assert!(
            s.start < s.end && s.end <= l.len(),
            "{what}: span outside its line {s:?}"
        );
        assert!(
            l.is_char_boundary(s.start) && l.is_char_boundary(s.end),
            "{what}: span not on chars {s:?}"
        );
        assert!(
            (s.line, s.start) >= prev,
            "{what}: spans out of order / overlapping at {s:?}"
        );
        prev = (s.line, s.end);
    }
    for a in &v.anchors {
        assert!(
            a.line <= a.end_line && a.end_line < lines.len(),
            "{what}: anchor out of range {a:?}"
        );
    }
}

/// Every `.jsonl` file under `dir` (recursively), sorted.
pub fn jsonl_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
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

/// Lines of the real transcripts under `../shared/corpus` (Claude Code, Codex, Pi, Copilot
/// CLI): at most `per_file` lines of each file, each at most `max_len` bytes. Panics when the
/// corpus yields 200 lines or fewer (it is not beside the repository).
pub fn corpus_lines(per_file: usize, max_len: usize) -> Vec<String> {
    let mut out = Vec::new();
    for f in jsonl_files(&shared().join("corpus")) {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        out.extend(
            text.lines()
                .filter(|l| l.len() <= max_len)
                .take(per_file)
                .map(str::to_string),
        );
    }
    assert!(
        out.len() > 200,
        "the corpus is readable ({} lines)",
        out.len()
    );
    out
}

/// The shared directory (`../shared` from the worktree root).
pub fn shared() -> std::path::PathBuf {
    std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared")).to_path_buf()
}

/// The repository root (one level above `server/`).
pub fn repo_root() -> std::path::PathBuf {
    std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).to_path_buf()
}

/// Snapshot names by file stem; a stem shared by several files is prefixed with its parent
/// directory's name (`claude-small`, `codex-small`).
pub fn snapshot_names(files: &[std::path::PathBuf]) -> Vec<String> {
    let stem = |p: &std::path::PathBuf| p.file_stem().unwrap().to_string_lossy().into_owned();
    files
        .iter()
        .map(|p| {
            let s = stem(p);
            if files.iter().filter(|q| stem(q) == s).count() > 1 {
                let parent = p
                    .parent()
                    .and_then(|d| d.file_name())
                    .unwrap()
                    .to_string_lossy();
                format!("{parent}-{s}")
            } else {
                s
            }
        })
        .collect()
}
