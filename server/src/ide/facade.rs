//! The ide facade (issue 24 item 1; rust-analyzer's `ide::Analysis`): [`DocAnalysis`] answers
//! every editor feature of one document snapshot — `folds`, `outline`, `hints`, `tokens`,
//! `lenses`, `hover`, `definition`, `references`, `diagnostics`, and what the commands need —
//! as plain data in byte / line terms. It is the one place that chooses between a raw
//! transcript, a rendered view (`transcript:`) and a text that is no transcript; the protocol
//! layer (`crate::lsp::handlers`) only converts what it answers to LSP types.
//!
//! The raw documents' per-turn answers (the per-turn caches of `crate::lsp::turn_cache`) are
//! made through [`DocAnalysis::turns`]: the layout of a raw transcript's turns, each with its
//! outline entry, and what each feature makes of one turn.

use std::collections::BTreeMap;
use std::ops::{Range, RangeInclusive};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use crate::ide;
use crate::ide::code_lens::Lens;
use crate::ide::diagnostics::Diag;
use crate::ide::folding::Fold;
use crate::ide::inlay_hints::Hint;
use crate::ide::navigation::Target;
use crate::ide::semantic_tokens::Token;
use crate::ide::snapshot::{DocSnap, Snapshot, ViewKey, ViewSnap};
use crate::ide::symbols::Symbol;
use crate::index::session_files::SessionFiles;
use crate::model::SubagentFile;
use crate::source::LineIndex;
use crate::source::position::{self as sp, Encoding};
use crate::view::changes::{Changes, FileChange};
use crate::view::diff::EditSides;
use crate::view::edits::EditCall;

/// The features of one document snapshot: a raw document (open in the editor, or a transcript
/// file read whole) or a view of one. Cheap to clone (shared snapshots).
#[derive(Clone)]
pub struct DocAnalysis {
    doc: DocSnap,
}

/// A position past the end of the document (or not on a character boundary of a raw text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutOfRange;

/// Which change set: one turn's or the whole session's (issue 22).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// The turn numbered `n`.
    Turn(usize),
    /// The whole session's net change.
    Session,
}

/// A change set as `transcript.showChanges` names it: its title and files.
pub struct ChangeSet<'a> {
    pub title: String,
    pub files: &'a [FileChange],
}

/// Why the sides of a file edit cannot be given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditSideError {
    /// The transcript has no file edit with this tool call id.
    NoEdit,
    /// The edit's input cannot be read.
    Unreadable,
}

/// The document outline: a raw transcript's entries are the snapshot's (one per turn, kept
/// across appends); a view's are made for the request.
pub enum Outline<'a> {
    Kept(&'a [Arc<Symbol>]),
    Made(Vec<Symbol>),
}

impl Outline<'_> {
    /// The top-level entries in order.
    pub fn iter(&self) -> Box<dyn Iterator<Item = &Symbol> + '_> {
        match self {
            Outline::Kept(s) => Box::new(s.iter().map(|s| &**s)),
            Outline::Made(s) => Box::new(s.iter()),
        }
    }
}

/// Where a navigation target is shown.
pub enum Place<'a> {
    /// Bytes of this document's text ([`DocAnalysis::text`]).
    Span(Range<usize>),
    /// A whole line of this document.
    Line(usize),
    /// Bytes of the transcript file `path` behind a view (the view does not show the item, or
    /// shortens it), in the file's `text` with its line index `lines`.
    Raw {
        path: &'a Path,
        text: &'a str,
        lines: &'a LineIndex,
        span: Range<usize>,
    },
    /// Another transcript file, from its start.
    File(PathBuf),
}

/// The answer to go-to-definition: the targets' places, and the place to show when none of
/// them can be shown (on a view: the whole record in the raw file).
pub struct Definition<'a> {
    pub targets: Vec<Place<'a>>,
    pub fallback: Option<Place<'a>>,
}

impl From<DocSnap> for DocAnalysis {
    fn from(doc: DocSnap) -> DocAnalysis {
        DocAnalysis { doc }
    }
}

impl DocAnalysis {
    /// The raw document of a source's snapshot (an open document, or a transcript file).
    pub fn of_source(snap: Arc<Snapshot>) -> DocAnalysis {
        DocAnalysis {
            doc: DocSnap::Raw { snap },
        }
    }

