//! The document host (issue 8; in the spirit of rust-analyzer's `AnalysisHost`): it owns the
//! documents and knows no LSP type. Documents are named by the client's document id (the URI
//! string exactly as the client spelled it; `crate::lsp` parses and prints URIs), positions in
//! edits are plain [`crate::source::position::Position`]s, and what requests read is a
//! [`DocSnap`]: immutable, shared plain data (a [`Snapshot`] of the source, and for a view the
//! rendered [`ViewSnap`] the client shows).
//!
//! It holds:
//! - raw documents open in the editor (`didOpen`/`didChange`/`didClose` as [`Host::open_raw`],
//!   [`Host::change_raw`], [`Host::close`]);
//! - view documents open in the editor (the client's copy of a rendered view, to answer on the
//!   rendering the client shows; [`Host::open_view`], [`Host::change_view`]);
//! - disk sources behind views, loaded by the one loader and followed by `store::live`, at most
//!   [`MAX_IDLE_DISK_SOURCES`] idle ones kept (least recently used dropped);
//! - the last [`SERVED_VIEWS`] renderings served per view;
//! - the settings the snapshots are built with ([`SettingsStamp`]), the session index, and the
//!   step counts of sub-agent files.
//!
//! Ordering (LSP-NOTES §1.2): every mutation is synchronous under a short `std::sync::Mutex`,
//! so the protocol layer applies it before its first `.await`; a panic in a request leaves the
//! store as the last completed mutation left it.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use ropey::Rope;
use tokio::sync::mpsc;

use crate::ide::snapshot::{DocSnap, Snapshot, ViewKey, ViewSnap};
use crate::index::SessionIndex;
use crate::source::position::{self as sp, Encoding};
use crate::store::build::SettingsStamp;
use crate::store::document::*;
use crate::store::progress::{LoadReporter, ProgressHook};

/// The client's id of an open document (issue 24 item 3: document ids typed): its URI exactly
/// as the client spelled it in `didOpen` (`file:///tmp/a.jsonl`, `transcript:///tmp/a.jsonl?verbose=1`),
/// made only at the protocol edge (`crate::lsp::from_proto::doc_id`). The host's maps of open
/// documents, the per-turn caches and the refresh lists are keyed by it, so a file path
/// (`PathBuf`) or a view's file and mode ([`ViewKey`]) cannot be passed where the client's id is
/// meant. Whether the document is raw or a view is said by [`DocRef`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DocId(String);

impl DocId {
    /// The id of the document the client names `uri` (the URI as written, not normalised).
    pub fn new(uri: impl Into<String>) -> DocId {
        DocId(uri.into())
    }

    /// The URI as the client spelled it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for DocId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A view document the client opened: its copy of a rendered view.
pub struct ViewDoc {
    /// The client's document id.
    pub doc: DocId,
    pub key: ViewKey,
    pub version: i32,
    pub rope: Rope,
    /// Hash of `rope` (computed on demand; see [`rope_hash`]).
    pub hash: Option<u64>,
}

/// What the host asks the file follower (`store::live`) to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Follow {
    /// Follow this transcript file (counted: one `Unwatch` per `Watch`).
    Watch(PathBuf),
    /// Stop following it (one `Watch` fewer).
    Unwatch(PathBuf),
    /// Settings changed: refresh every document; re-index when the roots changed.
    SettingsChanged { roots_changed: bool },
}

/// The settings the host works with (from the client's settings; `crate::lsp::config`).
#[derive(Debug, Clone)]
pub struct HostSettings {
    /// Analysis options (`file_complete` is decided per build by `file_state`).
    pub options: crate::analysis::Options,
    /// Verbose view by default.
    pub verbose: bool,
    /// Whether a file is read as finished (file-age rule, issue 11).
    pub file_state: crate::source::age::FileState,
    /// Roots of the session index (and of the watched trees).
    pub roots: Vec<PathBuf>,
    /// Keep the session index in a cache file between runs.
    pub index_cache: bool,
}

