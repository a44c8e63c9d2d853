//! Edits as diffs (issue 11, item 2): what a file-editing tool call changed, as unified-diff
//! lines for the view.
//!
//! Tool calls read (their input as the transcript records it):
//!
//! * Claude Code `Edit` `{ file_path, old_string, new_string, replace_all? }`: the lines of
//!   `old_string` against those of `new_string`, with up to [`CONTEXT_LINES`] unchanged lines
//!   around each change (only the context the input carries: the file itself is not read).
//! * Claude Code `MultiEdit` `{ file_path, edits: [{ old_string, new_string, replace_all? }] }`:
//!   one hunk group per edit, in order.
//! * Claude Code `Write` `{ file_path, content }`: every line added (the input does not say
//!   whether the file existed before).
//! * Claude Code `NotebookEdit` `{ notebook_path, cell_id?, new_source, cell_type?,
//!   edit_mode? }`: the new cell source added (`replace`, `insert`), or a deleted cell.
//! * Pi `edit` `{ path, edits: [{ oldText, newText }] }` (or one `oldText` / `newText`) and
//!   `write` `{ path, content }`, as `MultiEdit` / `Edit` and `Write`.
//! * Codex `apply_patch` (a `custom_tool_call` whose `input` is the patch, a `function_call`
//!   whose arguments hold `input`, or any call whose input is a patch): the patch format
//!   `*** Begin Patch` / `*** Add File: p` / `*** Update File: p` (`*** Move to: q`) /
//!   `*** Delete File: p` / `@@ …` / ` `, `-`, `+` lines / `*** End Patch`, kept as written.
//!
//! Nothing here knows about editors; `super::render` lays the lines out under the tool call.

use serde::Deserialize;
use similar::{ChangeTag, TextDiff};

/// Unchanged lines kept around each change of an `Edit`.
pub const CONTEXT_LINES: usize = 3;

/// What a diff line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffLineKind {
    /// A file header of a multi-file patch (`src/auth.rs (update)`).
    File,
    /// A hunk separator (`@@`, `@@ every occurrence`, the patch's `@@ fn main`).
    Hunk,
    /// An unchanged line (` text`).
    Context,
    /// An added line (`+text`).
    Added,
    /// A removed line (`-text`).
    Removed,
}

/// One line of a diff: `text` is the line without its `+` / `-` / ` ` prefix (and for
/// `File` / `Hunk` the whole label).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiffLine {
    pub kind: DiffLineKind,
    pub text: String,
}

/// The change one tool call asked for.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EditDiff {
    /// Files the call touches, in order (paths as written in the input).
    pub files: Vec<String>,
    /// The diff lines of all files, in order (multi-file patches carry `File` headers).
    pub lines: Vec<DiffLine>,
    /// Counts of `Added` / `Removed` lines.
    pub added: usize,
    pub removed: usize,
}

impl EditDiff {
    fn push(&mut self, kind: DiffLineKind, text: impl Into<String>) {
        match kind {
            DiffLineKind::Added => self.added += 1,
            DiffLineKind::Removed => self.removed += 1,
            _ => {}
        }
        self.lines.push(DiffLine {
            kind,
            text: text.into(),
        });
    }

    /// `+12 −3`.
    pub fn counts(&self) -> String {
        format!("+{} −{}", self.added, self.removed)
    }
}

#[derive(Deserialize)]
struct EditInput<'a> {
    #[serde(borrow, default)]
    file_path: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    old_string: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    new_string: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    replace_all: Option<bool>,
    #[serde(borrow, default)]
    edits: Option<Vec<OneEdit<'a>>>,
    #[serde(borrow, default)]
    content: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    notebook_path: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    new_source: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    edit_mode: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    cell_id: Option<std::borrow::Cow<'a, str>>,
    /// Codex `function_call` arguments of `apply_patch`: `{ "input": "*** Begin Patch…" }`.
    #[serde(borrow, default)]
    input: Option<std::borrow::Cow<'a, str>>,
    /// Pi `edit` / `write`: `path`, `oldText`, `newText` (or `edits: [{ oldText, newText }]`).
    #[serde(borrow, default)]
    path: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default, rename = "oldText")]
    old_text: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default, rename = "newText")]
    new_text: Option<std::borrow::Cow<'a, str>>,
    /// Legacy Codex `shell { command: ["apply_patch", PATCH] }` (issue 20 item 7); any other
    /// command shape (a string, another program) is not a patch.
    #[serde(default)]
    command: Option<Command>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Command {
    Argv(Vec<String>),
    Other(serde::de::IgnoredAny),
}

