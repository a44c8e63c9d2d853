//! Workspace symbols (DESIGN.md §5): the turns of every transcript under the configured roots
//! (default `~/.claude/projects`, `~/.codex/sessions`, `~/.pi/agent/sessions`,
//! `~/.copilot/session-state`), from an index built once and kept up
//! to date file by file (the LSP layer re-indexes a file when the watcher reports it), never a
//! re-scan per query.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::analysis::{self, TurnKind};
use crate::model::Format;

/// One turn in the index.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TurnSymbol {
    pub path: PathBuf,
    /// `Turn 3: Fix the failing test`.
    pub name: String,
    /// The session: its title when it has one, else `<project dir>/<file name>`.
    pub container: String,
    pub n: usize,
    /// 0-based lines of the turn in the raw file (inclusive).
    pub start_line: usize,
    pub end_line: usize,
    pub wake: bool,
}

/// What the index knows about one file.
#[derive(Debug, Clone)]
pub struct IndexedFile {
    pub len: u64,
    pub modified: Option<SystemTime>,
    pub turns: Vec<TurnSymbol>,
}

/// The index: per file, its turns.
#[derive(Debug, Clone, Default)]
pub struct WorkspaceIndex {
    files: BTreeMap<PathBuf, IndexedFile>,
}

/// Files larger than this are indexed from their first 256 MiB only.
const MAX_INDEX_BYTES: u64 = 256 * 1024 * 1024;

impl WorkspaceIndex {
    pub fn new() -> WorkspaceIndex {
        WorkspaceIndex::default()
    }

    /// Number of indexed files.
    pub fn file_count(&self) -> usize {
        self.files.len()
    }

    /// Number of indexed turns.
    pub fn turn_count(&self) -> usize {
        self.files.values().map(|f| f.turns.len()).sum()
    }

    /// Drops a file (deleted, or outside the roots now).
    pub fn remove(&mut self, path: &Path) {
        self.files.remove(path);
    }

    /// Drops every file not under one of `roots`.
    pub fn retain_roots(&mut self, roots: &[PathBuf]) {
        self.files
            .retain(|p, _| roots.iter().any(|r| p.starts_with(r)));
    }

    /// True when the file's size and modification time are those already indexed.
    pub fn is_current(&self, path: &Path) -> bool {
        let Ok(md) = std::fs::metadata(path) else {
            return false;
        };
        self.files
            .get(path)
            .is_some_and(|f| f.len == md.len() && f.modified == md.modified().ok())
    }

    /// Inserts the result of [`index_file`].
    pub fn insert(&mut self, path: PathBuf, file: IndexedFile) {
        self.files.insert(path, file);
    }

    /// Turns matching `query` (case-insensitive; every whitespace-separated word must occur in
    /// the name or the container), at most `limit`, best first: matches in the name before
    /// matches only in the container, then file order.
    pub fn query(&self, query: &str, limit: usize) -> Vec<&TurnSymbol> {
        let words: Vec<String> = query.split_whitespace().map(|w| w.to_lowercase()).collect();
        let mut name_hits = Vec::new();
        let mut other_hits = Vec::new();
        for f in self.files.values() {
            for t in &f.turns {
                let name = t.name.to_lowercase();
                let container = t.container.to_lowercase();
                if words.iter().all(|w| name.contains(w.as_str())) {
                    name_hits.push(t);
                } else if words
                    .iter()
                    .all(|w| name.contains(w.as_str()) || container.contains(w.as_str()))
                {
                    other_hits.push(t);
                }
                if name_hits.len() >= limit {
                    return name_hits;
                }
            }
        }
        name_hits.extend(other_hits);
        name_hits.truncate(limit);
        name_hits
    }
}

/// What lies under the roots, as the index and the file watcher both see it (issue 8 defect
/// 8: they must agree): directories recursively, never through a symlink (to a directory or a
/// file), so nothing outside a root is indexed or watched; a directory that cannot be read is
/// listed in `unreadable` and skipped, the rest of its root still walked.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Tree {
    /// Every directory walked, roots included (in walk order).
    pub dirs: Vec<PathBuf>,
    /// Every `*.jsonl` regular file, sorted.
    pub files: Vec<PathBuf>,
    /// Directories that could not be listed, with the OS's reason.
    pub unreadable: Vec<(PathBuf, String)>,
}