struct DiskEntry {
    source: Arc<Source>,
    last_use: u64,
}

#[derive(Default)]
struct Store {
    /// Raw documents open in the editor, by document id.
    raw: HashMap<DocId, Arc<Source>>,
    /// View documents open in the editor, by document id.
    views: HashMap<DocId, ViewDoc>,
    disk: HashMap<PathBuf, DiskEntry>,
    /// The last views served to the client, per key (newest last).
    served: HashMap<ViewKey, VecDeque<Arc<ViewSnap>>>,
    clock: u64,
}

/// Disk sources kept without an open view before the least recently used are dropped.
pub const MAX_IDLE_DISK_SOURCES: usize = 16;
/// Renderings kept per view key to match what the client shows.
pub const SERVED_VIEWS: usize = 4;

/// Which document a request is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DocRef {
    /// A raw document open in the editor, by document id.
    Raw(DocId),
    /// A view of the file `key.path` (open in the editor or not), by document id.
    View { doc: DocId, key: ViewKey },
}

impl DocRef {
    /// The client's id of the document.
    pub fn id(&self) -> &DocId {
        match self {
            DocRef::Raw(doc) | DocRef::View { doc, .. } => doc,
        }
    }
}

/// Why the host could not serve a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostError {
    /// No raw document with this id is open.
    NotOpen(DocId),
    /// The file behind a view cannot be read (missing, not a regular file, permission).
    Unreadable { path: PathBuf, error: String },
    /// A build failed (a panic on the blocking pool): the message says which.
    Internal(String),
}

impl std::fmt::Display for HostError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HostError::NotOpen(doc) => write!(f, "unknown document {doc} (not opened)"),
            HostError::Unreadable { path, error } => {
                write!(f, "cannot read {}: {error}", path.display())
            }
            HostError::Internal(m) => f.write_str(m),
        }
    }
}

/// Why a change of a view document was not applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ViewChangeError {
    /// No view document with this id is open.
    NotOpen,
    /// Not newer than the version held.
    Stale { have: i32, got: i32 },
}

use crate::sync::{lock, read};

/// The document host. Cheap to share (`Arc<Host>`); every method takes `&self`.
pub struct Host {
    store: Mutex<Store>,
    settings: RwLock<SettingsStamp>,
    /// Index roots and whether the index is cached on disk.
    index_settings: RwLock<(Vec<PathBuf>, bool)>,
    /// The session index (issue 7): sessions and workspace symbols (`store::live` builds it).
    pub index: RwLock<SessionIndex>,
    /// True once the first index build finished.
    pub index_ready: AtomicBool,
    /// The generation of the newest index build (issue 25 item 6): each `roots` change takes
    /// the next one ([`Host::next_index_generation`]); a running build that sees a newer one
    /// between two files stops (it is superseded).
    index_generation: AtomicU64,
    /// The full-text search index of the current roots (issue 26), opened by the index build
    /// (`store::live::build_index`): `None` before, `Some(Err(why))` when it cannot be opened.
    pub search: RwLock<Option<Result<Arc<crate::index::search::SearchIndex>, String>>>,
    /// Held by the running index build: one build at a time, so that several quick `roots`
    /// changes take about one build's memory, not one per change (issue 25 item 6).
    pub index_build: tokio::sync::Mutex<()>,
    follow: mpsc::UnboundedSender<Follow>,
    follow_rx: Mutex<Option<mpsc::UnboundedReceiver<Follow>>>,
    /// Step counts of sub-agent files: path -> (len, steps).
    steps_cache: Mutex<HashMap<PathBuf, (u64, usize)>>,
}

impl Default for Host {
    fn default() -> Self {
        Host::new()
    }
}