impl<'a> EditInput<'a> {
    /// The Codex patch this input carries: `input`, or the legacy `shell` form's argument
    /// after `apply_patch`.
    fn patch(self) -> Option<std::borrow::Cow<'a, str>> {
        if self.input.is_some() {
            return self.input;
        }
        match self.command? {
            Command::Argv(argv) if argv.len() == 2 && argv[0] == "apply_patch" => {
                argv.into_iter().nth(1).map(std::borrow::Cow::Owned)
            }
            _ => None,
        }
    }
}

#[derive(Deserialize)]
struct OneEdit<'a> {
    #[serde(borrow, default)]
    old_string: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    new_string: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    replace_all: Option<bool>,
    /// Pi `edit`'s `edits: [{ oldText, newText }]`.
    #[serde(borrow, default, rename = "oldText")]
    old_text: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default, rename = "newText")]
    new_text: Option<std::borrow::Cow<'a, str>>,
}

impl OneEdit<'_> {
    fn old_text(&self) -> &str {
        self.old_string
            .as_deref()
            .or(self.old_text.as_deref())
            .unwrap_or("")
    }
    fn new_text(&self) -> &str {
        self.new_string
            .as_deref()
            .or(self.new_text.as_deref())
            .unwrap_or("")
    }
}

/// The diff of a tool call named `name` whose input is `input` (the JSON object as written, or
/// the decoded text of a string input such as a Codex patch). `None` when the call edits no
/// file or its input does not have the tool's shape (then the view shows the call as any
/// other).
pub fn edit_diff(name: &str, input: &str) -> Option<EditDiff> {
    let trimmed = input.trim_start();
    if !trimmed.starts_with('{') {
        return (name == "apply_patch" || trimmed.starts_with("*** Begin Patch"))
            .then(|| patch_diff(input))
            .flatten();
    }
    let v: EditInput = serde_json::from_str(input).ok()?;
    let mut d = EditDiff::default();
    match name {
        "Edit" => {
            let path = v.file_path?;
            d.files.push(path.into_owned());
            replace_hunks(
                &mut d,
                v.old_string.as_deref().unwrap_or(""),
                v.new_string.as_deref()?,
                v.replace_all == Some(true),
            );
        }
        "MultiEdit" => {
            let path = v.file_path?;
            d.files.push(path.into_owned());
            for e in v.edits? {
                replace_hunks(
                    &mut d,
                    e.old_text(),
                    e.new_text(),
                    e.replace_all == Some(true),
                );
            }
        }
        "Write" => {
            let path = v.file_path?;
            d.files.push(path.into_owned());
            let content = v.content?;
            d.push(
                DiffLineKind::Hunk,
                format!("@@ whole file · {}", lines_label(line_count(&content))),
            );
            for l in split_lines(&content) {
                d.push(DiffLineKind::Added, l);
            }
        }
        // Pi (FORMATS-2026): `edit { path, edits: [{ oldText, newText }] }` (or one
        // `oldText` / `newText`), `write { path, content }`.
        "edit" => {
            let path = v.path.or(v.file_path)?;
            d.files.push(path.into_owned());
            match v.edits {
                Some(edits) => {
                    for e in &edits {
                        replace_hunks(&mut d, e.old_text(), e.new_text(), false);
                    }
                }
                None => replace_hunks(
                    &mut d,
                    v.old_text.as_deref().unwrap_or(""),
                    v.new_text.as_deref()?,
                    false,
                ),
            }
        }
        "write" => {
            let path = v.path.or(v.file_path)?;
            d.files.push(path.into_owned());
            let content = v.content?;
            d.push(
                DiffLineKind::Hunk,
                format!("@@ whole file · {}", lines_label(line_count(&content))),
            );
            for l in split_lines(&content) {
                d.push(DiffLineKind::Added, l);
            }
        }
        "NotebookEdit" => {
            let path = v.notebook_path?;
            d.files.push(path.into_owned());
            let mode = v.edit_mode.as_deref().unwrap_or("replace");
            let cell = v
                .cell_id
                .as_deref()
                .map_or(String::new(), |c| format!(" {c}"));
            match mode {
                "delete" => d.push(DiffLineKind::Hunk, format!("@@ delete cell{cell}")),
                _ => {
                    d.push(DiffLineKind::Hunk, format!("@@ {mode} cell{cell}"));
                    for l in split_lines(v.new_source.as_deref().unwrap_or("")) {
                        d.push(DiffLineKind::Added, l);
                    }
                }
            }
        }
        _ => {
            let patch = v.patch()?;
            if name != "apply_patch" && !patch.trim_start().starts_with("*** Begin Patch") {
                return None;
            }
            return patch_diff(&patch);
        }
    }
    Some(d)
}

