//! One transcript source of the document host ([`crate::store::host`]), free of LSP types
//! (issue 8): its text (the editor's, changed by plain [`Edit`]s through a rope, or the file
//! on disk read by `source::load` and grown by appends; a big file is mapped, read, analysed
//! and rendered a window at a time with its pages dropped behind, issue 12), an incremental
//! `formats::Reader`, and the analysis, lookup tables and rendered views of each version,
//! built once per version and shared as an `Arc<Snapshot>` (DESIGN.md §6: cache analysis per
//! document version).
//!
//! Ordering (LSP-NOTES §1.2): every text mutation here is synchronous (a `std::sync::Mutex`),
//! so the `did_*` handlers apply it before their first `.await`. Builds take the text under
//! the lock, work without it (on a blocking thread), and store the result only if still
//! current. An append costs time in proportion to the appended bytes: the reader is fed from
//! its consumed offset when no byte before it changed, the analysis resumes at the start of
//! the last turn (`analysis::resume`, starting over only when an appended record reaches back
//! into a kept turn), the lookup tables are rebuilt from there (`Lookup::resume`) and the
//! outline keeps the entries of the turns left alone (`Snapshot::raw_symbols`).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use ropey::Rope;

use crate::ide::snapshot::{Snapshot, text_hash};
use crate::source::load::{self, complete_utf8_len};
use crate::source::position::{self as sp, Encoding};
use crate::source::text::RELEASE_STEP;
use crate::source::{LineIndex, Text};
use crate::store::build::{
    BUILDS, BuildState, Resume, SettingsStamp, TRIM_AFTER_BYTES, build, release_free_heap,
};
use crate::store::disk::*;

/// Where a source's text comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The editor's buffer (`didOpen` / `didChange`): authoritative for a raw `file:` document.
    Editor,
    /// The file on disk, followed by the watcher (behind `transcript:` views).
    Disk,
}

/// The text of a source.
#[derive(Debug, Clone)]
pub(super) enum Body {
    /// One string: as opened, as read (or mapped: issue 12) from disk, or as grown by appends.
    Flat(Arc<Text>),
    /// Edited by incremental changes.
    Rope(Rope),
}

#[derive(Debug)]
struct TextState {
    /// Bumped on every change.
    generation: u64,
    /// The editor's version (editor sources).
    version: Option<i32>,
    body: Body,
    /// No byte before this offset changed since a build last took the text.
    dirty_from: usize,
    /// Line index of a `Body::Flat` editor text (built on the first ranged change).
    flat_index: Option<LineIndex>,
    disk: Option<DiskState>,
}

/// One transcript source (a raw document open in the editor, or a file on disk).
pub struct Source {
    pub path: Option<PathBuf>,
    pub origin: Origin,
    text: Mutex<TextState>,
    build: tokio::sync::Mutex<BuildState>,
    /// Editor sources naming a file: what the one loader finds in the file's bytes on disk
    /// (the editor decodes the file itself, so its buffer cannot tell).
    disk_check: Arc<Mutex<DiskCheck>>,
    /// [`Source::snapshot`] read a torn text again from disk: the next
    /// [`Source::refresh_disk`] reports [`DiskChange::Reloaded`] even if it finds nothing new,
    /// so that the watcher tells the clients (issue 12).
    reread: std::sync::atomic::AtomicBool,
    /// Bytes a mapped text is read (and analysed) at a time: [`RELEASE_STEP`] (tests: less).
    window: usize,
}

/// One edit of an editor text: `range` (start, end) in the session's position encoding, or
/// `None` for the whole text; `text` replaces it. (LSP's `TextDocumentContentChangeEvent`,
/// converted by `lsp::from_proto::edit`.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub range: Option<(sp::Position, sp::Position)>,
    pub text: String,
}

/// Why a change was not applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangeError {
    /// The change's version is not newer than the document's: dropped (LSP-NOTES rule 2).
    Stale { have: i32, got: i32 },
    /// Not an editor document.
    NotEditor,
}

/// What a disk refresh found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DiskChange {
    Unchanged,
    /// `n` bytes appended.
    Appended(u64),
    /// Truncated or replaced: re-read from scratch.
    Reloaded,
    /// Deleted or unreadable: the text is now empty.
    Missing(String),
}

use crate::sync::lock;

impl Source {
    /// A source holding the editor's text at `didOpen`.
    pub fn editor(path: Option<PathBuf>, text: String, version: i32) -> Source {
        Source {
            path,
            origin: Origin::Editor,
            text: Mutex::new(TextState {
                generation: 1,
                version: Some(version),
                body: Body::Flat(Arc::new(text.into())),
                dirty_from: 0,
                flat_index: None,
                disk: None,
            }),
            build: tokio::sync::Mutex::new(BuildState::default()),
            disk_check: Arc::default(),
            reread: Default::default(),
            window: RELEASE_STEP,
        }
    }

    /// Reads a file from disk: mapped when it is [`load::MAP_FROM_BYTES`] or more and valid
    /// UTF-8 (issue 12), else read into memory. Errors are I/O errors (missing file,
    /// permission) and [`load::LoadError`]s.
    pub fn disk(path: PathBuf) -> std::io::Result<Source> {
        Source::disk_mapping_from(path, load::MAP_FROM_BYTES)
    }

    /// [`Source::disk`], mapping files from `map_from` bytes on and reading them `window`
    /// bytes at a time (tests map small files and read them in small windows).
    pub fn disk_windowed(path: PathBuf, map_from: u64, window: usize) -> std::io::Result<Source> {
        let mut s = Source::disk_mapping_from(path, map_from)?;
        s.window = window.max(1);
        Ok(s)
    }

    /// [`Source::disk`], mapping files from `map_from` bytes on (tests map small files).
    pub fn disk_mapping_from(path: PathBuf, map_from: u64) -> std::io::Result<Source> {
        let (text, disk) = read_whole(&path, map_from)?;
        Ok(Source {
            path: Some(path),
            origin: Origin::Disk,
            text: Mutex::new(TextState {
                generation: 1,
                version: None,
                body: Body::Flat(Arc::new(text)),
                dirty_from: 0,
                flat_index: None,
                disk: Some(disk),
            }),
            build: tokio::sync::Mutex::new(BuildState::default()),
            disk_check: Arc::default(),
            reread: Default::default(),
            window: RELEASE_STEP,
        })
    }

