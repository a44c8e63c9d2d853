//! Live files (DESIGN.md §5), below `lsp/` and free of LSP types (issue 8): a notify watcher on
//! the directory of every followed transcript (the host's [`Follow`] requests) and on the
//! session-index roots, and the task that turns its events into work: appended bytes read
//! into the host's disk sources (only the new bytes), files that settled by the file-age rule
//! marked changed, the session index kept up to date. What changed is handed to a [`Sink`]
//! (the protocol layer, `crate::lsp::refresh`, which refreshes the client's views and
//! features) at most once every [`REFRESH_EVERY`], and never while the previous batch is
//! still in flight ([`Sink::busy`]).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use notify::{EventKind, RecursiveMode, Watcher};

use crate::store::document::DiskChange;
use crate::store::host::{DocId, Follow, Host};

use crate::index::{disk, search, walk};
use crate::source::age;

/// During an index build, what was indexed for search is made searchable (committed) at
/// most this often (issue 26: answers while the build runs are partial, `complete: false`).
pub const SEARCH_COMMIT_EVERY: Duration = Duration::from_secs(2);

/// Minimum interval between two refresh batches.
pub const REFRESH_EVERY: Duration = Duration::from_millis(200);

/// How much a message matters (mapped to the protocol's message types).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Error,
    Warning,
    Info,
    Log,
}

/// One batch of changes for the client.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    /// View documents (ids) whose file changed: their text must be fetched again.
    pub views: Vec<DocId>,
    /// Raw documents (ids) whose file changed on disk (the editor may reload them; their
    /// diagnostics, which include the file's invalid-UTF-8 lines, are due again).
    pub raw: Vec<DocId>,
    /// Documents' analyses changed (a followed file changed, or the settings did): semantic
    /// tokens, inlay hints and code lenses should be asked again.
    pub features: bool,
}

/// Progress of a session-index build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexProgress {
    /// A build of `total` files starts.
    Begin { total: usize },
    /// `done` of `total` files read (sent every 5 %).
    Report {
        done: usize,
        total: usize,
        percent: u32,
    },
    /// Finished: the summary line.
    End { message: String },
}

/// Where the follower's results go (implemented by the protocol layer).
pub trait Sink: Send + Sync + 'static {
    /// A line for the log.
    fn log(&self, level: Level, message: String);
    /// A warning the user should see (a transcript behind a view is gone).
    fn show(&self, level: Level, message: String);
    /// True while the previous batch of changes is still being delivered: the next waits.
    fn busy(&self) -> bool;
    /// Delivers a batch of changes (from a spawned task; must not block).
    fn changed(&self, changes: Changes);
    /// Reports index-build progress (in order; must not block).
    fn progress(&self, progress: IndexProgress);
    /// The session index was brought up to date for `paths` (re-read after a change on disk,
    /// or a followed file settled by the file-age rule, which ends its live state): a client's
    /// session list can follow at once (issue 23 item 9). Must not block.
    fn sessions_changed(&self, paths: Vec<PathBuf>);
}

/// Starts the follower (once; at `initialized`): watches the roots, then builds the session
/// index, then follows files until `shutdown` turns true.
pub fn start(host: Arc<Host>, sink: Arc<dyn Sink>, shutdown: tokio::sync::watch::Receiver<bool>) {
    let Some(rx) = host.take_follow_events() else {
        return;
    };
    tokio::spawn(run(host, sink, rx, shutdown));
}

/// What the follow loop works on.
enum Event {
    Follow(Follow),
    Fs(notify::Result<notify::Event>),
}

struct State {
    watcher: Option<notify::RecommendedWatcher>,
    /// Watched transcript files -> count of `Watch` events.
    files: HashMap<PathBuf, usize>,
    /// Watched directories (non-recursive) -> number of watched files in them.
    dirs: HashMap<PathBuf, usize>,
    /// The index roots (`Settings::index_roots`: the configured roots and the workspace
    /// folders).
    roots: Vec<PathBuf>,
    /// Directories under the roots watched one by one (non-recursive), as
    /// `walk::walk` lists them: never through a symlink; one that cannot be
    /// watched is reported and skipped, the others stay watched (issue 8 defect 8).
    root_dirs: HashSet<PathBuf>,
    dirty: HashSet<PathBuf>,
    changed_raw: HashSet<PathBuf>,
    refresh_all: bool,
    reindex: HashSet<PathBuf>,
    /// Followed files read as still being written -> when they will count as finished if
    /// nobody writes to them (file-age rule, `crate::source::age`): then their documents and
    /// views are refreshed, so a finished session's last answer shows (issue 11).
    settling: HashMap<PathBuf, SystemTime>,
    /// Followed files found gone -> the (device, inode) of their folder then (`None`: gone
    /// too). Looked at every tick: a folder made again is watched again (a watch follows
    /// the old folder's inode, and events stopped for good; issue 25 item 4), and a file
    /// back is read again.
    lost: HashMap<PathBuf, Option<(u64, u64)>>,
    /// The index roots -> the (device, inode) of each when last watched (`None`: absent).
    /// Looked at every tick: a root deleted and made again is watched and indexed again
    /// (no watch of its parent reports it; issue 25 item 5).
    root_ids: HashMap<PathBuf, Option<(u64, u64)>>,
    /// Followed files seen through a symlink (the file or a folder above it) or with more
    /// than one hard link: a write through another name is reported to no watch here, so
    /// they are checked every tick (a `stat` when nothing changed; issue 25 item 12).
    polled: HashSet<PathBuf>,
}

