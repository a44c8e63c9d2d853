//! What the agent changed (issue 22, item 1): per turn, the files its tool calls created,
//! changed or deleted, each with its net change over the turn, `+added −removed` line counts
//! and the calls it came from; and the commits it made (item 6).
//!
//! Sources, per call ([`crate::view::edits::edit_calls`] finds them):
//!
//! * Claude Code `Edit` / `MultiEdit` / `Write` / `NotebookEdit`: the input's texts, and where
//!   the result record carries them, `toolUseResult.originalFile` (`originalFileContents` for
//!   `MultiEdit`; the whole file before the call), `toolUseResult.type` (`create` / `update`
//!   for `Write`) and `toolUseResult.structuredPatch` (hunks with real line numbers).
//! * Codex `apply_patch` (the tool, a `function_call` holding `input`, the legacy `shell`
//!   form): each `*** Add/Update/Delete File` of the patch; `event_msg/patch_apply_end` says
//!   whether it applied (`success`) and gives its absolute paths (`changes` keys).
//! * Pi `edit` / `write`, Copilot CLI `edit` / `create` (`old_str` / `new_str` /
//!   `file_text`).
//!
//! A call whose result is an error (rejected, failed), or whose `patch_apply_end` says
//! `success: false`, changes nothing: it is listed in [`TurnChanges::not_applied`].
//!
//! Composition: the calls of one file in one turn are applied in order to the file's text.
//! When the first call gives the whole file before (an `originalFile`, a created file) and each
//! later call applies to the text so far, the file's change is exact: `before` and `after` are
//! whole texts and the hunks are their diff, with line numbers. Otherwise the change is the
//! calls' own hunks in order (with line numbers where `structuredPatch` or a known text gives
//! them) and the counts are their sums.
//!
//! Paths are absolute: a relative path is joined to the session's `cwd` and normalised
//! lexically (`a/./b/../c` → `a/c`); symlinks are not resolved here (the file history does,
//! where it compares paths).

use std::borrow::Cow;
use std::collections::HashMap;

use serde::Deserialize;
use similar::{ChangeTag, TextDiff};

use crate::analysis::Analysis;
use crate::model::{BlockKind, Transcript};
use crate::view::diff::{self, DiffLine, DiffLineKind};
use crate::view::edits::{self, EditCall};

/// Unchanged lines kept around each change of a composed diff.
pub const CONTEXT_LINES: usize = 3;

/// What a turn did to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileAction {
    /// The file did not exist before the turn (`Write` with `type: "create"`, `*** Add File`,
    /// Copilot `create`).
    Created,
    /// The file existed and was changed.
    Modified,
    /// The turn's last change deleted it (`*** Delete File`).
    Deleted,
}

/// One hunk: lines of context, removed and added, with the line numbers the header shows
/// (`@@ -37,12 +37,15 @@`: 1-based starts; a start of an empty range is the line before it)
/// when they are known.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hunk {
    /// `(old_start, old_lines, new_start, new_lines)`; `None` when the input carries no line
    /// numbers (an `Edit`'s strings or a Codex patch without the whole file).
    pub range: Option<(usize, usize, usize, usize)>,
    /// `Context`, `Removed` and `Added` lines in order (never `File` / `Hunk`); serialised as
    /// unified-diff lines (` ctx`, `-old`, `+new`).
    #[serde(serialize_with = "diff_lines")]
    pub lines: Vec<DiffLine>,
}

fn diff_lines<S: serde::Serializer>(lines: &[DiffLine], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(
        lines
            .iter()
            .map(|l| format!("{}{}", prefix(l.kind), l.text)),
    )
}

/// The unified-diff prefix of a line: ` `, `-`, `+` (`@@` for a hunk separator).
pub fn prefix(k: DiffLineKind) -> &'static str {
    match k {
        DiffLineKind::Added => "+",
        DiffLineKind::Removed => "-",
        DiffLineKind::Context => " ",
        DiffLineKind::Hunk | DiffLineKind::File => "@@",
    }
}

impl Hunk {
    /// `@@ -37,12 +37,15 @@` (a count of 1 is left out, as `diff -u` does); `@@` without
    /// line numbers.
    pub fn header(&self) -> String {
        match self.range {
            Some((os, ol, ns, nl)) => {
                format!("@@ -{} +{} @@", range_label(os, ol), range_label(ns, nl))
            }
            None => "@@".to_string(),
        }
    }

    fn counts(&self) -> (usize, usize) {
        let added = self
            .lines
            .iter()
            .filter(|l| l.kind == DiffLineKind::Added)
            .count();
        let removed = self
            .lines
            .iter()
            .filter(|l| l.kind == DiffLineKind::Removed)
            .count();
        (added, removed)
    }
}

fn range_label(start: usize, len: usize) -> String {
    if len == 1 {
        start.to_string()
    } else {
        format!("{start},{len}")
    }
}

/// A tool call a change came from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ChangeCall {
    /// Entry and block index of the `tool_use` block.
    pub entry: usize,
    pub block: usize,
    /// As [`EditCall::call`]: the tool call's id, else `@<entry>.<block>`.
    pub call: String,
    /// Tool name as written.
    pub name: String,
}

/// The net change of one file over a turn (or over the session).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileChange {
    /// Absolute path (relative paths joined to the session's `cwd`).
    pub path: String,
    /// The path as the first call wrote it.
    pub written: String,
    pub action: FileAction,
    /// `*** Move to:` target (absolute), when the file was moved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moved_to: Option<String>,
    /// Lines added and removed by the net change.
    pub added: usize,
    pub removed: usize,
    /// The applied calls that changed it, in order.
    pub calls: Vec<ChangeCall>,
    /// The whole file is known before and after (the change is exact); `before` / `after`
    /// hold it unless dropped by [`Changes::without_texts`].
    pub exact: bool,
    /// The whole file before and after, when both are known.
    #[serde(skip)]
    pub before: Option<String>,
    #[serde(skip)]
    pub after: Option<String>,
    /// The change as hunks: the diff of `before` and `after` when known, else the calls' own.
    pub hunks: Vec<Hunk>,
}

impl FileChange {
    /// `+41 −7`.
    pub fn counts(&self) -> String {
        format!("+{} −{}", self.added, self.removed)
    }

    /// The path's last two components (`src/auth.rs`).
    pub fn short_path(&self) -> String {
        short_path(&self.path)
    }
}

/// The two texts an editor's diff shows for a file's change: the whole file before and after
/// when the change is exact (and the texts are kept); else its hunks, each opened on both sides
/// by the same line `⋯ @@ -37,12 +37,15 @@ ⋯` (`⋯ @@ ⋯` without line numbers) so that the
/// editor aligns them, with context and removed lines before, context and added lines after.
pub fn sides(f: &FileChange) -> (String, String) {
    if let (Some(b), Some(a)) = (&f.before, &f.after) {
        return (b.clone(), a.clone());
    }
    let (mut before, mut after) = (String::new(), String::new());
    for h in &f.hunks {
        let sep = format!("⋯ {} ⋯\n", h.header());
        before.push_str(&sep);
        after.push_str(&sep);
        for l in &h.lines {
            let line = format!("{}\n", l.text);
            match l.kind {
                DiffLineKind::Removed => before.push_str(&line),
                DiffLineKind::Added => after.push_str(&line),
                _ => {
                    before.push_str(&line);
                    after.push_str(&line);
                }
            }
        }
    }
    (before, after)
}