    /// The file behind an editor source changed on disk: the next snapshot is built again
    /// (it re-checks the file's bytes for invalid UTF-8; the text is unchanged, so the reader
    /// goes on from where it was).
    pub fn disk_changed(&self) {
        if self.origin == Origin::Editor && self.path.is_some() {
            lock(&self.text).generation += 1;
        }
    }

    /// The current generation (bumped on every change).
    pub fn generation(&self) -> u64 {
        lock(&self.text).generation
    }

    /// The editor version, for editor sources.
    pub fn version(&self) -> Option<i32> {
        lock(&self.text).version
    }

    /// Applies `didChange` content changes in order (synchronously). A change whose range
    /// names lines past the end is clamped to the end of the document.
    pub fn apply_changes(
        &self,
        version: i32,
        changes: Vec<Edit>,
        enc: Encoding,
    ) -> Result<(), ChangeError> {
        if self.origin != Origin::Editor {
            return Err(ChangeError::NotEditor);
        }
        let mut guard = lock(&self.text);
        let st = &mut *guard;
        let have = st.version.unwrap_or(i32::MIN);
        if version <= have {
            return Err(ChangeError::Stale { have, got: version });
        }
        for ch in changes {
            match ch.range {
                None => {
                    st.body = Body::Flat(Arc::new(ch.text.into()));
                    st.flat_index = None;
                    st.dirty_from = 0;
                }
                Some(range) => {
                    // Fast path: an insertion at the very end of a flat text (a transcript
                    // that grew and was reloaded by the editor) appends in place, O(appended).
                    if let Body::Flat(s) = &mut st.body {
                        let index = st.flat_index.get_or_insert_with(|| LineIndex::new(s));
                        let a = sp::position_to_offset(s, index, range.0, enc).unwrap_or(s.len());
                        let b = sp::position_to_offset(s, index, range.1, enc).unwrap_or(s.len());
                        if a == s.len() && b == s.len() {
                            if let Ok(mut build) = self.build.try_lock() {
                                build.reclaim(); // let the string grow without a copy
                            }
                            let old = s.len();
                            let text = Arc::make_mut(s).make_mut();
                            text.push_str(&ch.text);
                            index.append(text, old);
                            st.dirty_from = st.dirty_from.min(old);
                            continue;
                        }
                        let rope = Rope::from_str(s);
                        st.body = Body::Rope(rope);
                        st.flat_index = None;
                    }
                    let Body::Rope(rope) = &mut st.body else {
                        continue;
                    };
                    let end_char = rope.len_chars();
                    let a = sp::rope_char(rope, range.0, enc).unwrap_or(end_char);
                    let b = sp::rope_char(rope, range.1, enc).unwrap_or(end_char);
                    let (a, b) = (a.min(b), a.max(b));
                    let from = rope.char_to_byte(a);
                    rope.remove(a..b);
                    rope.insert(a, &ch.text);
                    st.dirty_from = st.dirty_from.min(from);
                }
            }
        }
        st.version = Some(version);
        st.generation += 1;
        Ok(())
    }

    /// The current text as one string (materialises a rope; O(n)). A mapped disk text not yet
    /// checked as UTF-8 is checked to its end, and read again lossily when it is not UTF-8
    /// (the text and warnings of a file read whole).
    pub fn text(&self) -> Arc<Text> {
        if self.origin == Origin::Disk {
            let mapped = match &lock(&self.text).body {
                Body::Flat(t) if t.is_mapped() => Some(t.clone()),
                _ => None,
            };
            if mapped.is_some_and(|t| !t.check_all()) {
                self.reread_torn();
            }
        }
        let body = lock(&self.text).body.clone();
        match body {
            Body::Flat(s) => s,
            Body::Rope(r) => Arc::new(r.to_string().into()),
        }
    }

    /// Re-reads a disk source after the watcher reported a change: appended bytes only when
    /// the file grew and its known bytes are unchanged; the whole file when it was truncated
    /// or replaced; an empty text when it is gone. A torn mapped text (the file was truncated
    /// under it) is read again, and so reported when [`Source::snapshot`] read it again first.
    pub fn refresh_disk(&self) -> DiskChange {
        let change = self.refresh_disk_now();
        if change == DiskChange::Unchanged
            && self.reread.swap(false, std::sync::atomic::Ordering::AcqRel)
        {
            return DiskChange::Reloaded;
        }
        change
    }

    /// Re-reads a torn disk text for [`Source::snapshot`], leaving the report to the watcher's
    /// next [`Source::refresh_disk`].
    fn reread_torn(&self) {
        // A text found not to be UTF-8 as it was read is read again lossily: the file did not
        // change, so nothing is reported.
        let invalid = self.text_invalid();
        if self.refresh_disk_now() == DiskChange::Reloaded && !invalid {
            self.reread
                .store(true, std::sync::atomic::Ordering::Release);
        }
    }

