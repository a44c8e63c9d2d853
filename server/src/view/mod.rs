//! The rendered virtual document (`transcript:` URIs) and its source map (DESIGN.md §2).
//!
//! [`render`] turns a transcript and its analysis into Markdown-flavoured text a person reads:
//! a session header, `## Turn N` headings, the prompt, each work run as a one-line header with
//! its steps indented under it, prose at full length, final answers marked, gate lines,
//! compaction dividers, sub-agent sections. Quiet mode (the default) shows prompts and
//! completed final answers only (seed 004); verbose mode shows everything.
//!
//! The view is derived from the model, never parsed back: every line carries its [`Origin`], and
//! the regions and spans that editor features need on the view are produced here, in view
//! line / byte terms.
//!
//! What the agent changed is found here too, since the view shows it: [`edits`] (the
//! file-editing tool calls and the two sides of each) and [`changes`] (each turn's change set
//! and the session's, issue 22), also read by the session index and the editor features.

pub mod ansi;
pub mod changes;
pub mod diff;
pub mod edits;
pub mod markdown;
pub(crate) mod render;
pub mod text;
pub mod words;
pub mod wrap;

use crate::analysis::{Analysis, Phase};
use crate::model::{Span, Transcript};

/// View options (settings `verbose`; query `?verbose=1` on a `transcript:` URI).
#[derive(Debug, Clone, Default)]
pub struct ViewOptions {
    /// Show everything (work runs, thinking, meta records), not only prompts and completed
    /// final answers.
    pub verbose: bool,
}

/// The rendered document.
#[derive(Debug, Clone, Default)]
pub struct View {
    /// The text, lines separated by `\n`, ending with `\n`. No line over 2,000 characters;
    /// base64 never appears; bulky payloads are shortened with an explicit marker
    /// (`… 141 KB more`).
    pub text: String,
    /// One entry per line of `text`: where it came from.
    pub lines: Vec<ViewLine>,
    /// Foldable regions (view lines, inclusive).
    pub regions: Vec<Region>,
    /// Highlighted spans (for semantic tokens), sorted by `(line, start)`, non-overlapping.
    pub spans: Vec<ViewSpan>,
    /// Outline anchors: one per turn heading (view line) and its children.
    pub anchors: Vec<Anchor>,
    /// Lines that continue the heading above them, sorted: filled by [`wrap::wrap`] when it
    /// breaks a long `# ` / `## ` line, so [`ansi::colored`] draws them bold like the
    /// heading; empty in a rendered view.
    pub heading_continuations: Vec<usize>,
    /// The lines that show an image placeholder (`[image/png · 34 KB]`), in line order, with
    /// where the image's data is in the source: what [`markdown::markdown`] turns into images
    /// for the Markdown preview (issue 23 item 6). The text itself never holds base64.
    pub images: Vec<ImageRef>,
}

/// An image shown as a placeholder on a view line (issue 23 item 6).
#[derive(Debug, Clone, PartialEq)]
pub struct ImageRef {
    /// The view line showing the placeholder.
    pub line: usize,
    /// The placeholder text on that line (`[image/png · 34 KB]`, from
    /// [`text::image_placeholder`]).
    pub placeholder: String,
    /// Source bytes of the JSON value holding the image: the image block itself, or a tool
    /// result's content (an array that may hold several).
    pub span: Span,
    /// Which image of `span` it is (0-based, in document order).
    pub index: usize,
}

/// Where a view line came from.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ViewLine {
    pub origin: Origin,
    /// Turn number this line belongs to (0 for the header / preamble).
    pub turn: usize,
}

/// The source of a view line.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Origin {
    /// Generated text (headers, blank lines, run labels) with no single record behind it.
    #[default]
    None,
    /// A record (entry index) and optionally one block of it, and the source byte span the
    /// line shows (for hover / go to definition into the raw file).
    Entry {
        entry: usize,
        block: Option<usize>,
        span: Option<Span>,
    },
}

/// Kinds of foldable region in the view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegionKind {
    Turn,
    Activity,
    WorkRun,
    Thought,
    LongPrompt,
    LongToolOutput,
    Compaction,
    Subagent,
    /// A branch the session left (issue 10).
    AbandonedBranch,
}

/// A foldable region of the view.
#[derive(Debug, Clone, PartialEq)]
pub struct Region {
    pub kind: RegionKind,
    /// View lines, inclusive; `start_line < end_line`.
    pub start_line: usize,
    pub end_line: usize,
    /// Text shown when collapsed (`Worked · 3 tool calls`, `2 comments · 6 tool calls`).
    pub label: String,
}

