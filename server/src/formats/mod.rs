//! One module per transcript format, each producing the common model (`crate::model`), plus
//! format detection from content (never from the file name).
//!
//! [`Reader`] is the entry point: it splits the source into record lines (`\n` only; U+2028,
//! U+2029, U+0085 and a lone `\r` are ordinary characters of a record, though line numbers
//! count a lone `\r` as the break an editor sees: issue 25), detects the format from the
//! first records, and hands each complete line to the format's line reader. It is incremental: [`Reader::feed`] on a
//! grown source reads only from the first line it has not consumed, so an append costs time in
//! proportion to the appended bytes (DESIGN.md §6).

pub mod agents;
pub mod antigravity;
pub mod claude_code;
pub mod codex;
pub mod codex_files;
pub mod copilot;
pub mod gemini;
mod json;
pub mod kiro;
pub mod pi;
pub mod vibe;

use crate::model::{
    Entry, Format, PendingTail, Problem, Role, Severity, SharedStr, Span, Transcript,
};
use crate::source::lines::LineIndex;

/// Adds one warning per line where the loader replaced invalid UTF-8 (issue 8 defect 11),
/// keeping the problems sorted by line.
pub fn add_invalid_utf8(t: &mut Transcript, invalid: &[crate::source::load::InvalidUtf8]) {
    if invalid.is_empty() {
        return;
    }
    t.problems.extend(invalid.iter().map(Problem::invalid_utf8));
    t.problems.sort_by_key(|p| p.line);
    t.cap_problems();
}

/// Reads a whole file's text the way every one-shot reader does (the command line, the
/// workspace index), with the same policy as the live documents: `complete` reads a torn last
/// line as an invalid line (`Reader::finish`), otherwise it stays pending (a file still being
/// written); the loader's invalid-UTF-8 lines become warnings.
pub fn read_text(
    text: &str,
    invalid: &[crate::source::load::InvalidUtf8],
    complete: bool,
) -> Transcript {
    let mut t = if complete {
        let mut reader = Reader::new();
        reader.feed(text);
        reader.finish(text);
        reader.into_transcript()
    } else {
        read(text)
    };
    add_invalid_utf8(&mut t, invalid);
    t
}

/// Reads a whole source at once as a snapshot of a file that may still be growing: a last line
/// without `\n` is read if it is valid JSON, else it stays the pending tail. Lines of a file
/// whose format is not detected are read as `Unknown`.
pub fn read(source: &str) -> Transcript {
    let mut reader = Reader::new();
    reader.feed(source);
    reader.settle_tail(source);
    reader.flush_undetected(source, true);
    reader.into_transcript()
}

/// Detects the format of one parsed record, if it tells: the agent registry's detectors
/// (`agents::detect_line`), tried in their `detect_rank` order (each agent's rules are in its
/// module: `claude_code::detect`, `codex::detect`, `pi::detect`, `copilot::detect`,
/// `gemini::detect`).
///
/// Still unknown, on purpose: Factory and other shapes with a nested `message` but no Pi tree.
pub fn detect_line(line: &str) -> Option<Format> {
    agents::detect_line(line)
}

/// Incremental reader of one source. Holds the transcript read so far and each format's
/// line-reader state.
#[derive(Debug, Default)]
pub struct Reader {
    transcript: Transcript,
    /// The detected agent's line reader (`agents::Agent::reader`), made at its first line.
    state: Option<Box<dyn agents::LineReader>>,
    /// Byte offset of the first line not consumed yet (start of the pending tail, if any).
    consumed: usize,
    /// Number of lines consumed (index of the next line).
    next_line: usize,
    /// Lines seen before the format was known, waiting for detection: `(line, span)`.
    undetected: Vec<(usize, Span)>,
    /// True when the last feed ended inside a line that was settled (read without its `\n`).
    mid_line: bool,
    /// Record types and session ids, one string for all the records that carry it.
    shared: Shared,
}

/// Equal short strings shared between records (record types, session ids): each record held
/// its own copy, some 50–80 bytes per record of a real session (issue 12). At most
/// [`Shared::MAX`] strings are kept, so a file of ever-new values costs no more than before.
#[derive(Debug, Default)]
struct Shared {
    set: std::collections::HashSet<SharedStr>,
}

impl Shared {
    const MAX: usize = 1024;