/// The two sides of the change one tool call asked for, for an editor's own diff (issue 11,
/// item 3): `before` and `after` are the texts the input holds, not the whole file (the file
/// itself is not read):
///
/// * `Edit`: `old_string` / `new_string`.
/// * `MultiEdit`: each edit's old / new text in order, separated on both sides by the same
///   line `⋯ edit 2 of 3 ⋯` so that the editor aligns them.
/// * `Write`: empty / `content` (a new file, or a whole file rewritten: the input does not
///   say which).
/// * `NotebookEdit`: empty / the new cell source (a deleted cell: both empty).
/// * A Codex patch: per file, context and removed lines / context and added lines, its `@@`
///   lines on both sides; an added file diffs against empty; a multi-file patch names each
///   file on both sides (`⋯ src/a.rs (update) ⋯`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EditSides {
    /// The first file the call touches, as written in the input.
    pub path: String,
    /// Text before the change, lines ending with `\n` (empty for a new file).
    pub before: String,
    /// Text after the change.
    pub after: String,
}

/// [`EditSides`] of a tool call named `name` with input `input` (as for [`edit_diff`]);
/// `None` when the call edits no file.
pub fn edit_sides(name: &str, input: &str) -> Option<EditSides> {
    let trimmed = input.trim_start();
    if !trimmed.starts_with('{') {
        return (name == "apply_patch" || trimmed.starts_with("*** Begin Patch"))
            .then(|| patch_sides(input))
            .flatten();
    }
    let v: EditInput = serde_json::from_str(input).ok()?;
    let mut s = EditSides::default();
    match name {
        "Edit" => {
            s.path = v.file_path?.into_owned();
            s.before = with_newline(v.old_string.as_deref().unwrap_or(""));
            s.after = with_newline(v.new_string.as_deref()?);
        }
        "MultiEdit" => {
            s.path = v.file_path?.into_owned();
            let edits = v.edits?;
            let n = edits.len();
            for (i, e) in edits.iter().enumerate() {
                if n > 1 {
                    let sep = format!("⋯ edit {} of {n} ⋯\n", i + 1);
                    s.before.push_str(&sep);
                    s.after.push_str(&sep);
                }
                s.before.push_str(&with_newline(e.old_text()));
                s.after.push_str(&with_newline(e.new_text()));
            }
        }
        "Write" => {
            s.path = v.file_path?.into_owned();
            s.after = with_newline(&v.content?);
        }
        "edit" => {
            s.path = v.path.or(v.file_path)?.into_owned();
            match v.edits {
                Some(edits) => {
                    let n = edits.len();
                    for (i, e) in edits.iter().enumerate() {
                        if n > 1 {
                            let sep = format!("⋯ edit {} of {n} ⋯\n", i + 1);
                            s.before.push_str(&sep);
                            s.after.push_str(&sep);
                        }
                        s.before.push_str(&with_newline(e.old_text()));
                        s.after.push_str(&with_newline(e.new_text()));
                    }
                }
                None => {
                    s.before = with_newline(v.old_text.as_deref().unwrap_or(""));
                    s.after = with_newline(v.new_text.as_deref()?);
                }
            }
        }
        "write" => {
            s.path = v.path.or(v.file_path)?.into_owned();
            s.after = with_newline(&v.content?);
        }
        "NotebookEdit" => {
            s.path = v.notebook_path?.into_owned();
            if v.edit_mode.as_deref() != Some("delete") {
                s.after = with_newline(v.new_source.as_deref().unwrap_or(""));
            }
        }
        _ => {
            let patch = v.patch()?;
            if name != "apply_patch" && !patch.trim_start().starts_with("*** Begin Patch") {
                return None;
            }
            return patch_sides(&patch);
        }
    }
    Some(s)
}

