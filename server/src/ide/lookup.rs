//! Indexes over one analysed transcript that every feature needs: which turn an entry belongs
//! to, which blocks form a final answer, which gates sit in a block, which tool_use answers a
//! tool_result. Built once per document version in O(entries + blocks) and shared by the
//! feature modules. Plain data; no LSP types.

use std::collections::HashMap;

use crate::analysis::{Analysis, TurnState};
use crate::model::{BlockKind, Entry, Span, Transcript};

/// Sentinel for "no turn" / "no step" in the per-entry tables.
const NONE: u32 = u32::MAX;

/// Lookup tables for one `(Transcript, Analysis)` pair. Indices are entry / block / turn /
/// step / gate indices into the transcript and analysis they were built from.
#[derive(Debug, Clone, Default)]
pub struct Lookup {
    /// Turn index (into `Analysis::turns`) of each entry; `u32::MAX` when no turn covers it.
    turn_of_entry: Vec<u32>,
    /// Step index (into `Analysis::steps`) of each entry; `u32::MAX` when it is no step's.
    step_of_entry: Vec<u32>,
    /// `(entry, block)` of each final-answer block -> the turn index.
    final_blocks: HashMap<(usize, usize), usize>,
    /// `(entry, block)` -> indices into `Analysis::gates`, in source order.
    gates_by_block: HashMap<(usize, usize), Vec<usize>>,
    /// `(entry, block)` of a tool_use -> index into `Analysis::tool_pairs`.
    pair_of_use: HashMap<(usize, usize), usize>,
    /// `(entry, block)` of a tool_result -> index into `Analysis::tool_pairs`.
    pair_of_result: HashMap<(usize, usize), usize>,
    /// `(entry, block)` of a sub-agent spawning call -> index into `Analysis::subagent_calls`.
    subagent_of_block: HashMap<(usize, usize), usize>,
    /// Entry index of a compaction boundary or summary -> index into `Analysis::compactions`.
    compaction_of_entry: HashMap<usize, usize>,
}

impl Lookup {
    /// Builds the tables. Indices in `analysis` that are out of range for `transcript` are
    /// ignored (never a panic).
    pub fn new(transcript: &Transcript, analysis: &Analysis) -> Lookup {
        let n = transcript.entries.len();
        let mut turn_of_entry = vec![NONE; n];
        let mut final_blocks = HashMap::new();
        for (ti, turn) in analysis.turns.iter().enumerate() {
            let end = turn.entries.end.min(n);
            for slot in turn_of_entry.iter_mut().take(end).skip(turn.entries.start) {
                *slot = ti as u32;
            }
            if let Some(fa) = &turn.final_answer {
                for &b in &fa.blocks {
                    final_blocks.insert(b, ti);
                }
            }
        }
        let mut step_of_entry = vec![NONE; n];
        for (si, step) in analysis.steps.iter().enumerate() {
            for &e in &step.entries {
                if let Some(slot) = step_of_entry.get_mut(e) {
                    *slot = si as u32;
                }
            }
        }
        let mut gates_by_block: HashMap<(usize, usize), Vec<usize>> = HashMap::new();
        for (gi, g) in analysis.gates.iter().enumerate() {
            gates_by_block
                .entry((g.entry, g.block))
                .or_default()
                .push(gi);
        }
        let mut pair_of_use = HashMap::new();
        let mut pair_of_result = HashMap::new();
        for (pi, p) in analysis.tool_pairs.iter().enumerate() {
            pair_of_use.insert((p.use_entry, p.use_block), pi);
            if let (Some(e), Some(b)) = (p.result_entry, p.result_block) {
                pair_of_result.insert((e, b), pi);
            }
        }
        let mut subagent_of_block = HashMap::new();
        for (ci, c) in analysis.subagent_calls.iter().enumerate() {
            subagent_of_block.insert((c.entry, c.block), ci);
        }
        let mut compaction_of_entry = HashMap::new();
        for (ci, c) in analysis.compactions.iter().enumerate() {
            compaction_of_entry.insert(c.boundary, ci);
            if let Some(s) = c.summary {
                compaction_of_entry.insert(s, ci);
            }
        }
        Lookup {
            turn_of_entry,
            step_of_entry,
            final_blocks,
            gates_by_block,
            pair_of_use,
            pair_of_result,
            subagent_of_block,
            compaction_of_entry,
        }
    }

    /// Turn index of an entry.
    pub fn turn_of(&self, entry: usize) -> Option<usize> {
        match self.turn_of_entry.get(entry) {
            Some(&t) if t != NONE => Some(t as usize),
            _ => None,
        }
    }

    /// Step index of an entry.
    pub fn step_of(&self, entry: usize) -> Option<usize> {
        match self.step_of_entry.get(entry) {
            Some(&s) if s != NONE => Some(s as usize),
            _ => None,
        }
    }

    /// The turn index when `(entry, block)` is part of that turn's final answer.
    pub fn final_answer_turn(&self, entry: usize, block: usize) -> Option<usize> {
        self.final_blocks.get(&(entry, block)).copied()
    }

    /// Gates (indices into `Analysis::gates`) written inside the block.
    pub fn gates_in(&self, entry: usize, block: usize) -> &[usize] {
        self.gates_by_block
            .get(&(entry, block))
            .map_or(&[], |v| v.as_slice())
    }

    /// The tool pair whose tool_use is this block.
    pub fn pair_of_use(&self, entry: usize, block: usize) -> Option<usize> {
        self.pair_of_use.get(&(entry, block)).copied()
    }