/// Kinds of highlighted span in the view (mapped to semantic token types by `crate::lsp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanKind {
    Prompt,
    FinalAnswer,
    Narration,
    Thinking,
    ToolName,
    ToolError,
    Gate,
    Meta,
    /// A line a file edit adds (`+…` under an edit tool call, issue 11).
    DiffAdded,
    /// A line a file edit removes (`-…`).
    DiffRemoved,
}

/// A highlighted span of one view line.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewSpan {
    pub line: usize,
    /// Byte offsets within the line.
    pub start: usize,
    pub end: usize,
    pub kind: SpanKind,
    /// Modifiers: the turn is in flight / incomplete; the span comes from a sidechain.
    pub in_flight: bool,
    pub incomplete: bool,
    pub sidechain: bool,
}

/// An outline anchor in the view.
#[derive(Debug, Clone, PartialEq)]
pub struct Anchor {
    /// Turn number; the anchor is the turn heading when `child` is `None`.
    pub turn: usize,
    pub line: usize,
    /// The child's outline name (`Worked · Read ×2, Edit auth.rs`, `Final answer`, `🔨 Build: PASS`,
    /// `Compaction 1`, `Sub-agent: Audit auth`, `↪ queued: add --json`); `None` for the turn
    /// heading (its name comes from the analysis: `Turn 3: Fix the failing test`).
    pub child: Option<String>,
    /// What the anchor marks.
    pub kind: AnchorKind,
    /// Last view line of the thing (inclusive, `>= line`).
    pub end_line: usize,
    /// Figures shown beside the name (`3 tool calls`, a gate's reason); empty when none. For
    /// turn headings, [`turn_detail`] of the turn.
    pub detail: String,
}

/// What an [`Anchor`] marks (the outline entry kinds of DESIGN.md §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnchorKind {
    Preamble,
    Turn,
    WorkRun,
    Thought,
    FinalAnswer,
    Gate,
    Compaction,
    Subagent,
    Steering,
    AbandonedBranch,
    /// A turn's change summary (issue 22): the `Changes` child.
    Changes,
    /// One file of it (a child of the `Changes` entry in the outline).
    ChangedFile,
    /// Where another session of the file starts (issue 20 item 3): the `── Session 2: <id> ──`
    /// divider, a child of the turn it opens or falls in.
    Session,
}

/// Renders the view of a transcript. Never panics; bounded output size (DESIGN.md §2: the
/// view of a 100 MB transcript stays well under 20 MiB and 300,000 lines).
pub fn render(
    transcript: &Transcript,
    analysis: &Analysis,
    source: &str,
    options: &ViewOptions,
) -> View {
    render::render(
        transcript,
        analysis,
        source,
        options,
        &crate::analysis::default_phases(),
        &mut |_| {},
    )
}

/// [`render`] with the gate phase table the analysis used (setting `gatePhases`), for the
/// emoji of gate lines.
pub fn render_with_phases(
    transcript: &Transcript,
    analysis: &Analysis,
    source: &str,
    options: &ViewOptions,
    phases: &[Phase],
) -> View {
    render::render(transcript, analysis, source, options, phases, &mut |_| {})
}

/// [`render_with_phases`], calling `after_turn` after each turn is rendered, in order (issue
/// 12: the caller drops the pages of a memory-mapped source the turn read, so rendering a
/// big file does not bring it back into memory whole).
pub fn render_turn_by_turn(
    transcript: &Transcript,
    analysis: &Analysis,
    source: &str,
    options: &ViewOptions,
    phases: &[Phase],
    after_turn: &mut dyn FnMut(&crate::analysis::Turn),
) -> View {
    render::render(transcript, analysis, source, options, phases, after_turn)
}

/// The collapsed label of a work run (seed 003, in [`words`]): `Worked · 3 tool calls` or
/// `Thought` for a run of thinking only.
pub fn run_label(run: &crate::analysis::Run) -> String {
    match run.kind {
        crate::analysis::RunKind::Thought => words::THOUGHT.to_string(),
        crate::analysis::RunKind::Work => words::worked(run.tool_calls),
        crate::analysis::RunKind::Prose => "Prose".to_string(),
    }
}

