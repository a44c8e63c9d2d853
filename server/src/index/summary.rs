//! A transcript's text -> its [`SessionEntry`] (pure; no I/O). The text goes through the same
//! format readers and analysis as an open document, then only the summary is kept.
//!
//! After an append to a Claude Code or Codex file ([`tail_readable`]), [`read_tail`] reads from
//! the opening line of the file's last turn (the only turn whose state and figures the new
//! records can change; Codex: from the bookkeeping records just before it) to the end, and
//! merges the result into the previous entry: the cost is that of the last turn plus the
//! appended bytes, never the whole file.

use super::{ChangedFile, SessionEntry, Tail, TurnSymbol};
use crate::analysis::{self, Analysis, TurnKind, TurnState};
use crate::formats::Reader;
use crate::model::{Format, Transcript};

/// Bytes of the last turn's opening line hashed into [`Tail::anchor`].
pub const ANCHOR_BYTES: usize = 256;

/// The first prompt kept in an entry is the first turn's title (a human prompt, or a sub-agent
/// file's task): its first non-empty line, at most this many characters (analysis' turn title
/// rule).
pub const PROMPT_MAX: usize = 80;

/// Reads a whole file's text. `bytes` and `modified_ms` are left 0 / `None` for the caller.
pub fn read_whole(text: &str) -> SessionEntry {
    read_whole_marked(text, |_| {})
}

/// [`read_whole`], with `mark` applied to the transcript before its analysis (the caller's
/// knowledge of other files: a `/btw` aside's replayed history, `formats::claude_code::aside`).
pub fn read_whole_marked(text: &str, mark: impl FnOnce(&mut Transcript)) -> SessionEntry {
    read_whole_visit(text, mark, None)
}

/// Where a text read by [`read_whole_visit`] / [`read_tail_visit`] starts in its file: byte
/// `offset` (0 for a whole read), 0-based `line`, after `turns_before` turns (the visitor
/// numbers the text's turns and lines from there).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Base {
    pub offset: u64,
    pub line: usize,
    pub turns_before: usize,
}

/// Sees the transcript, analysis and text of every read before it is summed up (the search
/// index of issue 26 takes its documents from the same read: one parse per file).
pub type Visit<'v> = &'v mut dyn FnMut(&Transcript, &Analysis, &str, Base);

/// [`read_whole_marked`], handing the read to `visit` first.
pub fn read_whole_visit(
    text: &str,
    mark: impl FnOnce(&mut Transcript),
    visit: Option<Visit<'_>>,
) -> SessionEntry {
    let (t, a) = read_marked(text, Reader::new(), mark);
    if let Some(v) = visit {
        v(&t, &a, text, Base::default());
    }
    build(&t, &a, text, 0, 0, 0)
}

/// Reads `tail_text`, the file's bytes from `old.tail.offset` to its new end, and merges it
/// into `old`. The caller checks first that the file only grew and that
/// [`tail_matches`] holds; `old.format` must be [`tail_readable`].
pub fn read_tail(old: &SessionEntry, tail_text: &str) -> SessionEntry {
    read_tail_visit(old, tail_text, None)
}