impl Host {
    /// An empty host with default settings (stamp 1).
    pub fn new() -> Host {
        let (tx, rx) = mpsc::unbounded_channel();
        Host {
            store: Mutex::new(Store::default()),
            settings: RwLock::new(SettingsStamp {
                stamp: 1,
                options: crate::analysis::Options {
                    final_marker: true,
                    time_zone: None,
                    gate_phases: crate::analysis::default_phases(),
                    file_complete: false,
                },
                verbose: false,
                file_state: crate::source::age::FileState::Auto,
                progress: Default::default(),
            }),
            index_settings: RwLock::new((Vec::new(), true)),
            index: RwLock::new(SessionIndex::new()),
            index_ready: AtomicBool::new(false),
            index_generation: AtomicU64::new(0),
            index_build: tokio::sync::Mutex::new(()),
            search: RwLock::new(None),
            follow: tx,
            follow_rx: Mutex::new(Some(rx)),
            steps_cache: Mutex::new(HashMap::new()),
        }
    }

    /// The receiving end of the follow requests (taken once, by `store::live::start`).
    pub fn take_follow_events(&self) -> Option<mpsc::UnboundedReceiver<Follow>> {
        lock(&self.follow_rx).take()
    }

    fn send(&self, f: Follow) {
        let _ = self.follow.send(f);
    }

    // ----- settings -----

    /// Sets the settings; the stamp goes up, so every snapshot rebuilds its analysis on next
    /// use. `announce`: tell the file follower (refresh every document, re-index when the
    /// roots changed); false at `initialize`, before the follower starts.
    pub fn configure(&self, new: HostSettings, announce: bool) {
        {
            let mut s = crate::sync::write(&self.settings);
            s.stamp += 1;
            s.options = new.options;
            s.verbose = new.verbose;
            s.file_state = new.file_state;
        }
        let roots_changed = {
            let mut i = crate::sync::write(&self.index_settings);
            let changed = i.0 != new.roots;
            *i = (new.roots, new.index_cache);
            changed
        };
        if announce {
            self.send(Follow::SettingsChanged { roots_changed });
        }
    }

    /// Sets where the progress of big loads goes (the protocol layer, once the client said
    /// it shows work-done progress; issue 12, item 4).
    pub fn set_progress(&self, reporter: LoadReporter) {
        crate::sync::write(&self.settings).progress = ProgressHook(Some(reporter));
    }

    /// The index roots.
    pub fn roots(&self) -> Vec<PathBuf> {
        read(&self.index_settings).0.clone()
    }

    /// Whether the session index is cached on disk between runs.
    pub fn index_cache(&self) -> bool {
        read(&self.index_settings).1
    }

    /// The settings stamp for builds.
    pub fn stamp(&self) -> SettingsStamp {
        read(&self.settings).clone()
    }

    // ----- raw documents -----

    /// Opens a raw document with the editor's text (`path`: the file it names, if any; it is
    /// followed on disk so that a change there can be announced).
    pub fn open_raw(
        &self,
        doc: &DocId,
        path: Option<PathBuf>,
        text: String,
        version: i32,
    ) -> Arc<Source> {
        let source = Arc::new(Source::editor(path.clone(), text, version));
        lock(&self.store).raw.insert(doc.clone(), source.clone());
        if let Some(p) = path {
            self.send(Follow::Watch(p));
        }
        source
    }

    /// Applies edits to a raw document (synchronously). `Ok(None)`: no such document.
    pub fn change_raw(
        &self,
        doc: &DocId,
        version: i32,
        edits: Vec<Edit>,
        enc: Encoding,
    ) -> Result<Option<Arc<Source>>, ChangeError> {
        let source = lock(&self.store).raw.get(doc).cloned();
        let Some(source) = source else {
            return Ok(None);
        };
        source.apply_changes(version, edits, enc)?;
        Ok(Some(source))
    }

    /// Closes a document (raw or view). Returns the raw source when it was a raw document.
    pub fn close(&self, doc: &DocId) -> Option<Arc<Source>> {
        let removed = {
            let mut st = lock(&self.store);
            st.views.remove(doc);
            st.raw.remove(doc)
        };
        if let Some(p) = removed.as_ref().and_then(|s| s.path.clone()) {
            self.send(Follow::Unwatch(p));
        }
        removed
    }