/// The last two components of a path.
pub fn short_path(p: &str) -> String {
    let parts: Vec<&str> = p.trim_end_matches('/').rsplit('/').take(2).collect();
    parts.into_iter().rev().collect::<Vec<_>>().join("/")
}

/// A commit the agent made (issue 22, item 6): a `git commit` whose output names it
/// (`[main 1a2b3c4] message`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Commit {
    /// `main`, `detached HEAD`.
    pub branch: String,
    /// The abbreviated hash as printed (7–40 hex digits).
    pub hash: String,
    /// The commit's subject line.
    pub message: String,
    /// Entry and block of the tool call that ran it.
    pub entry: usize,
    pub block: usize,
}

/// The change set of one turn.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnChanges {
    /// Index into `Analysis::turns`.
    pub turn: usize,
    /// The turn's number (`Turn::n`; 0 for the preamble).
    pub n: usize,
    /// Files changed, in the order the turn first touched them.
    pub files: Vec<FileChange>,
    /// Edit calls that changed nothing: their result is an error or a rejection.
    pub not_applied: Vec<ChangeCall>,
    /// Edit calls with no result recorded (the session stopped, or the turn is in flight):
    /// not counted as changes, since they may not have been applied.
    pub no_result: Vec<ChangeCall>,
    /// Sums of the files' counts.
    pub added: usize,
    pub removed: usize,
    pub commits: Vec<Commit>,
}

impl TurnChanges {
    /// The lens / summary title: `✎ 3 files changed · +41 −7`, `✎ 1 file changed · +2 −0`;
    /// with rejected calls ` · 1 edit not applied`; a turn that only committed:
    /// `⎇ committed 1a2b3c4`.
    pub fn title(&self) -> String {
        let mut parts = Vec::new();
        if !self.files.is_empty() {
            let n = self.files.len();
            parts.push(format!(
                "✎ {n} {} changed · +{} −{}",
                if n == 1 { "file" } else { "files" },
                self.added,
                self.removed
            ));
        }
        if !self.not_applied.is_empty() {
            let n = self.not_applied.len();
            parts.push(format!(
                "{n} {} not applied",
                if n == 1 { "edit" } else { "edits" }
            ));
        }
        if !self.no_result.is_empty() {
            let n = self.no_result.len();
            parts.push(format!(
                "{n} {} without a result",
                if n == 1 { "edit" } else { "edits" }
            ));
        }
        for c in &self.commits {
            parts.push(format!("⎇ committed {}", c.hash));
        }
        if self.files.is_empty()
            && !parts.is_empty()
            && !(self.not_applied.is_empty() && self.no_result.is_empty())
        {
            parts[0] = format!("✎ no file changed · {}", parts[0]);
        }
        parts.join(" · ")
    }
}

/// The change sets of a transcript: one per turn that changed files, tried to, or committed
/// (turns with none are left out), and the session's net change over all of them.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct Changes {
    pub turns: Vec<TurnChanges>,
    /// The net change of every file over the whole session.
    pub session: Vec<FileChange>,
}

impl Changes {
    /// The same change sets without the whole texts of the files (what a document keeps:
    /// the texts are read again when a diff side is asked for).
    pub fn without_texts(mut self) -> Changes {
        for f in self
            .turns
            .iter_mut()
            .flat_map(|t| t.files.iter_mut())
            .chain(self.session.iter_mut())
        {
            f.before = None;
            f.after = None;
        }
        self
    }

    /// The change set of the turn numbered `n`.
    pub fn turn(&self, n: usize) -> Option<&TurnChanges> {
        self.turn_at(n)
    }

    /// [`Changes::turn`] by binary search (turns are in file order, numbers increasing).
    pub fn turn_at(&self, n: usize) -> Option<&TurnChanges> {
        match self.turns.binary_search_by_key(&n, |t| t.n) {
            Ok(i) => self.turns.get(i),
            Err(_) => self.turns.iter().find(|t| t.n == n),
        }
    }

    /// The session's title: `✎ 5 files changed in 3 turns · +120 −14`.
    pub fn session_title(&self) -> Option<String> {
        if self.session.is_empty() {
            return None;
        }
        let turns = self.turns.iter().filter(|t| !t.files.is_empty()).count();
        let n = self.session.len();
        let added: usize = self.session.iter().map(|f| f.added).sum();
        let removed: usize = self.session.iter().map(|f| f.removed).sum();
        Some(format!(
            "✎ {n} {} changed in {turns} {} · +{added} −{removed}",
            if n == 1 { "file" } else { "files" },
            if turns == 1 { "turn" } else { "turns" },
        ))
    }
}

/// The change sets of `t` (`src` its text).
pub fn changes(t: &Transcript, a: &Analysis, src: &str) -> Changes {
    changes_of_calls(t, a, src, &edits::edit_calls(t, a, src))
}

/// [`changes`] from the edit calls already found ([`edits::edit_calls`]).
pub fn changes_of_calls(t: &Transcript, a: &Analysis, src: &str, calls: &[EditCall]) -> Changes {
    let result_of = |e: usize, b: usize| pair_result(a, e, b);
    let ctx = Context::new(t, src, 0..t.entries.len(), &result_of);
    let ops: Vec<Vec<Op>> = calls.iter().map(|c| ctx.ops(c)).collect();
    let mut out = Changes::default();
    let mut session = Composer::default();
    for (ti, turn) in a.turns.iter().enumerate() {
        if let Some(tc) = compose_turn(&ctx, calls, &ops, ti, turn, Some(&mut session)) {
            out.turns.push(tc);
        }
    }
    out.session = session.finish();
    out
}

/// The change set of turn `ti` alone (`None` when it changed nothing, tried to or
/// committed), reading only its entries; `result_of(entry, block)` gives a call's
/// `tool_result` (as the view's renderer keeps them).
pub fn turn_changes(
    t: &Transcript,
    a: &Analysis,
    src: &str,
    ti: usize,
    result_of: &dyn Fn(usize, usize) -> Option<(usize, usize)>,
) -> Option<TurnChanges> {
    let turn = a.turns.get(ti)?;
    let calls = edits::edit_calls_in(t, src, turn.entries.clone(), result_of);
    let ctx = Context::new(t, src, turn.entries.clone(), result_of);
    let ops: Vec<Vec<Op>> = calls.iter().map(|c| ctx.ops(c)).collect();
    compose_turn(&ctx, &calls, &ops, ti, turn, None)
}

/// The `(entry, block)` of the `tool_result` of the call at `(entry, block)`, by binary search
/// (`Analysis::tool_pairs` is in the order of the calls).
pub fn pair_result(a: &Analysis, entry: usize, block: usize) -> Option<(usize, usize)> {
    let from = a.tool_pairs.partition_point(|p| p.use_entry < entry);
    a.tool_pairs[from..]
        .iter()
        .take_while(|p| p.use_entry == entry)
        .find(|p| p.use_block == block)
        .and_then(|p| Some((p.result_entry?, p.result_block?)))
}

