//! Building a source's snapshot (issue 12: an append costs what it adds): [`BuildState`]
//! keeps what the next build reuses (the incremental reader, the line index, the analysis and
//! its checkpoint, the outline), taken back from the last snapshot without a copy when no
//! request holds it; [`build`] reads, analyses and assembles one [`Snapshot`]; the allocator's
//! free pages are handed back after big builds ([`release_free_heap`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::analysis::{self, Analysis};
use crate::formats::{LentReader, Reader};
use crate::ide::lookup::Lookup;
use crate::ide::snapshot::{Memo, Snapshot};
use crate::ide::symbols::Symbol;
use crate::model::Format;
use crate::source::LineIndex;
use crate::source::age::FileState;
use crate::source::load::InvalidUtf8;
use crate::store::disk::{DiskCheck, on_buffer};
use crate::store::document::Body;
use crate::sync::lock;

/// Text size from which a build that read the text from the start hands the heap's free pages
/// back to the system when it is done ([`release_free_heap`]); smaller documents leave too
/// little behind to be worth the call.
pub const TRIM_AFTER_BYTES: usize = 8 << 20;

/// Hands the allocator's free pages back to the system (glibc `malloc_trim`; nothing
/// elsewhere). A big build or a big answer leaves megabytes of freed small blocks spread over
/// the allocator's per-thread arenas, which glibc keeps resident: on a 100 MB document, 15
/// appends each answered with the whole outline left the server 17 MB bigger than trimming
/// does (issue 12, RSS after appends). Costs one walk over the free lists.
pub fn release_free_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only returns free memory of glibc's own heap to the system; it
    // touches no block in use and is thread-safe.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Snapshots built so far (by every source), and their count at the last
/// [`release_free_heap_after_builds`] that trimmed.
pub(super) static BUILDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
pub(super) static TRIMMED_AT_BUILDS: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(0);

/// [`release_free_heap`], when a snapshot was built since the last call that trimmed: a build
/// (and the answers made from its snapshot, the previous one's freed) is what leaves free pages
/// behind; a request answered again from the same snapshot frees little, and the walk over the
/// free lists cost 10-15 ms per answer on a 1 GB document (issue 12, foldingRange in Neovim).
pub fn release_free_heap_after_builds() {
    use std::sync::atomic::Ordering;
    let built = BUILDS.load(Ordering::SeqCst);
    if TRIMMED_AT_BUILDS.swap(built, Ordering::SeqCst) != built {
        release_free_heap();
    }
}

/// The settings a snapshot was built with, and their generation.
#[derive(Debug, Clone)]
pub struct SettingsStamp {
    pub stamp: u64,
    pub options: analysis::Options,
    pub verbose: bool,
    /// How to decide whether the file is finished (`options.file_complete` is set per build
    /// from it).
    pub file_state: FileState,
    /// Where the progress of a big build goes (issue 12, item 4).
    pub progress: crate::store::progress::ProgressHook,
}

impl SettingsStamp {
    /// The analysis options for the file at `path` now: the settings' options with
    /// `file_complete` decided by the file-age rule (`crate::source::age`, issue 11).
    pub fn options_for(&self, path: Option<&Path>) -> analysis::Options {
        analysis::Options {
            file_complete: self.file_state.is_complete(path),
            ..self.options.clone()
        }
    }
}

/// What a build reuses from the previous one (issue 12: an append costs what it adds).
///
/// The incremental reader's transcript is *lent* to the snapshot built from it rather than
/// copied: `lent` is the reader without it, and `snapshot.transcript` is its transcript. Before
/// the next build (or before an append grows the text in place) [`BuildState::reclaim`] takes
/// the transcript and the line index back from the snapshot: without a copy when no request
/// holds the snapshot any more, else by copying them (the snapshot stays valid for its
/// holders).
#[derive(Default)]
pub(super) struct BuildState {
    /// The reader with its transcript (when no snapshot holds it).
    pub(super) reader: Option<Reader>,
    /// The reader whose transcript `snapshot` holds.
    pub(super) lent: Option<LentReader>,
    /// The line index of the text the last snapshot was built from, taken back from it.
    pub(super) lines: Option<LineIndex>,
    /// The last snapshot's analysis and lookup tables, taken back from it, and the
    /// checkpoint to resume that analysis after an append (issue 12).
    pub(super) analysis: Option<(Analysis, Lookup, Vec<Arc<Symbol>>)>,
    pub(super) checkpoint: Option<analysis::Checkpoint>,
    pub(super) snapshot: Option<Arc<Snapshot>>,
}