    /// A view of `snap` rendered as `view`.
    pub fn of_view(key: ViewKey, snap: Arc<Snapshot>, view: Arc<ViewSnap>) -> DocAnalysis {
        DocAnalysis {
            doc: DocSnap::View { key, snap, view },
        }
    }

    fn snap(&self) -> &Arc<Snapshot> {
        self.doc.snap()
    }

    /// The raw transcript's snapshot, when the document is a recognised raw transcript.
    fn raw_transcript(&self) -> Option<&Arc<Snapshot>> {
        match &self.doc {
            DocSnap::Raw { snap } if snap.is_transcript() => Some(snap),
            _ => None,
        }
    }

    /// Whether the document's snapshot is the one `w` points to (caches of whole answers).
    pub fn is_snapshot(&self, w: &Weak<Snapshot>) -> bool {
        w.upgrade().is_some_and(|s| Arc::ptr_eq(&s, self.snap()))
    }

    /// A weak handle on the document's snapshot (see [`DocAnalysis::is_snapshot`]).
    pub fn snapshot_handle(&self) -> Weak<Snapshot> {
        Arc::downgrade(self.snap())
    }

    /// The document's text as the client holds it: the raw text, or the view's.
    pub fn text(&self) -> &str {
        self.doc.text()
    }

    /// The Markdown form of a view (issue 23 item 6, [`crate::view::markdown`]): the view's
    /// lines with its images as `data:` URIs and its activity lines as literal lines, for a
    /// Markdown preview; `None` for a raw document. Blocking (reads the source's image data).
    pub fn markdown_text(&self) -> Option<String> {
        match &self.doc {
            DocSnap::View { snap, view, .. } => Some(crate::view::markdown::markdown(
                &view.view,
                &snap.text,
                &crate::view::markdown::MarkdownLimits::default(),
            )),
            DocSnap::Raw { .. } => None,
        }
    }

    /// The line index of [`DocAnalysis::text`].
    pub fn lines(&self) -> &LineIndex {
        self.doc.lines()
    }

    /// The document's version (raw documents open in the editor).
    pub fn version(&self) -> Option<i32> {
        self.snap().version
    }

    /// True when the text behind the document is not blank and no reader recognised it (the
    /// server tells the user once and serves empty results).
    pub fn unrecognised(&self) -> bool {
        let snap = self.snap();
        !snap.is_transcript() && !snap.text.trim().is_empty()
    }

    /// The transcript file behind the document: a raw document's path (`None` when it is no
    /// `file:` document), or the file a view shows.
    pub fn session_path(&self) -> Option<&Path> {
        match &self.doc {
            DocSnap::Raw { snap } => snap.path.as_deref(),
            DocSnap::View { key, .. } => Some(&key.path),
        }
    }

    /// The files of the transcript's session (sub-agents, summariser runs).
    pub fn session_files(&self) -> &SessionFiles {
        self.snap().session_files()
    }

    // ----- positions -----

    /// The `(entry, block)` at `pos` (raw: the record on that line and the content block at
    /// the position; view: the line's origin). `Ok(None)` when the line shows no record.
    pub fn item_at(
        &self,
        pos: sp::Position,
        enc: Encoding,
    ) -> Result<Option<(usize, Option<usize>)>, OutOfRange> {
        let line = pos.line as usize;
        match &self.doc {
            DocSnap::Raw { snap } => {
                let offset = sp::position_to_offset(&snap.text, &snap.lines, pos, enc)
                    .map_err(|_| OutOfRange)?;
                let Some(ei) = ide::lookup::entry_at_line(&snap.transcript, line) else {
                    return Ok(None);
                };
                let block = ide::lookup::block_at_offset(&snap.transcript.entries[ei], offset);
                Ok(Some((ei, block)))
            }
            DocSnap::View { view, .. } => {
                if line >= view.lines.line_count() {
                    return Err(OutOfRange);
                }
                Ok(view_item(view, line))
            }
        }
    }

    /// The turn numbered `n`'s heading line in a view (`None` on a raw document or when the
    /// view does not show it).
    pub fn heading_line(&self, n: usize) -> Option<usize> {
        match &self.doc {
            DocSnap::View { view, .. } => view.index.turn_heading(n),
            DocSnap::Raw { .. } => None,
        }
    }

