//! Folding ranges (DESIGN.md §5): turns, activity (seed 000), work runs (seed 003), compaction
//! windows, sub-agent spans and abandoned branches (issue 10) on the raw `.jsonl`; the view's own regions (which add long
//! prompts, long tool output and one-line thoughts) on the rendered view. Lines are 0-based and
//! inclusive; `crate::lsp` maps kinds to LSP folding range kinds.

use crate::analysis::{Analysis, RunKind, Turn};
use crate::model::Transcript;
use crate::view::{self, RegionKind, View, words};

/// What a fold covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum FoldKind {
    Turn,
    /// Everything between the prompt and the final answer (seed 000).
    Activity,
    /// A run of tool calls / results / thinking (seed 003).
    WorkRun,
    /// A thinking-only run or one thought (seed 003).
    Thought,
    Compaction,
    Subagent,
    /// Records on a branch the session left (Pi): `abandoned branch · 18 entries`.
    AbandonedBranch,
    LongPrompt,
    LongToolOutput,
    /// History replayed from a parent thread (fork / sub-agent file, issue 9 item 4).
    Inherited,
}

impl FoldKind {
    /// Nesting rank used when a client's fold limit forces a choice: lower ranks are kept
    /// first (the editor keeps outermost folds; LSP-NOTES §5.2).
    pub fn rank(self) -> u8 {
        match self {
            FoldKind::Turn | FoldKind::Compaction | FoldKind::Inherited => 0,
            FoldKind::Activity | FoldKind::AbandonedBranch => 1,
            FoldKind::Subagent => 2,
            FoldKind::WorkRun => 3,
            FoldKind::Thought | FoldKind::LongPrompt | FoldKind::LongToolOutput => 4,
        }
    }
}

/// One foldable range. `start_line < end_line`, both 0-based and inclusive.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Fold {
    pub start_line: usize,
    pub end_line: usize,
    pub kind: FoldKind,
    /// Collapsed text, e.g. `Turn 3: Fix the test · 4 comments · 6 tool calls`,
    /// `Worked · 3 tool calls`, `Thought`, `Compaction 1 · auto · 155k tokens`.
    pub label: String,
}

/// Label of a turn fold: its outline name and its activity, `Turn 3: Fix the failing test ·
/// 4 comments · 6 tool calls` (labels shared with the view and the outline, `crate::view`);
/// the preamble is `Before the first prompt · 3 records`.
pub fn turn_label(turn: &Turn) -> String {
    view::turn_fold_label(turn)
}

/// Label of the inherited-history fold: `inherited from 019c… (3 turns)`.
pub fn inherited_label(inh: &crate::analysis::Inherited) -> String {
    view::inherited_label(inh)
}

/// Folds of the raw `.jsonl` document, sorted by start line, one per start line (the outer
/// one), without single-line ranges: [`turn_folds`] of every turn and [`document_folds`],
/// [`normalize`]d together.
pub fn raw_folds(transcript: &Transcript, analysis: &Analysis) -> Vec<Fold> {
    let mut out = Vec::new();
    for turn in &analysis.turns {
        out.extend(turn_folds(transcript, turn));
    }
    out.extend(document_folds(analysis));
    normalize(out)
}

/// The folds one turn makes by itself, in the order [`raw_folds`] takes them: the turn, its
/// activity (seed 000), its work runs and thoughts (seed 003). They start within the turn's
/// lines, and depend on nothing but the turn and the lines of its records (issue 12: an
/// append leaves the folds of the turns it did not change as they were).
pub fn turn_folds(transcript: &Transcript, turn: &Turn) -> Vec<Fold> {
    let entries = &transcript.entries;
    let line_of = |e: usize| entries.get(e).map(|x| x.line);
    let mut out = vec![Fold {
        start_line: turn.start_line,
        end_line: turn.end_line,
        kind: FoldKind::Turn,
        label: turn_label(turn),
    }];
    if let Some(act) = &turn.activity
        && act.end > act.start
        && let (Some(s), Some(e)) = (line_of(act.start), line_of(act.end - 1))
    {
        let e = transcript.last_line(e);
        out.push(Fold {
            start_line: s,
            end_line: e,
            kind: FoldKind::Activity,
            label: words::activity(turn.comments, turn.tool_calls),
        });
    }
    for run in &turn.runs {
        let kind = match run.kind {
            RunKind::Prose => continue,
            RunKind::Work => FoldKind::WorkRun,
            RunKind::Thought => FoldKind::Thought,
        };
        out.push(Fold {
            start_line: run.start_line,
            end_line: run.end_line,
            kind,
            label: view::run_label(run),
        });
    }
    out
}