    /// Replaces `s` by the kept string equal to it (keeps `s` when there is none yet). A
    /// string that is already shared (a reader gave the same one to several records, as the
    /// Claude Code reader does with its record types and session ids) is left as it is,
    /// unhashed and untouched.
    fn share(&mut self, s: &mut SharedStr) {
        if SharedStr::strong_count(s) > 1 {
            return;
        }
        if let Some(kept) = self.set.get(&**s) {
            *s = kept.clone();
        } else if self.set.len() < Self::MAX {
            self.set.insert(s.clone());
        }
    }
}

/// How many leading records may be looked at before a file is declared `Unknown`.
const DETECT_WINDOW: usize = 64;

impl Reader {
    pub fn new() -> Reader {
        Reader::default()
    }

    /// A reader for a source whose format is already known (e.g. the rest of a file read from
    /// the opening line of a turn, issue 7's session index): no detection.
    pub fn with_format(format: Format) -> Reader {
        let mut r = Reader::default();
        r.transcript.format = Some(format);
        r
    }

    /// The transcript read so far.
    pub fn transcript(&self) -> &Transcript {
        &self.transcript
    }

    pub fn into_transcript(self) -> Transcript {
        self.transcript
    }

    /// Splits the reader into the transcript read so far and a [`LentReader`] that remembers
    /// where reading stopped, so that an immutable snapshot can own the transcript without a
    /// copy (issue 12: an append must not cost a copy of the whole model). Feeding resumes
    /// once the transcript is given back with [`LentReader::restore`].
    pub fn lend(mut self) -> (Transcript, LentReader) {
        let t = std::mem::take(&mut self.transcript);
        (t, LentReader(self))
    }

    /// Byte offset of the first line not consumed yet. A new source that keeps
    /// `source[..consumed_bytes()]` unchanged may be fed incrementally; otherwise start a new
    /// reader.
    pub fn consumed_bytes(&self) -> usize {
        self.consumed
    }

    /// Reads every complete line of `source` from the first unconsumed one. `source` must
    /// start with the bytes already consumed (append-only growth). A last line without `\n`
    /// is never read here: it becomes the pending tail (it may still be being written).
    pub fn feed(&mut self, source: &str) {
        self.feed_seeing_lines(source, |_| {});
    }

    /// [`Reader::feed`], also extending `lines` over the bytes it reads, from the `\n` bytes
    /// the reader finds anyway: one scan of the bytes instead of two (issue 12: a disk view
    /// scanned each window for its line index, then again for its records). `lines` must
    /// index the text the reader consumed so far (`lines.len()` equal to
    /// [`Reader::consumed_bytes`]); otherwise it is brought up to date by its own scan
    /// ([`LineIndex::append`]), as before. Afterwards `lines` indexes all of `source`.
    pub fn feed_indexing(&mut self, source: &str, lines: &mut LineIndex) {
        let from = self.consumed;
        if lines.len() != from || source.len() < from {
            let old = lines.len();
            lines.append(source, old);
            self.feed(source);
            return;
        }
        let mut starts = Vec::new();
        self.feed_seeing_lines(source, |at| starts.push(at));
        // Every `\n` of `source[from..]` was seen: `feed` stops only where none is left.
        lines.extend_found(source, starts);
    }

