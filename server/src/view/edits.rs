//! File edits of a transcript for the editors' own diff (issue 11, item 3): every tool call
//! that edits a file (Claude Code `Edit`, `MultiEdit`, `Write`, `NotebookEdit`; Codex
//! `apply_patch` and any call whose input is a patch), with its counts and whether it was
//! applied, and the two sides of its change ([`crate::view::diff::edit_sides`]). Plain data:
//! `crate::lsp` names the sides by `transcript:` URIs and puts a `Show diff` code lens on each
//! call.

use crate::analysis::Analysis;
use crate::model::{BlockKind, Transcript};
use crate::view::diff::{self, EditSides};

/// One file-editing tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditCall {
    /// Entry and block index of the `tool_use` block.
    pub entry: usize,
    pub block: usize,
    /// How URIs name the call: the tool call's id (`toolu_…`, Codex `call_…`) when it has
    /// one, else `@<entry>.<block>`.
    pub call: String,
    /// Tool name as written (`Edit`, `apply_patch`).
    pub name: String,
    /// The first file it touches, as written in the input.
    pub path: String,
    /// Added and removed lines of its diff.
    pub added: usize,
    pub removed: usize,
    /// `Some(true)` when its result is not an error, `Some(false)` when it is (rejected,
    /// failed), `None` when no result is recorded.
    pub applied: Option<bool>,
}

impl EditCall {
    /// The code lens title: `Show diff · +3 −1`, `Show diff · +3 −1 (not applied)`,
    /// `Show diff · +3 −1 (no result)`.
    pub fn lens_title(&self) -> String {
        let counts = format!("+{} −{}", self.added, self.removed);
        match self.applied {
            Some(true) => format!("Show diff · {counts}"),
            Some(false) => format!("Show diff · {counts} (not applied)"),
            None => format!("Show diff · {counts} (no result)"),
        }
    }

    /// The title of the editor's diff: `a.rs · Edit (before ↔ after)`, the path shortened to
    /// its last two components.
    pub fn diff_title(&self) -> String {
        let short: Vec<&str> = self.path.rsplit('/').take(2).collect();
        let short: Vec<&str> = short.into_iter().rev().collect();
        let mut t = format!("{} · {} (before ↔ after)", short.join("/"), self.name);
        if self.applied == Some(false) {
            t.push_str(" · not applied");
        }
        t
    }
}

/// Every file-editing tool call of the transcript, in file order (sidechains included).
pub fn edit_calls(t: &Transcript, a: &Analysis, src: &str) -> Vec<EditCall> {
    edit_calls_in(t, src, 0..t.entries.len(), &|e, b| {
        crate::view::changes::pair_result(a, e, b)
    })
}

/// The file-editing tool calls of the entries `range`; `result_of(entry, block)` gives the
/// `(entry, block)` of a call's `tool_result` (`Analysis::tool_pairs`).
pub fn edit_calls_in(
    t: &Transcript,
    src: &str,
    range: std::ops::Range<usize>,
    result_of: &dyn Fn(usize, usize) -> Option<(usize, usize)>,
) -> Vec<EditCall> {
    let mut out = Vec::new();
    let end = range.end.min(t.entries.len());
    for ei in range.start.min(end)..end {
        let e = &t.entries[ei];
        for (bi, b) in e.blocks.iter().enumerate() {
            let BlockKind::ToolUse(u) = &b.kind else {
                continue;
            };
            let Some(raw) = src.get(u.input.clone()) else {
                continue;
            };
            if !diff::is_edit_call(&u.name, raw) {
                continue;
            }
            let Some(input) = diff::call_input(src, u) else {
                continue;
            };
            let Some(d) = diff::edit_diff(&u.name, &input) else {
                continue;
            };
            let applied = result_of(ei, bi).map(|(re, rb)| {
                !matches!(
                    t.entries.get(re).and_then(|x| x.blocks.get(rb)).map(|x| &x.kind),
                    Some(BlockKind::ToolResult(r)) if r.is_error
                )
            });
            out.push(EditCall {
                entry: ei,
                block: bi,
                call: if u.id.is_empty() {
                    format!("@{ei}.{bi}")
                } else {
                    u.id.to_string()
                },
                name: u.name.to_string(),
                path: d.files.first().cloned().unwrap_or_default(),
                added: d.added,
                removed: d.removed,
                applied,
            });
        }
    }
    out
}

/// The edit call shown at `(entry, block)`: that block when it is one, else (no block, or a
/// block of the same record that is not an edit) the record's first edit call.
pub fn edit_at(calls: &[EditCall], entry: usize, block: Option<usize>) -> Option<&EditCall> {
    block
        .and_then(|b| calls.iter().find(|c| c.entry == entry && c.block == b))
        .or_else(|| calls.iter().find(|c| c.entry == entry))
}

/// The edit call a URI names by [`EditCall::call`].
pub fn find<'a>(calls: &'a [EditCall], call: &str) -> Option<&'a EditCall> {
    calls.iter().find(|c| c.call == call)
}

/// The two sides of an edit call's change.
pub fn sides(t: &Transcript, src: &str, c: &EditCall) -> Option<EditSides> {
    let BlockKind::ToolUse(u) = &t.entries.get(c.entry)?.blocks.get(c.block)?.kind else {
        return None;
    };
    diff::edit_sides(&u.name, &diff::call_input(src, u)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles() {
        let mut c = EditCall {
            entry: 3,
            block: 0,
            call: "toolu_1".into(),
            name: "Edit".into(),
            path: "/home/me/app/src/auth.rs".into(),
            added: 3,
            removed: 1,
            applied: Some(true),
        };
        assert_eq!(c.lens_title(), "Show diff · +3 −1");
        assert_eq!(c.diff_title(), "src/auth.rs · Edit (before ↔ after)");
        c.applied = Some(false);
        c.path = "a.rs".into();
        assert_eq!(c.lens_title(), "Show diff · +3 −1 (not applied)");
        assert_eq!(c.diff_title(), "a.rs · Edit (before ↔ after) · not applied");
        c.applied = None;
        assert_eq!(c.lens_title(), "Show diff · +3 −1 (no result)");
    }
}
