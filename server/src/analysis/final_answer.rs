//! The final answer of a turn (seed 000 "Real Conversation Layout — part 2").
//!
//! Heuristic (no marker): walk the body backwards from the end. Agent prose joins the answer;
//! thinking and tool results never break it (Omniscio walks *agent rows*, and a thinking-only
//! row has no tool activity); a tool call ends it — except for R-QW-FINAL: a stretch of
//! bookkeeping calls ([`super::body::BOOKKEEPING_TOOLS`]) and thinking is crossed when the prose
//! right before it asks a question, so the question and its sign-off form one answer. On a
//! turn the agent moved past without a terminal close, a non-substantive trailing narration
//! ("Let me try X:") is not an answer (R69).
//!
//! Marker (`[[OMNISCIO_FINAL]]`, legacy `[[AMC_FINAL]]`): see [`find_marker`] and
//! [`decide`].

use std::borrow::Cow;

use super::body::{Item, ItemKind};
use super::text::Mapped;
use super::{Marker, Span};
use crate::model::{BlockKind, Transcript};

/// The two marker spellings, current first.
pub const MARKERS: [&str; 2] = ["[[OMNISCIO_FINAL]]", "[[AMC_FINAL]]"];

/// Decoded text of a prose item (`Text` block), empty for anything else.
pub fn item_text<'s>(t: &Transcript, source: &'s str, it: &Item) -> Cow<'s, str> {
    match t.entries[it.entry].blocks.get(it.block).map(|b| &b.kind) {
        Some(BlockKind::Text { text }) => text.decode_lossless(source),
        _ => Cow::Borrowed(""),
    }
}

trait DecodeLossless {
    fn decode_lossless<'s>(&self, source: &'s str) -> Cow<'s, str>;
}

impl DecodeLossless for crate::model::Str {
    /// Like `Str::decode` but never panics on a span outside the source.
    fn decode_lossless<'s>(&self, source: &'s str) -> Cow<'s, str> {
        match source.get(self.raw.clone()) {
            Some(raw) => crate::source::json_string::decode(raw),
            None => Cow::Borrowed(""),
        }
    }
}

/// Trailing characters ignored when deciding how a line ends (markdown wrappers, quotes).
fn trim_end_markup(s: &str) -> &str {
    s.trim_end()
        .trim_end_matches(['*', '_', '`', ')', '"', '\'', '”', '’', ' '])
        .trim_end()
}

/// True when the prose asks a question: one of its last three non-empty lines ends with `?`
/// (after trailing emphasis, quotes and parentheses). Seed 000 R-QW-FINAL.
pub fn is_question(text: &str) -> bool {
    text.lines()
        .rev()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(3)
        .any(|l| {
            let l = trim_end_markup(l);
            l.ends_with('?') || l.ends_with('？')
        })
}

/// Openers of intermediate narration (seed 000 R69: "Let me try X:").
pub const NARRATION_OPENERS: &[&str] = &[
    "let me",
    "now let me",
    "i'll",
    "i will",
    "now i'll",
    "now i will",
    "let's",
    "now let's",
    "first, let me",
    "first let me",
    "next, let me",
    "next let me",
    "ok, let me",
    "okay, let me",
    "ok let me",
    "okay let me",
    "i'm going to",
    "now i'm going to",
];

/// Maximum length (characters) of a narration line.
pub const NARRATION_MAX_CHARS: usize = 200;

/// True for non-substantive intermediate narration: one short paragraph (at most
/// [`NARRATION_MAX_CHARS`] characters) that ends with `:` or starts with a narration opener
/// (`Let me`, `I'll`, `Now let me`, …) and is not a question.
pub fn is_narration(text: &str) -> bool {
    let t = text.trim();
    if t.is_empty() || t.chars().count() > NARRATION_MAX_CHARS || t.contains("\n\n") {
        return false;
    }
    let end = trim_end_markup(t);
    if end.ends_with('?') {
        return false;
    }
    if end.ends_with(':') || end.ends_with('：') {
        return true;
    }
    let lower = t
        .trim_start_matches(['*', '_', '#', ' '])
        .to_lowercase()
        .replace('’', "'");
    if lower.starts_with("let me know") {
        return false;
    }
    NARRATION_OPENERS.iter().any(|o| {
        lower.starts_with(o)
            && lower[o.len()..]
                .chars()
                .next()
                .is_none_or(|c| !c.is_alphanumeric())
    })
}