    /// [`Reader::feed`], calling `line_start` with the offset after each line break it passes
    /// (`\n`, and a lone `\r` inside a record's line: issue 25), in order: all those of
    /// `source[consumed_bytes()..]` up to the last `\n` (it reads up to the last one).
    ///
    /// Records are split on `\n` only; line numbers count every break as an editor does
    /// (LSP 3.17), so a record whose line holds a lone `\r` takes two line numbers and the
    /// next record's line is the editor's.
    fn feed_seeing_lines(&mut self, source: &str, mut line_start: impl FnMut(usize)) {
        let bytes = source.as_bytes();
        self.transcript.pending_tail = None;
        let mut start = self.consumed;
        if self.mid_line {
            // The previous source ended with a settled, unterminated line. Its continuation up
            // to the next `\n` must be empty; anything else cannot be re-read.
            let Some(n) = memchr::memchr(b'\n', &bytes[start..]) else {
                return;
            };
            if !source[start..start + n].trim().is_empty() {
                let line = self.next_line;
                self.transcript.problems.push(Problem {
                    line,
                    span: start..start + n,
                    severity: Severity::Warning,
                    message: "the last line was extended after it was read as a complete record; \
                              reopen the file to re-read it"
                        .to_string(),
                });
            }
            // A `\r` that ended the settled line was a break of its own unless this `\n`
            // follows it at once.
            if n > 0 && start > 0 && bytes[start - 1] == b'\r' {
                self.next_line += 1;
            }
            let end = if n > 0 && bytes[start + n - 1] == b'\r' {
                start + n - 1
            } else {
                start + n
            };
            self.next_line += lone_crs(bytes, start..end, &mut line_start);
            self.mid_line = false;
            self.next_line += 1;
            start += n + 1;
            line_start(start);
            self.consumed = start;
        }
        while start < bytes.len() {
            let line = self.next_line;
            let Some(n) = memchr::memchr(b'\n', &bytes[start..]) else {
                let mut end = bytes.len();
                if bytes[end - 1] == b'\r' {
                    end -= 1;
                }
                self.transcript.pending_tail = Some(PendingTail {
                    line,
                    span: start..end,
                });
                self.transcript.line_count = line + 1 + lone_crs(bytes, start..end, &mut |_| {});
                break;
            };
            let mut end = start + n;
            if end > start && bytes[end - 1] == b'\r' {
                end -= 1;
            }
            self.read_line(source, line, start..end);
            let crs = lone_crs(bytes, start..end, &mut line_start);
            self.note_split(line, crs);
            self.next_line += 1 + crs;
            start += n + 1;
            line_start(start);
            self.consumed = start;
            self.transcript.line_count = self.next_line;
        }
        self.flush_undetected(source, false);
        self.settle_formats();
    }

    /// Notes that the record line starting on `line` holds `crs` lone `\r` breaks
    /// ([`Transcript::split_lines`]).
    fn note_split(&mut self, line: usize, crs: usize) {
        if crs > 0 {
            self.transcript.split_lines.push((line, line + crs));
        }
    }

    /// Lets a reader finish work that spans the lines of a batch (Pi: the abandoned flags
    /// after a branch switch).
    fn settle_formats(&mut self) {
        if let Some(state) = &mut self.state {
            state.settle(&mut self.transcript);
        }
    }

    /// Reads the pending tail now if it is valid JSON (a complete record that only lacks its
    /// final `\n`). For files known to be complete, or opened as a snapshot.
    pub fn settle_tail(&mut self, source: &str) {
        let Some(tail) = self.transcript.pending_tail.clone() else {
            return;
        };
        let text = &source[tail.span.clone()];
        if text.trim().is_empty() {
            self.transcript.pending_tail = None;
            return;
        }
        if serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok() {
            self.transcript.pending_tail = None;
            let crs = lone_crs(source.as_bytes(), tail.span.clone(), &mut |_| {});
            self.note_split(tail.line, crs);
            self.next_line += crs;
            self.read_line(source, tail.line, tail.span);
            self.flush_undetected(source, false);
            self.settle_formats();
            self.consumed = source.len();
            self.mid_line = true;
        }
    }

    /// Declares the source complete (not growing any more): a valid tail is read, an invalid
    /// one becomes an `Unparsed` entry with a warning, and undetected lines are read as
    /// `Unknown`.
    pub fn finish(&mut self, source: &str) {
        self.settle_tail(source);
        if let Some(tail) = self.transcript.pending_tail.take() {
            let text = &source[tail.span.clone()];
            let err = serde_json::from_str::<serde::de::IgnoredAny>(text).err();
            let crs = lone_crs(source.as_bytes(), tail.span.clone(), &mut |_| {});
            self.note_split(tail.line, crs);
            self.next_line += crs;
            self.flush_undetected(source, true);
            push_unparsed(&mut self.transcript, text, tail.line, tail.span, err);
            self.consumed = source.len();
            self.mid_line = true;
        }
        self.flush_undetected(source, true);
        self.settle_formats();
    }

    fn read_line(&mut self, source: &str, line: usize, mut span: Span) {
        // A byte order mark before a record is not part of it: editors on Windows write one
        // before the first (issue 8 defect 2), and files joined with `cat` hold one at each
        // file's start (issue 25, Low list: every later line was invalid JSON).
        if source[span.clone()].starts_with('\u{feff}') {
            span.start += '\u{feff}'.len_utf8();
        }
        let text = &source[span.clone()];
        if text.trim().is_empty() {
            return; // blank line: ignored, no diagnostic (case 03)
        }
        if self.transcript.format.is_none() {
            match detect_line(text) {
                Some(format) => {
                    self.transcript.format = Some(format);
                    self.flush_undetected(source, false);
                }
                None => {
                    self.undetected.push((line, span));
                    if self.undetected.len() >= DETECT_WINDOW {
                        self.transcript.format = Some(Format::Unknown);
                        self.flush_undetected(source, false);
                    }
                    return;
                }
            }
        }
        self.dispatch(source, line, span);
    }