    /// The source of an open raw document.
    pub fn raw_source(&self, doc: &DocId) -> Option<Arc<Source>> {
        lock(&self.store).raw.get(doc).cloned()
    }

    /// Whether a raw document is open.
    pub fn is_open(&self, doc: &DocId) -> bool {
        lock(&self.store).raw.contains_key(doc)
    }

    /// Every open raw document with its source.
    pub fn raw_docs(&self) -> Vec<(DocId, Arc<Source>)> {
        lock(&self.store)
            .raw
            .iter()
            .map(|(d, s)| (d.clone(), s.clone()))
            .collect()
    }

    /// Raw documents open on `path`.
    pub fn raw_docs_of(&self, path: &Path) -> Vec<DocId> {
        lock(&self.store)
            .raw
            .iter()
            .filter(|(_, s)| s.path.as_deref() == Some(path))
            .map(|(d, _)| d.clone())
            .collect()
    }

    // ----- view documents -----

    /// Records the client's copy of a view (`didOpen` of a view document). The file behind it
    /// is loaded (and followed) by [`Host::disk_source`], which the caller runs next.
    pub fn open_view(&self, doc: &DocId, key: ViewKey, text: &str, version: i32) {
        lock(&self.store).views.insert(
            doc.clone(),
            ViewDoc {
                doc: doc.clone(),
                key,
                version,
                rope: Rope::from_str(text),
                hash: None,
            },
        );
    }

    /// Applies edits to the client's copy of a view (synchronously). A range past the end is
    /// clamped to the end.
    pub fn change_view(
        &self,
        doc: &DocId,
        version: i32,
        edits: Vec<Edit>,
        enc: Encoding,
    ) -> Result<(), ViewChangeError> {
        let mut st = lock(&self.store);
        let Some(v) = st.views.get_mut(doc) else {
            return Err(ViewChangeError::NotOpen);
        };
        if version <= v.version {
            return Err(ViewChangeError::Stale {
                have: v.version,
                got: version,
            });
        }
        for e in edits {
            match e.range {
                None => v.rope = Rope::from_str(&e.text),
                Some((start, end)) => {
                    let last = v.rope.len_chars();
                    let a = sp::rope_char(&v.rope, start, enc).unwrap_or(last);
                    let b = sp::rope_char(&v.rope, end, enc).unwrap_or(last);
                    let (a, b) = (a.min(b), a.max(b));
                    v.rope.remove(a..b);
                    v.rope.insert(a, &e.text);
                }
            }
        }
        v.version = version;
        v.hash = None;
        Ok(())
    }

    /// Open view documents showing `path`.
    pub fn view_docs_of(&self, path: &Path) -> Vec<DocId> {
        lock(&self.store)
            .views
            .values()
            .filter(|v| v.key.path == path)
            .map(|v| v.doc.clone())
            .collect()
    }

    /// Every open view document.
    pub fn view_docs(&self) -> Vec<DocId> {
        lock(&self.store)
            .views
            .values()
            .map(|v| v.doc.clone())
            .collect()
    }

    // ----- disk sources -----

    /// The disk source of `path` if it is loaded (never loads).
    pub fn loaded_disk_source(&self, path: &Path) -> Option<Arc<Source>> {
        lock(&self.store).disk.get(path).map(|d| d.source.clone())
    }

    /// Drops the resident pages of every mapped disk text ([`Source::release_mapped_pages`]),
    /// after a request that may have read spans of one (issue 12). A few system calls: one
    /// `madvise` per mapped disk source.
    pub fn release_mapped_pages(&self) {
        let sources: Vec<Arc<Source>> = lock(&self.store)
            .disk
            .values()
            .map(|d| d.source.clone())
            .collect();
        for s in sources {
            s.release_mapped_pages();
        }
    }

