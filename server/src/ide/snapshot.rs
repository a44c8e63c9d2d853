//! What the editor features read (issue 24 item 3): one version of a document, analysed
//! ([`Snapshot`]: text, line index, transcript, analysis, lookup tables, and what it makes on
//! first use: outline, rendered views, session files, file edits, change sets), a rendered view
//! with its indexes ([`ViewSnap`]), and a document as a request sees it, raw or a view
//! ([`DocSnap`], which [`crate::ide::DocAnalysis`] answers for). Plain, immutable, shared data:
//! the store (`crate::store`) builds it from the documents it holds and hands it out as
//! `Arc`s; nothing here reads or follows a file.

use std::hash::Hasher;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use crate::analysis::{self, Analysis};
use crate::ide::lookup::Lookup;
use crate::ide::symbols::{self, Symbol};
use crate::ide::view_index::ViewIndex;
use crate::index::session_files::{self, SessionFiles};
use crate::model::{Format, Transcript};
use crate::source::{LineIndex, Text};
use crate::sync::lock;
use crate::view::{self, View};

/// Identifies a rendered view: the transcript file and the view options.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ViewKey {
    pub path: PathBuf,
    pub verbose: bool,
}

/// What a request reads: the snapshot of a document, plain data.
#[derive(Clone)]
pub enum DocSnap {
    Raw {
        snap: Arc<Snapshot>,
    },
    View {
        key: ViewKey,
        snap: Arc<Snapshot>,
        view: Arc<ViewSnap>,
    },
}

/// Everything derived from one version of a source.
pub struct Snapshot {
    pub generation: u64,
    pub version: Option<i32>,
    /// The settings stamp it was built with.
    pub settings: u64,
    pub path: Option<PathBuf>,
    /// The text it was read from: owned, or a mapped file (issue 12; its pages are released
    /// after the build and after each render, [`Text::release_all`]).
    pub text: Arc<Text>,
    pub lines: LineIndex,
    pub transcript: Transcript,
    pub analysis: Analysis,
    pub lookup: Lookup,
    pub options: analysis::Options,
    /// Milliseconds spent building (read + analyse).
    pub build_ms: f64,
    /// Turns of the previous snapshot's analysis this one kept (issue 12: an append analyses
    /// only from the start of the last turn); 0 when it was analysed from the start.
    pub kept_turns: usize,
    /// What the snapshot makes on first use: its outline, views, session files, file edits
    /// and change sets ([`Memo`]).
    pub memo: Memo,
}

/// What a [`Snapshot`] makes on first use, once (made and read through the snapshot's
/// methods; the store only creates it and takes the outline back for the next build).
pub struct Memo {
    /// The raw outline, one entry per turn ([`Snapshot::raw_symbols`]).
    symbols: OnceLock<Vec<Arc<Symbol>>>,
    /// The previous snapshot's outline entries of the turns this one kept.
    symbol_seed: Mutex<Vec<Arc<Symbol>>>,
    views: Mutex<[Option<Arc<ViewSnap>>; 2]>,
    files: OnceLock<SessionFiles>,
    edits: OnceLock<Vec<crate::view::edits::EditCall>>,
    changes: OnceLock<crate::view::changes::Changes>,
}

impl Memo {
    /// Nothing made yet; `outline_seed` holds the previous snapshot's outline entries of the
    /// turns this one kept (issue 12: an append makes the entry of its last turn only).
    pub fn new(outline_seed: Vec<Arc<Symbol>>) -> Memo {
        Memo {
            symbols: OnceLock::new(),
            symbol_seed: Mutex::new(outline_seed),
            views: Mutex::new([None, None]),
            files: OnceLock::new(),
            edits: OnceLock::new(),
            changes: OnceLock::new(),
        }
    }

    /// The outline entries to seed the next build's snapshot with: the ones made, else this
    /// snapshot's own seed (the snapshot is being taken apart).
    pub fn into_outline(self) -> Vec<Arc<Symbol>> {
        self.symbols
            .into_inner()
            .unwrap_or_else(|| std::mem::take(&mut *lock(&self.symbol_seed)))
    }

    /// [`Memo::into_outline`] of a snapshot still shared: a copy.
    pub fn outline(&self) -> Vec<Arc<Symbol>> {
        match self.symbols.get() {
            Some(v) => v.clone(),
            None => lock(&self.symbol_seed).clone(),
        }
    }
}

impl Snapshot {
    /// The snapshot of an empty text (a build that failed), built with settings stamp
    /// `settings` and `options`.
    pub fn empty(
        path: Option<PathBuf>,
        generation: u64,
        version: Option<i32>,
        settings: u64,
        options: analysis::Options,
    ) -> Snapshot {
        Snapshot {
            generation,
            version,
            settings,
            path,
            text: Arc::default(),
            lines: LineIndex::new(""),
            transcript: Transcript::default(),
            analysis: Analysis::default(),
            lookup: Lookup::default(),
            options,
            build_ms: 0.0,
            kept_turns: 0,
            memo: Memo::new(Vec::new()),
        }
    }

    /// True when the text was recognised as a transcript (any known format).
    pub fn is_transcript(&self) -> bool {
        self.transcript.format.is_some_and(Format::is_known)
    }

