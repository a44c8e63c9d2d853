//! From a source file to the sessions that wrote it (issue 22 items 3 and 4), in plain data:
//!
//! * [`file_history`]: every indexed session and turn that changed a file, newest first, from
//!   the index alone ([`SessionEntry::changes`]; no transcript is read).
//! * [`blame`]: the line ranges of a file's current text that an agent wrote and that are
//!   still there, attributed to the newest turn whose added lines they equal; reads again
//!   (from disk) only the sessions whose entry lists the file, and in them only the turns that
//!   changed it.
//!
//! Paths are compared as absolute paths with symlinks resolved ([`same_file`]): both sides are
//! canonicalised when the file exists, else normalised lexically (`a/./b/../c` → `a/c`). The
//! paths in the index are already absolute (relative Codex patch paths joined to the
//! session's `cwd` by `view::changes::absolute`).

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{ChangedFile, SessionEntry, SessionIndex, iso, summary};
use crate::analysis::{Analysis, TurnKind};
use crate::model::{BlockKind, Transcript};
use crate::view::changes::{self, FileAction};
use crate::view::diff::DiffLineKind;

/// One turn that changed the file (`transcript/fileHistory`, `transcript-ls history`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryEntry {
    /// The transcript file.
    pub session: PathBuf,
    /// The agent: the transcript's format name (`claude-code`, `codex`, `pi`, `copilot-cli`).
    pub agent: &'static str,
    /// The session's title (`SessionEntry::display_title`).
    pub session_title: String,
    /// 1-based turn number and its title (first prompt line, at most 80 characters).
    pub turn: usize,
    pub turn_title: String,
    /// The turn's time (epoch ms; ISO 8601 UTC in `time`), else the session file's
    /// modification time; `None` when neither is known.
    pub time_ms: Option<i64>,
    pub time: Option<String>,
    pub action: FileAction,
    /// Lines added and removed by the turn's net change of the file.
    pub added: u32,
    pub removed: u32,
    /// 0-based line of the turn's opening record in the transcript.
    pub line: usize,
    /// The path as the session names it (absolute; may differ from the query by symlinks or
    /// `..`).
    pub path: String,
}

/// A range of the file's current lines an agent wrote (`transcript/blame`,
/// `transcript-ls blame`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BlameRange {
    /// 0-based first and last line of the range (inclusive) in the current text.
    pub start: usize,
    pub end: usize,
    /// The transcript file.
    pub session: PathBuf,
    pub agent: &'static str,
    pub session_title: String,
    pub turn: usize,
    pub turn_title: String,
    /// As [`HistoryEntry::time_ms`].
    pub time_ms: Option<i64>,
    pub time: Option<String>,
    /// The first non-empty line of the turn's prompt (at most [`PROMPT_LINE_MAX`]
    /// characters); empty when the turn has none (a wake-up).
    pub prompt: String,
    /// 0-based line of the turn's opening record in the transcript.
    pub line: usize,
    /// Lines the turn's net change of the file added and removed.
    pub added: u32,
    pub removed: u32,
}