/// The sides of a Codex patch, built from its diff lines.
fn patch_sides(patch: &str) -> Option<EditSides> {
    let d = patch_diff(patch)?;
    let mut s = EditSides {
        path: d.files.first().cloned().unwrap_or_default(),
        ..EditSides::default()
    };
    for l in &d.lines {
        let both = |s: &mut EditSides, t: &str| {
            s.before.push_str(t);
            s.before.push('\n');
            s.after.push_str(t);
            s.after.push('\n');
        };
        match l.kind {
            DiffLineKind::File => both(&mut s, &format!("⋯ {} ⋯", l.text)),
            DiffLineKind::Hunk if l.text.starts_with("@@ add file") => {}
            DiffLineKind::Hunk | DiffLineKind::Context => both(&mut s, &l.text),
            DiffLineKind::Added => {
                s.after.push_str(&l.text);
                s.after.push('\n');
            }
            DiffLineKind::Removed => {
                s.before.push_str(&l.text);
                s.before.push('\n');
            }
        }
    }
    Some(s)
}

/// `s` ending with one `\n` (empty stays empty).
fn with_newline(s: &str) -> String {
    if s.is_empty() || s.ends_with('\n') {
        s.to_string()
    } else {
        format!("{s}\n")
    }
}

/// Whether a tool call may edit a file: a known editing tool, or an input holding a Codex
/// patch. Cheap (no parsing): the caller then asks [`edit_diff`] / [`edit_sides`].
pub fn is_edit_call(name: &str, raw_input: &str) -> bool {
    matches!(
        name,
        "Edit" | "MultiEdit" | "Write" | "NotebookEdit" | "apply_patch" | "edit" | "write"
    ) || memchr::memmem::find(raw_input.as_bytes(), b"*** Begin Patch").is_some()
}

/// The input of a tool call as its tool reads it: the JSON object as written, or the decoded
/// text of a string input (a Codex custom tool call's patch). `src` is the transcript's text;
/// `None` when the input span lies outside it.
pub fn call_input<'a>(
    src: &'a str,
    u: &crate::model::ToolUse,
) -> Option<std::borrow::Cow<'a, str>> {
    let raw = src.get(u.input.clone())?;
    let in_string = u.input.start > 0 && src.as_bytes()[u.input.start - 1] == b'"';
    Some(if in_string {
        crate::source::json_string::decode(raw)
    } else {
        std::borrow::Cow::Borrowed(raw)
    })
}

/// Hunks of one old -> new replacement, with [`CONTEXT_LINES`] of context.
fn replace_hunks(d: &mut EditDiff, old: &str, new: &str, all: bool) {
    let diff = TextDiff::from_lines(old, new);
    let mut any = false;
    for group in diff.grouped_ops(CONTEXT_LINES) {
        any = true;
        d.push(
            DiffLineKind::Hunk,
            if all { "@@ every occurrence" } else { "@@" },
        );
        for op in group {
            for change in diff.iter_changes(&op) {
                let text = change.value().trim_end_matches(['\n', '\r']).to_string();
                let kind = match change.tag() {
                    ChangeTag::Equal => DiffLineKind::Context,
                    ChangeTag::Delete => DiffLineKind::Removed,
                    ChangeTag::Insert => DiffLineKind::Added,
                };
                d.push(kind, text);
            }
        }
    }
    if !any {
        d.push(
            DiffLineKind::Hunk,
            "@@ no change (old and new text are equal)",
        );
    }
}

