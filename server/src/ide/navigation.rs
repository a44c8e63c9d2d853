//! Go to definition, references and turn / gate stepping (DESIGN.md §5): tool_result <->
//! tool_use (pairs from analysis, case 23), a sub-agent call -> its transcript file (case 20),
//! a compaction -> its summariser run (`agent-acompact-*`, FORMATS.md §1.7), an inline
//! sidechain record -> the call that spawned it, a model row -> the other rows of its response
//! (case 10). Targets are model items; `crate::lsp` turns them into locations of the raw file
//! or the view.

use std::path::PathBuf;

use crate::analysis::Analysis;
use crate::ide::lookup::Lookup;
use crate::index::session_files::{compaction_files, file_for_call};
use crate::model::{BlockKind, SubagentFile, Transcript};

/// Something a navigation request points at.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "camelCase", tag = "target")]
pub enum Target {
    /// A block of an entry of the same transcript.
    Block { entry: usize, block: usize },
    /// A whole entry of the same transcript.
    Entry { entry: usize },
    /// Another transcript file (sub-agent, summariser run).
    File { path: PathBuf },
}

/// Definition targets of the item at `(entry, block)`.
pub fn definition(
    transcript: &Transcript,
    analysis: &Analysis,
    lookup: &Lookup,
    files: &[SubagentFile],
    entry: usize,
    block: Option<usize>,
) -> Vec<Target> {
    let Some(e) = transcript.entries.get(entry) else {
        return Vec::new();
    };
    if let Some(b) = block {
        match e.blocks.get(b).map(|x| &x.kind) {
            Some(BlockKind::ToolResult(_)) => {
                if let Some(p) = lookup
                    .pair_of_result(entry, b)
                    .and_then(|p| analysis.tool_pairs.get(p))
                {
                    return vec![Target::Block {
                        entry: p.use_entry,
                        block: p.use_block,
                    }];
                }
            }
            Some(BlockKind::ToolUse(_)) => {
                if let Some(c) = lookup
                    .subagent_of(entry, b)
                    .and_then(|c| analysis.subagent_calls.get(c))
                {
                    if let Some(f) = file_for_call(files, c) {
                        return vec![Target::File {
                            path: f.path.clone(),
                        }];
                    }
                    if let Some(&first) = c.sidechain_entries.first() {
                        return vec![Target::Entry { entry: first }];
                    }
                }
                if let Some(p) = lookup
                    .pair_of_use(entry, b)
                    .and_then(|p| analysis.tool_pairs.get(p))
                    && let (Some(re), Some(rb)) = (p.result_entry, p.result_block)
                {
                    return vec![Target::Block {
                        entry: re,
                        block: rb,
                    }];
                }
            }
            _ => {}
        }
    }
    if let Some(ci) = lookup.compaction_of(entry) {
        let comp = compaction_files(files);
        if comp.len() == analysis.compactions.len() && ci < comp.len() {
            return vec![Target::File {
                path: comp[ci].path.clone(),
            }];
        }
        return comp
            .into_iter()
            .map(|f| Target::File {
                path: f.path.clone(),
            })
            .collect();
    }
    if e.sidechain {
        for c in &analysis.subagent_calls {
            if c.sidechain_entries.contains(&entry) {
                return vec![Target::Block {
                    entry: c.entry,
                    block: c.block,
                }];
            }
        }
    }
    // A result record as a whole -> the call of its first result block.
    for (b, blk) in e.blocks.iter().enumerate() {
        if matches!(blk.kind, BlockKind::ToolResult(_)) && block != Some(b) {
            return definition(transcript, analysis, lookup, files, entry, Some(b));
        }
    }
    Vec::new()
}

/// References of the item at `(entry, block)`: both ends of a tool pair; every row of a model
/// response; the call and every inline record of a sub-agent. Includes the item itself.
pub fn references(
    transcript: &Transcript,
    analysis: &Analysis,
    lookup: &Lookup,
    entry: usize,
    block: Option<usize>,
) -> Vec<Target> {
    let Some(e) = transcript.entries.get(entry) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let blocks: Vec<usize> = match block {
        Some(b) => vec![b],
        None => (0..e.blocks.len()).collect(),
    };
    for b in blocks {
        let pair = lookup
            .pair_of_use(entry, b)
            .or_else(|| lookup.pair_of_result(entry, b))
            .and_then(|p| analysis.tool_pairs.get(p));
        if let Some(p) = pair {
            out.push(Target::Block {
                entry: p.use_entry,
                block: p.use_block,
            });
            if let (Some(re), Some(rb)) = (p.result_entry, p.result_block) {
                out.push(Target::Block {
                    entry: re,
                    block: rb,
                });
            }
        }
        if let Some(c) = lookup
            .subagent_of(entry, b)
            .and_then(|c| analysis.subagent_calls.get(c))
        {
            out.extend(
                c.sidechain_entries
                    .iter()
                    .map(|&x| Target::Entry { entry: x }),
            );
        }
    }
    if out.is_empty()
        && let Some(s) = lookup.step_of(entry).and_then(|s| analysis.steps.get(s))
        && s.entries.len() > 1
    {
        out.extend(s.entries.iter().map(|&x| Target::Entry { entry: x }));
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|t| seen.insert(t.clone()));
    out
}

/// Index into `lines` of the first line after `line` (for `forward`) or before it; `lines`
/// sorted ascending.
pub fn step_line(lines: &[usize], line: usize, forward: bool) -> Option<usize> {
    if forward {
        lines.iter().copied().find(|&l| l > line)
    } else {
        lines.iter().rev().copied().find(|&l| l < line)
    }
}
