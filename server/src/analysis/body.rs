//! A turn's body as a flat list of items, and its split into runs (seed 003).

use super::{Run, RunKind, text};
use crate::model::{BlockKind, Role, Transcript};

/// Tool names that only keep the agent's to-do list (seed 000 R-QW-FINAL "bookkeeping tools":
/// TodoWrite / TaskCreate / TaskUpdate; Codex `update_plan` is the same kind of call).
pub const BOOKKEEPING_TOOLS: &[&str] = &["TodoWrite", "TaskCreate", "TaskUpdate", "update_plan"];

/// What one block of a turn body is, for the run split and the final-answer walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    /// Non-blank agent text.
    Prose,
    /// Non-empty thinking.
    Thinking,
    /// Empty thinking (Opus 4.7 keeps only a signature; encrypted Codex reasoning): a `Thought`
    /// where it stands alone or next to work, but it never splits prose (seed 003 split
    /// ignores it between two prose items).
    EmptyThinking,
    /// The text of a synthetic API-error response (`StepInfo::api_error`): not agent prose.
    /// Work for the run split; it ends the final-answer walk (a failed response is no answer,
    /// seed 004 "a definitive failure revokes that response's completion marker").
    Error,
    /// A tool call; `bookkeeping` for [`BOOKKEEPING_TOOLS`].
    ToolUse { bookkeeping: bool },
    /// A block of a tool-result record.
    ToolResult,
    /// Blank text, images and unknown blocks of model records: kept in the run they fall in,
    /// but they never start or break a run (seed 003 split ignores them).
    Neutral,
}

/// One block of the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Item {
    pub entry: usize,
    pub block: usize,
    pub kind: ItemKind,
}

/// The body items of the entries `range` (main thread only: `main(i)`), skipping the opener.
/// Model records give text / thinking / tool_use items; tool-result records give result items;
/// every other role (steering, meta, local commands, interruptions, compaction records) is not
/// part of the body and does not break it.
pub fn items(
    t: &Transcript,
    source: &str,
    range: std::ops::Range<usize>,
    main: &impl Fn(usize) -> bool,
) -> Vec<Item> {
    let mut out = Vec::new();
    for i in range {
        let e = &t.entries[i];
        if !main(i) {
            continue;
        }
        match e.role {
            Role::Model => {
                let api_error = e.step.as_ref().is_some_and(|s| s.api_error.is_some());
                for (b, block) in e.blocks.iter().enumerate() {
                    let kind = match &block.kind {
                        BlockKind::Text { text } => {
                            if text::raw_is_blank(source.get(text.raw.clone()).unwrap_or("")) {
                                ItemKind::Neutral
                            } else if api_error {
                                ItemKind::Error
                            } else {
                                ItemKind::Prose
                            }
                        }
                        BlockKind::Thinking { text, .. } => {
                            if text::raw_is_blank(source.get(text.raw.clone()).unwrap_or("")) {
                                ItemKind::EmptyThinking
                            } else {
                                ItemKind::Thinking
                            }
                        }
                        BlockKind::ToolUse(u) => ItemKind::ToolUse {
                            bookkeeping: BOOKKEEPING_TOOLS.contains(&&*u.name),
                        },
                        BlockKind::ToolResult(_) => ItemKind::ToolResult,
                        BlockKind::Image { .. } | BlockKind::Other { .. } => ItemKind::Neutral,
                    };
                    out.push(Item {
                        entry: i,
                        block: b,
                        kind,
                    });
                }
            }
            Role::ToolResults => {
                for b in 0..e.blocks.len() {
                    out.push(Item {
                        entry: i,
                        block: b,
                        kind: ItemKind::ToolResult,
                    });
                }
            }
            _ => {}
        }
    }
    out
}

/// Which side of the split each item is on: `Some(true)` prose, `Some(false)` work, `None`
/// for neutral items (and empty thinking between two prose items).
fn sides(items: &[Item]) -> Vec<Option<bool>> {
    let base = |k: ItemKind| match k {
        ItemKind::Prose => Some(true),
        ItemKind::Neutral | ItemKind::EmptyThinking => None,
        _ => Some(false),
    };
    let mut out: Vec<Option<bool>> = items.iter().map(|i| base(i.kind)).collect();
    // Previous decided side for each position, then resolve empty thinking with the next one.
    let mut prev = None;
    let mut prev_of = vec![None; items.len()];
    for (i, s) in out.iter().enumerate() {
        prev_of[i] = prev;
        if s.is_some() {
            prev = *s;
        }
    }
    let mut next = None;
    for i in (0..items.len()).rev() {
        if items[i].kind == ItemKind::EmptyThinking {
            let between_prose = prev_of[i] == Some(true) && next == Some(true);
            out[i] = if between_prose { None } else { Some(false) };
        } else if out[i].is_some() {
            next = out[i];
        }
    }
    out
}

/// Cuts the items into maximal runs of work (tool calls, tool results, thinking) and prose
/// (seed 003: `chunk_by(interim(a) == interim(b))`). Neutral items join the run they fall in
/// (leading ones join the first run, so nothing of the body is left out of a run). A work run
/// holding only thinking is [`RunKind::Thought`]. `entry_step` maps entries to step indices
/// for [`Run::steps`] (a model record without a step counts as a step of its own).
pub fn runs(t: &Transcript, items: &[Item], entry_step: &super::steps::EntrySteps) -> Vec<Run> {
    // (is_prose, item indices)
    let mut groups: Vec<(bool, Vec<usize>)> = Vec::new();
    let mut pending: Vec<usize> = Vec::new();
    let sides = sides(items);
    for (ix, side) in sides.iter().enumerate() {
        match *side {
            None => match groups.last_mut() {
                Some(g) => g.1.push(ix),
                None => pending.push(ix),
            },
            Some(p) => match groups.last_mut() {
                Some(g) if g.0 == p => g.1.push(ix),
                _ => {
                    let mut v = std::mem::take(&mut pending);
                    v.push(ix);
                    groups.push((p, v));
                }
            },
        }
    }
    // A body of neutral items only (e.g. one signature-only thinking block) has no run.
    let mut out = Vec::with_capacity(groups.len());
    for (prose, ixs) in groups {
        let kind = if prose {
            RunKind::Prose
        } else if ixs.iter().all(|&i| {
            matches!(
                items[i].kind,
                ItemKind::Thinking | ItemKind::EmptyThinking | ItemKind::Neutral
            )
        }) {
            RunKind::Thought
        } else {
            RunKind::Work
        };
        let mut steps: Vec<usize> = Vec::new();
        let mut stepless = 0u32;
        let mut last_stepless_entry = usize::MAX;
        let mut tool_calls = 0;
        for &i in &ixs {
            let it = items[i];
            if t.entries[it.entry].role == Role::Model {
                match entry_step.get(it.entry) {
                    Some(s) => steps.push(s),
                    None => {
                        if last_stepless_entry != it.entry {
                            stepless += 1;
                            last_stepless_entry = it.entry;
                        }
                    }
                }
            }
            if matches!(it.kind, ItemKind::ToolUse { .. }) {
                tool_calls += 1;
            }
        }
        steps.sort_unstable();
        steps.dedup();
        let first = items[ixs[0]].entry;
        let last = items[*ixs.last().unwrap_or(&ixs[0])].entry;
        out.push(Run {
            kind,
            blocks: ixs
                .iter()
                .map(|&i| (items[i].entry, items[i].block))
                .collect(),
            start_line: t.entries[first].line,
            end_line: t.last_line(t.entries[last].line),
            steps: steps.len() as u32 + stepless,
            tool_calls,
        });
    }
    out
}