    fn refresh_disk_now(&self) -> DiskChange {
        let Some(path) = self.path.clone() else {
            return DiskChange::Unchanged;
        };
        let (known_len, known_id, tail, was_missing, text, map_from, known_stamp, samples, zst) = {
            let st = lock(&self.text);
            let Some(d) = &st.disk else {
                return DiskChange::Unchanged;
            };
            let text = match &st.body {
                Body::Flat(t) => Some(t.clone()),
                Body::Rope(_) => None,
            };
            (
                d.len,
                d.id,
                d.tail.clone(),
                d.missing,
                text,
                d.map_from,
                d.stamp,
                d.samples.clone(),
                d.compressed,
            )
        };
        // A mapped text the file was truncated under holds zeros: read it again. So is one
        // found not to be UTF-8 as it was read; it is read lossily.
        let known_invalid = text.as_ref().is_some_and(|t| t.invalid());
        let torn = known_invalid || text.as_ref().is_some_and(|t| t.torn());
        let md = match std::fs::metadata(&path) {
            Ok(md) => md,
            Err(e) => {
                if was_missing {
                    return DiskChange::Unchanged;
                }
                return self.set_missing(e.to_string());
            }
        };
        let id = file_id(&md);
        let len = md.len();
        let stamp = stamp_of(&md);
        // Same length and inode but other times: rewritten in place, or only touched; read
        // again, as when unsure (issue 25 item 2: only length and inode were compared).
        let rewritten =
            len == known_len && stamp.is_some() && known_stamp.is_some() && stamp != known_stamp;
        let replaced = was_missing
            || torn
            || rewritten
            || (id.is_some() && known_id.is_some() && id != known_id);
        if !replaced && len == known_len {
            return DiskChange::Unchanged;
        }
        // The file changed. A mapped text is checked to its end first if its build has not
        // yet (outside the lock; issue 12): an append must not grow a valid prefix only, and
        // a text that is not UTF-8 is read again lossily.
        let invalid = known_invalid || text.as_ref().is_some_and(|t| !t.check_all());
        drop(text);
        if !replaced && !invalid && !zst && len > known_len {
            // A small file is read whole and all its old bytes checked; a big one from just
            // before the old end, its fingerprint's windows read apart.
            let whole = len <= WHOLE_CHECK_BYTES;
            let from = if whole {
                0
            } else {
                known_len - tail.len() as u64
            };
            let old_end = (known_len - from) as usize;
            match read_from(&path, from, len) {
                // The bytes before the old end and the fingerprint's windows (the head and
                // more) are as read: an append; else rewritten (issue 25 item 2).
                Ok(bytes)
                    if bytes.len() >= old_end
                        && bytes[old_end - tail.len()..old_end] == tail[..]
                        && if whole {
                            fingerprint_matches_bytes(&bytes, &samples)
                        } else {
                            fingerprint_matches(&path, &samples)
                        } =>
                {
                    let new = &bytes[old_end..];
                    // Records that would not fit in memory are not read (issue 25 item 8):
                    // a file grown past that is refused as a whole, as at its open.
                    let fits = {
                        let st = lock(&self.text);
                        match &st.body {
                            Body::Flat(t) => crate::source::room::check_parts_fit(
                                &[t.raw_bytes(), new],
                                crate::source::room::available(),
                            ),
                            Body::Rope(_) => Ok(()),
                        }
                    };
                    if let Err(e) = fits {
                        return self.set_missing(e.to_string());
                    }
                    // Let the text grow in place (the cached snapshot is stale anyway).
                    self.release_cache();
                    let mut st = lock(&self.text);
                    let Some(d) = st.disk.as_mut() else {
                        return DiskChange::Unchanged;
                    };
                    let mut buf = std::mem::take(&mut d.partial);
                    buf.extend_from_slice(new);
                    let cut = complete_utf8_len(&buf);
                    d.len = known_len + new.len() as u64;
                    d.tail = tail_of(&bytes, 64);
                    if whole {
                        d.samples = fingerprint(&bytes);
                    }
                    // The times of the file as of this read (a later same-length rewrite
                    // changes them again).
                    d.stamp = stamp;
                    d.partial = buf[cut..].to_vec();
                    let st = &mut *st;
                    let mut s = match std::mem::replace(&mut st.body, Body::Flat(Arc::default())) {
                        Body::Flat(s) => s,
                        Body::Rope(r) => Arc::new(r.to_string().into()),
                    };
                    let from = s.len();
                    // A mapped text grows by a new mapping of the grown file, checked over the
                    // appended bytes only (issue 12: no copy of the file into memory).
                    let grown = s
                        .is_mapped()
                        .then(|| map_grown(&path, &s, &buf[..cut]))
                        .flatten();
                    if let Some(t) = grown {
                        s = Arc::new(t);
                    } else if let Some(d) = st.disk.as_mut() {
                        load::decode_into(
                            &buf[..cut],
                            Arc::make_mut(&mut s).make_mut(),
                            &mut d.invalid,
                        );
                    }
                    st.body = Body::Flat(s);
                    st.dirty_from = st.dirty_from.min(from);
                    st.generation += 1;
                    return DiskChange::Appended(new.len() as u64);
                }
                Ok(_) => {} // the known tail changed: replaced
                Err(e) => return self.set_missing(e.to_string()),
            }
        }
        let read = if invalid {
            read_whole_lossily(&path, map_from)
        } else {
            read_whole(&path, map_from)
        };
        match read {
            Ok((text, disk)) => {
                let mut st = lock(&self.text);
                st.body = Body::Flat(Arc::new(text));
                st.disk = Some(disk);
                st.dirty_from = 0;
                st.generation += 1;
                DiskChange::Reloaded
            }
            Err(e) => self.set_missing(e.to_string()),
        }
    }

    fn set_missing(&self, why: String) -> DiskChange {
        let mut st = lock(&self.text);
        st.body = Body::Flat(Arc::default());
        st.dirty_from = 0;
        st.generation += 1;
        let map_from = st
            .disk
            .as_ref()
            .map_or(load::MAP_FROM_BYTES, |d| d.map_from);
        st.disk = Some(DiskState {
            missing: true,
            map_from,
            ..DiskState::default()
        });
        DiskChange::Missing(why)
    }

    /// A mapped text the file was truncated under ([`Text::torn`]), or found not to be UTF-8
    /// as it was read ([`Text::invalid`]): to be read again.
    fn text_torn(&self) -> bool {
        matches!(&lock(&self.text).body, Body::Flat(t) if t.torn() || t.invalid())
    }

    /// A mapped disk text whose file's length or times are not the ones read (issue 25
    /// item 3: a mapping shows a file rewritten in place, so bytes checked as UTF-8 may no
    /// longer be; the text must be read again before a request reads it). One `stat`.
    fn mapped_file_changed(&self) -> bool {
        let (path, len, stamp) = {
            let st = lock(&self.text);
            match (&st.body, &st.disk, &self.path) {
                (Body::Flat(t), Some(d), Some(p)) if t.is_mapped() && !d.missing => {
                    (p.clone(), d.len, d.stamp)
                }
                _ => return false,
            }
        };
        std::fs::metadata(&path).map_or(true, |md| md.len() != len || stamp_of(&md) != stamp)
    }

