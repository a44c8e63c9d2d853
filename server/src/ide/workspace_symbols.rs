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

/// Every `*.jsonl` file under the roots (recursively; symlinked directories are not followed),
/// sorted. Missing roots are skipped.
pub fn scan_roots(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = roots.to_vec();
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.filter_map(Result::ok) {
            let Ok(ft) = e.file_type() else { continue };
            let p = e.path();
            if ft.is_dir() {
                stack.push(p);
            } else if ft.is_file() && p.extension().is_some_and(|x| x == "jsonl") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Reads and analyses one file into its index entry. Files that are not transcripts give an
/// entry with no turns. Errors are I/O errors reading the file.
pub fn index_file(path: &Path, options: &analysis::Options) -> std::io::Result<IndexedFile> {
    use std::io::Read;
    let md = std::fs::metadata(path)?;
    let mut bytes = Vec::with_capacity(md.len().min(MAX_INDEX_BYTES) as usize);
    std::fs::File::open(path)?
        .take(MAX_INDEX_BYTES)
        .read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes);
    let transcript = crate::formats::read(&text);
    let mut turns = Vec::new();
    if transcript.format() != Format::Unknown {
        let a = analysis::analyze(&transcript, &text, options);
        let container = transcript.meta.title.clone().unwrap_or_else(|| {
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