    /// Turn opener lines of the document (raw: the opener record; view: the heading), sorted.
    pub fn turn_lines(&self) -> Vec<usize> {
        let snap = self.snap();
        let mut out: Vec<usize> = match &self.doc {
            DocSnap::Raw { .. } => snap
                .analysis
                .turns
                .iter()
                .filter(|t| t.n > 0)
                .map(|t| {
                    t.opener
                        .and_then(|e| snap.transcript.entries.get(e))
                        .map_or(t.start_line, |e| e.line)
                })
                .collect(),
            DocSnap::View { view, .. } => snap
                .analysis
                .turns
                .iter()
                .filter(|t| t.n > 0)
                .filter_map(|t| view.index.turn_heading(t.n))
                .collect(),
        };
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Line of gate `g` in the document (`None` when the view does not show it).
    pub fn gate_line(&self, g: usize) -> Option<usize> {
        let a = &self.snap().analysis;
        match &self.doc {
            DocSnap::Raw { .. } => a.gates.get(g).map(|g| g.line),
            DocSnap::View { view, .. } => view.index.line_of_gate(a, g),
        }
    }

    /// Gate lines of the document, sorted.
    pub fn gate_lines(&self) -> Vec<usize> {
        let mut out: Vec<usize> = (0..self.snap().analysis.gates.len())
            .filter_map(|g| self.gate_line(g))
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    // ----- features -----

    /// Folds of the document (turns, activity, thoughts, gates), at most `limit` of them
    /// ([`ide::folding::limit_folds`]); none for a text that is no transcript.
    pub fn folds(&self, limit: usize) -> Vec<Fold> {
        let folds = match &self.doc {
            DocSnap::Raw { snap } if !snap.is_transcript() => Vec::new(),
            DocSnap::Raw { snap } => ide::folding::raw_folds(&snap.transcript, &snap.analysis),
            DocSnap::View { view, .. } => ide::folding::view_folds(&view.view),
        };
        ide::folding::limit_folds(folds, limit)
    }

    /// The outline: one entry per turn with its parts (`ide::symbols`).
    pub fn outline(&self) -> Outline<'_> {
        match &self.doc {
            DocSnap::Raw { snap } if !snap.is_transcript() => Outline::Made(Vec::new()),
            DocSnap::Raw { snap } => Outline::Kept(snap.raw_symbols()),
            DocSnap::View { snap, view, .. } => {
                Outline::Made(ide::symbols::view_symbols(&view.view, &snap.analysis))
            }
        }
    }

    /// The inlay hints on `lines` (0-based, inclusive), their times in `time_zone`.
    pub fn hints(&self, lines: RangeInclusive<usize>, time_zone: Option<&str>) -> Vec<Hint> {
        match &self.doc {
            DocSnap::Raw { snap } if !snap.is_transcript() => Vec::new(),
            DocSnap::Raw { snap } => ide::inlay_hints::raw_hints_in(
                &snap.transcript,
                &snap.text,
                &snap.analysis,
                time_zone,
                lines,
            ),
            DocSnap::View { snap, view, .. } => {
                ide::inlay_hints::view_hints_in(&view.view, &snap.analysis, time_zone, lines)
            }
        }
    }

    /// The semantic tokens on `lines` (0-based, inclusive; `None`: the whole document).
    pub fn tokens(&self, lines: Option<(usize, usize)>) -> Vec<Token> {
        match &self.doc {
            DocSnap::Raw { snap } if !snap.is_transcript() => Vec::new(),
            DocSnap::Raw { snap } => ide::semantic_tokens::raw_tokens(
                &snap.transcript,
                &snap.analysis,
                &snap.lookup,
                &snap.text,
                lines,
            ),
            DocSnap::View { view, .. } => {
                ide::semantic_tokens::view_tokens(&view.view, &view.index.line_starts, lines)
            }
        }
    }

    /// The code lenses in line order: gates (titles in `phases`), sub-agent calls (their step
    /// counts from `steps_in`), file edits, change sets, and in a quiet view the hidden
    /// activity. None for a text that is no transcript.
    pub fn lenses(
        &self,
        phases: &[crate::analysis::Phase],
        steps_in: impl Fn(&SubagentFile) -> Option<usize>,
    ) -> Vec<Lens> {
        if self.raw_non_transcript() {
            return Vec::new();
        }
        let snap = self.snap();
        let files = &snap.session_files().subagents;
        let a = &snap.analysis;
        let mut lenses = match &self.doc {
            DocSnap::Raw { .. } => ide::code_lens::lenses(
                a,
                phases,
                files,
                |g| a.gates.get(g).map(|g| g.line),
                |e, _| snap.transcript.entries.get(e).map(|x| x.line),
                steps_in,
            ),
            DocSnap::View { view, .. } => ide::code_lens::lenses(
                a,
                phases,
                files,
                |g| view.index.line_of_gate(a, g),
                |e, b| view.index.line_of_block(e, b),
                steps_in,
            ),
        };
        self.add_edit_lenses(&mut lenses);
        self.add_activity_lenses(&mut lenses);
        self.add_change_lenses(&mut lenses);
        lenses
    }

    fn raw_non_transcript(&self) -> bool {
        matches!(&self.doc, DocSnap::Raw { snap } if !snap.is_transcript())
    }

    /// Adds a `Show diff` lens above each file edit the document shows, keeping `lenses` sorted
    /// by line.
    fn add_edit_lenses(&self, lenses: &mut Vec<Lens>) {
        let snap = self.snap();
        let calls = snap.edit_calls();
        let more = match &self.doc {
            DocSnap::Raw { .. } => ide::code_lens::edit_lenses(calls, |e, _| {
                snap.transcript.entries.get(e).map(|x| x.line)
            }),
            DocSnap::View { view, .. } => {
                ide::code_lens::edit_lenses(calls, |e, b| view.index.line_of_tool_call(e, b))
            }
        };
        if !more.is_empty() {
            lenses.extend(more);
            lenses.sort_by_key(|l| l.line);
        }
    }

    /// Adds, in a quiet view, the `Show activity: …` lens of each turn whose activity it hides
    /// ([`ide::code_lens::activity_lenses`]), keeping `lenses` sorted by line.
    fn add_activity_lenses(&self, lenses: &mut Vec<Lens>) {
        let DocSnap::View { key, view, snap } = &self.doc else {
            return;
        };
        if key.verbose {
            return;
        }
        let more = ide::code_lens::activity_lenses(&snap.analysis, &view.view);
        if !more.is_empty() {
            lenses.extend(more);
            lenses.sort_by_key(|l| l.line);
        }
    }

    /// Adds the change lenses ([`ide::code_lens::change_lenses`]): on each turn's first line in
    /// the raw file; on each turn's heading in a view, and the session's on the view's first
    /// line. Keeps `lenses` sorted by line.
    fn add_change_lenses(&self, lenses: &mut Vec<Lens>) {
        let snap = self.snap();
        let changes = snap.changes();
        if changes.turns.is_empty() {
            return;
        }
        let a = &snap.analysis;
        let more = match &self.doc {
            DocSnap::Raw { .. } => ide::code_lens::change_lenses(
                changes,
                |n| a.turns.iter().find(|t| t.n == n).map(|t| t.start_line),
                None,
            ),
            DocSnap::View { view, .. } => {
                ide::code_lens::change_lenses(changes, |n| view.index.turn_heading(n), Some(0))
            }
        };
        if !more.is_empty() {
            lenses.extend(more);
            lenses.sort_by_key(|l| l.line);
        }
    }

    /// Hover Markdown at `pos`: what the record or block there holds, or on a view's turn
    /// heading how its figures were computed; on a turn's opener (raw) or heading (view), what
    /// the turn changed (issue 22). Times in `time_zone`.
    pub fn hover(
        &self,
        pos: sp::Position,
        enc: Encoding,
        time_zone: Option<&str>,
    ) -> Result<Option<String>, OutOfRange> {
        let item = self.item_at(pos, enc)?;
        let snap = self.snap();
        let heading = |view: &ViewSnap| {
            snap.analysis
                .turns
                .iter()
                .find(|t| view.index.turn_heading(t.n) == Some(pos.line as usize))
        };
        let markdown = match item {
            Some((entry, block)) if snap.is_transcript() => ide::hover::entry_hover(
                &snap.transcript,
                &snap.analysis,
                &snap.lookup,
                &snap.text,
                entry,
                block,
                time_zone,
            ),
            _ => match &self.doc {
                // A turn heading of the view: how its figures were computed.
                DocSnap::View { view, .. } => heading(view).map(|t| {
                    ide::inlay_hints::turn_tooltip(t, snap.analysis.turn_count, time_zone)
                        + &ide::inlay_hints::credits_tooltip(&snap.analysis, t)
                }),
                DocSnap::Raw { .. } => None,
            },
        };
        let Some(mut markdown) = markdown else {
            return Ok(None);
        };
        let turn = match (&self.doc, item) {
            (_, Some((entry, _))) => snap
                .lookup
                .turn_of(entry)
                .and_then(|t| snap.analysis.turns.get(t))
                .filter(|t| t.opener == Some(entry)),
            (DocSnap::View { view, .. }, None) => heading(view),
            _ => None,
        };
        if let Some(c) = turn.and_then(|t| snap.changes().turn_at(t.n)) {
            markdown.push('\n');
            markdown.push_str(&ide::hover::changes_markdown(
                c,
                snap.transcript.meta.cwd.as_deref(),
            ));
        }
        Ok(Some(markdown))
    }

    /// Go-to-definition at `pos` (`ide::navigation::definition`); `Ok(None)` when no record is
    /// there.
    pub fn definition(
        &self,
        pos: sp::Position,
        enc: Encoding,
    ) -> Result<Option<Definition<'_>>, OutOfRange> {
        let Some((entry, block)) = self.item_at(pos, enc)? else {
            return Ok(None);
        };
        let snap = self.snap();
        let files = &snap.session_files().subagents;
        let targets = ide::navigation::definition(
            &snap.transcript,
            &snap.analysis,
            &snap.lookup,
            files,
            entry,
            block,
        );
        let fallback = match &self.doc {
            DocSnap::View { key, snap, .. } => raw_place(&key.path, snap, entry, block),
            DocSnap::Raw { .. } => None,
        };
        Ok(Some(Definition {
            targets: targets.iter().filter_map(|t| self.place(t)).collect(),
            fallback,
        }))
    }

