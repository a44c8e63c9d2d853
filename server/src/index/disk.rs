//! The session index's file-system edge: scanning roots, bringing one file's entry up to date
//! (whole read, or only from its last turn after an append), and the cache file that makes a
//! warm start cost one `stat` per transcript.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{SessionEntry, SessionIndex, summary, system_time_ms};

/// Files larger than this are indexed from their first 256 MiB only (an append past it reads
/// at most this much from the last turn).
pub const MAX_INDEX_BYTES: u64 = 256 * 1024 * 1024;

/// The room [`crate::source::room::check_fits`] is given for one file the index reads whole:
/// its records may take at most two thirds of it, 1 GiB (issue 25 item 8).
pub const INDEX_RECORDS_ROOM: u64 = 3 << 29;

/// Bytes of a file's head hashed into `Tail::head` (issue 25 item 2).
pub const HEAD_BYTES: u64 = 4096;

/// Every `*.jsonl` regular file under the roots, as the file watcher sees them (no symlinks,
/// nothing outside a root; `index::walk::walk`), sorted.
pub fn scan_roots(roots: &[PathBuf]) -> Vec<PathBuf> {
    crate::index::walk::scan_roots(roots)
}

/// The agents' own session folders, from the agent registry (`formats::agents::default_roots`:
/// `~/.claude/projects`, `~/.codex/sessions`, `~/.pi/agent/sessions`,
/// `~/.copilot/session-state`, each moved by its agent's variable such as `$CODEX_HOME`; none
/// without a home): the server's default `roots` and the CLI's `history` / `blame`.
pub fn default_roots() -> Vec<PathBuf> {
    crate::formats::agents::default_roots()
}

/// What [`refresh`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum Refresh {
    /// Same size and modification time as indexed: nothing read.
    Unchanged,
    /// Read whole (new file, rewritten, truncated, or its format unknown so far).
    Whole(SessionEntry),
    /// Grown: read from its last turn's opening line only; `read` bytes were read.
    Tail { entry: SessionEntry, read: u64 },
    /// The file is gone (or no longer a file).
    Gone,
}

/// Brings `path`'s entry up to date given the previous one. Errors are I/O errors other than
/// "not found" (which gives [`Refresh::Gone`]).
pub fn refresh(path: &Path, old: Option<&SessionEntry>) -> std::io::Result<Refresh> {
    refresh_visit(path, old, None)
}

/// [`refresh`], handing each read (whole, or the tail after an append) to `visit`
/// (`summary::Visit`): the search index (issue 26) takes its documents from the same read.
pub fn refresh_visit(
    path: &Path,
    old: Option<&SessionEntry>,
    mut visit: Option<summary::Visit<'_>>,
) -> std::io::Result<Refresh> {
    use crate::source::load::{self, LoadError};
    // Regular files only, through the project's one loader (a FIFO is never opened, a
    // directory or a file that is gone leaves the index).
    let md = match load::regular_file(path) {
        Ok(md) => md,
        Err(LoadError::NotFound | LoadError::Directory | LoadError::NotRegular(_)) => {
            return Ok(Refresh::Gone);
        }
        Err(e) => return Err(e.into()),
    };
    let len = md.len();
    let modified_ms = md.modified().ok().and_then(system_time_ms);
    if let Some(old) = old
        && old.bytes == len
        && old.modified_ms == modified_ms
    {
        return Ok(Refresh::Unchanged);
    }
    // Claude Code and Codex files are read from their last turn (`summary::tail_readable`
    // says why not the other formats).
    // (Files beside it that add to it, the agent registry's `beside`: a `/btw` aside's parent,
    // a sidecar; such a file is read whole.)
    let aside = crate::formats::agents::has_beside(path);
    // The file's first bytes: a grown file whose head changed was rewritten (issue 25 item 2:
    // one longer write after `O_TRUNC` keeping the last turn's opening line was taken for
    // an append, and the entry kept the old first prompt).
    let (head, _) = load::read_bytes(path, 0, HEAD_BYTES)?;
    // (A whole read hashes the head of its text: `summary::read_whole`.)
    let stamp_head = |e: &mut SessionEntry| {
        e.tail.head = summary::fnv1a(&head);
        e.tail.head_len = head.len() as u64;
    };
    if let Some(old) = old
        && !aside
        && summary::tail_readable(old.format)
        && len > old.bytes
        && old.tail.offset <= old.bytes
        && old.tail.head_len > 0
        && usize::try_from(old.tail.head_len)
            .ok()
            .and_then(|n| head.get(..n))
            .is_some_and(|h| summary::fnv1a(h) == old.tail.head)
    {
        let (bytes, _) = load::read_bytes(path, old.tail.offset, MAX_INDEX_BYTES)?;
        if summary::tail_matches(old, &bytes) {
            let (text, _) = load::decode(&bytes);
            let mut entry = summary::read_tail_visit(old, &text, visit.take());
            entry.bytes = len;
            entry.modified_ms = modified_ms;
            stamp_head(&mut entry);
            return Ok(Refresh::Tail {
                entry,
                read: bytes.len() as u64,
            });
        }
    }
    // Whole (zstd-compressed rollouts decompressed by the loader).
    let loaded = load::load(path, MAX_INDEX_BYTES)?;
    // At most a GiB of records per file, whatever the memory free (issue 25 item 8: 30 MB of
    // 10 M `{}` lines took 1.1 GB in the index build); such a file is left out with a warning.
    let room =
        crate::source::room::available().map_or(INDEX_RECORDS_ROOM, |a| a.min(INDEX_RECORDS_ROOM));
    crate::source::room::check_fits(loaded.text.raw_bytes(), Some(room))
        .map_err(load::LoadError::TooManyRecords)?;
    // A `/btw` aside file (read whole: it is short) leaves out the parent's replayed history.
    let mut entry = summary::read_whole_visit(
        &loaded.text,
        |t| {
            if aside {
                crate::formats::agents::apply_beside(t, path);
            }
        },
        visit,
    );
    if loaded.text.torn() {
        // Truncated while it was read (issue 12): the entry stays as it was; the watcher
        // reports the change and the file is read again.
        return Err(load::LoadError::Changed.into());
    }
    entry.bytes = len;
    entry.modified_ms = modified_ms;
    // Antigravity CLI: the conversation folder is the session id (the file names none; a
    // checkpoint's log path, read by the reader, is the fallback).
    if entry.format == crate::model::Format::Antigravity
        && let Some(id) = crate::formats::antigravity::conversation_of(path)
    {
        entry.session_id = Some(id.into());
        // The workspace the agent was started in (its prompt history), when it names one.
        if let Some(ws) = crate::formats::antigravity::workspace_of(path) {
            entry.project = Some(ws.into());
        }
    }
    Ok(Refresh::Whole(entry))
}