    /// The tool pair whose tool_result is this block.
    pub fn pair_of_result(&self, entry: usize, block: usize) -> Option<usize> {
        self.pair_of_result.get(&(entry, block)).copied()
    }

    /// The sub-agent call spawned by this tool_use block.
    pub fn subagent_of(&self, entry: usize, block: usize) -> Option<usize> {
        self.subagent_of_block.get(&(entry, block)).copied()
    }

    /// The compaction whose boundary or summary is this entry.
    pub fn compaction_of(&self, entry: usize) -> Option<usize> {
        self.compaction_of_entry.get(&entry).copied()
    }

    /// True when the entry's turn is in flight (last turn of a growing file, no completion
    /// evidence yet; seed 004).
    pub fn in_flight(&self, analysis: &Analysis, entry: usize) -> bool {
        self.turn_of(entry)
            .and_then(|t| analysis.turns.get(t))
            .is_some_and(|t| t.state == TurnState::InFlight)
    }
}

/// Index of the entry on a 0-based source line, by binary search over the entries (which are
/// in line order).
pub fn entry_at_line(transcript: &Transcript, line: usize) -> Option<usize> {
    transcript
        .entries
        .binary_search_by_key(&line, |e| e.line)
        .ok()
}

/// The block of `entry` whose span contains the byte `offset` (or ends exactly at it).
pub fn block_at_offset(entry: &Entry, offset: usize) -> Option<usize> {
    entry
        .blocks
        .iter()
        .position(|b| b.span.start <= offset && offset <= b.span.end)
}

/// Finds the raw span of the string value of key `"name"` inside `block_span`, outside
/// `skip` (the tool input, which may have its own `name` key). Used to put the `toolName`
/// token on the tool name in a raw `.jsonl` line. Returns a span of the literal's contents
/// (between the quotes).
pub fn find_string_value(source: &str, block_span: &Span, key: &str, skip: &Span) -> Option<Span> {
    let hay = source.get(block_span.clone())?.as_bytes();
    let needle = format!("\"{key}\"");
    let finder = memchr::memmem::Finder::new(needle.as_bytes());
    let mut from = 0;
    while let Some(i) = finder.find(&hay[from..]) {
        let at = from + i;
        from = at + needle.len();
        let abs = block_span.start + at;
        if abs >= skip.start && abs < skip.end {
            continue;
        }
        let mut j = from;
        while j < hay.len() && hay[j].is_ascii_whitespace() {
            j += 1;
        }
        if hay.get(j) != Some(&b':') {
            continue;
        }
        j += 1;
        while j < hay.len() && hay[j].is_ascii_whitespace() {
            j += 1;
        }
        if hay.get(j) != Some(&b'"') {
            continue;
        }
        let start = j + 1;
        let end = string_end(hay, start)?;
        return Some(block_span.start + start..block_span.start + end);
    }
    None
}

/// Given `bytes[start..]` inside a JSON string literal (just after its opening quote), the
/// index of its closing quote.
pub fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start;
    loop {
        let q = memchr::memchr2(b'"', b'\\', bytes.get(i..)?)?;
        let at = i + q;
        if bytes[at] == b'\\' {
            i = at + 2;
            continue;
        }
        return Some(at);
    }
}

/// Raw spans (literal contents) of every `"text": "…"` string inside `span` (a tool result's
/// content array), in order, at most `max` of them. Never returns base64 `data` payloads.
pub fn text_strings_in(source: &str, span: &Span, max: usize) -> Vec<Span> {
    let mut out = Vec::new();
    let Some(hay) = source.get(span.clone()) else {
        return out;
    };
    let hay = hay.as_bytes();
    let finder = memchr::memmem::Finder::new(b"\"text\"");
    let mut from = 0;
    while out.len() < max {
        let Some(i) = finder.find(&hay[from..]) else {
            break;
        };
        let mut j = from + i + 6;
        from = j;
        while j < hay.len() && hay[j].is_ascii_whitespace() {
            j += 1;
        }
        if hay.get(j) != Some(&b':') {
            continue;
        }
        j += 1;
        while j < hay.len() && hay[j].is_ascii_whitespace() {
            j += 1;
        }
        if hay.get(j) != Some(&b'"') {
            continue;
        }
        let start = j + 1;
        let Some(end) = string_end(hay, start) else {
            break;
        };
        out.push(span.start + start..span.start + end);
        from = end + 1;
    }
    out
}

/// True when the block is a prose-like block with a text string (`Text` or non-empty
/// `Thinking`).
pub fn block_text(kind: &BlockKind) -> Option<&crate::model::Str> {
    match kind {
        BlockKind::Text { text } => Some(text),
        BlockKind::Thinking { text, .. } if !text.is_empty() => Some(text),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_tool_name_outside_input() {
        let src = r#"{"type":"tool_use","id":"t1","input":{"name":"inner"},"name":"Bash"}"#;
        let input_at = src.find(r#"{"name""#).unwrap();
        let input = input_at..input_at + r#"{"name":"inner"}"#.len();
        let span = find_string_value(src, &(0..src.len()), "name", &input).unwrap();
        assert_eq!(&src[span], "Bash");
    }

    #[test]
    fn finds_text_strings_with_escapes() {
        let src = r#"[{"type":"text","text":"a \"q\" b"},{"type":"image","source":{"data":"QUJD"}},{"type":"text", "text" : "two"}]"#;
        let spans = text_strings_in(src, &(0..src.len()), 10);
        let got: Vec<&str> = spans.iter().map(|s| &src[s.clone()]).collect();
        assert_eq!(got, vec![r#"a \"q\" b"#, "two"]);
    }
}