    /// References at `pos` (`ide::navigation::references`); `Ok(None)` when no record is
    /// there.
    pub fn references(
        &self,
        pos: sp::Position,
        enc: Encoding,
    ) -> Result<Option<Vec<Place<'_>>>, OutOfRange> {
        let Some((entry, block)) = self.item_at(pos, enc)? else {
            return Ok(None);
        };
        let snap = self.snap();
        let targets = ide::navigation::references(
            &snap.transcript,
            &snap.analysis,
            &snap.lookup,
            entry,
            block,
        );
        Ok(Some(targets.iter().filter_map(|t| self.place(t)).collect()))
    }

    /// Where the document shows a navigation target: its record's bytes in a raw document; in
    /// a view the line showing it, else the record in the raw file behind.
    fn place(&self, t: &Target) -> Option<Place<'_>> {
        let snap = self.snap();
        let (entry, block) = match t {
            Target::File { path } => return Some(Place::File(path.clone())),
            Target::Block { entry, block } => (*entry, Some(*block)),
            Target::Entry { entry } => (*entry, None),
        };
        let e = snap.transcript.entries.get(entry)?;
        let span = block
            .and_then(|b| e.blocks.get(b))
            .map_or(e.span.clone(), |b| b.span.clone());
        match &self.doc {
            DocSnap::Raw { .. } => Some(Place::Span(span)),
            DocSnap::View { view, key, .. } => {
                let line = match block {
                    Some(b) => view.index.line_of_block(entry, b),
                    None => view.index.line_of_entry(entry),
                };
                Some(match line {
                    Some(l) => Place::Line(l),
                    None => Place::Raw {
                        path: &key.path,
                        text: &snap.text,
                        lines: &snap.lines,
                        span,
                    },
                })
            }
        }
    }

    /// The diagnostics of a raw transcript (`ide::diagnostics`); none for a view or a text
    /// that is no transcript.
    pub fn diagnostics(&self) -> Vec<Diag> {
        match self.raw_transcript() {
            Some(snap) => ide::diagnostics::diagnostics(&snap.transcript, &snap.analysis),
            None => Vec::new(),
        }
    }

    /// The totals of the transcript (`ide::stats`), named by its path or else `name`; `None`
    /// when the text is no transcript.
    pub fn stats(&self, name: &str) -> Option<ide::stats::Stats> {
        let snap = self.snap();
        if !snap.is_transcript() {
            return None;
        }
        let file = match &snap.path {
            Some(p) => p.display().to_string(),
            None => name.to_string(),
        };
        Some(ide::stats::stats(file, &snap.transcript, &snap.analysis))
    }

    // ----- edits and change sets -----

    /// The file edit shown on `line` (the tool call's line or its diff lines in a view; the
    /// record's line in the raw file).
    pub fn edit_at_line(&self, line: usize) -> Option<&EditCall> {
        let snap = self.snap();
        let item = match &self.doc {
            DocSnap::Raw { snap } => {
                ide::lookup::entry_at_line(&snap.transcript, line).map(|e| (e, None))
            }
            DocSnap::View { view, .. } => view_item(view, line),
        };
        item.and_then(|(e, b)| crate::view::edits::edit_at(snap.edit_calls(), e, b))
    }

    /// The text before and after the file edit of tool call `call`.
    pub fn edit_sides(&self, call: &str) -> Result<EditSides, EditSideError> {
        let snap = self.snap();
        let call =
            crate::view::edits::find(snap.edit_calls(), call).ok_or(EditSideError::NoEdit)?;
        crate::view::edits::sides(&snap.transcript, &snap.text, call)
            .ok_or(EditSideError::Unreadable)
    }

    /// The turn shown on `line` (raw: the turn whose lines hold it; view: the turn whose
    /// section holds it), by number.
    pub fn turn_at_line(&self, line: usize) -> Option<usize> {
        match &self.doc {
            DocSnap::Raw { snap } => snap
                .analysis
                .turns
                .iter()
                .find(|t| t.start_line <= line && line <= t.end_line)
                .map(|t| t.n),
            DocSnap::View { view, .. } => view
                .view
                .anchors
                .iter()
                .filter(|x| x.child.is_none())
                .find(|x| x.line <= line && line <= x.end_line)
                .map(|x| x.turn),
        }
    }

    /// The change set `which` with its title (`Turn 3 · ✎ 2 files changed · +4 −1`); `None`
    /// when it changed no file.
    pub fn change_set(&self, which: Which) -> Option<ChangeSet<'_>> {
        let snap = self.snap();
        let changes = snap.changes();
        match which {
            Which::Session => changes.session_title().map(|t| ChangeSet {
                title: format!("Session · {t}"),
                files: &changes.session,
            }),
            Which::Turn(n) => changes.turn(n).filter(|t| !t.files.is_empty()).map(|t| {
                let name = snap
                    .analysis
                    .turns
                    .get(t.turn)
                    .map(crate::view::turn_name)
                    .unwrap_or_else(|| format!("Turn {n}"));
                ChangeSet {
                    title: format!("{name} · {}", t.title()),
                    files: &t.files,
                }
            }),
        }
    }

    /// The project directory the transcript recorded (`cwd`).
    pub fn cwd(&self) -> Option<&str> {
        self.snap().transcript.meta.cwd.as_deref()
    }

    /// The whole texts before and after `file`'s change in the change set `which` (read again
    /// with the files' texts); `None` when that change set did not change `file`.
    pub fn change_sides(&self, which: Which, file: &str) -> Option<(String, String)> {
        let changes = self.snap().changes_with_texts();
        let f = files_of(&changes, which)?.iter().find(|f| f.path == file)?;
        Some(crate::view::changes::sides(f))
    }

    // ----- per-turn answers -----

    /// The turns of a raw transcript, for answers assembled from per-turn pieces; `None` for a
    /// view, a text that is no transcript, or an outline that does not have one entry per turn
    /// in line order.
    pub fn turns(&self) -> Option<Turns<'_>> {
        let snap = self.raw_transcript()?;
        let turns = &snap.analysis.turns;
        let symbols = snap.raw_symbols();
        if symbols.len() != turns.len()
            || turns.windows(2).any(|w| w[0].start_line >= w[1].start_line)
        {
            return None;
        }
        Some(Turns {
            doc: self,
            snap,
            symbols,
        })
    }
}

