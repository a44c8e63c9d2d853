//! The one-pass renderer behind [`super::render`].
//!
//! Layout (DESIGN.md §2; quiet/verbose from seed 004; runs and one-line thoughts from seed 003;
//! activity, final answer, replyless summary and gates from seed 000):
//!
//! ```text
//! # <title or first prompt>
//! session … · Claude Code 2.1.114 · model · cwd · 3 turns · tokens …
//!
//! ## Turn 1                        (`## Turn 4 — ⏰ background task finished` for a wake-up)
//!
//! > Fix the failing test
//!
//! ▸ Worked · 2 tool calls            (verbose only)
//!   ⚙ Bash  cargo test  → 1 failed
//!   💭 The test fails because …
//! I'll fix the assertion.            (narration, verbose only)
//!
//! **Answer**
//! Fixed: …
//! ```
//!
//! Everything is bounded: long lines are wrapped (prose) or cut (everything else) below
//! [`MAX_LINE_CHARS`], every block and list has a cap with an explicit `… N more` marker, and the
//! whole view has a byte and line budget.

use std::collections::{HashMap, HashSet};

use super::text::{
    self, MAX_LINE_CHARS, char_index, clean, fmt_bytes, image_placeholder, one_line, wrap_long,
};
use super::{
    Anchor, AnchorKind, Origin, Region, RegionKind, SpanKind, View, ViewLine, ViewOptions,
    ViewSpan, diff,
};
use crate::analysis::{Analysis, Phase, RunKind, Turn, TurnKind, TurnState, default_phases};
use crate::model::{Block, BlockKind, Entry, Role, Span, Str, ToolResult, Transcript};
use crate::source::json_string;

/// Whole-view budget (DESIGN.md §2: well under 20 MiB and 300,000 lines).
const MAX_VIEW_BYTES: usize = 16 * 1024 * 1024;
const MAX_VIEW_LINES: usize = 250_000;
/// Lines one turn may take in verbose mode before the rest of it is summarised.
const MAX_TURN_LINES: usize = 20_000;
/// Items (tool calls, thoughts, orphan results) listed per work run / sub-agent section.
const MAX_RUN_ITEMS: usize = 40;
/// A prose block (prompt, answer, narration) is shown in full up to these limits.
const MAX_PROSE_LINES: usize = 4_000;
const MAX_PROSE_BYTES: usize = 256 * 1024;
/// Prompts longer than this many lines get a `LongPrompt` region (case 26).
const LONG_PROMPT_LINES: usize = 20;
/// Tool output preview under a tool call (verbose).
const OUTPUT_PREVIEW_LINES: usize = 8;
const OUTPUT_PREVIEW_CHARS: usize = 300;
const OUTPUT_PREVIEW_RAW_BYTES: usize = 3 * 1024;
/// Diff lines shown under a file-editing tool call (verbose) before `… N more lines`.
const MAX_DIFF_LINES: usize = 40;
/// Full text of a thought under its one-line form (verbose).
const THOUGHT_LINES: usize = 60;
const THOUGHT_BYTES: usize = 8 * 1024;
/// One-line forms.
const ONE_LINE_CHARS: usize = 160;
/// Compaction summary (verbose).
const SUMMARY_LINES: usize = 300;
const SUMMARY_BYTES: usize = 32 * 1024;
/// Prose of a sub-agent shown inside its section.
const SUBAGENT_PROSE_LINES: usize = 20;
const SUBAGENT_PROSE_BYTES: usize = 4 * 1024;

/// The text that opens a gate line (seed 000).
const GATE_OPEN: &str = "[DEV-PIPELINE";

pub(super) fn render(
    t: &Transcript,
    a: &Analysis,
    src: &str,
    opts: &ViewOptions,
    phases: &[Phase],
    after_turn: &mut dyn FnMut(&Turn),
) -> View {
    let mut pairs = HashMap::new();
    let mut use_of_result = HashMap::new();
    for p in &a.tool_pairs {
        if let (Some(e), Some(b)) = (p.result_entry, p.result_block) {
            pairs.insert((p.use_entry, p.use_block), (e, b));
            use_of_result.insert((e, b), (p.use_entry, p.use_block));
        }
    }
    let mut gates_by_block: HashMap<(usize, usize), Vec<usize>> = HashMap::new();
    for (i, g) in a.gates.iter().enumerate() {
        gates_by_block
            .entry((g.entry, g.block))
            .or_default()
            .push(i);
    }
    for v in gates_by_block.values_mut() {
        v.sort_by_key(|&i| a.gates[i].span.start);
    }
    let mut sub_by_use = HashMap::new();
    let mut attributed = HashSet::new();
    for (i, c) in a.subagent_calls.iter().enumerate() {
        sub_by_use.insert((c.entry, c.block), i);
        attributed.extend(c.sidechain_entries.iter().copied());
    }
    let mut comp_entries = HashSet::new();
    for c in &a.compactions {
        comp_entries.insert(c.boundary);
        if let Some(s) = c.summary {
            comp_entries.insert(s);
        }
    }
    let phases = if phases.is_empty() {
        default_phases()
    } else {
        phases.to_vec()
    };
    let mut r = Renderer {
        problems_sorted: t.problems.is_sorted_by_key(|p| p.line),
        t,
        a,
        src,
        verbose: opts.verbose,
        phases,
        pairs,
        use_of_result,
        gates_by_block,
        sub_by_use,
        attributed,
        steering: a.steering.iter().copied().collect(),
        comp_entries,
        view: View::default(),
        turn: 0,
        mods: Mods::default(),
        turn_start_line: 0,
        blank_lines: Vec::new(),
        activity_label: String::new(),
        activity_head: None,
        activity_closed: false,
        answer_last: None,
        after_turn,
    };
    r.header();
    r.body();
    r.finish()
}

/// `d`'s lines replaced by `hunks` (each under its `@@ -a,b +c,d @@` header), counts anew.
fn with_hunks(d: &mut diff::EditDiff, hunks: &[crate::view::changes::Hunk]) {
    d.lines.clear();
    d.added = 0;
    d.removed = 0;
    for h in hunks {
        d.lines.push(diff::DiffLine {
            kind: diff::DiffLineKind::Hunk,
            text: h.header(),
        });
        for l in &h.lines {
            match l.kind {
                diff::DiffLineKind::Added => d.added += 1,
                diff::DiffLineKind::Removed => d.removed += 1,
                _ => {}
            }
            d.lines.push(l.clone());
        }
    }
}

/// Files named on a turn's change summary line before `… N more`.
pub const CHANGED_FILES_SHOWN: usize = 6;

#[derive(Debug, Clone, Copy, Default)]
struct Mods {
    in_flight: bool,
    incomplete: bool,
    sidechain: bool,
}

/// One view line being built: text and the spans inside it (byte offsets in the line).
#[derive(Default)]
struct Line {
    text: String,
    spans: Vec<(usize, usize, SpanKind)>,
}

impl Line {
    fn new() -> Line {
        Line::default()
    }

    /// Appends generated text (already safe: no controls, short).
    fn raw(mut self, s: &str) -> Line {
        self.text.push_str(s);
        self
    }

    /// Appends text from the transcript, cleaned, optionally as a highlighted span.
    fn add(self, s: &str, kind: Option<SpanKind>) -> Line {
        self.push(&clean(s), kind)
    }

    /// Appends text that is already clean, optionally as a highlighted span.
    fn push(mut self, c: &str, kind: Option<SpanKind>) -> Line {
        let start = self.text.len();
        self.text.push_str(c);
        if let Some(k) = kind {
            // Leading/trailing blanks are not part of the token.
            let seg = &self.text[start..];
            let lead = seg.len() - seg.trim_start().len();
            let trail = seg.len() - seg.trim_end().len();
            if lead + trail < seg.len() {
                self.spans.push((start + lead, self.text.len() - trail, k));
            }
        }
        self
    }

    /// Appends clean text as `kind`, but `[DEV-PIPELINE …]` gate texts in it as `Gate` spans;
    /// returns the line and the number of gates found.
    fn push_with_gates(mut self, c: &str, kind: SpanKind) -> (Line, usize) {
        let mut rest: &str = c;
        let mut found = 0;
        while let Some(p) = rest.find(GATE_OPEN) {
            let end = rest[p..].find(']').map_or(rest.len(), |q| p + q + 1);
            self = self.push(&rest[..p], Some(kind));
            let start = self.text.len();
            self.text.push_str(&rest[p..end]);
            self.spans.push((start, self.text.len(), SpanKind::Gate));
            found += 1;
            rest = &rest[end..];
        }
        self = self.push(rest, Some(kind));
        (self, found)
    }
}

/// Where one block of prose is shown and how.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ProseRole {
    Narration,
    Answer,
}

/// How one text block of the final answer is shown: source ranges (see
/// `Renderer::answer_parts`).
struct AnswerParts {
    narration: Span,
    answer: Span,
    hidden: Vec<Span>,
}

/// Events of a turn body, ordered by their position `(entry, block)`.
#[derive(Clone, Copy, Debug)]
enum Ev {
    Run(usize),
    Steering(usize),
    Compaction(usize),
    Misc(usize),
    /// Quiet mode: a gate whose text is not shown in the answer.
    Gate(usize),
    /// Quiet mode: the completed final answer.
    Answer,
    /// An abandoned branch (index into `Analysis::branches`).
    Branch(usize),
    /// Another session of the file starts (index into `SessionMeta::sessions`).
    Session(usize),
    /// A record shown as one line in both views: a pull-request link or an API error
    /// (issue 20 item 11).
    Notice(usize),
}

struct Renderer<'a> {
    /// Called after each turn is rendered (`view::render_turn_by_turn`).
    after_turn: &'a mut dyn FnMut(&Turn),
    t: &'a Transcript,
    a: &'a Analysis,
    src: &'a str,
    verbose: bool,
    phases: Vec<Phase>,
    /// tool_use -> its tool_result, and back.
    pairs: HashMap<(usize, usize), (usize, usize)>,
    use_of_result: HashMap<(usize, usize), (usize, usize)>,
    gates_by_block: HashMap<(usize, usize), Vec<usize>>,
    sub_by_use: HashMap<(usize, usize), usize>,
    attributed: HashSet<usize>,
    steering: HashSet<usize>,
    comp_entries: HashSet<usize>,
    view: View,
    turn: usize,
    mods: Mods,
    turn_start_line: usize,
    /// Per view line: true when it is empty.
    blank_lines: Vec<bool>,
    /// Verbose: the label of the current turn's activity header, and its line once emitted.
    activity_label: String,
    activity_head: Option<usize>,
    /// No activity header any more in this turn: the answer has begun, or it is the preamble.
    activity_closed: bool,
    /// Verbose: last line of the current turn's answer text so far.
    answer_last: Option<usize>,
    /// The transcript's problems are in line order (readers push them so; invalid UTF-8
    /// found on loading comes after): looked up by binary search, not one by one (3 M
    /// invalid lines made the verbose view quadratic: 100,000 took 4.5 s).
    problems_sorted: bool,
}

impl<'a> Renderer<'a> {
    // ---- output primitives -------------------------------------------------------------

    fn next_line(&self) -> usize {
        self.view.lines.len()
    }

    fn over_budget(&self) -> bool {
        self.view.text.len() >= MAX_VIEW_BYTES || self.view.lines.len() >= MAX_VIEW_LINES
    }

