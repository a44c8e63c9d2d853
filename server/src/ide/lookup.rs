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
/// step / gate indices into the transcript and analysis they were built from. Tables keyed by
/// `(entry, block)` are sorted vectors (binary search), so that [`Lookup::resume`] can keep
/// the part before an entry and rebuild only the rest.
#[derive(Debug, Clone, Default)]
pub struct Lookup {
    /// Turn index (into `Analysis::turns`) of each entry; `u32::MAX` when no turn covers it.
    turn_of_entry: Vec<u32>,
    /// Step index (into `Analysis::steps`) of each entry; `u32::MAX` when it is no step's.
    step_of_entry: Vec<u32>,
    /// `(entry, block)` of each final-answer block and its turn index, sorted.
    final_blocks: Vec<((usize, usize), usize)>,
    /// `(entry, block)` of each gate, in source order (sorted), beside its index into
    /// `Analysis::gates`.
    gate_blocks: Vec<(usize, usize)>,
    gate_ids: Vec<usize>,
    /// `(entry, block)` of each pair's tool_use, indexed by pair (sorted: pairs are in file
    /// order of their calls).
    pair_uses: Vec<(usize, usize)>,
    /// `(entry, block)` of a tool_result and the index of its pair, sorted.
    pair_results: Vec<((usize, usize), usize)>,
    /// `(entry, block)` of a sub-agent spawning call -> index into `Analysis::subagent_calls`.
    subagent_of_block: HashMap<(usize, usize), usize>,
    /// Entry index of a compaction boundary or summary -> index into `Analysis::compactions`.
    compaction_of_entry: HashMap<usize, usize>,
}

impl Lookup {
    /// Builds the tables. Indices in `analysis` that are out of range for `transcript` are
    /// ignored (never a panic).
    pub fn new(transcript: &Transcript, analysis: &Analysis) -> Lookup {
        Lookup::default().resume(transcript, analysis, 0)
    }

    /// The tables of `analysis` when it was resumed at entry `from` ([`crate::analysis::resume`]):
    /// `self`, the tables of the previous analysis, is kept for the entries before `from` (whose
    /// turns, steps, gates and pairs are unchanged) and rebuilt from there (issue 12). With
    /// `from` = 0, the same as [`Lookup::new`].
    pub fn resume(mut self, transcript: &Transcript, analysis: &Analysis, from: usize) -> Lookup {
        let n = transcript.entries.len();
        let from = from.min(self.turn_of_entry.len()).min(n);
        let first_turn = analysis.turns.partition_point(|t| t.entries.start < from);
        self.turn_of_entry.truncate(from);
        self.turn_of_entry.resize(n, NONE);
        let tail_blocks = self.final_blocks.partition_point(|&(b, _)| b.0 < from);
        self.final_blocks.truncate(tail_blocks);
        for (ti, turn) in analysis.turns.iter().enumerate().skip(first_turn) {
            let end = turn.entries.end.min(n);
            for slot in self
                .turn_of_entry
                .iter_mut()
                .take(end)
                .skip(turn.entries.start.max(from))
            {
                *slot = ti as u32;
            }
            if let Some(fa) = &turn.final_answer {
                for &b in &fa.blocks {
                    self.final_blocks.push((b, ti));
                }
            }
        }
        self.final_blocks[tail_blocks..].sort_unstable();
        self.step_of_entry.truncate(from);
        self.step_of_entry.resize(n, NONE);
        let first_step = analysis
            .steps
            .partition_point(|s| s.entries.first().is_some_and(|&f| f < from));
        for (si, step) in analysis.steps.iter().enumerate().skip(first_step) {
            for &e in &step.entries {
                if let Some(slot) = self.step_of_entry.get_mut(e) {
                    *slot = si as u32;
                }
            }
        }
        let first_gate = analysis.gates.partition_point(|g| g.entry < from);
        self.gate_blocks.truncate(first_gate);
        self.gate_ids.truncate(first_gate);
        for (gi, g) in analysis.gates.iter().enumerate().skip(first_gate) {
            self.gate_blocks.push((g.entry, g.block));
            self.gate_ids.push(gi);
        }
        let first_pair = analysis.tool_pairs.partition_point(|p| p.use_entry < from);
        self.pair_uses.truncate(first_pair);
        self.pair_uses.extend(
            analysis.tool_pairs[first_pair..]
                .iter()
                .map(|p| (p.use_entry, p.use_block)),
        );
        // Results from `from` on: those of earlier calls are unchanged (a resumed analysis
        // checked it), those of later calls are new.
        let tail = self.pair_results.partition_point(|&(r, _)| r.0 < from);
        let mut kept_tail: Vec<((usize, usize), usize)> = self.pair_results[tail..]
            .iter()
            .copied()
            .filter(|&(_, p)| p < first_pair)
            .collect();
        self.pair_results.truncate(tail);
        for (pi, p) in analysis.tool_pairs.iter().enumerate().skip(first_pair) {
            if let (Some(e), Some(b)) = (p.result_entry, p.result_block) {
                kept_tail.push(((e, b), pi));
            }
        }
        kept_tail.sort_unstable();
        self.pair_results.extend(kept_tail);
        self.subagent_of_block = analysis
            .subagent_calls
            .iter()
            .enumerate()
            .map(|(ci, c)| ((c.entry, c.block), ci))
            .collect();
        let mut compaction_of_entry = HashMap::new();
        for (ci, c) in analysis.compactions.iter().enumerate() {
            compaction_of_entry.insert(c.boundary, ci);
            if let Some(s) = c.summary {
                compaction_of_entry.insert(s, ci);
            }
        }
        self.compaction_of_entry = compaction_of_entry;
        self
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
        let i = self
            .final_blocks
            .binary_search_by_key(&(entry, block), |&(b, _)| b)
            .ok()?;
        Some(self.final_blocks[i].1)
    }

    /// Gates (indices into `Analysis::gates`) written inside the block.
    pub fn gates_in(&self, entry: usize, block: usize) -> &[usize] {
        let key = (entry, block);
        let a = self.gate_blocks.partition_point(|&b| b < key);
        let b = self.gate_blocks.partition_point(|&b| b <= key);
        &self.gate_ids[a..b]
    }

    /// The tool pair whose tool_use is this block.
    pub fn pair_of_use(&self, entry: usize, block: usize) -> Option<usize> {
        self.pair_uses.binary_search(&(entry, block)).ok()
    }

    /// The tool pair whose tool_result is this block.
    pub fn pair_of_result(&self, entry: usize, block: usize) -> Option<usize> {
        let i = self
            .pair_results
            .binary_search_by_key(&(entry, block), |&(r, _)| r)
            .ok()?;
        Some(self.pair_results[i].1)
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
/// in line order). A line inside a run of bare records is the run's entry (issue 25 item 8).
pub fn entry_at_line(transcript: &Transcript, line: usize) -> Option<usize> {
    let at = |line| {
        transcript
            .entries
            .binary_search_by_key(&line, |e: &crate::model::Entry| e.line)
            .ok()
    };
    at(line).or_else(|| at(transcript.run_at(line)?.line))
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