/// The `(entry, block)` a view line shows.
fn view_item(view: &ViewSnap, line: usize) -> Option<(usize, Option<usize>)> {
    match view.view.lines.get(line).map(|l| &l.origin) {
        Some(crate::view::Origin::Entry { entry, block, .. }) => Some((*entry, *block)),
        _ => None,
    }
}

/// The raw-file place of `entry` (its `block` when given) of the transcript `path`.
fn raw_place<'a>(
    path: &'a Path,
    snap: &'a Snapshot,
    entry: usize,
    block: Option<usize>,
) -> Option<Place<'a>> {
    let e = snap.transcript.entries.get(entry)?;
    let span = block
        .and_then(|b| e.blocks.get(b))
        .map_or(e.span.clone(), |b| b.span.clone());
    Some(Place::Raw {
        path,
        text: &snap.text,
        lines: &snap.lines,
        span,
    })
}

/// The files of change set `which`.
fn files_of(c: &Changes, which: Which) -> Option<&[FileChange]> {
    match which {
        Which::Session => Some(&c.session),
        Which::Turn(n) => c.turn(n).map(|t| t.files.as_slice()),
    }
}

/// The turns of a raw transcript in line order, each with its outline entry: an append keeps
/// the entries (the same `Arc`) of the turns it left alone, so a piece of an answer made for a
/// turn is good while its entry and its lines are the same ([`DocAnalysis::turns`]).
pub struct Turns<'a> {
    doc: &'a DocAnalysis,
    snap: &'a Snapshot,
    symbols: &'a [Arc<Symbol>],
}