/// The hunks of a Claude Code result record's `toolUseResult.structuredPatch`, with their
/// line numbers (`None` when the record at entry `result_entry` has none, or an empty one:
/// a created file). Issue 20 item 8: the view's `@@ -37,12 +37,15 @@` headers.
pub fn structured_patch(t: &Transcript, src: &str, result_entry: usize) -> Option<Vec<Hunk>> {
    let line = src.get(t.entries.get(result_entry)?.span.clone())?;
    let s = sidecar_of_line(line)?;
    let hunks: Vec<Hunk> = s.structured_patch?.iter().map(structured_hunk).collect();
    (!hunks.is_empty()).then_some(hunks)
}

/// The `toolUseResult` object of a record's line, when it has one.
fn sidecar_of_line(line: &str) -> Option<Sidecar> {
    memchr::memmem::find(line.as_bytes(), b"\"toolUseResult\"")?;
    // A `toolUseResult` that is not an object (a string, `null`) is no sidecar.
    let raw = serde_json::from_str::<ResultRecord>(line)
        .ok()?
        .tool_use_result?;
    if !raw.get().starts_with('{') {
        return None;
    }
    serde_json::from_str::<Sidecar>(raw.get()).ok()
}

/// A `Bash` / shell call whose command may make a commit.
fn is_commit_candidate(command: &str) -> bool {
    command.contains("commit") && command.contains("git")
}

/// The change set of one turn from its calls' ops (`ops[i]` of `calls[i]`), also composed
/// into `session` when given.
fn compose_turn(
    ctx: &Context,
    calls: &[EditCall],
    ops: &[Vec<Op>],
    ti: usize,
    turn: &crate::analysis::Turn,
    mut session: Option<&mut Composer>,
) -> Option<TurnChanges> {
    let mut comp = Composer::default();
    let mut not_applied = Vec::new();
    let mut no_result = Vec::new();
    for (c, ops) in calls.iter().zip(ops) {
        if !turn.entries.contains(&c.entry) {
            continue;
        }
        match ctx.applied(c) {
            Some(true) => {}
            Some(false) => {
                not_applied.push(call_of(c));
                continue;
            }
            None => {
                no_result.push(call_of(c));
                continue;
            }
        }
        for op in ops {
            comp.apply(op, call_of(c));
            if let Some(s) = session.as_deref_mut() {
                s.apply(op, call_of(c));
            }
        }
    }
    let commits = ctx.commits(turn.entries.clone());
    let files = comp.finish();
    if files.is_empty() && not_applied.is_empty() && no_result.is_empty() && commits.is_empty() {
        return None;
    }
    Some(TurnChanges {
        turn: ti,
        n: turn.n,
        added: files.iter().map(|f| f.added).sum(),
        removed: files.iter().map(|f| f.removed).sum(),
        files,
        not_applied,
        no_result,
        commits,
    })
}

fn call_of(c: &EditCall) -> ChangeCall {
    ChangeCall {
        entry: c.entry,
        block: c.block,
        call: c.call.clone(),
        name: c.name.clone(),
    }
}

/// What one call did to one file.
#[derive(Debug, Clone)]
struct Op {
    /// Absolute path.
    path: String,
    written: String,
    kind: OpKind,
    /// The whole file before the call, when the record gives it.
    original: Option<String>,
    /// The call's own hunks (structuredPatch, else from its input).
    hunks: Vec<Hunk>,
}

#[derive(Debug, Clone)]
enum OpKind {
    /// The whole file written; `created` when the record says the file is new.
    Write {
        content: String,
        created: Option<bool>,
    },
    /// Replacements in order: `(old, new, all)`.
    Replace(Vec<(String, String, bool)>),
    /// A Codex patch's file section.
    Patch {
        action: PatchAction,
        moved_to: Option<String>,
    },
    /// A change known only by its hunks (a notebook cell).
    Opaque,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PatchAction {
    Add,
    Update,
    Delete,
}

/// Reads what the records say about the calls.
struct Context<'a> {
    t: &'a Transcript,
    src: &'a str,
    cwd: Option<&'a str>,
    /// `tool_use` (entry, block) → `tool_result` (entry, block).
    result_of: &'a dyn Fn(usize, usize) -> Option<(usize, usize)>,
    /// Codex `patch_apply_end` by call id: `(success, absolute paths)`.
    patch_ends: HashMap<String, (bool, Vec<String>)>,
}

impl<'a> Context<'a> {
    /// What the entries `range` say (their `patch_apply_end` events).
    fn new(
        t: &'a Transcript,
        src: &'a str,
        range: std::ops::Range<usize>,
        result_of: &'a dyn Fn(usize, usize) -> Option<(usize, usize)>,
    ) -> Self {
        let mut patch_ends = HashMap::new();
        let end = range.end.min(t.entries.len());
        for e in &t.entries[range.start.min(end)..end] {
            if !e.record_type.ends_with("patch_apply_end") {
                continue;
            }
            let Some(line) = src.get(e.span.clone()) else {
                continue;
            };
            if let Ok(r) = serde_json::from_str::<PatchEndRecord>(line)
                && let Some(id) = r.payload.call_id
            {
                let mut paths: Vec<String> = r.payload.changes.into_keys().collect();
                paths.sort();
                patch_ends.insert(id, (r.payload.success.unwrap_or(true), paths));
            }
        }
        Context {
            t,
            src,
            cwd: t.meta.cwd.as_deref(),
            result_of,
            patch_ends,
        }
    }

    /// `Some(true)` applied, `Some(false)` failed or rejected, `None` no result recorded.
    fn applied(&self, c: &EditCall) -> Option<bool> {
        if let Some((ok, _)) = self.patch_ends.get(&c.call) {
            if !ok {
                return Some(false);
            }
            if c.applied.is_none() {
                return Some(true);
            }
        }
        c.applied
    }

    /// The result record's `toolUseResult`, when it has one with edit fields.
    fn result_sidecar(&self, c: &EditCall) -> Option<Sidecar> {
        let (re, _) = (self.result_of)(c.entry, c.block)?;
        let line = self.src.get(self.t.entries.get(re)?.span.clone())?;
        memchr::memmem::find(line.as_bytes(), b"\"toolUseResult\"")?;
        // A `toolUseResult` that is not an object (a string, `null`) is no sidecar.
        let raw = serde_json::from_str::<ResultRecord>(line)
            .ok()?
            .tool_use_result?;
        if !raw.get().starts_with('{') {
            return None;
        }
        serde_json::from_str::<Sidecar>(raw.get()).ok()
    }