/// Parses a Codex patch (`*** Begin Patch` … `*** End Patch`). `None` when it names no file.
fn patch_diff(patch: &str) -> Option<EditDiff> {
    let mut d = EditDiff::default();
    let multi = patch
        .lines()
        .filter(|l| is_file_header(l).is_some())
        .count()
        > 1;
    for raw in patch.lines() {
        let l = raw.strip_suffix('\r').unwrap_or(raw);
        if let Some((action, path)) = is_file_header(l) {
            d.files.push(path.to_string());
            if multi {
                d.push(DiffLineKind::File, format!("{path} ({action})"));
            } else if action != "update" {
                d.push(DiffLineKind::Hunk, format!("@@ {action} file"));
            }
            continue;
        }
        if let Some(to) = l.strip_prefix("*** Move to: ") {
            d.push(DiffLineKind::Hunk, format!("@@ moved to {}", to.trim()));
            continue;
        }
        if l.starts_with("*** Begin Patch")
            || l.starts_with("*** End Patch")
            || l.starts_with("*** End of File")
        {
            continue;
        }
        if d.files.is_empty() {
            continue;
        }
        if let Some(rest) = l.strip_prefix("@@") {
            let rest = rest.trim();
            d.push(
                DiffLineKind::Hunk,
                if rest.is_empty() {
                    "@@".to_string()
                } else {
                    format!("@@ {rest}")
                },
            );
        } else if let Some(t) = l.strip_prefix('+') {
            d.push(DiffLineKind::Added, t);
        } else if let Some(t) = l.strip_prefix('-') {
            d.push(DiffLineKind::Removed, t);
        } else {
            d.push(DiffLineKind::Context, l.strip_prefix(' ').unwrap_or(l));
        }
    }
    (!d.files.is_empty()).then_some(d)
}

/// `*** Add File: p` -> `("add", p)`, likewise `update`, `delete`.
fn is_file_header(l: &str) -> Option<(&'static str, &str)> {
    for (prefix, action) in [
        ("*** Add File: ", "add"),
        ("*** Update File: ", "update"),
        ("*** Delete File: ", "delete"),
    ] {
        if let Some(p) = l.strip_prefix(prefix) {
            return Some((action, p.trim()));
        }
    }
    None
}

/// Lines of a text (a final newline ends the last line rather than opening an empty one).
fn split_lines(s: &str) -> impl Iterator<Item = &str> {
    let s = s.strip_suffix('\n').unwrap_or(s);
    s.split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .filter(move |_| !s.is_empty())
}

fn line_count(s: &str) -> usize {
    split_lines(s).count()
}

