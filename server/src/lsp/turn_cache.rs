//! The per-turn answer caches (issue 12; one generic cache since issue 24 item 2). The answers
//! of documentSymbol, foldingRange, inlayHint and semanticTokens/full on a raw transcript are
//! assembled from one piece per turn (JSON bytes, or encoded tokens), kept per document so
//! that an append costs the turns it changed (on a 1 GB transcript a whole answer took tens
//! of milliseconds to make and tens of megabytes to hold).
//!
//! **The key rule**, the same for every feature: the piece kept for a turn is reused when the
//! answer is made under the same key (the position encoding, the settings and client
//! capabilities the feature's JSON depends on: [`TurnCache`]'s `K`), the turn has the same
//! outline entry (the same `Arc`: an append keeps the entries of the turns it left alone,
//! `ide::snapshot::Snapshot::raw_symbols`) and the same lines
//! ([`crate::ide::facade::Turns::span`], the last turn ending at the document's line count).
//! A feature may still make a kept piece afresh (folds do for turns where a fold of the whole
//! document starts); it never reuses one the rule refused.
//!
//! One request at a time makes a document's pieces of one feature (requests arriving together
//! wait and copy what the first made: Neovim asks twice for the whole buffer's hints as it
//! opens a file); other documents do not wait. [`TurnCaches::forget`] drops everything kept
//! for a document (`didClose`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use tower_lsp_server::ls_types::SemanticToken;

use crate::ide::DocAnalysis;
use crate::ide::facade::Turns;
use crate::ide::snapshot::Snapshot;
use crate::ide::symbols::Symbol;
use crate::lsp::config::TokenLegend;
use crate::source::position::Encoding;
use crate::store::host::DocId;
use crate::sync::lock;

/// The four per-turn caches, and the last full semantic tokens sent per document (the base
/// of `semanticTokens/full/delta`).
#[derive(Default)]
pub(crate) struct TurnCaches {
    /// `textDocument/documentSymbol`: per turn the JSON of its `DocumentSymbol`, or of its
    /// flat `SymbolInformation`s separated by commas; keyed by the encoding and the form
    /// (hierarchical or flat).
    pub symbols: TurnCache<(Encoding, bool), Box<[u8]>>,
    /// `textDocument/foldingRange`: per turn the JSON of the folds starting in its lines;
    /// keyed by the client's `rangeLimit`.
    pub folds: TurnCache<usize, FoldPiece>,
    /// `textDocument/inlayHint`: per turn the JSON of the hints on its lines; keyed by the
    /// encoding, the `timeZone` setting and the number of turns (every label says `n/total`).
    pub hints: TurnCache<(Encoding, Option<String>, usize), Box<[u8]>>,
    /// `textDocument/semanticTokens/full`: per turn its tokens, encoded; keyed by the encoding
    /// and the legend.
    pub tokens: TurnCache<(Encoding, TokenLegend), TokenPiece>,
    /// The last full semantic tokens per document: `(resultId, tokens)`.
    pub sent_tokens: Mutex<HashMap<DocId, (String, Vec<SemanticToken>)>>,
}

impl TurnCaches {
    /// Drops everything kept for document `doc` (its client id, the URI as spelled).
    pub fn forget(&self, doc: &DocId) {
        self.symbols.forget(doc);
        self.folds.forget(doc);
        self.hints.forget(doc);
        self.tokens.forget(doc);
        lock(&self.sent_tokens).remove(doc);
    }
}

/// The JSON of some normalised folds as `FoldingRange`s, elements of the answer's array
/// separated by commas, with what the handler (`crate::lsp::handlers::folding`) checks
/// before reusing it.
#[derive(Debug)]
pub(crate) struct FoldPiece {
    pub json: Box<[u8]>,
    /// Ranges in it.
    pub count: usize,
    /// First and last start line, and the last end line, of its folds (before the end line
    /// is limited to the document's last line): a piece is reused only while that last end
    /// line is within the document, and only when it was when the piece was made (`exact`):
    /// the limit (and the filter of folds starting on the last line) then changed nothing.
    pub min_start: Option<usize>,
    pub max_start: Option<usize>,
    pub max_end: usize,
    pub exact: bool,
}

/// The semantic tokens on the lines of one turn, encoded relative to each other as LSP sends
/// them.
pub(crate) struct TokenPiece {
    /// The tokens, the first relative to the document's start (its `delta_line` and
    /// `delta_start` are its line and column): the answer re-bases it on the previous
    /// piece's last token (`crate::lsp::handlers::tokens`).
    pub data: Box<[SemanticToken]>,
    /// Line and column of the last token (`None`: no token).
    pub last: Option<(u32, u32)>,
}

/// Pieces of answers per document and turn, made under a key `K` (see the module's key rule).
pub(crate) struct TurnCache<K, P> {
    docs: Mutex<HashMap<DocId, SharedSlot<K, P>>>,
}