    /// The disk source of `path`, loading it with the one loader (on a blocking thread) and
    /// following it when needed. Idle sources (no open view) beyond
    /// [`MAX_IDLE_DISK_SOURCES`] are dropped, least recently used first.
    pub async fn disk_source(&self, path: &Path) -> Result<Arc<Source>, HostError> {
        {
            let mut st = lock(&self.store);
            st.clock += 1;
            let now = st.clock;
            if let Some(d) = st.disk.get_mut(path) {
                d.last_use = now;
                return Ok(d.source.clone());
            }
        }
        let p = path.to_path_buf();
        let loaded = tokio::task::spawn_blocking(move || Source::disk(p))
            .await
            .map_err(|e| HostError::Internal(format!("reading {}: {e}", path.display())))?
            .map_err(|e| HostError::Unreadable {
                path: path.to_path_buf(),
                error: e.to_string(),
            })?;
        let mut st = lock(&self.store);
        st.clock += 1;
        let now = st.clock;
        if let Some(d) = st.disk.get_mut(path) {
            d.last_use = now;
            return Ok(d.source.clone());
        }
        let source = Arc::new(loaded);
        st.disk.insert(
            path.to_path_buf(),
            DiskEntry {
                source: source.clone(),
                last_use: now,
            },
        );
        self.send(Follow::Watch(path.to_path_buf()));
        let open: HashSet<PathBuf> = st.views.values().map(|v| v.key.path.clone()).collect();
        let mut idle: Vec<(u64, PathBuf)> = st
            .disk
            .iter()
            .filter(|(p, _)| !open.contains(*p) && *p != path)
            .map(|(p, d)| (d.last_use, p.clone()))
            .collect();
        if idle.len() > MAX_IDLE_DISK_SOURCES {
            idle.sort();
            let n = idle.len() - MAX_IDLE_DISK_SOURCES;
            for (_, p) in idle.into_iter().take(n) {
                st.disk.remove(&p);
                st.served.retain(|k, _| k.path != p);
                self.send(Follow::Unwatch(p));
            }
        }
        Ok(source)
    }

    // ----- snapshots -----

    /// The snapshot of a document: for a raw document its current text's; for a view the file's
    /// and the rendering the client shows ([`Host::view_for`]).
    pub async fn doc_snap(&self, r: &DocRef) -> Result<DocSnap, HostError> {
        match r {
            DocRef::Raw(doc) => {
                let source = self
                    .raw_source(doc)
                    .ok_or_else(|| HostError::NotOpen(doc.clone()))?;
                let snap = source.snapshot(&self.stamp()).await;
                Ok(DocSnap::Raw { snap })
            }
            DocRef::View { doc, key } => {
                let source = self.disk_source(&key.path).await?;
                let snap = source.snapshot(&self.stamp()).await;
                let view = self.view_for(doc, key, &snap).await?;
                Ok(DocSnap::View {
                    key: key.clone(),
                    snap,
                    view,
                })
            }
        }
    }

    /// The rendered view to answer requests on view document `doc`: the one whose text the
    /// client shows when the client opened the view and an earlier rendering matches it, else
    /// the latest.
    pub async fn view_for(
        &self,
        doc: &DocId,
        key: &ViewKey,
        snap: &Arc<Snapshot>,
    ) -> Result<Arc<ViewSnap>, HostError> {
        let latest = render(snap, key.verbose, &self.stamp().progress).await?;
        let client = {
            let st = lock(&self.store);
            st.views
                .get(doc)
                .map(|v| (v.hash, v.rope.clone(), v.version))
        };
        let Some((hash, rope, version)) = client else {
            return Ok(latest);
        };
        let hash = match hash {
            Some(h) => h,
            None => {
                let h = tokio::task::spawn_blocking(move || rope_hash(&rope))
                    .await
                    .unwrap_or(0);
                let mut st = lock(&self.store);
                if let Some(v) = st.views.get_mut(doc)
                    && v.version == version
                {
                    v.hash = Some(h);
                }
                h
            }
        };
        if hash == latest.hash {
            return Ok(latest);
        }
        let st = lock(&self.store);
        if let Some(old) = st
            .served
            .get(key)
            .and_then(|q| q.iter().rev().find(|v| v.hash == hash))
        {
            return Ok(old.clone());
        }
        Ok(latest)
    }