impl BuildState {
    /// Drops the cached snapshot, taking back what the next build reuses (see the type's doc).
    pub(super) fn reclaim(&mut self) {
        let Some(snap) = self.snapshot.take() else {
            return;
        };
        let resumable = self.checkpoint.is_some();
        let (transcript, lines, analysis) = match Arc::try_unwrap(snap) {
            Ok(s) => (
                self.lent.is_some().then_some(s.transcript),
                // `s.text` is dropped here, so that an append can grow the text in place.
                s.lines,
                resumable.then(|| {
                    let symbols = s.memo.into_outline();
                    (s.analysis, s.lookup, symbols)
                }),
            ),
            Err(shared) => (
                self.lent.is_some().then(|| shared.transcript.clone()),
                shared.lines.clone(),
                resumable.then(|| {
                    let symbols = shared.memo.outline();
                    (shared.analysis.clone(), shared.lookup.clone(), symbols)
                }),
            ),
        };
        self.analysis = analysis;
        if let (Some(lent), Some(t)) = (self.lent.take(), transcript) {
            self.reader = Some(lent.restore(t));
        }
        self.lines = Some(lines);
    }
}

/// The reader after a build: with its transcript, or with it lent to the snapshot.
pub(super) enum Resume {
    Reader(Reader),
    Lent(LentReader),
}