    /// Brings a disk text up to date for a request (a mapped file changed under it), leaving
    /// the report of the change to the watcher's next [`Source::refresh_disk`].
    fn refresh_for_request(&self) {
        if self.refresh_disk_now() != DiskChange::Unchanged {
            self.reread
                .store(true, std::sync::atomic::Ordering::Release);
        }
    }

    /// A mapped text found not to be UTF-8 as it was read ([`Text::invalid`]).
    fn text_invalid(&self) -> bool {
        matches!(&lock(&self.text).body, Body::Flat(t) if t.invalid())
    }

    /// Drops the resident pages of a mapped text (nothing for an owned one): called after a
    /// request that may have read spans of it (issue 12: hover, lenses and tokens of a 1 GB
    /// view left their pages resident, 1.20x the file's size in Neovim after the first
    /// requests, where the disk view's goal is 1.0x). The bytes are re-read from the page
    /// cache when touched again.
    pub fn release_mapped_pages(&self) {
        let text = match &lock(&self.text).body {
            Body::Flat(t) if t.is_mapped() => t.clone(),
            _ => return,
        };
        text.release_all();
    }

    /// Drops the cached snapshot if no build is running, so that an append can grow the text
    /// in place instead of copying it.
    pub fn release_cache(&self) {
        if let Ok(mut b) = self.build.try_lock() {
            b.reclaim();
        }
    }

    /// The snapshot of the current text, built if needed (on a blocking thread; the reader is
    /// fed incrementally when only bytes after its consumed offset changed).
    ///
    /// A mapped disk text the file was truncated under ([`Text::torn`]) is read again from
    /// disk and built again (up to [`load::READ_ATTEMPTS`] times): a file truncated and
    /// rewritten while it was read is served with its new content, never with the zeros the
    /// mapping showed (issue 12). A mapped text found not to be UTF-8 as the build read it
    /// ([`Text::invalid`]) is read again lossily and built again: the same text and warnings
    /// as a file read whole.
    pub async fn snapshot(self: &Arc<Self>, settings: &SettingsStamp) -> Arc<Snapshot> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            if self.origin == Origin::Disk && self.text_torn() {
                let src = self.clone();
                let _ = tokio::task::spawn_blocking(move || src.reread_torn()).await;
            } else if self.origin == Origin::Disk && self.mapped_file_changed() {
                // Rewritten under its mapping: read again before anything reads the text
                // (issue 25 item 3).
                let src = self.clone();
                let _ = tokio::task::spawn_blocking(move || src.refresh_for_request()).await;
            }
            // The build runs in its own task: a cancelled request (the client's
            // `$/cancelRequest` drops the handler's future) does not lose the work or the
            // incremental reader.
            let src = self.clone();
            let stamp = settings.clone();
            let task = tokio::spawn(async move { src.build_current(&stamp).await });
            let snap = match task.await {
                Ok(snap) => snap,
                Err(_) => Arc::new(Snapshot::empty(
                    self.path.clone(),
                    self.generation(),
                    self.version(),
                    settings.stamp,
                    settings.options.clone(),
                )),
            };
            // A text found not to be UTF-8 as the build read it is read again lossily (and
            // built again) like a torn one.
            if !(snap.text.torn() || snap.text.invalid()) || attempt >= load::READ_ATTEMPTS {
                return snap;
            }
            let src = self.clone();
            let _ = tokio::task::spawn_blocking(move || src.reread_torn()).await;
        }
    }

    async fn build_current(&self, settings: &SettingsStamp) -> Arc<Snapshot> {
        let mut b = self.build.lock().await;
        let (generation, version, body, dirty_from, invalid) = {
            let st = lock(&self.text);
            let invalid = st
                .disk
                .as_ref()
                .map(|d| d.invalid.clone())
                .unwrap_or_default();
            (
                st.generation,
                st.version,
                st.body.clone(),
                st.dirty_from,
                invalid,
            )
        };
        if let Some(s) = &b.snapshot
            && s.generation == generation
            && !s.text.torn()
            && !s.text.invalid()
            && s.settings == settings.stamp
            // A file read as still being written may have settled since (file-age rule).
            && (s.options.file_complete
                || !settings.file_state.is_complete(self.path.as_deref()))
        {
            return s.clone();
        }
        b.reclaim();
        let reader = b.reader.take().filter(|r| dirty_from >= r.consumed_bytes());
        let lines = b.lines.take().filter(|l| dirty_from >= l.len());
        // The previous analysis goes on only over records appended to the same reader.
        let resume = match (&reader, b.analysis.take(), b.checkpoint.take()) {
            (Some(_), Some((a, l, s)), Some(c)) => Some((a, l, s, c)),
            _ => None,
        };
        // The build owns the text from here: later changes count from the text it took.
        {
            let mut st = lock(&self.text);
            if st.generation == generation {
                st.dirty_from = usize::MAX;
            }
        }
        let path = self.path.clone();
        let stamp = settings.clone();
        let check = (self.origin == Origin::Editor).then(|| self.disk_check.clone());
        let window = self.window;
        let job = tokio::task::spawn_blocking(move || {
            build(
                window,
                path,
                body,
                reader,
                lines,
                resume,
                generation,
                version,
                &stamp,
                &invalid,
                check.as_deref(),
            )
        });
        match job.await {
            Ok((snap, resume, checkpoint)) => {
                BUILDS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let snap = Arc::new(snap);
                match resume {
                    Resume::Reader(r) => b.reader = Some(r),
                    Resume::Lent(l) => b.lent = Some(l),
                }
                b.checkpoint = checkpoint;
                b.snapshot = Some(snap.clone());
                if snap.text.len() >= TRIM_AFTER_BYTES && snap.kept_turns == 0 {
                    // A whole read: the reader's temporaries and the previous snapshot are
                    // freed by now. Not after an append (it frees little, and each trim makes
                    // the next big allocation fault its pages in again). Now, not later: the
                    // build's free pages are in its thread's arena, which the threads making
                    // the first answers do not allocate from (deferring it by 500 ms raised
                    // the peak RSS of a 1 GB open in Neovim from 1.62x to 2.07x, issue 12).
                    release_free_heap();
                }
                // The text once (issue 12): a rope the build made a string of is replaced by
                // that string, shared with the snapshot (the next edit inside the text makes
                // a rope of it again; an append at the end grows it in place).
                let mut st = lock(&self.text);
                if st.generation == generation && matches!(st.body, Body::Rope(_)) {
                    st.body = Body::Flat(snap.text.clone());
                    st.flat_index = None;
                }
                snap
            }
            Err(_) => {
                // The build panicked: start over with a fresh reader next time and serve an
                // empty snapshot now (never a crash of the server).
                let mut st = lock(&self.text);
                st.dirty_from = 0;
                Arc::new(Snapshot::empty(
                    self.path.clone(),
                    generation,
                    version,
                    settings.stamp,
                    settings.options.clone(),
                ))
            }
        }
    }
}