    /// The rendered view (`verbose` or quiet), rendered on first use. Blocking: call from a
    /// blocking thread for big transcripts.
    pub fn view(&self, verbose: bool) -> Arc<ViewSnap> {
        if let Some(v) = self.cached_view(verbose) {
            return v;
        }
        let slot = usize::from(verbose);
        // Rendering reads spans of every turn: the pages of a mapped text are dropped each
        // time it has gone [`RELEASE_STEP`](crate::source::text::RELEASE_STEP) bytes further (issue 12).
        let mut released_at = 0;
        let view = view::render_turn_by_turn(
            &self.transcript,
            &self.analysis,
            &self.text,
            &view::ViewOptions { verbose },
            &self.options.gate_phases,
            &mut |turn| {
                let end = turn
                    .entries
                    .end
                    .checked_sub(1)
                    .and_then(|i| self.transcript.entries.get(i))
                    .map_or(0, |e| e.span.end);
                if self.text.is_mapped() && end >= released_at + crate::source::text::RELEASE_STEP {
                    self.text.release_all();
                    released_at = end;
                }
            },
        );
        let vs = Arc::new(ViewSnap::new(view, self.generation, verbose));
        lock(&self.memo.views)[slot] = Some(vs.clone());
        vs
    }

    /// The outline of the raw document ([`symbols::raw_symbols`]), one entry per turn, made
    /// once per snapshot; the entries of the turns an append left alone are the previous
    /// snapshot's (issue 12), so an append costs the outline of its last turn only.
    pub fn raw_symbols(&self) -> &[Arc<Symbol>] {
        self.memo.symbols.get_or_init(|| {
            let mut out = std::mem::take(&mut *lock(&self.memo.symbol_seed));
            out.truncate(self.kept_turns.min(self.analysis.turns.len()));
            let phases = analysis::default_phases();
            let a = &self.analysis;
            let result_of = |e: usize, b: usize| crate::view::changes::pair_result(a, e, b);
            for ti in out.len()..a.turns.len() {
                let changes = crate::view::changes::turn_changes(
                    &self.transcript,
                    a,
                    &self.text,
                    ti,
                    &result_of,
                );
                out.push(Arc::new(symbols::turn_symbol(
                    &self.transcript,
                    a,
                    &self.text,
                    &phases,
                    &a.turns[ti],
                    changes.as_ref(),
                )));
            }
            out
        })
    }

    /// The rendered view if it was rendered already.
    pub fn cached_view(&self, verbose: bool) -> Option<Arc<ViewSnap>> {
        lock(&self.memo.views)[usize::from(verbose)].clone()
    }

    /// The file-editing tool calls (issue 11, item 3), found once per snapshot.
    pub fn edit_calls(&self) -> &[crate::view::edits::EditCall] {
        self.memo.edits.get_or_init(|| {
            crate::view::edits::edit_calls(&self.transcript, &self.analysis, &self.text)
        })
    }

    /// The change sets per turn and the session's (issue 22), made once per snapshot and kept
    /// without the files' whole texts ([`crate::view::changes::Changes::without_texts`]).
    pub fn changes(&self) -> &crate::view::changes::Changes {
        self.memo.changes.get_or_init(|| {
            crate::view::changes::changes_of_calls(
                &self.transcript,
                &self.analysis,
                &self.text,
                self.edit_calls(),
            )
            .without_texts()
        })
    }

    /// The change sets with the files' whole texts (for a diff side; made anew each time).
    pub fn changes_with_texts(&self) -> crate::view::changes::Changes {
        crate::view::changes::changes_of_calls(
            &self.transcript,
            &self.analysis,
            &self.text,
            self.edit_calls(),
        )
    }

    /// The files of this transcript's session (read from disk once per snapshot).
    pub fn session_files(&self) -> &SessionFiles {
        self.memo.files.get_or_init(|| match &self.path {
            Some(p) => {
                let threads: Vec<&str> = self
                    .analysis
                    .subagent_calls
                    .iter()
                    .filter_map(|c| c.agent_id.as_deref())
                    .collect();
                session_files::session_files(p, &threads)
            }
            None => SessionFiles::default(),
        })
    }
}

/// A rendered view with its indexes.
pub struct ViewSnap {
    pub view: View,
    pub lines: LineIndex,
    pub index: ViewIndex,
    /// Hash of `view.text` (see [`text_hash`]).
    pub hash: u64,
    /// Generation of the source it was rendered from.
    pub generation: u64,
    pub verbose: bool,
}

impl ViewSnap {
    pub fn new(view: View, generation: u64, verbose: bool) -> ViewSnap {
        let lines = LineIndex::new(&view.text);
        let index = ViewIndex::new(&view);
        let hash = text_hash(std::iter::once(view.text.as_str()));
        ViewSnap {
            view,
            lines,
            index,
            hash,
            generation,
            verbose,
        }
    }
}

/// A streaming hash of a text given in chunks (equal for any chunking of the same text).
pub fn text_hash<'a>(chunks: impl Iterator<Item = &'a str>) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    let mut n = 0u64;
    for c in chunks {
        h.write(c.as_bytes());
        n += c.len() as u64;
    }
    h.write_u64(n);
    h.finish()
}

impl DocSnap {
    /// The source's snapshot.
    pub fn snap(&self) -> &Arc<Snapshot> {
        match self {
            DocSnap::Raw { snap } | DocSnap::View { snap, .. } => snap,
        }
    }

    /// The document's text: the raw text, or the view's.
    pub fn text(&self) -> &str {
        match self {
            DocSnap::Raw { snap } => &snap.text,
            DocSnap::View { view, .. } => &view.view.text,
        }
    }

    /// The line index of [`DocSnap::text`].
    pub fn lines(&self) -> &LineIndex {
        match self {
            DocSnap::Raw { snap } => &snap.lines,
            DocSnap::View { view, .. } => &view.lines,
        }
    }
}