    fn turn_over_budget(&self) -> bool {
        self.over_budget()
            || (self.verbose && self.next_line() - self.turn_start_line >= MAX_TURN_LINES)
    }

    /// Emits one line; cuts it below the line limit with `… N KB more`. Returns its index.
    fn emit(&mut self, mut line: Line, origin: Origin) -> usize {
        let idx = self.view.lines.len();
        if line.text.len() > MAX_LINE_CHARS && line.text.chars().count() > MAX_LINE_CHARS {
            let cut = char_index(&line.text, MAX_LINE_CHARS - 40);
            let more = line.text.len() - cut;
            line.text.truncate(cut);
            line.text.push_str(&format!(" … {} more", fmt_bytes(more)));
            for s in &mut line.spans {
                s.0 = s.0.min(cut);
                s.1 = s.1.min(cut);
            }
        }
        let m = self.mods;
        for (start, end, kind) in line.spans {
            if start < end {
                self.view.spans.push(ViewSpan {
                    line: idx,
                    start,
                    end,
                    kind,
                    in_flight: m.in_flight,
                    incomplete: m.incomplete,
                    sidechain: m.sidechain,
                });
            }
        }
        self.view.text.push_str(&line.text);
        self.view.text.push('\n');

        self.blank_lines.push(line.text.is_empty());
        self.view.lines.push(ViewLine {
            origin,
            turn: self.turn,
        });
        idx
    }

    fn blank(&mut self) {
        // Never two blank lines in a row, never a blank first line.
        if self.view.text.is_empty() || self.view.text.ends_with("\n\n") {
            return;
        }
        // Nor right under an activity header.
        if self
            .activity_head
            .is_some_and(|h| h + 1 == self.next_line())
        {
            return;
        }
        self.emit(Line::new(), Origin::None);
    }

    /// Last non-blank line emitted so far (or `fallback`).
    fn last_content_line(&self, fallback: usize) -> usize {
        if self.view.text.ends_with("\n\n") {
            self.next_line().saturating_sub(2).max(fallback)
        } else {
            self.next_line().saturating_sub(1).max(fallback)
        }
    }

    fn region(&mut self, kind: RegionKind, start: usize, end: usize, label: String) {
        if start < end && end < self.view.lines.len() {
            self.view.regions.push(Region {
                kind,
                start_line: start,
                end_line: end,
                label,
            });
        }
    }

    fn anchor(
        &mut self,
        kind: AnchorKind,
        line: usize,
        end: usize,
        child: Option<String>,
        detail: String,
    ) {
        self.view.anchors.push(Anchor {
            turn: self.turn,
            line,
            child,
            kind,
            end_line: end.max(line),
            detail,
        });
    }