    fn ops(&self, c: &EditCall) -> Vec<Op> {
        let Some(BlockKind::ToolUse(u)) = self
            .t
            .entries
            .get(c.entry)
            .and_then(|e| e.blocks.get(c.block))
            .map(|b| &b.kind)
        else {
            return Vec::new();
        };
        let Some(input) = diff::call_input(self.src, u) else {
            return Vec::new();
        };
        let sidecar = self.result_sidecar(c);
        let trimmed = input.trim_start();
        if !trimmed.starts_with('{') {
            return self.patch_ops(c, &input);
        }
        let Ok(v) = serde_json::from_str::<Input>(&input) else {
            return Vec::new();
        };
        let original = sidecar.as_ref().and_then(|s| {
            s.original_file
                .clone()
                .or_else(|| s.original_file_contents.clone())
        });
        let structured: Vec<Hunk> = sidecar
            .as_ref()
            .and_then(|s| s.structured_patch.as_ref())
            .map(|p| p.iter().map(structured_hunk).collect())
            .unwrap_or_default();
        let op = |written: String, kind: OpKind, own: Vec<Hunk>| Op {
            path: absolute(self.cwd, &written),
            written,
            kind,
            original: original.clone(),
            hunks: if structured.is_empty() {
                own
            } else {
                structured.clone()
            },
        };
        let own_hunks = || -> Vec<Hunk> {
            diff::edit_diff(&c.name, &input)
                .map(|d| hunks_of_lines(&d.lines))
                .unwrap_or_default()
        };
        match c.name.as_str() {
            "Edit" | "MultiEdit" | "edit" | "str_replace" | "str_replace_editor" => {
                let Some(path) = v.file_path.clone().or(v.path.clone()) else {
                    return Vec::new();
                };
                let mut reps = Vec::new();
                match &v.edits {
                    Some(es) => {
                        for e in es {
                            reps.push((
                                e.old_side().to_string(),
                                e.new_side().to_string(),
                                e.replace_all == Some(true),
                            ));
                        }
                    }
                    None => {
                        let Some(new) = v
                            .new_string
                            .as_deref()
                            .or(v.new_text.as_deref())
                            .or(v.new_str.as_deref())
                        else {
                            return Vec::new();
                        };
                        let old = v
                            .old_string
                            .as_deref()
                            .or(v.old_text.as_deref())
                            .or(v.old_str.as_deref())
                            .unwrap_or("");
                        reps.push((
                            old.to_string(),
                            new.to_string(),
                            v.replace_all == Some(true),
                        ));
                    }
                }
                vec![op(path.into_owned(), OpKind::Replace(reps), own_hunks())]
            }
            "Write" | "write" | "create" => {
                let Some(path) = v.file_path.clone().or(v.path.clone()) else {
                    return Vec::new();
                };
                let Some(content) = v.content.as_deref().or(v.file_text.as_deref()) else {
                    return Vec::new();
                };
                let created = match sidecar.as_ref().and_then(|s| s.kind.as_deref()) {
                    Some("create") => Some(true),
                    Some("update") => Some(false),
                    _ if c.name == "create" => Some(true),
                    _ => None,
                };
                let own = vec![Hunk {
                    range: Some((0, 0, 1, line_count(content))),
                    lines: lines_of(content).map(added).collect(),
                }];
                let own = if created == Some(true) {
                    own
                } else {
                    vec![Hunk {
                        range: None,
                        ..own.into_iter().next().unwrap_or(Hunk {
                            range: None,
                            lines: Vec::new(),
                        })
                    }]
                };
                vec![op(
                    path.into_owned(),
                    OpKind::Write {
                        content: content.to_string(),
                        created,
                    },
                    own,
                )]
            }
            "NotebookEdit" => {
                let Some(path) = v.notebook_path.clone() else {
                    return Vec::new();
                };
                let mut o = op(path.into_owned(), OpKind::Opaque, own_hunks());
                o.original = None;
                vec![o]
            }
            _ => match v.patch() {
                Some(p) => self.patch_ops(c, &p),
                None => Vec::new(),
            },
        }
    }

    /// The file sections of a Codex patch.
    fn patch_ops(&self, c: &EditCall, patch: &str) -> Vec<Op> {
        let ends = self
            .patch_ends
            .get(&c.call)
            .map(|(_, p)| p.as_slice())
            .unwrap_or(&[]);
        let mut out: Vec<Op> = Vec::new();
        let mut lines: Vec<DiffLine> = Vec::new();
        let flush = |out: &mut Vec<Op>, lines: &mut Vec<DiffLine>| {
            if let Some(last) = out.last_mut() {
                last.hunks = hunks_of_lines(lines);
                if let OpKind::Patch {
                    action: PatchAction::Add,
                    ..
                } = last.kind
                {
                    for h in &mut last.hunks {
                        h.range = Some((0, 0, 1, h.lines.len()));
                    }
                }
            }
            lines.clear();
        };
        for raw in patch.lines() {
            let l = raw.strip_suffix('\r').unwrap_or(raw);
            if let Some((action, path)) = file_header(l) {
                flush(&mut out, &mut lines);
                let abs = absolute(self.cwd, path);
                // `patch_apply_end` names the files absolutely: prefer its spelling of this one.
                let abs = ends
                    .iter()
                    .find(|e| {
                        **e == abs
                            || (e.ends_with(path) && e[..e.len() - path.len()].ends_with('/'))
                    })
                    .cloned()
                    .unwrap_or(abs);
                out.push(Op {
                    path: abs,
                    written: path.to_string(),
                    kind: OpKind::Patch {
                        action,
                        moved_to: None,
                    },
                    original: None,
                    hunks: Vec::new(),
                });
                continue;
            }
            let Some(cur) = out.last_mut() else {
                continue;
            };
            if let Some(to) = l.strip_prefix("*** Move to: ") {
                if let OpKind::Patch { moved_to, .. } = &mut cur.kind {
                    *moved_to = Some(absolute(self.cwd, to.trim()));
                }
                continue;
            }
            if l.starts_with("*** ") {
                continue;
            }
            if l.starts_with("@@") {
                lines.push(DiffLine {
                    kind: DiffLineKind::Hunk,
                    text: l.to_string(),
                });
            } else if let Some(t) = l.strip_prefix('+') {
                lines.push(added(t));
            } else if let Some(t) = l.strip_prefix('-') {
                lines.push(DiffLine {
                    kind: DiffLineKind::Removed,
                    text: t.to_string(),
                });
            } else {
                lines.push(DiffLine {
                    kind: DiffLineKind::Context,
                    text: l.strip_prefix(' ').unwrap_or(l).to_string(),
                });
            }
        }
        flush(&mut out, &mut lines);
        out
    }

    /// Commits made by `git commit` calls in `entries`.
    fn commits(&self, entries: std::ops::Range<usize>) -> Vec<Commit> {
        let mut out = Vec::new();
        for ei in entries {
            let Some(e) = self.t.entries.get(ei) else {
                continue;
            };
            for (bi, b) in e.blocks.iter().enumerate() {
                let BlockKind::ToolUse(u) = &b.kind else {
                    continue;
                };
                if !is_commit_candidate(&u.summary) {
                    continue;
                }
                let Some((re, rb)) = (self.result_of)(ei, bi) else {
                    continue;
                };
                let Some(BlockKind::ToolResult(r)) = self
                    .t
                    .entries
                    .get(re)
                    .and_then(|x| x.blocks.get(rb))
                    .map(|x| &x.kind)
                else {
                    continue;
                };
                let Some((text, _)) = crate::view::render::result_text_prefix(self.src, r) else {
                    continue;
                };
                if let Some((branch, hash, message)) = text.lines().find_map(commit_line) {
                    out.push(Commit {
                        branch,
                        hash,
                        message,
                        entry: ei,
                        block: bi,
                    });
                }
            }
        }
        out
    }
}