/// The folds of the raw document that belong to no one turn, in the order [`raw_folds`]
/// takes them: inherited history, compaction windows, abandoned branches, sub-agent spans.
pub fn document_folds(analysis: &Analysis) -> Vec<Fold> {
    let mut out = Vec::new();
    for inh in &analysis.inherited {
        out.push(Fold {
            start_line: inh.start_line,
            end_line: inh.end_line,
            kind: FoldKind::Inherited,
            label: inherited_label(inh),
        });
    }
    for c in &analysis.compactions {
        out.push(Fold {
            start_line: c.start_line,
            end_line: c.end_line,
            kind: FoldKind::Compaction,
            label: view::compaction_label(c),
        });
    }
    for b in &analysis.branches {
        out.push(Fold {
            start_line: b.start_line,
            end_line: b.end_line,
            kind: FoldKind::AbandonedBranch,
            label: view::branch_label(b),
        });
    }
    for call in &analysis.subagent_calls {
        out.push(Fold {
            start_line: call.start_line,
            end_line: call.end_line,
            kind: FoldKind::Subagent,
            label: subagent_label(call),
        });
    }
    out
}

/// `Sub-agent: Audit auth (a111)`.
pub fn subagent_label(call: &crate::analysis::SubagentCall) -> String {
    let name = view::subagent_label(call);
    match (&call.agent_id, &call.description) {
        (Some(id), Some(d)) if !d.trim().is_empty() => format!("{name} ({id})"),
        _ => name,
    }
}

/// Folds of the rendered view: its regions, as they are.
pub fn view_folds(view: &View) -> Vec<Fold> {
    let out = view
        .regions
        .iter()
        .map(|r| Fold {
            start_line: r.start_line,
            end_line: r.end_line,
            kind: match r.kind {
                RegionKind::Turn => FoldKind::Turn,
                RegionKind::Activity => FoldKind::Activity,
                RegionKind::WorkRun => FoldKind::WorkRun,
                RegionKind::Thought => FoldKind::Thought,
                RegionKind::LongPrompt => FoldKind::LongPrompt,
                RegionKind::LongToolOutput => FoldKind::LongToolOutput,
                RegionKind::Compaction => FoldKind::Compaction,
                RegionKind::Subagent => FoldKind::Subagent,
                RegionKind::AbandonedBranch => FoldKind::AbandonedBranch,
            },
            label: r.label.clone(),
        })
        .collect();
    normalize(out)
}

/// Sorts by `(start asc, end desc, rank)`, drops single-line ranges and keeps one fold per
/// start line: the outermost (the longest; on equal spans the outer kind). Editors show one
/// collapsed text per start line (Neovim's `vim.lsp.foldtext()` takes the last range's, VS
/// Code keeps the first range), so an inner fold sharing its first line with an outer one would
/// put its label on the outer fold: a turn's activity labelled `Worked · 1 tool call` (issue 11).
///
/// Each fold's place depends only on folds with the same start line: the normalised folds
/// starting in a range of lines are the normalised folds of those starting there (what a
/// per-turn cache relies on, `crate::lsp::handlers::folding`).
pub fn normalize(mut folds: Vec<Fold>) -> Vec<Fold> {
    folds.retain(|f| f.start_line < f.end_line);
    folds.sort_by(|a, b| {
        a.start_line
            .cmp(&b.start_line)
            .then(b.end_line.cmp(&a.end_line))
            .then(a.kind.rank().cmp(&b.kind.rank()))
    });
    folds.dedup_by(|b, a| a.start_line == b.start_line);
    folds
}

/// Keeps at most `limit` folds, preferring outer kinds (turns and compactions, then activity,
/// sub-agents, work runs, thoughts), and returns them in start order. Editors cap folding
/// ranges (VS Code sends `rangeLimit: 5000`).
pub fn limit_folds(folds: Vec<Fold>, limit: usize) -> Vec<Fold> {
    if folds.len() <= limit {
        return folds;
    }
    let mut indexed: Vec<(usize, Fold)> = folds.into_iter().enumerate().collect();
    indexed.sort_by_key(|(i, f)| (f.kind.rank(), *i));
    indexed.truncate(limit);
    indexed.sort_by_key(|(i, _)| *i);
    indexed.into_iter().map(|(_, f)| f).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fold(s: usize, e: usize, kind: FoldKind) -> Fold {
        Fold {
            start_line: s,
            end_line: e,
            kind,
            label: String::new(),
        }
    }

    #[test]
    fn normalize_orders_outer_first_and_keeps_one_fold_per_start_line() {
        let got = normalize(vec![
            fold(3, 5, FoldKind::WorkRun),
            fold(1, 4, FoldKind::WorkRun),
            fold(1, 9, FoldKind::Activity),
            fold(0, 9, FoldKind::Turn),
            fold(1, 9, FoldKind::WorkRun),
            fold(7, 7, FoldKind::Thought),
        ]);
        let kinds: Vec<(usize, usize, FoldKind)> = got
            .iter()
            .map(|f| (f.start_line, f.end_line, f.kind))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (0, 9, FoldKind::Turn),
                (1, 9, FoldKind::Activity),
                (3, 5, FoldKind::WorkRun)
            ]
        );
    }

    #[test]
    fn limit_keeps_outer_kinds() {
        let got = limit_folds(
            vec![
                fold(0, 9, FoldKind::Turn),
                fold(1, 4, FoldKind::WorkRun),
                fold(5, 8, FoldKind::Activity),
                fold(10, 20, FoldKind::Turn),
            ],
            3,
        );
        let starts: Vec<usize> = got.iter().map(|f| f.start_line).collect();
        assert_eq!(starts, vec![0, 5, 10]);
    }
}