#[allow(clippy::too_many_arguments)]
pub(super) fn build(
    window: usize,
    path: Option<PathBuf>,
    body: Body,
    reader: Option<Reader>,
    lines: Option<LineIndex>,
    previous: Option<(Analysis, Lookup, Vec<Arc<Symbol>>, analysis::Checkpoint)>,
    generation: u64,
    version: Option<i32>,
    stamp: &SettingsStamp,
    invalid: &[InvalidUtf8],
    disk_check: Option<&Mutex<DiskCheck>>,
) -> (Snapshot, Resume, Option<analysis::Checkpoint>) {
    let t0 = std::time::Instant::now();
    let text = match body {
        Body::Flat(s) => s,
        Body::Rope(r) => Arc::new(r.to_string().into()),
    };
    // The previous build's index goes on over the appended bytes (the caller passes it only
    // when no byte it indexed changed).
    let mut lines = lines.unwrap_or_default();
    let mut reader = reader.unwrap_or_default();
    // A big read reports its progress (issue 12, item 4), and a mapped text is read a window
    // at a time, its pages released behind the reader (issue 12: the file is never wholly
    // resident beside the model). The pieces end after a line, which reads the same records
    // and lines as one feed.
    let from = reader.consumed_bytes();
    // Not `text.len()`: a text mapped lazily is checked as UTF-8 window by window below.
    let total = text.byte_len();
    let mut load = stamp
        .progress
        .start("Reading", path.as_deref(), total - from);
    let options = stamp.options_for(path.as_deref());
    // A `/btw` aside file's snapshot marks records the reader did not (see below).
    // (Any file with something beside it that adds to it: the agent registry's `beside`.)
    let aside = path
        .as_deref()
        .is_some_and(crate::formats::agents::has_beside);
    // A mapped file read from the start is also analysed as it is read (issue 12): the
    // analysis reads spans of every record (text blocks, tool calls, prompts, answers), so
    // analysing the whole file at the end would bring most of it back into memory. After a
    // window the analysis resumes from the start of the last turn (`analysis::resume`, equal
    // to one analysis of the whole), and only once as many bytes were read as that turn
    // holds, so that the turn analysed again never costs more than the bytes read meanwhile.
    let analyse_windows = text.is_mapped() && previous.is_none() && invalid.is_empty() && !aside;
    let mut windowed: Option<(Analysis, analysis::Checkpoint)> = None;
    if load.active() || text.is_mapped() {
        let mut done = from.min(lines.len());
        let (mut analysed_to, mut last_turn_bytes) = (from, 0);
        for cut in crate::store::progress::line_cuts(text.raw_bytes(), from, window) {
            // A text mapped lazily is checked as UTF-8 up to `cut` here, just before the
            // reader reads the window (issue 12: its pages are faulted in once). Bytes that
            // are not UTF-8 stop the build: the text is `invalid` and the source reads the
            // file again lossily (`Source::snapshot`).
            let Some(upto) = text.prefix(cut) else {
                break;
            };
            if cut > lines.len() {
                // The line index grows from the `\n` bytes the reader finds (one scan).
                reader.feed_indexing(upto, &mut lines);
            } else {
                reader.feed(upto);
            }
            load.read(cut - from);
            if analyse_windows
                && cut < total
                && cut - analysed_to >= last_turn_bytes
                && reader.transcript().format.is_some_and(Format::is_known)
            {
                let (mut t, lent) = reader.lend();
                let revised = t.take_revised();
                let (a, c) = match windowed.take() {
                    Some((a, c)) => analysis::resume(a, c, revised, &t, upto, &options),
                    None => analysis::analyze_resumable(&t, upto, &options),
                };
                let turn_start = t.entries.get(c.start()).map_or(cut, |e| e.span.start);
                last_turn_bytes = cut.saturating_sub(turn_start);
                analysed_to = cut;
                windowed = Some((a, c));
                reader = lent.restore(t);
                // The analysis may have read anywhere before `cut`.
                text.release(0..cut);
            } else {
                text.release(done..cut);
            }
            done = cut;
        }
    } else {
        // The line index grows from the `\n` bytes the reader finds (one scan, issue 12).
        reader.feed_indexing(&text, &mut lines);
    }
    if text.invalid() {
        // Read again lossily and built anew (`Source::snapshot`): nothing of this is kept.
        load.end("invalid UTF-8: reading again".into());
        text.release_all();
        let mut snap = Snapshot::empty(
            path,
            generation,
            version,
            stamp.stamp,
            stamp.options.clone(),
        );
        snap.text = text;
        return (snap, Resume::Reader(Reader::default()), None);
    }
    if lines.len() != text.len() {
        let old = lines.len();
        lines.append(&text, old);
    }
    reader.settle_tail(&text);
    // An editor buffer of a file on disk: the bytes on disk tell where the editor met invalid
    // UTF-8 (issue 8 defect 11); the warnings are placed on the buffer's lines.
    let editor_invalid = match (disk_check, &path) {
        (Some(c), Some(p)) => {
            let on_disk = lock(c).refresh(p);
            on_buffer(&on_disk, &text, &lines)
        }
        _ => Vec::new(),
    };
    let invalid: &[InvalidUtf8] = if editor_invalid.is_empty() {
        invalid
    } else {
        &editor_invalid
    };
    let (mut transcript, resume) = if reader.transcript().format.is_none() {
        // No record told the format yet: show the lines as `Unknown` now, but keep the
        // reader undecided so that records appended later are still detected (issue 8
        // defect 2). Only the lines before detection are read twice, and detection gives up
        // after a fixed number of records.
        let mut shown = Reader::new();
        shown.feed(&text);
        shown.settle_tail(&text);
        shown.flush_undetected(&text, true);
        (shown.into_transcript(), Resume::Reader(reader))
    } else if invalid.is_empty() && !aside {
        // The snapshot shows exactly what the reader read: lend it, no copy.
        let (t, lent) = reader.lend();
        (t, Resume::Lent(lent))
    } else {
        (reader.transcript().clone(), Resume::Reader(reader))
    };
    if !matches!(resume, Resume::Lent(_)) {
        crate::formats::add_invalid_utf8(&mut transcript, invalid);
        if let Some(p) = &path {
            // A `/btw` aside file: the parent's replayed history counts there, not here; a
            // sidecar adds its title, cwd, model (the agent registry's `beside`).
            crate::formats::agents::apply_beside(&mut transcript, p);
        }
    }
    load.step("analysing");
    // Records appended to the reader's own transcript: the analysis resumes at the start of the
    // previous last turn, and the lookup tables are rebuilt from there (issue 12).
    let revised = transcript.take_revised();
    let previous = previous.filter(|_| matches!(resume, Resume::Lent(_)));
    let mut seed = Vec::new();
    let (analysis, lookup, checkpoint, kept_turns) = match transcript.format() {
        Format::Unknown => (Analysis::default(), Lookup::default(), None, 0),
        _ => {
            let from_windows = windowed.is_some();
            let (analysis, checkpoint, from) = match (previous, windowed) {
                // Analysed while it was read: the records of the last window.
                (_, Some((a, c))) => {
                    let (a, c) = analysis::resume(a, c, revised, &transcript, &text, &options);
                    (a, c, None)
                }
                (Some((a, lookup, symbols, c)), None) => {
                    let from = c.start();
                    let (a, c) = analysis::resume(a, c, revised, &transcript, &text, &options);
                    let from = if c.kept_turns() > 0 { from } else { 0 };
                    seed = symbols;
                    seed.truncate(c.kept_turns());
                    (a, c, Some((lookup, from)))
                }
                (None, None) => {
                    let (a, c) = analysis::analyze_resumable(&transcript, &text, &options);
                    (a, c, None)
                }
            };
            let lookup = match from {
                Some((lookup, from)) if from > 0 => lookup.resume(&transcript, &analysis, from),
                _ => Lookup::new(&transcript, &analysis),
            };
            // Turns kept from the previous snapshot (none for a file analysed as it was read).
            let kept = if from_windows {
                0
            } else {
                checkpoint.kept_turns()
            };
            // Only the reader's own transcript grows by appends alone.
            let checkpoint = matches!(resume, Resume::Lent(_)).then_some(checkpoint);
            (analysis, lookup, checkpoint, kept)
        }
    };
    load.end(format!("{} records", transcript.entries.len()));
    // The analysis read spans of the text; none of it stays resident (issue 12).
    text.release_all();
    let snap = Snapshot {
        generation,
        version,
        settings: stamp.stamp,
        path,
        text,
        lines,
        transcript,
        analysis,
        lookup,
        options,
        build_ms: t0.elapsed().as_secs_f64() * 1000.0,
        kept_turns,
        memo: Memo::new(seed),
    };
    (snap, resume, checkpoint)
}