    /// Renders the view of `key` for the client to show and remembers it as served. Returns
    /// the snapshot (to tell whether the file is a transcript) and the rendering.
    pub async fn serve_view(
        &self,
        key: &ViewKey,
    ) -> Result<(Arc<Snapshot>, Arc<ViewSnap>), HostError> {
        let source = self.disk_source(&key.path).await?;
        let snap = source.snapshot(&self.stamp()).await;
        let vs = render(&snap, key.verbose, &self.stamp().progress).await?;
        let mut st = lock(&self.store);
        let q = st.served.entry(key.clone()).or_default();
        if q.back().is_none_or(|b| b.hash != vs.hash) {
            q.push_back(vs.clone());
            while q.len() > SERVED_VIEWS {
                q.pop_front();
            }
        }
        Ok((snap, vs))
    }

    /// Step count of a sub-agent transcript (distinct response keys), cached by file size.
    pub fn steps_in(&self, path: &Path) -> Option<usize> {
        let len = crate::source::load::regular_file(path).ok()?.len();
        if let Some((l, n)) = lock(&self.steps_cache).get(path)
            && *l == len
        {
            return Some(*n);
        }
        // The one loader (regular files only, lossy UTF-8), as for every transcript read.
        let text = crate::source::load::load(path, crate::source::load::MAX_FILE_BYTES)
            .ok()?
            .text;
        let t = crate::formats::read(&text);
        let keys: HashSet<&str> = t
            .entries
            .iter()
            .filter_map(|e| e.step.as_ref().map(|s| &*s.key))
            .collect();
        let n = keys.len();
        if text.torn() {
            // Truncated while it was read (issue 12): counted again on its next change.
            return None;
        }
        lock(&self.steps_cache).insert(path.to_path_buf(), (len, n));
        Some(n)
    }