/// Hash of a rope's text, equal to [`text_hash`] of the same string.
pub fn rope_hash(rope: &Rope) -> u64 {
    text_hash(rope.chunks())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::load::InvalidUtf8;
    use crate::source::position::Position;

    fn change(l0: u32, c0: u32, l1: u32, c1: u32, text: &str) -> Edit {
        Edit {
            range: Some((Position::new(l0, c0), Position::new(l1, c1))),
            text: text.to_string(),
        }
    }

    #[test]
    fn incremental_changes_and_stale_versions() {
        let s = Source::editor(None, "ab\n😀c\n".into(), 1);
        s.apply_changes(2, vec![change(1, 2, 1, 3, "X")], Encoding::Utf16)
            .unwrap();
        assert_eq!(*s.text(), "ab\n😀X\n");
        s.apply_changes(3, vec![change(2, 0, 2, 0, "tail")], Encoding::Utf8)
            .unwrap();
        assert_eq!(*s.text(), "ab\n😀X\ntail");
        assert_eq!(
            s.apply_changes(3, vec![change(0, 0, 0, 0, "no")], Encoding::Utf8),
            Err(ChangeError::Stale { have: 3, got: 3 })
        );
        // Past the end: clamped to the end.
        s.apply_changes(4, vec![change(9, 0, 9, 0, "!")], Encoding::Utf8)
            .unwrap();
        assert_eq!(*s.text(), "ab\n😀X\ntail!");
        // Never built: everything is dirty. After a build took the text, an edit on line 1
        // keeps the bytes of line 0 clean.
        assert_eq!(lock(&s.text).dirty_from, 0);
        lock(&s.text).dirty_from = usize::MAX;
        s.apply_changes(5, vec![change(1, 2, 1, 2, "Y")], Encoding::Utf16)
            .unwrap();
        assert_eq!(lock(&s.text).dirty_from, 7);
        assert_eq!(*s.text(), "ab\n😀YX\ntail!");
    }

    #[test]
    fn appends_at_the_end_stay_flat() {
        let s = Source::editor(None, "{\"a\":1}\n{\"b\"".into(), 1);
        lock(&s.text).dirty_from = usize::MAX;
        s.apply_changes(2, vec![change(1, 5, 1, 5, ":2}\n")], Encoding::Utf16)
            .unwrap();
        s.apply_changes(
            3,
            vec![change(2, 0, 2, 0, "{\"c\":\"é\"}\n")],
            Encoding::Utf8,
        )
        .unwrap();
        assert!(matches!(lock(&s.text).body, Body::Flat(_)));
        assert_eq!(*s.text(), "{\"a\":1}\n{\"b\":2}\n{\"c\":\"é\"}\n");
        assert_eq!(lock(&s.text).dirty_from, 12);
        // A change inside the text switches to the rope.
        s.apply_changes(4, vec![change(0, 1, 0, 4, "\"z\"")], Encoding::Utf16)
            .unwrap();
        assert!(matches!(lock(&s.text).body, Body::Rope(_)));
        assert_eq!(*s.text(), "{\"z\":1}\n{\"b\":2}\n{\"c\":\"é\"}\n");
        assert_eq!(lock(&s.text).dirty_from, 1);
    }

    fn record(n: usize) -> String {
        let u = serde_json::json!({"type":"user","uuid":format!("u{n}"),"sessionId":"s",
            "timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","content":format!("p{n}")}});
        format!("{u}\n")
    }

    /// Issue 12: the reader's transcript is lent to the snapshot and taken back for the next
    /// append without a copy when no request holds the snapshot; with a copy (the held
    /// snapshot unchanged) when one does.
    #[tokio::test]
    async fn an_append_takes_the_transcript_back_without_a_copy() {
        let stamp = crate::store::host::Host::new().stamp();
        let two = record(1) + &record(2);
        let s = Arc::new(Source::editor(None, two.clone(), 1));
        let snap = s.snapshot(&stamp).await;
        assert_eq!(snap.transcript.entries.len(), 2);
        let entries = snap.transcript.entries.as_ptr();
        drop(snap);
        s.apply_changes(2, vec![change(2, 0, 2, 0, &record(3))], Encoding::Utf8)
            .unwrap();
        {
            let b = s.build.try_lock().unwrap();
            let r = b
                .reader
                .as_ref()
                .expect("the reader has its transcript back");
            assert_eq!(r.transcript().entries.as_ptr(), entries, "not copied");
            assert_eq!(b.lines.as_ref().map(LineIndex::len), Some(two.len()));
        }
        let held = s.snapshot(&stamp).await;
        assert_eq!(held.transcript.entries.len(), 3);
        assert_eq!(held.lines.line_count(), 4);
        s.apply_changes(3, vec![change(3, 0, 3, 0, &record(4))], Encoding::Utf8)
            .unwrap();
        {
            let b = s.build.try_lock().unwrap();
            let r = b.reader.as_ref().expect("a copy of the held transcript");
            assert_ne!(
                r.transcript().entries.as_ptr(),
                held.transcript.entries.as_ptr()
            );
        }
        let fresh = s.snapshot(&stamp).await;
        assert_eq!(held.transcript.entries.len(), 3);
        assert_eq!(*held.text, two + &record(3));
        assert_eq!(fresh.transcript.entries.len(), 4);
        assert_eq!(fresh.lines.line_count(), 5);
    }

    /// Issue 12: the text once. A rope made by an edit inside the text gives way to the
    /// string the build made of it, shared with the snapshot.
    #[tokio::test]
    async fn a_built_rope_gives_way_to_the_shared_string() {
        let stamp = crate::store::host::Host::new().stamp();
        let s = Arc::new(Source::editor(None, record(1) + &record(2), 1));
        s.apply_changes(2, vec![change(0, 1, 0, 1, " ")], Encoding::Utf8)
            .unwrap();
        assert!(matches!(lock(&s.text).body, Body::Rope(_)));
        let snap = s.snapshot(&stamp).await;
        match &lock(&s.text).body {
            Body::Flat(t) => assert!(Arc::ptr_eq(t, &snap.text)),
            Body::Rope(_) => panic!("still a rope beside the snapshot's string"),
        }
        assert_eq!(snap.transcript.entries.len(), 2);
    }

    #[test]
    fn hash_is_chunking_independent() {
        let text = "x".repeat(5000) + "😀" + &"y".repeat(3000);
        let rope = Rope::from_str(&text);
        assert!(rope.chunks().count() > 1);
        assert_eq!(rope_hash(&rope), text_hash(std::iter::once(text.as_str())));
    }

    #[test]
    fn utf8_split_keeps_incomplete_tail() {
        let mut b = "a😀".as_bytes().to_vec();
        b.truncate(3);
        assert_eq!(complete_utf8_len(&b), 1);
        assert_eq!(complete_utf8_len(&[b'a', 0xFF, b'b']), 3);
    }

    /// Issue 12: the cut looks at the last bytes only, and cuts exactly what the lossy
    /// decoding would turn into U+FFFD at the end and a later read could complete: on every
    /// prefix of mixed text (valid characters of 1 to 4 bytes, stray continuation bytes,
    /// invalid lead bytes), decoding the kept part and then the cut part with the next bytes
    /// equals decoding the whole.
    #[test]
    fn utf8_cut_at_the_tail_only() {
        let mut bytes = "aé€😀 ok\n".as_bytes().to_vec();
        bytes.extend_from_slice(b"\x80x\xff\xe2\x82y\xf0\x9f\x98");
        bytes.extend_from_slice("😀é".as_bytes());
        for end in 0..=bytes.len() {
            let prefix = &bytes[..end];
            let cut = complete_utf8_len(prefix);
            assert!(end - cut <= 3, "at {end}");
            if std::str::from_utf8(prefix).is_ok() {
                assert_eq!(cut, end, "valid text is never cut (at {end})");
            }
            // The cut part is the start of one sequence a continuation could complete.
            if cut < end {
                assert!(std::str::from_utf8(&prefix[cut..]).is_err());
                assert!(prefix[cut] >= 0xC0, "cut at a lead byte (at {end})");
            }
            let (kept, _) = load::decode(&prefix[..cut]);
            let (rest, _) = load::decode(&bytes[cut..]);
            let (whole, _) = load::decode(&bytes);
            assert_eq!(kept + &rest, whole, "at {end}");
        }
    }

    #[test]
    fn disk_check_reads_only_what_grew() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.jsonl");
        let lines_of =
            |v: Vec<InvalidUtf8>| v.iter().map(|i| (i.line, i.bytes)).collect::<Vec<_>>();
        std::fs::write(&p, b"{\"a\":\"\xff\"}\n{}\n").unwrap();
        let mut c = DiskCheck::default();
        assert_eq!(lines_of(c.refresh(&p)), vec![(0, 1)]);
        // Appends: valid, then an invalid byte at the very end (it might open a sequence whose
        // rest is not written yet: told once more bytes came), then a sequence cut in two.
        let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        std::io::Write::write_all(&mut f, b"{\"b\":1}\n{\"c\":\"\xfe").unwrap();
        assert_eq!(lines_of(c.refresh(&p)), vec![(0, 1)]);
        std::io::Write::write_all(&mut f, b"\xe2\x82").unwrap();
        assert_eq!(lines_of(c.refresh(&p)), vec![(0, 1), (3, 1)]);
        std::io::Write::write_all(&mut f, b"\xac\"}\n").unwrap();
        assert_eq!(
            lines_of(c.refresh(&p)),
            vec![(0, 1), (3, 1)],
            "a euro sign, valid"
        );
        std::io::Write::write_all(&mut f, b"\x80\n").unwrap();
        assert_eq!(lines_of(c.refresh(&p)), vec![(0, 1), (3, 1), (4, 1)]);
        // Replaced by a valid file: read again whole.
        std::fs::write(&p, b"{}\n").unwrap();
        assert_eq!(lines_of(c.refresh(&p)), vec![]);
        std::fs::remove_file(&p).unwrap();
        assert_eq!(lines_of(c.refresh(&p)), vec![]);
    }

    /// Issue 12: a disk source takes the text its windowed read checked: valid text as is, a
    /// character cut at the end kept back until an append completes it, and a file with
    /// invalid bytes decoded lossily with its warnings, as before.
    #[test]
    fn disk_sources_take_the_checked_text() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("u.jsonl");
        let smile = "😀".as_bytes();
        let mut bytes = b"{\"a\":\"\xc3\xa9\"}\n{\"b\":\"".to_vec();
        bytes.extend_from_slice(&smile[..2]);
        std::fs::write(&p, &bytes).unwrap();
        let s = Source::disk(p.clone()).unwrap();
        assert_eq!(*s.text(), "{\"a\":\"é\"}\n{\"b\":\"");
        {
            let st = lock(&s.text);
            let d = st.disk.as_ref().unwrap();
            assert_eq!(
                (d.len, d.partial.as_slice()),
                (bytes.len() as u64, &smile[..2])
            );
            assert!(d.invalid.is_empty());
        }
        let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        std::io::Write::write_all(&mut f, &smile[2..]).unwrap();
        std::io::Write::write_all(&mut f, b"\"}\n").unwrap();
        assert_eq!(s.refresh_disk(), DiskChange::Appended(5));
        assert_eq!(*s.text(), "{\"a\":\"é\"}\n{\"b\":\"😀\"}\n");

        let bad = b"{\"a\":1}\n{\"b\":\"\xff\"}\n";
        std::fs::write(&p, bad).unwrap();
        let s = Source::disk(p.clone()).unwrap();
        let (text, invalid) = load::decode(bad);
        assert_eq!(*s.text(), text);
        let st = lock(&s.text);
        assert_eq!(st.disk.as_ref().unwrap().invalid, invalid);
        assert_eq!(invalid.len(), 1);
    }

    #[test]
    fn disk_append_truncate_delete() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        std::fs::write(&p, "{\"a\":1}\n{\"b\"").unwrap();
        let s = Source::disk(p.clone()).unwrap();
        assert_eq!(s.refresh_disk(), DiskChange::Unchanged);
        let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        std::io::Write::write_all(&mut f, ":2}\n".as_bytes()).unwrap();
        assert_eq!(s.refresh_disk(), DiskChange::Appended(4));
        assert_eq!(*s.text(), "{\"a\":1}\n{\"b\":2}\n");
        std::fs::write(&p, "{}\n").unwrap();
        assert_eq!(s.refresh_disk(), DiskChange::Reloaded);
        assert_eq!(*s.text(), "{}\n");
        std::fs::remove_file(&p).unwrap();
        assert!(matches!(s.refresh_disk(), DiskChange::Missing(_)));
        assert_eq!(*s.text(), "");
        std::fs::write(&p, "{\"c\":3}\n").unwrap();
        assert_eq!(s.refresh_disk(), DiskChange::Reloaded);
        assert_eq!(*s.text(), "{\"c\":3}\n");
    }
}