/// `2026-05-01 10:22` (UTC) of a time in epoch ms; `-` when unknown.
pub fn short_time(ms: Option<i64>) -> String {
    ms.and_then(|ms| jiff::Timestamp::from_millisecond(ms).ok())
        .map(|ts| ts.strftime("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_else(|| "-".to_string())
}

impl HistoryEntry {
    /// One line for a picker or a terminal:
    /// `2026-05-01 10:22  claude-code  "Fix the parser"  turn 3 "Skip empty fields"  M +12 −3`
    /// (`A` created, `M` modified, `D` deleted; times UTC).
    pub fn label(&self) -> String {
        let action = match self.action {
            FileAction::Created => "A",
            FileAction::Modified => "M",
            FileAction::Deleted => "D",
        };
        format!(
            "{}  {}  \"{}\"  turn {} \"{}\"  {action} +{} −{}",
            short_time(self.time_ms),
            self.agent,
            self.session_title,
            self.turn,
            self.turn_title,
            self.added,
            self.removed
        )
    }
}

impl BlameRange {
    /// One line for a decoration or a terminal, after the range itself:
    /// `claude-code  "Fix the parser"  turn 3  2026-05-01 10:22  +12 −3` (the session
    /// title; the turn's counts for the file; times UTC).
    pub fn label(&self) -> String {
        format!(
            "{}  \"{}\"  turn {}  {}  +{} −{}",
            self.agent,
            self.session_title,
            self.turn,
            short_time(self.time_ms),
            self.added,
            self.removed
        )
    }
}

/// The part of `index` that [`blame`] needs for `path`: the entries that list it (a small
/// copy, so that a caller holding the index behind a lock can release it before the
/// sessions are read again).
pub fn touching(index: &SessionIndex, path: &Path) -> SessionIndex {
    let m = Matcher::new(path);
    let mut out = SessionIndex::new();
    for (p, e) in index.entries() {
        if e.changes.iter().any(|c| m.matches(&c.path)) {
            out.insert(p.clone(), e.clone());
        }
    }
    out
}

/// The prompt line kept in a [`BlameRange`] is cut to this many characters.
pub const PROMPT_LINE_MAX: usize = 200;

/// A run of one line is attributed only when that line has at least this many characters
/// (trimmed; issue 22 item 4: "blocks, not lone `}` or blank lines").
pub const LONE_LINE_MIN: usize = 24;

/// Why [`blame`] could not answer.
#[derive(Debug)]
pub enum HistoryError {
    /// The path is not absolute (the caller resolves it first).
    NotAbsolute(PathBuf),
    /// The file's text was not given and could not be read.
    Read(PathBuf, std::io::Error),
}

impl std::fmt::Display for HistoryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HistoryError::NotAbsolute(p) => {
                write!(f, "not an absolute path: {}", p.display())
            }
            HistoryError::Read(p, e) => write!(f, "cannot read {}: {e}", p.display()),
        }
    }
}

impl std::error::Error for HistoryError {}

/// The two forms a path is compared by: lexical (absolute, normalised) and, when the file
/// exists, canonical (symlinks resolved).
#[derive(Debug, Clone)]
struct Target {
    lexical: String,
    canonical: Option<String>,
    names: Vec<String>,
}

impl Target {
    fn new(path: &Path) -> Target {
        let lexical = changes::absolute(None, &path.to_string_lossy());
        let canonical = std::fs::canonicalize(path)
            .ok()
            .map(|p| p.to_string_lossy().into_owned());
        let mut names: Vec<String> = [Some(&lexical), canonical.as_ref()]
            .into_iter()
            .flatten()
            .filter_map(|p| p.rsplit('/').next().map(str::to_string))
            .collect();
        names.dedup();
        Target {
            lexical,
            canonical,
            names,
        }
    }
}

/// Compares index paths with one target, canonicalising each distinct index path at most once
/// (and only those whose file name is the target's: a symlinked folder keeps the name, a
/// symlinked file is named by either side).
struct Matcher {
    target: Target,
    seen: RefCell<HashMap<String, bool>>,
}

impl Matcher {
    fn new(path: &Path) -> Matcher {
        Matcher {
            target: Target::new(path),
            seen: RefCell::new(HashMap::new()),
        }
    }

    fn matches(&self, p: &str) -> bool {
        if let Some(&m) = self.seen.borrow().get(p) {
            return m;
        }
        let m = same_file(&self.target, p);
        self.seen.borrow_mut().insert(p.to_string(), m);
        m
    }
}

fn same_file(t: &Target, p: &str) -> bool {
    let lex = changes::absolute(None, p);
    if lex == t.lexical || t.canonical.as_deref() == Some(lex.as_str()) {
        return true;
    }
    let name = lex.rsplit('/').next().unwrap_or("");
    if !t.names.iter().any(|n| n == name) {
        return false;
    }
    let Some(want) = t.canonical.as_deref() else {
        return false;
    };
    std::fs::canonicalize(&lex).is_ok_and(|c| c.to_string_lossy() == want)
}

/// The time a turn is sorted by: its own, else the session file's modification time.
fn turn_time(e: &SessionEntry, c: &ChangedFile) -> Option<i64> {
    c.ms.or(e.modified_ms)
}