/// The outline name of a run (issue 11): what a work run did, by tool, in order of first use:
/// `Worked · Read ×3, Edit src/auth.rs, Bash cargo test`. A tool used once shows its key
/// argument (file paths shortened to their last two components, at most 40 characters); one
/// used several times its count. At most 100 characters (`…` past that). A thought is
/// `Thought`; a work run without tool calls `Worked`.
pub fn run_outline_name(run: &crate::analysis::Run, transcript: &Transcript) -> String {
    if run.kind != crate::analysis::RunKind::Work || run.tool_calls == 0 {
        return run_label(run);
    }
    let mut tools: Vec<(&str, usize, &str)> = Vec::new();
    for &(e, b) in &run.blocks {
        let Some(crate::model::BlockKind::ToolUse(u)) = transcript
            .entries
            .get(e)
            .and_then(|x| x.blocks.get(b))
            .map(|x| &x.kind)
        else {
            continue;
        };
        match tools.iter_mut().find(|t| t.0 == &*u.name) {
            Some(t) => t.1 += 1,
            None => tools.push((&u.name, 1, &u.summary)),
        }
    }
    let parts: Vec<String> = tools
        .iter()
        .map(|&(name, n, summary)| {
            if n > 1 {
                return format!("{name} ×{n}");
            }
            let arg = if summary.starts_with('/') {
                let comps: Vec<&str> = summary.rsplit('/').take(2).collect();
                comps.into_iter().rev().collect::<Vec<_>>().join("/")
            } else {
                summary.to_string()
            };
            let arg = text::one_line(&arg, 40);
            if arg.is_empty() {
                name.to_string()
            } else {
                format!("{name} {arg}")
            }
        })
        .collect();
    text::one_line(&format!("{} · {}", words::WORKED, parts.join(", ")), 100)
}

/// Every model the session's responses ran on, in order of first use (main thread and
/// sidechains; abandoned branches, inherited history and Claude Code's `<synthetic>` responses
/// left out), else the session's
/// recorded model (`Meta::model`) when no response names one. For the view's summary and
/// `stats --json` `models` (issue 11, item 5).
pub fn models_used(t: &Transcript) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in t.entries.iter().filter(|e| !e.abandoned && !e.inherited) {
        if let Some(m) = e.step.as_ref().and_then(|s| s.model.as_deref())
            && !m.trim().is_empty()
            // Claude Code names the responses it writes itself (API errors, interruptions)
            // `<synthetic>`: no model ran.
            && m != "<synthetic>"
            && !out.iter().any(|x| x == m)
        {
            out.push(m.to_string());
        }
    }
    if out.is_empty()
        && let Some(m) = t.meta.model.as_deref().filter(|m| !m.trim().is_empty())
    {
        out.push(m.to_string());
    }
    out
}

/// The per-turn figures (DESIGN.md §5 inlay hint, without the turn number): `4 comments · 6
/// tool calls · 2m 25s · ≈41 tok/s · 07:28 am`. Durations from [`text::fmt_duration`]; a
/// measured throughput has no `≈`, an estimate has one, none is left out. The preamble's is
/// its record count, `3 records`.
pub fn turn_detail(turn: &crate::analysis::Turn) -> String {
    if turn.kind == crate::analysis::TurnKind::Preamble {
        // The preamble has no activity: its record count, as its fold says.
        return words::count(turn.records as u64, words::RECORD);
    }
    let mut parts = vec![words::activity(turn.comments, turn.tool_calls)];
    if let Some(d) = turn.duration {
        parts.push(text::fmt_duration(d.ms));
    }
    match &turn.throughput {
        crate::analysis::Throughput::Measured { tok_per_s, .. } => {
            parts.push(format!("{} tok/s", text::fmt_tok_per_s(*tok_per_s)))
        }
        crate::analysis::Throughput::Estimate { tok_per_s, .. } => {
            parts.push(format!("≈{} tok/s", text::fmt_tok_per_s(*tok_per_s)))
        }
        crate::analysis::Throughput::None { .. } => {}
    }
    if let Some(at) = &turn.finished_at {
        parts.push(at.clone());
    }
    // The turn's state, as its hint says it (issue 20 item 9).
    if turn.state == crate::analysis::TurnState::InFlight {
        parts.push(words::IN_FLIGHT.to_string());
    }
    parts.join(" · ")
}