/// One document's slot, held by the request making its pieces.
type SharedSlot<K, P> = Arc<Mutex<Slot<K, P>>>;

impl<K, P> Default for TurnCache<K, P> {
    fn default() -> Self {
        TurnCache {
            docs: Mutex::default(),
        }
    }
}

/// What one document keeps.
struct Slot<K, P> {
    key: Option<K>,
    turns: Vec<Option<Kept<P>>>,
    /// The last whole answer and the snapshot it was made of.
    answer: Option<(Weak<Snapshot>, Vec<u8>)>,
}

impl<K, P> Default for Slot<K, P> {
    fn default() -> Self {
        Slot {
            key: None,
            turns: Vec::new(),
            answer: None,
        }
    }
}

/// A piece with the turn's outline entry and lines when it was made.
struct Kept<P> {
    symbol: Arc<Symbol>,
    lines: (usize, usize),
    piece: P,
}

/// The pieces of one document for one request: per turn (by index), the piece the key rule
/// kept, or the one made now ([`Pieces::set`]).
pub(crate) struct Pieces<P> {
    turns: Vec<Option<P>>,
    answer: Option<(Weak<Snapshot>, Vec<u8>)>,
}

impl<P> Pieces<P> {
    /// The piece of turn `i`, if any.
    pub fn get(&self, i: usize) -> Option<&P> {
        self.turns.get(i).and_then(Option::as_ref)
    }

    /// Takes the piece of turn `i` out (to check it before putting it back, or to make it
    /// afresh).
    pub fn take(&mut self, i: usize) -> Option<P> {
        self.turns.get_mut(i).and_then(Option::take)
    }

    /// Sets the piece of turn `i`.
    pub fn set(&mut self, i: usize, piece: P) {
        if let Some(slot) = self.turns.get_mut(i) {
            *slot = Some(piece);
        }
    }

    /// The pieces in turn order (`None`: no piece for that turn).
    pub fn iter(&self) -> impl Iterator<Item = Option<&P>> + Clone {
        self.turns.iter().map(Option::as_ref)
    }

    /// The last whole answer, when it was made of `doc`'s snapshot under the same key.
    pub fn answer(&self, doc: &DocAnalysis) -> Option<&[u8]> {
        match &self.answer {
            Some((of, json)) if doc.is_snapshot(of) => Some(json),
            _ => None,
        }
    }

    /// Keeps `json` as the whole answer made of `doc`'s snapshot.
    pub fn set_answer(&mut self, doc: &DocAnalysis, json: Vec<u8>) {
        self.answer = Some((doc.snapshot_handle(), json));
    }
}

impl<K: PartialEq, P> TurnCache<K, P> {
    /// Runs `make` on the pieces of document `doc` good for `turns` under `key` (the key
    /// rule), then keeps what it left in them for the next request, if `keep()` still says
    /// so then (the document is still open: a closed document's pieces are not kept).
    /// Requests for the same document wait for each other here.
    pub fn with<R>(
        &self,
        doc: &DocId,
        key: K,
        turns: &Turns<'_>,
        keep: impl FnOnce() -> bool,
        make: impl FnOnce(&mut Pieces<P>) -> R,
    ) -> R {
        let slot = Arc::clone(lock(&self.docs).entry(doc.clone()).or_default());
        let mut slot_guard = lock(&slot);
        let st = &mut *slot_guard;
        let same_key = st.key.as_ref() == Some(&key);
        let mut old = if same_key {
            std::mem::take(&mut st.turns)
        } else {
            Vec::new()
        }
        .into_iter();
        let answer = if same_key { st.answer.take() } else { None };
        st.key = None;
        st.turns = Vec::new();
        st.answer = None;
        let last_end = turns.doc().lines().line_count();
        let mut pieces = Pieces {
            turns: Vec::with_capacity(turns.len()),
            answer,
        };
        for i in 0..turns.len() {
            let kept = old.next().flatten().filter(|k| {
                Arc::ptr_eq(&k.symbol, turns.symbol(i)) && k.lines == turns.span(i, last_end)
            });
            pieces.turns.push(kept.map(|k| k.piece));
        }
        drop(old);
        let out = make(&mut pieces);
        if keep() {
            st.key = Some(key);
            st.answer = pieces.answer;
            st.turns = pieces
                .turns
                .into_iter()
                .enumerate()
                .map(|(i, p)| {
                    p.map(|piece| Kept {
                        symbol: turns.symbol(i).clone(),
                        lines: turns.span(i, last_end),
                        piece,
                    })
                })
                .collect();
        } else {
            drop(slot_guard);
            let mut docs = lock(&self.docs);
            if docs.get(doc).is_some_and(|s| Arc::ptr_eq(s, &slot)) {
                docs.remove(doc);
            }
        }
        out
    }

    /// Drops the pieces of document `doc`.
    pub fn forget(&self, doc: &DocId) {
        lock(&self.docs).remove(doc);
    }
}