impl<'a> Turns<'a> {
    /// Number of turns.
    pub fn len(&self) -> usize {
        self.symbols.len()
    }

    /// True when the transcript has no turn.
    pub fn is_empty(&self) -> bool {
        self.symbols.is_empty()
    }

    /// The outline entry of turn `i` (by index).
    pub fn symbol(&self, i: usize) -> &'a Arc<Symbol> {
        &self.symbols[i]
    }

    /// The first line of turn `i`.
    pub fn start(&self, i: usize) -> usize {
        self.snap.analysis.turns[i].start_line
    }

    /// The lines of turn `i`, `start..end`: `end` is the next turn's first line, or for the
    /// last turn `last_end`.
    pub fn span(&self, i: usize, last_end: usize) -> (usize, usize) {
        let turns = &self.snap.analysis.turns;
        let end = turns.get(i + 1).map_or(last_end, |t| t.start_line);
        (turns[i].start_line, end)
    }

    /// The index of the turn whose lines hold `line` (`None`: before the first turn).
    pub fn turn_of_line(&self, line: usize) -> Option<usize> {
        self.snap
            .analysis
            .turns
            .partition_point(|t| t.start_line <= line)
            .checked_sub(1)
    }

    /// The number of turns the hints' labels count (`n/total`).
    pub fn turn_count(&self) -> usize {
        self.snap.analysis.turn_count
    }

    /// The folds of the whole document (a compaction window, a sub-agent span, an abandoned
    /// branch, inherited history), by the turn whose lines they start in, and normalised those
    /// that start before the first turn.
    pub fn document_folds(&self) -> (Vec<Fold>, BTreeMap<usize, Vec<Fold>>) {
        let mut before_first = Vec::new();
        let mut extra: BTreeMap<usize, Vec<Fold>> = BTreeMap::new();
        for f in ide::folding::document_folds(&self.snap.analysis) {
            match self.turn_of_line(f.start_line) {
                Some(i) => extra.entry(i).or_default().push(f),
                None => before_first.push(f),
            }
        }
        (ide::folding::normalize(before_first), extra)
    }

    /// The folds of turn `i` with `extra` (the document's folds that start in it), normalised.
    pub fn folds(&self, i: usize, extra: Vec<Fold>) -> Vec<Fold> {
        let mut folds =
            ide::folding::turn_folds(&self.snap.transcript, &self.snap.analysis.turns[i]);
        folds.extend(extra);
        ide::folding::normalize(folds)
    }

    /// The document these turns are of.
    pub fn doc(&self) -> &'a DocAnalysis {
        self.doc
    }
}