/// `[main 1a2b3c4] message`, `[main (root-commit) 1a2b3c4] message`, `[detached HEAD
/// 1a2b3c4] message` → `(branch, hash, message)`.
pub fn commit_line(l: &str) -> Option<(String, String, String)> {
    let l = l.trim_start();
    let rest = l.strip_prefix('[')?;
    let close = rest.find(']')?;
    let inside = &rest[..close];
    let message = rest[close + 1..].trim();
    let (branch, hash) = inside.rsplit_once(' ')?;
    if !(7..=40).contains(&hash.len()) || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let branch = branch.trim().trim_end_matches("(root-commit)").trim();
    if branch.is_empty() || message.is_empty() {
        return None;
    }
    Some((branch.to_string(), hash.to_string(), message.to_string()))
}

fn file_header(l: &str) -> Option<(PatchAction, &str)> {
    for (prefix, action) in [
        ("*** Add File: ", PatchAction::Add),
        ("*** Update File: ", PatchAction::Update),
        ("*** Delete File: ", PatchAction::Delete),
    ] {
        if let Some(p) = l.strip_prefix(prefix) {
            return Some((action, p.trim()));
        }
    }
    None
}

/// A path made absolute against `cwd` and normalised lexically. A path that is already
/// absolute (`/…`, `C:\…`, `C:/…`) is only normalised.
pub fn absolute(cwd: Option<&str>, p: &str) -> String {
    let windows = p.len() > 2 && p.as_bytes()[1] == b':' && matches!(p.as_bytes()[2], b'\\' | b'/');
    let joined = if p.starts_with('/') || windows {
        p.to_string()
    } else {
        match cwd {
            Some(c) if !c.is_empty() => format!("{}/{}", c.trim_end_matches('/'), p),
            _ => p.to_string(),
        }
    };
    normalise(&joined)
}

fn normalise(p: &str) -> String {
    let rooted = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in p.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            x => parts.push(x),
        }
    }
    let joined = parts.join("/");
    if rooted { format!("/{joined}") } else { joined }
}

fn added(t: &str) -> DiffLine {
    DiffLine {
        kind: DiffLineKind::Added,
        text: t.to_string(),
    }
}

/// Lines of a text (a final newline ends the last line).
fn lines_of(s: &str) -> impl Iterator<Item = &str> {
    let body = s.strip_suffix('\n').unwrap_or(s);
    body.split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .filter(move |_| !s.is_empty())
}

fn line_count(s: &str) -> usize {
    lines_of(s).count()
}

/// Diff lines (as `view::diff` makes them) cut into hunks at `Hunk` / `File` lines; no line
/// numbers.
fn hunks_of_lines(lines: &[DiffLine]) -> Vec<Hunk> {
    let mut out: Vec<Hunk> = Vec::new();
    for l in lines {
        match l.kind {
            DiffLineKind::Hunk | DiffLineKind::File => out.push(Hunk {
                range: None,
                lines: Vec::new(),
            }),
            _ => {
                if out.is_empty() {
                    out.push(Hunk {
                        range: None,
                        lines: Vec::new(),
                    });
                }
                if let Some(h) = out.last_mut() {
                    h.lines.push(l.clone());
                }
            }
        }
    }
    out.retain(|h| h.lines.iter().any(|l| l.kind != DiffLineKind::Context));
    out
}

/// A `structuredPatch` hunk: `{oldStart, oldLines, newStart, newLines, lines: [" ctx",
/// "-old", "+new"]}` (`\ No newline…` lines dropped). Its lines are diffed again, line by
/// line, between the hunk's old and new sides: a hunk written as every old line removed and
/// every new one added shows (and counts) only the lines that differ, as the call's own diff
/// does; the header's ranges are the sides' and stay.
fn structured_hunk(h: &StructuredHunk) -> Hunk {
    let raw = structured_lines(h);
    let mut old = String::new();
    let mut new = String::new();
    for l in &raw {
        if l.kind != DiffLineKind::Added {
            old.push_str(&l.text);
            old.push('\n');
        }
        if l.kind != DiffLineKind::Removed {
            new.push_str(&l.text);
            new.push('\n');
        }
    }
    let diff = TextDiff::from_lines(&old, &new);
    let lines = diff
        .iter_all_changes()
        .map(|c| DiffLine {
            kind: match c.tag() {
                ChangeTag::Equal => DiffLineKind::Context,
                ChangeTag::Delete => DiffLineKind::Removed,
                ChangeTag::Insert => DiffLineKind::Added,
            },
            text: c.value().trim_end_matches('\n').to_string(),
        })
        .collect();
    Hunk {
        range: Some((h.old_start, h.old_lines, h.new_start, h.new_lines)),
        lines,
    }
}

/// The lines of a `structuredPatch` hunk as written.
fn structured_lines(h: &StructuredHunk) -> Vec<DiffLine> {
    h.lines
        .iter()
        .filter_map(|l| {
            let (kind, text) = match l.as_bytes().first() {
                Some(b'+') => (DiffLineKind::Added, &l[1..]),
                Some(b'-') => (DiffLineKind::Removed, &l[1..]),
                Some(b' ') => (DiffLineKind::Context, &l[1..]),
                Some(b'\\') => return None,
                _ => (DiffLineKind::Context, l.as_str()),
            };
            Some(DiffLine {
                kind,
                text: text.to_string(),
            })
        })
        .collect()
}

/// The hunks of `before` → `after`, with line numbers and [`CONTEXT_LINES`] of context.
pub fn diff_hunks(before: &str, after: &str) -> Vec<Hunk> {
    let diff = TextDiff::from_lines(before, after);
    let mut out = Vec::new();
    for group in diff.grouped_ops(CONTEXT_LINES) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let (os, oe) = (first.old_range().start, last.old_range().end);
        let (ns, ne) = (first.new_range().start, last.new_range().end);
        let start = |s: usize, len: usize| if len == 0 { s } else { s + 1 };
        let mut lines = Vec::new();
        for op in &group {
            for change in diff.iter_changes(op) {
                let text = change.value().trim_end_matches(['\n', '\r']).to_string();
                let kind = match change.tag() {
                    ChangeTag::Equal => DiffLineKind::Context,
                    ChangeTag::Delete => DiffLineKind::Removed,
                    ChangeTag::Insert => DiffLineKind::Added,
                };
                lines.push(DiffLine { kind, text });
            }
        }
        out.push(Hunk {
            range: Some((start(os, oe - os), oe - os, start(ns, ne - ns), ne - ns)),
            lines,
        });
    }
    out
}