/// True for a substantive piece of prose (seed 000 "never hides your answer": a headline, a
/// conclusion, a deliverable link): not blank, not narration, and either at least 80
/// characters, or at least two non-empty lines, or markdown structure (heading, bold, list
/// item, table row, link or URL).
pub fn is_substantive(text: &str) -> bool {
    let t = text.trim();
    if t.is_empty() || is_narration(t) {
        return false;
    }
    if t.chars().count() >= 80 || t.lines().filter(|l| !l.trim().is_empty()).count() >= 2 {
        return true;
    }
    t.starts_with('#')
        || t.starts_with("**")
        || t.starts_with("- ")
        || t.starts_with("* ")
        || t.starts_with('|')
        || t.contains("](")
        || t.contains("http://")
        || t.contains("https://")
}

/// The heuristic answer: indices into `items` (ascending) of the prose that forms the answer.
/// Empty when the body ends on a tool call.
pub fn heuristic(t: &Transcript, source: &str, items: &[Item]) -> Vec<usize> {
    let mut answer = Vec::new();
    // True while walking back through a stretch of bookkeeping calls (R-QW-FINAL).
    let mut crossing = false;
    for i in (0..items.len()).rev() {
        match items[i].kind {
            ItemKind::Prose => {
                if crossing {
                    if !is_question(&item_text(t, source, &items[i])) {
                        break;
                    }
                    crossing = false;
                }
                answer.push(i);
            }
            ItemKind::Thinking
            | ItemKind::EmptyThinking
            | ItemKind::ToolResult
            | ItemKind::Neutral => {}
            ItemKind::ToolUse { bookkeeping: true } => crossing = true,
            ItemKind::ToolUse { bookkeeping: false } | ItemKind::Error => break,
        }
    }
    answer.reverse();
    answer
}

/// A marker found in the body.
#[derive(Debug)]
pub struct MarkerHit<'s> {
    /// Index into the items of the prose block holding it.
    pub item: usize,
    /// The block's decoded text, mapped to the source.
    pub mapped: Mapped<'s>,
    /// Decoded byte range of the marker line (standalone: the whole line without its `\n`;
    /// glued: the marker with its wrappers only).
    pub line: std::ops::Range<usize>,
    /// Decoded offset where the text after the marker starts.
    pub after: usize,
    /// True when an earlier marker sits in the same block (before this one).
    pub earlier_in_block: bool,
}

/// Finds where a marker sits at the start of `line` (after indentation, an optional heading
/// `#`…`######`, and an optional bold/italic opener `*` `**` `***` `_` `__` `___`). Returns the
/// offset just after the marker and its closing wrapper. A backtick before the marker makes it
/// a code example: `None`. A marker followed by a space and more text is a mention, not a
/// boundary: `None`; a marker glued directly onto text (`[[OMNISCIO_FINAL]]## Ready`) counts.
fn marker_at_line_start(line: &str) -> Option<usize> {
    let b = line.as_bytes();
    let mut p = 0;
    while p < b.len() && (b[p] == b' ' || b[p] == b'\t') {
        p += 1;
    }
    let mut heading = false;
    if p < b.len() && b[p] == b'#' {
        let h = b[p..].iter().take_while(|&&c| c == b'#').count();
        if h > 6 {
            return None;
        }
        p += h;
        heading = true;
        while p < b.len() && (b[p] == b' ' || b[p] == b'\t') {
            p += 1;
        }
    }
    let mut open = 0;
    let mut open_ch = 0u8;
    if p < b.len() && (b[p] == b'*' || b[p] == b'_') {
        open_ch = b[p];
        open = b[p..].iter().take_while(|&&c| c == open_ch).count();
        if open > 3 {
            return None;
        }
        p += open;
    }
    let rest = &line[p..];
    let m = MARKERS.iter().find(|m| rest.starts_with(**m))?;
    p += m.len();
    if open > 0 {
        let close = b[p..]
            .iter()
            .take_while(|&&c| c == open_ch)
            .count()
            .min(open);
        p += close;
    }
    let after = &line[p..];
    if heading && after.trim().trim_matches('#').trim().is_empty() {
        return Some(line.len());
    }
    if after.trim().is_empty() {
        return Some(line.len());
    }
    if after.starts_with([' ', '\t']) {
        return None;
    }
    Some(p)
}