/// True when `path` is reached through a symlink or has other hard links.
fn needs_polling(path: &Path) -> bool {
    if std::fs::canonicalize(path).is_ok_and(|c| c != path) {
        return true;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if std::fs::metadata(path).is_ok_and(|m| m.nlink() > 1) {
            return true;
        }
    }
    false
}

/// (device, inode) of the folder at `dir`, if there is one.
fn dir_id(dir: &Path) -> Option<(u64, u64)> {
    let md = std::fs::metadata(dir).ok().filter(|m| m.is_dir())?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((md.dev(), md.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = md;
        Some((0, 0))
    }
}

impl State {
    fn watch_file(&mut self, sink: &dyn Sink, path: PathBuf) {
        let n = self.files.entry(path.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            return;
        }
        self.track_settling(&path);
        if needs_polling(&path) {
            self.polled.insert(path.clone());
        }
        let Some(dir) = path.parent().map(Path::to_path_buf) else {
            return;
        };
        let d = self.dirs.entry(dir.clone()).or_insert(0);
        *d += 1;
        if *d == 1
            && let Some(w) = self.watcher.as_mut()
            && let Err(e) = w.watch(&dir, RecursiveMode::NonRecursive)
        {
            sink.log(
                Level::Warning,
                format!("cannot watch {}: {e}", dir.display()),
            );
        }
    }

    /// Remembers when a followed file that is not settled yet will settle.
    fn track_settling(&mut self, path: &Path) {
        if !age::is_settled(path)
            && let Some(at) = age::settles_at(path)
        {
            self.settling.insert(path.to_path_buf(), at);
        }
    }

    /// Marks the followed files that settled since the last tick as changed.
    fn settle_due(&mut self) {
        if self.settling.is_empty() {
            return;
        }
        let now = SystemTime::now();
        let due: Vec<PathBuf> = self
            .settling
            .iter()
            .filter(|(_, at)| **at <= now)
            .map(|(p, _)| p.clone())
            .collect();
        for p in due {
            self.settling.remove(&p);
            if !self.files.contains_key(&p) {
                continue;
            }
            if age::is_settled(&p) {
                self.dirty.insert(p);
            } else {
                self.track_settling(&p); // written again meanwhile
            }
        }
    }

    fn unwatch_file(&mut self, path: &Path) {
        let Some(n) = self.files.get_mut(path) else {
            return;
        };
        *n -= 1;
        if *n > 0 {
            return;
        }
        self.files.remove(path);
        self.settling.remove(path);
        self.polled.remove(path);
        let Some(dir) = path.parent() else {
            return;
        };
        if let Some(d) = self.dirs.get_mut(dir) {
            *d -= 1;
            if *d == 0 {
                self.dirs.remove(dir);
                if let Some(w) = self.watcher.as_mut()
                    && !self.root_dirs.contains(dir)
                {
                    let _ = w.unwatch(dir);
                }
            }
        }
    }

    fn watch_roots(&mut self, sink: &dyn Sink, roots: Vec<PathBuf>) {
        if let Some(w) = self.watcher.as_mut() {
            for d in self.root_dirs.drain() {
                if !self.dirs.contains_key(&d) {
                    let _ = w.unwatch(&d);
                }
            }
        }
        self.root_dirs.clear();
        self.roots = roots.clone();
        self.root_ids = roots.iter().map(|r| (r.clone(), dir_id(r))).collect();
        self.watch_trees(sink, &roots);
    }

    /// Forgets the watched directories at and under `dir` (removed or renamed away: their
    /// watches went with them), so that a directory made again there is watched again
    /// (issue 25 item 5).
    fn forget_dirs_under(&mut self, dir: &Path) {
        self.root_dirs.retain(|d| !d.starts_with(dir));
    }

    /// Roots deleted and made again since the last look: watched again, their transcripts
    /// indexed (issue 25 item 5).
    fn recover_roots(&mut self, sink: &dyn Sink) {
        let changed: Vec<(PathBuf, Option<(u64, u64)>)> = self
            .root_ids
            .iter()
            .map(|(r, was)| (r.clone(), *was, dir_id(r)))
            .filter(|(_, was, now)| was != now)
            .map(|(r, _, now)| (r, now))
            .collect();
        for (r, now) in changed {
            self.root_ids.insert(r.clone(), now);
            self.forget_dirs_under(&r);
            if now.is_some() {
                self.watch_trees(sink, std::slice::from_ref(&r));
                self.reindex
                    .extend(walk::walk(std::slice::from_ref(&r)).files);
            }
        }
    }

    /// Watches every directory of the trees under `tops` (roots, or directories created
    /// under them) that is not watched yet.
    fn watch_trees(&mut self, sink: &dyn Sink, tops: &[PathBuf]) {
        let tree = walk::walk(tops);
        let mut failed = tree.unreadable;
        for r in &tree.truncated {
            sink.log(
                Level::Warning,
                format!(
                    "{} holds more than {} folders: only the first are indexed and watched",
                    r.display(),
                    walk::MAX_DIRS_PER_ROOT
                ),
            );
        }
        if let Some(w) = self.watcher.as_mut() {
            let fresh: Vec<PathBuf> = tree
                .dirs
                .into_iter()
                .filter(|d| !self.root_dirs.contains(d))
                .collect();
            failed.extend(watch_each(&fresh, |d| {
                w.watch(d, RecursiveMode::NonRecursive)
                    .map_err(|e| e.to_string())
            }));
            self.root_dirs.extend(fresh);
        }
        for (d, why) in failed {
            self.root_dirs.remove(&d);
            sink.log(
                Level::Warning,
                format!(
                    "cannot watch {} ({why}); the rest of the workspace is watched",
                    d.display()
                ),
            );
        }
    }
}

/// Calls `watch` on each directory; returns the ones that failed with the reason. One
/// failure never stops the others.
fn watch_each(
    dirs: &[PathBuf],
    mut watch: impl FnMut(&Path) -> Result<(), String>,
) -> Vec<(PathBuf, String)> {
    dirs.iter()
        .filter_map(|d| watch(d).err().map(|e| (d.clone(), e)))
        .collect()
}

async fn run(
    host: Arc<Host>,
    sink: Arc<dyn Sink>,
    mut follow: tokio::sync::mpsc::UnboundedReceiver<Follow>,
    mut shutdown: tokio::sync::watch::Receiver<bool>,
) {
    let (tx, mut fs) = tokio::sync::mpsc::unbounded_channel();
    let watcher = notify::recommended_watcher(move |res| {
        let _ = tx.send(res);
    });
    let watcher = match watcher {
        Ok(w) => Some(w),
        Err(e) => {
            sink.log(
                Level::Warning,
                format!("file watching unavailable ({e}); live updates are off"),
            );
            None
        }
    };
    let mut st = State {
        watcher,
        files: HashMap::new(),
        dirs: HashMap::new(),
        roots: Vec::new(),
        root_dirs: HashSet::new(),
        dirty: HashSet::new(),
        changed_raw: HashSet::new(),
        refresh_all: false,
        reindex: HashSet::new(),
        settling: HashMap::new(),
        lost: HashMap::new(),
        root_ids: HashMap::new(),
        polled: HashSet::new(),
    };
    st.watch_roots(&*sink, host.roots());
    // The index is built only once the roots are watched: a file written after indexing
    // ends is then always seen (before, the build could finish before the first watch was
    // registered, and such a file was missed until the next change).
    let generation = host.next_index_generation();
    tokio::spawn(build_index(
        host.clone(),
        sink.clone(),
        shutdown.clone(),
        generation,
    ));
    let mut tick = tokio::time::interval(REFRESH_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // Closed when no watcher could be made (its callback, holding the sender, was dropped).
    let mut fs_open = true;
    loop {
        let ev = tokio::select! {
            ev = follow.recv() => match ev {
                Some(f) => Event::Follow(f),
                None => break,
            },
            ev = fs.recv(), if fs_open => match ev {
                Some(e) => Event::Fs(e),
                None => {
                    fs_open = false;
                    continue;
                }
            },
            _ = tick.tick() => {
                recover_lost(&host, &mut st).await;
                for p in st.polled.iter().cloned().collect::<Vec<_>>() {
                    catch_up(&host, &mut st, &p).await;
                }
                st.recover_roots(&*sink);
                st.settle_due();
                flush(&host, &sink, &mut st);
                continue;
            }
            _ = shutdown.changed() => break,
        };
        handle(&host, &sink, &shutdown, &mut st, ev).await;
    }
}

async fn handle(
    host: &Arc<Host>,
    sink: &Arc<dyn Sink>,
    shutdown: &tokio::sync::watch::Receiver<bool>,
    st: &mut State,
    ev: Event,
) {
    match ev {
        Event::Follow(Follow::Watch(p)) => {
            let first = !st.files.contains_key(&p);
            st.watch_file(&**sink, p.clone());
            if first {
                catch_up(host, st, &p).await;
            }
        }
        Event::Follow(Follow::Unwatch(p)) => st.unwatch_file(&p),
        Event::Follow(Follow::SettingsChanged { roots_changed }) => {
            st.refresh_all = true;
            if roots_changed {
                let roots = host.roots();
                st.watch_roots(&**sink, roots.clone());
                crate::sync::write(&host.index).retain_roots(&roots);
                // A newer build supersedes a running one (issue 25 item 6): it stops at
                // its next file, and this one starts when it has.
                let generation = host.next_index_generation();
                tokio::spawn(build_index(
                    host.clone(),
                    sink.clone(),
                    shutdown.clone(),
                    generation,
                ));
            }
        }
        Event::Fs(Err(e)) => sink.log(Level::Log, format!("watcher error: {e}")),
        Event::Fs(Ok(event)) => {
            if matches!(event.kind, EventKind::Access(_)) {
                return;
            }
            for path in event.paths {
                if st.files.contains_key(&path) {
                    on_file_changed(host, &**sink, st, &path).await;
                }
                if st.dirs.contains_key(&path)
                    && matches!(
                        event.kind,
                        EventKind::Remove(_)
                            | EventKind::Modify(notify::event::ModifyKind::Name(_))
                    )
                {
                    // A followed file's folder removed or renamed away: its files are gone
                    // from where they are followed (issue 25 item 4). The folder is watched
                    // again at the next tick whatever was seen before: notify forgets a
                    // deleted folder's watch by its path after it reports the event, and a
                    // folder already made again (and watched by `recover_lost`) would lose its
                    // new watch with it (CI: an append after the folder came back was never
                    // seen). A watch asked for after this event is made after that removal.
                    let inside: Vec<PathBuf> = st
                        .files
                        .keys()
                        .filter(|f| f.parent() == Some(path.as_path()))
                        .cloned()
                        .collect();
                    for f in inside {
                        on_file_changed(host, &**sink, st, &f).await;
                        st.lost.insert(f, None);
                    }
                }
                if !st.roots.iter().any(|r| path.starts_with(r)) {
                    continue;
                }
                if st.root_dirs.contains(&path)
                    && !std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_dir())
                {
                    // A watched folder under a root removed or renamed away: forgotten, so
                    // that one made again there is watched again; its transcripts leave the
                    // index (issue 25 item 5: they stayed, and new ones never came).
                    st.forget_dirs_under(&path);
                    let gone: Vec<PathBuf> = crate::sync::read(&host.index)
                        .entries()
                        .map(|(p, _)| p.clone())
                        .filter(|p| p.starts_with(&path))
                        .collect();
                    st.reindex.extend(gone);
                    continue;
                }
                if path.extension().is_some_and(|x| x == "jsonl") {
                    st.reindex.insert(path);
                } else if matches!(event.kind, EventKind::Create(_) | EventKind::Modify(_))
                    && std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_dir())
                    && !st.root_dirs.contains(&path)
                    && walk::walkable_dir(&st.roots, &path)
                {
                    // A new directory under a root (not a symlink): watch it and what it holds,
                    // and index the transcripts already in it.
                    st.watch_trees(&**sink, std::slice::from_ref(&path));
                    st.reindex
                        .extend(walk::walk(std::slice::from_ref(&path)).files);
                }
            }
        }
    }
}