/// A unified diff of `before` → `after` for `git apply` (`--- a/p` / `+++ b/p`, `/dev/null`
/// for a created or deleted file), `path` relative to the repository.
pub fn unified_patch(path: &str, action: FileAction, before: &str, after: &str) -> String {
    let diff = TextDiff::from_lines(before, after);
    let a = if action == FileAction::Created {
        "/dev/null".to_string()
    } else {
        format!("a/{path}")
    };
    let b = if action == FileAction::Deleted {
        "/dev/null".to_string()
    } else {
        format!("b/{path}")
    };
    let mut s = format!("diff --git a/{path} b/{path}\n");
    match action {
        FileAction::Created => s.push_str("new file mode 100644\n"),
        FileAction::Deleted => s.push_str("deleted file mode 100644\n"),
        FileAction::Modified => {}
    }
    s.push_str(
        &diff
            .unified_diff()
            .context_radius(CONTEXT_LINES)
            .header(&a, &b)
            .to_string(),
    );
    s
}

/// One file's composition over a run of calls.
#[derive(Debug)]
struct Acc {
    path: String,
    written: String,
    /// The whole file at the start, when known.
    before: Option<String>,
    /// The whole file now, when known.
    current: Option<String>,
    created: bool,
    deleted: bool,
    moved_to: Option<String>,
    /// The calls' own hunks in order.
    hunks: Vec<Hunk>,
    calls: Vec<ChangeCall>,
}

/// Composes ops file by file, in the order files are first touched.
#[derive(Debug, Default)]
struct Composer {
    files: Vec<Acc>,
}

impl Composer {
    fn apply(&mut self, op: &Op, call: ChangeCall) {
        let idx = match self.files.iter().position(|f| f.path == op.path) {
            Some(i) => i,
            None => {
                let (before, created) = match &op.kind {
                    OpKind::Write {
                        created: Some(true),
                        ..
                    } => (Some(String::new()), true),
                    OpKind::Patch {
                        action: PatchAction::Add,
                        ..
                    } => (Some(String::new()), true),
                    _ => (op.original.clone(), false),
                };
                self.files.push(Acc {
                    path: op.path.clone(),
                    written: op.written.clone(),
                    current: before.clone(),
                    before,
                    created,
                    deleted: false,
                    moved_to: None,
                    hunks: Vec::new(),
                    calls: Vec::new(),
                });
                self.files.len() - 1
            }
        };
        let f = &mut self.files[idx];
        if f.calls.last() != Some(&call) {
            f.calls.push(call);
        }
        // A later call that gives the whole file before it re-syncs an unknown text.
        if f.current.is_none() {
            f.current = op.original.clone();
        }
        let prev = f.current.clone();
        f.current = match (&op.kind, f.current.take()) {
            (OpKind::Write { content, .. }, _) => Some(content.clone()),
            (OpKind::Replace(reps), Some(cur)) => replace_all(cur, reps),
            (
                OpKind::Patch {
                    action: PatchAction::Add,
                    ..
                },
                _,
            ) => Some(added_text(&op.hunks)),
            (
                OpKind::Patch {
                    action: PatchAction::Delete,
                    ..
                },
                _,
            ) => {
                f.deleted = true;
                Some(String::new())
            }
            (
                OpKind::Patch {
                    action: PatchAction::Update,
                    moved_to,
                },
                cur,
            ) => {
                if moved_to.is_some() {
                    f.moved_to = moved_to.clone();
                }
                cur.and_then(|c| apply_hunks(&c, &op.hunks))
            }
            _ => None,
        };
        if !matches!(
            op.kind,
            OpKind::Patch {
                action: PatchAction::Delete,
                ..
            }
        ) {
            f.deleted = false;
        }
        // The call's own hunks, with line numbers when the texts on both sides are known.
        match (&prev, &f.current) {
            (Some(p), Some(c)) if op.hunks.iter().all(|h| h.range.is_none()) => {
                f.hunks.extend(diff_hunks(p, c));
            }
            _ => f.hunks.extend(op.hunks.iter().cloned()),
        }
    }

    fn finish(self) -> Vec<FileChange> {
        let mut out = Vec::new();
        for f in self.files {
            let action = if f.deleted {
                FileAction::Deleted
            } else if f.created {
                FileAction::Created
            } else {
                FileAction::Modified
            };
            if f.created && f.deleted {
                continue; // made and removed within the run: no net change
            }
            let (before, after, hunks) = match (f.before, f.current) {
                (Some(b), Some(a)) => {
                    let h = diff_hunks(&b, &a);
                    (Some(b), Some(a), h)
                }
                _ => (None, None, f.hunks),
            };
            let (added, removed) = hunks.iter().fold((0, 0), |(a, r), h| {
                let (x, y) = h.counts();
                (a + x, r + y)
            });
            if hunks.is_empty() && action == FileAction::Modified && f.moved_to.is_none() {
                continue; // the calls left the file as it was
            }
            out.push(FileChange {
                path: f.path,
                written: f.written,
                action,
                moved_to: f.moved_to,
                added,
                removed,
                calls: f.calls,
                exact: before.is_some() && after.is_some(),
                before,
                after,
                hunks,
            });
        }
        out
    }
}

/// `cur` with each `(old, new, all)` replacement applied in order (`Edit`'s rule: the first
/// occurrence, or every one with `replace_all`); `None` when an `old` is not found (the text
/// is then not known). An empty `old` on an empty file writes `new`.
fn replace_all(mut cur: String, reps: &[(String, String, bool)]) -> Option<String> {
    for (old, new, all) in reps {
        if old.is_empty() {
            if cur.is_empty() {
                cur = new.clone();
                continue;
            }
            return None;
        }
        if !cur.contains(old.as_str()) {
            return None;
        }
        cur = if *all {
            cur.replace(old.as_str(), new)
        } else {
            cur.replacen(old.as_str(), new, 1)
        };
    }
    Some(cur)
}

/// The text of an added file's hunks (their added lines, each ending with `\n`).
fn added_text(hunks: &[Hunk]) -> String {
    let mut s = String::new();
    for h in hunks {
        for l in &h.lines {
            if l.kind != DiffLineKind::Context {
                s.push_str(&l.text);
                s.push('\n');
            }
        }
    }
    s
}

/// Applies a Codex patch's hunks to `text`: each hunk's context and removed lines are found in
/// order from where the previous hunk ended (exactly, then ignoring trailing white space) and
/// replaced by its context and added lines. `None` when a hunk does not apply.
fn apply_hunks(text: &str, hunks: &[Hunk]) -> Option<String> {
    let trailing_newline = text.is_empty() || text.ends_with('\n');
    let mut lines: Vec<String> = lines_of(text).map(str::to_string).collect();
    let mut from = 0usize;
    for h in hunks {
        let old: Vec<&str> = h
            .lines
            .iter()
            .filter(|l| l.kind != DiffLineKind::Added)
            .map(|l| l.text.as_str())
            .collect();
        let new: Vec<String> = h
            .lines
            .iter()
            .filter(|l| l.kind != DiffLineKind::Removed)
            .map(|l| l.text.clone())
            .collect();
        let at = if old.is_empty() {
            lines.len()
        } else {
            find_block(&lines, &old, from, |a, b| a == b)
                .or_else(|| find_block(&lines, &old, from, |a, b| a.trim_end() == b.trim_end()))?
        };
        let n = new.len();
        lines.splice(at..at + old.len(), new);
        from = at + n;
    }
    let mut s = lines.join("\n");
    if trailing_newline && !lines.is_empty() {
        s.push('\n');
    }
    Some(s)
}

