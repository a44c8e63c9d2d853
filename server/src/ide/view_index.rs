//! Where things of the model appear in the rendered view: the first view line showing an
//! entry or a block, the line of each gate, each turn heading. Built once per rendered view
//! from its source map (`View::lines`, `View::spans`, `View::anchors`).

use std::collections::HashMap;

use crate::analysis::Analysis;
use crate::view::{Origin, SpanKind, View};

/// Lookup tables from model items to view lines (0-based).
#[derive(Debug, Clone, Default)]
pub struct ViewIndex {
    /// Byte offset of each line start in `View::text`.
    pub line_starts: Vec<usize>,
    entry_first: HashMap<usize, usize>,
    block_first: HashMap<(usize, usize), usize>,
    /// Lines holding a gate span, per `(entry, block)`, in order.
    gate_lines: HashMap<(usize, usize), Vec<usize>>,
    /// The first line of each `(entry, block)` holding a tool name span.
    tool_lines: HashMap<(usize, usize), usize>,
    /// Turn number -> heading line.
    turn_heading: HashMap<usize, usize>,
}

impl ViewIndex {
    pub fn new(view: &View) -> ViewIndex {
        let mut line_starts = vec![0];
        for i in memchr::memchr_iter(b'\n', view.text.as_bytes()) {
            if i + 1 < view.text.len() {
                line_starts.push(i + 1);
            }
        }
        let mut entry_first = HashMap::new();
        let mut block_first = HashMap::new();
        for (i, l) in view.lines.iter().enumerate() {
            if let Origin::Entry { entry, block, .. } = &l.origin {
                entry_first.entry(*entry).or_insert(i);
                if let Some(b) = block {
                    block_first.entry((*entry, *b)).or_insert(i);
                }
            }
        }
        let mut gate_lines: HashMap<(usize, usize), Vec<usize>> = HashMap::new();
        for s in view.spans.iter().filter(|s| s.kind == SpanKind::Gate) {
            if let Some(Origin::Entry {
                entry,
                block: Some(b),
                ..
            }) = view.lines.get(s.line).map(|l| &l.origin)
            {
                let v = gate_lines.entry((*entry, *b)).or_default();
                if v.last() != Some(&s.line) {
                    v.push(s.line);
                }
            }
        }
        let mut tool_lines = HashMap::new();
        for s in view.spans.iter().filter(|s| s.kind == SpanKind::ToolName) {
            if let Some(Origin::Entry {
                entry,
                block: Some(b),
                ..
            }) = view.lines.get(s.line).map(|l| &l.origin)
            {
                tool_lines.entry((*entry, *b)).or_insert(s.line);
            }
        }
        let turn_heading = view
            .anchors
            .iter()
            .filter(|a| a.child.is_none())
            .map(|a| (a.turn, a.line))
            .collect();
        ViewIndex {
            line_starts,
            entry_first,
            block_first,
            gate_lines,
            tool_lines,
            turn_heading,
        }
    }

    /// First view line showing the entry.
    pub fn line_of_entry(&self, entry: usize) -> Option<usize> {
        self.entry_first.get(&entry).copied()
    }

    /// First view line showing the block (or, failing that, its entry).
    pub fn line_of_block(&self, entry: usize, block: usize) -> Option<usize> {
        self.block_first
            .get(&(entry, block))
            .copied()
            .or_else(|| self.line_of_entry(entry))
    }

    /// The view line of a tool call's own line (`⚙ Edit  src/a.rs  → …`: the first line of
    /// the block holding its tool name; a work run's header also shows its first block, so
    /// [`Self::line_of_block`] may give the header).
    pub fn line_of_tool_call(&self, entry: usize, block: usize) -> Option<usize> {
        self.tool_lines.get(&(entry, block)).copied()
    }

    /// The view line of gate `g` (index into `Analysis::gates`): the k-th gate line of its
    /// block, k being the gate's rank among the block's gates; else its block's first line.
    pub fn line_of_gate(&self, analysis: &Analysis, g: usize) -> Option<usize> {
        let gate = analysis.gates.get(g)?;
        let rank = analysis.gates[..g]
            .iter()
            .filter(|o| o.entry == gate.entry && o.block == gate.block)
            .count();
        self.gate_lines
            .get(&(gate.entry, gate.block))
            .and_then(|v| v.get(rank).copied())
            .or_else(|| self.line_of_block(gate.entry, gate.block))
    }

    /// The heading line of turn number `n`.
    pub fn turn_heading(&self, n: usize) -> Option<usize> {
        self.turn_heading.get(&n).copied()
    }

    /// Number of lines of the view text.
    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }
}