    /// Reads the lines held back while the format was unknown; with `force`, as `Unknown`.
    pub fn flush_undetected(&mut self, source: &str, force: bool) {
        if self.undetected.is_empty() {
            return;
        }
        if self.transcript.format.is_none() {
            if !force {
                return;
            }
            self.transcript.format = Some(Format::Unknown);
        }
        for (line, span) in std::mem::take(&mut self.undetected) {
            self.dispatch(source, line, span);
        }
    }

    fn dispatch(&mut self, source: &str, line: usize, span: Span) {
        let before = self.transcript.entries.len();
        let kinds = self.transcript.unknown.len();
        self.dispatch_line(source, line, span.clone());
        // A kind no reader of this format knows, first seen here: another agent's record?
        if self.transcript.unknown.len() > kinds
            && let Some(other) = detect_line(&source[span.clone()])
            && Some(other) != self.transcript.format
            && let Some(u) = self.transcript.unknown.last_mut()
        {
            u.other_format = Some(other);
        }
        // A vector's first push reserves room for four blocks; most records hold one or two
        // (issue 12: 736 bytes per one-line prompt, three quarters of them empty).
        let entries = &mut self.transcript.entries;
        let from = before.min(entries.len());
        // The records this line pushed (not a revision of earlier ones).
        for e in entries.iter_mut().skip(from) {
            e.blocks.shrink_to_fit();
            self.shared.share(&mut e.record_type);
            if let Some(ids) = &mut e.ids
                && let Some(id) = &mut ids.session_id
            {
                self.shared.share(id);
            }
        }
        self.join_bare_run(source, line, &span, before);
        self.transcript.cap_problems();
    }

    /// Reads the record just pushed on `line` into the entry before it when both are bare
    /// records of one role and type, each alone on one line ([`crate::model::RecordRun`];
    /// issue 25 item 8: 10 M `{}` lines took 88 bytes of entry each). The entry before is
    /// noted as revised, so an analysis made before this record is resumed from it.
    fn join_bare_run(&mut self, source: &str, line: usize, span: &Span, before: usize) {
        let t = &mut self.transcript;
        if before == 0
            || t.entries.len() != before + 1
            || self.state.as_ref().is_some_and(|s| !s.joins_bare_runs())
        {
            return;
        }
        let (prev, new) = (&t.entries[before - 1], &t.entries[before]);
        if !(new.is_bare()
            && prev.is_bare()
            && prev.record_type == new.record_type
            && new.line == line
            && !source.as_bytes()[span.clone()].contains(&b'\r'))
        {
            return;
        }
        let head = prev.line;
        // The entry before must be alone on its line, and that line a single editor line.
        if before >= 2 && t.entries[before - 2].line == head {
            return;
        }
        match t.runs.last_mut() {
            Some(run) if run.line == head => {
                run.last_line = line;
                run.records += 1;
                run.end = span.end;
            }
            _ => {
                if t.split_lines
                    .last()
                    .is_some_and(|&(first, _)| first == head)
                {
                    return;
                }
                t.runs.push(crate::model::RecordRun {
                    line: head,
                    last_line: line,
                    records: 2,
                    end: span.end,
                });
            }
        }
        t.entries.pop();
        t.note_revised(before - 1);
    }

    fn dispatch_line(&mut self, source: &str, line: usize, span: Span) {
        let Some(agent) = agents::of(self.transcript.format()) else {
            return read_unknown_line(source, line, span, &mut self.transcript);
        };
        self.state
            .get_or_insert_with(agent.reader)
            .line(source, line, span, &mut self.transcript);
    }
}

/// A [`Reader`] whose transcript is lent out (see [`Reader::lend`]); it cannot be fed until
/// the transcript comes back.
#[derive(Debug)]
pub struct LentReader(Reader);

impl LentReader {
    /// The reader again, with `transcript`, which must be the one [`Reader::lend`] gave out
    /// (unchanged, or an exact copy of it): the reader's per-format state refers to its entries.
    pub fn restore(self, transcript: Transcript) -> Reader {
        let mut r = self.0;
        r.transcript = transcript;
        r
    }
}