/// The first words of a turn's answer (issue 23 item 7), the detail of its outline entry so
/// that the turns' `Final answer` entries tell apart: the first non-empty line of its text
/// after a final marker, heading, quote and list marks (`#`, `>`, `-`) taken off its start, at
/// most 60 characters (`…` when cut). Reads at most the first 4 KiB of the answer's source.
pub fn answer_gist(
    transcript: &crate::model::Transcript,
    source: &str,
    fa: &crate::analysis::FinalAnswer,
) -> String {
    for &(e, b) in &fa.blocks {
        let Some(crate::model::BlockKind::Text { text }) = transcript
            .entries
            .get(e)
            .and_then(|en| en.blocks.get(b))
            .map(|bl| &bl.kind)
        else {
            continue;
        };
        let r = text.raw.clone();
        let mut start = match &fa.marker {
            Some(m) if (m.entry, m.block) == (e, b) && r.contains(&m.answer_start) => {
                m.answer_start
            }
            _ => r.start,
        };
        let mut end = r.end.min(start.saturating_add(4096));
        // Whole characters, and never half an escape (`\u00e9`): step back to a boundary.
        while start < end && !source.is_char_boundary(start) {
            start += 1;
        }
        while end > start && !source.is_char_boundary(end) {
            end -= 1;
        }
        let Some(raw) = source.get(start..end) else {
            continue;
        };
        let raw = match raw.rfind('\\') {
            Some(i) if end < r.end && raw.len() - i < 6 => &raw[..i],
            _ => raw,
        };
        let decoded = crate::source::json_string::decode(raw);
        let line = decoded
            .lines()
            .map(|l| l.trim().trim_start_matches(['#', '>', '-', ' ']))
            .find(|l| !l.is_empty() && !l.starts_with("[["));
        if let Some(l) = line {
            return text::one_line(l, 60);
        }
    }
    String::new()
}

/// The outline name and detail of a later session of the file (issue 20 item 3), the same in
/// the raw outline and the view's: `("Session 2: 019e…", "from thread 019d…")`, `Session 2`
/// for a session the file gives no id (Kiro CLI, Mistral Vibe rewound forks); `index` is
/// the position in `SessionMeta::sessions` (the file's first session is Session 1).
pub fn session_outline(index: usize, start: &crate::model::SessionStart) -> (String, String) {
    (
        if start.id.is_empty() {
            format!("Session {}", index + 2)
        } else {
            format!("Session {}: {}", index + 2, text::one_line(&start.id, 40))
        },
        start.parent.as_deref().map_or_else(String::new, |p| {
            format!("from thread {}", text::one_line(p, 40))
        }),
    )
}

/// The one-line name of a gate, as in the view and the outline: `🔨 Build: PASS`, with the
/// phase's emoji from `phases` (`🏷` for a badge: a custom gate outside the phase table).
pub fn gate_label(gate: &crate::analysis::Gate, phases: &[Phase]) -> String {
    let emoji = gate
        .phase
        .and_then(|i| phases.get(i))
        .map_or("🏷", |p| p.emoji.as_str());
    let name = text::one_line(&gate.phase_name, 60);
    format!("{emoji} {name}: {}", words::verdict(gate))
}

/// The reason shown beside a gate that needs you or is blocked (seed 000); empty otherwise.
pub fn gate_detail(g: &crate::analysis::Gate) -> String {
    match &g.verdict {
        crate::analysis::Verdict::NeedsYou { reason }
        | crate::analysis::Verdict::Blocked { reason } => text::one_line(reason, 120),
        _ => String::new(),
    }
}

/// A compaction divider's text: `Compaction 1 (auto, 167k tokens)`.
pub fn compaction_label(c: &crate::analysis::Compaction) -> String {
    let mut inner = Vec::new();
    if let Some(t) = &c.trigger {
        inner.push(text::one_line(t, 20));
    }
    if let Some(p) = c.pre_tokens {
        inner.push(format!("{} tokens", text::fmt_tokens(p)));
    }
    if inner.is_empty() {
        format!("Compaction {}", c.n)
    } else {
        format!("Compaction {} ({})", c.n, inner.join(", "))
    }
}

/// The fold label of an abandoned branch: `abandoned branch · 18 entries` (issue 10).
pub fn branch_label(b: &crate::analysis::AbandonedBranch) -> String {
    format!(
        "abandoned branch · {}",
        text::plural(b.records as u64, "entry", "entries")
    )
}

/// What an abandoned branch holds, for the outline and the view: its prompt's first line, its
/// model responses and their output tokens, `works. but the session… · 9 responses · 1.9k
/// tokens out`; each when known.
pub fn branch_detail(b: &crate::analysis::AbandonedBranch) -> String {
    let mut parts = Vec::new();
    if !b.title.is_empty() {
        parts.push(text::one_line(&b.title, 80));
    }
    if b.responses > 0 {
        parts.push(words::count(b.responses as u64, words::RESPONSE));
    }
    if b.usage.output > 0 {
        parts.push(format!("{} tokens out", text::fmt_tokens(b.usage.output)));
    }
    parts.join(" · ")
}