fn lines_label(n: usize) -> String {
    if n == 1 {
        "1 line".to_string()
    } else {
        format!("{n} lines")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `+x` / `-x` / ` x` / `@@…` / `== file` lines.
    fn show(d: &EditDiff) -> Vec<String> {
        d.lines
            .iter()
            .map(|l| match l.kind {
                DiffLineKind::File => format!("== {}", l.text),
                DiffLineKind::Hunk => l.text.clone(),
                DiffLineKind::Context => format!(" {}", l.text),
                DiffLineKind::Added => format!("+{}", l.text),
                DiffLineKind::Removed => format!("-{}", l.text),
            })
            .collect()
    }

    #[test]
    fn edit_with_context() {
        let input = r#"{"file_path":"/p/a.rs","old_string":"fn a() {\n    let x = 1;\n    let y = 2;\n    x + y\n}","new_string":"fn a() {\n    let x = 10;\n    let y = 2;\n    x + y\n}"}"#;
        let d = edit_diff("Edit", input).unwrap();
        assert_eq!(d.files, ["/p/a.rs"]);
        assert_eq!(
            show(&d),
            [
                "@@",
                " fn a() {",
                "-    let x = 1;",
                "+    let x = 10;",
                "     let y = 2;",
                "     x + y",
                " }"
            ]
        );
        assert_eq!(d.counts(), "+1 −1");
    }

    #[test]
    fn multi_edit_write_notebook() {
        let input = r#"{"file_path":"f.txt","edits":[{"old_string":"a","new_string":"b"},{"old_string":"c\n","new_string":"","replace_all":true}]}"#;
        assert_eq!(
            show(&edit_diff("MultiEdit", input).unwrap()),
            ["@@", "-a", "+b", "@@ every occurrence", "-c"]
        );
        let input = r##"{"file_path":"n.md","content":"# T\n\nx\n"}"##;
        let d = edit_diff("Write", input).unwrap();
        assert_eq!(show(&d), ["@@ whole file · 3 lines", "+# T", "+", "+x"]);
        let input = r#"{"notebook_path":"a.ipynb","cell_id":"c1","new_source":"print(1)","edit_mode":"insert"}"#;
        assert_eq!(
            show(&edit_diff("NotebookEdit", input).unwrap()),
            ["@@ insert cell c1", "+print(1)"]
        );
        let input =
            r#"{"notebook_path":"a.ipynb","cell_id":"c1","new_source":"","edit_mode":"delete"}"#;
        assert_eq!(
            show(&edit_diff("NotebookEdit", input).unwrap()),
            ["@@ delete cell c1"]
        );
    }

    #[test]
    fn codex_patches() {
        let patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@ fn main\n fn main() {\n-    old();\n+    new();\n }\n*** End Patch\n";
        let d = edit_diff("apply_patch", patch).unwrap();
        assert_eq!(d.files, ["src/a.rs"]);
        assert_eq!(
            show(&d),
            [
                "@@ fn main",
                " fn main() {",
                "-    old();",
                "+    new();",
                " }"
            ]
        );
        let patch = "*** Begin Patch\n*** Add File: n.txt\n+hello\n*** Delete File: old.txt\n*** Update File: a.rs\n*** Move to: b.rs\n@@\n-x\n+y\n*** End Patch";
        let d = edit_diff("apply_patch", patch).unwrap();
        assert_eq!(d.files, ["n.txt", "old.txt", "a.rs"]);
        assert_eq!(
            show(&d),
            [
                "== n.txt (add)",
                "+hello",
                "== old.txt (delete)",
                "== a.rs (update)",
                "@@ moved to b.rs",
                "@@",
                "-x",
                "+y"
            ]
        );
        // function_call arguments holding the patch.
        let args = r#"{"input":"*** Begin Patch\n*** Add File: x\n+1\n*** End Patch"}"#;
        assert_eq!(
            show(&edit_diff("apply_patch", args).unwrap()),
            ["@@ add file", "+1"]
        );
    }

    #[test]
    fn pi_edit_and_write() {
        let input = r#"{"path":"a.go","edits":[{"oldText":"x := 1\n","newText":"x := 2\n"}]}"#;
        let d = edit_diff("edit", input).unwrap();
        assert_eq!(d.files, ["a.go"]);
        assert_eq!(show(&d), ["@@", "-x := 1", "+x := 2"]);
        let s = edit_sides("edit", input).unwrap();
        assert_eq!(
            (s.before.as_str(), s.after.as_str()),
            ("x := 1\n", "x := 2\n")
        );
        let input = r#"{"path":"CLAUDE.md","content":"@AGENTS.md\n"}"#;
        assert_eq!(
            show(&edit_diff("write", input).unwrap()),
            ["@@ whole file · 1 line", "+@AGENTS.md"]
        );
        assert_eq!(edit_sides("write", input).unwrap().before, "");
        // A lowercase `edit` of another shape is not a file edit.
        assert_eq!(edit_diff("edit", r#"{"query":"x"}"#), None);
    }

    #[test]
    fn sides_for_the_editors_diff() {
        let input = r#"{"file_path":"/p/a.rs","old_string":"a\nb","new_string":"a\nc"}"#;
        assert_eq!(
            edit_sides("Edit", input).unwrap(),
            EditSides {
                path: "/p/a.rs".into(),
                before: "a\nb\n".into(),
                after: "a\nc\n".into()
            }
        );
        let input = r#"{"file_path":"f","edits":[{"old_string":"a","new_string":"b"},{"old_string":"c\n","new_string":""}]}"#;
        let s = edit_sides("MultiEdit", input).unwrap();
        assert_eq!(s.before, "⋯ edit 1 of 2 ⋯\na\n⋯ edit 2 of 2 ⋯\nc\n");
        assert_eq!(s.after, "⋯ edit 1 of 2 ⋯\nb\n⋯ edit 2 of 2 ⋯\n");
        // A new file diffs against empty.
        let s = edit_sides("Write", r##"{"file_path":"n.md","content":"# T\nx"}"##).unwrap();
        assert_eq!((s.before.as_str(), s.after.as_str()), ("", "# T\nx\n"));
        let patch = "*** Begin Patch\n*** Update File: src/a.rs\n@@ fn main\n fn main() {\n-    old();\n+    new();\n }\n*** End Patch\n";
        let s = edit_sides("apply_patch", patch).unwrap();
        assert_eq!(s.path, "src/a.rs");
        assert_eq!(s.before, "@@ fn main\nfn main() {\n    old();\n}\n");
        assert_eq!(s.after, "@@ fn main\nfn main() {\n    new();\n}\n");
        let patch = "*** Begin Patch\n*** Add File: n.txt\n+hello\n*** End Patch";
        let s = edit_sides("apply_patch", patch).unwrap();
        assert_eq!((s.before.as_str(), s.after.as_str()), ("", "hello\n"));
        let patch = "*** Begin Patch\n*** Add File: n.txt\n+hello\n*** Update File: a.rs\n@@\n-x\n+y\n*** End Patch";
        let s = edit_sides("apply_patch", patch).unwrap();
        assert_eq!(s.before, "⋯ n.txt (add) ⋯\n⋯ a.rs (update) ⋯\n@@\nx\n");
        assert_eq!(
            s.after,
            "⋯ n.txt (add) ⋯\nhello\n⋯ a.rs (update) ⋯\n@@\ny\n"
        );
        assert_eq!(edit_sides("Bash", r#"{"command":"ls"}"#), None);
        // Legacy Codex: the patch as `shell`'s argv after `apply_patch` (issue 20 item 7).
        let shell = r#"{"command":["apply_patch","*** Begin Patch\n*** Update File: a.rs\n@@\n-x\n+y\n*** End Patch\n"],"workdir":"/w"}"#;
        assert!(is_edit_call("shell", shell));
        let s = edit_sides("shell", shell).unwrap();
        assert_eq!(
            (s.path.as_str(), s.before.as_str(), s.after.as_str()),
            ("a.rs", "@@\nx\n", "@@\ny\n")
        );
        let d = edit_diff("shell", shell).unwrap();
        assert_eq!(d.files, vec!["a.rs".to_string()]);
        assert_eq!((d.added, d.removed), (1, 1));
        assert_eq!(
            edit_diff(
                "shell",
                r#"{"command":["bash","-lc","cat *** Begin Patch"]}"#
            ),
            None
        );
    }

    #[test]
    fn other_calls_and_bad_inputs_have_no_diff() {
        assert_eq!(edit_diff("Bash", r#"{"command":"ls"}"#), None);
        assert_eq!(edit_diff("Edit", r#"{"old_string":"a"}"#), None);
        assert_eq!(edit_diff("Edit", "not json"), None);
        assert_eq!(edit_diff("shell", r#"{"command":["ls"]}"#), None);
        assert_eq!(edit_diff("apply_patch", "no patch here"), None);
        assert_eq!(
            show(
                &edit_diff(
                    "Edit",
                    r#"{"file_path":"a","old_string":"x","new_string":"x"}"#
                )
                .unwrap()
            ),
            ["@@ no change (old and new text are equal)"]
        );
    }
}