/// `text` without its marker lines (a superseded earlier marker is not content), for the
/// substantive test of the prose before the counted marker.
fn without_markers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.split('\n') {
        match marker_at_line_start(line) {
            Some(p) => out.push_str(&line[p..]),
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// The marker lines of a decoded text block outside code fences, in order: for each, the
/// decoded range to hide (standalone: the whole line without its `\n`; glued: the marker and
/// its wrappers) and the decoded offset where the text after it starts.
fn marker_lines(txt: &str) -> Vec<(std::ops::Range<usize>, usize)> {
    let mut out = Vec::new();
    let mut fence: Option<(u8, usize)> = None;
    let mut start = 0;
    while start <= txt.len() {
        let end = txt[start..].find('\n').map_or(txt.len(), |n| start + n);
        let line = &txt[start..end];
        let trimmed = line.trim_start();
        let fch = trimmed.as_bytes().first().copied();
        if let Some(c @ (b'`' | b'~')) = fch {
            let n = trimmed.bytes().take_while(|&x| x == c).count();
            if n >= 3 {
                match fence {
                    None => fence = Some((c, n)),
                    Some((oc, on)) if oc == c && n >= on && trimmed[n..].trim().is_empty() => {
                        fence = None
                    }
                    _ => {}
                }
                start = end + 1;
                continue;
            }
        }
        if fence.is_none()
            && let Some(p) = marker_at_line_start(line)
        {
            out.push(if p == line.len() {
                (start..end, (end + 1).min(txt.len()))
            } else {
                (start..start + p, start + p)
            });
        }
        start = end + 1;
    }
    out
}

/// The decoded text of a prose item mapped to the source, only when its raw text may hold a
/// marker (contains `_FINAL]]`): other blocks are never decoded for marker search.
fn marker_block<'s>(t: &Transcript, source: &'s str, it: &Item) -> Option<Mapped<'s>> {
    let Some(BlockKind::Text { text: s }) =
        t.entries[it.entry].blocks.get(it.block).map(|b| &b.kind)
    else {
        return None;
    };
    let raw = source.get(s.raw.clone())?;
    memchr::memmem::find(raw.as_bytes(), b"_FINAL]]")?;
    Some(Mapped::new(source, s.raw.clone()))
}

/// The last marker outside code fences among the prose items, if any (seed 000: "Only the
/// LAST marker outside a code fence counts").
pub fn find_marker<'s>(t: &Transcript, source: &'s str, items: &[Item]) -> Option<MarkerHit<'s>> {
    for (ix, it) in items.iter().enumerate().rev() {
        if it.kind != ItemKind::Prose {
            continue;
        }
        let Some(mapped) = marker_block(t, source, it) else {
            continue;
        };
        let mut lines = marker_lines(&mapped.text);
        if let Some((line, after)) = lines.pop() {
            return Some(MarkerHit {
                item: ix,
                mapped,
                line,
                after,
                earlier_in_block: !lines.is_empty(),
            });
        }
    }
    None
}