/// Applies [`refresh`] to the index; returns what happened (`Err` leaves the entry as it was).
pub fn update(index: &mut SessionIndex, path: &Path) -> std::io::Result<Refresh> {
    let r = refresh(path, index.get(path))?;
    match &r {
        Refresh::Unchanged => {}
        Refresh::Whole(e) | Refresh::Tail { entry: e, .. } => {
            index.insert(path.to_path_buf(), e.clone())
        }
        Refresh::Gone => index.remove(path),
    }
    Ok(r)
}

/// The cache file's contents: the index as it was, for the same roots.
#[derive(Serialize, Deserialize)]
struct CacheFile {
    version: u32,
    roots: Vec<PathBuf>,
    entries: Vec<(PathBuf, SessionEntry)>,
}

/// Bumped when [`SessionEntry`] or the rules that fill it change (5: Antigravity CLI files,
/// read before as no transcript, issue 21 item 3; 6: `waiting`, issue 23 item 10).
const CACHE_VERSION: u32 = 6;

/// Where the cache of an index over `roots` lives: `$TRANSCRIPT_LS_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/transcript-ls`, else `~/.cache/transcript-ls`, one file per set of roots
/// (`sessions-<hash>.json`). `None` when no directory can be named.
pub fn cache_path(roots: &[PathBuf]) -> Option<PathBuf> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let dir = env("TRANSCRIPT_LS_CACHE_DIR")
        .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("transcript-ls")))
        .or_else(|| env("HOME").map(|h| h.join(".cache/transcript-ls")))?;
    let key = roots
        .iter()
        .map(|r| r.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("\n");
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    Some(dir.join(format!("sessions-{h:016x}.json")))
}

/// Where the full-text search index of `roots` lives (issue 26): a folder beside the session
/// index cache of the same roots ([`cache_path`]), `search-<hash>/`. `None` when no directory
/// can be named.
pub fn search_dir(roots: &[PathBuf]) -> Option<PathBuf> {
    let cache = cache_path(roots)?;
    let name = cache.file_name()?.to_str()?;
    let hash = name.strip_prefix("sessions-")?.strip_suffix(".json")?;
    Some(cache.with_file_name(format!("search-{hash}")))
}

/// Loads a cache written by [`save_cache`] for the same roots; an absent, unreadable or
/// outdated cache gives an empty index (the entries are then rebuilt from the files).
pub fn load_cache(path: &Path, roots: &[PathBuf]) -> SessionIndex {
    let mut idx = SessionIndex::new();
    let Ok(bytes) = std::fs::read(path) else {
        return idx;
    };
    let Ok(c) = serde_json::from_slice::<CacheFile>(&bytes) else {
        return idx;
    };
    if c.version != CACHE_VERSION || c.roots != roots {
        return idx;
    }
    for (p, e) in c.entries {
        idx.insert(p, e);
    }
    idx.retain_roots(roots);
    idx
}

/// Writes the index to `path` (through a temporary file and a rename, so a reader never sees
/// half a file).
pub fn save_cache(path: &Path, roots: &[PathBuf], index: &SessionIndex) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let c = CacheFile {
        version: CACHE_VERSION,
        roots: roots.to_vec(),
        entries: index
            .entries()
            .map(|(p, e)| (p.clone(), e.clone()))
            .collect(),
    };
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, serde_json::to_vec(&c).map_err(std::io::Error::other)?)?;
    std::fs::rename(&tmp, path)
}

/// Builds the index of `roots` in one go (the CLI's `history` / `blame`; the server builds its
/// own in batches, `store::live::build_index`): with `use_cache`, the cache of the previous run
/// first ([`cache_path`]), then every file whose size or modification time changed is read
/// again, files gone are dropped, and the cache is written back when anything changed (a
/// cache that cannot be written is left as it was). Files that cannot be read are left out.
pub fn build(roots: &[PathBuf], use_cache: bool) -> SessionIndex {
    let cache = cache_path(roots).filter(|_| use_cache);
    let mut idx = cache
        .as_deref()
        .map(|c| load_cache(c, roots))
        .unwrap_or_default();
    let files = scan_roots(roots);
    let present: std::collections::HashSet<&PathBuf> = files.iter().collect();
    let gone: Vec<PathBuf> = idx
        .entries()
        .map(|(p, _)| p.clone())
        .filter(|p| !present.contains(p))
        .collect();
    let mut changed = !gone.is_empty();
    for p in gone {
        idx.remove(&p);
    }
    for p in &files {
        match update(&mut idx, p) {
            Ok(Refresh::Unchanged) | Err(_) => {}
            Ok(_) => changed = true,
        }
    }
    if changed && let Some(c) = cache {
        let _ = save_cache(&c, roots, &idx);
    }
    idx
}