/// Every session and turn of `index` that changed `path` (absolute), newest first (by turn
/// time, else the session's modification time; then by session path and turn number, newest
/// turn first). A relative path matches nothing; an unknown file gives an empty list.
pub fn file_history(index: &SessionIndex, path: &Path) -> Vec<HistoryEntry> {
    if !path.is_absolute() {
        return Vec::new();
    }
    let m = Matcher::new(path);
    let mut out = Vec::new();
    for (session, e) in index.entries() {
        for c in e.changes.iter().filter(|c| m.matches(&c.path)) {
            let time_ms = turn_time(e, c);
            out.push(HistoryEntry {
                session: session.clone(),
                agent: e.format.as_str(),
                session_title: e.display_title(session),
                turn: c.turn,
                turn_title: e.turn_title(c.turn).unwrap_or("").to_string(),
                time_ms,
                time: time_ms.and_then(iso),
                action: c.action,
                added: c.added,
                removed: c.removed,
                line: c.line,
                path: c.path.to_string(),
            });
        }
    }
    out.sort_by(|a, b| {
        b.time_ms
            .cmp(&a.time_ms)
            .then_with(|| a.session.cmp(&b.session))
            .then_with(|| b.turn.cmp(&a.turn))
    });
    out
}

/// One turn's added blocks for the file, and what a range attributed to it carries.
struct Source {
    /// Sort key: newer wins (time, then turn number; then the later session path).
    key: (Option<i64>, usize, PathBuf),
    range: BlameRange,
    /// Runs of consecutive added lines (trailing white space trimmed), one per run of `+`
    /// lines of a hunk.
    blocks: Vec<Vec<String>>,
}

/// The ranges of `text` (the file's current text; `None`: read from disk) that an agent
/// wrote and that are still there (issue 22 item 4). The sessions whose index entry lists
/// `path` are read again, and in each the turns that changed it: every run of consecutive
/// added lines of one hunk is a block. A run of consecutive lines of `text` equal (trailing
/// white space aside) to consecutive lines of one block is attributed to that turn when it
/// holds at least two significant lines (not blank, not only brackets and punctuation) or one
/// line of at least [`LONE_LINE_MIN`] characters; where several turns match a line, the
/// newest wins. A line changed since (no longer equal) is not attributed. Ranges are in line
/// order, consecutive lines of one turn merged. A session that cannot be read is skipped.
pub fn blame(
    index: &SessionIndex,
    path: &Path,
    text: Option<&str>,
) -> Result<Vec<BlameRange>, HistoryError> {
    if !path.is_absolute() {
        return Err(HistoryError::NotAbsolute(path.to_path_buf()));
    }
    let m = Matcher::new(path);
    let mut wanted: Vec<(&PathBuf, &SessionEntry, Vec<usize>)> = Vec::new();
    for (session, e) in index.entries() {
        let mut turns: Vec<usize> = e
            .changes
            .iter()
            .filter(|c| m.matches(&c.path))
            .map(|c| c.turn)
            .collect();
        turns.dedup();
        if !turns.is_empty() {
            wanted.push((session, e, turns));
        }
    }
    if wanted.is_empty() {
        return Ok(Vec::new());
    }
    let read;
    let text = match text {
        Some(t) => t,
        None => {
            let bytes =
                std::fs::read(path).map_err(|e| HistoryError::Read(path.to_path_buf(), e))?;
            read = String::from_utf8_lossy(&bytes).into_owned();
            &read
        }
    };
    let mut sources = Vec::new();
    for (session, e, turns) in wanted {
        sources.extend(sources_of(session, e, &turns, &m));
    }
    Ok(attribute(text, &sources))
}