/// A file just followed may have changed between its load and the watch on its directory
/// (the follower registers watches asynchronously): the change would never be reported. Its
/// disk source is brought up to date now (a `stat` when nothing changed).
async fn catch_up(host: &Host, st: &mut State, path: &Path) {
    let Some(source) = host.loaded_disk_source(path) else {
        return;
    };
    let change = tokio::task::spawn_blocking(move || source.refresh_disk())
        .await
        .unwrap_or(DiskChange::Unchanged);
    if change != DiskChange::Unchanged {
        st.dirty.insert(path.to_path_buf());
    }
}

async fn on_file_changed(host: &Host, sink: &dyn Sink, st: &mut State, path: &Path) {
    let source = host.loaded_disk_source(path);
    let raw = host.raw_docs_of(path);
    if !raw.is_empty() {
        st.changed_raw.insert(path.to_path_buf());
        // The editor's buffers stay as they are, but their check of the bytes on disk
        // (invalid UTF-8) is out of date.
        for doc in raw {
            if let Some(s) = host.raw_source(&doc) {
                s.disk_changed();
            }
        }
    }
    st.track_settling(path);
    let Some(source) = source else {
        return;
    };
    let change = tokio::task::spawn_blocking(move || source.refresh_disk())
        .await
        .unwrap_or(DiskChange::Unchanged);

    match change {
        DiskChange::Unchanged => {}
        DiskChange::Appended(_) => {
            st.dirty.insert(path.to_path_buf());
        }
        DiskChange::Reloaded => {
            sink.log(
                Level::Info,
                format!("{} was truncated or replaced; re-read it", path.display()),
            );
            st.dirty.insert(path.to_path_buf());
        }
        DiskChange::Missing(why) => {
            st.dirty.insert(path.to_path_buf());
            let dir = path.parent().and_then(dir_id);
            st.lost.insert(path.to_path_buf(), dir);
            let msg = format!(
                "transcript {} is gone ({why}); its view is empty until it reappears",
                path.display()
            );
            sink.log(Level::Warning, msg.clone());
            sink.show(Level::Warning, msg);
        }
    }
}

