//! Document symbols (the outline): turns with their prompt's first line; children for work
//! runs, the final answer, gates, compactions, sub-agent calls and steering prompts
//! (DESIGN.md §5). Plain data in line terms; `crate::lsp` converts to LSP.

use crate::analysis::Analysis;
use crate::model::Transcript;
use crate::view::View;

/// Kinds of outline entry (mapped to LSP `SymbolKind`s by `crate::lsp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SymbolKind {
    Preamble,
    Turn,
    WorkRun,
    Thought,
    FinalAnswer,
    Gate,
    Compaction,
    Subagent,
    Steering,
}

/// One outline entry. Lines are 0-based, inclusive, in the document the outline is for (the
/// raw `.jsonl` or the view).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Symbol {
    /// `Turn 3: Fix the failing test` / `Worked · 3 steps` / `Final answer` /
    /// `🔨 Build: PASS` / `Compaction 1` / `Sub-agent: Audit auth` / `↪ queued: add --json`.
    pub name: String,
    /// Figures shown beside the name (`4 comments · 6 tool calls · 2m 25s`).
    pub detail: String,
    pub kind: SymbolKind,
    pub start_line: usize,
    pub end_line: usize,
    /// The line to reveal when the entry is picked.
    pub selection_line: usize,
    pub children: Vec<Symbol>,
}

/// The outline of the raw `.jsonl` document.
pub fn raw_symbols(transcript: &Transcript, analysis: &Analysis, source: &str) -> Vec<Symbol> {
    let _ = (transcript, analysis, source);
    Vec::new()
}

/// The outline of the rendered view.
pub fn view_symbols(view: &View, analysis: &Analysis) -> Vec<Symbol> {
    let _ = (view, analysis);
    Vec::new()
}
