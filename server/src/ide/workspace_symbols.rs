//! Workspace symbols (DESIGN.md §5): the turns of every transcript under the configured roots
//! (default `~/.claude/projects`, `~/.codex/sessions`, `~/.pi/agent/sessions`,
//! `~/.copilot/session-state`), answered from the session index (`crate::index`, built once and
//! kept current file by file by the watcher), never a re-scan per query. Also what lies under
//! the roots ([`walk`], [`indexable`]), as the index and the file watcher both see it.

use std::path::{Path, PathBuf};

use crate::index::{SessionIndex, TurnSymbol};

/// One turn matching a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnHit<'a> {
    pub path: &'a Path,
    /// `Turn 3: Fix the failing test` (`Turn 3` when the turn has no title).
    pub name: String,
    /// The session's title (its own title, else its first prompt, else the file name).
    pub container: String,
    pub turn: &'a TurnSymbol,
}

/// Turns matching `query` (case-insensitive; every whitespace-separated word must occur in the
/// turn's name or its session's title), at most `limit`, best first: matches in the name
/// before matches that need the session title, then path and turn order.
pub fn query<'a>(index: &'a SessionIndex, query: &str, limit: usize) -> Vec<TurnHit<'a>> {
    let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    let mut name_hits = Vec::new();
    let mut other_hits = Vec::new();
    for (path, entry) in index.entries() {
        if entry.symbols.is_empty() {
            continue;
        }
        let container = entry.display_title(path);
        let container_lc = container.to_lowercase();
        for turn in &entry.symbols {
            let name = if turn.title.is_empty() {
                format!("Turn {}", turn.n)
            } else {
                format!("Turn {}: {}", turn.n, turn.title)
            };
            let name_lc = name.to_lowercase();
            let hit = || TurnHit {
                path,
                name: name.clone(),
                container: container.clone(),
                turn,
            };
            if words.iter().all(|w| name_lc.contains(w.as_str())) {
                name_hits.push(hit());
            } else if words
                .iter()
                .all(|w| name_lc.contains(w.as_str()) || container_lc.contains(w.as_str()))
            {
                other_hits.push(hit());
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

/// What lies under the roots, as the index and the file watcher both see it (issue 8 defect
/// 8: they must agree): directories recursively, never through a symlink (to a directory or a
/// file), so nothing outside a root is indexed or watched; a directory that cannot be read is
/// listed in `unreadable` and skipped, the rest of its root still walked. Below a root,
/// directories named in [`SKIPPED_DIRS`] are not entered, and a root's walk stops after
/// [`MAX_DIRS_PER_ROOT`] directories (a workspace folder may be a large tree, or `$HOME`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Tree {
    /// Every directory walked, roots included (in walk order), each once.
    pub dirs: Vec<PathBuf>,
    /// Every `*.jsonl` regular file, sorted, each once.
    pub files: Vec<PathBuf>,
    /// Directories that could not be listed, with the OS's reason.
    pub unreadable: Vec<(PathBuf, String)>,
    /// Roots whose walk stopped at [`MAX_DIRS_PER_ROOT`] directories.
    pub truncated: Vec<PathBuf>,
}

/// Directory names never entered below a root: version control, dependency and build trees,
/// where no agent writes its transcripts and which can hold many thousands of folders
/// (workspace folders are roots of the index too, issue 7).
pub const SKIPPED_DIRS: [&str; 6] = [
    ".git",
    "node_modules",
    "target",
    ".venv",
    "__pycache__",
    ".cache",
];

/// Directories walked (and watched) per root at most.
pub const MAX_DIRS_PER_ROOT: usize = 10_000;

/// True for a directory name in [`SKIPPED_DIRS`].
pub fn skipped_dir(name: &std::ffi::OsStr) -> bool {
    SKIPPED_DIRS.iter().any(|s| name == *s)
}

/// True when no directory between `root` (excluded) and `path` (included) is skipped
/// ([`skipped_dir`]).
fn walked_below(root: &Path, path: &Path) -> bool {
    path.strip_prefix(root).is_ok_and(|rest| {
        !rest
            .components()
            .any(|c| matches!(c, std::path::Component::Normal(n) if skipped_dir(n)))
    })
}

/// Walks the roots (see [`Tree`]). Missing roots are skipped; a root inside another root is
/// walked once.
pub fn walk(roots: &[PathBuf]) -> Tree {
    let mut tree = Tree::default();
    let mut seen = std::collections::HashSet::new();
    for root in roots {
        let mut stack: Vec<PathBuf> = vec![root.clone()];
        let mut walked = 0usize;
        while let Some(dir) = stack.pop() {
            if !seen.insert(dir.clone()) {
                continue;
            }
            if walked == MAX_DIRS_PER_ROOT {
                tree.truncated.push(root.clone());
                break;
            }
            let rd = match std::fs::read_dir(&dir) {
                Ok(rd) => rd,
                Err(e) => {
                    if e.kind() != std::io::ErrorKind::NotFound {
                        tree.unreadable.push((dir, e.to_string()));
                    }
                    continue;
                }
            };
            walked += 1;
            tree.dirs.push(dir);
            for e in rd.filter_map(Result::ok) {
                // `DirEntry::file_type` does not follow symlinks.
                let Ok(ft) = e.file_type() else { continue };
                let p = e.path();
                if ft.is_dir() {
                    if !skipped_dir(&e.file_name()) {
                        stack.push(p);
                    }
                } else if ft.is_file() && p.extension().is_some_and(|x| x == "jsonl") {
                    tree.files.push(p);
                }
            }
        }
    }
    tree.files.sort();
    tree.files.dedup();
    tree
}

/// True when `dir`, a directory created under one of `roots`, is one [`walk`] would enter
/// (no skipped directory between the root and it).
pub fn walkable_dir(roots: &[PathBuf], dir: &Path) -> bool {
    roots
        .iter()
        .any(|r| dir.starts_with(r) && walked_below(r, dir))
}

/// Every `*.jsonl` file under the roots ([`walk`]), sorted.
pub fn scan_roots(roots: &[PathBuf]) -> Vec<PathBuf> {
    walk(roots).files
}

/// True when `path` is a `*.jsonl` file [`walk`] would list: a regular file (not a symlink)
/// under one of `roots` with no symlink and no skipped directory between the root and it
/// (the directory cap aside). A path that no longer
/// exists is not indexable (its entry is removed).
pub fn indexable(roots: &[PathBuf], path: &Path) -> bool {
    if path.extension().is_none_or(|x| x != "jsonl") {
        return false;
    }
    let Some(root) = roots
        .iter()
        .find(|r| path.starts_with(r) && path.parent().is_some_and(|d| walked_below(r, d)))
    else {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::{SessionEntry, Tail};
    use crate::model::Format;

    fn sym(n: usize, title: &str) -> TurnSymbol {
        TurnSymbol {
            n,
            title: title.into(),
            start_line: n,
            end_line: n,
            wake: false,
        }
    }

    #[test]
    fn query_ranks_name_matches_first() {
        let mut idx = SessionIndex::new();
        idx.insert(
            "/a.jsonl".into(),
            SessionEntry {
                format: Format::ClaudeCode,
                title: Some("fix things".into()),
                title_source: None,
                first_prompt: None,
                project: None,
                session_id: None,
                subagent: false,
                parent_session: None,
                started_ms: None,
                ended_ms: None,
                turns: 2,
                last_turn_open: false,
                bytes: 0,
                modified_ms: None,
                symbols: vec![sym(1, "deploy app"), sym(2, "Fix the test")],
                tail: Tail::default(),
                changes: Vec::new(),
                waiting: None,
            },
        );
        let names = |q: &str, limit| -> Vec<String> {
            query(&idx, q, limit).into_iter().map(|h| h.name).collect()
        };
        assert_eq!(
            names("fix", 10),
            ["Turn 2: Fix the test", "Turn 1: deploy app"]
        );
        assert_eq!(names("FIX test", 10), ["Turn 2: Fix the test"]);
        assert_eq!(names("", 1).len(), 1);
        assert_eq!(query(&idx, "deploy", 5)[0].container, "fix things");
    }
}