/// Looks at the followed files found gone (`State::lost`): a folder made again since is
/// watched again, and a file back is read again (and its views refreshed).
async fn recover_lost(host: &Host, st: &mut State) {
    if st.lost.is_empty() {
        return;
    }
    let lost: Vec<(PathBuf, Option<(u64, u64)>)> =
        st.lost.iter().map(|(p, d)| (p.clone(), *d)).collect();
    for (p, was) in lost {
        if !st.files.contains_key(&p) {
            st.lost.remove(&p);
            continue;
        }
        let Some(dir) = p.parent() else {
            continue;
        };
        let now = dir_id(dir);
        if now.is_some() && now != was {
            if let Some(w) = st.watcher.as_mut() {
                let _ = w.unwatch(dir);
                let _ = w.watch(dir, RecursiveMode::NonRecursive);
            }
            st.lost.insert(p.clone(), now);
        }
        if std::fs::metadata(&p).is_ok_and(|m| m.is_file()) {
            st.lost.remove(&p);
            catch_up(host, st, &p).await;
        }
    }
}

fn flush(host: &Arc<Host>, sink: &Arc<dyn Sink>, st: &mut State) {
    let ready =
        (!st.dirty.is_empty() || !st.changed_raw.is_empty() || st.refresh_all) && !sink.busy();
    let mut paths: Vec<PathBuf> = st.reindex.drain().collect();
    if ready {
        // Followed files under the roots whose views are refreshed now (appended to, or
        // settled: then their live state ends although nothing on disk changed) are told to
        // the client's session list with them (issue 23 item 9).
        for p in &st.dirty {
            if st.roots.iter().any(|r| p.starts_with(r)) && !paths.contains(p) {
                paths.push(p.clone());
            }
        }
    }
    if !paths.is_empty() {
        let host = host.clone();
        let sink = sink.clone();
        tokio::spawn(async move {
            let search = host.search_index();
            let told = paths.clone();
            for p in paths {
                let old = crate::sync::read(&host.index).get(&p).cloned();
                let q = p.clone();
                let roots = host.roots();
                let s = search.clone();
                let res = tokio::task::spawn_blocking(move || {
                    // As the initial scan: no symlinks, nothing outside the roots.
                    if !walk::indexable(&roots, &q) {
                        if let Some(s) = &s {
                            s.remove(&q);
                        }
                        return Ok(disk::Refresh::Gone);
                    }
                    // The search index (issue 26) from the same read.
                    match &s {
                        Some(s) => search::refresh_file(&q, old.as_ref(), s),
                        None => disk::refresh(&q, old.as_ref()),
                    }
                })
                .await;
                let mut idx = crate::sync::write(&host.index);
                match res {
                    Ok(Ok(disk::Refresh::Whole(e) | disk::Refresh::Tail { entry: e, .. })) => {
                        idx.insert(p, e)
                    }
                    Ok(Ok(disk::Refresh::Gone)) => idx.remove(&p),
                    _ => {}
                }
            }
            if let Some(s) = search {
                let _ = tokio::task::spawn_blocking(move || s.commit()).await;
            }
            sink.sessions_changed(told);
        });
    }
    if !ready {
        // Nothing to refresh, or the previous batch is still waiting for the client: keep
        // the work queued.
        return;
    }
    let all = std::mem::take(&mut st.refresh_all);
    let dirty: Vec<PathBuf> = st.dirty.drain().collect();
    let raw: Vec<PathBuf> = st.changed_raw.drain().collect();
    let mut views: Vec<DocId> = if all {
        host.view_docs()
    } else {
        dirty.iter().flat_map(|p| host.view_docs_of(p)).collect()
    };
    views.sort();
    views.dedup();
    let raw: Vec<DocId> = raw.iter().flat_map(|p| host.raw_docs_of(p)).collect();
    sink.changed(Changes {
        views,
        raw,
        features: all || !dirty.is_empty(),
    });
}