/// The turns `turns` of the session at `session`, read again, as blame sources.
fn sources_of(session: &Path, e: &SessionEntry, turns: &[usize], m: &Matcher) -> Vec<Source> {
    let Ok(loaded) = crate::source::load::load(session, super::disk::MAX_INDEX_BYTES) else {
        return Vec::new();
    };
    let beside = crate::formats::agents::has_beside(session);
    let (t, a) = summary::read_text(&loaded.text, |t| {
        if beside {
            crate::formats::agents::apply_beside(t, session);
        }
    });
    let src: &str = &loaded.text;
    let result_of = |en: usize, b: usize| changes::pair_result(&a, en, b);
    let mut out = Vec::new();
    for (ti, turn) in a.turns.iter().enumerate() {
        if turn.kind == TurnKind::Preamble || !turns.contains(&turn.n) {
            continue;
        }
        let Some(tc) = changes::turn_changes(&t, &a, src, ti, &result_of) else {
            continue;
        };
        let mut blocks = Vec::new();
        for f in tc.files.iter().filter(|f| m.matches(&f.path)) {
            for h in &f.hunks {
                let mut cur: Vec<String> = Vec::new();
                for l in &h.lines {
                    if l.kind == DiffLineKind::Added {
                        cur.push(l.text.trim_end().to_string());
                    } else if !cur.is_empty() {
                        blocks.push(std::mem::take(&mut cur));
                    }
                }
                if !cur.is_empty() {
                    blocks.push(cur);
                }
            }
        }
        if blocks.is_empty() {
            continue;
        }
        let c = e.changes.iter().find(|c| c.turn == turn.n);
        let time_ms = c.and_then(|c| turn_time(e, c)).or(e.modified_ms);
        let line = c.map_or(turn.start_line, |c| c.line);
        let (added, removed) = e
            .changes
            .iter()
            .filter(|c| c.turn == turn.n && m.matches(&c.path))
            .fold((0u32, 0u32), |(a, r), c| {
                (a.saturating_add(c.added), r.saturating_add(c.removed))
            });
        out.push(Source {
            key: (time_ms, turn.n, session.to_path_buf()),
            range: BlameRange {
                start: 0,
                end: 0,
                session: session.to_path_buf(),
                agent: e.format.as_str(),
                session_title: e.display_title(session),
                turn: turn.n,
                turn_title: turn.title.clone(),
                time_ms,
                time: time_ms.and_then(iso),
                prompt: prompt_line(&t, src, &a, ti),
                line,
                added,
                removed,
            },
            blocks,
        });
    }
    out
}

/// The first non-empty line of turn `ti`'s prompt (its opening record's first text block).
fn prompt_line(t: &Transcript, src: &str, a: &Analysis, ti: usize) -> String {
    let Some(e) = a.turns[ti].opener.and_then(|i| t.entries.get(i)) else {
        return String::new();
    };
    let text = e.blocks.iter().find_map(|b| match &b.kind {
        BlockKind::Text { text } => src
            .get(text.raw.clone())
            .map(|raw| crate::source::json_string::decode(raw).into_owned()),
        _ => None,
    });
    text.as_deref()
        .and_then(|s| s.lines().map(str::trim).find(|l| !l.is_empty()))
        .map(|l| l.chars().take(PROMPT_LINE_MAX).collect())
        .unwrap_or_default()
}

/// Not blank and not only brackets and punctuation.
fn significant(line: &str) -> bool {
    line.chars().any(char::is_alphanumeric)
}