/// Issue 12: disk sources of mapped files (mapped from 1 byte on here, so that small files
/// take the mapped path).
#[cfg(all(test, unix))]
mod mapped_tests {
    use super::*;

    fn records(from: usize, n: usize) -> String {
        (from..from + n)
            .map(|i| {
                let u = serde_json::json!({"type":"user","uuid":format!("u{i}"),"sessionId":"s",
                    "timestamp":"2026-01-01T00:00:00Z",
                    "message":{"role":"user","content":format!("prompt {i:05} {}", "é".repeat(40))}});
                format!("{u}\n")
            })
            .collect()
    }

    fn is_mapped(s: &Source) -> bool {
        matches!(&lock(&s.text).body, Body::Flat(t) if t.is_mapped())
    }

    /// A mapped file that grows stays mapped (a new mapping, only the appended bytes checked),
    /// with the same text, cut characters and warnings as the read path; invalid bytes appended
    /// make it an owned text decoded lossily; a truncation reloads it.
    #[test]
    fn a_mapped_disk_file_grows_and_is_truncated_as_a_read_one() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.jsonl");
        let smile = "😀".as_bytes();
        let mut bytes = records(0, 3).into_bytes();
        bytes.extend_from_slice(&smile[..2]);
        std::fs::write(&p, &bytes).unwrap();
        let s = Source::disk_mapping_from(p.clone(), 1).unwrap();
        assert!(is_mapped(&s));
        assert_eq!(*s.text(), records(0, 3), "the cut emoji waits for its end");
        let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        std::io::Write::write_all(&mut f, &smile[2..]).unwrap();
        std::io::Write::write_all(&mut f, b"\n").unwrap();
        std::io::Write::write_all(&mut f, records(3, 2).as_bytes()).unwrap();
        let grown = 3 + records(3, 2).len() as u64;
        assert_eq!(s.refresh_disk(), DiskChange::Appended(grown));
        assert!(is_mapped(&s), "grown by a new mapping");
        assert_eq!(*s.text(), records(0, 3) + "😀\n" + &records(3, 2));
        assert_eq!(s.refresh_disk(), DiskChange::Unchanged);