/// Source spans of the marker lines in the given prose items, except `skip` (the deciding
/// marker's source span). The view hides them: seed 000 "the marker line itself never
/// appears", also for a marker that was ignored or superseded.
fn stray_markers(
    t: &Transcript,
    source: &str,
    items: &[Item],
    answer: &[usize],
    skip: Option<&Span>,
) -> Vec<Span> {
    let mut out = Vec::new();
    for &i in answer {
        let Some(m) = marker_block(t, source, &items[i]) else {
            continue;
        };
        for (line, _) in marker_lines(&m.text) {
            let span = m.source_offset(line.start)..m.source_offset(line.end);
            if Some(&span) != skip {
                out.push(span);
            }
        }
    }
    out
}

/// The decided final answer: item indices (ascending) and the marker when one decided it.
#[derive(Debug, Default)]
pub struct Decision {
    /// Indices into the body items of the answer's prose blocks, ascending.
    pub items: Vec<usize>,
    /// The marker that decided the answer, if one did.
    pub marker: Option<Marker>,
    /// Source spans of marker lines inside the answer that did not decide it.
    pub stray_markers: Vec<Span>,
}

/// Source offset of the first non-blank character of a raw literal starting at `raw.start`
/// (decodes escape by escape only over leading whitespace).
fn first_visible(source: &str, raw: Span) -> usize {
    let s = source.get(raw.clone()).unwrap_or("");
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let (c, len) = if b[i] == b'\\' {
            crate::source::json_string::decode_escape(b, i)
        } else {
            let c = s[i..].chars().next().unwrap_or('x');
            (c, c.len_utf8())
        };
        if !c.is_whitespace() {
            break;
        }
        i += len;
    }
    raw.start + i
}

/// Source span of the last non-empty line of `mapped.text[..end]`, when it equals (byte for
/// byte) the first non-empty line of `first_after`.
fn duplicate_lead(mapped: &Mapped<'_>, end: usize, first_after: &str) -> Option<Span> {
    let before = &mapped.text[..end];
    let mut pos = before.len();
    for line in before.rsplit('\n') {
        let line_start = pos - line.len();
        pos = line_start.saturating_sub(1);
        if line.trim().is_empty() {
            continue;
        }
        let want = first_after.lines().find(|l| !l.trim().is_empty())?;
        if line == want {
            return Some(
                mapped.source_offset(line_start)..mapped.source_offset(line_start + line.len()),
            );
        }
        return None;
    }
    None
}

/// The answer the agent declared (issue 10): the prose items of the last model record whose
/// step says so (`StepInfo::declares_final`, Copilot CLI `phase: "final_answer"`). `None` when
/// no record of the body declares one with prose, so the heuristic applies.
pub fn declared(t: &Transcript, items: &[Item]) -> Option<Vec<usize>> {
    let declares = |i: &Item| {
        t.entries[i.entry]
            .step
            .as_ref()
            .is_some_and(|s| s.declares_final)
    };
    let last = items
        .iter()
        .rposition(|i| i.kind == ItemKind::Prose && declares(i))?;
    let entry = items[last].entry;
    Some(
        (0..=last)
            .filter(|&k| items[k].entry == entry && items[k].kind == ItemKind::Prose)
            .collect(),
    )
}