/// The attribution of `text`'s lines to `sources` (see [`blame`]).
fn attribute(text: &str, sources: &[Source]) -> Vec<BlameRange> {
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    // Line text → (source, block, position) of every added line.
    let mut at: HashMap<&str, Vec<(usize, usize, usize)>> = HashMap::new();
    for (si, s) in sources.iter().enumerate() {
        for (bi, b) in s.blocks.iter().enumerate() {
            for (j, l) in b.iter().enumerate() {
                at.entry(l.as_str()).or_default().push((si, bi, j));
            }
        }
    }
    let mut owner: Vec<Option<usize>> = vec![None; lines.len()];
    for i in 0..lines.len() {
        let Some(cands) = at.get(lines[i]) else {
            continue;
        };
        for &(si, bi, j) in cands {
            let block = &sources[si].blocks[bi];
            // Only from the start of a run (a run met in the middle was extended already).
            if i > 0 && j > 0 && lines[i - 1] == block[j - 1] {
                continue;
            }
            let mut k = 0;
            while i + k < lines.len() && j + k < block.len() && lines[i + k] == block[j + k] {
                k += 1;
            }
            let run = &lines[i..i + k];
            let strong = run.iter().filter(|l| significant(l)).count();
            let long = run
                .iter()
                .any(|l| significant(l) && l.trim().chars().count() >= LONE_LINE_MIN);
            if strong < 2 && !long {
                continue;
            }
            for o in &mut owner[i..i + k] {
                if o.is_none_or(|cur| sources[si].key > sources[cur].key) {
                    *o = Some(si);
                }
            }
        }
    }
    let mut out: Vec<BlameRange> = Vec::new();
    for (i, o) in owner.iter().enumerate() {
        let Some(si) = *o else {
            continue;
        };
        if let Some(last) = out.last_mut()
            && last.end + 1 == i
            && i > 0
            && owner[i - 1] == Some(si)
        {
            last.end = i;
            continue;
        }
        let mut r = sources[si].range.clone();
        r.start = i;
        r.end = i;
        out.push(r);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::disk;

    fn fixture() -> (tempfile::TempDir, SessionIndex, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/history");
        let root = crate::testing::install_history_fixture(&fixture, dir.path()).unwrap();
        let mut idx = SessionIndex::new();
        for p in disk::scan_roots(std::slice::from_ref(&root)) {
            disk::update(&mut idx, &p).unwrap();
        }
        assert_eq!(idx.session_count(), 2);
        let app = dir.path().join("src/app.py");
        (dir, idx, app)
    }

    fn show(h: &[HistoryEntry], dir: &Path) -> Vec<String> {
        let d = dir.to_string_lossy();
        h.iter()
            .map(|e| {
                format!(
                    "{} | {} | {} | turn {} {} | {} | {:?} +{} -{} | line {} | {}",
                    e.session.file_name().unwrap().to_string_lossy(),
                    e.agent,
                    e.session_title,
                    e.turn,
                    e.turn_title,
                    e.time.as_deref().unwrap_or("-"),
                    e.action,
                    e.added,
                    e.removed,
                    e.line,
                    e.path.replace(&*d, "$DIR"),
                )
            })
            .collect()
    }

    const HISTORY: [&str; 3] = [
        "rollout-2026-05-02T09-00-00-019e3c00-1111-7c01-9d02-4b72d3e5c6f8.jsonl | codex | Add a count helper | turn 1 Add a count helper | 2026-05-02T09:00:00.200Z | Modified +4 -0 | line 3 | $DIR/src/app.py",
        "5a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d.jsonl | claude-code | Write a CSV line parser in src/app.py | turn 2 Skip empty fields | 2026-05-01T10:22:00.000Z | Modified +1 -1 | line 4 | $DIR/src/app.py",
        "5a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d.jsonl | claude-code | Write a CSV line parser in src/app.py | turn 1 Write a CSV line parser in src/app.py | 2026-05-01T10:00:00.000Z | Created +11 -0 | line 0 | $DIR/src/app.py",
    ];

    /// Newest first; the Codex patch's relative `src/app.py` is resolved against its `cwd`.
    #[test]
    fn history_is_newest_first_with_relative_codex_paths_resolved() {
        let (dir, idx, app) = fixture();
        assert_eq!(show(&file_history(&idx, &app), dir.path()), HISTORY);
        // The same file named with `.` and `..`.
        let odd = dir.path().join("src/./../src/app.py");
        assert_eq!(show(&file_history(&idx, &odd), dir.path()), HISTORY);
        // Another file, a relative path: nothing.
        assert!(file_history(&idx, &dir.path().join("src/other.py")).is_empty());
        assert!(file_history(&idx, Path::new("src/app.py")).is_empty());
    }

    /// A path through a symlinked folder names the same file.
    #[cfg(unix)]
    #[test]
    fn history_resolves_symlinks() {
        let (dir, idx, _) = fixture();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(dir.path().join("src"), &link).unwrap();
        assert_eq!(
            show(&file_history(&idx, &link.join("app.py")), dir.path()),
            HISTORY
        );
        // And a symlink to the file itself, under another name.
        let file_link = dir.path().join("main.py");
        std::os::unix::fs::symlink(dir.path().join("src/app.py"), &file_link).unwrap();
        assert_eq!(show(&file_history(&idx, &file_link), dir.path()).len(), 3);
    }

    fn show_blame(r: &[BlameRange]) -> Vec<String> {
        r.iter()
            .map(|b| {
                format!(
                    "{}-{} {} turn {} {:?} {:?} line {}",
                    b.start, b.end, b.agent, b.turn, b.turn_title, b.prompt, b.line
                )
            })
            .collect()
    }

    /// The fixture's file: each block to the turn that wrote it, the line a person changed
    /// since to none.
    #[test]
    fn blame_of_the_fixture_file() {
        let (_dir, idx, app) = fixture();
        let got = show_blame(&blame(&idx, &app, None).unwrap());
        assert_eq!(
            got,
            [
                "0-4 claude-code turn 1 \"Write a CSV line parser in src/app.py\" \"Write a CSV line parser in src/app.py\" line 0",
                "5-5 claude-code turn 2 \"Skip empty fields\" \"Skip empty fields\" line 4",
                "6-9 claude-code turn 1 \"Write a CSV line parser in src/app.py\" \"Write a CSV line parser in src/app.py\" line 0",
                "11-14 codex turn 1 \"Add a count helper\" \"Add a count helper\" line 3",
            ]
        );
        // The buffer's text wins over the file's: a line edited in the editor is no longer
        // attributed, and a file no session changed has no ranges.
        let text = std::fs::read_to_string(&app)
            .unwrap()
            .replace("def parse(line):", "def parse(row):");
        let got = show_blame(&blame(&idx, &app, Some(&text)).unwrap());
        // What is left of the first block (`import sys`, two blank lines; `parts = …`, 23
        // characters) is too little to attribute.
        assert_eq!(got.len(), 3, "{got:#?}");
        assert!(got[0].starts_with("5-5 claude-code turn 2 "), "{got:#?}");
        let other = app.with_file_name("other.py");
        assert!(blame(&idx, &other, None).unwrap().is_empty());
        assert!(matches!(
            blame(&idx, Path::new("app.py"), None),
            Err(HistoryError::NotAbsolute(_))
        ));
    }

    fn source(turn: usize, ms: i64, blocks: &[&[&str]]) -> Source {
        Source {
            key: (Some(ms), turn, PathBuf::from("/s.jsonl")),
            range: BlameRange {
                start: 0,
                end: 0,
                session: PathBuf::from("/s.jsonl"),
                agent: "claude-code",
                session_title: "s".into(),
                turn,
                turn_title: format!("turn {turn}"),
                time_ms: Some(ms),
                time: iso(ms),
                prompt: String::new(),
                line: 0,
                added: 0,
                removed: 0,
            },
            blocks: blocks
                .iter()
                .map(|b| b.iter().map(|l| l.to_string()).collect())
                .collect(),
        }
    }

    fn ranges(text: &str, sources: &[Source]) -> Vec<(usize, usize, usize)> {
        attribute(text, sources)
            .iter()
            .map(|r| (r.start, r.end, r.turn))
            .collect()
    }

    #[test]
    fn a_block_is_attributed_a_lone_brace_is_not() {
        let s = [source(
            1,
            1000,
            &[
                &["fn a() {", "    1", "}"],
                &["}"],
                &["", "x"],
                &["let total_of_everything = 42;"],
            ],
        )];
        // The block, where it still stands.
        assert_eq!(ranges("// top\nfn a() {\n    1\n}\n", &s), [(1, 3, 1)]);
        // A lone `}`, a blank line and a short line: none.
        assert_eq!(ranges("}\n\nx\n", &s), []);
        // One long line is enough.
        assert_eq!(ranges("let total_of_everything = 42;\n", &s), [(0, 0, 1)]);
        // Trailing white space and CRLF do not matter.
        assert_eq!(ranges("fn a() {  \r\n    1\r\n}\r\n", &s), [(0, 2, 1)]);
    }

    #[test]
    fn a_line_a_person_changed_is_not_attributed() {
        let s = [source(
            1,
            1000,
            &[&["def f(x):", "    y = x + 1", "    return y * 2", "# end"]],
        )];
        assert_eq!(
            ranges("def f(x):\n    y = x + 1\n    return y * 3\n# end\n", &s),
            // The two first lines still match; `return` changed; `# end` alone is short.
            [(0, 1, 1)]
        );
    }

    #[test]
    fn the_newest_of_two_turns_wins() {
        let block: &[&str] = &["def f(x):", "    return x"];
        let old = source(1, 1000, &[block]);
        let new = source(
            2,
            2000,
            &[&["def f(x):", "    return x", "", "def g():", "    pass"]],
        );
        let text = "def f(x):\n    return x\n\ndef g():\n    pass\n";
        assert_eq!(ranges(text, &[old, new]), [(0, 4, 2)]);
        // In whichever order the sources come.
        let old = source(1, 1000, &[block]);
        let new = source(
            2,
            2000,
            &[&["def f(x):", "    return x", "", "def g():", "    pass"]],
        );
        assert_eq!(ranges(text, &[new, old]), [(0, 4, 2)]);
        // An older turn's block that a newer one does not cover keeps its lines.
        let old = source(1, 1000, &[&["import os", "import sys"]]);
        let new = source(2, 2000, &[block]);
        assert_eq!(
            ranges(
                "import os\nimport sys\ndef f(x):\n    return x\n",
                &[old, new]
            ),
            [(0, 1, 1), (2, 3, 2)]
        );
    }
}