/// Builds the session index (sessions and workspace symbols) from the host's roots: the
/// cache of the previous run first (`index::disk::cache_path`), then every file whose size or
/// modification time changed is read again (appends from their last turn), files gone are
/// dropped, and the cache is written back. Reports [`IndexProgress`] to the sink.
///
/// `generation` comes from [`Host::next_index_generation`]: one build runs at a time (it
/// holds `Host::index_build`), and a build whose generation is no longer the newest stops
/// before its next file, changes the index no more, and logs
/// `index build superseded after N of M files` (issue 25 item 6: four quick `roots` changes
/// ran four builds at once, 4.4× one build's memory).
pub async fn build_index(
    host: Arc<Host>,
    sink: Arc<dyn Sink>,
    shutdown: tokio::sync::watch::Receiver<bool>,
    generation: u64,
) {
    let _one_at_a_time = host.index_build.lock().await;
    if host.index_superseded(generation) {
        return;
    }
    let (roots, use_cache) = (host.roots(), host.index_cache());
    let r = roots.clone();
    // The previous roots' search index is closed first (its writer lock released: the same
    // roots again open the same folder).
    let previous = host
        .search
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    let (files, cached, opened) = tokio::task::spawn_blocking(move || {
        drop(previous);
        let cache = disk::cache_path(&r).filter(|_| use_cache);
        let cached = cache.as_deref().map(|c| disk::load_cache(c, &r));
        // The search index of these roots (issue 26): beside the cache, or in a temporary
        // folder when nothing is cached.
        let opened = match disk::search_dir(&r).filter(|_| use_cache) {
            Some(d) => search::SearchIndex::open(&d),
            None => search::SearchIndex::open_temporary(),
        };
        (disk::scan_roots(&r), cached, Some(opened))
    })
    .await
    .unwrap_or_default();
    let search = match opened {
        Some(Ok(s)) => {
            let s = Arc::new(s);
            // A restarting server's predecessor may hold the writer lock for a moment.
            for _ in 0..25 {
                if s.writable() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
                let t = s.clone();
                let got = tokio::task::spawn_blocking(move || t.try_writable()).await;
                if got.unwrap_or(false) {
                    break;
                }
            }
            if !s.writable() {
                sink.log(
                    Level::Warning,
                    "the search index is being written by another transcript-ls; this one \
                     searches what that one indexes"
                        .to_string(),
                );
            }
            *host.search.write().unwrap_or_else(|e| e.into_inner()) = Some(Ok(s.clone()));
            Some(s)
        }
        Some(Err(e)) => {
            sink.log(Level::Warning, format!("search is unavailable: {e}"));
            *host.search.write().unwrap_or_else(|e| e.into_inner()) = Some(Err(e.to_string()));
            None
        }
        None => None,
    };
    if let Some(s) = &search {
        let present: HashSet<&PathBuf> = files.iter().collect();
        s.retain(|p| present.contains(&p.to_path_buf()));
    }
    let mut last_commit = std::time::Instant::now();
    {
        let mut idx = crate::sync::write(&host.index);
        // The files of older roots must not remove the newer roots' entries.
        if host.index_superseded(generation) {
            drop(idx);
            return superseded(&*sink, 0, files.len(), false);
        }
        if idx.file_count() == 0
            && let Some(c) = cached
        {
            *idx = c;
        }
        let present: HashSet<&PathBuf> = files.iter().collect();
        let gone: Vec<PathBuf> = idx
            .entries()
            .map(|(p, _)| p.clone())
            .filter(|p| !present.contains(p))
            .collect();
        for p in gone {
            idx.remove(&p);
        }
    }
    let total = files.len();
    if total > 0 {
        sink.progress(IndexProgress::Begin { total });
    }
    let mut last_pct = 0;
    let mut changed = 0usize;
    let mut read = 0usize;
    // Files are read in batches on the blocking pool, the index locked once per batch.
    for (bi, batch) in files.chunks(32).enumerate() {
        if *shutdown.borrow() {
            return;
        }
        if host.index_superseded(generation) {
            return superseded(&*sink, read, total, true);
        }
        let olds: Vec<(PathBuf, Option<crate::index::SessionEntry>)> = {
            let idx = crate::sync::read(&host.index);
            batch
                .iter()
                .map(|p| (p.clone(), idx.get(p).cloned()))
                .collect()
        };
        let h = host.clone();
        let s = search.clone();
        let commit_due = last_commit.elapsed() >= SEARCH_COMMIT_EVERY;
        let results = tokio::task::spawn_blocking(move || {
            let r = olds
                .into_iter()
                // Checked between files: a superseded build stops within one file.
                .take_while(|_| !h.index_superseded(generation))
                .map(|(p, old)| {
                    let r = match &s {
                        Some(s) => search::refresh_file(&p, old.as_ref(), s),
                        None => disk::refresh(&p, old.as_ref()),
                    };
                    (p, r)
                })
                .collect::<Vec<_>>();
            // What is indexed so far becomes searchable (answers say `complete: false`).
            if commit_due && let Some(s) = &s {
                let _ = s.commit();
            }
            r
        })
        .await
        .unwrap_or_default();
        if commit_due {
            last_commit = std::time::Instant::now();
        }
        read += results.len();
        {
            let mut idx = crate::sync::write(&host.index);
            // Checked under the lock: the roots' change has already dropped the old roots'
            // entries, and a superseded build must not bring them back.
            if host.index_superseded(generation) {
                drop(idx);
                return superseded(&*sink, read, total, true);
            }
            for (p, r) in results {
                match r {
                    Ok(disk::Refresh::Unchanged) => {}
                    Ok(disk::Refresh::Whole(e) | disk::Refresh::Tail { entry: e, .. }) => {
                        changed += 1;
                        idx.insert(p, e);
                    }
                    Ok(disk::Refresh::Gone) => idx.remove(&p),
                    // A file that cannot be read (a zstd bomb, issue 25 item 1) is left out
                    // with a warning; the build goes on.
                    Err(e) => sink.log(
                        Level::Warning,
                        format!("cannot index {}: {e}; left out", p.display()),
                    ),
                }
            }
        }
        let done = ((bi + 1) * 32).min(total);
        let percent = (done * 100 / total.max(1)) as u32;
        if percent >= last_pct + 5 {
            last_pct = percent;
            sink.progress(IndexProgress::Report {
                done,
                total,
                percent,
            });
        }
    }
    host.set_index_ready();
    if let Some(s) = search.clone() {
        let res = tokio::task::spawn_blocking(move || {
            let r = s.commit();
            s.set_complete(true);
            r.map(|()| s.doc_count())
        })
        .await;
        match res {
            Ok(Ok(n)) => sink.log(Level::Info, format!("search index: {n} texts")),
            Ok(Err(e)) => sink.log(Level::Warning, format!("search index: {e}")),
            Err(_) => {}
        }
    }
    let (ns, nt, snapshot) = {
        let idx = crate::sync::read(&host.index);
        let snapshot = (changed > 0 && use_cache).then(|| idx.clone());
        (idx.session_count(), idx.turn_count(), snapshot)
    };
    if let Some(snapshot) = snapshot {
        let r = roots.clone();
        let res = tokio::task::spawn_blocking(move || match disk::cache_path(&r) {
            Some(c) => disk::save_cache(&c, &r, &snapshot),
            None => Ok(()),
        })
        .await;
        if let Ok(Err(e)) = res {
            sink.log(
                Level::Log,
                format!("cannot write the session index cache: {e}"),
            );
        }
    }
    let message = format!("indexed {ns} transcripts, {nt} turns");
    if total > 0 {
        sink.progress(IndexProgress::End {
            message: message.clone(),
        });
    }
    sink.log(Level::Info, message);
}