/// Decides the final answer of a body.
///
/// `use_marker`: honour markers (`Options::final_marker`). `narration_folds(last_item)`: true
/// when the turn was moved past without a terminal close after that item — then a heuristic
/// answer whose last row (the prose of its last step, `row_of`) is narration is no answer.
///
/// With a marker (the last one outside code fences, not backtick-wrapped, with something
/// after it), the answer is the text after the marker plus every later prose block of the
/// body; prose right before the marker (the same block's text before the marker line and the
/// prose blocks before it back to the previous tool call) is folded when trivial and kept
/// from its first substantive piece on — unless the text after the marker is a clean
/// dev-pipeline gate report, which stands on its own. On a turn without tool calls nothing
/// can be folded, so all of that prose is kept, and an exact duplicate of the answer's lead
/// line just before the marker is reported in [`Marker::duplicate_lead`]. A marker with only
/// blank text after it is ignored (the heuristic applies).
///
/// Without a decisive marker, an answer the agent declared ([`declared`]) is the answer; the
/// heuristic applies only when no record declares one.
pub fn decide(
    t: &Transcript,
    source: &str,
    items: &[Item],
    use_marker: bool,
    row_of: &dyn Fn(usize) -> usize,
    narration_folds: &dyn Fn(usize) -> bool,
) -> Decision {
    if use_marker && let Some(mut d) = with_marker(t, source, items) {
        let decided = d.marker.as_ref().map(|m| m.span.clone());
        d.stray_markers = stray_markers(t, source, items, &d.items, decided.as_ref());
        return d;
    }
    if let Some(answer) = declared(t, items) {
        let stray = if use_marker {
            stray_markers(t, source, items, &answer, None)
        } else {
            Vec::new()
        };
        return Decision {
            items: answer,
            marker: None,
            stray_markers: stray,
        };
    }
    let answer = heuristic(t, source, items);
    if let Some(&last) = answer.last()
        && narration_folds(last)
    {
        let row = row_of(items[last].entry);
        let mut row_text = String::new();
        for &i in answer.iter().filter(|&&i| row_of(items[i].entry) == row) {
            if !row_text.is_empty() {
                row_text.push('\n');
            }
            row_text.push_str(&item_text(t, source, &items[i]));
        }
        if is_narration(&row_text) {
            return Decision::default();
        }
    }
    let stray = if use_marker {
        stray_markers(t, source, items, &answer, None)
    } else {
        Vec::new()
    };
    Decision {
        items: answer,
        marker: None,
        stray_markers: stray,
    }
}