    /// Takes the next index-build generation (1, 2, …): every build of an older one still
    /// running stops at its next file (issue 25 item 6).
    pub fn next_index_generation(&self) -> u64 {
        self.index_generation.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Whether the build of generation `g` was superseded by a newer one.
    pub fn index_superseded(&self, g: u64) -> bool {
        self.index_generation.load(Ordering::SeqCst) != g
    }

    /// The search index, when it is open.
    pub fn search_index(&self) -> Option<Arc<crate::index::search::SearchIndex>> {
        read(&self.search)
            .as_ref()
            .and_then(|r| r.as_ref().ok())
            .cloned()
    }

    /// Why the search index could not be opened, when it could not.
    pub fn search_error(&self) -> Option<String> {
        read(&self.search)
            .as_ref()
            .and_then(|r| r.as_ref().err())
            .cloned()
    }

    /// Marks the first index build as finished.
    pub fn set_index_ready(&self) {
        self.index_ready.store(true, Ordering::SeqCst);
    }

    /// Whether the first index build finished.
    pub fn is_index_ready(&self) -> bool {
        self.index_ready.load(Ordering::SeqCst)
    }
}

/// Renders a snapshot's view on the blocking pool (reporting progress through `progress`
/// when the transcript is big: no percentage is known, so it goes from begin to end).
async fn render(
    snap: &Arc<Snapshot>,
    verbose: bool,
    progress: &ProgressHook,
) -> Result<Arc<ViewSnap>, HostError> {
    if let Some(v) = snap.cached_view(verbose) {
        return Ok(v);
    }
    let s = snap.clone();
    let progress = progress.clone();
    tokio::task::spawn_blocking(move || {
        let load = progress.start("Rendering", s.path.as_deref(), s.text.len());
        let v = s.view(verbose);
        // Rendering read spans of a mapped text: none of it stays resident (issue 12).
        s.text.release_all();
        load.end(format!("{} lines", v.lines.line_count()));
        v
    })
    .await
    .map_err(|e| HostError::Internal(format!("rendering the view failed: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::position::Position;

    fn turn(n: usize, prompt: &str) -> String {
        let u = serde_json::json!({"type":"user","uuid":format!("u{n}"),"sessionId":"s",
            "timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":prompt}});
        let a = serde_json::json!({"type":"assistant","uuid":format!("a{n}"),
            "parentUuid":format!("u{n}"),"sessionId":"s","timestamp":"2026-01-01T00:00:05Z",
            "message":{"role":"assistant","model":"m","content":[{"type":"text","text":"ok"}],
                       "stop_reason":"end_turn"}});
        format!("{u}\n{a}\n")
    }

    #[tokio::test]
    async fn raw_documents_open_change_close_with_plain_edits() {
        let host = Host::new();
        let mut follow = host.take_follow_events().unwrap();
        let doc = &DocId::new("file:///tmp/h.jsonl");
        host.open_raw(doc, Some("/tmp/h.jsonl".into()), turn(1, "one"), 1);
        assert_eq!(follow.try_recv(), Ok(Follow::Watch("/tmp/h.jsonl".into())));
        let edit = Edit {
            range: Some((Position::new(2, 0), Position::new(2, 0))),
            text: turn(2, "two"),
        };
        assert!(
            host.change_raw(doc, 2, vec![edit.clone()], Encoding::Utf16)
                .unwrap()
                .is_some()
        );
        assert_eq!(
            host.change_raw(doc, 2, vec![edit], Encoding::Utf16).err(),
            Some(ChangeError::Stale { have: 2, got: 2 })
        );
        let snap: crate::ide::DocAnalysis = host
            .doc_snap(&DocRef::Raw(doc.clone()))
            .await
            .unwrap()
            .into();
        assert_eq!(snap.turn_lines(), vec![0, 2]);
        let at = snap.item_at(Position::new(2, 0), Encoding::Utf16);
        assert_eq!(at.unwrap().map(|(e, _)| e), Some(2));
        assert!(host.close(doc).is_some());
        assert_eq!(
            follow.try_recv(),
            Ok(Follow::Unwatch("/tmp/h.jsonl".into()))
        );
        assert_eq!(
            host.doc_snap(&DocRef::Raw(doc.clone())).await.err(),
            Some(HostError::NotOpen(doc.clone()))
        );
    }

    #[tokio::test]
    async fn a_view_answers_on_the_rendering_the_client_shows() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v.jsonl");
        std::fs::write(&path, turn(1, "first")).unwrap();
        let host = Host::new();
        let key = ViewKey {
            path: path.clone(),
            verbose: false,
        };
        let (_, shown) = host.serve_view(&key).await.unwrap();
        let doc = &DocId::new("transcript:///v");
        host.open_view(doc, key.clone(), &shown.view.text, 1);
        // The file grows; the client has not re-fetched: requests answer on what it shows.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        std::io::Write::write_all(&mut f, turn(2, "second").as_bytes()).unwrap();
        host.loaded_disk_source(&path).unwrap().refresh_disk();
        let r = DocRef::View {
            doc: doc.clone(),
            key: key.clone(),
        };
        let DocSnap::View { view, .. } = host.doc_snap(&r).await.unwrap() else {
            panic!("a view")
        };
        assert_eq!(view.hash, shown.hash);
        // Once the client shows the new text, that one.
        let (_, fresh) = host.serve_view(&key).await.unwrap();
        assert_ne!(fresh.hash, shown.hash);
        let whole = Edit {
            range: None,
            text: fresh.view.text.clone(),
        };
        assert_eq!(
            host.change_view(doc, 1, vec![whole.clone()], Encoding::Utf16),
            Err(ViewChangeError::Stale { have: 1, got: 1 })
        );
        host.change_view(doc, 2, vec![whole], Encoding::Utf16)
            .unwrap();
        let DocSnap::View { view, .. } = host.doc_snap(&r).await.unwrap() else {
            panic!("a view")
        };
        assert_eq!(view.hash, fresh.hash);
        assert_eq!(host.view_docs_of(&path), vec![doc.clone()]);
    }
}
