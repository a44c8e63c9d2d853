//! What lies under the index roots (issue 8 defect 8; moved from `ide::workspace_symbols` by
//! issue 24 item 3: file walking belongs to the index): [`walk`] lists directories and
//! transcript files the way the session index and the file follower (`store::live`) both see
//! them, [`indexable`] says whether one path is in it.

use std::path::{Path, PathBuf};

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