    /// The first problem on `line`.
    fn problem_on(&self, line: usize) -> Option<&'a crate::model::Problem> {
        let problems = &self.t.problems;
        if self.problems_sorted {
            let i = problems.partition_point(|p| p.line < line);
            problems.get(i).filter(|p| p.line == line)
        } else {
            problems.iter().find(|p| p.line == line)
        }
    }

    fn entry_origin(&self, e: usize, b: Option<usize>) -> Origin {
        let Some(entry) = self.t.entries.get(e) else {
            return Origin::None;
        };
        let span = match b.and_then(|b| entry.blocks.get(b)) {
            Some(block) => Some(block.span.clone()),
            None => Some(entry.span.clone()),
        };
        Origin::Entry {
            entry: e,
            block: b,
            span,
        }
    }

    fn block(&self, e: usize, b: usize) -> Option<&'a Block> {
        self.t.entries.get(e)?.blocks.get(b)
    }

    /// Decodes a string of the source; empty when its span is out of range.
    fn decode(&self, s: &Str) -> std::borrow::Cow<'a, str> {
        self.decode_range(s.raw.clone())
    }

    fn decode_range(&self, r: Span) -> std::borrow::Cow<'a, str> {
        match self.src.get(r) {
            Some(raw) => json_string::decode(raw),
            None => std::borrow::Cow::Borrowed(""),
        }
    }

    /// Emits a multi-line text: each logical line (long ones wrapped) as a view line with
    /// `prefix`, as a `kind` span; leading and trailing blank lines dropped; at most
    /// `max_lines` / `max_bytes`, then `… N KB more`. Gate texts become `Gate` spans; the k-th
    /// one found gets an outline anchor for `gates[k]` (indices into `Analysis::gates`).
    /// Returns (first, last) line.
    #[allow(clippy::too_many_arguments)]
    fn emit_text(
        &mut self,
        s: &str,
        prefix: &str,
        kind: SpanKind,
        origin: &Origin,
        max_lines: usize,
        max_bytes: usize,
        gates: &[usize],
    ) -> Option<(usize, usize)> {
        let s = s.trim_matches(|c| c == '\n' || c == '\r');
        let s = trim_blank_lines(s);
        if s.is_empty() {
            return None;
        }
        let mut gate_i = 0;
        let width = MAX_LINE_CHARS - prefix.chars().count() - 1;
        let mut first = None;
        let mut last = 0;
        let mut shown_bytes = 0;
        let mut count = 0;
        for logical in s.split('\n') {
            let logical = logical.strip_suffix('\r').unwrap_or(logical);
            // Clean only what the caps can show (issue 8 defect 5: a 200 MB one-line prompt
            // was cleaned and wrapped whole before the caps applied).
            let budget = max_bytes.saturating_sub(shown_bytes) + 4 * MAX_LINE_CHARS;
            let cut_short = logical.len() > budget;
            let logical = if cut_short {
                &logical[..floor_char_boundary(logical, budget)]
            } else {
                logical
            };
            let cleaned = clean(logical);
            for piece in wrap_long(&cleaned, width) {
                if count >= max_lines || shown_bytes >= max_bytes || self.over_budget() {
                    let more = s.len().saturating_sub(shown_bytes);
                    let l = self.emit(
                        Line::new()
                            .raw(prefix)
                            .add(&format!("… {} more", fmt_bytes(more)), Some(SpanKind::Meta)),
                        origin.clone(),
                    );
                    return Some((first.unwrap_or(l), l));
                }
                let (line, found) = if gates.is_empty() {
                    (Line::new().raw(prefix).push(piece, Some(kind)), 0)
                } else {
                    Line::new().raw(prefix).push_with_gates(piece, kind)
                };
                let l = self.emit(line, origin.clone());
                for _ in 0..found {
                    if let Some(&g) = gates.get(gate_i) {
                        let name = super::gate_label(&self.a.gates[g], &self.phases);
                        let detail = super::gate_detail(&self.a.gates[g]);
                        self.anchor(AnchorKind::Gate, l, l, Some(name), detail);
                    }
                    gate_i += 1;
                }
                first.get_or_insert(l);
                last = l;
                shown_bytes += piece.len() + 1;
                count += 1;
            }
            if cut_short {
                // The rest of the line was never cleaned: say how much is left out.
                let more = s.len().saturating_sub(shown_bytes);
                let l = self.emit(
                    Line::new()
                        .raw(prefix)
                        .add(&format!("… {} more", fmt_bytes(more)), Some(SpanKind::Meta)),
                    origin.clone(),
                );
                return Some((first.unwrap_or(l), l));
            }
        }
        first.map(|f| (f, last))
    }

    // ---- document ----------------------------------------------------------------------

    fn header(&mut self) {
        let t = self.t;
        let a = self.a;
        let title = t
            .meta
            .title
            .as_deref()
            .filter(|s| !s.trim().is_empty())
            .map(|s| one_line(s, 120))
            .or_else(|| {
                a.turns
                    .iter()
                    .find(|t| {
                        matches!(t.kind, TurnKind::Prompt | TurnKind::SubagentTask)
                            && !t.title.trim().is_empty()
                    })
                    .map(|t| one_line(&t.title, 120))
            })
            .unwrap_or_else(|| "Transcript".to_string());
        self.emit(Line::new().raw("# ").add(&title, None), Origin::None);
        let mut parts: Vec<String> = Vec::new();
        if let Some(id) = &t.meta.session_id {
            parts.push(format!("session {}", one_line(id, 80)));
        }
        if t.meta.is_subagent_file {
            match &t.meta.agent_id {
                Some(id) => parts.push(format!("sub-agent {}", one_line(id, 40))),
                None => parts.push("sub-agent".to_string()),
            }
        }
        if t.meta.automatic_review {
            parts.push("automatic review".to_string());
        }
        if let Some(p) = &t.meta.parent_thread_id {
            parts.push(format!("from thread {}", one_line(p, 40)));
        }
        let agent = t.format().display_name();
        match &t.meta.version {
            Some(v) => parts.push(format!("{agent} {}", one_line(v, 40))),
            None => parts.push(agent.to_string()),
        }
        // Every model the responses ran on (issue 11, item 5: the first only, before).
        let models = super::models_used(t);
        if !models.is_empty() {
            let shown: Vec<String> = models.iter().take(6).map(|m| one_line(m, 60)).collect();
            let mut s = shown.join(", ");
            if models.len() > 6 {
                s.push_str(&format!(", {} more", models.len() - 6));
            }
            parts.push(s);
        }
        if let Some(c) = &t.meta.cwd {
            parts.push(one_line(c, 200));
        }
        if let Some(b) = &t.meta.git_branch {
            parts.push(format!("branch {}", one_line(b, 80)));
        }
        if let Some(span) = &a.time_span {
            let d = span.end_ms - span.start_ms;
            parts.push(if d >= 1000 {
                format!("{} ({})", span.label, text::fmt_duration(d as u64))
            } else {
                span.label.clone()
            });
        }
        parts.push(text::plural(a.turn_count as u64, "turn", "turns"));
        let u = a.usage;
        if u.total() > 0 {
            // `≥` when a response's output count is a streaming placeholder (a lower bound, as
            // the status bar marks it; issue 20 item 10). A cache figure of 0 is left out:
            // most agents never record one (Codex writes no cache writes, Gemini CLI and
            // Mistral Vibe neither; issue 21), and "0 cache write" would read as a count.
            let lower_bound = a.steps.iter().any(|s| {
                !s.output_final && !s.entries.first().is_some_and(|&f| t.entries[f].inherited)
            });
            let mut tokens = format!(
                "tokens {} in / {}{} out",
                text::fmt_tokens(u.input),
                if lower_bound { "≥" } else { "" },
                text::fmt_tokens(u.output)
            );
            if u.cache_read > 0 {
                tokens.push_str(&format!(" / {} cache read", text::fmt_tokens(u.cache_read)));
            }
            if u.cache_creation > 0 {
                tokens.push_str(&format!(
                    " / {} cache write",
                    text::fmt_tokens(u.cache_creation)
                ));
            }
            parts.push(tokens);
        }
        let adv = a.advisor_usage;
        if adv.total() > 0 {
            parts.push(format!(
                "advisor {} in / {} out",
                text::fmt_tokens(
                    adv.input
                        .saturating_add(adv.cache_read)
                        .saturating_add(adv.cache_creation)
                ),
                text::fmt_tokens(adv.output)
            ));
        }
        // The agent's own session cost (Claude Code), else the sum of its per-response costs
        // (Pi).
        if let Some(c) = t.meta.cost_usd.or(a.cost_usd) {
            // Cents hide a small session's cost: four decimals under a dollar.
            parts.push(if c < 1.0 {
                format!("cost ${c:.4}")
            } else {
                format!("cost ${c:.2}")
            });
        }
        if let Some(ms) = t.meta.api_duration_ms {
            parts.push(format!("API time {}", text::fmt_duration(ms)));
        }
        if !a.branches.is_empty() {
            parts.push(text::plural(
                a.branches.len() as u64,
                "abandoned branch",
                "abandoned branches",
            ));
        }
        let invalid = t
            .entries
            .iter()
            .filter(|e| e.role == Role::Unparsed)
            .count();
        if invalid > 0 {
            parts.push(format!(
                "⚠ {}",
                text::plural(invalid as u64, "invalid line", "invalid lines")
            ));
        }
        if let Some(p) = &t.pending_tail {
            parts.push(format!("line {} still being written", p.line + 1));
        }
        self.emit(
            Line::new().add(&parts.join(" · "), Some(SpanKind::Meta)),
            Origin::None,
        );
        self.blank();
    }

    fn body(&mut self) {
        let a = self.a;
        let shown: Vec<&Turn> = a
            .turns
            .iter()
            .filter(|t| self.verbose || t.kind != TurnKind::Preamble)
            .collect();
        if shown.is_empty() {
            self.emit(
                Line::new().add("(no conversation)", Some(SpanKind::Meta)),
                Origin::None,
            );
            return;
        }
        for (i, turn) in shown.iter().enumerate() {
            if self.over_budget() {
                let rest = &shown[i..];
                let msg = format!(
                    "… view limit reached: {} not shown (open the raw file to read them)",
                    text::plural(rest.len() as u64, "more turn", "more turns")
                );
                self.turn = 0;
                self.mods = Mods::default();
                self.emit(Line::new().add(&msg, Some(SpanKind::Meta)), Origin::None);
                break;
            }
            self.render_turn(turn);
            (self.after_turn)(turn);
        }
    }

    fn finish(mut self) -> View {
        if self.view.text.ends_with("\n\n") {
            self.view.text.pop();
            self.view.lines.pop();
            self.blank_lines.pop();
        }
        self.view.regions.sort_by(|a, b| {
            a.start_line
                .cmp(&b.start_line)
                .then(b.end_line.cmp(&a.end_line))
        });
        self.view.anchors.sort_by_key(|a| {
            (
                a.line,
                a.kind != AnchorKind::Turn && a.kind != AnchorKind::Preamble,
            )
        });
        self.view
    }

    // ---- turns -------------------------------------------------------------------------

    fn render_turn(&mut self, turn: &'a Turn) {
        self.turn = turn.n;
        self.mods = Mods {
            in_flight: turn.state == TurnState::InFlight,
            incomplete: turn.state == TurnState::Replyless,
            sidechain: false,
        };
        // The prompt follows its heading: the heading does not repeat it (issue 11, item 5).
        // A turn without an opener record to show keeps its title in the heading.
        let heading = match turn.kind {
            TurnKind::Preamble => "## Before the first prompt".to_string(),
            TurnKind::Prompt if turn.opener.is_some() => format!("## Turn {}", turn.n),
            TurnKind::Prompt => format!("## Turn {} — {}", turn.n, one_line(&turn.title, 120)),
            TurnKind::Wake => format!(
                "## Turn {} — {}",
                turn.n,
                super::words::wake(&one_line(&turn.title, 120))
            ),
            TurnKind::SubagentTask if turn.opener.is_some() => {
                format!("## Turn {} — sub-agent task", turn.n)
            }
            TurnKind::SubagentTask => {
                format!("## Turn {} — Task: {}", turn.n, one_line(&turn.title, 120))
            }
        };
        let origin = match turn.opener {
            Some(e) => self.entry_origin(e, None),
            None => Origin::None,
        };
        // A session that starts with this turn's opener (or before it, within the turn) is
        // shown above the heading (issue 20 item 3).
        let upto = turn.opener.unwrap_or(turn.entries.start);
        for si in self.sessions_in(turn.entries.start, upto + 1) {
            self.session_divider(si);
            self.blank();
        }
        let head = self.emit(Line::new().add(&heading, None), origin);
        self.turn_start_line = head;
        self.blank();

        // The prompt (or wake text, verbose only).
        if let Some(op) = turn.opener {
            match turn.kind {
                TurnKind::Prompt | TurnKind::SubagentTask => self.prompt(op),
                TurnKind::Wake if self.verbose => self.wake_text(op),
                _ => {}
            }
            self.blank();
        }

        let mut label = super::words::activity(turn.comments, turn.tool_calls);
        if turn.state == TurnState::Replyless && turn.kind != TurnKind::Preamble {
            label.push_str(" · no reply");
        }
        self.activity_label = label;
        self.activity_head = None;
        self.activity_closed = turn.kind == TurnKind::Preamble;
        self.answer_last = None;
        let (answer_line, activity_end) = self.turn_body(turn);
        self.change_summary(turn);

        // Activity region (seed 000): everything between the prompt and the answer, under a
        // one-line header so that it folds apart from the first work run.
        if let Some(h) = self.activity_head {
            let end = match answer_line {
                Some(l) => l.saturating_sub(1),
                None => activity_end,
            };
            let end = if end > h && self.is_blank_line(end) {
                end - 1
            } else {
                end
            };
            let label = self.activity_label.clone();
            self.region(RegionKind::Activity, h, end, label);
        }

        let end = self.last_content_line(head);
        self.region(RegionKind::Turn, head, end, super::turn_fold_label(turn));
        let kind = if turn.kind == TurnKind::Preamble {
            AnchorKind::Preamble
        } else {
            AnchorKind::Turn
        };
        self.view.anchors.push(Anchor {
            turn: turn.n,
            line: head,
            child: None,
            kind,
            end_line: end,
            detail: super::turn_detail(turn),
        });
        self.blank();
    }

    /// The turn's change summary, one line (issue 22, item 2), in both modes: `✎ 2 files
    /// changed · +8 −2 · ⎇ committed 1a2b3c4 — src/calc.rs +2 −2, tests/calc_test.rs +6 −0`
    /// (at most [`CHANGED_FILES_SHOWN`] files, then `… N more`); a turn whose edits all failed
    /// says so (`✎ no file changed · 1 edit not applied`). Anchors: `Changes` and one
    /// `ChangedFile` per file.
    fn change_summary(&mut self, turn: &'a Turn) {
        let ti = self
            .a
            .turns
            .binary_search_by_key(&turn.n, |t| t.n)
            .ok()
            .filter(|&i| std::ptr::eq(&self.a.turns[i], turn))
            .or_else(|| self.a.turns.iter().position(|t| std::ptr::eq(t, turn)));
        let Some(ti) = ti else {
            return;
        };
        let a = self.a;
        let Some(tc) = crate::view::changes::turn_changes(self.t, a, self.src, ti, &|e, b| {
            crate::view::changes::pair_result(a, e, b)
        }) else {
            return;
        };
        let cwd = self.t.meta.cwd.as_deref();
        let rel = |p: &str| -> String {
            cwd.and_then(|c| p.strip_prefix(c.trim_end_matches('/')))
                .and_then(|r| r.strip_prefix('/'))
                .unwrap_or(p)
                .to_string()
        };
        let mut text = tc.title();
        if !tc.files.is_empty() {
            let shown: Vec<String> = tc
                .files
                .iter()
                .take(CHANGED_FILES_SHOWN)
                .map(|f| format!("{} {}", rel(&f.path), f.counts()))
                .collect();
            text.push_str(" — ");
            text.push_str(&shown.join(", "));
            if tc.files.len() > CHANGED_FILES_SHOWN {
                text.push_str(&format!(
                    ", … {} more",
                    tc.files.len() - CHANGED_FILES_SHOWN
                ));
            }
        }
        let first = tc
            .files
            .first()
            .and_then(|f| f.calls.first())
            .or(tc.not_applied.first())
            .map(|c| (c.entry, c.block))
            .or_else(|| tc.commits.first().map(|c| (c.entry, c.block)));
        let origin = match first {
            Some((e, b)) => self.entry_origin(e, Some(b)),
            None => Origin::None,
        };
        self.blank();
        let line = self.emit(Line::new().add(&text, Some(SpanKind::Meta)), origin);
        if tc.files.is_empty() {
            return;
        }
        self.anchor(
            AnchorKind::Changes,
            line,
            line,
            Some("Changes".into()),
            format!(
                "{} · +{} −{}",
                text::plural(tc.files.len() as u64, "file", "files"),
                tc.added,
                tc.removed
            ),
        );
        for f in &tc.files {
            let mark = match f.action {
                crate::view::changes::FileAction::Created => "A",
                crate::view::changes::FileAction::Modified => "M",
                crate::view::changes::FileAction::Deleted => "D",
            };
            self.anchor(
                AnchorKind::ChangedFile,
                line,
                line,
                Some(rel(&f.path)),
                format!("{mark} {}", f.counts()),
            );
        }
    }

    fn is_blank_line(&self, line: usize) -> bool {
        self.blank_lines.get(line).copied().unwrap_or(false)
    }

    fn prompt(&mut self, e: usize) {
        let Some(entry) = self.t.entries.get(e) else {
            return;
        };
        let first = self.next_line();
        let mut total = 0usize;
        for (b, block) in entry.blocks.iter().enumerate() {
            let origin = self.entry_origin(e, Some(b));
            match &block.kind {
                BlockKind::Text { text } => {
                    let s = self.decode(text);
                    let s = text::command_text(&s);
                    total += s.len();
                    self.emit_text(
                        &s,
                        "> ",
                        SpanKind::Prompt,
                        &origin,
                        MAX_PROSE_LINES,
                        MAX_PROSE_BYTES,
                        &[],
                    );
                }
                BlockKind::Image {
                    media_type,
                    data_len,
                } => {
                    total += data_len;
                    let p = image_placeholder(media_type, *data_len);
                    let l = self.emit(Line::new().raw("> ").add(&p, Some(SpanKind::Meta)), origin);
                    self.note_image(l, p, block.span.clone(), 0);
                }
                // Copilot CLI's `transformedContent`: the prompt as the model saw it (a date
                // stamp, expanded attachments), shown by the prompt's hover, not as a line
                // under the prompt (issue 20 item 6).
                BlockKind::Other { block_type } if &**block_type == "transformedContent" => {}
                // Antigravity CLI's context sections around the typed request
                // (`<ADDITIONAL_METADATA>`, `<USER_SETTINGS_CHANGE>`: `context:<TAG>` blocks):
                // not the prompt; the record's hover shows them (issue 21 item 3).
                BlockKind::Other { block_type } if block_type.starts_with("context:") => {}
                other => self.other_block_line("> ", other, origin),
            }
        }
        let last = self.next_line().saturating_sub(1);
        if self.next_line() > first && last + 1 - first > LONG_PROMPT_LINES {
            let label = format!("{} lines · {}", last + 1 - first, fmt_bytes(total));
            self.region(RegionKind::LongPrompt, first, last, label);
        }
    }

    fn wake_text(&mut self, e: usize) {
        let Some(entry) = self.t.entries.get(e) else {
            return;
        };
        for (b, block) in entry.blocks.iter().enumerate() {
            let origin = self.entry_origin(e, Some(b));
            if let BlockKind::Text { text } = &block.kind {
                let s = self.decode(text);
                self.emit_text(&s, "> ", SpanKind::Meta, &origin, 40, 8 * 1024, &[]);
            }
        }
    }

    fn other_block_line(&mut self, prefix: &str, kind: &BlockKind, origin: Origin) {
        let label = match kind {
            BlockKind::Other { block_type } => format!("[{} block]", one_line(block_type, 60)),
            BlockKind::Image {
                media_type,
                data_len,
            } => image_placeholder(media_type, *data_len),
            BlockKind::Thinking { .. } => "[thinking]".to_string(),
            BlockKind::ToolUse(u) => format!("[tool call {}]", one_line(&u.name, 60)),
            BlockKind::ToolResult(_) => "[tool result]".to_string(),
            BlockKind::Text { .. } => "[text]".to_string(),
        };
        let image_span = match (&origin, kind) {
            (Origin::Entry { span: Some(s), .. }, BlockKind::Image { .. }) => Some(s.clone()),
            _ => None,
        };
        let l = self.emit(
            Line::new().raw(prefix).add(&label, Some(SpanKind::Meta)),
            origin,
        );
        if let Some(span) = image_span {
            self.note_image(l, label, span, 0);
        }
    }

    /// Records that view line `line` shows the image placeholder `placeholder` of the
    /// `index`-th image of the JSON at `span` (for the Markdown form, issue 23 item 6).
    fn note_image(&mut self, line: usize, placeholder: String, span: Span, index: usize) {
        self.view.images.push(super::ImageRef {
            line,
            placeholder,
            span,
            index,
        });
    }

    /// Records the image placeholders of a tool result shown on its call's line `line`.
    fn note_result_images(&mut self, line: usize, r: &ToolResult) {
        for (k, (mt, len)) in r.images.iter().enumerate() {
            self.note_image(line, image_placeholder(mt, *len), r.content.clone(), k);
        }
    }

    /// Verbose: emits the turn's activity header (`🤖 2 comments · 6 tool calls`) before its
    /// first piece of activity.
    fn ensure_activity(&mut self) {
        if self.verbose && self.activity_head.is_none() && !self.activity_closed {
            self.blank();
            let label = format!("🤖 {}", self.activity_label);
            self.activity_head =
                Some(self.emit(Line::new().add(&label, Some(SpanKind::Meta)), Origin::None));
        }
    }

    /// Renders the events of a turn's body. Returns the view line of the `**Answer**` label and
    /// the last line of the body before any closing summary line.
    fn turn_body(&mut self, turn: &'a Turn) -> (Option<usize>, usize) {
        let a = self.a;
        let fa = turn.final_answer.as_ref();
        // The quiet view holds an in-flight turn's answer back until the turn settles (seed 000:
        // `… working` instead); the verbose view shows it as `**Answer so far** (in flight)`, and
        // the outline names it so (issue 20 item 9).
        let answer_shown_quiet = !self.verbose && turn.state == TurnState::Complete && fa.is_some();
        let mut evs: Vec<((usize, usize), Ev)> = Vec::new();
        let mut covered: HashSet<usize> = HashSet::new();
        if let Some(op) = turn.opener {
            covered.insert(op);
        }
        if self.verbose {
            for (i, run) in turn.runs.iter().enumerate() {
                if let Some(&pos) = run.blocks.first() {
                    evs.push((pos, Ev::Run(i)));
                }
                for &(e, _) in &run.blocks {
                    covered.insert(e);
                }
            }
        }
        for &s in &turn.steering {
            evs.push(((s, 0), Ev::Steering(s)));
            covered.insert(s);
        }
        for &ci in &turn.compactions {
            if let Some(c) = a.compactions.get(ci) {
                evs.push(((c.boundary, 0), Ev::Compaction(ci)));
            }
        }
        for &bi in &turn.branches {
            if let Some(b) = a.branches.get(bi) {
                evs.push(((b.entries.start, 0), Ev::Branch(bi)));
                covered.extend(b.entries.clone());
            }
        }
        for e in turn.entries.clone() {
            if self
                .t
                .entries
                .get(e)
                .is_some_and(|en| !en.sidechain && notice_kind(en).is_some())
            {
                evs.push(((e, 0), Ev::Notice(e)));
                covered.insert(e);
            }
        }
        let after_opener = turn.opener.unwrap_or(turn.entries.start) + 1;
        for si in self.sessions_in(after_opener, turn.entries.end) {
            if let Some(st) = self.t.meta.sessions.get(si) {
                evs.push(((st.entry, 0), Ev::Session(si)));
            }
        }
        if self.verbose {
            for e in turn.entries.clone() {
                if covered.contains(&e)
                    || self.steering.contains(&e)
                    || self.comp_entries.contains(&e)
                    || self.attributed.contains(&e)
                {
                    continue;
                }
                if e < self.t.entries.len() {
                    evs.push(((e, 0), Ev::Misc(e)));
                }
            }
        } else {
            if answer_shown_quiet && let Some(&pos) = fa.and_then(|f| f.blocks.first()) {
                evs.push((pos, Ev::Answer));
            }
            // An interruption shows in the quiet view too, in its place: an answer cut off by
            // it never reads as a complete one (issue 20 item 9).
            for e in turn.entries.clone() {
                if self.t.entries.get(e).is_some_and(|en| {
                    en.role == Role::Interruption && !en.sidechain && !en.inherited && !en.repeated
                }) {
                    evs.push(((e, 0), Ev::Misc(e)));
                }
            }
            for &g in &turn.gates {
                let Some(gate) = a.gates.get(g) else { continue };
                let in_answer = answer_shown_quiet
                    && fa.is_some_and(|f| {
                        f.blocks.contains(&(gate.entry, gate.block))
                            && self
                                .answer_parts(f, gate.entry, gate.block)
                                .is_none_or(|p| p.answer.contains(&gate.span.start))
                    });
                if !in_answer {
                    evs.push(((gate.entry, gate.block), Ev::Gate(g)));
                }
            }
        }
        evs.sort_by_key(|(pos, ev)| (*pos, matches!(ev, Ev::Misc(_))));
        // Bookkeeping records (token counts, turn contexts, snapshots, …) between the steps of
        // a turn's activity fold into ONE line per work run (issue 11, item 5): each goes to
        // the work run before it (or the turn's first work run when none is before it), shown
        // as the last line of that run. Records after the final answer's start stay after it
        // (one line); interruptions, local commands and invalid lines keep their place.
        let answer_at = fa.and_then(|f| f.blocks.first().copied());
        let mut run_records: HashMap<usize, Vec<usize>> = HashMap::new();
        if self.verbose {
            let work_runs: Vec<(usize, usize)> = evs
                .iter()
                .enumerate()
                .filter_map(|(i, (_, ev))| match ev {
                    Ev::Run(r) if turn.runs[*r].kind != RunKind::Prose => Some((i, *r)),
                    _ => None,
                })
                .collect();
            if let Some(&(_, first_run)) = work_runs.first() {
                let mut kept = Vec::with_capacity(evs.len());
                for (i, ev) in evs.into_iter().enumerate() {
                    if let Ev::Misc(e) = ev.1
                        && answer_at.is_none_or(|a| ev.0 < a)
                        && self.t.entries.get(e).is_some_and(|en| {
                            !matches!(
                                en.role,
                                Role::Interruption | Role::LocalCommand | Role::Unparsed
                            )
                        })
                    {
                        let run = work_runs
                            .iter()
                            .take_while(|(j, _)| *j < i)
                            .last()
                            .map_or(first_run, |&(_, r)| r);
                        run_records.entry(run).or_default().push(e);
                        continue;
                    }
                    kept.push(ev);
                }
                evs = kept;
            }
        }

        let answer_set: HashSet<(usize, usize)> = fa
            .map(|f| f.blocks.iter().copied().collect())
            .unwrap_or_default();
        let mut answer_line = None;
        let mut i = 0;
        while i < evs.len() {
            if self.turn_over_budget() {
                let rest = evs.len() - i;
                let msg = format!(
                    "… {rest} more {} of this turn not shown (view limit; open the raw file)",
                    if rest == 1 { "item" } else { "items" }
                );
                self.emit(Line::new().add(&msg, Some(SpanKind::Meta)), Origin::None);
                break;
            }
            match evs[i].1 {
                Ev::Run(r) => {
                    let run = &turn.runs[r];
                    if run.kind == RunKind::Prose {
                        self.prose_run(turn, run, &answer_set, &mut answer_line);
                    } else {
                        self.ensure_activity();
                        self.blank();
                        let records = run_records.remove(&r).unwrap_or_default();
                        self.work_run(turn, run, &records);
                        self.blank();
                    }
                }
                Ev::Steering(s) => self.steering_line(s),
                Ev::Compaction(c) => self.compaction(c),
                Ev::Branch(b) => self.branch(b),
                Ev::Session(si) => {
                    self.session_divider(si);
                    self.blank();
                }
                Ev::Notice(e) => self.notice_line(e),
                Ev::Gate(g) => self.gate_line(g),
                Ev::Answer => {
                    if let Some(f) = fa {
                        self.blank();
                        let label =
                            self.emit(Line::new().raw(&answer_label(turn.state)), Origin::None);
                        answer_line = Some(label);
                        let first = self.next_line();
                        for (k, &(e, b)) in f.blocks.iter().enumerate() {
                            if k > 0 {
                                self.blank();
                            }
                            self.prose_block(e, b, ProseRole::Answer, f);
                        }
                        let last = self.last_content_line(first);
                        self.anchor(
                            AnchorKind::FinalAnswer,
                            label,
                            last,
                            Some(super::words::answer_name(turn.state)),
                            super::answer_gist(self.t, self.src, f),
                        );
                    }
                }
                Ev::Misc(_) => {
                    let mut j = i;
                    while j < evs.len() && matches!(evs[j].1, Ev::Misc(_)) {
                        j += 1;
                    }
                    let entries: Vec<usize> = evs[i..j]
                        .iter()
                        .filter_map(|(_, ev)| if let Ev::Misc(e) = ev { Some(*e) } else { None })
                        .collect();
                    self.ensure_activity();
                    self.blank();
                    self.misc(&entries);
                    i = j;
                    continue;
                }
            }
            i += 1;
        }

        // In verbose mode the answer label was emitted by the prose run; close its anchor.
        if self.verbose
            && let Some(l) = answer_line
        {
            let last = self.answer_last.unwrap_or(l);
            self.anchor(
                AnchorKind::FinalAnswer,
                l,
                last,
                Some(super::words::answer_name(turn.state)),
                fa.map_or_else(String::new, |f| super::answer_gist(self.t, self.src, f)),
            );
        }

        let body_end = self.last_content_line(0);
        // A turn is never blank (seed 004): say why there is no answer. In verbose mode the
        // activity header already says `no reply`.
        match turn.state {
            TurnState::InFlight if !self.verbose || fa.is_none() => {
                self.blank();
                let mut line = Line::new().add("… working", Some(SpanKind::Meta));
                // The quiet view, which hides the activity, says what the agent last said
                // (issue 23 item 5: a live turn showed only `… working`).
                if !self.verbose
                    && let Some(said) = latest_comment(self.t, self.src, turn)
                {
                    line = line
                        .add(" · ", Some(SpanKind::Meta))
                        .add(&said, Some(SpanKind::Narration));
                }
                self.emit(line, Origin::None);
            }
            TurnState::Replyless if turn.kind != TurnKind::Preamble && !self.verbose => {
                self.blank();
                let msg = format!(
                    "(no reply — {})",
                    super::words::activity(turn.comments, turn.tool_calls)
                );
                self.emit(Line::new().add(&msg, Some(SpanKind::Meta)), Origin::None);
            }
            _ => {}
        }
        (answer_line, body_end)
    }

    fn prose_run(
        &mut self,
        turn: &'a Turn,
        run: &crate::analysis::Run,
        answer_set: &HashSet<(usize, usize)>,
        answer_line: &mut Option<usize>,
    ) {
        let Some(fa) = turn.final_answer.as_ref() else {
            self.ensure_activity();
            for &(e, b) in &run.blocks {
                self.blank();
                self.prose_block_plain(e, b, ProseRole::Narration);
            }
            return;
        };
        for &(e, b) in &run.blocks {
            let in_answer = answer_set.contains(&(e, b));
            if in_answer {
                // Folded prose before the answer's start, in the answer's first block.
                if let Some(parts) = self.answer_parts(fa, e, b)
                    && !parts.narration.is_empty()
                {
                    let s = self.decode_without(parts.narration.clone(), &parts.hidden);
                    if !s.trim().is_empty() {
                        self.ensure_activity();
                        self.blank();
                        let origin = self.entry_origin(e, Some(b));
                        let gates = self.gates_in(e, b, &parts.narration);
                        self.emit_text(
                            &s,
                            "",
                            SpanKind::Narration,
                            &origin,
                            MAX_PROSE_LINES,
                            MAX_PROSE_BYTES,
                            &gates,
                        );
                    }
                }
                if answer_line.is_none() {
                    self.blank();
                    let label = answer_label(turn.state);
                    *answer_line = Some(self.emit(Line::new().raw(&label), Origin::None));
                    self.activity_closed = true;
                } else {
                    self.blank();
                }
                self.prose_block(e, b, ProseRole::Answer, fa);
                self.answer_last = Some(self.last_content_line(0));
            } else {
                self.ensure_activity();
                self.blank();
                self.prose_block_plain(e, b, ProseRole::Narration);
            }
        }
    }

    /// An answer block: its answer part only, without marker lines (seed 000).
    fn prose_block(
        &mut self,
        e: usize,
        b: usize,
        role: ProseRole,
        fa: &crate::analysis::FinalAnswer,
    ) {
        let Some(parts) = self.answer_parts(fa, e, b) else {
            self.prose_block_plain(e, b, role);
            return;
        };
        let s = self.decode_without(parts.answer.clone(), &parts.hidden);
        let origin = Origin::Entry {
            entry: e,
            block: Some(b),
            span: Some(parts.answer.clone()),
        };
        let gates = self.gates_in(e, b, &parts.answer);
        self.emit_text(
            &s,
            "",
            span_kind(role),
            &origin,
            MAX_PROSE_LINES,
            MAX_PROSE_BYTES,
            &gates,
        );
        self.cut_line(e, b);
    }

    /// `✂ cut by the agent: …` after the last text block of a record the agent cut before
    /// writing it ([`Entry::cut_by_agent`]).
    fn cut_line(&mut self, e: usize, b: usize) {
        let Some(entry) = self.t.entries.get(e) else {
            return;
        };
        let last_text = entry
            .blocks
            .iter()
            .rposition(|x| matches!(x.kind, BlockKind::Text { .. }));
        if entry.cut_by_agent && last_text == Some(b) {
            let origin = self.entry_origin(e, Some(b));
            self.emit(
                Line::new().add(
                    "✂ cut by the agent: the file keeps only the start of this text",
                    Some(SpanKind::Meta),
                ),
                origin,
            );
        }
    }

    /// How a text block of the final answer is shown (seed 000 markers): the folded prose
    /// before `Marker::answer_start` (first answer block only), the answer part, and the
    /// source ranges never shown inside them (the deciding marker line, stray marker lines,
    /// the duplicate lead line, each with the newline that ends it). `None` for a block that
    /// is not text.
    fn answer_parts(
        &self,
        fa: &crate::analysis::FinalAnswer,
        e: usize,
        b: usize,
    ) -> Option<AnswerParts> {
        let Some(BlockKind::Text { text }) = self.block(e, b).map(|b| &b.kind) else {
            return None;
        };
        let r = text.raw.clone();
        let first = fa.blocks.first() == Some(&(e, b));
        let start = match &fa.marker {
            Some(m)
                if first
                    && r.start <= m.answer_start
                    && m.answer_start <= r.end
                    && self.src.is_char_boundary(m.answer_start) =>
            {
                m.answer_start
            }
            _ => r.start,
        };
        let mut hidden: Vec<Span> = Vec::new();
        if let Some(m) = &fa.marker {
            if (m.entry, m.block) == (e, b) {
                hidden.push(m.span.clone());
            }
            if let Some(d) = &m.duplicate_lead {
                hidden.push(d.clone());
            }
        }
        hidden.extend(fa.stray_markers.iter().cloned());
        let bytes = self.src.as_bytes();
        let mut hidden: Vec<Span> = hidden
            .into_iter()
            .filter(|h| {
                r.start <= h.start
                    && h.start < h.end
                    && h.end <= r.end
                    && self.src.is_char_boundary(h.start)
                    && self.src.is_char_boundary(h.end)
            })
            .map(|h| {
                // The line goes with its newline (a `\n` escape in the source).
                if h.end + 2 <= r.end && &bytes[h.end..h.end + 2] == b"\\n" {
                    h.start..h.end + 2
                } else {
                    h
                }
            })
            .collect();
        hidden.sort_by_key(|h| h.start);
        Some(AnswerParts {
            narration: r.start..start,
            answer: start..r.end,
            hidden,
        })
    }

    /// Decodes `range` of the source leaving out the `hidden` ranges (sorted).
    fn decode_without(&self, range: Span, hidden: &[Span]) -> String {
        let mut out = String::new();
        let mut at = range.start;
        for h in hidden {
            if h.end <= at || h.start >= range.end {
                continue;
            }
            let cut = h.start.max(at);
            out.push_str(&self.decode_range(at..cut));
            at = h.end.min(range.end);
        }
        if at < range.end {
            out.push_str(&self.decode_range(at..range.end));
        }
        out
    }

    /// Gates of block `(e, b)` whose text starts inside `range`, in source order.
    fn gates_in(&self, e: usize, b: usize, range: &Span) -> Vec<usize> {
        self.gates_by_block
            .get(&(e, b))
            .map(|v| {
                v.iter()
                    .copied()
                    .filter(|&g| range.contains(&self.a.gates[g].span.start))
                    .collect()
            })
            .unwrap_or_default()
    }

    fn prose_block_plain(&mut self, e: usize, b: usize, role: ProseRole) {
        let Some(block) = self.block(e, b) else {
            return;
        };
        let origin = self.entry_origin(e, Some(b));
        match &block.kind {
            BlockKind::Text { text } => {
                let s = self.decode(text);
                let gates = self.gates_in(e, b, &text.raw);
                self.emit_text(
                    &s,
                    "",
                    span_kind(role),
                    &origin,
                    MAX_PROSE_LINES,
                    MAX_PROSE_BYTES,
                    &gates,
                );
                self.cut_line(e, b);
            }
            other => self.other_block_line("", other, origin),
        }
    }

    /// A work run or thought: its header, its items (capped, never an edit, issue 11), and
    /// the bookkeeping `records` placed in it as one summary line.
    fn work_run(&mut self, turn: &'a Turn, run: &'a crate::analysis::Run, records: &[usize]) {
        let label = super::run_label(run);
        let (region_kind, anchor_kind) = match run.kind {
            RunKind::Thought => (RegionKind::Thought, AnchorKind::Thought),
            _ => (RegionKind::WorkRun, AnchorKind::WorkRun),
        };
        let first_origin = run
            .blocks
            .first()
            .map_or(Origin::None, |&(e, b)| self.entry_origin(e, Some(b)));
        let head = self.emit(Line::new().raw("▸ ").add(&label, None), first_origin);
        let uses: HashSet<(usize, usize)> = run
            .blocks
            .iter()
            .copied()
            .filter(|&(e, b)| {
                matches!(
                    self.block(e, b).map(|b| &b.kind),
                    Some(BlockKind::ToolUse(_))
                )
            })
            .collect();
        let items: Vec<(usize, usize)> = run
            .blocks
            .iter()
            .copied()
            .filter(|&(e, b)| {
                // A result shown beside its call is not an item of its own.
                !self
                    .use_of_result
                    .get(&(e, b))
                    .is_some_and(|u| uses.contains(u))
            })
            .collect();
        let mut left_out = 0;
        for (k, &(e, b)) in items.iter().enumerate() {
            if self.turn_over_budget() {
                self.more_items("  ", left_out + items.len() - k);
                left_out = 0;
                break;
            }
            // Past the cap only file edits are shown: every edit renders as its diff (issue
            // 11, item 2); each is bounded (`MAX_DIFF_LINES`) and the turn's budget holds.
            if k >= MAX_RUN_ITEMS && !self.is_edit_item(e, b) {
                left_out += 1;
                continue;
            }
            self.more_items("  ", left_out);
            left_out = 0;
            self.step_item(turn, e, b, "  ");
        }
        self.more_items("  ", left_out);
        if !records.is_empty() {
            let mut group = records.to_vec();
            self.flush_group_indented("  ", &mut group);
        }
        let end = self.next_line() - 1;
        self.region(region_kind, head, end, label.clone());
        let detail = if run.kind == RunKind::Work {
            super::words::counts(&[(run.tool_calls.into(), super::words::TOOL_CALL)]).join("")
        } else {
            String::new()
        };
        let name = super::run_outline_name(run, self.t);
        self.anchor(anchor_kind, head, end, Some(name), detail);
    }

    /// One item of a work run or sub-agent section: a tool call with its result (and output
    /// preview, and the sub-agent it spawned), a thought, an orphan result, other blocks.
    fn step_item(&mut self, turn: &'a Turn, e: usize, b: usize, indent: &str) {
        let Some(block) = self.block(e, b) else {
            return;
        };
        let origin = self.entry_origin(e, Some(b));
        match &block.kind {
            BlockKind::ToolUse(u) => {
                let result = self.pairs.get(&(e, b)).copied();
                let res: Option<&ToolResult> =
                    result.and_then(|(re, rb)| match self.block(re, rb).map(|b| &b.kind) {
                        Some(BlockKind::ToolResult(r)) => Some(&**r),
                        _ => None,
                    });
                let is_error = res.is_some_and(|r| r.is_error);
                let mut line = Line::new().raw(indent);
                line = if is_error {
                    let s = line.text.len();
                    line.text.push('✗');
                    line.spans.push((s, line.text.len(), SpanKind::ToolError));
                    line.raw(" ")
                } else {
                    line.raw("⚙ ")
                };
                line = line.add(&one_line(&u.name, 60), Some(SpanKind::ToolName));
                let summary = one_line(&u.summary, ONE_LINE_CHARS);
                if !summary.is_empty() {
                    line = line.raw("  ").add(&summary, None);
                }
                line = line.raw("  → ");
                let mut edit = self.edit_of(u);
                // Claude Code results give the hunks with their line numbers (issue 20 item 8).
                if let (Some(d), Some((re, _))) = (edit.as_mut(), result)
                    && matches!(&*u.name, "Edit" | "MultiEdit" | "Write")
                    && let Some(hunks) =
                        crate::view::changes::structured_patch(self.t, self.src, re)
                {
                    with_hunks(d, &hunks);
                }
                let result_text = match res {
                    // The diff below says what changed (not `The file … has been updated…`).
                    Some(r) if !r.is_error && edit.is_some() => {
                        let d = edit.as_ref().map_or(String::new(), |d| d.counts());
                        format!("applied · {d}")
                    }
                    Some(r) => result_summary(r),
                    None if turn.state == TurnState::InFlight => "(running)".to_string(),
                    None => "(no result)".to_string(),
                };
                line = line.add(
                    &result_text,
                    if is_error {
                        Some(SpanKind::ToolError)
                    } else {
                        None
                    },
                );
                let l = self.emit(line, origin);
                if let (Some(r), None) = (res, &edit) {
                    self.note_result_images(l, r);
                }
                let diffed = edit.is_some();
                if let Some(d) = edit {
                    self.edit_diff(l, e, b, u, &d, res, turn.state, indent);
                }
                if let (Some((re, rb)), Some(r), false) = (result, res, diffed) {
                    self.output_preview(l, re, rb, r, indent);
                }
                if let Some(&c) = self.sub_by_use.get(&(e, b)) {
                    self.subagent(turn, c, l, indent);
                }
            }
            BlockKind::Thinking { text, encrypted } => {
                let s = self.decode(text);
                // The header shows the thought's first line; the lines under it (folded) the
                // rest, or the whole thought when the first line did not fit: each part of
                // the thought shows once (issue 11).
                let (one, body) = if *encrypted && s.trim().is_empty() {
                    ("(encrypted reasoning)".to_string(), None)
                } else if s.trim().is_empty() {
                    ("(thinking not stored)".to_string(), None)
                } else {
                    let all = s.trim_matches(|c| c == '\n' || c == '\r');
                    let whole = one_line(all, ONE_LINE_CHARS);
                    let fits =
                        !(whole.ends_with('…') && one_line(all, ONE_LINE_CHARS + 1) != whole);
                    let (first, rest) = if fits {
                        // A short thought is one line (seed 003), however many lines it has.
                        (whole.as_str(), "")
                    } else {
                        all.split_once('\n').unwrap_or((all, ""))
                    };
                    let first = first.trim();
                    let rest = rest.trim_start_matches(['\n', '\r']);
                    if first.chars().count() > ONE_LINE_CHARS {
                        // Cut at a space near the limit; the body continues from there.
                        let at = char_index(first, ONE_LINE_CHARS - 1);
                        let cut = first[..at]
                            .rfind(' ')
                            .filter(|&sp| first[sp..at].chars().count() < 30)
                            .unwrap_or(at);
                        let mut body = format!("…{}", first[cut..].trim_start());
                        if !rest.trim().is_empty() {
                            body.push('\n');
                            body.push_str(rest);
                        }
                        (format!("{}…", first[..cut].trim_end()), Some(body))
                    } else {
                        let body = (!rest.trim().is_empty()).then(|| rest.to_string());
                        (first.to_string(), body)
                    }
                };
                let l = self.emit(
                    Line::new()
                        .raw(indent)
                        .raw("💭 ")
                        .add(&one, Some(SpanKind::Thinking)),
                    origin.clone(),
                );
                // The rest of the thought, folded under its first line (seed 003, PR #46).
                if let Some(body) = body {
                    let prefix = format!("{indent}    ");
                    if let Some((_, last)) = self.emit_text(
                        &body,
                        &prefix,
                        SpanKind::Thinking,
                        &origin,
                        THOUGHT_LINES,
                        THOUGHT_BYTES,
                        &[],
                    ) {
                        self.region(RegionKind::Thought, l, last, one_line(&s, 60));
                    }
                }
            }
            BlockKind::ToolResult(r) => {
                let mut line = Line::new().raw(indent);
                if r.is_error {
                    let s = line.text.len();
                    line.text.push('✗');
                    line.spans.push((s, line.text.len(), SpanKind::ToolError));
                    line = line.raw(" ");
                } else {
                    line = line.raw("← ");
                }
                line = line.add("result", Some(SpanKind::Meta)).raw("  ");
                line = line.add(
                    &result_summary(r),
                    if r.is_error {
                        Some(SpanKind::ToolError)
                    } else {
                        None
                    },
                );
                let l = self.emit(line, origin);
                self.note_result_images(l, r);
                self.output_preview(l, e, b, r, indent);
            }
            BlockKind::Text { text } => {
                // Prose inside a work run (sub-agent sections): a few lines.
                let s = self.decode(text);
                self.emit_text(
                    &s,
                    indent,
                    SpanKind::Narration,
                    &origin,
                    SUBAGENT_PROSE_LINES,
                    SUBAGENT_PROSE_BYTES,
                    &[],
                );
            }
            other => self.other_block_line(indent, other, origin),
        }
    }

    /// `… 3 more items`: the items of a work run or sub-agent section left out past the cap
    /// (nothing when `n` is 0).
    fn more_items(&mut self, indent: &str, n: usize) {
        if n == 0 {
            return;
        }
        let msg = format!(
            "{indent}… {n} more {}",
            if n == 1 {
                super::words::ITEM.one
            } else {
                super::words::ITEM.many
            }
        );
        self.emit(Line::new().add(&msg, Some(SpanKind::Meta)), Origin::None);
    }

    /// Whether item `(e, b)` is a file-editing tool call (shown with its diff).
    fn is_edit_item(&self, e: usize, b: usize) -> bool {
        match self.block(e, b).map(|b| &b.kind) {
            Some(BlockKind::ToolUse(u)) => self.edit_of(u).is_some(),
            _ => false,
        }
    }

    /// The change a file-editing tool call asked for (`None` for other calls).
    fn edit_of(&self, u: &crate::model::ToolUse) -> Option<diff::EditDiff> {
        let raw = self.src.get(u.input.clone())?;
        if !diff::is_edit_call(&u.name, raw) {
            return None;
        }
        diff::edit_diff(&u.name, &diff::call_input(self.src, u)?)
    }

    /// The diff of a file-editing call under its line, folded (`LongToolOutput`, labelled
    /// `diff · +3 −1`), capped at [`MAX_DIFF_LINES`] with `… N more lines` (issue 11). An edit
    /// whose result is an error (failed, rejected) or missing is labelled so and its lines are
    /// not coloured as added / removed.
    #[allow(clippy::too_many_arguments)]
    fn edit_diff(
        &mut self,
        call_line: usize,
        e: usize,
        b: usize,
        u: &crate::model::ToolUse,
        d: &diff::EditDiff,
        res: Option<&ToolResult>,
        state: TurnState,
        indent: &str,
    ) {
        let origin = Origin::Entry {
            entry: e,
            block: Some(b),
            span: Some(u.input.clone()),
        };
        let prefix = format!("{indent}    ");
        let applied = res.is_some_and(|r| !r.is_error);
        let status = match res {
            Some(r) if r.is_error => {
                let rejected = {
                    let t = r.summary.to_ascii_lowercase();
                    t.contains("reject") || t.contains("doesn't want to proceed")
                };
                Some(if rejected {
                    "✗ not applied: rejected"
                } else {
                    "✗ not applied: the edit failed"
                })
            }
            Some(_) => None,
            None if state == TurnState::InFlight => Some("… proposed, no result yet"),
            None => Some("? no result recorded: may not have been applied"),
        };
        let mut last = call_line;
        if let Some(st) = status {
            last = self.emit(
                Line::new().raw(&prefix).add(st, Some(SpanKind::ToolError)),
                origin.clone(),
            );
        }
        for (k, dl) in d.lines.iter().enumerate() {
            if k >= MAX_DIFF_LINES {
                let n = (d.lines.len() - k) as u64;
                let more = text::plural(n, "more line", "more lines");
                last = self.emit(
                    Line::new()
                        .raw(&prefix)
                        .add(&format!("… {more}"), Some(SpanKind::Meta)),
                    origin.clone(),
                );
                break;
            }
            let c = clean(&dl.text);
            let cut = if c.chars().count() > OUTPUT_PREVIEW_CHARS {
                format!("{}…", &c[..char_index(&c, OUTPUT_PREVIEW_CHARS - 1)])
            } else {
                c.into_owned()
            };
            let colour = |k: SpanKind| {
                if applied {
                    Some(k)
                } else {
                    Some(SpanKind::Meta)
                }
            };
            let line = Line::new().raw(&prefix);
            let line = match dl.kind {
                diff::DiffLineKind::File | diff::DiffLineKind::Hunk => {
                    line.push(&cut, Some(SpanKind::Meta))
                }
                diff::DiffLineKind::Context => line.raw(" ").push(&cut, None),
                diff::DiffLineKind::Added => {
                    line.push(&format!("+{cut}"), colour(SpanKind::DiffAdded))
                }
                diff::DiffLineKind::Removed => {
                    line.push(&format!("-{cut}"), colour(SpanKind::DiffRemoved))
                }
            };
            last = self.emit(line, origin.clone());
        }
        let label = if applied {
            format!("diff · {}", d.counts())
        } else {
            format!("diff, not applied · {}", d.counts())
        };
        self.region(RegionKind::LongToolOutput, call_line, last, label);
    }

    /// The first lines of a tool result under its call, folded (`LongToolOutput`).
    fn output_preview(
        &mut self,
        call_line: usize,
        e: usize,
        b: usize,
        r: &ToolResult,
        indent: &str,
    ) {
        let Some((text, raw_used)) = result_text_prefix(self.src, r) else {
            return;
        };
        let mut text = trim_blank_lines(text.trim_matches(|c| c == '\n' || c == '\r'));
        // The call's line already shows the first line when it fits there (`→ first line…`):
        // the preview starts after it, so no line is shown twice (issue 11).
        let mut skipped = 0usize;
        if let Some((first, rest)) = text.split_once('\n') {
            let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
            let shown_summary = words(r.summary.trim_end_matches('…'));
            if !shown_summary.is_empty() && words(first) == shown_summary {
                skipped = first.len() + 1;
                text = trim_blank_lines(rest.trim_start_matches(['\n', '\r']));
            }
        }
        let mut lines: Vec<&str> = Vec::new();
        let mut it = text.split('\n');
        for l in it.by_ref() {
            lines.push(l);
            if lines.len() > OUTPUT_PREVIEW_LINES {
                break;
            }
        }
        let more_lines = lines.len() > OUTPUT_PREVIEW_LINES;
        // One line is already on the call's line (with the image placeholders).
        let non_empty = lines.iter().filter(|l| !l.trim().is_empty()).count();
        if non_empty < if skipped > 0 { 1 } else { 2 } {
            return;
        }
        lines.truncate(OUTPUT_PREVIEW_LINES);
        let origin = Origin::Entry {
            entry: e,
            block: Some(b),
            span: Some(r.content.clone()),
        };
        let prefix = format!("{indent}    ");
        let mut shown = skipped;
        let mut last = call_line;
        for l in &lines {
            let l = l.strip_suffix('\r').unwrap_or(l);
            let c = clean(l);
            let cut = if c.chars().count() > OUTPUT_PREVIEW_CHARS {
                format!("{}…", &c[..char_index(&c, OUTPUT_PREVIEW_CHARS - 1)])
            } else {
                c.into_owned()
            };
            shown += l.len() + 1;
            last = self.emit(Line::new().raw(&prefix).raw(&cut), origin.clone());
        }
        // The images on lines of their own: the Markdown form shows them there, not on the
        // call's line.
        if !r.images.is_empty() {
            self.view.images.retain(|i| i.line != call_line);
        }
        for (k, (mt, len)) in r.images.iter().enumerate() {
            let p = image_placeholder(mt, *len);
            last = self.emit(
                Line::new().raw(&prefix).add(&p, Some(SpanKind::Meta)),
                origin.clone(),
            );
            self.note_image(last, p, r.content.clone(), k);
        }
        let truncated_raw = raw_used < r.content.len();
        if more_lines || truncated_raw {
            let more = r.content_len.saturating_sub(shown.min(raw_used)).max(1);
            last = self.emit(
                Line::new()
                    .raw(&prefix)
                    .add(&format!("… {} more", fmt_bytes(more)), Some(SpanKind::Meta)),
                origin,
            );
        }
        self.region(
            RegionKind::LongToolOutput,
            call_line,
            last,
            format!("output · {}", fmt_bytes(r.content_len)),
        );
    }

    fn subagent(&mut self, turn: &'a Turn, c: usize, call_line: usize, indent: &str) {
        let Some(call) = self.a.subagent_calls.get(c) else {
            return;
        };
        let name = super::subagent_label(call);
        let detail = super::subagent_detail(call);

        let saved = self.mods;
        self.mods.sidechain = true;
        let mut head_text = format!("{indent}  ⤷ {name}");
        if !detail.is_empty() {
            head_text.push_str(" · ");
            head_text.push_str(&detail);
        }
        let head = self.emit(
            Line::new().add(&head_text, Some(SpanKind::Meta)),
            self.entry_origin(call.entry, Some(call.block)),
        );
        let inner = format!("{indent}    ");
        // Uses of this sub-agent, so their results are shown beside them.
        let mut items: Vec<(usize, usize)> = Vec::new();
        let mut uses = HashSet::new();
        for &e in &call.sidechain_entries {
            if let Some(entry) = self.t.entries.get(e) {
                for (b, block) in entry.blocks.iter().enumerate() {
                    if matches!(block.kind, BlockKind::ToolUse(_)) {
                        uses.insert((e, b));
                    }
                }
            }
        }
        for &e in &call.sidechain_entries {
            let Some(entry) = self.t.entries.get(e) else {
                continue;
            };
            for (b, block) in entry.blocks.iter().enumerate() {
                let shown_with_use = matches!(block.kind, BlockKind::ToolResult(_))
                    && self
                        .use_of_result
                        .get(&(e, b))
                        .is_some_and(|u| uses.contains(u));
                if !shown_with_use {
                    items.push((e, b));
                }
            }
        }
        let mut left_out = 0;
        for (k, &(e, b)) in items.iter().enumerate() {
            if self.turn_over_budget() {
                self.more_items(&inner, left_out + items.len() - k);
                left_out = 0;
                break;
            }
            // Past the cap only file edits are shown (as in work runs).
            if k >= MAX_RUN_ITEMS && !self.is_edit_item(e, b) {
                left_out += 1;
                continue;
            }
            self.more_items(&inner, left_out);
            left_out = 0;
            let is_prompt = self
                .t
                .entries
                .get(e)
                .is_some_and(|en| !matches!(en.role, Role::Model | Role::ToolResults));
            if is_prompt && let Some(BlockKind::Text { text }) = self.block(e, b).map(|b| &b.kind) {
                {
                    let s = self.decode(text);
                    let origin = self.entry_origin(e, Some(b));
                    self.emit(
                        Line::new()
                            .raw(&inner)
                            .raw("» ")
                            .add(&one_line(&s, ONE_LINE_CHARS), Some(SpanKind::Prompt)),
                        origin,
                    );
                    continue;
                }
            }
            self.step_item(turn, e, b, &inner);
        }
        self.more_items(&inner, left_out);
        self.mods = saved;
        let end = self.next_line() - 1;
        self.region(RegionKind::Subagent, head, end, name.clone());
        self.anchor(AnchorKind::Subagent, call_line, end, Some(name), detail);
    }

    fn steering_line(&mut self, e: usize) {
        let Some(entry) = self.t.entries.get(e) else {
            return;
        };
        self.blank();
        let mut first_line: Option<usize> = None;
        let name = super::steering_label(entry, self.src);
        for (b, block) in entry.blocks.iter().enumerate() {
            let origin = self.entry_origin(e, Some(b));
            match &block.kind {
                BlockKind::Text { text } => {
                    let s = self.decode(text);
                    let s = trim_blank_lines(s.trim_matches(|c| c == '\n' || c == '\r'));
                    if s.is_empty() {
                        continue;
                    }
                    let (head, rest) = match s.split_once('\n') {
                        Some((h, r)) => (h, Some(r)),
                        None => (s, None),
                    };
                    if first_line.is_none() {
                        let l = self.emit(
                            Line::new()
                                .add("↪ queued: ", Some(SpanKind::Meta))
                                .add(head, Some(SpanKind::Prompt)),
                            origin.clone(),
                        );
                        first_line = Some(l);
                        if let Some(rest) = rest {
                            self.emit_text(
                                rest,
                                "  ",
                                SpanKind::Prompt,
                                &origin,
                                MAX_PROSE_LINES,
                                MAX_PROSE_BYTES,
                                &[],
                            );
                        }
                    } else {
                        self.emit_text(
                            s,
                            "  ",
                            SpanKind::Prompt,
                            &origin,
                            MAX_PROSE_LINES,
                            MAX_PROSE_BYTES,
                            &[],
                        );
                    }
                }
                BlockKind::Image {
                    media_type,
                    data_len,
                } => {
                    let p = image_placeholder(media_type, *data_len);
                    let line = if first_line.is_none() {
                        Line::new()
                            .add("↪ queued: ", Some(SpanKind::Meta))
                            .add(&p, Some(SpanKind::Meta))
                    } else {
                        Line::new().raw("  ").add(&p, Some(SpanKind::Meta))
                    };
                    let span = match &origin {
                        Origin::Entry { span: Some(s), .. } => Some(s.clone()),
                        _ => None,
                    };
                    let l = self.emit(line, origin);
                    if let Some(span) = span {
                        self.note_image(l, p, span, 0);
                    }
                    first_line.get_or_insert(l);
                }
                other => {
                    let l = self.next_line();
                    self.other_block_line("  ", other, origin);
                    first_line.get_or_insert(l);
                }
            }
        }
        let first = match first_line {
            Some(l) => l,
            None => self.emit(
                Line::new().add("↪ queued: (empty)", Some(SpanKind::Meta)),
                self.entry_origin(e, None),
            ),
        };
        let end = self.next_line() - 1;
        self.anchor(AnchorKind::Steering, first, end, Some(name), String::new());
    }

    /// `🔗 pull request: <url>` (Claude Code `pr-link`) or `⚠ API error: <message>` (Claude
    /// Code `system/api_error`): one line, in the quiet and the verbose view.
    fn notice_line(&mut self, e: usize) {
        let Some(entry) = self.t.entries.get(e) else {
            return;
        };
        let Some((label, kind)) = notice_kind(entry) else {
            return;
        };
        let text = entry.blocks.iter().find_map(|b| match &b.kind {
            BlockKind::Text { text } => Some((b, self.decode(text))),
            _ => None,
        });
        let mut line = Line::new();
        let origin = match &text {
            Some((b, t)) => {
                let bi = entry.blocks.iter().position(|x| std::ptr::eq(x, *b));
                line = line.add(&format!("{label}: {}", one_line(t, 200)), Some(kind));
                self.entry_origin(e, bi)
            }
            None => {
                line = line.add(label, Some(kind));
                self.entry_origin(e, None)
            }
        };
        self.blank();
        self.emit(line, origin);
        self.blank();
    }

    /// Indices into `SessionMeta::sessions` of the sessions starting at an entry in
    /// `from..to`.
    fn sessions_in(&self, from: usize, to: usize) -> std::ops::Range<usize> {
        let s = &self.t.meta.sessions;
        let a = s.partition_point(|x| x.entry < from);
        let b = s.partition_point(|x| x.entry < to).max(a);
        a..b
    }

    /// `── Session 2: <id> ──`: where another session of the file starts (issue 20 item 3),
    /// drawn like a compaction divider.
    fn session_divider(&mut self, si: usize) {
        let Some(st) = self.t.meta.sessions.get(si) else {
            return;
        };
        // A session the file names no id for (a rewound Kiro / Vibe fork, an Antigravity CLI
        // conversation with no checkpoint) is only numbered.
        let divider = if st.id.is_empty() {
            format!("── Session {} ──", si + 2)
        } else {
            format!("── Session {}: {} ──", si + 2, one_line(&st.id, 60))
        };
        self.blank();
        let saved = self.mods;
        self.mods = Mods::default();
        let line = self.emit(
            Line::new().add(&divider, Some(SpanKind::Meta)),
            self.entry_origin(st.entry, None),
        );
        self.mods = saved;
        // The outline entry: the raw outline's name and detail (`ide::symbols`).
        let (name, detail) = super::session_outline(si, st);
        self.anchor(AnchorKind::Session, line, line, Some(name), detail);
    }

    fn compaction(&mut self, ci: usize) {
        let Some(c) = self.a.compactions.get(ci) else {
            return;
        };
        let label = super::compaction_label(c);
        self.blank();
        let saved = self.mods;
        self.mods = Mods::default();
        let divider = format!("── {label} ──");
        let head = self.emit(
            Line::new().add(&divider, Some(SpanKind::Meta)),
            self.entry_origin(c.boundary, None),
        );
        if self.verbose
            && let Some(s) = c
                .summary
                .and_then(|s| self.t.entries.get(s).map(|e| (s, e)))
        {
            {
                let (se, entry) = s;
                for (b, block) in entry.blocks.iter().enumerate() {
                    if let BlockKind::Text { text } = &block.kind {
                        let txt = self.decode(text);
                        let origin = self.entry_origin(se, Some(b));
                        self.emit_text(
                            &txt,
                            "",
                            SpanKind::Meta,
                            &origin,
                            SUMMARY_LINES,
                            SUMMARY_BYTES,
                            &[],
                        );
                    }
                }
            }
        }
        self.mods = saved;
        let end = self.next_line() - 1;
        self.region(RegionKind::Compaction, head, end, label);
        self.anchor(
            AnchorKind::Compaction,
            head,
            end,
            Some(format!("Compaction {}", c.n)),
            super::compaction_detail(c),
        );
        self.blank();
    }

    /// An abandoned branch: one line `⎇ abandoned branch · 18 entries — <prompt> · 96k
    /// tokens`; in verbose mode followed by a summary of its records, folded (issue 10).
    fn branch(&mut self, bi: usize) {
        let Some(b) = self.a.branches.get(bi) else {
            return;
        };
        let label = super::branch_label(b);
        let detail = super::branch_detail(b);
        self.blank();
        let saved = self.mods;
        self.mods = Mods::default();
        let text = if detail.is_empty() {
            format!("⎇ {label}")
        } else {
            format!("⎇ {label} — {detail}")
        };
        let origin = self.entry_origin(b.prompt.unwrap_or(b.entries.start), None);
        let head = self.emit(Line::new().add(&text, Some(SpanKind::Meta)), origin);
        if self.verbose {
            let mut entries: Vec<usize> = b.entries.clone().collect();
            self.flush_group(&mut entries);
        }
        self.mods = saved;
        let end = self.next_line() - 1;
        self.region(RegionKind::AbandonedBranch, head, end, label.clone());
        self.anchor(AnchorKind::AbandonedBranch, head, end, Some(label), detail);
        self.blank();
    }

    fn gate_line(&mut self, g: usize) {
        let Some(gate) = self.a.gates.get(g) else {
            return;
        };
        let name = super::gate_label(gate, &self.phases);
        let reason = super::gate_detail(gate);
        let mut line = Line::new().add(&name, Some(SpanKind::Gate));
        if !reason.is_empty() {
            line = line.raw(" — ").add(&reason, None);
        }
        self.blank();
        let origin = Origin::Entry {
            entry: gate.entry,
            block: Some(gate.block),
            span: Some(gate.span.clone()),
        };
        let l = self.emit(line, origin);
        self.anchor(AnchorKind::Gate, l, l, Some(name), reason);
    }

    /// Records no other element shows (verbose): interruptions, local commands and invalid
    /// lines one per line; runs of other records (meta, hooks, progress, unknown types,
    /// unattributed sidechain records) as one summary line.
    /// Inherited history and repeated records fold apart, each run as one line (issue 20
    /// items 1 and 2).
    fn misc(&mut self, entries: &[usize]) {
        let mut group: Vec<usize> = Vec::new();
        for &e in entries {
            let Some(entry) = self.t.entries.get(e) else {
                continue;
            };
            match &entry.role {
                Role::Interruption | Role::LocalCommand | Role::Unparsed
                    if !entry.inherited && !entry.repeated =>
                {
                    self.flush_group(&mut group);
                    self.special_record(e, entry);
                }
                _ => {
                    if group
                        .last()
                        .is_some_and(|&g| GroupKind::of(&self.t.entries[g]) != GroupKind::of(entry))
                    {
                        self.flush_group(&mut group);
                    }
                    group.push(e)
                }
            }
        }
        self.flush_group(&mut group);
    }

    fn special_record(&mut self, e: usize, entry: &'a Entry) {
        let origin = self.entry_origin(e, None);
        let line = match &entry.role {
            Role::Interruption => {
                Line::new().add("⏹ interrupted by the user", Some(SpanKind::Meta))
            }
            Role::LocalCommand => {
                let text = entry
                    .blocks
                    .iter()
                    .find_map(|b| match &b.kind {
                        BlockKind::Text { text } => Some(self.decode(text)),
                        _ => None,
                    })
                    .unwrap_or_default();
                let text = text::command_text(&text);
                let text = strip_tags(&text);
                Line::new()
                    .add("$ ", Some(SpanKind::Meta))
                    .add(&one_line(&text, ONE_LINE_CHARS), Some(SpanKind::Meta))
            }
            _ => {
                let msg = self
                    .problem_on(entry.line)
                    .map_or("invalid record".to_string(), |p| one_line(&p.message, 200));
                Line::new().add(
                    &format!("⚠ line {}: {msg}", entry.line + 1),
                    Some(SpanKind::Meta),
                )
            }
        };
        self.emit(line, origin);
    }

    fn flush_group(&mut self, group: &mut Vec<usize>) {
        self.flush_group_indented("", group);
    }

    /// One summary line for a run of bookkeeping records: `· 4 records: event_msg/token_count
    /// ×2, turn_context, …` (at most 8 kinds named), after `indent`.
    fn flush_group_indented(&mut self, indent: &str, group: &mut Vec<usize>) {
        if group.is_empty() {
            return;
        }
        let mut counts: Vec<(String, usize)> = Vec::new();
        let mut total = 0;
        for &e in group.iter() {
            let entry = &self.t.entries[e];
            let mut name = one_line(&entry.record_type, 60);
            if entry.sidechain {
                name.push_str(" (sidechain)");
            }
            // A run of bare records is one entry (issue 25 item 8): counted whole.
            let n = self.t.records_of(e);
            total += n;
            match counts.iter_mut().find(|(n, _)| *n == name) {
                Some((_, c)) => *c += n,
                None => counts.push((name, n)),
            }
        }
        let list: Vec<String> = counts
            .iter()
            .take(8)
            .map(|(n, c)| {
                if *c > 1 {
                    format!("{n} ×{c}")
                } else {
                    n.clone()
                }
            })
            .collect();
        let records = super::words::count(total as u64, super::words::RECORD);
        let mut text = match GroupKind::of(&self.t.entries[group[0]]) {
            GroupKind::Inherited => format!(
                "· {} · {records}: {}",
                self.a
                    .inherited
                    .iter()
                    .rfind(|h| h.entries.start <= group[0])
                    .map_or_else(|| "inherited".to_string(), super::inherited_label),
                list.join(", ")
            ),
            GroupKind::Repeated => {
                format!("· repeated records ({total}): {}", list.join(", "))
            }
            GroupKind::Plain => format!("· {records}: {}", list.join(", ")),
        };
        if counts.len() > 8 {
            text.push_str(&format!(", {} more kinds", counts.len() - 8));
        }
        let origin = self.entry_origin(group[0], None);
        self.emit(
            Line::new().raw(indent).add(&text, Some(SpanKind::Meta)),
            origin,
        );
        group.clear();
    }
}