        std::io::Write::write_all(&mut f, b"{\"bad\":\"\xff\"}\n").unwrap();
        assert_eq!(s.refresh_disk(), DiskChange::Appended(12));
        assert!(!is_mapped(&s), "invalid bytes: an owned, lossy text");
        assert!(s.text().ends_with("{\"bad\":\"\u{fffd}\"}\n"));
        assert_eq!(lock(&s.text).disk.as_ref().unwrap().invalid.len(), 1);

        std::fs::write(&p, records(7, 1)).unwrap();
        assert_eq!(s.refresh_disk(), DiskChange::Reloaded);
        assert!(is_mapped(&s));
        assert_eq!(*s.text(), records(7, 1));
        // A file with invalid bytes is mapped and checked as it is read (issue 12); once the
        // invalid bytes are found it is read again, not mapped, and decoded as before.
        let bad = b"{\"a\":1}\n{\"b\":\"\xff\"}\n";
        std::fs::write(&p, bad).unwrap();
        let s = Source::disk_mapping_from(p.clone(), 1).unwrap();
        assert_eq!(*s.text(), load::decode(bad).0);
        assert!(!is_mapped(&s));
        assert_eq!(lock(&s.text).disk.as_ref().unwrap().invalid.len(), 1);
        assert_eq!(s.refresh_disk(), DiskChange::Unchanged, "nothing to report");
        // Not checked yet when the file grows: the append does not grow its valid prefix,
        // the file is read again lossily.
        std::fs::write(&p, bad).unwrap();
        let s = Source::disk_mapping_from(p.clone(), 1).unwrap();
        assert!(is_mapped(&s));
        std::io::Write::write_all(
            &mut std::fs::OpenOptions::new().append(true).open(&p).unwrap(),
            records(9, 1).as_bytes(),
        )
        .unwrap();
        assert_eq!(s.refresh_disk(), DiskChange::Reloaded);
        assert!(!is_mapped(&s));
        assert_eq!(*s.text(), load::decode(bad).0 + &records(9, 1));
        assert_eq!(lock(&s.text).disk.as_ref().unwrap().invalid.len(), 1);
    }

    /// Issue 12: a mapped file is checked as UTF-8 a window at a time as the build reads it.
    /// Invalid bytes in a late window (after many windows were read and analysed) give the
    /// snapshot of a file read whole: the text decoded lossily, one warning per bad line,
    /// the same records, figures and views; the early windows' text is never served.
    #[tokio::test]
    async fn invalid_utf8_in_a_late_window_reads_as_a_read_file() {
        let stamp = crate::store::host::Host::new().stamp();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("late.jsonl");
        let mut bytes = records(0, 300).into_bytes();
        let early = bytes.len();
        bytes.extend_from_slice(b"{\"type\":\"user\",\"uuid\":\"bad\",\"sessionId\":\"s\",\"message\":{\"role\":\"user\",\"content\":\"x\xff\xfey\"}}\n");
        bytes.extend_from_slice(records(300, 20).as_bytes());
        // And a character cut in the middle of a later line.
        bytes.extend_from_slice(b"{\"a\":\"\xc3\"}\n");
        bytes.extend_from_slice(records(320, 5).as_bytes());
        assert!(early > 40 << 10, "the bad line is many 1 KiB windows in");
        std::fs::write(&p, &bytes).unwrap();
        let read = Arc::new(Source::disk_mapping_from(p.clone(), u64::MAX).unwrap());
        let want = read.snapshot(&stamp).await;
        assert!(!want.text.is_mapped());
        assert_eq!(lock(&read.text).disk.as_ref().unwrap().invalid.len(), 2);
        for window in [1 << 10, 64 << 10, 4 << 20] {
            let s = Arc::new(Source::disk_windowed(p.clone(), 1, window).unwrap());
            assert!(is_mapped(&s), "mapped, not checked yet");
            let got = s.snapshot(&stamp).await;
            assert!(!got.text.is_mapped() && !got.text.invalid(), "read again");
            assert_eq!(*got.text, *want.text, "window {window}");
            assert_eq!(got.transcript.problems, want.transcript.problems);
            assert_eq!(got.transcript.entries.len(), want.transcript.entries.len());
            for verbose in [false, true] {
                assert_eq!(
                    got.view(verbose).view.text,
                    want.view(verbose).view.text,
                    "window {window}"
                );
            }
            // Reading it again lossily is no change of the file to report.
            assert_eq!(s.refresh_disk(), DiskChange::Unchanged);
        }
    }

    /// Issue 12: a mapped file read and analysed a window at a time (windows of 1 KiB to
    /// 64 KiB here, so that turns span many of them, and a file of one long turn) gives the
    /// snapshot a read file gives: the same records, figures and views.
    #[tokio::test]
    async fn a_mapped_file_analysed_in_windows_equals_a_read_one() {
        let stamp = crate::store::host::Host::new().stamp();
        let dir = tempfile::tempdir().unwrap();
        let demo =
            std::fs::read_to_string("../fixtures/demo/3f8a2c61-9d4e-4b7a-8c15-e2d07b9a4f63.jsonl")
                .unwrap();
        // One prompt, then every other record of the demo session eight times: one turn.
        let mut lines = demo.lines();
        let first = lines.next().unwrap();
        let rest: String = lines
            .filter(|l| !l.contains("\"type\":\"user\"") || l.contains("tool_result"))
            .map(|l| format!("{l}\n"))
            .collect();
        let one_turn = format!("{first}\n{}", rest.repeat(8));
        for (name, text) in [("many.jsonl", demo.repeat(6)), ("one.jsonl", one_turn)] {
            let p = dir.path().join(name);
            std::fs::write(&p, &text).unwrap();
            let read = Arc::new(Source::disk_mapping_from(p.clone(), u64::MAX).unwrap());
            let want = read.snapshot(&stamp).await;
            assert!(!want.text.is_mapped());
            for window in [1 << 10, 7 << 10, 64 << 10] {
                let s = Arc::new(Source::disk_windowed(p.clone(), 1, window).unwrap());
                let got = s.snapshot(&stamp).await;
                assert!(got.text.is_mapped());
                let figures = |s: &Snapshot| {
                    serde_json::to_value(crate::ide::stats::stats(
                        String::new(),
                        &s.transcript,
                        &s.analysis,
                    ))
                    .unwrap()
                };
                assert_eq!(got.transcript.entries.len(), want.transcript.entries.len());
                assert_eq!(figures(&got), figures(&want), "{name}, window {window}");
                for verbose in [false, true] {
                    assert_eq!(
                        got.view(verbose).view.text,
                        want.view(verbose).view.text,
                        "{name}, window {window}"
                    );
                }
            }
        }
    }

    /// Issue 12: the file behind a mapped snapshot is truncated and rewritten shorter. Rendering
    /// that snapshot touches pages past the new end: they read as zeros (SIGBUS handled, no
    /// crash) and the text is torn; the next snapshot reads the file again and shows the new
    /// content.
    #[tokio::test]
    async fn a_mapped_file_truncated_under_a_snapshot_is_read_again() {
        let stamp = crate::store::host::Host::new().stamp();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        let old = records(0, 400);
        assert!(old.len() > 16 * 4096);
        std::fs::write(&p, &old).unwrap();
        let s = Arc::new(Source::disk_mapping_from(p.clone(), 1).unwrap());
        let snap = s.snapshot(&stamp).await;
        assert!(snap.text.is_mapped());
        assert_eq!(snap.transcript.entries.len(), 400);

        let new = records(1000, 3);
        std::fs::write(&p, &new).unwrap();
        let view = snap.view(false);
        assert!(snap.text.torn(), "pages past the new end were touched");
        // Records of equal length: the first three spans hold the new records' bytes.
        assert!(
            view.view.text.contains("prompt 01000"),
            "the new bytes, seen through the map"
        );
        assert!(
            !view.view.text.contains("prompt 00399"),
            "zeros past the end"
        );

        let fresh = s.snapshot(&stamp).await;
        assert!(!fresh.text.torn());
        assert_eq!(*fresh.text, new);
        assert_eq!(fresh.transcript.entries.len(), 3);
        // The watcher's next look reports the re-read once, so that clients are told.
        assert_eq!(s.refresh_disk(), DiskChange::Reloaded);
        assert_eq!(s.refresh_disk(), DiskChange::Unchanged);
        let text = &fresh.view(false).view.text;
        assert!(
            text.contains("prompt 01002") && !text.contains("prompt 00003"),
            "{text}"
        );
    }
}