/// Ends a superseded build: its progress (if begun) and a log line counting the files it
/// read of the `total` found (issue 25 item 6). `begun`: whether its progress began.
fn superseded(sink: &dyn Sink, read: usize, total: usize, begun: bool) {
    let message = format!("index build superseded after {read} of {total} files");
    if begun && total > 0 {
        sink.progress(IndexProgress::End {
            message: message.clone(),
        });
    }
    sink.log(Level::Log, message);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sink that records what it is given.
    #[derive(Default)]
    struct Recorder {
        busy: std::sync::atomic::AtomicBool,
        changes: std::sync::Mutex<Vec<Changes>>,
    }

    impl Sink for Recorder {
        fn log(&self, _: Level, _: String) {}
        fn show(&self, _: Level, _: String) {}
        fn busy(&self) -> bool {
            self.busy.load(std::sync::atomic::Ordering::SeqCst)
        }
        fn changed(&self, changes: Changes) {
            self.changes.lock().unwrap().push(changes);
        }
        fn progress(&self, _: IndexProgress) {}
        fn sessions_changed(&self, _: Vec<PathBuf>) {}
    }

    fn state() -> State {
        State {
            watcher: None,
            files: HashMap::new(),
            dirs: HashMap::new(),
            roots: Vec::new(),
            root_dirs: HashSet::new(),
            dirty: HashSet::new(),
            changed_raw: HashSet::new(),
            refresh_all: false,
            reindex: HashSet::new(),
            settling: HashMap::new(),
            lost: HashMap::new(),
            root_ids: HashMap::new(),
            polled: HashSet::new(),
        }
    }

    #[test]
    fn changes_wait_while_the_sink_is_busy_and_name_the_documents() {
        let host = Arc::new(Host::new());
        let path = PathBuf::from("/tmp/live-test.jsonl");
        let key = crate::ide::snapshot::ViewKey {
            path: path.clone(),
            verbose: false,
        };
        host.open_view(&DocId::new("transcript:///tmp/live-test.jsonl"), key, "", 1);
        host.open_raw(
            &DocId::new("file:///tmp/live-test.jsonl"),
            Some(path.clone()),
            String::new(),
            1,
        );
        let rec = Arc::new(Recorder::default());
        let sink: Arc<dyn Sink> = rec.clone();
        let mut st = state();
        st.dirty.insert(path.clone());
        st.changed_raw.insert(path.clone());
        rec.busy.store(true, std::sync::atomic::Ordering::SeqCst);
        flush(&host, &sink, &mut st);
        assert!(rec.changes.lock().unwrap().is_empty(), "held while busy");
        rec.busy.store(false, std::sync::atomic::Ordering::SeqCst);
        flush(&host, &sink, &mut st);
        assert_eq!(
            *rec.changes.lock().unwrap(),
            vec![Changes {
                views: vec![DocId::new("transcript:///tmp/live-test.jsonl")],
                raw: vec![DocId::new("file:///tmp/live-test.jsonl")],
                features: true,
            }]
        );
        // Nothing left: nothing more is sent.
        flush(&host, &sink, &mut st);
        assert_eq!(rec.changes.lock().unwrap().len(), 1);
    }

    #[tokio::test]
    async fn a_write_before_the_watch_is_caught_up() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.jsonl");
        std::fs::write(&path, "{}\n").unwrap();
        let host = Arc::new(Host::new());
        host.disk_source(&path).await.unwrap();
        // Written after the load, before the follower watches the directory.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        std::io::Write::write_all(&mut f, b"{}\n").unwrap();
        let sink: Arc<dyn Sink> = Arc::new(Recorder::default());
        let (_tx, shutdown) = tokio::sync::watch::channel(false);
        let mut st = state();
        let ev = Event::Follow(Follow::Watch(path.clone()));
        handle(&host, &sink, &shutdown, &mut st, ev).await;
        assert_eq!(*host.loaded_disk_source(&path).unwrap().text(), "{}\n{}\n");
        assert!(st.dirty.contains(&path));
    }

    #[test]
    fn one_failing_directory_leaves_the_others_watched() {
        let dirs: Vec<PathBuf> = ["/r", "/r/a", "/r/locked", "/r/b"]
            .iter()
            .map(PathBuf::from)
            .collect();
        let mut watched = Vec::new();
        let failed = watch_each(&dirs, |d| {
            if d.ends_with("locked") {
                return Err("Permission denied".to_string());
            }
            watched.push(d.to_path_buf());
            Ok(())
        });
        assert_eq!(
            failed,
            vec![(PathBuf::from("/r/locked"), "Permission denied".to_string())]
        );
        assert_eq!(watched.len(), 3);
    }
}