/// Walks the roots (see [`Tree`]). Missing roots are skipped.
pub fn walk(roots: &[PathBuf]) -> Tree {
    let mut tree = Tree::default();
    let mut stack: Vec<PathBuf> = roots.iter().rev().cloned().collect();
    while let Some(dir) = stack.pop() {
        let rd = match std::fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) => {
                if e.kind() != std::io::ErrorKind::NotFound {
                    tree.unreadable.push((dir, e.to_string()));
                }
                continue;
            }
        };
        tree.dirs.push(dir);
        for e in rd.filter_map(Result::ok) {
            // `DirEntry::file_type` does not follow symlinks.
            let Ok(ft) = e.file_type() else { continue };
            let p = e.path();
            if ft.is_dir() {
                stack.push(p);
            } else if ft.is_file() && p.extension().is_some_and(|x| x == "jsonl") {
                tree.files.push(p);
            }
        }
    }
    tree.files.sort();
    tree
}

/// Every `*.jsonl` file under the roots ([`walk`]), sorted.
pub fn scan_roots(roots: &[PathBuf]) -> Vec<PathBuf> {
    walk(roots).files
}

/// True when `path` is a `*.jsonl` file [`walk`] would list: a regular file (not a symlink)
/// under one of `roots` with no symlink between the root and it. A path that no longer
/// exists is not indexable (its entry is removed).
pub fn indexable(roots: &[PathBuf], path: &Path) -> bool {
    if path.extension().is_none_or(|x| x != "jsonl") {
        return false;
    }
    let Some(root) = roots.iter().find(|r| path.starts_with(r)) else {
        return false;
    };
    let Ok(md) = std::fs::symlink_metadata(path) else {
        return false;
    };
    if !md.file_type().is_file() {
        return false;
    }
    path.ancestors()
        .skip(1)
        .take_while(|a| a.starts_with(root) && *a != root.as_path())
        .all(|a| std::fs::symlink_metadata(a).is_ok_and(|m| m.file_type().is_dir()))
}

/// Reads and analyses one file into its index entry. Files that are not transcripts give an
/// entry with no turns. Errors are I/O errors reading the file.
pub fn index_file(path: &Path, options: &analysis::Options) -> std::io::Result<IndexedFile> {
    // The one loader: regular files only, invalid UTF-8 replaced as everywhere else.
    let loaded = crate::source::load::load(path, MAX_INDEX_BYTES)?;
    let transcript = crate::ide::host::read_text(&loaded.text, &loaded.invalid, loaded.compressed);
    let md = loaded.metadata;
    let text = loaded.text;
    let mut turns = Vec::new();
    if transcript.format() != Format::Unknown {
        let a = analysis::analyze(&transcript, &text, options);
        let container = transcript
            .meta
            .title
            .as_deref()
            .map(|t| crate::analysis::text::show_invisible(t).into_owned())
            .unwrap_or_else(|| {
                let parent = path
                    .parent()
                    .and_then(Path::file_name)
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let name = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                format!("{parent}/{name}")
            });
        for t in a.turns.iter().filter(|t| t.kind != TurnKind::Preamble) {
            let name = if t.title.is_empty() {
                format!("Turn {}", t.n)
            } else {
                format!("Turn {}: {}", t.n, t.title)
            };
            turns.push(TurnSymbol {
                path: path.to_path_buf(),
                name,
                container: container.clone(),
                n: t.n,
                start_line: t.start_line,
                end_line: t.end_line,
                wake: t.kind == TurnKind::Wake,
            });
        }
    }
    Ok(IndexedFile {
        len: md.len(),
        modified: md.modified().ok(),
        turns,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(name: &str, container: &str) -> TurnSymbol {
        TurnSymbol {
            path: PathBuf::from("/x.jsonl"),
            name: name.into(),
            container: container.into(),
            n: 1,
            start_line: 0,
            end_line: 0,
            wake: false,
        }
    }

    #[test]
    fn query_ranks_name_matches_first() {
        let mut idx = WorkspaceIndex::new();
        idx.insert(
            PathBuf::from("/a.jsonl"),
            IndexedFile {
                len: 0,
                modified: None,
                turns: vec![
                    sym("Turn 1: deploy app", "fix things"),
                    sym("Turn 2: Fix the test", "x"),
                ],
            },
        );
        let got: Vec<&str> = idx
            .query("fix", 10)
            .iter()
            .map(|t| t.name.as_str())
            .collect();
        assert_eq!(got, vec!["Turn 2: Fix the test", "Turn 1: deploy app"]);
        let got: Vec<&str> = idx
            .query("FIX test", 10)
            .iter()
            .map(|t| t.name.as_str())
            .collect();
        assert_eq!(got, vec!["Turn 2: Fix the test"]);
        assert_eq!(idx.query("", 1).len(), 1);
    }
}