/// Number of lone `\r` bytes in `bytes[span]` (`span` holds no `\n`, and is a record's line
/// without its own break, so each `\r` in it ends an editor line: LSP 3.17; issue 25),
/// calling `line_start` with the offset after each. One `memchr` scan of the line.
fn lone_crs(bytes: &[u8], span: Span, line_start: &mut impl FnMut(usize)) -> usize {
    let mut n = 0;
    for i in memchr::memchr_iter(b'\r', &bytes[span.clone()]) {
        line_start(span.start + i + 1);
        n += 1;
    }
    n
}

/// Records a line that is not valid JSON (`text` is the line, `span` its bytes in the source):
/// an `Unparsed` entry and a warning problem on the offending byte, with the serde_json message
/// and the 1-based byte column, e.g. `invalid JSON: control character
/// (\u0000-\u001F) found while parsing a string at column 42`.
pub fn push_unparsed(
    t: &mut Transcript,
    text: &str,
    line: usize,
    span: Span,
    err: Option<serde_json::Error>,
) {
    let (message, at) = match err {
        Some(e) => {
            let msg = e.to_string();
            let msg = msg.split(" at line ").next().unwrap_or(&msg).to_string();
            // serde_json's column is 1-based and, for a raw control character, names the byte
            // before it: point at the offending byte itself.
            let mut at = e.column().max(1) - 1;
            if msg.contains("control character") {
                let from = at.saturating_sub(1).min(text.len());
                if let Some(k) = text.as_bytes()[from..].iter().position(|&b| b < 0x20) {
                    at = from + k;
                }
            }
            (format!("invalid JSON: {msg} at column {}", at + 1), at)
        }
        None => ("invalid JSON record".to_string(), 0),
    };
    let at = (span.start + at).min(span.end);
    t.problems.push(Problem {
        line,
        span: at..(at + 1).min(span.end.max(at)),
        severity: Severity::Warning,
        message,
    });
    t.entries
        .push(Entry::new(line, span, Role::Unparsed, "unparsed"));
}