fn find_block(
    lines: &[String],
    block: &[&str],
    from: usize,
    eq: impl Fn(&str, &str) -> bool,
) -> Option<usize> {
    if block.len() > lines.len() {
        return None;
    }
    (from..=lines.len() - block.len())
        .find(|&i| block.iter().enumerate().all(|(k, b)| eq(&lines[i + k], b)))
}

#[derive(Deserialize)]
struct Input<'a> {
    #[serde(borrow, default)]
    file_path: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    path: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    notebook_path: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    old_string: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    new_string: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "oldText")]
    old_text: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "newText")]
    new_text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    old_str: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    new_str: Option<Cow<'a, str>>,
    #[serde(default)]
    replace_all: Option<bool>,
    #[serde(borrow, default)]
    edits: Option<Vec<OneEdit<'a>>>,
    #[serde(borrow, default)]
    content: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    file_text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    input: Option<Cow<'a, str>>,
    #[serde(default)]
    command: Option<ShellCommand>,
}

impl<'a> Input<'a> {
    fn patch(&self) -> Option<Cow<'a, str>> {
        if let Some(i) = &self.input {
            return Some(i.clone());
        }
        match &self.command {
            Some(ShellCommand::Argv(a)) if a.len() == 2 && a[0] == "apply_patch" => {
                Some(Cow::Owned(a[1].clone()))
            }
            _ => None,
        }
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ShellCommand {
    Argv(Vec<String>),
    Other(serde::de::IgnoredAny),
}

#[derive(Deserialize)]
struct OneEdit<'a> {
    #[serde(borrow, default)]
    old_string: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    new_string: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "oldText")]
    old_text: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "newText")]
    new_text: Option<Cow<'a, str>>,
    #[serde(default)]
    replace_all: Option<bool>,
}

impl OneEdit<'_> {
    fn old_side(&self) -> &str {
        self.old_string
            .as_deref()
            .or(self.old_text.as_deref())
            .unwrap_or("")
    }
    fn new_side(&self) -> &str {
        self.new_string
            .as_deref()
            .or(self.new_text.as_deref())
            .unwrap_or("")
    }
}

#[derive(Deserialize)]
struct ResultRecord<'a> {
    #[serde(borrow, default, rename = "toolUseResult")]
    tool_use_result: Option<&'a serde_json::value::RawValue>,
}

#[derive(Deserialize)]
struct Sidecar {
    #[serde(default, rename = "originalFile")]
    original_file: Option<String>,
    #[serde(default, rename = "originalFileContents")]
    original_file_contents: Option<String>,
    #[serde(default, rename = "structuredPatch")]
    structured_patch: Option<Vec<StructuredHunk>>,
    #[serde(default, rename = "type")]
    kind: Option<String>,
}

/// A `structuredPatch` hunk (Claude Code `toolUseResult` of `Edit` / `MultiEdit` / `Write`).
#[derive(Deserialize, Debug, Clone)]
pub struct StructuredHunk {
    #[serde(rename = "oldStart")]
    pub old_start: usize,
    #[serde(rename = "oldLines")]
    pub old_lines: usize,
    #[serde(rename = "newStart")]
    pub new_start: usize,
    #[serde(rename = "newLines")]
    pub new_lines: usize,
    #[serde(default)]
    pub lines: Vec<String>,
}

#[derive(Deserialize)]
struct PatchEndRecord {
    payload: PatchEnd,
}

#[derive(Deserialize)]
struct PatchEnd {
    #[serde(default)]
    call_id: Option<String>,
    #[serde(default)]
    success: Option<bool>,
    #[serde(default)]
    changes: HashMap<String, serde::de::IgnoredAny>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_absolute_and_normal() {
        assert_eq!(
            absolute(Some("/home/me/app"), "src/a.rs"),
            "/home/me/app/src/a.rs"
        );
        assert_eq!(
            absolute(Some("/home/me/app/"), "./src/../lib/b.rs"),
            "/home/me/app/lib/b.rs"
        );
        assert_eq!(absolute(Some("/x"), "/abs/./c.rs"), "/abs/c.rs");
        assert_eq!(absolute(None, "rel/d.rs"), "rel/d.rs");
        assert_eq!(absolute(Some("/x"), "C:/w/e.rs"), "C:/w/e.rs");
    }

    #[test]
    fn commit_lines() {
        assert_eq!(
            commit_line("[main 1a2b3c4] Fix the parser"),
            Some(("main".into(), "1a2b3c4".into(), "Fix the parser".into()))
        );
        assert_eq!(
            commit_line("[main (root-commit) abcdef0] init"),
            Some(("main".into(), "abcdef0".into(), "init".into()))
        );
        assert_eq!(
            commit_line("[detached HEAD 0123456789] x"),
            Some(("detached HEAD".into(), "0123456789".into(), "x".into()))
        );
        assert_eq!(commit_line("[INFO] Building"), None);
        assert_eq!(commit_line("[main xyz1234] no"), None);
    }

    #[test]
    fn hunks_of_two_texts_have_line_numbers() {
        let before = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n";
        let after = "a\nb\nc\nd\nE\nf\ng\nh\ni\nj\nk\n";
        let h = diff_hunks(before, after);
        let headers: Vec<String> = h.iter().map(Hunk::header).collect();
        assert_eq!(headers, ["@@ -2,9 +2,10 @@"]);
        assert_eq!(h[0].counts(), (2, 1));
        assert_eq!(diff_hunks("", "x\ny\n")[0].header(), "@@ -0,0 +1,2 @@");
    }

    #[test]
    fn replacements_compose_in_order() {
        let reps = vec![
            ("b".to_string(), "B".to_string(), false),
            ("B\nc".to_string(), "C".to_string(), false),
        ];
        assert_eq!(
            replace_all("a\nb\nc\n".into(), &reps).as_deref(),
            Some("a\nC\n")
        );
        let missing = vec![("zz".to_string(), "y".to_string(), false)];
        assert_eq!(replace_all("a\n".into(), &missing), None);
        let every = vec![("x".to_string(), "y".to_string(), true)];
        assert_eq!(
            replace_all("x x\n".into(), &every).as_deref(),
            Some("y y\n")
        );
    }

    #[test]
    fn codex_hunks_apply_in_order() {
        let text = "fn a() {\n    1\n}\nfn b() {\n    2\n}\n";
        let h = |lines: &[(DiffLineKind, &str)]| Hunk {
            range: None,
            lines: lines
                .iter()
                .map(|(k, t)| DiffLine {
                    kind: *k,
                    text: t.to_string(),
                })
                .collect(),
        };
        let hunks = vec![
            h(&[
                (DiffLineKind::Context, "fn a() {"),
                (DiffLineKind::Removed, "    1"),
                (DiffLineKind::Added, "    10"),
            ]),
            h(&[
                (DiffLineKind::Context, "fn b() {"),
                (DiffLineKind::Removed, "    2"),
                (DiffLineKind::Added, "    20"),
                (DiffLineKind::Added, "    21"),
            ]),
        ];
        assert_eq!(
            apply_hunks(text, &hunks).as_deref(),
            Some("fn a() {\n    10\n}\nfn b() {\n    20\n    21\n}\n")
        );
        let wrong = vec![h(&[(DiffLineKind::Removed, "nope")])];
        assert_eq!(apply_hunks(text, &wrong), None);
    }