/// [`read_tail`], handing the read to `visit` first (its [`Base`] is `old.tail`'s).
pub fn read_tail_visit(
    old: &SessionEntry,
    tail_text: &str,
    visit: Option<Visit<'_>>,
) -> SessionEntry {
    let (t, a) = read(tail_text, Reader::with_format(old.format));
    if let Some(v) = visit {
        let base = Base {
            offset: old.tail.offset,
            line: old.tail.line,
            turns_before: old.tail.turns_before,
        };
        v(&t, &a, tail_text, base);
    }
    let mut new = build(
        &t,
        &a,
        tail_text,
        old.tail.offset,
        old.tail.line,
        old.tail.turns_before,
    );
    if old.tail.offset > 0 {
        // Not read again: the file's head is the old one (the caller checked it).
        new.tail.head = old.tail.head;
        new.tail.head_len = old.tail.head_len;
    }
    let title_wins = match (old.title_source, new.title_source) {
        (_, None) => false,
        (None, Some(_)) => true,
        (Some(o), Some(n)) => n > o || (n == o && n != crate::model::TitleSource::Summary),
    };
    let (title, title_source) = if title_wins {
        (new.title.clone(), new.title_source)
    } else {
        (old.title.clone(), old.title_source)
    };
    let mut symbols: Vec<TurnSymbol> = old
        .symbols
        .iter()
        .filter(|s| s.n <= old.tail.turns_before)
        .cloned()
        .collect();
    symbols.extend(new.symbols.iter().cloned());
    // The changed files of the turns before the tail stay; the re-read turns' replace theirs.
    let mut changes: Vec<ChangedFile> = old
        .changes
        .iter()
        .filter(|c| c.turn <= old.tail.turns_before)
        .cloned()
        .collect();
    changes.extend(new.changes.iter().cloned());
    let tail = if new.turns > old.tail.turns_before {
        new.tail.clone()
    } else {
        old.tail.clone()
    };
    SessionEntry {
        format: old.format,
        title,
        title_source,
        first_prompt: old.first_prompt.clone().or(new.first_prompt.clone()),
        project: old.project.clone().or(new.project.clone()),
        session_id: old.session_id.clone().or(new.session_id.clone()),
        subagent: old.subagent,
        parent_session: old.parent_session.clone().or(new.parent_session.clone()),
        started_ms: min_opt(old.started_ms, new.started_ms),
        ended_ms: old.ended_ms.max(new.ended_ms),
        turns: new.turns.max(old.tail.turns_before),
        last_turn_open: if new.turns > old.tail.turns_before {
            new.last_turn_open
        } else {
            old.last_turn_open
        },
        bytes: old.bytes,
        modified_ms: old.modified_ms,
        symbols,
        tail,
        changes,
        // The tail read always holds the last turn, the only one that can wait.
        waiting: new.waiting,
    }
}

/// The files each turn of `t` changed (issue 22 item 3), numbered after `turns_before` turns,
/// lines after `base_line`: each turn's change set (`view::changes::turn_changes`, the same
/// rules as the editor's lenses; not the session's net change, which the index never needs).
/// Preamble edits (before the first prompt) are left out: they belong to no numbered turn.
fn changed_files(
    t: &Transcript,
    a: &Analysis,
    text: &str,
    base_line: usize,
    turns_before: usize,
) -> Vec<ChangedFile> {
    use crate::view::changes;
    let mut out = Vec::new();
    let result_of = |e: usize, b: usize| changes::pair_result(a, e, b);
    for (ti, turn) in a.turns.iter().enumerate() {
        if turn.kind == TurnKind::Preamble {
            continue;
        }
        let Some(tc) = changes::turn_changes(t, a, text, ti, &result_of) else {
            continue;
        };
        let opener = turn.opener.and_then(|i| t.entries.get(i));
        let line = base_line + opener.map_or(turn.start_line, |e| e.line);
        let ms = opener.and_then(|e| e.timestamp_ms()).or_else(|| {
            t.entries
                .get(turn.entries.clone())
                .and_then(|es| es.iter().find_map(|e| e.timestamp_ms()))
        });
        for f in tc.files {
            out.push(ChangedFile {
                path: f.path.into(),
                turn: turns_before + turn.n,
                action: f.action,
                added: u32::try_from(f.added).unwrap_or(u32::MAX),
                removed: u32::try_from(f.removed).unwrap_or(u32::MAX),
                line,
                ms,
            });
        }
    }
    out
}

/// True for a format whose grown files can be read from their last turn (see [`read_tail`];
/// checked on every corpus file by `tests/it/session_index.rs`): the agent registry's
/// `tail_readable` (Claude Code: each line reads the same without what came before a turn's
/// opening line; Codex: read from the records that precede the opening line, so that an
/// opener still meets its copy). Not Pi (its entries form a tree by `parentId`: branches and
/// compactions name entries anywhere before) nor Copilot CLI (a resumed session replays earlier
/// events by id, which only the whole file tells apart).
pub fn tail_readable(format: Format) -> bool {
    crate::formats::agents::of(format).is_some_and(|a| a.tail_readable)
}

/// The entry the tail of `t` is read from, given its last turn's opener: the agent's
/// `tail_start` (Codex: the bookkeeping records right before it), else the opener itself.
fn tail_entry(t: &Transcript, opener: usize) -> usize {
    match crate::formats::agents::of(t.format()).and_then(|a| a.tail_start) {
        Some(start) => start(t, opener),
        None => opener,
    }
}

/// True when `head`, the file's bytes from `entry.tail.offset`, still starts with the line the
/// entry's tail was taken from (an append keeps it; a rewrite almost surely changes it).
pub fn tail_matches(entry: &SessionEntry, head: &[u8]) -> bool {
    let n = anchor_len(head);
    fnv1a(&head[..n]) == entry.tail.anchor
}