/// The outline name of a turn: `Turn 3: Fix the failing test`, `Turn 4: ⏰ background task
/// finished` for a wake-up, `Before the first prompt` for the preamble.
pub fn turn_name(turn: &crate::analysis::Turn) -> String {
    use crate::analysis::TurnKind;
    match turn.kind {
        TurnKind::Preamble => "Before the first prompt".to_string(),
        TurnKind::Prompt => format!("Turn {}: {}", turn.n, text::one_line(&turn.title, 80)),
        TurnKind::Wake => format!(
            "Turn {}: {}",
            turn.n,
            words::wake(&text::one_line(&turn.title, 80))
        ),
        TurnKind::SubagentTask => {
            format!("Turn {}: Task: {}", turn.n, text::one_line(&turn.title, 80))
        }
    }
}

/// Label of inherited history, raw fold and view alike: `inherited from 019c… (3 turns)`
/// (`the parent thread` when the file does not name it).
pub fn inherited_label(inh: &crate::analysis::Inherited) -> String {
    format!(
        "inherited from {} ({})",
        inh.parent
            .as_deref()
            .map_or("the parent thread".to_string(), |p| text::one_line(p, 40)),
        text::plural(inh.turns as u64, "turn", "turns")
    )
}

/// The collapsed label of a turn, raw and view alike: its outline name and its activity,
/// `Turn 3: Fix the failing test · 4 comments · 6 tool calls` ([`words::activity`]); the
/// preamble is `Before the first prompt · 3 records`.
pub fn turn_fold_label(turn: &crate::analysis::Turn) -> String {
    let name = turn_name(turn);
    if turn.kind == crate::analysis::TurnKind::Preamble {
        let n = turn.records as u64;
        return format!("{name} · {}", words::count(n, words::RECORD));
    }
    format!(
        "{name} · {}",
        words::activity(turn.comments, turn.tool_calls)
    )
}

/// The figures of a compaction: `auto · 167k tokens` (empty when the record gives none).
pub fn compaction_detail(c: &crate::analysis::Compaction) -> String {
    let mut parts = Vec::new();
    if let Some(t) = &c.trigger {
        parts.push(text::one_line(t, 20));
    }
    if let Some(p) = c.pre_tokens {
        parts.push(format!("{} tokens", text::fmt_tokens(p)));
    }
    parts.join(" · ")
}

/// The figures of a sub-agent call: `aaa · 2 tool calls · 1m 25s · 14k tokens` (agent id,
/// tool uses, duration, total tokens; each when known).
pub fn subagent_detail(c: &crate::analysis::SubagentCall) -> String {
    let mut figures = Vec::new();
    if let Some(id) = &c.agent_id {
        figures.push(text::one_line(id, 40));
    }
    if let Some(n) = c.tool_uses {
        figures.push(words::count(n, words::TOOL_CALL));
    }
    if let Some(ms) = c.duration_ms {
        figures.push(text::fmt_duration(ms));
    }
    if let Some(tk) = c.total_tokens {
        figures.push(format!("{} tokens", text::fmt_tokens(tk)));
    }
    figures.join(" · ")
}

/// The outline name of a steering prompt (cases 07, 08): `↪ queued: also add a --json flag`
/// (first non-empty line of its text, at most 80 chars), or its first image placeholder, or
/// `↪ queued: (empty)`.
pub fn steering_label(entry: &crate::model::Entry, source: &str) -> String {
    use crate::model::BlockKind;
    let mut image = None;
    for b in &entry.blocks {
        match &b.kind {
            BlockKind::Text { text } => {
                let Some(raw) = source.get(text.raw.clone()) else {
                    continue;
                };
                let decoded = crate::source::json_string::decode(raw);
                if let Some(line) = decoded.lines().find(|l| !l.trim().is_empty()) {
                    return format!("↪ queued: {}", text::one_line(line, 80));
                }
            }
            BlockKind::Image {
                media_type,
                data_len,
            } if image.is_none() => {
                image = Some(text::image_placeholder(media_type, *data_len));
            }
            _ => {}
        }
    }
    format!(
        "↪ queued: {}",
        image.unwrap_or_else(|| "(empty)".to_string())
    )
}

/// The outline name of a sub-agent call: `Sub-agent: Audit auth` (its description), or
/// `Sub-agent aaa` (its agent id) when it has none.
pub fn subagent_label(c: &crate::analysis::SubagentCall) -> String {
    match (&c.description, &c.agent_id) {
        (Some(d), _) if !d.trim().is_empty() => format!("Sub-agent: {}", text::one_line(d, 80)),
        (_, Some(id)) => format!("Sub-agent {}", text::one_line(id, 40)),
        _ => "Sub-agent".to_string(),
    }
}