/// Which summary line a bookkeeping record folds into: runs of one kind fold together.
#[derive(Clone, Copy, PartialEq, Eq)]
enum GroupKind {
    /// Replayed from the parent thread (`Entry::inherited`).
    Inherited,
    /// Written again later in the file (`Entry::repeated`).
    Repeated,
    Plain,
}

impl GroupKind {
    fn of(e: &Entry) -> GroupKind {
        if e.inherited {
            GroupKind::Inherited
        } else if e.repeated {
            GroupKind::Repeated
        } else {
            GroupKind::Plain
        }
    }
}

fn span_kind(role: ProseRole) -> SpanKind {
    match role {
        ProseRole::Narration => SpanKind::Narration,
        ProseRole::Answer => SpanKind::FinalAnswer,
    }
}

/// Drops leading and trailing lines that hold only whitespace.
fn trim_blank_lines(s: &str) -> &str {
    let (mut start, mut end, mut pos) = (None, 0, 0);
    for l in s.split_inclusive('\n') {
        let body = l.trim_end_matches(['\n', '\r']);
        if !body.trim().is_empty() {
            start.get_or_insert(pos);
            end = pos + body.len();
        }
        pos += l.len();
    }
    match start {
        Some(st) => &s[st..end],
        None => "",
    }
}

