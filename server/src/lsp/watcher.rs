//! Live files (DESIGN.md §5): a notify watcher on the directory of every served transcript and
//! on the workspace-symbol roots, and the task that turns its events into work: appended bytes
//! read into the source (only the new bytes), views refreshed
//! (`workspace/textDocumentContent/refresh` when the client announced it, and
//! `transcript/didChangeVirtualDocument`), then `workspace/{semanticTokens,inlayHint,codeLens}/refresh`
//! when the client supports them. Refreshes are sent from this task (never awaited by a request
//! handler; LSP-NOTES §1.2 rule 3), at most one batch every [`REFRESH_EVERY`], one batch in
//! flight at a time. The same task keeps the workspace-symbol index up to date.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use notify::{EventKind, RecursiveMode, Watcher};
use tower_lsp_server::ls_types::request::WorkDoneProgressCreate;
use tower_lsp_server::ls_types::*;

use crate::ide::host::DiskChange;
use crate::ide::workspace_symbols;
use crate::index::disk;
use crate::lsp::custom::{
    DidChangeFile, DidChangeVirtualDocument, TextDocumentContentRefresh, UriParams,
};
use crate::lsp::server::Shared;
use crate::source::age;

/// Minimum interval between two refresh batches.
pub const REFRESH_EVERY: Duration = Duration::from_millis(200);

/// Work for the watcher task.
#[derive(Debug)]
pub enum Event {
    /// Follow this transcript file.
    Watch(PathBuf),
    /// Stop following it (one `Watch` fewer).
    Unwatch(PathBuf),
    /// Settings changed: refresh everything; re-index when the roots changed.
    SettingsChanged { roots_changed: bool },
    /// A file-system event from notify.
    Fs(notify::Result<notify::Event>),
}

/// Starts the watcher task, which watches the roots and then starts the initial index build
/// (once, at `initialized`).
pub fn start(shared: Arc<Shared>) {
    let rx = shared
        .events_rx
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    let Some(rx) = rx else {
        return;
    };
    tokio::spawn(run(shared, rx));
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
    /// `workspace_symbols::walk` lists them: never through a symlink; one that cannot be
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
}