fn with_marker(t: &Transcript, source: &str, items: &[Item]) -> Option<Decision> {
    let hit = find_marker(t, source, items)?;
    let later: Vec<usize> = (hit.item + 1..items.len())
        .filter(|&i| items[i].kind == ItemKind::Prose)
        .collect();
    let after_text = &hit.mapped.text[hit.after.min(hit.mapped.text.len())..];
    if after_text.trim().is_empty() && later.is_empty() {
        return None;
    }
    let it = items[hit.item];
    let marker_span =
        hit.mapped.source_offset(hit.line.start)..hit.mapped.source_offset(hit.line.end);
    // Where the post-marker answer starts in the source.
    let post_start = if after_text.trim().is_empty() {
        let first = items[later[0]];
        match t.entries[first.entry]
            .blocks
            .get(first.block)
            .map(|b| &b.kind)
        {
            Some(BlockKind::Text { text }) => first_visible(source, text.raw.clone()),
            _ => hit.mapped.source_offset(hit.after),
        }
    } else {
        let lead = after_text.len() - after_text.trim_start().len();
        hit.mapped.source_offset(hit.after + lead)
    };
    // The whole post-marker text, to test for a gate report.
    let mut post = after_text.to_string();
    for &i in &later {
        post.push('\n');
        post.push_str(&item_text(t, source, &items[i]));
    }
    let gate_report = post.contains("[DEV-PIPELINE");
    let has_tools = items
        .iter()
        .any(|i| matches!(i.kind, ItemKind::ToolUse { .. }));

    // Prose before the marker: earlier blocks back to the previous tool call, then the
    // marker block's own prefix.
    // An earlier marked message (an earlier marker) folds by default (seed 000: only the last
    // marked message is shown), so the walk stops there.
    let mut pre: Vec<usize> = Vec::new();
    if !hit.earlier_in_block {
        for i in (0..hit.item).rev() {
            match items[i].kind {
                ItemKind::Prose => {
                    if marker_block(t, source, &items[i])
                        .is_some_and(|m| !marker_lines(&m.text).is_empty())
                    {
                        break;
                    }
                    pre.push(i)
                }
                ItemKind::ToolUse { .. } | ItemKind::Error => break,
                _ => {}
            }
        }
    }
    pre.reverse();
    let prefix = if hit.earlier_in_block {
        ""
    } else {
        &hit.mapped.text[..hit.line.start]
    };

    // Where the kept pre-marker prose starts: Some(Some(item)) from an earlier block,
    // Some(None) from the marker block's prefix, None when everything before folds.
    let keep_from: Option<Option<usize>> = if !has_tools {
        if let Some(&first) = pre.first() {
            Some(Some(first))
        } else if !prefix.trim().is_empty() {
            Some(None)
        } else {
            None
        }
    } else if gate_report {
        None
    } else {
        pre.iter()
            .position(|&i| is_substantive(&without_markers(&item_text(t, source, &items[i]))))
            .map(|p| Some(pre[p]))
            .or_else(|| is_substantive(&without_markers(prefix)).then_some(None))
    };

    let mut blocks: Vec<usize> = Vec::new();
    let answer_start;
    let mut dup = None;
    match keep_from {
        None => answer_start = post_start,
        Some(from) => {
            match from {
                Some(first) => {
                    blocks.extend(pre.iter().copied().filter(|&i| i >= first));
                    let fi = items[first];
                    answer_start = match t.entries[fi.entry].blocks.get(fi.block).map(|b| &b.kind) {
                        Some(BlockKind::Text { text }) => first_visible(source, text.raw.clone()),
                        _ => post_start,
                    };
                }
                None => {
                    let lead = prefix.len() - prefix.trim_start().len();
                    answer_start = hit.mapped.source_offset(lead);
                }
            }
            if !prefix.trim().is_empty() {
                dup = duplicate_lead(&hit.mapped, hit.line.start, after_text);
            } else if let Some(&last_pre) = pre.last()
                && blocks.contains(&last_pre)
            {
                let lp = items[last_pre];
                if let Some(BlockKind::Text { text }) =
                    t.entries[lp.entry].blocks.get(lp.block).map(|b| &b.kind)
                {
                    let m = Mapped::new(source, text.raw.clone());
                    dup = duplicate_lead(&m, m.text.len(), after_text);
                }
            }
        }
    }
    blocks.push(hit.item);
    blocks.extend(later);
    Some(Decision {
        stray_markers: Vec::new(),
        items: blocks,
        marker: Some(Marker {
            entry: it.entry,
            block: it.block,
            span: marker_span,
            answer_start,
            duplicate_lead: dup,
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_line_shapes() {
        assert_eq!(marker_at_line_start("[[OMNISCIO_FINAL]]"), Some(18));
        assert_eq!(marker_at_line_start("  **[[OMNISCIO_FINAL]]**  "), Some(26));
        assert_eq!(marker_at_line_start("## [[AMC_FINAL]]"), Some(16));
        assert_eq!(marker_at_line_start("_[[AMC_FINAL]]_"), Some(15));
        assert_eq!(marker_at_line_start("[[OMNISCIO_FINAL]]## Ready"), Some(18));
        assert_eq!(marker_at_line_start("`[[OMNISCIO_FINAL]]`"), None);
        assert_eq!(marker_at_line_start("use [[OMNISCIO_FINAL]] here"), None);
        assert_eq!(
            marker_at_line_start("[[OMNISCIO_FINAL]] is the marker"),
            None
        );
        assert_eq!(marker_at_line_start("####### [[OMNISCIO_FINAL]]"), None);
    }

    #[test]
    fn prose_classes() {
        assert!(is_narration("Let me try the other approach:"));
        assert!(is_narration("Now let me check the tests."));
        assert!(is_narration("Checking the config:"));
        assert!(!is_narration("Let me know if you want more?"));
        assert!(!is_narration("Letme"));
        assert!(!is_narration("All tests pass."));
        assert!(is_question("Shall I merge it?"));
        assert!(is_question("Which one?\n\n1. A\n2. B"));
        assert!(is_question("**Want me to continue?**"));
        assert!(!is_question("Done."));
        assert!(is_substantive("**ALL CLEAR**"));
        assert!(is_substantive("See [the report](out/report.md)."));
        assert!(!is_substantive("Now the details:"));
        assert!(!is_substantive("Okay."));
    }
}