/// Removes `<tag>` / `</tag>` markup (local command wrappers), keeping the text.
fn strip_tags(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(p) = rest.find('<') {
        out.push_str(&rest[..p]);
        let after = &rest[p..];
        match after.find('>') {
            Some(q)
                if after[1..q]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '/' || c == '_')
                    && q > 1 =>
            {
                out.push(' ');
                rest = &after[q + 1..];
            }
            _ => {
                out.push('<');
                rest = &after[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// A result's one-line form: its summary, image placeholders, or its size.
fn result_summary(r: &ToolResult) -> String {
    let mut s = one_line(&r.summary, ONE_LINE_CHARS);
    for (mt, len) in &r.images {
        if !s.is_empty() {
            s.push(' ');
        }
        s.push_str(&image_placeholder(mt, *len));
    }
    if s.is_empty() {
        if r.content_len == 0 {
            "(empty)".to_string()
        } else {
            format!("({})", fmt_bytes(r.content_len))
        }
    } else {
        s
    }
}

/// The beginning of a tool result's text, decoded: at most [`OUTPUT_PREVIEW_RAW_BYTES`] of the
/// raw source (cut on an escape boundary). Returns the text and the raw bytes it covers. For
/// array content, the `text` parts (arrays over 1 MiB are not previewed).
pub(crate) fn result_text_prefix(src: &str, r: &ToolResult) -> Option<(String, usize)> {
    let content = r.content.clone();
    let raw = src.get(content.clone())?;
    if raw.is_empty() {
        return None;
    }
    let is_string = content.start > 0 && src.as_bytes().get(content.start - 1) == Some(&b'"');
    if is_string {
        let bytes = raw.as_bytes();
        let limit = OUTPUT_PREVIEW_RAW_BYTES.min(bytes.len());
        let mut i = 0;
        while i < limit {
            if bytes[i] == b'\\' {
                let len = if bytes.get(i + 1) == Some(&b'u') {
                    6
                } else {
                    2
                };
                if i + len > limit && limit < bytes.len() {
                    break;
                }
                i += len;
            } else {
                i += 1;
            }
        }
        let mut cut = i.min(bytes.len());
        while cut > 0 && !raw.is_char_boundary(cut) {
            cut -= 1;
        }
        return Some((json_string::decode(&raw[..cut]).into_owned(), cut));
    }
    if raw.starts_with('[') && raw.len() <= 1024 * 1024 {
        #[derive(serde::Deserialize)]
        struct Part<'a> {
            #[serde(borrow, default)]
            text: Option<std::borrow::Cow<'a, str>>,
        }
        let parts: Vec<Part> = serde_json::from_str(raw).ok()?;
        let mut out = String::new();
        for p in parts {
            if let Some(t) = p.text {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(&t);
                if out.len() > OUTPUT_PREVIEW_RAW_BYTES {
                    let cut = char_index(&out, OUTPUT_PREVIEW_RAW_BYTES);
                    out.truncate(cut);
                    break;
                }
            }
        }
        // All the text is there unless it was cut: then count the whole content as more.
        let used = if out.len() >= OUTPUT_PREVIEW_RAW_BYTES {
            out.len().min(raw.len())
        } else {
            raw.len()
        };
        return Some((out, used));
    }
    None
}

/// The largest char boundary of `s` at or below `i`.
fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The label and span kind of a record the view shows as one notice line (issue 20 item 11).
fn notice_kind(e: &Entry) -> Option<(&'static str, SpanKind)> {
    match &*e.record_type {
        "pr-link" => Some(("🔗 pull request", SpanKind::Meta)),
        "system/api_error" => Some(("⚠ API error", SpanKind::ToolError)),
        // Gemini CLI's `error` message (`[API Error: …]`, issue 21 item 2).
        "error" => Some(("⚠ error", SpanKind::ToolError)),
        _ => None,
    }
}

/// The label line above a turn's answer: `**Answer**`, or `**Answer so far** (in flight)`
/// while the turn is in flight ([`super::words::answer_name`]'s rule, issue 20 item 9).
fn answer_label(state: TurnState) -> String {
    if state == TurnState::InFlight {
        format!("**Answer so far** ({})", super::words::IN_FLIGHT)
    } else {
        "**Answer**".to_string()
    }
}

/// The first words of the agent's latest comment in `turn` (its last non-empty text block of a
/// prose run outside the final answer: an in-flight answer stays held back, seed 000), as an
/// answer's gist reads them ([`super::answer_gist`]: the first non-empty line, at most 60
/// characters); `None` when the agent has commented nothing yet. Shown after `… working` on
/// an in-flight turn of the quiet view (issue 23 item 5).
fn latest_comment(t: &Transcript, src: &str, turn: &Turn) -> Option<String> {
    let answer: &[(usize, usize)] = turn.final_answer.as_ref().map_or(&[], |f| &f.blocks);
    turn.runs
        .iter()
        .rev()
        .filter(|r| r.kind == crate::analysis::RunKind::Prose)
        .flat_map(|r| r.blocks.iter().rev())
        .filter(|b| !answer.contains(b))
        .map(|&b| {
            let one = crate::analysis::FinalAnswer {
                blocks: vec![b],
                marker: None,
                stray_markers: Vec::new(),
                end_turn: false,
            };
            super::answer_gist(t, src, &one)
        })
        .find(|g| !g.is_empty())
}