impl State {
    fn watch_file(&mut self, shared: &Shared, path: PathBuf) {
        let n = self.files.entry(path.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            return;
        }
        self.track_settling(&path);
        let Some(dir) = path.parent().map(Path::to_path_buf) else {
            return;
        };
        let d = self.dirs.entry(dir.clone()).or_insert(0);
        *d += 1;
        if *d == 1
            && let Some(w) = self.watcher.as_mut()
            && let Err(e) = w.watch(&dir, RecursiveMode::NonRecursive)
        {
            shared.log(
                MessageType::WARNING,
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

    fn watch_roots(&mut self, shared: &Shared, roots: Vec<PathBuf>) {
        if let Some(w) = self.watcher.as_mut() {
            for d in self.root_dirs.drain() {
                if !self.dirs.contains_key(&d) {
                    let _ = w.unwatch(&d);
                }
            }
        }
        self.root_dirs.clear();
        self.roots = roots.clone();
        self.watch_trees(shared, &roots);
    }

    /// Watches every directory of the trees under `tops` (roots, or directories created
    /// under them) that is not watched yet.
    fn watch_trees(&mut self, shared: &Shared, tops: &[PathBuf]) {
        let tree = workspace_symbols::walk(tops);
        let mut failed = tree.unreadable;
        for r in &tree.truncated {
            shared.log(
                MessageType::WARNING,
                format!(
                    "{} holds more than {} folders: only the first are indexed and watched",
                    r.display(),
                    workspace_symbols::MAX_DIRS_PER_ROOT
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
            shared.log(
                MessageType::WARNING,
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

async fn run(shared: Arc<Shared>, mut rx: tokio::sync::mpsc::UnboundedReceiver<Event>) {
    let tx = shared.events.clone();
    let watcher = notify::recommended_watcher(move |res| {
        let _ = tx.send(Event::Fs(res));
    });
    let watcher = match watcher {
        Ok(w) => Some(w),
        Err(e) => {
            shared.log(
                MessageType::WARNING,
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
    };
    let roots = shared
        .settings
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .index_roots();
    st.watch_roots(&shared, roots);
    // The index is built only once the roots are watched: a file written after indexing
    // ends is then always seen (before, the build could finish before the first watch was
    // registered, and such a file was missed until the next change).
    tokio::spawn(build_index(shared.clone()));
    let in_flight = Arc::new(AtomicBool::new(false));
    let mut tick = tokio::time::interval(REFRESH_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut shutdown = shared.shutdown.subscribe();
    loop {
        tokio::select! {
            ev = rx.recv() => {
                let Some(ev) = ev else { break };
                handle(&shared, &mut st, ev).await;
            }
            _ = tick.tick() => {
                st.settle_due();
                flush(&shared, &mut st, &in_flight)
            }
            _ = shutdown.changed() => break,
        }
    }
}

async fn handle(shared: &Arc<Shared>, st: &mut State, ev: Event) {
    match ev {
        Event::Watch(p) => st.watch_file(shared, p),
        Event::Unwatch(p) => st.unwatch_file(&p),
        Event::SettingsChanged { roots_changed } => {
            st.refresh_all = true;
            if roots_changed {
                let roots = shared
                    .settings
                    .read()
                    .unwrap_or_else(|e| e.into_inner())
                    .index_roots();
                st.watch_roots(shared, roots.clone());
                shared
                    .index
                    .write()
                    .unwrap_or_else(|e| e.into_inner())
                    .retain_roots(&roots);
                tokio::spawn(build_index(shared.clone()));
            }
        }
        Event::Fs(Err(e)) => shared.log(MessageType::LOG, format!("watcher error: {e}")),
        Event::Fs(Ok(event)) => {
            if matches!(event.kind, EventKind::Access(_)) {
                return;
            }
            for path in event.paths {
                if st.files.contains_key(&path) {
                    on_file_changed(shared, st, &path).await;
                }
                if !st.roots.iter().any(|r| path.starts_with(r)) {
                    continue;
                }
                if path.extension().is_some_and(|x| x == "jsonl") {
                    st.reindex.insert(path);
                } else if matches!(event.kind, EventKind::Create(_) | EventKind::Modify(_))
                    && std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_dir())
                    && !st.root_dirs.contains(&path)
                    && workspace_symbols::walkable_dir(&st.roots, &path)
                {
                    // A new directory under a root (not a symlink): watch it and what it holds,
                    // and index the transcripts already in it.
                    st.watch_trees(shared, std::slice::from_ref(&path));
                    st.reindex
                        .extend(workspace_symbols::walk(std::slice::from_ref(&path)).files);
                }
            }
        }
    }
}

async fn on_file_changed(shared: &Arc<Shared>, st: &mut State, path: &Path) {
    let (source, raw_open) = {
        let store = shared.store.lock().unwrap_or_else(|e| e.into_inner());
        (store.disk_source(path), !store.raw_uris_of(path).is_empty())
    };
    if raw_open {
        st.changed_raw.insert(path.to_path_buf());
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
            shared.log(
                MessageType::INFO,
                format!("{} was truncated or replaced; re-read it", path.display()),
            );
            st.dirty.insert(path.to_path_buf());
        }
        DiskChange::Missing(why) => {
            st.dirty.insert(path.to_path_buf());
            let msg = format!(
                "transcript {} is gone ({why}); its view is empty until it reappears",
                path.display()
            );
            shared.log(MessageType::WARNING, msg.clone());
            let client = shared.client.clone();
            tokio::spawn(async move { client.show_message(MessageType::WARNING, msg).await });
        }
    }
}

fn flush(shared: &Arc<Shared>, st: &mut State, in_flight: &Arc<AtomicBool>) {
    if !st.reindex.is_empty() {
        let paths: Vec<PathBuf> = st.reindex.drain().collect();
        let shared = shared.clone();
        tokio::spawn(async move {
            for p in paths {
                let old = shared
                    .index
                    .read()
                    .unwrap_or_else(|e| e.into_inner())
                    .get(&p)
                    .cloned();
                let q = p.clone();
                let roots = shared
                    .settings
                    .read()
                    .unwrap_or_else(|e| e.into_inner())
                    .index_roots();
                let res = tokio::task::spawn_blocking(move || {
                    // As the initial scan: no symlinks, nothing outside the roots.
                    if workspace_symbols::indexable(&roots, &q) {
                        disk::refresh(&q, old.as_ref())
                    } else {
                        Ok(disk::Refresh::Gone)
                    }
                })
                .await;
                let mut idx = shared.index.write().unwrap_or_else(|e| e.into_inner());
                match res {
                    Ok(Ok(disk::Refresh::Whole(e) | disk::Refresh::Tail { entry: e, .. })) => {
                        idx.insert(p, e)
                    }
                    Ok(Ok(disk::Refresh::Gone)) => idx.remove(&p),
                    _ => {}
                }
            }
        });
    }
    if st.dirty.is_empty() && st.changed_raw.is_empty() && !st.refresh_all {
        return;
    }
    if in_flight.swap(true, Ordering::SeqCst) {
        return; // the previous batch is still waiting for the client: keep the work queued
    }
    let all = std::mem::take(&mut st.refresh_all);
    let dirty: Vec<PathBuf> = st.dirty.drain().collect();
    let raw: Vec<PathBuf> = st.changed_raw.drain().collect();
    let (views, raw_uris) = {
        let store = shared.store.lock().unwrap_or_else(|e| e.into_inner());
        let mut views: Vec<Uri> = if all {
            store.views.values().map(|v| v.uri.clone()).collect()
        } else {
            dirty.iter().flat_map(|p| store.view_uris_of(p)).collect()
        };
        views.sort();
        views.dedup_by(|a, b| a.as_str() == b.as_str());
        let raw_uris: Vec<Uri> = raw.iter().flat_map(|p| store.raw_uris_of(p)).collect();
        (views, raw_uris)
    };
    let caps = shared
        .caps
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    let client = shared.client.clone();
    let flag = in_flight.clone();
    let anything = all || !dirty.is_empty();
    tokio::spawn(async move {
        for uri in &views {
            if caps.text_document_content {
                let _ = client
                    .send_request::<TextDocumentContentRefresh>(UriParams { uri: uri.clone() })
                    .await;
            }
            client
                .send_notification::<DidChangeVirtualDocument>(UriParams { uri: uri.clone() })
                .await;
        }
        for uri in raw_uris {
            client
                .send_notification::<DidChangeFile>(UriParams { uri })
                .await;
        }
        if anything {
            if caps.semantic_tokens_refresh {
                let _ = client.semantic_tokens_refresh().await;
            }
            if caps.inlay_hint_refresh {
                let _ = client.inlay_hint_refresh().await;
            }
            if caps.code_lens_refresh {
                let _ = client.code_lens_refresh().await;
            }
        }
        flag.store(false, Ordering::SeqCst);
    });
}

/// Builds the session index (sessions and workspace symbols) from the configured roots: the
/// cache of the previous run first (`index::disk::cache_path`), then every file whose size or
/// modification time changed is read again (appends from their last turn), files gone are
/// dropped, and the cache is written back. Reports `$/progress` when the client supports
/// work-done progress.
pub async fn build_index(shared: Arc<Shared>) {
    let (roots, use_cache) = {
        let s = shared.settings.read().unwrap_or_else(|e| e.into_inner());
        (s.index_roots(), s.index_cache)
    };
    let r = roots.clone();
    let (files, cached) = tokio::task::spawn_blocking(move || {
        let cache = disk::cache_path(&r).filter(|_| use_cache);
        let cached = cache.as_deref().map(|c| disk::load_cache(c, &r));
        (disk::scan_roots(&r), cached)
    })
    .await
    .unwrap_or_default();
    {
        let mut idx = shared.index.write().unwrap_or_else(|e| e.into_inner());
        if idx.file_count() == 0
            && let Some(c) = cached
        {
            *idx = c;
        }
        let present: std::collections::HashSet<&PathBuf> = files.iter().collect();
        let gone: Vec<PathBuf> = idx
            .entries()
            .map(|(p, _)| p.clone())
            .filter(|p| !present.contains(p))
            .collect();
        for p in gone {
            idx.remove(&p);
        }
    }
    let progress_ok = shared
        .caps
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .work_done_progress;
    let token = NumberOrString::String("transcript-ls/index".to_string());
    let progress = if progress_ok
        && !files.is_empty()
        && shared
            .client
            .send_request::<WorkDoneProgressCreate>(WorkDoneProgressCreateParams {
                token: token.clone(),
            })
            .await
            .is_ok()
    {
        Some(
            shared
                .client
                .progress(token, "Indexing transcripts")
                .with_percentage(0)
                .begin()
                .await,
        )
    } else {
        None
    };
    let total = files.len();
    let mut last_pct = 0;
    let mut changed = 0usize;
    // Files are read in batches on the blocking pool, the index locked once per batch.
    for (bi, batch) in files.chunks(32).enumerate() {
        if *shared.shutdown.borrow() {
            return;
        }
        let olds: Vec<(PathBuf, Option<crate::index::SessionEntry>)> = {
            let idx = shared.index.read().unwrap_or_else(|e| e.into_inner());
            batch
                .iter()
                .map(|p| (p.clone(), idx.get(p).cloned()))
                .collect()
        };
        let results = tokio::task::spawn_blocking(move || {
            olds.into_iter()
                .map(|(p, old)| {
                    let r = disk::refresh(&p, old.as_ref());
                    (p, r)
                })
                .collect::<Vec<_>>()
        })
        .await
        .unwrap_or_default();
        {
            let mut idx = shared.index.write().unwrap_or_else(|e| e.into_inner());
            for (p, r) in results {
                match r {
                    Ok(disk::Refresh::Unchanged) => {}
                    Ok(disk::Refresh::Whole(e) | disk::Refresh::Tail { entry: e, .. }) => {
                        changed += 1;
                        idx.insert(p, e);
                    }
                    Ok(disk::Refresh::Gone) => idx.remove(&p),
                    Err(e) => shared.log(
                        MessageType::LOG,
                        format!("cannot index {}: {e}", p.display()),
                    ),
                }
            }
        }
        let done = ((bi + 1) * 32).min(total);
        let pct = (done * 100 / total.max(1)) as u32;
        if let Some(pr) = &progress
            && pct >= last_pct + 5
        {
            last_pct = pct;
            pr.report_with_message(format!("{done}/{total} files"), pct)
                .await;
        }
    }
    shared
        .index_ready
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let (ns, nt, snapshot) = {
        let idx = shared.index.read().unwrap_or_else(|e| e.into_inner());
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
            shared.log(
                MessageType::LOG,
                format!("cannot write the session index cache: {e}"),
            );
        }
    }
    let msg = format!("indexed {ns} transcripts, {nt} turns");
    if let Some(pr) = progress {
        pr.finish_with_message(msg.clone()).await;
    }
    shared.log(MessageType::INFO, msg);
}

#[cfg(test)]
mod tests {
    use super::*;

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