fn anchor_len(head: &[u8]) -> usize {
    let line = memchr::memchr(b'\n', head).unwrap_or(head.len());
    line.min(ANCHOR_BYTES)
}

/// FNV-1a, 64 bits.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn min_opt(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// A whole file's transcript and analysis as [`read_whole_marked`] reads them (the blame of
/// `history` reads the sessions that changed a file again the same way).
pub fn read_text(text: &str, mark: impl FnOnce(&mut Transcript)) -> (Transcript, Analysis) {
    read_marked(text, Reader::new(), mark)
}

fn read(text: &str, reader: Reader) -> (Transcript, Analysis) {
    read_marked(text, reader, |_| {})
}

fn read_marked(
    text: &str,
    mut reader: Reader,
    mark: impl FnOnce(&mut Transcript),
) -> (Transcript, Analysis) {
    reader.feed(text);
    reader.settle_tail(text);
    reader.flush_undetected(text, true);
    let mut t = reader.into_transcript();
    mark(&mut t);
    let a = if t.format() == Format::Unknown {
        Analysis::default()
    } else {
        analysis::analyze(&t, text, &analysis::Options::default())
    };
    (t, a)
}

/// The entry of `text`, which starts at byte `base` / line `base_line` of its file, after
/// `turns_before` turns.
fn build(
    t: &Transcript,
    a: &Analysis,
    text: &str,
    base: u64,
    base_line: usize,
    turns_before: usize,
) -> SessionEntry {
    let symbols: Vec<TurnSymbol> = a
        .turns
        .iter()
        .filter(|turn| turn.kind != TurnKind::Preamble)
        .map(|turn| TurnSymbol {
            n: turns_before + turn.n,
            title: turn.title.as_str().into(),
            start_line: base_line + turn.start_line,
            end_line: base_line + turn.end_line,
            wake: turn.kind == TurnKind::Wake,
        })
        .collect();
    let last = a.turns.iter().rfind(|turn| turn.kind != TurnKind::Preamble);
    // The file's head, for a whole read (a tail read takes the old entry's: `read_tail`).
    let (head, head_len) = if base == 0 {
        let h = &text.as_bytes()[..text.len().min(crate::index::disk::HEAD_BYTES as usize)];
        (fnv1a(h), h.len() as u64)
    } else {
        (0, 0)
    };
    let mut tail = match last
        .and_then(|turn| turn.opener)
        .filter(|&i| i < t.entries.len())
        .map(|i| &t.entries[tail_entry(t, i)])
    {
        Some(e) => {
            let head = &text.as_bytes()[e.span.start..];
            Tail {
                offset: base + e.span.start as u64,
                line: base_line + e.line,
                turns_before: turns_before + symbols.len() - 1,
                anchor: fnv1a(&head[..anchor_len(head)]),
                ..Tail::default()
            }
        }
        None => Tail {
            offset: base,
            line: base_line,
            turns_before,
            anchor: fnv1a(&text.as_bytes()[..anchor_len(text.as_bytes())]),
            ..Tail::default()
        },
    };
    tail.head = head;
    tail.head_len = head_len;
    let (mut started, mut ended) = (None, None);
    for e in &t.entries {
        if let Some(ts) = e.timestamp_ms() {
            started = min_opt(started, Some(ts));
            ended = ended.max(Some(ts));
        }
    }
    let first_prompt = a
        .turns
        .iter()
        .find(|turn| {
            matches!(turn.kind, TurnKind::Prompt | TurnKind::SubagentTask) && !turn.title.is_empty()
        })
        .map(|turn| turn.title.as_str().into());
    let m = &t.meta;
    SessionEntry {
        format: t.format(),
        title: m.title.as_deref().map(Into::into),
        title_source: m.title.as_ref().and(m.title_source),
        first_prompt,
        project: m.cwd.as_deref().map(Into::into),
        session_id: m.session_id.as_deref().map(Into::into),
        subagent: m.is_subagent_file,
        parent_session: m.parent_thread_id.as_deref().map(Into::into),
        started_ms: started,
        ended_ms: ended,
        turns: turns_before + a.turn_count,
        last_turn_open: last.is_some_and(|turn| turn.state == TurnState::InFlight),
        bytes: 0,
        modified_ms: None,
        symbols,
        tail,
        changes: changed_files(t, a, text, base_line, turns_before),
        waiting: analysis::waiting::waiting(t, a, text).map(|w| analysis::waiting::Waiting {
            turn: turns_before + w.turn,
            line: base_line + w.line,
            ..w
        }),
    }
}