/// A line of a file in no known format: kept as `Other` (valid JSON) or `Unparsed`.
fn read_unknown_line(source: &str, line: usize, span: Span, t: &mut Transcript) {
    match serde_json::from_str::<serde::de::IgnoredAny>(&source[span.clone()]) {
        Ok(_) => t
            .entries
            .push(Entry::new(line, span, Role::Other, "unknown")),
        Err(e) => push_unparsed(t, &source[span.clone()], line, span, Some(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records of one type and one session share one string for each (issue 12: memory per
    /// record), whatever the format; the values read are unchanged.
    #[test]
    fn record_types_and_session_ids_are_shared() {
        let src = concat!(
            r#"{"type":"user","uuid":"u1","sessionId":"s-1","message":{"role":"user","content":"hi"}}"#,
            "\n",
            r#"{"type":"user","uuid":"u2","parentUuid":"u1","sessionId":"s-1","message":{"role":"user","content":"again"}}"#,
            "\n{}\n",
            r#"{"type":"user","uuid":"u3","parentUuid":"u2","sessionId":"s-1","message":{"role":"user","content":"and"}}"#,
            "\n{}\n",
        );
        let t = read(src);
        let e = &t.entries;
        assert_eq!(e.len(), 5);
        assert_eq!(
            (&*e[0].record_type, &*e[2].record_type),
            ("user", "unknown")
        );
        assert!(SharedStr::ptr_eq(&e[0].record_type, &e[1].record_type));
        assert!(SharedStr::ptr_eq(&e[2].record_type, &e[4].record_type));
        let sid = |e: &crate::model::Entry| e.ids.as_ref().and_then(|i| i.session_id.clone());
        let (a, b) = (sid(&e[0]), sid(&e[1]));
        assert_eq!(a.as_deref(), Some("s-1"));
        assert!(SharedStr::ptr_eq(&a.unwrap(), &b.unwrap()));
    }

    /// Issue 25 item 8: consecutive bare records of one type are one entry (a run), however
    /// the text is fed; blank lines inside a run are skipped; another type, a record with a
    /// field the reader keeps (a timestamp) or a lone `\r` ends the run. The records are all
    /// still counted.
    #[test]
    fn bare_records_in_a_row_are_one_entry() {
        let src = concat!(
            r#"{"type":"user","uuid":"u1","sessionId":"s","message":{"role":"user","content":"hi"}}"#,
            "\n{}\n{}\n\n{}\n",
            r#"{"type":"zzz"}"#,
            "\n",
            r#"{"type":"zzz"}"#,
            "\n",
            r#"{"type":"zzz","timestamp":"2026-01-01T00:00:00Z"}"#,
            "\n{}\n{}\r\n{\r}\n{}\n",
        );
        let want_runs = vec![
            crate::model::RecordRun {
                line: 1,
                last_line: 4,
                records: 3,
                end: src.find("\n{\"type\":\"zzz\"}").unwrap(),
            },
            crate::model::RecordRun {
                line: 5,
                last_line: 6,
                records: 2,
                end: src.find("\n{\"type\":\"zzz\",\"time").unwrap(),
            },
            crate::model::RecordRun {
                line: 8,
                last_line: 9,
                records: 2,
                end: src.find("\r\n{\r}").unwrap(),
            },
        ];
        // Whole, and fed a byte at a time (each feed may extend the run the last one left).
        let whole = read(src);
        let mut r = Reader::new();
        for cut in 1..=src.len() {
            if src.is_char_boundary(cut) {
                r.feed(&src[..cut]);
            }
        }
        r.finish(src);
        let fed = r.into_transcript();
        for t in [&whole, &fed] {
            let lines: Vec<usize> = t.entries.iter().map(|e| e.line).collect();
            assert_eq!(lines, [0, 1, 5, 7, 8, 10, 12]);
            assert_eq!(t.runs, want_runs);
            assert_eq!(t.records_in(0..t.entries.len()), 11);
            assert_eq!(
                (0..t.entries.len())
                    .map(|e| t.records_of(e))
                    .collect::<Vec<_>>(),
                [1, 3, 2, 1, 2, 1, 1]
            );
            assert_eq!((t.last_line(1), t.last_line(5), t.last_line(8)), (4, 6, 9));
            assert_eq!(t.run_at(3).map(|r| r.line), Some(1));
            assert_eq!(t.run_at(7), None);
            assert_eq!(t.run_at(9).map(|r| r.line), Some(8));
            // The first record's span, one line.
            assert_eq!(&src[t.entries[1].span.clone()], "{}");
        }
    }

    /// Issue 12: the line index a reader extends from the `\n` bytes it finds equals the one
    /// a scan of the text makes, however the text is cut into feeds (mid-line cuts, a torn
    /// last line, CRLF, blank lines, a settled tail, an index that lags behind the reader).
    #[test]
    fn a_reader_indexes_the_lines_it_reads() {
        let text = concat!(
            r#"{"type":"user","uuid":"u1","sessionId":"s","message":{"role":"user","content":"hi"}}"#,
            "\r\n\n",
            r#"{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s","message":{"role":"assistant","content":[{"type":"text","text":"a\u2028b"}]}}"#,
            "\nnot json\n\n{}\n",
            r#"{"type":"user","uuid":"u2","sessionId":"s","message":{"role":"user","content":"torn"#,
        );
        let whole = LineIndex::new(text);
        for step in [1, 2, 3, 7, 40, text.len()] {
            let (mut reader, mut lines) = (Reader::new(), LineIndex::default());
            let mut cut = 0;
            while cut < text.len() {
                cut = (cut + step).min(text.len());
                while !text.is_char_boundary(cut) {
                    cut += 1;
                }
                reader.feed_indexing(&text[..cut], &mut lines);
                assert_eq!(
                    lines,
                    LineIndex::new(&text[..cut]),
                    "step {step}, cut {cut}"
                );
            }
            assert_eq!(lines, whole, "step {step}");
            let mut plain = Reader::new();
            plain.feed(text);
            assert_eq!(
                format!("{:?}", reader.transcript()),
                format!("{:?}", plain.transcript()),
                "step {step}"
            );
        }
        // An index behind the reader, and one after a settled tail: scanned, never wrong.
        let mut reader = Reader::new();
        reader.feed(&text[..100]);
        let mut lines = LineIndex::default();
        reader.feed_indexing(text, &mut lines);
        assert_eq!(lines, whole);
        let done = &text[..text.rfind('\n').unwrap()];
        let (mut reader, mut lines) = (Reader::new(), LineIndex::default());
        reader.feed_indexing(done, &mut lines);
        reader.settle_tail(done);
        let longer = format!("{done}\n{{}}\n");
        reader.feed_indexing(&longer, &mut lines);
        assert_eq!(lines, LineIndex::new(&longer));
    }
}