    fn fixture(name: &str) -> (Transcript, Analysis, String) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures/rules")
            .join(name);
        let src = std::fs::read_to_string(path).unwrap();
        let t = crate::formats::read(&src);
        let a = crate::analysis::analyze(&t, &src, &Default::default());
        (t, a, src)
    }

    /// `(path, action, added, removed, exact, tools)` of each file.
    fn files(fs: &[FileChange]) -> Vec<(String, FileAction, usize, usize, bool, Vec<String>)> {
        fs.iter()
            .map(|f| {
                (
                    f.path.clone(),
                    f.action,
                    f.added,
                    f.removed,
                    f.exact,
                    f.calls.iter().map(|c| c.call.clone()).collect(),
                )
            })
            .collect()
    }

    /// Two edits of one file in one turn compose into one exact change; a created file; a
    /// rejected edit is no change; a commit; a later turn known by its hunks only; and the
    /// session's net change composed over both turns (issue 22 items 1 and 6).
    #[test]
    fn claude_code_edits_compose_per_turn_and_over_the_session() {
        let (t, a, src) = fixture("changes-claude.jsonl");
        let c = changes(&t, &a, &src);
        assert_eq!(c.turns.len(), 2);
        let t1 = &c.turns[0];
        assert_eq!(t1.n, 1);
        assert_eq!(
            files(&t1.files),
            vec![
                (
                    "/home/user/project/src/calc.rs".into(),
                    FileAction::Modified,
                    2,
                    2,
                    true,
                    vec!["toolu_C01".into(), "toolu_C02".into()]
                ),
                (
                    "/home/user/project/tests/calc_test.rs".into(),
                    FileAction::Created,
                    6,
                    0,
                    true,
                    vec!["toolu_C03".into()]
                ),
            ]
        );
        let calc = &t1.files[0];
        assert_eq!(
            calc.hunks.iter().map(Hunk::header).collect::<Vec<_>>(),
            ["@@ -1,7 +1,7 @@"]
        );
        assert_eq!(
            calc.after.as_deref(),
            Some(
                "fn sum(a: i32, b: i32) -> i32 {\n    a + b\n}\n\nfn main() {\n    println!(\"{}\", sum(1, 2));\n}\n"
            )
        );
        assert_eq!(
            t1.not_applied
                .iter()
                .map(|c| c.call.as_str())
                .collect::<Vec<_>>(),
            ["toolu_C04"]
        );
        assert!(t1.no_result.is_empty());
        assert_eq!(
            t1.commits
                .iter()
                .map(|c| (c.branch.as_str(), c.hash.as_str(), c.message.as_str()))
                .collect::<Vec<_>>(),
            [("main", "1a2b3c4", "Rename total to sum")]
        );
        assert_eq!(
            t1.title(),
            "✎ 2 files changed · +8 −2 · 1 edit not applied · ⎇ committed 1a2b3c4"
        );
        let t2 = &c.turns[1];
        assert_eq!(
            files(&t2.files),
            vec![(
                "/home/user/project/src/calc.rs".into(),
                FileAction::Modified,
                1,
                1,
                false,
                vec!["toolu_C07".into()]
            )]
        );
        assert_eq!(
            t2.files[0]
                .hunks
                .iter()
                .map(Hunk::header)
                .collect::<Vec<_>>(),
            ["@@"]
        );
        assert_eq!(t2.title(), "✎ 1 file changed · +1 −1");
        assert_eq!(
            files(&c.session),
            vec![
                (
                    "/home/user/project/src/calc.rs".into(),
                    FileAction::Modified,
                    3,
                    3,
                    true,
                    vec!["toolu_C01".into(), "toolu_C02".into(), "toolu_C07".into()]
                ),
                (
                    "/home/user/project/tests/calc_test.rs".into(),
                    FileAction::Created,
                    6,
                    0,
                    true,
                    vec!["toolu_C03".into()]
                ),
            ]
        );
        assert_eq!(
            c.session_title().as_deref(),
            Some("✎ 2 files changed in 2 turns · +9 −3")
        );
    }

    /// Codex patches: relative paths made absolute against the session's cwd, an added file
    /// known whole, an updated one by its hunks, a failed patch listed as not applied.
    #[test]
    fn codex_patches_resolve_relative_paths() {
        let (t, a, src) = fixture("codex-apply-patch.jsonl");
        let c = changes(&t, &a, &src);
        assert_eq!(c.turns.len(), 1);
        assert_eq!(
            files(&c.turns[0].files),
            vec![
                (
                    "/home/user/project/src/model/currency.rs".into(),
                    FileAction::Modified,
                    1,
                    1,
                    false,
                    vec!["call_patch_01".into()]
                ),
                (
                    "/home/user/project/docs/currency.md".into(),
                    FileAction::Created,
                    3,
                    0,
                    true,
                    vec!["call_patch_01".into()]
                ),
            ]
        );
        assert_eq!(
            c.turns[0]
                .not_applied
                .iter()
                .map(|c| c.call.as_str())
                .collect::<Vec<_>>(),
            ["call_patch_02"]
        );
        assert_eq!(
            c.turns[0].files[1].after.as_deref(),
            Some("# Currency codes\n\n`parse_currency` accepts any case.\n")
        );
    }

    /// Codex `patch_apply_end`: its absolute paths are preferred to the patch's relative ones
    /// joined to the cwd, and `success: false` makes the call not applied.
    #[test]
    fn codex_patch_apply_end_gives_paths_and_success() {
        let (_, _, src) = fixture("codex-apply-patch.jsonl");
        let end = |ok: bool| {
            format!(
                r#"{{"timestamp":"2026-05-16T08:00:04.200Z","type":"event_msg","payload":{{"type":"patch_apply_end","call_id":"call_patch_01","success":{ok},"changes":{{"/srv/checkout/src/model/currency.rs":{{"type":"update"}},"/srv/checkout/docs/currency.md":{{"type":"add"}}}}}}}}"#
            )
        };
        let with = |ok: bool| -> Changes {
            let mut lines: Vec<String> = src.lines().map(str::to_string).collect();
            lines.insert(7, end(ok));
            let text = lines.join("\n") + "\n";
            let t = crate::formats::read(&text);
            let a = crate::analysis::analyze(&t, &text, &Default::default());
            changes(&t, &a, &text)
        };
        let c = with(true);
        let paths: Vec<&str> = c.turns[0].files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "/srv/checkout/src/model/currency.rs",
                "/srv/checkout/docs/currency.md"
            ]
        );
        let c = with(false);
        assert!(c.turns[0].files.is_empty());
        let failed: Vec<&str> = c.turns[0]
            .not_applied
            .iter()
            .map(|k| k.call.as_str())
            .collect();
        assert_eq!(failed, ["call_patch_01", "call_patch_02"]);
        assert_eq!(
            c.turns[0].title(),
            "✎ no file changed · 2 edits not applied"
        );
    }
}
